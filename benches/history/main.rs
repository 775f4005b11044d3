//! Benchmark of `--baseline auto`'s history fetch: 10 GitLab push pipelines from a loopback
//! fake of the API that answers every request after 300 ms (the pipelines' list, each
//! pipeline's jobs, each artifact and its redirected download), fetched one after another
//! (`--baseline-concurrency 1`) and 4 at a time (the default).
//!
//!     cargo bench --bench history                  # 10 runs, 300 ms a request
//!     cargo bench --bench history -- --runs 20 --delay-ms 100
//!
//! The analysis in the artifacts is made here, without nsys, from generated reports (the
//! `analyze` benchmark's generator). Under `cargo test --all-targets` this runs once with
//! 3 runs and no delay, as a smoke test.

#![allow(clippy::too_many_lines)]

#[path = "../analyze/gen.rs"]
#[allow(dead_code)]
mod gen;
#[path = "../../tests/cli/gitlab_server.rs"]
#[allow(dead_code)]
mod gitlab_server;
#[path = "../../tests/cli/http_fake.rs"]
#[allow(dead_code)]
mod http_fake;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use gitlab_server::{Download, Server};
use nsys_gate::gate::GateConfig;
use nsys_gate::progress::Progress;
use nsys_gate::{AnalyzeOptions, NsysChoice, StatsPlan};
use serde_json::json;

const TOKEN: &str = "glpat-bench-token-0123456789";

/// A run directory with an analysis.json made from generated reports.
fn analysed(root: &Path) -> PathBuf {
    let dir = root.join("clean");
    std::fs::create_dir_all(dir.join("stats")).unwrap();
    let (_, iterations) = gen::generate(&dir.join("stats"), 2_000).unwrap();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = std::fs::read_to_string(repo.join("tests/fixtures/clean/manifest.yaml"))
        .unwrap()
        .replace(
            "  iterations: 5\n",
            &format!("  iterations: {iterations}\n"),
        );
    std::fs::write(dir.join("manifest.yaml"), manifest).unwrap();
    std::fs::write(dir.join("trace.nsys-rep"), b"").unwrap();
    std::fs::write(
        dir.join("stats/nsys-gate-stats.json"),
        r#"{"nsys_version": "2024.2.3.38-242334140272v0", "legacy_reports": false,
            "reports": {"nvtx_pushpop_trace": {"status": "written"},
                        "nvtx_gpu_proj_trace": {"status": "written"}}}"#,
    )
    .unwrap();
    let options = AnalyzeOptions {
        run_dir: dir.clone(),
        nsys: NsysChoice::Search,
        nsys_timeout: Duration::from_secs(1),
        stats_plan: StatsPlan { processes: 1 },
        output: None,
        reuse_stats: true,
        keep_export: false,
        gate: GateConfig::default(),
        label: None,
        ci_run: None,
        runner: None,
    };
    nsys_gate::analyze(&options, &mut Progress::quiet()).unwrap();
    dir
}

/// The zip of one artifact holding `analysis`.
fn zipped(analysis: &[u8]) -> Vec<u8> {
    let mut out = std::io::Cursor::new(Vec::new());
    let mut w = zip::ZipWriter::new(&mut out);
    w.start_file(
        "runs/clean/analysis.json",
        zip::write::SimpleFileOptions::default(),
    )
    .unwrap();
    w.write_all(analysis).unwrap();
    w.finish().unwrap();
    out.into_inner()
}

/// The fake with `runs` push pipelines of `main`, each with a `profile` job whose artifacts
/// redirect to a blob on the same server.
fn server(runs: u64, delay: Duration, analysis: &[u8]) -> Server {
    let server = Server::start(TOKEN);
    let blob = zipped(analysis);
    let mut s = server.state();
    for k in (1..=runs).rev() {
        s.pipelines
            .push(json!({"id": k, "sha": format!("{k:040x}"), "ref": "main",
            "status": "success", "source": "push", "tag": false}));
        s.jobs.insert(
            k,
            vec![
                json!({"id": 1000 + k, "name": "profile", "status": "success",
                "artifacts": [{"file_type": "archive", "size": blob.len()}]}),
            ],
        );
        s.blobs.insert(format!("job-{k}.zip"), blob.clone());
        s.downloads.insert(
            1000 + k,
            Download::Redirect(format!(
                "http://127.0.0.1:{}/blob/job-{k}.zip?sig=x",
                server.port
            )),
        );
    }
    s.delay_each = delay;
    drop(s);
    server
}

/// What one fetch took.
struct Fetch {
    elapsed: Duration,
    /// Requests the server answered.
    requests: usize,
    /// The most under way at once.
    most: usize,
}

/// `report --baseline auto` as a GitLab merge request job runs it.
fn fetch(head: &Path, server: &Server, runs: u64, concurrency: u16) -> Fetch {
    {
        let mut s = server.state();
        s.most_in_flight = 0;
        s.requests.clear();
    }
    let started = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_nsys-gate"))
        .args(["report", "--run-dir"])
        .arg(head)
        .args([
            "--output",
            "-",
            "--baseline",
            "auto",
            "--baseline-timeout",
            "600",
        ])
        .arg(format!("--baseline-runs={runs}"))
        .arg(format!("--baseline-concurrency={concurrency}"))
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("GITLAB_CI", "true")
        .env("CI_API_V4_URL", server.api_url())
        .env("CI_PROJECT_ID", "42")
        .env("CI_MERGE_REQUEST_IID", "7")
        .env("CI_PIPELINE_SOURCE", "merge_request_event")
        .env("CI_MERGE_REQUEST_TARGET_BRANCH_NAME", "main")
        .env("CI_JOB_NAME", "profile")
        .env("GITLAB_TOKEN", TOKEN)
        .output()
        .unwrap();
    let elapsed = started.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!("with {runs} base run(s)")),
        "not every run was read:\n{stderr}"
    );
    let s = server.state();
    let most = s.most_in_flight;
    assert!(
        most <= usize::from(concurrency),
        "{most} requests at once with --baseline-concurrency={concurrency}"
    );
    Fetch {
        elapsed,
        requests: s.requests.len(),
        most,
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let value = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .and_then(|v| v.parse::<u64>().ok())
    };
    // `cargo test --all-targets` runs benches with `--test`... or without `--bench`.
    let smoke = !args.iter().any(|a| a == "--bench");
    let runs = value("--runs").unwrap_or(if smoke { 3 } else { 10 });
    let delay = Duration::from_millis(value("--delay-ms").unwrap_or(if smoke { 0 } else { 300 }));
    let tmp = tempfile::tempdir().unwrap();
    let head = analysed(tmp.path());
    let analysis = std::fs::read(head.join("analysis.json")).unwrap();
    let server = server(runs, delay, &analysis);
    let one_by_one = fetch(&head, &server, runs, 1);
    let concurrent = fetch(&head, &server, runs, 4);
    assert_eq!(one_by_one.requests, concurrent.requests);
    let speedup = one_by_one.elapsed.as_secs_f64() / concurrent.elapsed.as_secs_f64();
    println!(
        "history of {runs} runs ({} requests), {} ms a request: one after another {:.2} s, 4 at a time {:.2} s ({} under way at most): {speedup:.1}x faster",
        concurrent.requests,
        delay.as_millis(),
        one_by_one.elapsed.as_secs_f64(),
        concurrent.elapsed.as_secs_f64(),
        concurrent.most,
    );
    if !smoke {
        assert!(speedup >= 3.0, "only {speedup:.1}x faster");
    }
}
