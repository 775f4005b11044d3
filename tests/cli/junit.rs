//! `--junit FILE`: the gate as a JUnit XML report from `run`, `report` and `post --analyses`,
//! written whether the gate passes or fails, replaced whole, every name escaped.

use std::path::Path;

use crate::common::{analysed, assert_status, bin, fixture, read_json, run_cmd, stderr};
use crate::require_nsys;

/// The report's `<testsuites …>` line.
fn totals(xml: &str) -> &str {
    xml.lines()
        .find(|l| l.starts_with("<testsuites "))
        .unwrap_or_else(|| panic!("no <testsuites>: {xml}"))
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// No temporary file of an atomic write is left beside `path`.
fn assert_no_leftovers(path: &Path) {
    let left: Vec<String> = std::fs::read_dir(path.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".nsys-gate-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn run_writes_the_gate_as_junit_whether_it_passes_or_fails() {
    let nsys = require_nsys!("2024.2");
    let failing = fixture("missing-iterations");
    let passing = fixture("clean");
    let out_dir = tempfile::tempdir().unwrap();
    let junit = out_dir.path().join("gate.xml");
    let arg = junit.to_str().unwrap();

    let out = run_cmd(&[&failing.dir, &passing.dir], &nsys, &["--junit", arg]);
    assert_status(&out, 1);
    assert!(
        stderr(&out).contains("JUnit report of the gate written to"),
        "{}",
        stderr(&out)
    );
    let xml = read(&junit);
    assert!(xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"));
    // Two run directories, five codes in the default gate set each, one raised.
    assert_eq!(
        totals(&xml),
        "<testsuites name=\"nsys-gate\" tests=\"10\" failures=\"1\" errors=\"0\">"
    );
    let analysis = failing.analysis();
    let first = analysis["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["code"] == "missing_iterations")
        .unwrap()["message"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        xml.contains(&format!(
            "<failure type=\"missing_iterations\" message=\"missing_iterations: {first}\">"
        )),
        "{xml}"
    );
    // The non-gating warning both have is no test case.
    assert!(!xml.contains("gpu_projection_unavailable"), "{xml}");

    // Passing: the file is written again, with no failure.
    let out = run_cmd(
        &[&passing.dir],
        &nsys,
        &["--junit", arg, "--gate-on", "high_variance"],
    );
    assert_status(&out, 0);
    let xml = read(&junit);
    assert_eq!(
        totals(&xml),
        "<testsuites name=\"nsys-gate\" tests=\"6\" failures=\"0\" errors=\"0\">"
    );
    assert!(xml.contains("name=\"high_variance\"/>"), "{xml}");
    assert_no_leftovers(&junit);

    // A run directory that cannot be analysed is an error test case.
    let broken = fixture("clean");
    broken.edit_manifest("run_id:", "run_idx:");
    let out = run_cmd(&[&broken.dir], &nsys, &["--junit", arg]);
    assert_status(&out, 2);
    let xml = read(&junit);
    assert_eq!(
        totals(&xml),
        "<testsuites name=\"nsys-gate\" tests=\"1\" failures=\"0\" errors=\"1\">"
    );
    assert!(
        xml.contains("name=\"analysis\">\n      <error type=\"manifest.yaml could not be read\""),
        "{xml}"
    );
}

#[test]
fn report_and_post_write_junit_with_every_name_escaped() {
    let nsys = require_nsys!("2024.2");
    let run = analysed("missing-iterations", &nsys);
    // A hostile profile name (analysis.json may come from another job's artifact).
    let mut analysis = read_json(&run.path("analysis.json"));
    let hostile = "x\"/></testsuite><testsuite name=\"owned\">&\u{1b}";
    analysis["run"]["profile_name"] = hostile.into();
    std::fs::write(
        run.path("analysis.json"),
        serde_json::to_vec_pretty(&analysis).unwrap(),
    )
    .unwrap();
    let junit = run.path("junit.xml");

    let out = bin()
        .args(["report", "--run-dir"])
        .arg(&run.dir)
        .arg("--junit")
        .arg(&junit)
        .env_remove("GITHUB_ACTIONS")
        .output()
        .unwrap();
    assert_status(&out, 1);
    let xml = read(&junit);
    assert_eq!(xml.matches("<testsuite ").count(), 1, "{xml}");
    assert!(!xml.contains("owned\">"), "{xml}");
    assert!(
        xml.contains("<testsuite name=\"x&quot;/&gt;&lt;/testsuite&gt;&lt;testsuite name=&quot;owned&quot;&gt;&amp;\\u{1b} (run "),
        "{xml}"
    );

    // `post --analyses`: the gate recomputed here (high_variance added) is the one written;
    // outside a pull request nothing is posted.
    std::fs::remove_file(&junit).unwrap();
    let out = bin()
        .args(["post", "--analyses"])
        .arg(&run.dir)
        .args(["--no-gate-on", "missing_iterations", "--junit"])
        .arg(&junit)
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_EVENT_PATH")
        .env_remove("GITLAB_CI")
        .output()
        .unwrap();
    assert_status(&out, 0);
    let xml = read(&junit);
    assert_eq!(
        totals(&xml),
        "<testsuites name=\"nsys-gate\" tests=\"4\" failures=\"0\" errors=\"0\">",
        "{}",
        stderr(&out)
    );
    assert!(!xml.contains("missing_iterations"), "{xml}");

    // Only with --analyses: a --report is posted as rendered.
    let out = bin()
        .args(["post", "--report"])
        .arg(run.path("report.md"))
        .arg("--junit")
        .arg(&junit)
        .output()
        .unwrap();
    assert_status(&out, 2);
    assert!(stderr(&out).contains("--analyses"), "{}", stderr(&out));
}
