//! Comparing with the base branch's history: `compare BASE... HEAD` and `report`/`run
//! --baseline PATH`, on real traces of the harness at two known speeds (`compare-base`, and
//! `compare-head` with 20 % more work per pass). A history is made of the base trace's
//! analysis as other runs would give it: each base run's durations moved by its own small
//! offset (`common::rerun_of`).

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{json, Value};

use crate::common::{
    analysed, analyze, assert_status, bin, fixture, read_json, rerun_of, stderr, Run,
};
use crate::require_nsys;

/// The offsets of a history's runs, oldest first: about 0.4 % run to run.
pub(crate) const OFFSETS: [f64; 5] = [1.003, 0.996, 1.005, 0.998, 1.001];

pub(crate) fn compare_json(paths: &[&Path]) -> (Output, Value) {
    let json = paths[0].parent().unwrap().join("comparison-out.json");
    let out = bin()
        .arg("compare")
        .args(paths)
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

/// A folder `NAME` beside `base` holding a history of `base`'s analysis: one run directory per
/// offset (`000`, `001`, …: oldest first in path order), each its own run and commit.
pub(crate) fn history(base: &Run, name: &str, offsets: &[f64]) -> PathBuf {
    let analysis = std::fs::read(base.path("analysis.json")).unwrap();
    let folder = base.dir.parent().unwrap().join(name);
    for (k, factor) in offsets.iter().enumerate() {
        let dir = folder.join(format!("{k:03}"));
        std::fs::create_dir_all(&dir).unwrap();
        let commit = format!("{k:0>40}");
        std::fs::write(
            dir.join("analysis.json"),
            rerun_of(&analysis, *factor, &format!("base-{k}"), &commit),
        )
        .unwrap();
    }
    folder
}

/// The same text on every machine: temporary folders replaced.
pub(crate) fn redact(text: &str, runs: &[&Run]) -> String {
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
fn against_one_base_run_twenty_percent_more_work_is_a_difference_with_the_noise_unknown() {
    let nsys = require_nsys!("2024.2");
    let (base, head) = (
        analysed("compare-base", &nsys),
        analysed("compare-head", &nsys),
    );
    let (out, c) = compare_json(&[&base.dir, &head.dir]);
    assert_eq!(c["schema_version"], 2);
    assert_eq!(c["runs"].as_array().unwrap().len(), 1);
    assert_eq!(c["runs"][0]["like_for_like"], true);
    assert_eq!(differing(&c, 0), Vec::<String>::new());
    let host = measure(&c, 0, "host_inclusive");
    // One base run: the run-to-run noise is unknown, so there is no verdict either way.
    assert_eq!(host["verdict"], "noise_unknown");
    assert!(host["interval_pct"].is_null());
    let change = host["change_pct"].as_f64().unwrap();
    // 510 µs more in a pass of about 2.57 ms: 19.8 %.
    assert!((17.0..23.0).contains(&change), "{change}");
    // The interval within this pair of runs is kept, named for what it is.
    let pair = &host["within_pair"];
    let [lo, hi] = [
        pair["interval_pct"][0].as_f64().unwrap(),
        pair["interval_pct"][1].as_f64().unwrap(),
    ];
    assert!(lo > 15.0 && hi < 25.0, "{lo} {hi}");
    assert_eq!(host["base"]["runs"], 1);
    assert_eq!(host["head"]["iterations"], 20);
    // The change is in inference, and nowhere else to speak of.
    let ranges = &c["runs"][0]["host_ranges"];
    assert_eq!(ranges["changed"][0]["name"], "inference");
    let inference = ranges["changed"][0]["change_ns"].as_f64().unwrap();
    assert!((450_000.0..570_000.0).contains(&inference), "{inference}");
    for r in &ranges["changed"].as_array().unwrap()[1..] {
        assert!(r["change_ns"].as_f64().unwrap().abs() < 50_000.0, "{r}");
    }
    assert_eq!(ranges["new"], json!([]));
    assert_eq!(ranges["gone"], json!([]));
    // GPU: neither trace has CUDA data.
    assert!(measure(&c, 0, "gpu_projected")["verdict"].is_null());
    let markdown = String::from_utf8(out.stdout).unwrap();
    assert!(
        markdown.contains("**the run-to-run noise is unknown**"),
        "{markdown}"
    );
    assert!(markdown.contains("Within this pair of runs"), "{markdown}");
    assert!(!markdown.contains("**slower**"), "{markdown}");
    // The other way round: the inverse ratio.
    let (_, back) = compare_json(&[&head.dir, &base.dir]);
    let back_change = measure(&back, 0, "host_inclusive")["change_pct"]
        .as_f64()
        .unwrap();
    assert!(((1.0 + change / 100.0) * (1.0 + back_change / 100.0) - 1.0).abs() < 1e-3);
}

#[test]
fn against_a_history_twenty_percent_more_work_is_slower_and_the_range_that_changed_is_named() {
    let nsys = require_nsys!("2024.2");
    let (base, head) = (
        analysed("compare-base", &nsys),
        analysed("compare-head", &nsys),
    );
    let history = history(&base, "history", &OFFSETS);
    let (out, c) = compare_json(&[&history, &head.dir]);
    let run = &c["runs"][0];
    assert_eq!(run["history"]["used"].as_array().unwrap().len(), 5);
    assert_eq!(run["history"]["change_point"], Value::Null);
    let host = measure(&c, 0, "host_inclusive");
    assert_eq!(host["verdict"], "slower", "{host}");
    let [lo, hi] = [
        host["interval_pct"][0].as_f64().unwrap(),
        host["interval_pct"][1].as_f64().unwrap(),
    ];
    assert!(lo < 0.0 && hi > 0.0 && hi < 3.0, "{lo} {hi}");
    let spread = host["base"]["spread_pct"].as_f64().unwrap();
    assert!((0.1..1.0).contains(&spread), "{spread}");
    let verdicts: Vec<(&str, &str)> = run["host_ranges"]["changed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["name"].as_str().unwrap(), r["verdict"].as_str().unwrap()))
        .collect();
    assert_eq!(verdicts[0], ("inference", "slower"), "{verdicts:?}");
    assert!(
        verdicts[1..].iter().all(|(_, v)| *v == "within_noise"),
        "{verdicts:?}"
    );
    let markdown = String::from_utf8(out.stdout).unwrap();
    assert!(
        markdown.contains("**slower** (beyond the run-to-run noise of the last 5 base runs)"),
        "{markdown}"
    );
    assert!(
        markdown.contains("**Host exclusive time per iteration:** 1 slower of "),
        "{markdown}"
    );
    // The same history against a head like it: within noise, ranges too.
    let like = fixture("compare-base");
    std::fs::create_dir_all(&like.dir).unwrap();
    std::fs::write(
        like.path("analysis.json"),
        rerun_of(
            &std::fs::read(base.path("analysis.json")).unwrap(),
            1.002,
            "head",
            "feedface",
        ),
    )
    .unwrap();
    let (_, c) = compare_json(&[&history, &like.dir]);
    assert_eq!(measure(&c, 0, "host_inclusive")["verdict"], "within_noise");
    assert!(c["runs"][0]["host_ranges"]["changed"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["verdict"] == "within_noise"));
}

#[test]
fn the_same_trace_twice_is_no_change_and_never_negative_zero() {
    let nsys = require_nsys!("2024.2");
    let base = analysed("compare-base", &nsys);
    let (out, c) = compare_json(&[&base.dir, &base.dir]);
    let host = measure(&c, 0, "host_inclusive");
    assert_eq!(host["verdict"], "noise_unknown");
    assert_eq!(host["change_pct"], 0.0);
    let json =
        std::fs::read_to_string(base.dir.parent().unwrap().join("comparison-out.json")).unwrap();
    assert!(!json.contains("-0.0"), "{json}");
    assert!(c["runs"][0]["host_ranges"]["changed"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["change_ns"] == 0.0));
    let markdown = String::from_utf8(out.stdout).unwrap();
    assert!(markdown.contains("host inclusive 0.0\u{a0}%"), "{markdown}");
    // Identical base runs: no spread, and an identical head is within noise.
    let same = history(&base, "same", &[1.0, 1.0, 1.0]);
    let (_, c) = compare_json(&[&same, &base.dir]);
    let host = measure(&c, 0, "host_inclusive");
    assert_eq!(host["verdict"], "within_noise");
    assert_eq!(host["base"]["spread_pct"], 0.0);
}

#[test]
fn a_base_run_with_another_device_and_nsys_is_left_out_and_named() {
    let nsys24 = require_nsys!("2024.2");
    let nsys23 = require_nsys!("2023.4");
    let base = analysed("clean-2023.4", &nsys23);
    let head = fixture("clean-2023.4");
    head.edit_manifest("device: cuda:0", "device: cuda:1");
    let out = analyze(&head.dir, &nsys24, &[]);
    assert_status(&out, 0);
    let (out, c) = compare_json(&[&base.dir, &head.dir]);
    assert_eq!(differing(&c, 0), ["device", "nsys_version"]);
    assert_eq!(c["runs"][0]["like_for_like"], false);
    let left = &c["runs"][0]["history"]["left_out"][0];
    assert_eq!(left["reason"], "conditions");
    assert_eq!(left["differs"], json!(["device", "nsys_version"]));
    assert_eq!(c["runs"][0]["history"]["used"], json!([]));
    let markdown = String::from_utf8(out.stdout).unwrap();
    assert!(
        markdown.contains("**not like for like** (device, Nsight Systems version differ)"),
        "{markdown}"
    );
    assert!(markdown.contains("| device | cuda:0 | cuda:1 | differs |"));
    assert!(
        markdown.contains("1 base run is left out of the history: device, Nsight Systems version differ from the head's."),
        "{markdown}"
    );
    // Still shown, labelled, and never a verdict.
    assert_eq!(measure(&c, 0, "host_inclusive")["verdict"], "noise_unknown");
}

#[test]
fn runs_of_another_gpu_never_join_the_history_and_head_repeats_are_combined() {
    let nsys = require_nsys!("2024.2");
    let (base, head) = (
        analysed("compare-base", &nsys),
        analysed("compare-head", &nsys),
    );
    let folder = history(&base, "legs", &[1.003, 0.996, 1.005, 0.998, 1.001, 1.004]);
    // Base runs 0-2 on the A100 leg, 3-5 on the H100 leg (the label keys them).
    for k in 0..6 {
        let path = folder.join(format!("{k:03}/analysis.json"));
        let mut a = read_json(&path);
        a["label"] = json!(if k < 3 { "A100" } else { "H100" });
        std::fs::write(&path, serde_json::to_vec(&a).unwrap()).unwrap();
    }
    // Two head runs of the A100 leg (the harness run twice): one key, combined.
    let heads = head.dir.parent().unwrap().join("heads");
    for k in 0..2 {
        let mut a = head.analysis();
        a["label"] = json!("A100");
        a["run"]["run_id"] = json!(format!("head-{k}"));
        std::fs::create_dir_all(heads.join(k.to_string())).unwrap();
        std::fs::write(
            heads.join(format!("{k}/analysis.json")),
            serde_json::to_vec(&a).unwrap(),
        )
        .unwrap();
    }
    let (_, c) = compare_json(&[&folder, &heads]);
    assert_eq!(c["runs"].as_array().unwrap().len(), 1, "{c}");
    let run = &c["runs"][0];
    assert_eq!(run["key"]["leg"], "A100");
    assert_eq!(run["heads"].as_array().unwrap().len(), 2);
    assert_eq!(c["unmatched_head"], json!([]));
    let used: Vec<&str> = run["history"]["used"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["run_id"].as_str().unwrap())
        .collect();
    assert_eq!(used, ["base-0", "base-1", "base-2"]);
    assert_eq!(c["unmatched_base"][0]["run_id"], "base-5");
    let host = measure(&c, 0, "host_inclusive");
    assert_eq!(host["head"]["runs"], 2);
    assert_eq!(host["verdict"], "slower");
}

#[test]
fn report_with_a_history_shows_it_writes_comparison_json_and_keeps_the_gate() {
    let nsys = require_nsys!("2024.2");
    let base = analysed("compare-base", &nsys);
    let head = analysed("compare-head", &nsys);
    let history = history(&base, "history", &OFFSETS);
    let out = bin()
        .args(["report", "--run-dir"])
        .arg(&head.dir)
        .arg("--baseline")
        .arg(&history)
        .env_remove("GITHUB_ACTIONS")
        .output()
        .unwrap();
    assert_status(&out, 0);
    let report = std::fs::read_to_string(head.path("report.md")).unwrap();
    let c = read_json(&head.path("comparison.json"));
    assert_eq!(c["baseline"]["kind"], "path");
    assert_eq!(measure(&c, 0, "host_inclusive")["verdict"], "slower");
    assert!(report.contains("### Compared with the base branch"));
    assert!(report.contains("**Compared with the base branch**"));
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
        .arg(&history)
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
    assert!(report.contains("ℹ️ no baseline: cannot read "), "{report}");
    assert!(report.contains("no base run of this profile"), "{report}");
    assert!(stderr(&out).contains("nsys-gate: baseline: no baseline: cannot read "));
    let c = read_json(&head.path("comparison.json"));
    assert_eq!(c["runs"], json!([]));
    assert_eq!(c["unmatched_head"][0]["profile_name"], "smoke-tensor");
    // `compare` itself needs both sides: status 2, the side named.
    let out = bin()
        .arg("compare")
        .arg(&nowhere)
        .arg(&head.dir)
        .output()
        .unwrap();
    assert_status(&out, 2);
    assert!(
        stderr(&out).contains("BASE: no base run could be read"),
        "{}",
        stderr(&out)
    );
    let out = bin()
        .arg("compare")
        .arg(&head.dir)
        .arg(&nowhere)
        .output()
        .unwrap();
    assert_status(&out, 2);
    assert!(
        stderr(&out).contains("HEAD: no current run could be read"),
        "{}",
        stderr(&out)
    );
}

/// Of several base paths, the unreadable ones are left out with a warning that names the side
/// and the path, a note in the comparison, and no place among the sources it read.
#[test]
fn an_unreadable_base_path_among_readable_ones_is_warned_noted_and_not_a_source() {
    let nsys = require_nsys!("2024.2");
    let base = analysed("compare-base", &nsys);
    let head = analysed("compare-head", &nsys);
    let tmp = base.dir.parent().unwrap();
    let nowhere = tmp.join("no-such-base");
    let broken = tmp.join("broken");
    std::fs::create_dir_all(&broken).unwrap();
    std::fs::write(broken.join("analysis.json"), "{").unwrap();
    let (out, c) = compare_json(&[&nowhere, &broken, &base.dir, &head.dir]);
    let err = stderr(&out);
    let warnings: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("nsys-gate: warning: "))
        .collect();
    assert_eq!(warnings.len(), 2, "{err}");
    assert!(
        warnings[0].starts_with("nsys-gate: warning: BASE: cannot read ")
            && warnings[0].contains("no-such-base"),
        "{err}"
    );
    assert!(
        warnings[1].starts_with("nsys-gate: warning: BASE: ")
            && warnings[1].contains("broken")
            && warnings[1].contains("is not an analysis.json that nsys-gate wrote"),
        "{err}"
    );
    let notes = c["notes"].as_array().unwrap();
    assert_eq!(notes.len(), 2, "{c:#}");
    for (note, path) in notes.iter().zip(["no-such-base", "broken"]) {
        let note = note.as_str().unwrap();
        assert!(
            note.starts_with("a base run could not be read: ") && note.contains(path),
            "{note}"
        );
    }
    let source = &c["baseline"];
    assert_eq!(
        source["paths"],
        json!([base.dir.display().to_string()]),
        "{source:#}"
    );
    assert_eq!(
        source["analyses"].as_array().unwrap().len(),
        1,
        "{source:#}"
    );
    assert_eq!(c["runs"].as_array().unwrap().len(), 1, "{c:#}");
    // The markdown lists the notes and names only the path read from as the source.
    let out = bin()
        .arg("compare")
        .args([&nowhere, &broken, &base.dir, &head.dir])
        .output()
        .unwrap();
    assert_status(&out, 0);
    let md = String::from_utf8(out.stdout).unwrap();
    assert!(
        md.contains("- ℹ️ a base run could not be read: cannot read "),
        "{md}"
    );
    let sourced = md
        .lines()
        .find(|l| l.starts_with("**Compared with the base branch**"))
        .unwrap();
    assert!(
        !sourced.contains("no-such-base") && !sourced.contains("broken"),
        "{sourced}"
    );
}

#[test]
fn run_with_a_baseline_folder_matches_by_key_and_names_the_unmatched() {
    let nsys = require_nsys!("2024.2");
    let base = analysed("compare-base", &nsys);
    // A folder of base runs: the matching one, and one of another profile.
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
        json!(["a/analysis.json", "b/analysis.json"])
    );
    let report = std::fs::read_to_string(head.path("report.md")).unwrap();
    assert!(
        report.contains("**other-profile** (target smoke-tensor) (base b/analysis.json): no current run of this profile and leg."),
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
        markdown.contains("New range groups (only in head): "),
        "{markdown}"
    );
    assert!(
        markdown.contains("Gone range groups (only in base): "),
        "{markdown}"
    );
    assert!(!markdown.contains("<script>"), "{markdown}");
    assert!(
        !markdown.contains("@octocat"),
        "mentions get a zero-width space"
    );
    insta::assert_snapshot!("compare_hostile_names", redact(&markdown, &[&base, &head]));
}

/// The verdict's simulation (scripts/simulate-verdict.py, whose 1,000-trial figures are in
/// docs/comparison-json.md) still runs against this binary: a few trials of the cases with a
/// certain answer. The seed is fixed, so the synthetic histories are the same every time.
#[test]
fn the_verdict_simulation_runs_and_its_certain_cases_hold() {
    let dir = assert_fs::TempDir::new().unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/simulate-verdict.py");
    let out = std::process::Command::new("python3")
        .arg(&script)
        .arg("--bin")
        .arg(env!("CARGO_BIN_EXE_nsys-gate"))
        .args(["--trials", "3", "--jobs", "2", "--cases", "2a", "3", "7"])
        .arg("--tmpdir")
        .arg(dir.path())
        .output()
        .expect("run python3 scripts/simulate-verdict.py");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}\n{}", stderr(&out));
    let share = |case: &str| -> String {
        let row = text
            .lines()
            .find(|l| l.starts_with(&format!("| {case} |")))
            .unwrap_or_else(|| panic!("no row for case {case} in:\n{text}"));
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        cells[4].split_whitespace().next().unwrap().to_owned()
    };
    // One base run never gives a verdict; 5 % at 1 % noise and one range 10 % slower are found.
    assert_eq!(share("3"), "0.0", "{text}");
    assert_eq!(share("2a"), "100.0", "{text}");
    assert_eq!(share("7"), "100.0", "{text}");
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(
        left.is_empty(),
        "the simulation left files behind: {left:?}"
    );
}

/// Issue 30, item 8: `compare --help`'s exit-status line read backwards ("2 no base path or
/// HEAD has a readable analysis.json").
#[test]
fn compare_help_says_when_it_exits_with_2() {
    let out = crate::common::bin()
        .args(["compare", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8(out.stdout).unwrap().replace('\n', " ");
    let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        help.contains("2 not compared: HEAD has no readable analysis.json, or none of the base paths has one."),
        "{help}"
    );
}

/// Issue 30, item 5: a head with `workload.batch_size: 8` and `quantization: {dtype: bf16}`
/// against bases without them was "the same in all 9 conditions" and got verdicts. Every
/// `workload` key is a judged condition (`workload.KEY`); an unknown top-level key that
/// differs is shown, and judged only when named with `--condition`.
#[test]
fn a_differing_workload_key_is_a_condition_and_unknown_keys_are_shown() {
    let nsys = require_nsys!("2024.2");
    let base = analysed("compare-base", &nsys);
    let history = history(&base, "history", &OFFSETS);
    let head = fixture("compare-base");
    std::fs::create_dir_all(&head.dir).unwrap();
    let mut a: Value = serde_json::from_slice(&rerun_of(
        &std::fs::read(base.path("analysis.json")).unwrap(),
        1.002,
        "head",
        "feedface",
    ))
    .unwrap();
    a["run"]["workload"]["batch_size"] = json!(8);
    a["run"]["extra"]["quantization"] = json!({"dtype": "bf16"});
    std::fs::write(head.path("analysis.json"), serde_json::to_vec(&a).unwrap()).unwrap();

    let (out, c) = compare_json(&[&history, &head.dir]);
    let run = &c["runs"][0];
    assert_eq!(run["like_for_like"], false);
    assert_eq!(
        differing(&c, 0),
        ["git_commit", "workload.batch_size", "manifest.quantization"]
    );
    let condition = |name: &str| {
        run["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == name)
            .unwrap_or_else(|| panic!("no condition {name}: {run}"))
            .clone()
    };
    let batch = condition("workload.batch_size");
    assert_eq!(
        (&batch["judged"], &batch["base"], &batch["head"]),
        (&json!(true), &Value::Null, &json!(8))
    );
    assert_eq!(condition("manifest.quantization")["judged"], false);
    // Every base run differs in a judged condition: none is used, and no verdict is given.
    assert_eq!(run["history"]["used"], json!([]));
    let left_out = &run["history"]["left_out"][0];
    assert_eq!(left_out["differs"], json!(["workload.batch_size"]));
    assert!(measure(&c, 0, "host_inclusive")["verdict"] != "within_noise");
    let markdown = String::from_utf8(out.stdout).unwrap();
    assert!(markdown.contains("**not like for like**"), "{markdown}");
    assert!(
        markdown.contains("| workload.batch\\_size | not recorded | 8 | differs |"),
        "{markdown}"
    );
    assert!(
        markdown.contains("| manifest.quantization | not recorded |"),
        "{markdown}"
    );
    assert!(
        !markdown.contains("The same in all 9 conditions"),
        "{markdown}"
    );

    // Named with --condition, the unknown key is judged too.
    let json = head.dir.join("judged.json");
    let out = bin()
        .args(["compare", "--condition", "quantization", "--json"])
        .arg(&json)
        .arg(&history)
        .arg(&head.dir)
        .output()
        .unwrap();
    assert_status(&out, 0);
    let c = read_json(&json);
    let q = c["runs"][0]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "manifest.quantization")
        .unwrap()
        .clone();
    assert_eq!(
        (q["judged"].clone(), q["differs"].clone()),
        (json!(true), json!(true))
    );
    assert_eq!(
        c["runs"][0]["history"]["left_out"][0]["differs"],
        json!(["workload.batch_size", "manifest.quantization"])
    );
}

/// An analysis.json as another run would give it (`rerun_of`), recorded in CI run `ci_run`
/// on `runner`.
fn ci_rerun(bytes: &[u8], factor: f64, run_id: &str, commit: &str, ci_run: u64) -> Vec<u8> {
    let mut v: Value = serde_json::from_slice(&rerun_of(bytes, factor, run_id, commit)).unwrap();
    v["provenance"]["ci_run"] = json!({"id": ci_run, "attempt": 1});
    v["provenance"]["runner"] = json!("gpu-runner-1");
    serde_json::to_vec_pretty(&v).unwrap()
}

/// Issue 26: a hiccup run, a file whose durations cannot be true and an artifact holding
/// three copies of a profile at the head's speed (one CI run) cannot steer the verdict on a
/// head with 20 % more work; the comment names what was left out and why.
#[test]
fn no_single_base_run_can_steer_the_verdict() {
    let nsys = require_nsys!("2024.2");
    let (base, head) = (
        analysed("compare-base", &nsys),
        analysed("compare-head", &nsys),
    );
    let bytes = std::fs::read(base.path("analysis.json")).unwrap();
    let head_bytes = std::fs::read(head.path("analysis.json")).unwrap();
    let folder = base.dir.parent().unwrap().join("steered");
    let offsets = [1.003, 0.996, 1.005, 0.998, 1.001, 0.997, 1.004, 1.0];
    let write = |name: &str, data: Vec<u8>| {
        let dir = folder.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("analysis.json"), data).unwrap();
    };
    for (k, factor) in offsets.iter().enumerate() {
        // A hiccup: the fourth run 20 % slow.
        let factor = if k == 3 { 1.2 } else { *factor };
        let commit = format!("{k:0>40}");
        write(
            &format!("{k}"),
            ci_rerun(&bytes, factor, &format!("base-{k}"), &commit, k as u64),
        );
    }
    // Durations of zero: numbers that cannot be true.
    let mut zero: Value = serde_json::from_slice(&ci_rerun(&bytes, 1.0, "zero", "z", 50)).unwrap();
    for i in zero["iterations"].as_array_mut().unwrap() {
        i["host"]["inclusive_ns"] = json!(0);
    }
    write("8", serde_json::to_vec(&zero).unwrap());
    // One artifact (one CI run) with three analyses of the head's speed.
    for copy in 0..3 {
        write(
            &format!("9/copy{copy}"),
            ci_rerun(
                &head_bytes,
                1.0,
                &format!("copy-{copy}"),
                &"c".repeat(40),
                99,
            ),
        );
    }
    let (out, c) = compare_json(&[&folder, &head.dir]);
    let run = &c["runs"][0];
    assert_eq!(
        measure(&c, 0, "host_inclusive")["verdict"],
        "slower",
        "{run}"
    );
    let left: Vec<(&str, u64)> = run["history"]["left_out"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l["reason"].as_str().unwrap(),
                l["run"]["repeats"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        left,
        [("outlier", 1), ("invalid", 1), ("outlier", 3)],
        "{run}"
    );
    assert_eq!(run["history"]["used"].as_array().unwrap().len(), 7);
    assert!(c["notes"][0]
        .as_str()
        .unwrap()
        .contains("combines several analyses"));
    let markdown = String::from_utf8(out.stdout).unwrap();
    assert!(
        markdown.contains("2 base runs are left out as far from the rest of the history"),
        "{markdown}"
    );
    assert!(
        markdown.contains("1 base run is left out because its numbers cannot be true"),
        "{markdown}"
    );
}

/// Issue 26: a base branch that gets 0.8 % slower with every merge is named as drifting,
/// and a head at its newest level is judged against the trend, not blamed for it.
#[test]
fn a_drifting_base_branch_is_named_and_the_head_not_blamed() {
    let nsys = require_nsys!("2024.2");
    let base = analysed("compare-base", &nsys);
    let bytes = std::fs::read(base.path("analysis.json")).unwrap();
    let offsets = [1.003, 0.996, 1.004, 0.998, 1.002, 0.997, 1.001];
    let factors: Vec<f64> = (0..20)
        .map(|k| offsets[k % 7] * 1.008f64.powi((k as i32 - 7).max(0)))
        .collect();
    let history = history(&base, "drifting", &factors);
    let head = fixture("compare-base");
    std::fs::create_dir_all(&head.dir).unwrap();
    std::fs::write(
        head.path("analysis.json"),
        rerun_of(&bytes, 1.008f64.powi(12), "head", "feedface"),
    )
    .unwrap();
    let (out, c) = compare_json(&[&history, &head.dir]);
    let drift = &c["runs"][0]["history"]["drift"];
    let change = drift["change_pct"].as_f64().unwrap();
    assert!((8.0..12.0).contains(&change), "{drift}");
    assert_eq!(drift["measure"], "host_inclusive");
    assert_eq!(measure(&c, 0, "host_inclusive")["verdict"], "within_noise");
    let markdown = String::from_utf8(out.stdout).unwrap();
    assert!(markdown.contains("has drifted +"), "{markdown}");
    assert!(markdown.contains("not this change's doing"), "{markdown}");
    assert!(markdown.contains("see changes of about"), "{markdown}");
}

/// Issue 26: analysis.json records the CI run and the runner in GitHub Actions, and nothing
/// outside it.
#[test]
fn the_ci_run_and_runner_are_recorded_in_ci_only() {
    let nsys = require_nsys!("2024.2");
    let run = fixture("compare-base");
    let out = bin()
        .args(["analyze", "--run-dir"])
        .arg(&run.dir)
        .arg("--nsys")
        .arg(&nsys)
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_RUN_ID", "4242")
        .env("GITHUB_RUN_ATTEMPT", "2")
        .env("RUNNER_NAME", "gpu-runner-7")
        .output()
        .unwrap();
    assert_status(&out, 0);
    let a = run.analysis();
    assert_eq!(a["provenance"]["ci_run"], json!({"id": 4242, "attempt": 2}));
    assert_eq!(a["provenance"]["runner"], "gpu-runner-7");
    let out = bin()
        .args(["analyze", "--reuse-stats", "--run-dir"])
        .arg(&run.dir)
        .env_remove("GITHUB_ACTIONS")
        .env("RUNNER_NAME", "not-in-ci")
        .output()
        .unwrap();
    assert_status(&out, 0);
    let a = run.analysis();
    assert_eq!(a["provenance"]["ci_run"], Value::Null);
    assert_eq!(a["provenance"]["runner"], Value::Null);
}
