//! GitLab CI against the local GitLab-like API (`gitlab_server.rs`), with only GitLab's
//! variables set: one merge request note per profile, found again among other notes across
//! pages and updated in place; `--baseline auto` from the target branch's push pipelines'
//! job artifacts, the downloads redirected to a second loopback server that never sees the
//! token; and the API's refusals (401, 403, 404, 410) said in words.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::{json, Value};

use crate::baseline_auto::zip_into;
use crate::common::{analysed, assert_status, bin_process, fixture, read_json, rerun_of, stderr};
use crate::file_server::FileServer;
use crate::gitlab_server::{Download, Server};
use crate::require_nsys;

pub(crate) const TOKEN: &str = "glpat-NsysGateTestSecret7Qx2Lp9Vw4";

/// The commit of pipeline `k`.
pub(crate) fn sha(k: u64) -> String {
    format!("bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb{k:04}")
}

/// A merge request pipeline's job of `server`'s project 42, merge request !7, with only
/// GitLab's variables (and the token).
pub(crate) fn gitlab_job(server: &Server) -> Command {
    let mut cmd = bin_process();
    cmd.env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_WORKFLOW_REF")
        .env_remove("GITHUB_RUN_ID")
        .env("GITLAB_CI", "true")
        .env("CI_API_V4_URL", server.api_url())
        .env("CI_PROJECT_ID", "42")
        .env("CI_MERGE_REQUEST_PROJECT_ID", "42")
        .env("CI_MERGE_REQUEST_IID", "7")
        .env("CI_PIPELINE_SOURCE", "merge_request_event")
        .env("CI_PIPELINE_ID", "900")
        .env("CI_COMMIT_SHA", sha(999))
        .env("CI_MERGE_REQUEST_TARGET_BRANCH_NAME", "main")
        .env("CI_MERGE_REQUEST_DIFF_BASE_SHA", sha(305))
        .env("CI_DEFAULT_BRANCH", "main")
        .env("CI_JOB_NAME", "profile")
        .env("CI_JOB_URL", "https://gitlab.example/g/gpu/-/jobs/901")
        .env("CI_PROJECT_URL", "https://gitlab.example/g/gpu")
        .env(
            "CI_MERGE_REQUEST_PROJECT_URL",
            "https://gitlab.example/g/gpu",
        )
        .env("CI_RUNNER_DESCRIPTION", "gpu-runner-h100")
        .env("GITLAB_TOKEN", TOKEN);
    cmd
}

pub(crate) fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Every API request carried the token as `PRIVATE-TOKEN`, none as `Authorization`, and no
/// header of GitHub's.
pub(crate) fn assert_private_token(server: &Server) {
    for r in server.requests() {
        assert_eq!(r.header("private-token"), Some(TOKEN), "{}", r.path);
        assert_eq!(r.header("authorization"), None, "{}", r.path);
        assert_eq!(r.header("x-github-api-version"), None, "{}", r.path);
    }
}

#[test]
fn run_posts_one_note_and_updates_it_among_other_notes_across_pages() {
    let nsys = require_nsys!("2024.2");
    let server = Server::start(TOKEN);
    for i in 0..150 {
        server.seed(7, "someone", &format!("review note {i}"));
    }
    server.state().page_cap = 100;
    let run = fixture("clean");
    let post = || {
        gitlab_job(&server)
            .args(["run", "--run-dir"])
            .arg(&run.dir)
            .arg("--nsys")
            .arg(&nsys)
            .args(["--comment-key", "smoke"])
            .output()
            .unwrap()
    };
    let out = post();
    assert_status(&out, 0);
    let notes = server.notes(7);
    assert_eq!(notes.len(), 151, "{}", text(&out));
    let ours = notes.last().unwrap();
    assert_eq!(ours.author, "nsys-bot");
    assert!(
        ours.body.starts_with("<!-- nsys-gate:smoke -->"),
        "{}",
        ours.body
    );
    assert!(
        stderr(&out).contains("note `smoke` on merge request !7 created: https://gitlab.example/g/gpu/-/merge_requests/7#note_"),
        "{}",
        stderr(&out)
    );
    // The analysis records GitLab's pipeline and runner.
    let analysis = run.analysis();
    assert_eq!(
        analysis["provenance"]["ci_run"],
        json!({"id": 900, "attempt": null})
    );
    assert_eq!(analysis["provenance"]["runner"], "gpu-runner-h100");
    // The report links to the job and its commits to GitLab's commit pages.
    let report = std::fs::read_to_string(run.path("report.md")).unwrap();
    assert!(
        report.contains("[the job](https://gitlab.example/g/gpu/-/jobs/901)"),
        "{report}"
    );

    // Again: the note is on the second page now, found by its marker and author, and
    // updated in place (the same id).
    let before = server.requests().len();
    let out = post();
    assert_status(&out, 0);
    let notes = server.notes(7);
    assert_eq!(notes.len(), 151);
    assert_eq!(notes.last().unwrap().id, ours.id);
    let again: Vec<String> = server.requests()[before..]
        .iter()
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    assert!(
        again
            .iter()
            .any(|l| l.contains("/notes?") && l.contains("page=2")),
        "{again:?}"
    );
    assert!(
        !again.iter().any(|l| l.starts_with("POST ")),
        "created again: {again:?}"
    );
    assert!(stderr(&out).contains("unchanged") || stderr(&out).contains("updated"));
    assert_private_token(&server);
    assert!(!text(&out).contains(TOKEN));
}

/// The base and head runs analysed, and a GitLab API whose push pipelines 301..=305 hold the
/// base run ([`history`]), their archives on a storage host of their own.
pub(crate) struct Pushes {
    pub base: crate::common::Run,
    pub head: crate::common::Run,
    /// Where the storage host serves the archives from (`job-JOB.zip`).
    pub root: std::path::PathBuf,
    pub server: Server,
    /// Serves the archives as long as it lives.
    pub storage: FileServer,
}

pub(crate) fn pushes(nsys: &Path) -> Pushes {
    let base = analysed("compare-base", nsys);
    let head = analysed("compare-head", nsys);
    let root = head.dir.parent().unwrap().join("blobs/blob");
    std::fs::create_dir_all(&root).unwrap();
    let storage = FileServer::serve(root.parent().unwrap());
    let server = Server::start(TOKEN);
    history(&server, &base.dir, &root, &storage);
    Pushes {
        base,
        head,
        root,
        server,
        storage,
    }
}

/// Pipelines 301..=305 of `main` (305 newest, at the merge request's base commit), each with
/// its `profile` job whose artifacts hold the base trace moved a little; a tag's pipeline and
/// a merge request's are listed too and never read.
pub(crate) fn history(server: &Server, base: &Path, storage_root: &Path, storage: &FileServer) {
    let analysis = std::fs::read(base.join("analysis.json")).unwrap();
    let offsets = [1.003, 0.996, 1.005, 0.998, 1.001];
    let mut s = server.state();
    s.pipelines.push(
        json!({"id": 310, "sha": sha(310), "ref": "main", "status": "success",
        "source": "merge_request_event", "tag": false}),
    );
    s.pipelines.push(
        json!({"id": 309, "sha": sha(309), "ref": "main", "status": "success",
        "source": "push", "tag": true}),
    );
    for k in (301..=305u64).rev() {
        s.pipelines.push(
            json!({"id": k, "sha": sha(k), "ref": "main", "status": "success",
            "source": "push", "tag": false,
            "web_url": format!("https://gitlab.example/g/gpu/-/pipelines/{k}"),
            "created_at": format!("2026-11-{:02}T12:00:00.000Z", k - 290)}),
        );
        let job = 1000 + k;
        let bytes = rerun_of(
            &analysis,
            offsets[(k - 301) as usize],
            &format!("base-{k}"),
            &sha(k),
        );
        zip_into(
            storage_root,
            &format!("job-{job}.zip"),
            &[("runs/compare-base/analysis.json", bytes.as_slice())],
        );
        s.jobs.insert(
            k,
            vec![
                json!({"id": job + 500, "name": "build", "status": "success", "artifacts": []}),
                json!({"id": job, "name": "profile", "status": "success",
                       "artifacts_expire_at": "2099-01-01T00:00:00.000Z",
                       "artifacts": [{"file_type": "archive", "size": 1000, "filename": "artifacts.zip"}]}),
            ],
        );
        s.downloads.insert(
            job,
            Download::Redirect(format!(
                "{}/blob/job-{job}.zip?X-Amz-Signature=secret",
                storage.url()
            )),
        );
    }
    // Pipeline 303's artifacts expired: GitLab lists the job without its archive.
    let expired = s.jobs.get_mut(&303).unwrap();
    expired[1]["artifacts_expire_at"] = json!("2026-10-01T00:00:00.000Z");
    expired[1]["artifacts"] = json!([]);
}

#[test]
fn auto_reads_five_push_pipelines_one_expired_and_the_verdict_uses_four_points() {
    let nsys = require_nsys!("2024.2");
    let Pushes {
        base: _base,
        head,
        server,
        storage,
        ..
    } = pushes(&nsys);
    let out = report_auto(&server, &head);
    assert_status(&out, 0);
    let c = read_json(&head.path("comparison.json"));
    assert_eq!(c["baseline"]["job"], "profile", "{}", stderr(&out));
    assert_eq!(c["baseline"]["branch"], "main");
    let ids: Vec<u64> = c["baseline"]["ci_runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_u64().unwrap())
        .collect();
    assert_eq!(ids, [305, 304, 303, 302, 301]);
    let notes: Vec<&str> = c["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert!(
        notes
            .iter()
            .any(|n| n.contains("pipeline 303") && n.contains("expired")),
        "{notes:?}"
    );
    let run = &c["runs"][0];
    let used: Vec<&Value> = run["history"]["used"].as_array().unwrap().iter().collect();
    assert_eq!(used.len(), 4, "{used:?}");
    assert!(used.iter().all(|u| u["ci_run_id"] == u["workflow_run_id"]));
    assert_eq!(run["measures"][0]["base"]["runs"], 4);
    assert_eq!(run["measures"][0]["verdict"], "slower");
    let report = std::fs::read_to_string(head.path("report.md")).unwrap();
    assert!(
        report.contains("its 5 newest successful push pipelines, the artifacts of job `profile`"),
        "{report}"
    );
    // The storage host never sees the token; the API always gets it as PRIVATE-TOKEN.
    let stored = storage.requests_with_headers();
    assert_eq!(stored.len(), 4);
    for (path, headers) in &stored {
        assert!(path.ends_with("?X-Amz-Signature=secret"), "{path}");
        assert!(
            headers.iter().all(|(n, v)| n != "private-token"
                && n != "authorization"
                && n != "x-github-api-version"
                && !v.contains(TOKEN)),
            "{headers:?}"
        );
    }
    assert_private_token(&server);
    let paths: Vec<String> = server.requests().iter().map(|r| r.path.clone()).collect();
    assert!(
        !paths
            .iter()
            .any(|p| p.contains("/pipelines/309/") || p.contains("/pipelines/310/")),
        "{paths:?}"
    );
    assert!(!text(&out).contains(TOKEN));
}

/// A report with its marker, for `post --report`.
pub(crate) fn report_file(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("report.md");
    std::fs::write(&path, "<!-- nsys-gate:smoke -->\n# nsys-gate report\n").unwrap();
    path
}

#[test]
fn refusals_and_missing_tokens_are_said_in_words() {
    let tmp = assert_fs::TempDir::new().unwrap();
    let report = report_file(tmp.path());
    let server = Server::start(TOKEN);
    let post = |cmd: &mut Command| {
        cmd.args(["post", "--report"])
            .arg(&report)
            .output()
            .unwrap()
    };

    // Only the job token: it cannot write notes, and the error says what to do.
    let out = post(
        gitlab_job(&server)
            .env_remove("GITLAB_TOKEN")
            .env("CI_JOB_TOKEN", "job-token-value"),
    );
    assert_status(&out, 2);
    let err = stderr(&out);
    assert!(
        err.contains("CI_JOB_TOKEN is set, but a job token cannot write merge request notes"),
        "{err}"
    );
    assert!(
        err.contains("project access token with the `api` scope"),
        "{err}"
    );
    assert!(server.requests().is_empty());

    // A token the server refuses (401 on GET /user): said, never shown.
    let out = post(gitlab_job(&server).env("GITLAB_TOKEN", "glpat-wrong-token-123456"));
    assert_status(&out, 2);
    let err = stderr(&out);
    assert!(err.contains("GET /api/v4/user: HTTP 401"), "{err}");
    assert!(!err.contains("glpat-wrong"), "{err}");

    // No permission to write (403): the hint names the token's scope and forks.
    server.fault("POST", "/notes", 403, "403 Forbidden");
    let out = post(&mut gitlab_job(&server));
    assert_status(&out, 2);
    let err = stderr(&out);
    assert!(err.contains("HTTP 403: 403 Forbidden"), "{err}");
    assert!(
        err.contains("cannot post the merge-request comment"),
        "{err}"
    );
    assert!(err.contains("hint: the token cannot write notes"), "{err}");
    assert!(err.contains("fork"), "{err}");

    // Created on the next try; a push pipeline has no merge request: skipped.
    let out = post(&mut gitlab_job(&server));
    assert_status(&out, 0);
    assert_eq!(server.notes(7).len(), 1);
    let out = post(
        gitlab_job(&server)
            .env_remove("CI_MERGE_REQUEST_IID")
            .env("CI_PIPELINE_SOURCE", "push"),
    );
    assert_status(&out, 0);
    assert!(
        stderr(&out).contains("no merge request to comment on (pipeline source: push)"),
        "{}",
        stderr(&out)
    );
    for r in server.requests() {
        assert!(r.header("private-token").is_some(), "{}", r.path);
        assert_eq!(r.header("authorization"), None, "{}", r.path);
    }
}

#[test]
fn a_missing_project_and_a_gone_download_are_notes() {
    let nsys = require_nsys!("2024.2");
    let head = analysed("compare-head", &nsys);
    let server = Server::start(TOKEN);
    // 404 on the pipelines: a note naming the request.
    server.fault("GET", "/pipelines?", 404, "404 Project Not Found");
    let out = gitlab_job(&server)
        .args(["report", "--run-dir"])
        .arg(&head.dir)
        .args(["--baseline", "auto"])
        .output()
        .unwrap();
    assert_status(&out, 0);
    let c = read_json(&head.path("comparison.json"));
    let notes = c["notes"].to_string();
    assert!(
        notes.contains("listing the push pipelines of branch `main`"),
        "{notes}"
    );
    assert!(notes.contains("HTTP 404"), "{notes}");

    // 410 on a job's artifacts: the artifact has expired, a note; 401 on another: a note.
    {
        let mut s = server.state();
        for (k, status) in [(305u64, 410u16), (304, 403)] {
            s.pipelines.push(
                json!({"id": k, "sha": sha(k), "ref": "main", "status": "success",
                "source": "push", "tag": false}),
            );
            s.jobs.insert(
                k,
                vec![
                    json!({"id": 2000 + k, "name": "profile", "status": "success",
                "artifacts": [{"file_type": "archive", "size": 10}]}),
                ],
            );
            s.downloads.insert(
                2000 + k,
                Download::Status(status, format!("{status} Gone or Forbidden")),
            );
        }
    }
    let out = gitlab_job(&server)
        .args(["report", "--run-dir"])
        .arg(&head.dir)
        .args(["--baseline", "auto"])
        .output()
        .unwrap();
    assert_status(&out, 0);
    let c = read_json(&head.path("comparison.json"));
    let notes = c["notes"].to_string();
    assert!(
        notes.contains("pipeline 305 (bbbbbbb): the artifact has expired (HTTP 410"),
        "{notes}"
    );
    assert!(
        notes.contains("pipeline 304 (bbbbbbb): downloading its artifact"),
        "{notes}"
    );
    assert!(notes.contains("HTTP 403"), "{notes}");
}

#[test]
fn the_history_keeps_its_order_whatever_order_the_downloads_finish_in() {
    let nsys = require_nsys!("2024.2");
    let Pushes {
        base: _base,
        head,
        server,
        storage: _storage,
        ..
    } = pushes(&nsys);
    // The newest two pipelines' artifacts come last: the older ones, fetched beside them,
    // finish first.
    server.state().slow = vec![
        (
            "/jobs/1305/artifacts".into(),
            std::time::Duration::from_millis(1500),
        ),
        (
            "/jobs/1304/artifacts".into(),
            std::time::Duration::from_millis(1000),
        ),
    ];
    let started = std::time::Instant::now();
    let out = report_auto(&server, &head);
    let elapsed = started.elapsed();
    assert_status(&out, 0);
    let c = read_json(&head.path("comparison.json"));
    let ids: Vec<u64> = c["baseline"]["ci_runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_u64().unwrap())
        .collect();
    assert_eq!(ids, [305, 304, 303, 302, 301], "{}", stderr(&out));
    let used: Vec<&str> = c["runs"][0]["history"]["used"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["run_id"].as_str().unwrap())
        .collect();
    assert_eq!(used, ["base-301", "base-302", "base-304", "base-305"]);
    let analyses: Vec<&str> = c["baseline"]["analyses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert!(analyses[0].starts_with("run 301/"), "{analyses:?}");
    assert!(analyses[3].starts_with("run 305/"), "{analyses:?}");
    // Overlapped: one after another would wait 2.5 s for the two slow answers alone, on top
    // of everything else.
    eprintln!("five pipelines, two slow downloads: {elapsed:?}");
    assert!(elapsed < std::time::Duration::from_secs(10), "{elapsed:?}");
    // Bounded: the two slow downloads overlapped, and never more than 4 requests were under
    // way at once (the default).
    let most = server.state().most_in_flight;
    assert!((2..=4).contains(&most), "{most} requests under way at once");
}

/// Issue 37, item 6: the older runs' locatings, asked before the newer runs' downloads, took
/// every place and hung: none of the newest runs, already located, was downloaded before the
/// deadline ("0 of 10 runs read"). A download now gets a place before any locating, the newer
/// run first: the newest runs are read, the hanging older ones are the ones left.
#[test]
fn hanging_older_pipelines_leave_the_newest_runs_read() {
    let nsys = require_nsys!("2024.2");
    let Pushes {
        base: _base,
        head,
        server,
        storage: _storage,
        ..
    } = pushes(&nsys);
    // The two oldest pipelines' jobs lists answer after the deadline.
    server.state().slow = vec![
        (
            "/pipelines/302/jobs".into(),
            std::time::Duration::from_secs(6),
        ),
        (
            "/pipelines/301/jobs".into(),
            std::time::Duration::from_secs(6),
        ),
    ];
    let out = gitlab_job(&server)
        .args(["report", "--run-dir"])
        .arg(&head.dir)
        .args(["--baseline", "auto", "--baseline-runs", "5"])
        .args(["--baseline-concurrency", "2", "--baseline-timeout", "3"])
        .output()
        .unwrap();
    assert_status(&out, 0);
    let c = read_json(&head.path("comparison.json"));
    let used: Vec<&str> = c["runs"][0]["history"]["used"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["run_id"].as_str().unwrap())
        .collect();
    assert_eq!(used, ["base-304", "base-305"], "{}", stderr(&out));
    let notes = c["notes"].to_string();
    assert!(
        notes.contains("2 of 5 base runs were not fetched before"),
        "{notes}"
    );
}

/// Issue 37, item 7: a file's commit claim named the culprit of a level shift ("main is 5.8 %
/// slower since badc0ff"). A base run's commit is the one the forge ran its pipeline on; a
/// file that names another is noted.
#[test]
fn a_base_runs_commit_is_the_forges() {
    let nsys = require_nsys!("2024.2");
    let Pushes {
        base,
        head,
        root,
        server,
        storage: _storage,
    } = pushes(&nsys);
    // Pipeline 305's artifact claims another commit.
    let analysis = std::fs::read(base.dir.join("analysis.json")).unwrap();
    let claim = "badc0ffee0000000000000000000000000000000";
    let bytes = rerun_of(&analysis, 1.001, "base-305", claim);
    zip_into(
        &root,
        "job-1305.zip",
        &[("runs/compare-base/analysis.json", bytes.as_slice())],
    );
    let out = report_auto(&server, &head);
    assert_status(&out, 0);
    let c = read_json(&head.path("comparison.json"));
    let text = c.to_string();
    assert!(
        !text.contains("badc0ff"),
        "the file's claim is used: {text}"
    );
    let newest = c["runs"][0]["history"]["used"]
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["run_id"] == "base-305")
        .expect("pipeline 305 is used")
        .clone();
    assert_eq!(newest["git_commit"], sha(305));
    let notes = c["notes"].to_string();
    assert!(
        notes.contains("1 analysis.json in the artifact of pipeline 305")
            && notes.contains("the forge's commit is used"),
        "{notes}"
    );
}

/// Issue 37, item 8: an artifact with an analysis.json at its root was read as that file only
/// (its run directories ignored) and named by a temporary folder's absolute path. Every
/// analysis.json of the artifact is read, each named inside it.
#[test]
fn an_artifact_with_an_analysis_at_its_root_is_read_whole() {
    let nsys = require_nsys!("2024.2");
    let Pushes {
        base,
        head,
        root,
        server,
        storage: _storage,
    } = pushes(&nsys);
    let analysis = std::fs::read(base.dir.join("analysis.json")).unwrap();
    let at_root = rerun_of(&analysis, 1.002, "base-305-root", &sha(305));
    let inside = rerun_of(&analysis, 1.001, "base-305", &sha(305));
    zip_into(
        &root,
        "job-1305.zip",
        &[
            ("analysis.json", at_root.as_slice()),
            ("runs/compare-base/analysis.json", inside.as_slice()),
        ],
    );
    let out = report_auto(&server, &head);
    assert_status(&out, 0);
    let c = read_json(&head.path("comparison.json"));
    let analyses: Vec<&str> = c["baseline"]["analyses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert!(analyses.contains(&"run 305/analysis.json"), "{analyses:?}");
    assert!(
        analyses.contains(&"run 305/runs/compare-base/analysis.json"),
        "{analyses:?}"
    );
    // Each named inside its artifact, never by the temporary folder it was unpacked into.
    assert!(
        analyses.iter().all(|a| a.starts_with("run ")),
        "{analyses:?}"
    );
}

/// Issue 37, item 8: an archive the API answers directly with 200 (a self-managed GitLab with
/// local artifact storage, no redirect) was read whole into memory and refused over 64 MiB,
/// though the cap of an artifact is 1 GiB. It is streamed into the file as a redirected one
/// is: a 70 MB archive is read, the token sent to the API only.
#[test]
fn a_large_archive_the_api_answers_directly_is_read() {
    let nsys = require_nsys!("2024.2");
    let base = analysed("compare-base", &nsys);
    let head = analysed("compare-head", &nsys);
    let root = head.dir.parent().unwrap().join("blobs/blob");
    std::fs::create_dir_all(&root).unwrap();
    let storage = FileServer::serve(root.parent().unwrap());
    let server = Server::start(TOKEN);
    history(&server, &base.dir, &root, &storage);
    // Pipeline 305's archive: its analysis beside 70 MB that do not compress (a trace).
    let analysis = std::fs::read(base.dir.join("analysis.json")).unwrap();
    let own = rerun_of(&analysis, 1.001, "base-305", &sha(305));
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let trace: Vec<u8> = (0..70_000_000 / 8)
        .flat_map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state.to_le_bytes()
        })
        .collect();
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let stored =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    for (name, bytes) in [
        ("runs/compare-base/analysis.json", own.as_slice()),
        ("runs/compare-base/trace.bin", trace.as_slice()),
    ] {
        zip.start_file(name, stored).unwrap();
        std::io::Write::write_all(&mut zip, bytes).unwrap();
    }
    let archive = zip.finish().unwrap().into_inner();
    drop(trace);
    assert!(archive.len() > 70_000_000, "{} bytes", archive.len());
    server
        .state()
        .downloads
        .insert(1305, Download::Body(archive));
    let mut cmd = gitlab_job(&server);
    cmd.args(["report", "--run-dir"]).arg(&head.dir).args([
        "--baseline",
        "auto",
        "--baseline-runs",
        "5",
    ]);
    let (out, peak_kib) = crate::common::output_and_peak_kib(cmd, 1 << 20);
    assert_status(&out, 0);
    let c = read_json(&head.path("comparison.json"));
    let notes = c["notes"].to_string();
    assert!(!notes.contains("pipeline 305"), "{notes}");
    let used: Vec<&str> = c["runs"][0]["history"]["used"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["run_id"].as_str().unwrap())
        .collect();
    assert!(used.contains(&"base-305"), "{used:?}: {}", stderr(&out));
    assert_private_token(&server);
    // The other three archives were redirected; pipeline 305's came from the API itself.
    assert_eq!(storage.requests_with_headers().len(), 3);
    eprintln!("a 70 MB archive answered directly: peak {peak_kib} KiB");
    assert!(
        peak_kib < 64 << 10,
        "peak resident memory {peak_kib} KiB: the archive was held"
    );
}

/// A GitLab job's report reads GitLab's words: its options (`--baseline auto`,
/// `--baseline-runs`, `--baseline-job`), pipelines and jobs, the merge request; never the
/// GitHub action's inputs or workflows. One base run: the noise is unknown, and the report
/// says how to build a history.
#[test]
fn a_gitlab_report_names_gitlabs_options_and_pipelines() {
    let nsys = require_nsys!("2024.2");
    let base = analysed("compare-base", &nsys);
    let head = analysed("compare-head", &nsys);
    let server = Server::start(TOKEN);
    let out = gitlab_job(&server)
        .args(["report", "--run-dir"])
        .arg(&head.dir)
        .arg("--baseline")
        .arg(base.path("analysis.json"))
        .output()
        .unwrap();
    assert_status(&out, 0);
    let report = std::fs::read_to_string(head.path("report.md")).unwrap();
    assert!(report.contains("`--baseline auto` then reads the newest pipelines (`--baseline-runs`, the job `--baseline-job`)"), "{report}");
    assert!(
        report.contains("in the artifacts of [the job](https://gitlab.example/g/gpu/-/jobs/901) when the job keeps it as an artifact"),
        "{report}"
    );
    for github in [
        "baseline: auto",
        "`baseline-runs`",
        "workflow",
        "nsys-gate-analysis",
    ] {
        assert!(!report.contains(github), "{github:?} in\n{report}");
    }
    insta::assert_snapshot!(
        "gitlab_report_words",
        crate::compare::redact(&report, &[&base, &head])
    );
}

/// Issue 37, item 1: a file's `provenance.runner` set its point's runner, so an extra
/// `zzz/analysis.json` in one push pipeline's artifact, naming the merge request's runner,
/// made that point the head's runner's level (`slower` became `within noise`). A base run's
/// runner is GitLab's word for its job (`runner.description`); a file naming another is
/// noted.
#[test]
fn a_base_runs_runner_is_the_forges() {
    let nsys = require_nsys!("2024.2");
    let base = analysed("compare-base", &nsys);
    let head = analysed("compare-head", &nsys);
    // The head ran on the merge request's runner.
    let mut head_analysis = read_json(&head.path("analysis.json"));
    head_analysis["provenance"]["runner"] = json!("gpu-runner-h100");
    std::fs::write(
        head.path("analysis.json"),
        serde_json::to_vec_pretty(&head_analysis).unwrap(),
    )
    .unwrap();
    let root = head.dir.parent().unwrap().join("blobs/blob");
    std::fs::create_dir_all(&root).unwrap();
    let storage = FileServer::serve(root.parent().unwrap());
    let server = Server::start(TOKEN);
    history(&server, &base.dir, &root, &storage);
    for jobs in server.state().jobs.values_mut() {
        for job in jobs.iter_mut() {
            job["runner"] = json!({"id": 12, "description": "gpu-runner-a100"});
        }
    }
    // Pipeline 305's artifact holds an extra analysis (as fast as the head) that names the
    // head's runner.
    let analysis = std::fs::read(base.dir.join("analysis.json")).unwrap();
    let own = rerun_of(&analysis, 1.001, "base-305", &sha(305));
    let head_bytes = std::fs::read(head.path("analysis.json")).unwrap();
    let planted = rerun_of(&head_bytes, 1.0, "planted", &sha(305));
    zip_into(
        &root,
        "job-1305.zip",
        &[
            ("runs/compare-base/analysis.json", own.as_slice()),
            ("zzz/analysis.json", planted.as_slice()),
        ],
    );
    let out = report_auto(&server, &head);
    assert_status(&out, 0);
    let c = read_json(&head.path("comparison.json"));
    let used = c["runs"][0]["history"]["used"].as_array().unwrap().clone();
    assert!(!used.is_empty(), "{}", stderr(&out));
    for u in &used {
        let runner = u["runner"].as_str().unwrap_or_default();
        assert!(runner.starts_with("gpu-runner-a100"), "{u}");
    }
    let notes = c["notes"].to_string();
    assert!(
        notes.contains("1 analysis.json in the artifact of pipeline 305")
            && notes.contains("named another runner")
            && notes.contains("the forge's runner `gpu-runner-a100` is used"),
        "{notes}"
    );
    assert_eq!(
        c["runs"][0]["measures"][0]["verdict"], "slower",
        "{}",
        c["runs"][0]["measures"][0]
    );
}

/// An artifact with no analysis.json is a note naming its pipeline and "the artifact", never
/// the temporary folder nsys-gate unpacked it into.
#[test]
fn an_artifact_without_an_analysis_is_named_not_its_temporary_folder() {
    let nsys = require_nsys!("2024.2");
    let Pushes {
        head,
        root,
        server,
        storage: _storage,
        ..
    } = pushes(&nsys);
    zip_into(
        &root,
        "job-1305.zip",
        &[("runs/readme.txt", b"no analysis here".as_slice())],
    );
    let out = report_auto(&server, &head);
    assert_status(&out, 0);
    let c = read_json(&head.path("comparison.json"));
    let notes: Vec<String> = c["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap().to_owned())
        .collect();
    let note = notes
        .iter()
        .find(|n| n.contains("pipeline 305"))
        .unwrap_or_else(|| panic!("no note of pipeline 305: {notes:?}"));
    assert!(
        note.contains("reading its artifact: no analysis.json under the artifact"),
        "{note}"
    );
    // The head's own paths are local (the run directory given); the baseline's are not.
    let tmp = std::env::temp_dir().display().to_string();
    let baseline_lines: Vec<&str> = stderr_lines(&out)
        .into_iter()
        .filter(|l| l.contains("baseline"))
        .collect();
    assert!(!baseline_lines.is_empty());
    for text in notes.iter().map(String::as_str).chain(baseline_lines) {
        assert!(!text.contains(&format!("{tmp}/")), "{text}");
    }
}

fn stderr_lines(out: &Output) -> Vec<&str> {
    std::str::from_utf8(&out.stderr).unwrap().lines().collect()
}

/// `report --baseline auto --baseline-runs 5` of `head` in a GitLab merge request job.
fn report_auto(server: &Server, head: &crate::common::Run) -> Output {
    gitlab_job(server)
        .args(["report", "--run-dir"])
        .arg(&head.dir)
        .args(["--baseline", "auto", "--baseline-runs", "5"])
        .output()
        .unwrap()
}
