//! Issue 37, item 1, on GitHub: a base run's runner is GitHub's word for the run's jobs
//! (`GET /repos/O/R/actions/runs/ID/jobs`, each job's `runner_name`), never its files'
//! `provenance.runner`. The artifact does not name the job that uploaded it: when the jobs
//! that got a runner all ran on one, that is the run's; when they ran on several, a file's
//! claim is taken only if it is one of them, else its runner is unknown. The history and the
//! head are the harness's `compare-base` and `compare-head` traces, served by the local
//! GitHub-like server ([`crate::baseline_auto`]'s set-up).

use serde_json::{json, Value};

use crate::baseline_auto::{history, notes, report_auto, setup, sha, zip_into};
use crate::common::{assert_status, read_json, rerun_of, stderr, Run};
use crate::github_server::job_json;

/// The head names `runner` as its own (`provenance.runner`, as `RUNNER_NAME` gives it in
/// GitHub Actions).
fn head_on(head: &Run, runner: &str) {
    let mut analysis = read_json(&head.path("analysis.json"));
    analysis["provenance"]["runner"] = json!(runner);
    std::fs::write(
        head.path("analysis.json"),
        serde_json::to_vec_pretty(&analysis).unwrap(),
    )
    .unwrap();
}

/// `bytes` (an analysis.json) naming `runner` as its own.
fn claiming(bytes: &[u8], runner: &str) -> Vec<u8> {
    let mut analysis: Value = serde_json::from_slice(bytes).unwrap();
    analysis["provenance"]["runner"] = json!(runner);
    serde_json::to_vec_pretty(&analysis).unwrap()
}

/// The used base points of the head's comparison: (run id, runner).
fn used_runners(head: &Run) -> Vec<(String, Option<String>)> {
    let c = read_json(&head.path("comparison.json"));
    c["runs"][0]["history"]["used"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| {
            (
                u["run_id"].as_str().unwrap().to_owned(),
                u["runner"].as_str().map(str::to_owned),
            )
        })
        .collect()
}

/// The mirror of `gitlab::a_base_runs_runner_is_the_forges`: run 505's artifact holds an
/// extra `zzz/analysis.json`, as fast as the head, naming the head's runner. Before, the
/// point took the head's runner from it (the runner rule of issue 33 kept that one point from
/// setting the head's level); now every point's runner is the jobs', the claim is a note, and
/// the head stays `slower`.
#[test]
fn a_planted_file_naming_the_heads_runner_cannot_change_the_verdict() {
    let Some((base, head, root, storage)) = setup() else {
        return;
    };
    head_on(&head, "gpu-runner-h100");
    let server = history(&base, &root, &storage);
    server.state().default_runner = Some("gpu-runner-a100".into());
    let analysis = std::fs::read(base.path("analysis.json")).unwrap();
    let own = rerun_of(&analysis, 0.994, "base-5", &sha(5));
    let head_bytes = std::fs::read(head.path("analysis.json")).unwrap();
    let planted = rerun_of(&head_bytes, 1.0, "planted", &sha(5));
    zip_into(
        &root,
        "run-5.zip",
        &[
            ("compare-base/analysis.json", own.as_slice()),
            ("zzz/analysis.json", planted.as_slice()),
        ],
    );
    let out = report_auto(&head, &server.api_url(), &["--baseline-runs", "5"]);
    assert_status(&out, 0);
    let used = used_runners(&head);
    assert!(!used.is_empty(), "{}", stderr(&out));
    for (run, runner) in &used {
        assert!(
            runner
                .as_deref()
                .is_some_and(|r| r.starts_with("gpu-runner-a100")),
            "{run}: {runner:?}"
        );
    }
    let notes = notes(&head);
    assert!(
        notes.contains("1 analysis.json in the artifact of workflow run 505")
            && notes.contains("named another runner")
            && notes.contains("the forge's runner `gpu-runner-a100` is used"),
        "{notes}"
    );
    let c = read_json(&head.path("comparison.json"));
    let host = &c["runs"][0]["measures"][0];
    assert_eq!(host["verdict"], "slower", "{host}");
    // One jobs request per run read, each for all the run's jobs at 100 a page.
    let requests: Vec<String> = server.requests().iter().map(|r| r.path.clone()).collect();
    for id in 501..=505 {
        let jobs = format!("/repos/octo/gpu/actions/runs/{id}/jobs?filter=all&per_page=100");
        assert_eq!(
            requests.iter().filter(|p| **p == jobs).count(),
            1,
            "{id}: {requests:?}"
        );
    }
    assert_eq!(
        requests.iter().filter(|p| p.contains("/jobs")).count(),
        5,
        "{requests:?}"
    );
}

/// A run whose jobs ran on several runners (a matrix, a re-run elsewhere): a file's claim is
/// its runner only when one of those jobs ran on it; a claim of another runner leaves the
/// point's runner unknown, and says so. The jobs are read through `link` pages until
/// `total_count`.
#[test]
fn among_several_jobs_runners_a_file_chooses_only_one_of_them() {
    let Some((base, head, root, storage)) = setup() else {
        return;
    };
    let server = history(&base, &root, &storage);
    let analysis = std::fs::read(base.path("analysis.json")).unwrap();
    {
        let mut s = server.state();
        s.default_runner = Some("gpu-runner-a100".into());
        // Run 504: 150 jobs on two pages (50 a page here), the second runner on the last
        // page only, and skipped jobs without a runner.
        let mut jobs: Vec<Value> = (0..148)
            .map(|i| job_json(5040 + i, &format!("leg {i}"), Some("gpu-runner-a100")))
            .collect();
        jobs.insert(3, job_json(5039, "skipped", None));
        jobs.push(job_json(5300, "leg l4", Some("gpu-runner-l4")));
        s.jobs.insert(504, jobs);
        // Run 503: two runners, its file names a third.
        s.jobs.insert(
            503,
            vec![
                job_json(5031, "leg a", Some("gpu-runner-a100")),
                job_json(5032, "leg b", Some("gpu-runner-l4")),
            ],
        );
        s.list_page_cap = 50;
    }
    let file = |k: usize, runner: &str| {
        claiming(
            &rerun_of(&analysis, 1.0, &format!("base-{k}"), &sha(k)),
            runner,
        )
    };
    zip_into(
        &root,
        "run-4.zip",
        &[(
            "compare-base/analysis.json",
            file(4, "gpu-runner-l4").as_slice(),
        )],
    );
    zip_into(
        &root,
        "run-3.zip",
        &[(
            "compare-base/analysis.json",
            file(3, "gpu-runner-h100").as_slice(),
        )],
    );
    let out = report_auto(&head, &server.api_url(), &["--baseline-runs", "5"]);
    assert_status(&out, 0);
    let used = used_runners(&head);
    let runner_of = |run: &str| {
        used.iter()
            .find(|(r, _)| r == run)
            .unwrap_or_else(|| panic!("{run} not used: {used:?}"))
            .1
            .clone()
    };
    assert!(
        runner_of("base-4").is_some_and(|r| r.starts_with("gpu-runner-l4")),
        "{used:?}"
    );
    assert!(
        runner_of("base-3").is_none_or(|r| r.starts_with("GPU-")),
        "{used:?}"
    );
    assert!(
        runner_of("base-5").is_some_and(|r| r.starts_with("gpu-runner-a100")),
        "{used:?}"
    );
    let notes = notes(&head);
    assert!(
        notes.contains("1 analysis.json in the artifact of workflow run 503")
            && notes.contains("named a runner that none of the run's jobs ran on (the forge names `gpu-runner-a100`, `gpu-runner-l4`): the run's runner is left unknown"),
        "{notes}"
    );
    assert!(!notes.contains("workflow run 504 ("), "{notes}");
    // Run 504's jobs: three pages of 50, followed by `link`.
    let requests: Vec<String> = server.requests().iter().map(|r| r.path.clone()).collect();
    assert_eq!(
        requests
            .iter()
            .filter(|p| p.contains("/actions/runs/504/jobs"))
            .count(),
        3,
        "{requests:?}"
    );
}

/// A run whose jobs cannot be listed is left out (its files' runner is never taken instead),
/// and the note says why; the other runs are the history.
#[test]
fn a_run_whose_jobs_cannot_be_listed_is_left_out() {
    let Some((base, head, root, storage)) = setup() else {
        return;
    };
    let server = history(&base, &root, &storage);
    server.fault(crate::github_server::Fault::new(
        "GET",
        "/actions/runs/504/jobs",
        404,
        json!({"message": "Not Found"}).to_string(),
    ));
    let out = report_auto(&head, &server.api_url(), &["--baseline-runs", "4"]);
    assert_status(&out, 0);
    let used = used_runners(&head);
    let ids: Vec<&str> = used.iter().map(|(r, _)| r.as_str()).collect();
    assert_eq!(ids, ["base-2", "base-3", "base-5"], "{}", stderr(&out));
    let notes = notes(&head);
    assert!(
        notes.contains("workflow run 504 (")
            && notes.contains("listing its jobs (the runners it ran on)")
            && notes.contains("left out of the history"),
        "{notes}"
    );
}
