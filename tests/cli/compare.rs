//! Comparing with a baseline (issue 14): `compare BASE HEAD`, `report`/`run --baseline PATH`,
//! on real traces of the harness at two known speeds (`compare-base`, and `compare-head` with
//! 20 % more work per pass).

use std::path::Path;
use std::process::Output;

use serde_json::Value;

use crate::common::{analyze, assert_status, bin, fixture, read_json, stderr, Run};
use crate::require_nsys;

/// A fixture copied and analysed with `nsys`.
fn analysed(name: &str, nsys: &Path) -> Run {
    let run = fixture(name);
    let out = analyze(&run.dir, nsys, &[]);
    assert!(
        out.status.code() == Some(0) || out.status.code() == Some(1),
        "{}",
        stderr(&out)
    );
    run
}

fn compare_json(base: &Path, head: &Path) -> (Output, Value) {
    let json = base.parent().unwrap().join("comparison-out.json");
    let out = bin()
        .arg("compare")
        .arg(base)
        .arg(head)
        .arg("--json")
        .arg(&json)
        .output()
        .expect("run nsys-gate");
    assert_status(&out, 0);
    (out, read_json(&json))
}

fn measure<'a>(c: &'a Value, run: usize, name: &str) -> &'a Value {
    c["runs"][run]["measures"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == name)
        .unwrap_or_else(|| panic!("no measure {name}"))
}

fn differing(c: &Value, run: usize) -> Vec<String> {
    c["runs"][run]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["differs"] == true)
        .map(|c| c["name"].as_str().unwrap().to_owned())
        .collect()
}

/// The same text on every machine: temporary folders replaced.
fn redact(text: &str, runs: &[&Run]) -> String {
    let mut text = text.to_owned();
    for run in runs {
        let tmp = run.dir.parent().unwrap();
        let canonical = std::fs::canonicalize(tmp).unwrap();
        for path in [canonical.to_str().unwrap(), tmp.to_str().unwrap()] {
            text = text
                .replace(&nsys_gate::render::escape::inline(path), "[TMP]")
                .replace(path, "[TMP]");
        }
    }
    text
}

#[test]
fn twenty_percent_more_work_is_slower_by_about_twenty_percent() {
    let nsys = require_nsys!("2024.2");
    let (base, head) = (
        analysed("compare-base", &nsys),
        analysed("compare-head", &nsys),
    );
    let (out, c) = compare_json(&base.dir, &head.dir);
    assert_eq!(c["schema_version"], 1);
    assert_eq!(c["runs"].as_array().unwrap().len(), 1);
    assert_eq!(c["runs"][0]["like_for_like"], true);
    assert_eq!(differing(&c, 0), Vec::<String>::new());
    let host = measure(&c, 0, "host_inclusive");
    assert_eq!(host["verdict"], "slower");
    let change = host["change_pct"].as_f64().unwrap();
    let [lo, hi] = [
        host["interval_pct"][0].as_f64().unwrap(),
        host["interval_pct"][1].as_f64().unwrap(),
    ];
    // 510 µs more in a pass of about 2.57 ms: 19.8 %.
    assert!((17.0..23.0).contains(&change), "{change}");
    assert!(
        lo <= change && change <= hi && lo > 15.0 && hi < 25.0,
        "{lo} {hi}"
    );
    assert_eq!(host["base"]["count"], 20);
    assert_eq!(host["head"]["count"], 20);
    // The change is in inference, and nowhere else to speak of.
    let ranges = &c["runs"][0]["host_ranges"];
    assert_eq!(ranges["changed"][0]["name"], "inference");
    let inference = ranges["changed"][0]["change_ns"].as_f64().unwrap();
    assert!((450_000.0..570_000.0).contains(&inference), "{inference}");
    for r in &ranges["changed"].as_array().unwrap()[1..] {
        assert!(r["change_ns"].as_f64().unwrap().abs() < 50_000.0, "{r}");
    }
    assert_eq!(ranges["new"], serde_json::json!([]));
    assert_eq!(ranges["gone"], serde_json::json!([]));
    // GPU: neither trace has CUDA data.
    assert!(measure(&c, 0, "gpu_projected")["verdict"].is_null());
    let markdown = String::from_utf8(out.stdout).unwrap();
    assert!(
        markdown.contains("head is 19.") || markdown.contains("head is 20."),
        "{markdown}"
    );
    assert!(markdown.contains("one run each: a difference, not yet a regression"));
    // The other way round: faster, by the inverse ratio.
    let (_, back) = compare_json(&head.dir, &base.dir);
    let host = measure(&back, 0, "host_inclusive");
    assert_eq!(host["verdict"], "faster");
    let back_change = host["change_pct"].as_f64().unwrap();
    assert!(((1.0 + change / 100.0) * (1.0 + back_change / 100.0) - 1.0).abs() < 1e-3);
}

#[test]
fn the_same_trace_twice_is_within_noise() {
    let nsys = require_nsys!("2024.2");
    let (base, head) = (
        analysed("compare-base", &nsys),
        analysed("compare-base", &nsys),
    );
    let (_, c) = compare_json(&base.dir, &head.dir);
    let host = measure(&c, 0, "host_inclusive");
    assert_eq!(host["verdict"], "within_noise");
    assert_eq!(host["change_pct"], 0.0);
    assert!(host["interval_pct"][0].as_f64().unwrap() <= 0.0);
    assert!(host["interval_pct"][1].as_f64().unwrap() >= 0.0);
    assert!(c["runs"][0]["host_ranges"]["changed"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["change_ns"] == 0.0));
}

#[test]
fn a_changed_device_and_nsys_version_are_named_and_not_like_for_like() {
    let nsys24 = require_nsys!("2024.2");
    let nsys23 = require_nsys!("2023.4");
    let base = analysed("clean-2023.4", &nsys23);
    let head = fixture("clean-2023.4");
    head.edit_manifest("device: cuda:0", "device: cuda:1");
    let out = analyze(&head.dir, &nsys24, &[]);
    assert_status(&out, 0);
    let (out, c) = compare_json(&base.dir, &head.dir);
    assert_eq!(differing(&c, 0), ["device", "nsys_version"]);
    assert_eq!(c["runs"][0]["like_for_like"], false);
    let markdown = String::from_utf8(out.stdout).unwrap();
    assert!(
        markdown.contains("**not like for like** (device, Nsight Systems version differ)"),
        "{markdown}"
    );
    assert!(markdown.contains("| device | cuda:0 | cuda:1 | differs |"));
    // Still compared, and labelled: both are the same trace.
    assert_eq!(measure(&c, 0, "host_inclusive")["verdict"], "within_noise");
}

#[test]
fn report_with_a_baseline_shows_it_writes_comparison_json_and_keeps_the_gate() {
    let nsys = require_nsys!("2024.2");
    let base = analysed("compare-base", &nsys);
    let head = analysed("compare-head", &nsys);
    let out = bin()
        .args(["report", "--run-dir"])
        .arg(&head.dir)
        .arg("--baseline")
        .arg(&base.dir)
        .env_remove("GITHUB_ACTIONS")
        .output()
        .unwrap();
    assert_status(&out, 0);
    let report = std::fs::read_to_string(head.path("report.md")).unwrap();
    let c = read_json(&head.path("comparison.json"));
    assert_eq!(c["baseline"]["kind"], "path");
    assert_eq!(measure(&c, 0, "host_inclusive")["verdict"], "slower");
    assert!(report.contains("### Compared with the baseline"));
    assert!(report.contains("**Compared with the baseline**"));
    insta::assert_snapshot!(
        "compare_head_against_base",
        redact(&report, &[&base, &head])
    );

    // A gating warning of the head run keeps its exit status; the slower head changes none.
    let missing = analysed("missing-iterations", &nsys);
    let out = bin()
        .args(["report", "--run-dir"])
        .arg(&missing.dir)
        .arg("--baseline")
        .arg(&base.dir)
        .env_remove("GITHUB_ACTIONS")
        .output()
        .unwrap();
    assert_status(&out, 1);
}

#[test]
fn a_missing_baseline_is_a_note_never_an_error() {
    let nsys = require_nsys!("2024.2");
    let head = analysed("compare-head", &nsys);
    let nowhere = head.dir.parent().unwrap().join("no-such-baseline");
    let out = bin()
        .args(["report", "--run-dir"])
        .arg(&head.dir)
        .arg("--baseline")
        .arg(&nowhere)
        .env_remove("GITHUB_ACTIONS")
        .output()
        .unwrap();
    assert_status(&out, 0);
    let report = std::fs::read_to_string(head.path("report.md")).unwrap();
    assert!(report.contains("ℹ️ no baseline: cannot read"), "{report}");
    assert!(
        report.contains("no baseline run of this profile"),
        "{report}"
    );
    assert!(stderr(&out).contains("nsys-gate: baseline: no baseline: cannot read"));
    let c = read_json(&head.path("comparison.json"));
    assert_eq!(c["runs"], serde_json::json!([]));
    assert_eq!(c["unmatched_head"][0]["profile_name"], "smoke-tensor");
    // `compare` itself needs both sides: status 2.
    let out = bin()
        .arg("compare")
        .arg(&nowhere)
        .arg(&head.dir)
        .output()
        .unwrap();
    assert_status(&out, 2);
    assert!(
        stderr(&out).contains("BASE: cannot read"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn run_with_a_baseline_folder_matches_by_profile_and_names_the_unmatched() {
    let nsys = require_nsys!("2024.2");
    let base = analysed("compare-base", &nsys);
    // A folder of baselines: the matching one, and one of another profile.
    let folder = base.dir.parent().unwrap().join("baselines");
    std::fs::create_dir_all(folder.join("a")).unwrap();
    std::fs::create_dir_all(folder.join("b")).unwrap();
    std::fs::copy(base.path("analysis.json"), folder.join("a/analysis.json")).unwrap();
    let other = std::fs::read_to_string(base.path("analysis.json"))
        .unwrap()
        .replace(
            "\"profile_name\": \"smoke-tensor\"",
            "\"profile_name\": \"other-profile\"",
        );
    std::fs::write(folder.join("b/analysis.json"), other).unwrap();
    let head = fixture("compare-head");
    let out = bin()
        .args(["run", "--no-post", "--nsys"])
        .arg(&nsys)
        .arg("--run-dir")
        .arg(&head.dir)
        .arg("--baseline")
        .arg(&folder)
        .env_remove("GITHUB_ACTIONS")
        .output()
        .unwrap();
    assert_status(&out, 0);
    let c = read_json(&head.path("comparison.json"));
    assert_eq!(c["runs"][0]["base"]["analysis_path"], "a/analysis.json");
    assert_eq!(c["unmatched_base"][0]["profile_name"], "other-profile");
    assert_eq!(
        c["baseline"]["analyses"],
        serde_json::json!(["a/analysis.json", "b/analysis.json"])
    );
    let report = std::fs::read_to_string(head.path("report.md")).unwrap();
    assert!(
        report.contains("**other-profile** (target smoke-tensor) (baseline b/analysis.json): no current run of this profile."),
        "{report}"
    );
}

#[test]
fn hostile_names_stay_inert_in_the_comparison() {
    let nsys = require_nsys!("2024.2");
    let base = analysed("clean", &nsys);
    let head = analysed("hostile-names", &nsys);
    let out = bin()
        .arg("compare")
        .arg(&base.dir)
        .arg(&head.dir)
        .args(["--top", "3"])
        .output()
        .unwrap();
    assert_status(&out, 0);
    let markdown = String::from_utf8(out.stdout).unwrap();
    assert!(
        markdown.contains("New ranges (only in head): "),
        "{markdown}"
    );
    assert!(
        markdown.contains("Gone ranges (only in base): "),
        "{markdown}"
    );
    assert!(!markdown.contains("<script>"), "{markdown}");
    assert!(
        !markdown.contains("@octocat"),
        "mentions get a zero-width space"
    );
    insta::assert_snapshot!("compare_hostile_names", redact(&markdown, &[&base, &head]));
}
