//! The failure classification table (contract section 2): every row, with real nsys except
//! the hang, which a real nsys cannot be made to do on demand.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::common::{self, analyze, assert_status, fixture, stderr};
use crate::require_nsys;

/// Another program given as nsys (`--nsys /bin/true`) is named as not nsys, with what it said,
/// instead of a version read out of its licence text.
#[test]
fn a_program_that_is_not_nsys_is_named_so() {
    let run = fixture("clean");
    std::fs::write(run.path("analysis.json"), "previous\n").unwrap();
    let out = common::bin()
        .args(["analyze", "--nsys", "/bin/true", "--run-dir"])
        .arg(&run.dir)
        .output()
        .unwrap();
    assert_status(&out, 2);
    let err = stderr(&out);
    assert!(
        err.contains("`/bin/true --version` is not Nsight Systems"),
        "{err}"
    );
    assert!(err.contains("GNU coreutils"), "{err}");
    assert!(!err.contains("has neither"), "{err}");
    assert_eq!(
        std::fs::read_to_string(run.path("analysis.json")).unwrap(),
        "previous\n"
    );
}

#[test]
fn no_nsys_anywhere_names_every_place_searched() {
    // A copy of the binary outside the repository, so that the project-local .nsys/ is not
    // found through the executable's folder either.
    let tmp = assert_fs::TempDir::new().unwrap();
    let exe = tmp.path().join("nsys-gate");
    std::fs::copy(assert_cmd::cargo::cargo_bin("nsys-gate"), &exe).unwrap();
    let run = fixture("clean");
    std::fs::write(run.path("analysis.json"), "previous\n").unwrap();
    let out = std::process::Command::new(&exe)
        .args(["analyze", "--run-dir"])
        .arg(&run.dir)
        .current_dir(tmp.path())
        .env_clear()
        .env("PATH", "/runner-secret-bin:/nonexistent-bin")
        .output()
        .unwrap();
    assert_status(&out, 2);
    let err = stderr(&out);
    // Issue 30, item 8: the runner's PATH went into the report (and so the pull request).
    assert!(!err.contains("runner-secret-bin"), "{err}");
    let report = std::process::Command::new(&exe)
        .args(["run", "--no-post", "--run-dir"])
        .arg(&run.dir)
        .current_dir(tmp.path())
        .env_clear()
        .env("PATH", "/runner-secret-bin:/nonexistent-bin")
        .output()
        .unwrap();
    assert_status(&report, 2);
    let md = std::fs::read_to_string(run.path("report.md")).unwrap();
    assert!(md.contains("no nsys executable found"), "{md}");
    assert!(!md.contains("runner-secret-bin"), "{md}");
    assert!(err.contains("no nsys executable found"), "{err}");
    for place in [
        "`--nsys` (not given)",
        "`$NSYS` (not set)",
        "`PATH` (2 folders; `echo $PATH` lists them)",
        "/usr/local/cuda/bin/nsys",
        "/opt/nvidia/nsight-systems/*/bin/nsys",
        "/usr/lib/nsight-systems/bin/nsys",
        ".nsys/*/nsys",
    ] {
        assert!(err.contains(place), "missing {place:?} in:\n{err}");
    }
    assert_eq!(
        std::fs::read_to_string(run.path("analysis.json")).unwrap(),
        "previous\n"
    );
}

#[test]
fn explicit_nsys_that_does_not_exist_is_an_error() {
    let run = fixture("clean");
    let out = analyze(&run.dir, Path::new("/nonexistent/nsys"), &[]);
    assert_status(&out, 2);
    assert!(
        stderr(&out).contains("`--nsys` `/nonexistent/nsys` does not exist"),
        "{}",
        stderr(&out)
    );
}

/// Issue 30, item 8: a folder given for `--nsys` (the install's `bin`) was "not an
/// executable file"; the error now names the nsys inside it. A file without an execute bit
/// says so.
#[test]
fn explicit_nsys_that_is_a_folder_names_the_nsys_inside_it() {
    let run = fixture("clean");
    let tmp = tempfile::tempdir().unwrap();
    let bin = tmp.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    std::fs::write(bin.join("nsys"), "#!/bin/sh\n").unwrap();
    let out = analyze(&run.dir, tmp.path(), &[]);
    assert_status(&out, 2);
    let err = stderr(&out);
    assert!(
        err.contains(&format!(
            "is a folder, not the nsys executable (hint: pass the executable inside it, such as `{}`)",
            bin.join("nsys").display()
        )),
        "{err}"
    );
    let out = analyze(&run.dir, &bin.join("nsys"), &[]);
    assert_status(&out, 2);
    assert!(
        stderr(&out).contains("is not executable (no execute permission"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn nsys_from_the_environment_is_used() {
    let nsys = require_nsys!("2024.2");
    let run = fixture("clean");
    let out = common::bin()
        .args(["analyze", "--run-dir"])
        .arg(&run.dir)
        .env("NSYS", &nsys)
        .output()
        .unwrap();
    assert_status(&out, 0);
    assert!(run.analysis()["provenance"]["nsys_version"]
        .as_str()
        .unwrap()
        .starts_with("2024.2.3.38"));
}

#[test]
fn trace_from_a_newer_nsys_quotes_both_versions() {
    let nsys = require_nsys!("2023.4");
    let run = fixture("clean");
    let out = analyze(&run.dir, &nsys, &[]);
    assert_status(&out, 2);
    let err = stderr(&out);
    assert!(
        err.contains("the trace was recorded by Nsight Systems 2024.2.3.38-242334140272v0, newer than this nsys 2023.4.4.54-234433681190v0"),
        "{err}"
    );
    assert!(
        err.contains("Report was created in Nsight Systems version"),
        "{err}"
    );
    assert!(err.contains("tried: `"), "{err}");
    assert!(!run.path("analysis.json").exists());
}

#[test]
fn trace_from_a_newer_nsys_read_by_2022_4() {
    let nsys = require_nsys!("2022.4");
    let run = fixture("clean");
    let out = analyze(&run.dir, &nsys, &[]);
    assert_status(&out, 2);
    let err = stderr(&out);
    assert!(
        err.contains("the trace was recorded by Nsight Systems 2024.2.3.38-242334140272v0, newer than this nsys 2022.4.2.1-df9881f"),
        "{err}"
    );
    assert!(err.contains("Version number is invalid"), "{err}");
}

#[test]
fn nsys_without_the_reports_names_its_version() {
    let real = require_nsys!("2023.4");
    // A real nsys whose install lacks the NVTX report scripts.
    let (_install, copy) =
        common::nsys_without(&real, &["nvtx_pushpop_trace.py", "nvtx_gpu_proj_trace.py"]);
    let run = fixture("clean-2023.4");
    let out = analyze(&run.dir, &copy, &[]);
    assert_status(&out, 2);
    let err = stderr(&out);
    assert!(
        err.contains("nsys 2023.4.4.54-234433681190v0 has neither `nvtx_pushpop_trace`/`nvtx_gpu_proj_trace` nor the legacy `nvtxpptrace`/`nvtxgpuproj` reports"),
        "{err}"
    );
}

#[test]
fn legacy_report_names_of_2022_4_are_used_with_a_warning() {
    let nsys = require_nsys!("2022.4");
    let run = fixture("clean-2022.4");
    let out = analyze(&run.dir, &nsys, &[]);
    assert_status(&out, 0);
    let a = run.analysis();
    assert_eq!(a["provenance"]["legacy_reports"], true);
    assert!(common::codes(&a).contains(&"legacy_nsys_reports".to_owned()));
    assert!(run.path("stats/nsys_nvtx_pushpop_trace.csv").is_file());
    assert!(run.path("stats/nsys_nvtx_gpu_proj_trace.csv").is_file());
    assert!(a["iteration_summary"]["complete"].as_u64().unwrap() > 0);
}

#[test]
fn a_trace_without_nvtx_gives_an_analysis_with_no_iterations() {
    let nsys = require_nsys!("2024.2");
    let run = fixture("no-nvtx");
    let out = analyze(&run.dir, &nsys, &[]);
    assert_status(&out, 1);
    let a = run.analysis();
    let codes = common::codes(&a);
    for code in [
        "missing_iterations",
        "capture_range_missing",
        "gpu_projection_unavailable",
    ] {
        assert!(codes.contains(&code.to_owned()), "{code} not in {codes:?}");
    }
    assert_eq!(a["iteration_summary"]["found"], 0);
    assert_eq!(
        a["provenance"]["report_status"]["nvtx_pushpop_trace"]["status"],
        "skipped"
    );
    assert!(
        a["provenance"]["report_status"]["nvtx_pushpop_trace"]["message"]
            .as_str()
            .unwrap()
            .contains("does not contain NV Tools Extension (NVTX) data")
    );
}

#[test]
fn a_skipped_gpu_projection_is_reported_not_zero() {
    let nsys = require_nsys!("2024.2");
    let run = fixture("clean");
    assert_status(&analyze(&run.dir, &nsys, &[]), 0);
    let a = run.analysis();
    let w = common::warning(&a, "gpu_projection_unavailable");
    assert_eq!(w["gating"], false);
    assert!(
        w["message"]
            .as_str()
            .unwrap()
            .contains("does not contain CUDA API data"),
        "{w}"
    );
    // The warning names the input, not nsys's export (stats/trace.sqlite), which is removed
    // by the time anyone reads it (issue 34).
    assert_eq!(
        w["message"],
        "nsys skipped the GPU projection: trace.nsys-rep does not contain CUDA API data."
    );
    assert!(!run.dir.join("stats/trace.sqlite").exists());
    assert_eq!(a["gpu_projected_ranges"], serde_json::json!([]));
    assert!(a["iteration_summary"]["gpu_projected"].is_null());
    for it in a["iterations"].as_array().unwrap() {
        assert!(it["gpu_projection"].is_null());
    }
}

#[test]
fn a_renamed_csv_column_names_the_column_file_and_version() {
    let nsys = require_nsys!("2024.2");
    let run = fixture("clean");
    assert_status(&analyze(&run.dir, &nsys, &[]), 0);
    let csv = run.path("stats/nsys_nvtx_pushpop_trace.csv");
    let text = std::fs::read_to_string(&csv).unwrap();
    std::fs::write(&csv, text.replacen("RangeId", "RangeID", 1)).unwrap();
    let before = std::fs::read(run.path("analysis.json")).unwrap();
    let out = common::reuse_stats(&run.dir);
    assert_status(&out, 2);
    let err = stderr(&out);
    assert!(err.contains("RangeId"), "{err}");
    assert!(err.contains("nsys_nvtx_pushpop_trace.csv"), "{err}");
    assert!(err.contains("2024.2.3.38-242334140272v0"), "{err}");
    assert_eq!(std::fs::read(run.path("analysis.json")).unwrap(), before);
}

#[test]
fn a_hanging_nsys_is_killed_after_the_timeout() {
    let tmp = assert_fs::TempDir::new().unwrap();
    // A real nsys cannot be made to hang on demand. This one hangs with a child of its own.
    let fake = common::fake_nsys(
        tmp.path(),
        "sleep 300 &\necho $! > \"$(dirname \"$0\")/child.pid\"\nwait",
    );
    let run = fixture("clean");
    let started = Instant::now();
    let out = analyze(&run.dir, &fake, &["--nsys-timeout", "1"]);
    assert_status(&out, 2);
    assert!(started.elapsed() < Duration::from_secs(60));
    let err = stderr(&out);
    assert!(
        err.contains("nsys 2024.2.3.38-242334140272v0 ran past the 1 s timeout and was killed"),
        "{err}"
    );
    assert!(err.contains("--nsys-timeout"), "{err}");
    // The whole process group went, the fake's own child included.
    let pid = std::fs::read_to_string(tmp.path().join("child.pid")).unwrap();
    let alive = Path::new("/proc").join(pid.trim()).exists()
        && !std::fs::read_to_string(Path::new("/proc").join(pid.trim()).join("stat"))
            .unwrap_or_default()
            .contains(") Z ");
    assert!(!alive, "the hanging nsys's child {} survived", pid.trim());
    assert!(!run.path("analysis.json").exists());
}

#[test]
fn a_run_directory_named_with_a_newline_is_classified_as_in_any_other() {
    // nsys prints the paths it is given: an absolute path with a newline in it split its
    // `SKIPPED: <path> does not contain …` line in two, and the skip was read as a failure.
    let nsys = require_nsys!("2024.2");
    for (name, status, skipped) in [
        (
            "no-nvtx",
            1,
            &["nvtx_pushpop_trace", "nvtx_gpu_proj_trace"][..],
        ),
        ("clean", 0, &["nvtx_gpu_proj_trace"][..]),
    ] {
        let run = common::fixture_as(name, format!("run\n{name}"));
        let out = analyze(&run.dir, &nsys, &[]);
        assert_status(&out, status);
        let a = run.analysis();
        let data = if name == "no-nvtx" {
            "NV Tools Extension (NVTX)"
        } else {
            "CUDA API"
        };
        for report in skipped {
            assert_eq!(
                a["provenance"]["report_status"][report],
                serde_json::json!({
                    "status": "skipped",
                    "message": format!("stats/trace.sqlite does not contain {data} data.")
                }),
                "{name}: {report}"
            );
        }
        assert!(common::codes(&a).contains(&"gpu_projection_unavailable".to_owned()));
    }
}
