//! analysis.json as a file: determinism, atomic replacement, `--output`, `--reuse-stats`,
//! and the human summary.

use crate::common::{self, analyze, assert_status, fixture, stderr};
use crate::require_nsys;

fn leftovers(dir: &std::path::Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".nsys-gate-"))
        .collect()
}

#[test]
fn two_runs_give_the_same_bytes() {
    let nsys = require_nsys!("2024.2");
    for name in ["clean", "duplicate-unexpected", "gpu-projection"] {
        let run = fixture(name);
        assert!(matches!(
            analyze(&run.dir, &nsys, &[]).status.code(),
            Some(0 | 1)
        ));
        let first = std::fs::read(run.path("analysis.json")).unwrap();
        assert!(matches!(
            analyze(&run.dir, &nsys, &[]).status.code(),
            Some(0 | 1)
        ));
        let second = std::fs::read(run.path("analysis.json")).unwrap();
        assert!(
            first == second,
            "{name}: analysis.json differs between two runs"
        );
        assert!(first.ends_with(b"}\n"));
        assert!(leftovers(&run.dir).is_empty(), "{:?}", leftovers(&run.dir));
    }
}

#[test]
fn analysis_json_has_a_line_per_member_and_per_entry() {
    let nsys = require_nsys!("2024.2");
    let run = fixture("gpu-projection");
    assert!(matches!(
        analyze(&run.dir, &nsys, &[]).status.code(),
        Some(0 | 1)
    ));
    let text = std::fs::read_to_string(run.path("analysis.json")).unwrap();
    // Every line is a top-level member, a member of one of them, or an entry of one of them.
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.first(), Some(&"{"));
    assert_eq!(lines.get(1), Some(&"  \"schema_version\": 1,"));
    assert_eq!(lines.last(), Some(&"}"));
    // `gpu_work` goes one level deeper: a line per kernel, copy group, device or range.
    let mut in_gpu_work = false;
    for line in &lines[1..lines.len() - 1] {
        let depth = line.len() - line.trim_start().len();
        if depth == 2 {
            in_gpu_work = line.starts_with("  \"gpu_work\": {");
        }
        assert!(
            depth == 2 || depth == 4 || (in_gpu_work && depth == 6),
            "{line:?}"
        );
    }
    let entries = |list: &str| -> Vec<serde_json::Value> {
        let start = lines
            .iter()
            .position(|l| *l == format!("  \"{list}\": ["))
            .unwrap_or_else(|| panic!("no {list} list in\n{text}"));
        lines[start + 1..]
            .iter()
            .take_while(|l| l.starts_with("    {"))
            .map(|l| serde_json::from_str(l.trim_end_matches(',')).expect("an entry per line"))
            .collect()
    };
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    for list in ["iterations", "host_ranges", "gpu_projected_ranges"] {
        let got = entries(list);
        assert!(!got.is_empty(), "{list}");
        assert_eq!(&serde_json::Value::Array(got), &value[list], "{list}");
    }
    let start = lines
        .iter()
        .position(|l| *l == "    \"kernels\": [")
        .expect("gpu_work.kernels");
    let kernels: Vec<serde_json::Value> = lines[start + 1..]
        .iter()
        .take_while(|l| l.starts_with("      {"))
        .map(|l| serde_json::from_str(l.trim_end_matches(',')).expect("a kernel per line"))
        .collect();
    assert_eq!(
        serde_json::Value::Array(kernels),
        value["gpu_work"]["kernels"]
    );
    // Nothing is lost: it reads back as the analysis it was written from.
    let analysis: nsys_gate::artifact::Analysis = serde_json::from_str(&text).unwrap();
    assert_eq!(String::from_utf8(analysis.to_json()).unwrap(), text);
}

#[test]
fn reused_stats_give_the_same_analysis_and_say_so() {
    let nsys = require_nsys!("2024.2");
    let run = fixture("clean");
    assert_status(&analyze(&run.dir, &nsys, &[]), 0);
    let fresh = run.analysis();
    // No nsys anywhere: --reuse-stats must not need one.
    let out = common::bin()
        .args(["analyze", "--reuse-stats", "--run-dir"])
        .arg(&run.dir)
        .env("PATH", "/nonexistent")
        .output()
        .unwrap();
    assert_status(&out, 0);
    let reused = run.analysis();
    assert_eq!(reused["provenance"]["stats_reused"], true);
    assert_eq!(
        reused["provenance"]["nsys_version"],
        fresh["provenance"]["nsys_version"]
    );
    assert!(stderr(&out).contains("reused CSVs"));
    let strip = |mut v: serde_json::Value| {
        v["provenance"]["stats_reused"] = serde_json::Value::Null;
        v
    };
    assert_eq!(strip(reused), strip(fresh));
}

#[test]
fn reuse_without_earlier_stats_explains_what_to_do() {
    let run = fixture("clean");
    let out = common::reuse_stats(&run.dir);
    assert_status(&out, 2);
    let err = stderr(&out);
    assert!(err.contains("--reuse-stats"), "{err}");
    assert!(err.contains("nsys-gate-stats.json"), "{err}");
    assert!(err.contains("without --reuse-stats"), "{err}");
}

#[test]
fn output_goes_where_it_is_told() {
    let nsys = require_nsys!("2024.2");
    let run = fixture("clean");
    let tmp = assert_fs::TempDir::new().unwrap();
    let out_file = tmp.path().join("elsewhere.json");
    let out = analyze(&run.dir, &nsys, &["--output", out_file.to_str().unwrap()]);
    assert_status(&out, 0);
    assert!(out_file.is_file());
    assert!(!run.path("analysis.json").exists());
    assert!(stderr(&out).contains(out_file.to_str().unwrap()));
}

#[test]
fn an_output_folder_that_does_not_exist_fails_before_nsys_runs() {
    let nsys = require_nsys!("2024.2");
    let run = fixture("clean");
    let out = analyze(
        &run.dir,
        &nsys,
        &["--output", "/nonexistent-dir/analysis.json"],
    );
    assert_status(&out, 2);
    assert!(
        stderr(&out).contains("/nonexistent-dir"),
        "{}",
        stderr(&out)
    );
    assert!(!run.path("stats/nsys-gate-stats.json").exists());
}

#[test]
fn an_output_that_cannot_be_replaced_leaves_nothing_behind() {
    let nsys = require_nsys!("2024.2");
    let run = fixture("clean");
    // A folder where the file should go: the final rename fails.
    std::fs::create_dir(run.path("analysis.json")).unwrap();
    std::fs::write(run.path("analysis.json/keep"), "x").unwrap();
    let out = analyze(&run.dir, &nsys, &[]);
    assert_status(&out, 2);
    assert!(stderr(&out).contains("analysis.json"), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(run.path("analysis.json/keep")).unwrap(),
        "x"
    );
    assert!(leftovers(&run.dir).is_empty(), "{:?}", leftovers(&run.dir));
}

#[test]
fn the_summary_names_profile_iterations_gate_warnings_and_path() {
    let nsys = require_nsys!("2024.2");
    let run = fixture("missing-iterations");
    let out = analyze(&run.dir, &nsys, &[]);
    assert_status(&out, 1);
    let a = run.analysis();
    let err = stderr(&out);
    let s = &a["iteration_summary"];
    assert!(
        err.contains(&format!(
            "profile {}",
            a["run"]["profile_name"].as_str().unwrap()
        )),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "iterations: {} found of {} expected",
            s["found"], s["expected"]
        )),
        "{err}"
    );
    assert!(err.contains("gate: FAILED (missing_iterations)"), "{err}");
    assert!(
        err.contains("[gating] missing_iterations: expected iterations"),
        "{err}"
    );
    assert!(
        err.contains(
            &run.path("analysis.json")
                .canonicalize()
                .unwrap()
                .display()
                .to_string()
        ),
        "{err}"
    );
    assert!(err.contains("running nsys stats"), "{err}");
    assert!(out.stdout.is_empty(), "stdout is left for the report");
}
