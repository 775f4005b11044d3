//! `--baseline auto` against the local GitHub-like server: the base branch's push runs, the
//! repository's artifacts, and zip downloads that redirect to a second loopback server (the
//! storage host), which must never receive the token. The history is real analyses of the
//! harness's `compare-base` trace, each base run's durations moved by its own small offset (as
//! another runner would); the head is `compare-head`, 20 % more work per pass. Whatever is
//! missing is a note; the exit status never changes.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{json, Value};
use zip::write::SimpleFileOptions;

use crate::common::{analysed, assert_status, bin, bin_process, read_json, rerun_of, stderr, Run};
use crate::file_server::FileServer;
use crate::github_server::{Download, Server};
use crate::require_nsys;

pub const TOKEN: &str = "ghs_baseline_token_never_sent_to_storage";
pub const BASE_SHA: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa0005";

/// The offsets of the base runs' durations, oldest first: about 0.4 % run to run.
const OFFSETS: [f64; 6] = [1.003, 0.996, 1.005, 0.998, 1.001, 0.994];

/// A zip holding `entries` (name, bytes), written to `dir/NAME`.
pub fn zip_into(dir: &Path, name: &str, entries: &[(&str, &[u8])]) {
    std::fs::create_dir_all(dir).unwrap();
    let file = std::fs::File::create(dir.join(name)).unwrap();
    let mut w = zip::ZipWriter::new(file);
    for (entry, bytes) in entries {
        w.start_file(*entry, SimpleFileOptions::default()).unwrap();
        w.write_all(bytes).unwrap();
    }
    w.finish().unwrap();
}

/// Pull request 7's event (base commit [`BASE_SHA`] on `main`), written to `dir/event.json`.
pub(crate) fn pr_event(dir: &Path) -> PathBuf {
    let path = dir.join("event.json");
    std::fs::write(
        &path,
        json!({"action": "synchronize", "number": 7, "pull_request": {
            "number": 7, "head": {"sha": "bbbb", "ref": "feature"},
            "base": {"sha": BASE_SHA, "ref": "main"}}})
        .to_string(),
    )
    .unwrap();
    path
}

/// The commit of base run `k` (the run at the base commit is number 5).
pub fn sha(k: usize) -> String {
    format!("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa{k:04}")
}

fn run_json(id: u64, sha: &str, event: &str) -> (String, Value) {
    (
        "profile.yml".to_owned(),
        json!({"id": id, "head_sha": sha, "head_branch": "main", "event": event,
               "status": "completed", "conclusion": "success",
               "created_at": format!("2026-11-{:02}T12:00:00Z", id % 30 + 1),
               "html_url": format!("https://github.example/octo/gpu/actions/runs/{id}"),
               "head_repository": {"full_name": "octo/gpu"}}),
    )
}

/// `report --baseline auto` for the head run, as a pull request's job would run it.
pub fn report_auto(head: &Run, api: &str, extra: &[&str]) -> Output {
    report_auto_cmd(head, api, extra).output().unwrap()
}

/// [`report_auto`] as a command, not yet run.
pub fn report_auto_cmd(head: &Run, api: &str, extra: &[&str]) -> Command {
    let event = pr_event(head.dir.parent().unwrap());
    let mut cmd = bin_process();
    cmd.args(["report", "--run-dir"])
        .arg(&head.dir)
        .args(["--baseline", "auto", "--repo", "octo/gpu", "--api-url", api])
        .args(extra)
        .env("GITHUB_TOKEN", TOKEN)
        .env("GITHUB_EVENT_NAME", "pull_request")
        .env("GITHUB_EVENT_PATH", &event)
        .env(
            "GITHUB_WORKFLOW_REF",
            "octo/gpu/.github/workflows/profile.yml@refs/pull/7/merge",
        )
        .env_remove("GITHUB_ACTIONS");
    cmd
}

/// The server with the base branch's push runs 500 + k (k = 0..6, the run at the base commit
/// is 505, one push after it, 506), newest first, each with its artifact (601 + k) whose zip
/// (`run-K.zip` on `storage`) holds the base trace moved by `OFFSETS[k]`; and a pull
/// request's run of a branch named `main` (a fork's), which is never a base run.
pub(crate) fn history(base: &Run, storage_root: &Path, storage: &FileServer) -> Server {
    let analysis = std::fs::read(base.path("analysis.json")).unwrap();
    let server = Server::github();
    let mut s = server.state();
    s.workflow_runs.push(run_json(999, "dddd", "pull_request"));
    for k in (0..=6usize).rev() {
        let id = 500 + k as u64;
        s.workflow_runs.push(run_json(id, &sha(k), "push"));
        let factor = OFFSETS.get(k).copied().unwrap_or(1.0);
        let bytes = rerun_of(&analysis, factor, &format!("base-{k}"), &sha(k));
        zip_into(
            storage_root,
            &format!("run-{k}.zip"),
            &[("compare-base/analysis.json", bytes.as_slice())],
        );
        let artifact = 600 + id - 499;
        s.artifacts.push((
            id,
            json!({"id": artifact, "name": "nsys-gate-analysis", "expired": false, "size_in_bytes": 1000}),
        ));
        s.downloads.insert(
            artifact,
            Download::Redirect(format!("{}/blob/run-{k}.zip?sig=secret", storage.url())),
        );
    }
    drop(s);
    server
}

/// The notes of the head's comparison.json, one a line.
pub fn notes(head: &Run) -> String {
    let c = read_json(&head.path("comparison.json"));
    c["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap().to_owned())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The base and head runs analysed, and the storage host's folder and server.
pub(crate) fn setup() -> Option<(Run, Run, PathBuf, FileServer)> {
    let nsys = require_nsys!("2024.2", None);
    let base = analysed("compare-base", &nsys);
    let head = analysed("compare-head", &nsys);
    let root = head.dir.parent().unwrap().join("blobs/blob");
    std::fs::create_dir_all(&root).unwrap();
    let storage = FileServer::serve(root.parent().unwrap());
    Some((base, head, root, storage))
}

#[test]
fn auto_reads_the_base_branchs_push_runs_up_to_the_base_commit_without_sending_the_token() {
    let Some((base, head, root, storage)) = setup() else {
        return;
    };
    let server = history(&base, &root, &storage);
    server.state().list_page_cap = 2;
    let out = report_auto(&head, &server.api_url(), &["--baseline-runs", "4"]);
    assert_status(&out, 0);
    let c = read_json(&head.path("comparison.json"));
    assert_eq!(c["schema_version"], 2);
    assert_eq!(c["baseline"]["kind"], "auto", "{}", stderr(&out));
    assert_eq!(c["baseline"]["branch"], "main");
    // The four newest up to the base commit's run (505): 506 came after it, 999 is a pull
    // request's.
    let ids: Vec<u64> = c["baseline"]["workflow_runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_u64().unwrap())
        .collect();
    assert_eq!(ids, [505, 504, 503, 502]);
    let run = &c["runs"][0];
    let used: Vec<&str> = run["history"]["used"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["run_id"].as_str().unwrap())
        .collect();
    assert_eq!(used, ["base-2", "base-3", "base-4", "base-5"]);
    let host = &run["measures"][0];
    assert_eq!(host["verdict"], "slower", "{host}");
    assert_eq!(host["base"]["runs"], 4);
    let spread = host["base"]["spread_pct"].as_f64().unwrap();
    assert!((0.1..1.0).contains(&spread), "{spread}");
    // Calls: the runs (two pages of 2: the fourth push run is on the second), the artifacts
    // (pages of 2 until the four runs are covered), one zip each.
    let api = server.requests();
    let count = |needle: &str| api.iter().filter(|r| r.path.contains(needle)).count();
    assert_eq!(count("/actions/workflows/profile.yml/runs"), 3, "{api:?}");
    assert_eq!(count("/zip"), 4);
    for r in &api {
        assert_eq!(
            r.header_values("authorization"),
            [format!("Bearer {TOKEN}")],
            "{}",
            r.line()
        );
    }
    let stored = storage.requests_with_headers();
    assert_eq!(stored.len(), 4);
    for (path, headers) in &stored {
        assert!(path.ends_with("?sig=secret"), "{path}");
        // Nothing of the API's: no token, no GitHub API version.
        assert!(
            headers.iter().all(|(n, v)| n != "authorization"
                && n != "x-github-api-version"
                && !v.contains(TOKEN)),
            "{headers:?}"
        );
    }
    let report = std::fs::read_to_string(head.path("report.md")).unwrap();
    assert!(
        report
            .contains("the base branch `main`: its 4 newest successful push runs of `profile.yml`"),
        "{report}"
    );
    assert!(
        report.contains("**slower** (beyond the run-to-run noise of the last 4 base runs)"),
        "{report}"
    );
    assert!(report.contains("<summary>The base runs, oldest first (4)</summary>"));
    assert!(!stderr(&out).contains(TOKEN));
}

#[test]
fn without_a_run_at_the_base_commit_the_newest_runs_are_the_history() {
    let Some((base, head, root, storage)) = setup() else {
        return;
    };
    let server = history(&base, &root, &storage);
    server.state().workflow_runs.retain(|(_, r)| r["id"] != 505);
    let out = report_auto(&head, &server.api_url(), &["--baseline-runs", "3"]);
    assert_status(&out, 0);
    let c = read_json(&head.path("comparison.json"));
    let ids: Vec<u64> = c["baseline"]["workflow_runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_u64().unwrap())
        .collect();
    assert_eq!(ids, [506, 504, 503], "{}", stderr(&out));
    assert!(
        notes(&head).contains("no push run at the pull request's base commit"),
        "{}",
        notes(&head)
    );
}

#[test]
fn expired_missing_and_failed_artifacts_are_notes_and_the_rest_is_the_history() {
    let Some((base, head, root, storage)) = setup() else {
        return;
    };
    let server = history(&base, &root, &storage);
    {
        let mut s = server.state();
        for (run, a) in s.artifacts.iter_mut() {
            if *run == 504 {
                a["expired"] = json!(true);
            }
        }
        s.artifacts.retain(|(run, _)| *run != 503);
        s.downloads
            .insert(603, Download::Status(500, "storage unavailable".into()));
    }
    let out = report_auto(&head, &server.api_url(), &["--baseline-runs", "6"]);
    assert_status(&out, 0);
    let notes = notes(&head);
    assert!(
        notes.contains("the artifact `nsys-gate-analysis` of workflow run 504"),
        "{notes}"
    );
    assert!(notes.contains("has expired"), "{notes}");
    assert!(
        notes.contains("workflow run 503 (aaaaaaa) has no artifact named"),
        "{notes}"
    );
    assert!(notes.contains("workflow run 502"), "{notes}");
    assert!(notes.contains("HTTP 500"), "{notes}");
    let c = read_json(&head.path("comparison.json"));
    assert_eq!(c["runs"][0]["history"]["used"].as_array().unwrap().len(), 3);
    assert_eq!(c["runs"][0]["measures"][0]["verdict"], "slower");
}

#[test]
fn one_base_run_says_the_noise_is_unknown_never_slower() {
    let Some((base, head, root, storage)) = setup() else {
        return;
    };
    let server = history(&base, &root, &storage);
    let out = report_auto(&head, &server.api_url(), &["--baseline-runs", "1"]);
    assert_status(&out, 0);
    let c = read_json(&head.path("comparison.json"));
    let host = &c["runs"][0]["measures"][0];
    assert_eq!(host["verdict"], "noise_unknown", "{host}");
    let change = host["change_pct"].as_f64().unwrap();
    assert!((17.0..23.0).contains(&change), "{change}");
    assert!(host["within_pair"]["interval_pct"].is_array());
    let report = std::fs::read_to_string(head.path("report.md")).unwrap();
    assert!(
        report.contains("**noise unknown** (1 usable base run; 3 needed)"),
        "{report}"
    );
    assert!(report.contains("To know the run-to-run noise"), "{report}");
    assert!(!report.contains("**slower**"), "{report}");
}

#[test]
fn no_permission_is_a_note_naming_actions_read() {
    let Some((base, head, root, storage)) = setup() else {
        return;
    };
    let server = history(&base, &root, &storage);
    server.fault(crate::github_server::Fault::new(
        "GET",
        "/actions/workflows/",
        403,
        json!({"message": "Resource not accessible by integration"}).to_string(),
    ));
    let out = report_auto(&head, &server.api_url(), &[]);
    assert_status(&out, 0);
    let notes = notes(&head);
    assert!(
        notes.contains("Resource not accessible by integration"),
        "{notes}"
    );
    assert!(notes.contains("`permissions: actions: read`"), "{notes}");
}

#[test]
fn a_zip_that_climbs_out_is_refused() {
    let Some((base, head, root, storage)) = setup() else {
        return;
    };
    let server = history(&base, &root, &storage);
    let analysis = std::fs::read(base.path("analysis.json")).unwrap();
    zip_into(
        &root,
        "run-5.zip",
        &[
            ("ok/analysis.json", &analysis),
            (
                "../../../../../../../../tmp/nsys-gate-escaped/analysis.json",
                &analysis,
            ),
        ],
    );
    let out = report_auto(&head, &server.api_url(), &["--baseline-runs", "1"]);
    assert_status(&out, 0);
    let notes = notes(&head);
    assert!(notes.contains("would land outside the folder"), "{notes}");
    assert!(!Path::new("/tmp/nsys-gate-escaped").exists());
    assert_eq!(read_json(&head.path("comparison.json"))["runs"], json!([]));
}

#[test]
fn no_run_no_artifact_no_token_and_gitea_are_notes() {
    let nsys = require_nsys!("2024.2");
    let head = analysed("compare-head", &nsys);
    let server = Server::github();
    let out = report_auto(&head, &server.api_url(), &[]);
    assert_status(&out, 0);
    assert!(
        notes(&head).contains("no successful push run of workflow `profile.yml` on branch `main`"),
        "{}",
        notes(&head)
    );

    server
        .state()
        .workflow_runs
        .push(run_json(501, BASE_SHA, "push"));
    let out = report_auto(&head, &server.api_url(), &["--baseline-artifact", "other"]);
    assert_status(&out, 0);
    assert!(
        notes(&head).contains("has no artifact named `other`"),
        "{}",
        notes(&head)
    );

    let out = report_auto(
        &head,
        &server.api_url(),
        &["--token-env", "NO_SUCH_TOKEN_VAR"],
    );
    assert_status(&out, 0);
    assert!(notes(&head).contains("no token in $NO_SUCH_TOKEN_VAR"));

    let gitea = Server::gitea();
    let out = report_auto(&head, &gitea.api_url(), &[]);
    assert_status(&out, 0);
    assert!(
        notes(&head).contains("Gitea's or Forgejo's"),
        "{}",
        notes(&head)
    );
    assert!(gitea.requests().is_empty());
}

#[test]
fn a_push_run_is_compared_with_its_own_branchs_history_and_the_summary_names_a_level_shift() {
    let Some((base, head, root, storage)) = setup() else {
        return;
    };
    let server = history(&base, &root, &storage);
    {
        // The three newest push runs are 5 % slower: the branch changed speed at run 504. That
        // run's file claims another commit: the culprit named is the commit the forge ran the
        // run on, never a file's claim.
        let analysis = std::fs::read(base.path("analysis.json")).unwrap();
        for k in 4..=6usize {
            let factor = OFFSETS.get(k).copied().unwrap_or(1.0) * 1.05;
            let commit = if k == 4 { CLAIMED.to_owned() } else { sha(k) };
            let bytes = rerun_of(&analysis, factor, &format!("base-{k}"), &commit);
            zip_into(
                &root,
                &format!("run-{k}.zip"),
                &[("compare-base/analysis.json", bytes.as_slice())],
            );
        }
        // This push's own run is listed too (it is in progress here, but is never its base).
        let (_, mut this) = run_json(507, "eeee", "push");
        this["conclusion"] = json!("success");
        server
            .state()
            .workflow_runs
            .insert(0, ("profile.yml".into(), this));
    }
    let tmp = head.dir.parent().unwrap();
    let event = tmp.join("push.json");
    std::fs::write(
        &event,
        json!({"ref": "refs/heads/main", "after": "eeee"}).to_string(),
    )
    .unwrap();
    // The head: a run of the new level (the base trace, 5 % slower).
    let analysis = std::fs::read(base.path("analysis.json")).unwrap();
    std::fs::write(
        head.path("analysis.json"),
        rerun_of(&analysis, 1.052, "head", "eeee"),
    )
    .unwrap();
    let summary = tmp.join("summary.md");
    let out = bin()
        .args(["report", "--run-dir"])
        .arg(&head.dir)
        .args(["--baseline", "auto", "--repo", "octo/gpu", "--api-url"])
        .arg(server.api_url())
        .env("GITHUB_TOKEN", TOKEN)
        .env("GITHUB_EVENT_NAME", "push")
        .env("GITHUB_EVENT_PATH", &event)
        .env("GITHUB_RUN_ID", "507")
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_STEP_SUMMARY", &summary)
        .env(
            "GITHUB_WORKFLOW_REF",
            "octo/gpu/.github/workflows/profile.yml@refs/heads/main",
        )
        .output()
        .unwrap();
    assert_status(&out, 0);
    let c = read_json(&head.path("comparison.json"));
    assert!(
        !c["baseline"]["workflow_runs"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["id"] == 507),
        "{}",
        stderr(&out)
    );
    let point = &c["runs"][0]["history"]["change_point"];
    assert_eq!(point["git_commit"], sha(4), "{point}");
    let change = point["change_pct"].as_f64().unwrap();
    assert!((4.0..6.0).contains(&change), "{change}");
    // The runs since the shift are the level, those before it still teach the noise; the
    // head is like the runs since it.
    let used = c["runs"][0]["history"]["used"].as_array().unwrap();
    assert_eq!(
        used.iter().filter(|u| u["segment"] == 1).count(),
        3,
        "{used:?}"
    );
    assert!(c["runs"][0]["history"]["left_out"]
        .as_array()
        .unwrap()
        .is_empty());
    assert_eq!(c["runs"][0]["measures"][0]["verdict"], "within_noise");
    let summary = std::fs::read_to_string(summary).unwrap();
    let shift = format!("`main` is {change:.1}\u{a0}% slower since `aaaaaaa` (host inclusive)");
    assert!(summary.contains(&shift), "{shift} in\n{summary}");
    let report = std::fs::read_to_string(head.path("report.md")).unwrap();
    for (name, text) in [
        ("comparison.json", c.to_string()),
        ("the summary", summary),
        ("report.md", report),
        ("the log", stderr(&out)),
    ] {
        assert!(
            !text.contains(&CLAIMED[..7]),
            "the file's claim in {name}: {text}"
        );
    }
}

/// A commit a base run's file claims, which the forge never ran.
const CLAIMED: &str = "badc0ffee0000000000000000000000000000000";

#[test]
fn the_fork_safe_half_compares_with_the_profiling_workflows_base_history() {
    let Some((base, head, root, storage)) = setup() else {
        return;
    };
    let server = history(&base, &root, &storage);
    {
        let mut s = server.state();
        // The fork's pull request: found by the head commit (the event lists none); the test
        // server's pulls have base `main` at `0000` (no run there: the newest are taken).
        s.pulls.push((7, "feedbeef".into()));
        for (workflow, _) in s.workflow_runs.iter_mut() {
            *workflow = "profile-untrusted.yml".into();
        }
    }
    let tmp = head.dir.parent().unwrap();
    // The fork's artifact, as the privileged job downloads it: analysis.json files only.
    let artifact = tmp.join("fork-artifact/compare-head");
    std::fs::create_dir_all(&artifact).unwrap();
    std::fs::copy(head.path("analysis.json"), artifact.join("analysis.json")).unwrap();
    let event = tmp.join("workflow_run.json");
    std::fs::write(
        &event,
        json!({"action": "completed", "workflow_run": {
            "event": "pull_request", "head_sha": "feedbeef", "pull_requests": [],
            "path": ".github/workflows/profile-untrusted.yml",
            "head_repository": {"full_name": "fork/gpu"}}})
        .to_string(),
    )
    .unwrap();
    let out = bin()
        .args(["post", "--analyses"])
        .arg(tmp.join("fork-artifact"))
        .args(["--baseline", "auto", "--repo", "octo/gpu", "--api-url"])
        .arg(server.api_url())
        .env("GITHUB_TOKEN", TOKEN)
        .env("GITHUB_EVENT_NAME", "workflow_run")
        .env("GITHUB_EVENT_PATH", &event)
        // The posting workflow's own file: not where the baseline is.
        .env(
            "GITHUB_WORKFLOW_REF",
            "octo/gpu/.github/workflows/post-comment.yml@refs/heads/main",
        )
        .env_remove("GITHUB_ACTIONS")
        .output()
        .unwrap();
    assert_status(&out, 0);
    let comments = server.comments(7);
    assert_eq!(comments.len(), 1, "{}", stderr(&out));
    let body = &comments[0].body;
    assert!(body.contains("### Compared with the base branch"), "{body}");
    assert!(body.contains("`profile-untrusted.yml`"), "{body}");
    assert!(body.contains("**slower**"), "{body}");
    assert!(storage
        .requests_with_headers()
        .iter()
        .all(|(_, headers)| headers.iter().all(|(n, _)| n != "authorization")));
}
