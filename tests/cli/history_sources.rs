//! Where `--baseline auto`'s history comes from, under attack (issue "trust boundary, round
//! 4"): a flood of newer artifacts of the same name, a tag named like the base branch, server
//! text and an API URL holding secrets. No nsys: the analyses are made by `analyze
//! --reuse-stats` from CSVs, as in [`crate::baseline_faults`].

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::baseline_auto::{notes, report_auto_cmd, TOKEN};
use crate::baseline_faults::{head, report_in, run_zip, server_with};
use crate::common::{assert_status, read_json, stderr};
use crate::file_server::FileServer;
use crate::github_server::{Download, Server};

/// The ids of the workflow runs whose artifacts comparison.json lists, newest first.
fn workflow_runs(c: &Value) -> Vec<u64> {
    c["baseline"]["workflow_runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_u64().unwrap())
        .collect()
}

/// The base runs the history of the first compared key used.
fn used(c: &Value) -> usize {
    c["runs"][0]["history"]["used"]
        .as_array()
        .map_or(0, Vec::len)
}

/// Item 1: the base runs' artifacts were found in one repository-wide list (at most 10
/// pages, newest first). A fork's `pull_request` runs execute in the base repository and can
/// upload artifacts of that name: with 1,000 newer ones, none of the 10 base runs was found,
/// for every pull request, until they expire. A run whose artifact is not in the first pages
/// is asked for its own (`GET …/actions/runs/ID/artifacts?name=`): all 10 are found, within
/// the deadline.
#[test]
fn a_flood_of_newer_fork_artifacts_cannot_hide_the_base_runs() {
    let head = head();
    let storage = FileServer::serve(&run_zip(&head));
    let location = format!("{}/run.zip", storage.url());
    let ids: Vec<u64> = (501..=510).rev().collect();
    let server = server_with(&ids, |_| Download::Redirect(location.clone()));
    {
        let mut s = server.state();
        // Newer than every base run's artifact: listed first.
        let flood: Vec<(u64, Value)> = (0..1000u64)
            .map(|i| {
                (
                    90_000 + i,
                    json!({"id": 70_000 + i, "name": "nsys-gate-analysis", "expired": false, "size_in_bytes": 1000}),
                )
            })
            .collect();
        s.artifacts.splice(0..0, flood);
    }
    let tmp = assert_fs::TempDir::new().unwrap();
    let started = Instant::now();
    let out = report_in(
        &head,
        &server,
        tmp.path(),
        &["--baseline-runs", "10", "--baseline-timeout", "30"],
    )
    .output()
    .unwrap();
    let took = started.elapsed();
    eprintln!("1,000 newer fork artifacts, 10 base runs: {took:?}");
    assert_status(&out, 0);
    assert!(took < Duration::from_secs(30), "{took:?}");
    let c = read_json(&head.path("comparison.json"));
    assert_eq!(workflow_runs(&c), ids, "{}", notes(&head));
    assert!(
        c["baseline"]["workflow_runs"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["artifact_id"]
                .as_u64()
                .is_some_and(|a| (601..=610).contains(&a))),
        "{c}"
    );
    assert_eq!(used(&c), 10, "{}\n{}", notes(&head), stderr(&out));
    assert!(
        !notes(&head).contains("has no artifact"),
        "{}",
        notes(&head)
    );
    // No fork artifact was downloaded; each run was asked for its own list once.
    let requests: Vec<String> = server.requests().iter().map(|r| r.path.clone()).collect();
    for id in &ids {
        let own = format!("/repos/octo/gpu/actions/runs/{id}/artifacts?name=nsys-gate-analysis");
        assert_eq!(
            requests.iter().filter(|p| p.starts_with(&own)).count(),
            1,
            "{id}: {requests:?}"
        );
    }
    assert!(
        !requests.iter().any(|p| p.contains("/artifacts/7")),
        "{requests:?}"
    );
    assert_eq!(storage.requests().len(), 10);
}

/// Item 2: a push of a tag called `main` gives runs with `event: push` and `head_branch:
/// main`, which were taken as the base branch's history by anyone who may push a tag but not
/// to a protected `main`. Each run's commit must be among the newest commits of the branch
/// itself (`GET …/commits?sha=refs/heads/main`): the tag's run is left out and named, and the
/// choice is made again without it. Where the API cannot list the commits, the runs are kept
/// and a note says once that they could not be checked.
#[test]
fn a_run_of_a_tag_named_like_the_base_branch_is_left_out_and_named() {
    let head = head();
    let storage = FileServer::serve(&run_zip(&head));
    let location = format!("{}/run.zip", storage.url());
    // 505 at the base commit; 504 the tag's run (its commit is not on `main`).
    let server = server_with(&[505, 504, 503, 502], |_| {
        Download::Redirect(location.clone())
    });
    let tag_sha = "7a97a97a97a97a97a97a97a97a97a97a97a97a9".to_owned();
    {
        let mut s = server.state();
        for (_, run) in s.workflow_runs.iter_mut() {
            if run["id"] == 504 {
                run["head_sha"] = json!(tag_sha);
            }
        }
        let on_main: Vec<String> = s
            .workflow_runs
            .iter()
            .map(|(_, r)| r["head_sha"].as_str().unwrap().to_owned())
            .filter(|sha| *sha != tag_sha)
            .collect();
        s.branch_commits.insert("main".into(), on_main);
    }
    let tmp = assert_fs::TempDir::new().unwrap();
    let out = report_in(&head, &server, tmp.path(), &["--baseline-runs", "3"])
        .output()
        .unwrap();
    assert_status(&out, 0);
    let c = read_json(&head.path("comparison.json"));
    assert_eq!(workflow_runs(&c), [505, 503, 502], "{}", notes(&head));
    let notes_now = notes(&head);
    assert!(
        notes_now.contains("left out of the history: workflow run 504 (7a97a97) ran on `push` with `head_branch: main`, but its commit is not among the newest commits of branch `main`"),
        "{notes_now}"
    );
    // The branch itself, never a ref a tag could answer for.
    let requests: Vec<String> = server.requests().iter().map(|r| r.path.clone()).collect();
    assert!(
        requests
            .iter()
            .any(|p| p.starts_with("/repos/octo/gpu/commits?sha=refs/heads/main")),
        "{requests:?}"
    );
    assert!(
        !requests.iter().any(|p| p.contains("/artifacts/604/zip")),
        "{requests:?}"
    );

    // An API that cannot list commits: the runs are kept, and said to be unchecked once.
    server.state().no_commits_api = true;
    let out = report_in(&head, &server, tmp.path(), &["--baseline-runs", "3"])
        .output()
        .unwrap();
    assert_status(&out, 0);
    let c = read_json(&head.path("comparison.json"));
    assert_eq!(workflow_runs(&c), [505, 504, 503], "{}", notes(&head));
    let notes_now = notes(&head);
    assert_eq!(
        notes_now
            .matches("could not be checked against branch `main`")
            .count(),
        1,
        "{notes_now}"
    );
    assert!(
        notes_now.contains("`permissions: contents: read`"),
        "{notes_now}"
    );
}

/// Item 5: a run's `html_url` and `created_at` echoing the token were stored verbatim in
/// comparison.json. All server text passes the redaction before it is stored: not in
/// comparison.json, report.md or standard error.
#[test]
fn a_runs_url_and_time_echoing_the_token_are_stored_redacted() {
    let head = head();
    let storage = FileServer::serve(&run_zip(&head));
    let location = format!("{}/run.zip", storage.url());
    let server = server_with(&[502, 501], |_| Download::Redirect(location.clone()));
    for (_, run) in server.state().workflow_runs.iter_mut() {
        run["html_url"] = json!(format!(
            "https://github.example/octo/gpu/actions/runs/1?echo=token {TOKEN}"
        ));
        run["created_at"] = json!(format!("2026-11-01T12:00:00Z {TOKEN}"));
    }
    let tmp = assert_fs::TempDir::new().unwrap();
    let out = report_in(&head, &server, tmp.path(), &[]).output().unwrap();
    assert_status(&out, 0);
    let comparison = std::fs::read_to_string(head.path("comparison.json")).unwrap();
    let report = std::fs::read_to_string(head.path("report.md")).unwrap();
    assert!(comparison.contains("?echo=token ***"), "{comparison}");
    for (what, text) in [
        ("comparison.json", comparison.as_str()),
        ("report.md", report.as_str()),
        ("stderr", stderr(&out).as_str()),
    ] {
        assert!(!text.contains(&TOKEN[..12]), "{what}: {text}");
    }
}

/// Item 5: `GITHUB_API_URL=http://user:password@host/…` printed the password in the Gitea
/// note, on standard error and in comparison.json. A URL's userinfo is never shown.
#[test]
fn an_api_urls_userinfo_is_never_shown() {
    let head = head();
    let tmp = assert_fs::TempDir::new().unwrap();
    const PASSWORD: &str = "pa55w0rd-never-shown";
    let gitea = Server::gitea();
    let github = Server::github();
    for url in [
        gitea.api_url(),
        github.api_url(),
        // Not a URL the client can use at all: its error names it, without the password.
        "http://[::1".to_owned(),
    ] {
        let with_userinfo = url.replacen("http://", &format!("http://octo:{PASSWORD}@"), 1);
        let out = report_auto_cmd(&head, &with_userinfo, &[])
            .env("TMPDIR", tmp.path())
            .output()
            .unwrap();
        assert_status(&out, 0);
        let comparison = std::fs::read_to_string(head.path("comparison.json")).unwrap();
        let report = std::fs::read_to_string(head.path("report.md")).unwrap();
        for (what, text) in [
            ("comparison.json", comparison.as_str()),
            ("report.md", report.as_str()),
            ("stderr", stderr(&out).as_str()),
        ] {
            assert!(!text.contains(PASSWORD), "{url}: {what}: {text}");
        }
        if url.ends_with("/api/v1") {
            assert!(
                notes(&head).contains("http://***@127.0.0.1:"),
                "{}",
                notes(&head)
            );
        }
    }
}
