//! Files the run directory (written by the profiled program, a pull request's code) or an
//! artifact hands over: special files are refused at once, `stats` must be a real directory,
//! outputs get the umask's mode, names keep a leading `:` on the nsys versions that write
//! none, and a `\` in a run id is part of its name.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

use assert_fs::TempDir;
use serde_json::Value;

use crate::common::{self, analyze, assert_status, bin, codes, fixture, stderr, Run};
use crate::require_nsys;

/// Longer than any of these runs takes, short enough that a hang fails the test instead of
/// stalling the suite (the child is killed then).
const HANG: Duration = Duration::from_secs(30);

fn mkfifo(path: &Path) {
    let _ = std::fs::remove_file(path);
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("run mkfifo");
    assert!(status.success(), "mkfifo {}", path.display());
}

/// Runs `cmd` with the [`HANG`] guard; returns its output and how long it took.
fn guarded(mut cmd: assert_cmd::Command) -> (Output, Duration) {
    let started = Instant::now();
    let out = cmd.timeout(HANG).output().expect("run nsys-gate");
    (out, started.elapsed())
}

#[track_caller]
fn assert_refused_at_once(out: &Output, took: Duration, needles: &[&str]) {
    assert!(took < HANG, "took {took:?}: it hung and was killed");
    assert_status(out, 2);
    let err = stderr(out);
    for needle in needles {
        assert!(err.contains(needle), "{needle:?} not in:\n{err}");
    }
}

#[test]
fn a_manifest_that_is_a_fifo_is_refused_at_once() {
    let nsys = require_nsys!("2024.2");
    let run = fixture("clean");
    let manifest = run.path("manifest.yaml");
    mkfifo(&manifest);
    let mut cmd = bin();
    cmd.args(["analyze", "--run-dir"])
        .arg(&run.dir)
        .arg("--nsys")
        .arg(&nsys);
    let (out, took) = guarded(cmd);
    assert_refused_at_once(
        &out,
        took,
        &[
            &manifest.display().to_string(),
            "not a regular file (it is a FIFO)",
        ],
    );
    assert!(!run.path("analysis.json").exists());
    assert!(!run.path("stats").exists());
}

/// `post --report FILE` under a 2 GiB address-space limit, so that a reader that never
/// stops (`/dev/zero`) fails instead of taking the machine's memory.
fn post_report(report: &Path) -> (Output, Duration) {
    let mut cmd = assert_cmd::Command::new("sh");
    cmd.arg("-c")
        .arg(r#"ulimit -v 2097152; exec "$0" "$@""#)
        .arg(assert_cmd::cargo::cargo_bin("nsys-gate"))
        .args(["post", "--pr", "1", "--repo", "octo/gpu", "--report"])
        .arg(report)
        .env("GITHUB_TOKEN", "unused")
        .env("GITHUB_API_URL", "http://127.0.0.1:9");
    guarded(cmd)
}

#[test]
fn post_refuses_a_report_that_is_dev_zero_or_a_fifo() {
    let (out, took) = post_report(Path::new("/dev/zero"));
    assert_refused_at_once(
        &out,
        took,
        &["/dev/zero", "not a regular file (it is a character device)"],
    );

    let tmp = TempDir::new().unwrap();
    let fifo = tmp.path().join("report.md");
    mkfifo(&fifo);
    let (out, took) = post_report(&fifo);
    assert_refused_at_once(
        &out,
        took,
        &[
            &fifo.display().to_string(),
            "not a regular file (it is a FIFO)",
        ],
    );
}

#[test]
fn report_refuses_an_analysis_or_template_that_is_a_fifo() {
    let run = fixture("clean");
    let analysis = run.path("analysis.json");
    mkfifo(&analysis);
    let mut cmd = bin();
    cmd.args(["report", "--output", "-", "--run-dir"])
        .arg(&run.dir);
    let (out, took) = guarded(cmd);
    // A run directory that cannot be read is a failed section of the report, status 2.
    assert!(took < HANG, "took {took:?}: it hung and was killed");
    assert_status(&out, 2);
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        report.contains("not a regular file (it is a FIFO)"),
        "{report}"
    );

    let template = run.path("report.md.j2");
    mkfifo(&template);
    let mut cmd = bin();
    cmd.args(["report", "--output", "-", "--run-dir"])
        .arg(&run.dir)
        .arg("--template")
        .arg(&template);
    let (out, took) = guarded(cmd);
    assert_refused_at_once(
        &out,
        took,
        &[
            &template.display().to_string(),
            "not a regular file (it is a FIFO)",
        ],
    );
}

#[test]
fn reuse_stats_refuses_a_stamp_that_is_a_fifo() {
    let run = fixture("clean");
    std::fs::create_dir(run.path("stats")).unwrap();
    let stamp = run.path("stats/nsys-gate-stats.json");
    mkfifo(&stamp);
    let mut cmd = bin();
    cmd.args(["analyze", "--reuse-stats", "--run-dir"])
        .arg(&run.dir);
    let (out, took) = guarded(cmd);
    assert_refused_at_once(
        &out,
        took,
        &[
            &stamp.display().to_string(),
            "not a regular file (it is a FIFO)",
        ],
    );
}

/// Every file under `dir` (relative paths), sorted.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path.clone());
            }
            found.push(path.strip_prefix(dir).unwrap().to_owned());
        }
    }
    found.sort();
    found
}

#[test]
fn a_stats_symlink_leaving_the_run_directory_is_refused_and_nothing_is_written_there() {
    let nsys = require_nsys!("2024.2");
    let run = fixture("clean");
    let elsewhere = TempDir::new().unwrap();
    std::os::unix::fs::symlink(elsewhere.path(), run.path("stats")).unwrap();
    let out = analyze(&run.dir, &nsys, &[]);
    assert_status(&out, 2);
    let err = stderr(&out);
    assert!(err.contains("stats is a symlink to"), "{err}");
    assert!(
        err.contains(&elsewhere.path().display().to_string()),
        "{err}"
    );
    assert_eq!(files_under(elsewhere.path()), Vec::<PathBuf>::new());
    assert!(!run.path("analysis.json").exists());

    // --reuse-stats over CSVs and a stamp another folder holds: refused, and that folder is
    // left as it was (no lock file added).
    let good = fixture("clean");
    assert_status(&analyze(&good.dir, &nsys, &[]), 0);
    let before: Vec<PathBuf> = {
        for entry in std::fs::read_dir(good.path("stats")).unwrap() {
            let entry = entry.unwrap();
            std::fs::copy(entry.path(), elsewhere.path().join(entry.file_name())).unwrap();
        }
        files_under(elsewhere.path())
    };
    let out = common::reuse_stats(&run.dir);
    assert_status(&out, 2);
    assert!(
        stderr(&out).contains("stats is a symlink to"),
        "{}",
        stderr(&out)
    );
    assert_eq!(files_under(elsewhere.path()), before);
    assert!(!run.path("analysis.json").exists());

    // A file named `stats` is refused too.
    let with_file = fixture("clean");
    std::fs::write(with_file.path("stats"), "").unwrap();
    let out = analyze(&with_file.dir, &nsys, &[]);
    assert_status(&out, 2);
    assert!(stderr(&out).contains("stats is a file"), "{}", stderr(&out));
}

/// `nsys-gate run --no-post` on `run` under `umask`.
fn run_under_umask(run: &Run, nsys: &Path, umask: &str) -> Output {
    let mut cmd = assert_cmd::Command::new("sh");
    cmd.arg("-c")
        .arg(format!(r#"umask {umask}; exec "$0" "$@""#))
        .arg(assert_cmd::cargo::cargo_bin("nsys-gate"))
        .args(["run", "--no-post", "--run-dir"])
        .arg(&run.dir)
        .arg("--nsys")
        .arg(nsys)
        // As `common::bin`: nothing from the caller's environment reaches the run.
        .env_remove("NSYS")
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_TOKEN");
    cmd.output().expect("run nsys-gate")
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .permissions()
        .mode()
        & 0o777
}

#[test]
fn outputs_get_the_umask_mode() {
    let nsys = require_nsys!("2024.2");
    for (umask, want) in [("022", 0o644), ("077", 0o600)] {
        let run = fixture("clean");
        let out = run_under_umask(&run, &nsys, umask);
        assert_status(&out, 0);
        for file in ["analysis.json", "report.md", "stats/nsys-gate-stats.json"] {
            assert_eq!(mode(&run.path(file)), want, "{file} under umask {umask}");
        }
    }
}

/// The scoped names of the analysis's host ranges.
fn host_range_names(analysis: &Value) -> Vec<String> {
    analysis["host_ranges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap().to_owned())
        .collect()
}

const SCRIPT: &str = "<script>alert(\"x\")</script> <b>bold</b> @octocat @org/team #123";
const COLON_NAME: &str = ":leading colon `tick` ```fence```";

#[test]
fn a_leading_colon_survives_nsys_2024_2_and_is_stripped_for_2025() {
    let nsys = require_nsys!("2024.2");
    let run = fixture("hostile-names");
    assert_status(&analyze(&run.dir, &nsys, &[]), 0);
    let names = host_range_names(&run.analysis());
    // nsys 2024.2 writes the pushed name as is: the `:` is the program's.
    assert!(
        names.contains(&format!("{SCRIPT}.{COLON_NAME}")),
        "{names:?}"
    );

    // The same CSVs said to come from nsys 2025.1, which marks the default domain with `:`.
    let stamp_path = run.path("stats/nsys-gate-stats.json");
    let mut stamp = common::read_json(&stamp_path);
    assert!(stamp["nsys_version"]
        .as_str()
        .unwrap()
        .starts_with("2024.2."));
    stamp["nsys_version"] = "2025.1.1.131-251135540420v0".into();
    std::fs::write(&stamp_path, serde_json::to_vec(&stamp).unwrap()).unwrap();
    assert_status(&common::reuse_stats(&run.dir), 0);
    let names = host_range_names(&run.analysis());
    let stripped = &COLON_NAME[1..];
    assert!(names.contains(&format!("{SCRIPT}.{stripped}")), "{names:?}");
    assert!(!names.iter().any(|n| n.contains(COLON_NAME)), "{names:?}");
}

#[test]
fn a_backslash_in_the_run_id_is_part_of_the_folder_name() {
    let nsys = require_nsys!("2024.2");
    let source = common::repo().join("tests/fixtures/clean");
    let tmp = TempDir::new().unwrap();
    let dir = tmp.path().join("R\\1");
    std::fs::create_dir(&dir).unwrap();
    for file in ["manifest.yaml", "trace.nsys-rep"] {
        std::fs::copy(source.join(file), dir.join(file)).unwrap();
    }
    let manifest = std::fs::read_to_string(dir.join("manifest.yaml")).unwrap();
    let from = "runs/clean/trace.nsys-rep";
    assert!(manifest.contains(from));
    let manifest = manifest
        .replacen(from, "runs/R\\1/trace.nsys-rep", 1)
        .replacen("run_id: clean", "run_id: R\\1", 1);
    std::fs::write(dir.join("manifest.yaml"), manifest).unwrap();
    let out = analyze(&dir, &nsys, &[]);
    assert_status(&out, 0);
    let analysis = common::read_json(&dir.join("analysis.json"));
    assert_eq!(analysis["run"]["run_id"], "R\\1");
    assert!(
        !codes(&analysis).contains(&"trace_path_moved".to_owned()),
        "{}",
        analysis["warnings"]
    );
}

/// Issue "trust boundary, round 4", item 6: a FIFO as `GITHUB_STEP_SUMMARY` or
/// `GITHUB_OUTPUT` hung the tool forever (opening it for writing waits for a reader that never
/// comes). The step's files are opened without blocking and anything but a regular file is
/// refused: exit 2 within seconds, naming the variable and the path; the other file is still
/// written. `post`'s `comment-url` output to a FIFO is a warning, the comment posted.
#[test]
fn step_files_that_are_fifos_are_refused_at_once() {
    let head = crate::baseline_faults::head();
    let tmp = TempDir::new().unwrap();
    let (fifo, file) = (tmp.path().join("fifo"), tmp.path().join("file"));
    for (fifo_var, file_var) in [
        ("GITHUB_STEP_SUMMARY", "GITHUB_OUTPUT"),
        ("GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY"),
    ] {
        mkfifo(&fifo);
        let _ = std::fs::remove_file(&file);
        let mut cmd = bin();
        cmd.args(["report", "--run-dir"])
            .arg(&head.dir)
            .env("GITHUB_ACTIONS", "true")
            .env(fifo_var, &fifo)
            .env(file_var, &file);
        let (out, took) = guarded(cmd);
        assert!(took < Duration::from_secs(10), "{fifo_var}: took {took:?}");
        assert_refused_at_once(
            &out,
            took,
            &[
                fifo_var,
                &fifo.display().to_string(),
                "not a regular file (it is a FIFO); refusing to write to it",
            ],
        );
        assert!(
            std::fs::metadata(&file).is_ok_and(|m| m.len() > 0),
            "{file_var} was not written"
        );
    }

    let server = crate::github_server::Server::github();
    let report = tmp.path().join("report.md");
    std::fs::write(&report, "<!-- nsys-gate:perf -->\nreport\n").unwrap();
    mkfifo(&fifo);
    let mut cmd = bin();
    cmd.args(["post", "--pr", "7", "--repo", "octo/gpu", "--report"])
        .arg(&report)
        .args(["--api-url", &server.api_url()])
        .env("GITHUB_TOKEN", "ghs_unused_here")
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_OUTPUT", &fifo);
    let (out, took) = guarded(cmd);
    assert!(took < Duration::from_secs(10), "took {took:?}");
    assert_status(&out, 0);
    assert_eq!(server.comments(7).len(), 1);
    assert!(
        stderr(&out).contains("not a regular file (it is a FIFO)"),
        "{}",
        stderr(&out)
    );
}
