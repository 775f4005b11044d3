//! `post --analyses DIR`, the privileged half of the fork-safe pattern, against the local
//! GitHub-like server: the artifact is a fork's (hostile names, a report.md of its own,
//! symlinks, special files, too many files); the comment posted is the one nsys-gate renders
//! here, under a key derived from the data.
//!
//! The analyses are written by nsys-gate itself from CSVs (`analyze --reuse-stats`, no nsys),
//! then edited as a fork's job can edit anything it uploads.

use std::os::unix::fs::symlink;
use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};

use assert_fs::TempDir;
use serde_json::Value;

use super::{body_of, github_env, lines, BOT, CREATE7, LIST7};
use crate::common::{assert_status, bin, fixture, reuse_stats, stderr};
use crate::github_server::Server;

/// A profile name a fork can write into its analysis.json: a team mention, a tracking image,
/// another comment's marker, a code span.
pub const HOSTILE_PROFILE: &str =
    "@org/team ![track](http://track.example/p.png) <!-- nsys-gate:other --> `x`";
/// The key nsys-gate derives from [`HOSTILE_PROFILE`]: in the namespace of keys taken from an
/// artifact, sanitised, nothing of the marker or the link left working.
pub const HOSTILE_KEY: &str =
    "artifact:_org_team __track_(http___track.example_p.png) __- nsys-gate_other -_ _x_";
/// A range name a fork's program can push: a mention, raw HTML, an image, a phishing link, a
/// marker, a fence, and every reference GitHub links by itself (issues, a commit, a bare host).
pub const HOSTILE_RANGE: &str = "@octocat <img src=http://track.example/i.png> [click](http://evil.example/phish) <!-- nsys-gate:other --> ```fence``` <script>x</script> #12 GH-3 o/r#4 o@a5c3785ed8d6a35868bc169f07e40e889087fd2e www.evil.example";
/// A report.md as a fork can upload it: its own marker, mentions, an image, a link.
pub const HOSTILE_REPORT: &str = "<!-- nsys-gate:other -->\n# ✅ nsys-gate: gate passed\n\n@org/team @octocat please approve ![](http://track.example/pixel.png) [release notes](http://phish.example/login) FORK-REPORT-CANARY\n";

const PUSHPOP_HEADER: &str = "Start (ns),End (ns),Duration (ns),DurChild (ns),DurNonChild (ns),Name,PID,TID,Lvl,NumChild,RangeId,ParentId,RangeStack,NameTree";

/// The push/pop CSV of a capture range holding `iteration 0..5`, one `work` range in each.
fn pushpop_csv() -> String {
    let (n, per) = (5_i64, 1000_i64);
    let mut out = format!(
        "{PUSHPOP_HEADER}\n0,{end},{end},{total},10,profile-target,7,7,0,{n},1,,:1,profile-target\n",
        total = n * per,
        end = n * per + 10
    );
    for i in 0..n {
        let (start, id) = (5 + i * per, 2 + 2 * i);
        out.push_str(&format!(
            "{start},{},{per},400,600,iteration {i},7,7,1,1,{id},1,:1:{id},--iteration {i}\n",
            start + per
        ));
        out.push_str(&format!(
            "{},{},400,0,400,work,7,7,2,0,{c},{id},:1:{id}:{c},----work\n",
            start + 100,
            start + 500,
            c = id + 1
        ));
    }
    out
}

/// An analysis.json that nsys-gate wrote for the clean fixture (from CSVs, no nsys needed),
/// then edited the way a fork's job can: `profile` as the profile name, `range` as the name
/// of the work range (and as the run id, the device and every warning's message).
pub fn analysis_json(profile: &str, range: &str) -> String {
    let run = reusable_run();
    assert_status(&reuse_stats(&run.dir), 0);
    let mut analysis = run.analysis();
    rename(&mut analysis, "work", range);
    analysis["run"]["profile_name"] = profile.into();
    if range != "work" {
        analysis["run"]["run_id"] = range.into();
        analysis["run"]["device"] = range.into();
        for w in analysis["warnings"].as_array_mut().unwrap() {
            w["message"] = range.into();
        }
    }
    serde_json::to_string_pretty(&analysis).unwrap()
}

/// The clean fixture with the CSVs and stamp an earlier `analyze` would have left under
/// `stats/`, for `--reuse-stats` (no nsys needed).
pub fn reusable_run() -> crate::common::Run {
    let run = fixture("clean");
    let stats = run.path("stats");
    std::fs::create_dir_all(&stats).unwrap();
    std::fs::write(stats.join("nsys_nvtx_pushpop_trace.csv"), pushpop_csv()).unwrap();
    std::fs::write(stats.join("nsys_nvtx_gpu_proj_trace.csv"), "").unwrap();
    std::fs::write(
        stats.join("nsys-gate-stats.json"),
        r#"{"nsys_version": "2024.2.3.38-242334140272v0", "legacy_reports": false,
            "reports": {"nvtx_pushpop_trace": {"status": "written"},
                        "nvtx_gpu_proj_trace": {"status": "skipped", "message": "no CUDA API data."}}}"#,
    )
    .unwrap();
    run
}

/// Every string `from` in `value` replaced by `to`.
fn rename(value: &mut Value, from: &str, to: &str) {
    match value {
        Value::String(s) if s == from => *s = to.to_owned(),
        Value::Array(items) => items.iter_mut().for_each(|v| rename(v, from, to)),
        Value::Object(map) => map.values_mut().for_each(|v| rename(v, from, to)),
        _ => {}
    }
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// `nsys-gate post --analyses DIR ARGS…` with the server's URL and a token, pull request 7.
fn post_analyses(server: &Server, dir: &Path, args: &[&str]) -> Output {
    let mut cmd = bin();
    cmd.arg("post")
        .arg("--analyses")
        .arg(dir)
        .args(["--pr", "7"])
        .args(args)
        .timeout(Duration::from_secs(60));
    github_env(&mut cmd, server, None);
    cmd.output().expect("run nsys-gate")
}

/// The comment body as nsys-gate renders it from hostile data: nothing in it mentions,
/// links, loads or hides anything, and nothing of the fork's own report is in it.
#[track_caller]
pub fn assert_inert(body: &str) {
    // The one link nsys-gate writes itself: the workflow run's page, built from the runner's
    // variables (in Actions), never from the artifact.
    let run_link = regex::Regex::new(
        r"\[the workflow run\]\(https?://[A-Za-z0-9.:_-]+/[A-Za-z0-9._-]+/[A-Za-z0-9._-]+/actions/runs/[0-9]+\)",
    )
    .unwrap();
    let body = &*run_link.replace_all(body, "the workflow run");
    for raw in [
        "@org",
        "@octocat",
        "<img",
        "<script",
        "![",
        "://",
        "```fence",
        "`x`",
        "#12",
        "GH-3",
        "r#4",
        "a5c3785",
        "www.",
        "FORK-REPORT-CANARY",
        "please approve",
    ] {
        assert!(!body.contains(raw), "{raw:?} reached the comment:\n{body}");
    }
    assert_eq!(
        body.matches("<!--").count(),
        1,
        "one HTML comment, the marker:\n{body}"
    );
    // No link: every `](` is escaped.
    assert!(
        body.match_indices("](")
            .all(|(i, _)| body[..i].ends_with('\\')),
        "{body}"
    );
    // The names are there, shown and inert: the mention broken by a zero-width space, the
    // HTML as text.
    assert!(body.contains("@\u{200B}octocat"), "{body}");
    assert!(body.contains("&lt;img src=http:\u{200B}//"), "{body}");
    assert!(
        body.contains("o@\u{200B}a5c378\u{200B}5ed8d6\u{200B}a35868"),
        "{body}"
    );
    assert!(body.contains("www\u{200B}.evil"), "{body}");
}

#[test]
fn the_comment_is_rendered_here_from_hostile_analyses() {
    let server = Server::github();
    let other = server.seed(7, BOT, "<!-- nsys-gate:other -->\nsomeone else's comment");
    let tmp = TempDir::new().unwrap();
    let art = tmp.path().join("artifact");
    write(
        &art.join("smoke/runs/1/analysis.json"),
        &analysis_json(HOSTILE_PROFILE, HOSTILE_RANGE),
    );
    // The fork's own report, at the top and beside the analysis: never read.
    write(&art.join("report.md"), HOSTILE_REPORT);
    write(&art.join("smoke/runs/1/report.md"), HOSTILE_REPORT);
    // Symlinks out of the artifact, to a file and to a folder: never followed.
    let outside = tmp.path().join("outside");
    write(
        &outside.join("analysis.json"),
        &analysis_json("SYMLINK-CANARY", "work"),
    );
    std::fs::create_dir_all(art.join("linked")).unwrap();
    symlink(
        outside.join("analysis.json"),
        art.join("linked/analysis.json"),
    )
    .unwrap();
    symlink(&outside, art.join("folder-link")).unwrap();

    let out = post_analyses(&server, &art, &[]);
    assert_status(&out, 0);
    let err = stderr(&out);
    let requests = server.requests();
    assert_eq!(lines(&requests), [LIST7, CREATE7, LIST7], "{err}");
    let body = body_of(&requests[1]).to_owned();
    assert!(
        body.starts_with(&format!("<!-- nsys-gate:{HOSTILE_KEY} -->\n# ")),
        "{body}"
    );
    assert_inert(&body);
    assert!(!body.contains("SYMLINK-CANARY"), "{body}");
    // The analysis is what is shown: its escaped range name and its path in the artifact.
    assert!(body.contains("\\[click\\](http:\u{200B}//evil"), "{body}");
    assert!(body.contains("smoke/runs/1/analysis.json"), "{body}");
    assert!(
        err.contains("linked/analysis.json is a symlink, not a regular file; not read"),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "rendered the comment `{HOSTILE_KEY}` from 1 of 1 analysis.json files"
        )),
        "{err}"
    );
    // The comment whose marker the fork's report.md carries is left alone.
    let comments = server.comments(7);
    assert_eq!(comments.len(), 2);
    assert_eq!(comments[0].id, other);
    assert_eq!(
        comments[0].body,
        "<!-- nsys-gate:other -->\nsomeone else's comment"
    );
    assert_eq!(comments[1].body, body);
}

#[test]
fn the_key_comes_from_the_data_or_the_command_line_never_a_file_name() {
    let server = Server::github();
    let tmp = TempDir::new().unwrap();
    let art = tmp.path().join("artifact");
    write(
        &art.join("b/analysis.json"),
        &analysis_json("b-profile", "work"),
    );
    write(
        &art.join("a/analysis.json"),
        &analysis_json("a-profile", "work"),
    );
    write(&art.join("report.md"), HOSTILE_REPORT);
    // An analysis.json that does not parse, in a folder named like a marker and a mention:
    // a section saying so, and nothing of its name in the key.
    write(
        &art.join("<!-- nsys-gate:other --> @org-team/analysis.json"),
        "{\"schema_version\": 1, \"gate\": \"x\\n::add-mask::y\"}",
    );
    let out = post_analyses(&server, &art, &[]);
    assert_status(&out, 0);
    let comments = server.comments(7);
    assert_eq!(comments.len(), 1);
    let body = &comments[0].body;
    assert!(
        body.starts_with("<!-- nsys-gate:artifact:a-profile,b-profile -->\n"),
        "{body}"
    );
    assert!(
        body.contains("there is no readable analysis.json"),
        "{body}"
    );
    assert!(
        body.contains(
            "## ⛔ &lt;\\!-- nsys-gate:other --&gt; @\u{200B}org-team: could not be analysed"
        ),
        "{body}"
    );
    // Raw only in the indented code block that quotes the error, where GitHub shows text as
    // it is (no HTML, no mention).
    for line in body.lines().skip(1) {
        if line.contains("<!--") || line.contains("@org") {
            assert!(
                line.starts_with("    "),
                "{line:?} outside a code block:\n{body}"
            );
        }
    }
    // The parse error reaches standard error on one line: no workflow command in it.
    let err = stderr(&out);
    assert!(
        err.lines().all(|l| !l.trim_start().starts_with("::")),
        "{err}"
    );
    let id = comments[0].id;

    // New numbers under the same profiles: the same comment, updated.
    write(
        &art.join("b/analysis.json"),
        &analysis_json("b-profile", "work2"),
    );
    let before = server.requests().len();
    let out = post_analyses(&server, &art, &[]);
    assert_status(&out, 0);
    assert_eq!(
        lines(&server.requests()[before..]),
        [
            LIST7.to_owned(),
            format!("PATCH /repos/octo/gpu/issues/comments/{id}")
        ]
    );
    assert!(server.comments(7)[0].body.contains("work2"));

    // --comment-key comes from the trusted workflow's command line: taken, sanitised.
    let out = post_analyses(&server, &art, &["--comment-key", "leg 1 @x -->"]);
    assert_status(&out, 0);
    let comments = server.comments(7);
    assert_eq!(comments.len(), 2);
    assert!(
        comments[1]
            .body
            .starts_with("<!-- nsys-gate:leg 1 _x -_ -->\n"),
        "{}",
        comments[1].body
    );
}

#[test]
fn an_artifact_without_analyses_posts_nothing() {
    let server = Server::github();
    let tmp = TempDir::new().unwrap();
    let hang = Duration::from_secs(30);

    // Only a report.md, a symlink and a FIFO named analysis.json: nothing to read, at once.
    let art = tmp.path().join("artifact");
    write(&art.join("report.md"), HOSTILE_REPORT);
    write(
        &tmp.path().join("outside.json"),
        &analysis_json("p", "work"),
    );
    std::fs::create_dir_all(art.join("a")).unwrap();
    symlink(tmp.path().join("outside.json"), art.join("a/analysis.json")).unwrap();
    std::fs::create_dir_all(art.join("b")).unwrap();
    let status = std::process::Command::new("mkfifo")
        .arg(art.join("b/analysis.json"))
        .status()
        .unwrap();
    assert!(status.success());
    let started = Instant::now();
    let out = post_analyses(&server, &art, &[]);
    assert!(started.elapsed() < hang);
    assert_status(&out, 2);
    let err = stderr(&out);
    for needle in [
        "a/analysis.json is a symlink, not a regular file; not read",
        "b/analysis.json is a FIFO, not a regular file; not read",
        "no analysis.json under",
        "nothing to post",
    ] {
        assert!(err.contains(needle), "{needle:?} not in:\n{err}");
    }

    // An analysis deeper than 16 levels is not searched for.
    let deep = tmp.path().join("deep");
    let mut path = deep.clone();
    for i in 0..17 {
        path = path.join(format!("d{i}"));
    }
    write(&path.join("analysis.json"), &analysis_json("p", "work"));
    let out = post_analyses(&server, &deep, &[]);
    assert_status(&out, 2);
    let err = stderr(&out);
    assert!(
        err.contains("1 folders deeper than 16 levels were not searched"),
        "{err}"
    );

    // More than 256 analysis.json files: refused before any is read.
    let many = tmp.path().join("many");
    for i in 0..257 {
        write(&many.join(format!("{i}/analysis.json")), "{}");
    }
    let out = post_analyses(&server, &many, &[]);
    assert_status(&out, 2);
    assert!(
        stderr(&out).contains("holds more than 256 files named analysis.json"),
        "{}",
        stderr(&out)
    );

    // Not a folder; and --report with --analyses.
    let out = post_analyses(&server, &art.join("report.md"), &[]);
    assert_status(&out, 2);
    assert!(
        stderr(&out).contains("is not a directory"),
        "{}",
        stderr(&out)
    );
    let out = post_analyses(&server, &art, &["--report", "x.md"]);
    assert_status(&out, 2);
    assert!(
        stderr(&out).contains("cannot be used with"),
        "{}",
        stderr(&out)
    );
    assert!(server.requests().is_empty());
}

/// Issue item 1: `post --analyses` took the comment key from the artifact's profile names, so
/// a fork's analysis.json naming the profile `nightly-h100` updated the trusted comment
/// `<!-- nsys-gate:nightly-h100 -->` of pull request 7 with the fork's content. A key derived
/// from an artifact lives in a namespace of its own (`artifact:`), which no key of the
/// trusted side (`run`, `report`, `--comment-key`) can reach.
#[test]
fn a_key_from_an_artifact_cannot_reach_a_trusted_comment() {
    let server = Server::github();
    let trusted_body = "<!-- nsys-gate:nightly-h100 -->\n# trusted nightly report";
    let trusted = server.seed(7, BOT, trusted_body);
    let tmp = TempDir::new().unwrap();
    let art = tmp.path().join("artifact");
    write(
        &art.join("run/analysis.json"),
        &analysis_json("nightly-h100", "FORK-CONTENT"),
    );
    let out = post_analyses(&server, &art, &[]);
    assert_status(&out, 0);
    let comments = server.comments(7);
    assert_eq!(comments.len(), 2, "{comments:?}");
    assert_eq!(comments[0].id, trusted);
    assert_eq!(
        comments[0].body, trusted_body,
        "the trusted comment changed"
    );
    assert!(
        comments[1]
            .body
            .starts_with("<!-- nsys-gate:artifact:nightly-h100 -->\n"),
        "{}",
        comments[1].body
    );
    // Whatever the profile name: a name made to look like the namespace, or like the
    // trusted key after cleaning, stays in the artifact's namespace.
    for profile in [
        "nightly-h100 ",
        "nightly-h100 -",
        " nightly-h100",
        "artifact:nightly-h100",
    ] {
        write(
            &art.join("run/analysis.json"),
            &analysis_json(profile, "FORK-CONTENT"),
        );
        let out = post_analyses(&server, &art, &[]);
        assert_status(&out, 0);
        assert_eq!(
            server.comments(7)[0].body,
            trusted_body,
            "{profile:?}: the trusted comment changed"
        );
    }
    // The trusted side, with the same name, finds its own comment: `post --report` of a
    // report this job rendered.
    let report = tmp.path().join("report.md");
    std::fs::write(
        &report,
        "<!-- nsys-gate:nightly-h100 -->\n# new trusted report\n",
    )
    .unwrap();
    let mut cmd = bin();
    cmd.arg("post")
        .arg("--report")
        .arg(&report)
        .args(["--pr", "7"]);
    github_env(&mut cmd, &server, None);
    let out = cmd.output().unwrap();
    assert_status(&out, 0);
    let comments = server.comments(7);
    assert_eq!(comments[0].id, trusted);
    assert!(comments[0].body.contains("new trusted report"));
}

/// Issue item 9: the profile name `perf -` was cleaned to `perf ` for the marker and to
/// `perf` when the marker was made again: "the rendered comment does not start with the
/// marker of its key", exit 2, nothing posted. Cleaning a key twice changes nothing.
#[test]
fn a_key_survives_its_own_cleaning() {
    let server = Server::github();
    let tmp = TempDir::new().unwrap();
    let art = tmp.path().join("artifact");
    let long = format!("{} -x", "k".repeat(198));
    for (profile, key) in [
        ("perf -", "artifact:perf"),
        ("perf - ", "artifact:perf"),
        (long.as_str(), &*format!("artifact:{}", "k".repeat(198))),
    ] {
        write(
            &art.join("run/analysis.json"),
            &analysis_json(profile, "work"),
        );
        let out = post_analyses(&server, &art, &[]);
        assert_status(&out, 0);
        let last = server.comments(7).pop().unwrap();
        assert!(
            last.body
                .starts_with(&format!("<!-- nsys-gate:{key} -->\n")),
            "{profile:?}: {}",
            &last.body[..80]
        );
    }
    // A --comment-key that ends in ` -`.
    write(&art.join("run/analysis.json"), &analysis_json("p", "work"));
    let out = post_analyses(&server, &art, &["--comment-key", "perf -"]);
    assert_status(&out, 0);
    let last = server.comments(7).pop().unwrap();
    assert!(
        last.body.starts_with("<!-- nsys-gate:perf -->\n"),
        "{}",
        last.body
    );
    let id = last.id;
    // `post --report` with the same --comment-key: the same comment (its marker is the one
    // the key cleans to, not `perf ` with a trailing space).
    let report = tmp.path().join("report.md");
    std::fs::write(&report, "# a report this job rendered\n").unwrap();
    let mut cmd = bin();
    cmd.arg("post")
        .arg("--report")
        .arg(&report)
        .args(["--pr", "7", "--comment-key", "perf -"]);
    github_env(&mut cmd, &server, None);
    let out = cmd.output().unwrap();
    assert_status(&out, 0);
    let last = server.comments(7).pop().unwrap();
    assert_eq!(last.id, id);
    assert_eq!(
        last.body,
        "<!-- nsys-gate:perf -->\n# a report this job rendered\n"
    );
}

/// Issue "trust boundary, round 4", item 8: `post --analyses` showed the fork's self-reported
/// `gate.result: pass` as "gate passed" beside the file's own gating `missing_iterations`
/// warning. The gate is recomputed from the warnings with this command's gate settings
/// (`--gate-on`/`--no-gate-on`, as `run` takes them), and the comment says that its numbers
/// come from the pull request's own job.
#[test]
fn a_forks_passing_claim_over_a_gating_warning_is_shown_as_failed() {
    let tmp = TempDir::new().unwrap();
    let art = tmp.path().join("artifact");
    let mut claim: Value = serde_json::from_str(&analysis_json("smoke", "work")).unwrap();
    claim["warnings"] = serde_json::json!([{
        "code": "missing_iterations", "gating": false,
        "message": "expected 8 iterations, found 5"
    }]);
    claim["gate"] = serde_json::json!({
        "gating_codes": [], "result": "pass", "failing_codes": []
    });
    write(
        &art.join("smoke/analysis.json"),
        &serde_json::to_string_pretty(&claim).unwrap(),
    );
    let server = Server::github();
    let out = post_analyses(&server, &art, &[]);
    assert_status(&out, 0);
    let body = server.comments(7)[0].body.clone();
    assert!(body.contains("nsys-gate: gate failed"), "{body}");
    assert!(!body.contains("gate passed"), "{body}");
    assert!(
        body.contains("The numbers in this comment come from the pull request's own job"),
        "{body}"
    );

    // This workflow's own settings decide: with `--no-gate-on missing_iterations` it passes,
    // with `--gate-on high_variance` a warning of that code fails it.
    let server = Server::github();
    let out = post_analyses(&server, &art, &["--no-gate-on", "missing_iterations"]);
    assert_status(&out, 0);
    let body = server.comments(7)[0].body.clone();
    assert!(body.contains("nsys-gate: gate passed"), "{body}");
    claim["warnings"][0]["code"] = serde_json::json!("high_variance");
    write(
        &art.join("smoke/analysis.json"),
        &serde_json::to_string_pretty(&claim).unwrap(),
    );
    let server = Server::github();
    let out = post_analyses(&server, &art, &["--gate-on", "high_variance"]);
    assert_status(&out, 0);
    let body = server.comments(7)[0].body.clone();
    assert!(body.contains("nsys-gate: gate failed"), "{body}");
    // A --report is posted as rendered: gate settings do not go with it.
    let report = tmp.path().join("report.md");
    write(&report, "<!-- nsys-gate:perf -->\nreport\n");
    let mut cmd = bin();
    cmd.args([
        "post",
        "--pr",
        "7",
        "--gate-on",
        "high_variance",
        "--report",
    ])
    .arg(&report);
    github_env(&mut cmd, &server, None);
    let out = cmd.output().unwrap();
    assert_status(&out, 2);
    assert!(stderr(&out).contains("--gate-on and --no-gate-on go with --analyses"));
}
