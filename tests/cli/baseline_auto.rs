//! `--baseline auto` against the local GitHub-like server: workflow runs, artifacts, and a zip
//! download that redirects to a second loopback server (the storage host), which must never
//! receive the token. Whatever is missing is a note; the exit status never changes.

use std::io::Write;
use std::path::Path;
use std::process::Output;

use serde_json::{json, Value};
use zip::write::SimpleFileOptions;

use crate::common::{analyze, assert_status, bin, fixture, read_json, stderr, Run};
use crate::file_server::FileServer;
use crate::github_server::{Download, Server};
use crate::require_nsys;

const TOKEN: &str = "ghs_baseline_token_never_sent_to_storage";
const BASE_SHA: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

fn analysed(name: &str, nsys: &Path) -> Run {
    let run = fixture(name);
    assert_status(&analyze(&run.dir, nsys, &[]), 0);
    run
}

/// A zip holding `entries` (name, bytes), written to `dir/NAME`.
fn zip_into(dir: &Path, name: &str, entries: &[(&str, Vec<u8>)]) {
    std::fs::create_dir_all(dir).unwrap();
    let file = std::fs::File::create(dir.join(name)).unwrap();
    let mut w = zip::ZipWriter::new(file);
    for (entry, bytes) in entries {
        w.start_file(*entry, SimpleFileOptions::default()).unwrap();
        w.write_all(bytes).unwrap();
    }
    w.finish().unwrap();
}

fn pr_event(dir: &Path) -> std::path::PathBuf {
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

fn run_json(id: u64, sha: &str, event: &str) -> (String, Value) {
    (
        "profile.yml".to_owned(),
        json!({"id": id, "head_sha": sha, "head_branch": "main", "event": event,
               "status": "completed", "conclusion": "success",
               "html_url": format!("https://github.example/octo/gpu/actions/runs/{id}"),
               "head_repository": {"full_name": "octo/gpu"}}),
    )
}

/// `report --baseline auto` for the head run, as a pull request's job would run it.
fn report_auto(head: &Run, api: &str, extra: &[&str]) -> Output {
    let event = pr_event(head.dir.parent().unwrap());
    bin()
        .args(["report", "--run-dir"])
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
        .env_remove("GITHUB_ACTIONS")
        .output()
        .unwrap()
}

/// The server set up with one run at the base commit whose artifact redirects to `storage`.
fn serve(storage: &FileServer) -> Server {
    let server = Server::github();
    {
        let mut s = server.state();
        s.workflow_runs.push(run_json(502, "cccc", "push"));
        s.workflow_runs.push(run_json(501, BASE_SHA, "push"));
        s.artifacts.push((501, json!({"id": 601, "name": "nsys-gate-analysis", "expired": false, "size_in_bytes": 1000})));
        s.downloads.insert(
            601,
            Download::Redirect(format!("{}/blob/artifact.zip?sig=secret", storage.url())),
        );
    }
    server
}

fn notes(head: &Run) -> String {
    let c = read_json(&head.path("comparison.json"));
    c["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap().to_owned())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn auto_finds_the_base_commits_run_and_downloads_without_the_token() {
    let nsys = require_nsys!("2024.2");
    let base = analysed("compare-base", &nsys);
    let head = analysed("compare-head", &nsys);
    let blobs = head.dir.parent().unwrap().join("blobs/blob");
    let analysis = std::fs::read(base.path("analysis.json")).unwrap();
    zip_into(
        &blobs,
        "artifact.zip",
        &[
            ("compare-base/analysis.json", analysis),
            ("compare-base/report.md", b"# not read".to_vec()),
        ],
    );
    let storage = FileServer::serve(blobs.parent().unwrap());
    let server = serve(&storage);
    let out = report_auto(&head, &server.api_url(), &[]);
    assert_status(&out, 0);
    let c = read_json(&head.path("comparison.json"));
    assert_eq!(c["baseline"]["kind"], "auto", "{}", stderr(&out));
    assert_eq!(c["baseline"]["workflow_run"]["id"], 501);
    assert_eq!(c["baseline"]["workflow_run"]["chosen"], "base_commit");
    assert_eq!(c["baseline"]["artifact"]["name"], "nsys-gate-analysis");
    assert_eq!(
        c["baseline"]["analyses"],
        json!(["compare-base/analysis.json"])
    );
    assert_eq!(c["runs"][0]["measures"][0]["verdict"], "slower");
    // The API got the token; the storage host did not, and got the signed URL once.
    let api = server.requests();
    assert!(api
        .iter()
        .any(|r| r.path.contains("/actions/artifacts/601/zip")));
    for r in &api {
        assert_eq!(
            r.header_values("authorization"),
            [format!("Bearer {TOKEN}")],
            "{}",
            r.line()
        );
    }
    let stored = storage.requests_with_headers();
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0].0, "/blob/artifact.zip?sig=secret");
    assert!(
        stored[0]
            .1
            .iter()
            .all(|(n, v)| n != "authorization" && !v.contains(TOKEN)),
        "{:?}",
        stored[0].1
    );
    let report = std::fs::read_to_string(head.path("report.md")).unwrap();
    assert!(
        report.contains("artifact `nsys-gate-analysis` of workflow run 501 on `main`"),
        "{report}"
    );
    assert!(!stderr(&out).contains(TOKEN));
}

#[test]
fn without_a_run_at_the_base_commit_the_newest_is_taken() {
    let nsys = require_nsys!("2024.2");
    let base = analysed("compare-base", &nsys);
    let head = fixture("compare-head");
    assert_status(&analyze(&head.dir, &nsys, &[]), 0);
    let blobs = head.dir.parent().unwrap().join("blobs/blob");
    zip_into(
        &blobs,
        "artifact.zip",
        &[(
            "analysis.json",
            std::fs::read(base.path("analysis.json")).unwrap(),
        )],
    );
    let storage = FileServer::serve(blobs.parent().unwrap());
    let server = Server::github();
    {
        let mut s = server.state();
        // A pull request's run on a fork branch named main is never a baseline.
        s.workflow_runs.push(run_json(503, "dddd", "pull_request"));
        s.workflow_runs.push(run_json(502, "cccc", "push"));
        s.artifacts.push((
            502,
            json!({"id": 602, "name": "nsys-gate-analysis", "expired": false}),
        ));
        s.downloads.insert(
            602,
            Download::Redirect(format!("{}/blob/artifact.zip", storage.url())),
        );
    }
    let out = report_auto(&head, &server.api_url(), &[]);
    assert_status(&out, 0);
    let c = read_json(&head.path("comparison.json"));
    assert_eq!(c["baseline"]["workflow_run"]["id"], 502, "{}", stderr(&out));
    assert_eq!(c["baseline"]["workflow_run"]["chosen"], "newest");
    assert_eq!(c["runs"].as_array().unwrap().len(), 1);
}

#[test]
fn an_expired_artifact_is_a_note() {
    let nsys = require_nsys!("2024.2");
    let head = analysed("compare-head", &nsys);
    let storage = FileServer::serve(head.dir.parent().unwrap());
    let server = serve(&storage);
    server
        .state()
        .downloads
        .insert(601, Download::Status(410, "Artifact has expired".into()));
    let out = report_auto(&head, &server.api_url(), &[]);
    assert_status(&out, 0);
    let notes = notes(&head);
    assert!(notes.contains("HTTP 410"), "{notes}");
    assert!(notes.contains("the artifact has expired"), "{notes}");
    assert!(storage.requests().is_empty());
    let report = std::fs::read_to_string(head.path("report.md")).unwrap();
    assert!(
        report.contains("ℹ️ no baseline: downloading the artifact"),
        "{report}"
    );
}

#[test]
fn no_permission_is_a_note_naming_actions_read() {
    let nsys = require_nsys!("2024.2");
    let head = analysed("compare-head", &nsys);
    let storage = FileServer::serve(head.dir.parent().unwrap());
    let server = serve(&storage);
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
    let nsys = require_nsys!("2024.2");
    let base = analysed("compare-base", &nsys);
    let head = analysed("compare-head", &nsys);
    let blobs = head.dir.parent().unwrap().join("blobs/blob");
    let analysis = std::fs::read(base.path("analysis.json")).unwrap();
    zip_into(
        &blobs,
        "artifact.zip",
        &[
            ("ok/analysis.json", analysis.clone()),
            (
                "../../../../../../../../tmp/nsys-gate-escaped/analysis.json",
                analysis,
            ),
        ],
    );
    let storage = FileServer::serve(blobs.parent().unwrap());
    let server = serve(&storage);
    let out = report_auto(&head, &server.api_url(), &[]);
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
    assert!(notes(&head).contains("no successful run of workflow `profile.yml` on branch `main`"));

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
fn the_fork_safe_half_compares_with_the_profiling_workflows_base_artifact() {
    let nsys = require_nsys!("2024.2");
    let base = analysed("compare-base", &nsys);
    let head = analysed("compare-head", &nsys);
    let tmp = head.dir.parent().unwrap();
    // The fork's artifact, as the privileged job downloads it: analysis.json files only.
    let artifact = tmp.join("fork-artifact/compare-head");
    std::fs::create_dir_all(&artifact).unwrap();
    std::fs::copy(head.path("analysis.json"), artifact.join("analysis.json")).unwrap();
    let blobs = tmp.join("blobs/blob");
    zip_into(
        &blobs,
        "artifact.zip",
        &[(
            "compare-base/analysis.json",
            std::fs::read(base.path("analysis.json")).unwrap(),
        )],
    );
    let storage = FileServer::serve(blobs.parent().unwrap());
    let server = Server::github();
    {
        let mut s = server.state();
        // The fork's pull request: found by the head commit (the event lists none); the test
        // server's pulls have base `main` at `0000`.
        s.pulls.push((7, "feedbeef".into()));
        let (_, run) = run_json(501, "0000", "push");
        s.workflow_runs.push(("profile-untrusted.yml".into(), run));
        s.artifacts.push((
            501,
            json!({"id": 601, "name": "nsys-gate-analysis", "expired": false}),
        ));
        s.downloads.insert(
            601,
            Download::Redirect(format!("{}/blob/artifact.zip", storage.url())),
        );
    }
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
    assert!(body.contains("### Compared with the baseline"), "{body}");
    assert!(
        body.contains("artifact `nsys-gate-analysis` of workflow run 501"),
        "{body}"
    );
    assert!(body.contains("slower than base"), "{body}");
    assert!(storage.requests_with_headers()[0]
        .1
        .iter()
        .all(|(n, _)| n != "authorization"));
}
