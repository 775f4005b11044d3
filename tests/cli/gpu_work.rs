//! `gpu_work`: the GPU-work reports on real exports with injected CUDA tables, on each tested
//! nsys, checked against nsys's own JSON output of the same reports; what a failed report
//! leaves; no CUDA data at all; `--reuse-stats`; one call against concurrent processes.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use serde_json::Value;

use crate::common::{
    self, analysed_with_status, analyze, assert_status, codes, fixture, plain_pushpop, read_json,
    warning, Run,
};
use crate::require_nsys;

/// The gpu-work fixture of each tested nsys, with the nsys that reads it.
const VERSIONS: [(&str, &str); 3] = [
    ("gpu-work", "2024.2"),
    ("gpu-work-2023.4", "2023.4"),
    ("gpu-work-2022.4", "2022.4"),
];

/// nsys's JSON output of one report of `trace` (nsys 2022.4's legacy name when `legacy`).
/// nsys leaves newlines raw inside JSON strings: they are escaped before parsing.
pub fn nsys_json(nsys: &Path, trace: &Path, report: &str, format: &str) -> Vec<Value> {
    let tmp = assert_fs::TempDir::new().unwrap();
    let out = tmp.path().join("j");
    let status = std::process::Command::new(nsys)
        .args([
            "stats",
            "--report",
            report,
            "--format",
            format,
            "--timeunit",
            "nsec",
        ])
        .arg("--output")
        .arg(&out)
        .arg("--force-overwrite=true")
        .arg(trace)
        .output()
        .unwrap();
    assert!(status.status.success(), "{status:?}");
    let path = tmp
        .path()
        .join(format!("j_{}.json", report.replace(':', "_")));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{report}: {e}"));
    let mut escaped = String::new();
    let mut in_string = false;
    let mut backslash = false;
    for c in text.chars() {
        match c {
            '\n' if in_string => escaped.push_str("\\n"),
            '"' if !backslash => {
                in_string = !in_string;
                escaped.push(c);
            }
            _ => escaped.push(c),
        }
        backslash = c == '\\' && !backslash;
    }
    serde_json::from_str::<Vec<Value>>(&escaped).unwrap()
}

/// `nsys-gate report` of an analysed run directory: its report.md.
fn report_of(run: &Run) -> String {
    let out = common::bin()
        .args(["report", "--run-dir"])
        .arg(&run.dir)
        .output()
        .unwrap();
    assert_status(&out, 0);
    common::report_md(run)
}

fn int(v: &Value) -> i64 {
    v.as_i64().unwrap_or_else(|| panic!("not an integer: {v}"))
}

fn text(v: &Value) -> Option<String> {
    match v.as_str() {
        None | Some("" | "None") => None,
        Some(s) => Some(s.to_owned()),
    }
}

fn legacy(version: &str) -> bool {
    version == "2022.4"
}

/// `gpu_work.kernels` against nsys's JSON `cuda_gpu_kern_sum` (rows merged by name).
fn check_kernels(a: &Value, json: &[Value]) {
    let mut want: BTreeMap<String, (i64, i64, i64, i64)> = BTreeMap::new();
    for r in json {
        let e = want
            .entry(r["Name"].as_str().unwrap().to_owned())
            .or_insert((0, 0, i64::MAX, 0));
        e.0 += int(&r["Instances"]);
        e.1 += int(&r["Total Time (ns)"]);
        e.2 = e.2.min(int(&r["Min (ns)"]));
        e.3 = e.3.max(int(&r["Max (ns)"]));
    }
    let kernels = a["gpu_work"]["kernels"].as_array().unwrap();
    assert_eq!(kernels.len(), want.len());
    let all: i64 = want.values().map(|w| w.1).sum();
    for k in kernels {
        let w = want[k["name"].as_str().unwrap()];
        assert_eq!(
            (
                int(&k["instances"]),
                int(&k["total_ns"]),
                int(&k["minimum_ns"]),
                int(&k["maximum_ns"])
            ),
            w,
            "{k}"
        );
        let share = k["share"].as_f64().unwrap();
        assert!((share - w.1 as f64 / all as f64).abs() < 1e-12, "{k}");
    }
    // Largest total first.
    let totals: Vec<i64> = kernels.iter().map(|k| int(&k["total_ns"])).collect();
    assert!(totals.windows(2).all(|w| w[0] >= w[1]), "{totals:?}");
}

/// `gpu_work.memory_copies`, `memsets` and `devices` against nsys's JSON `cuda_gpu_trace`.
fn check_trace(a: &Value, json: &[Value]) {
    type Key = (String, Option<String>, Option<String>);
    let mut copies: BTreeMap<Key, (u64, i64, i64)> = BTreeMap::new();
    let mut memsets = (0u64, 0i64, 0i64);
    let mut devices: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    for r in json {
        let device = devices
            .entry(r["Device"].as_str().unwrap().to_owned())
            .or_default();
        let Some(bytes) = r["Bytes (B)"].as_i64() else {
            device.0 += 1;
            continue;
        };
        device.1 += 1;
        let name = r["Name"].as_str().unwrap();
        let duration = int(&r["Duration (ns)"]);
        if name == "[CUDA memset]" {
            memsets = (memsets.0 + 1, memsets.1 + bytes, memsets.2 + duration);
            continue;
        }
        let kind = name
            .trim_start_matches("[CUDA memcpy ")
            .trim_end_matches(']')
            .replace("HtoD", "Host-to-Device")
            .replace("DtoH", "Device-to-Host");
        let e = copies
            .entry((kind, text(&r["SrcMemKd"]), text(&r["DstMemKd"])))
            .or_default();
        *e = (e.0 + 1, e.1 + bytes, e.2 + duration);
    }
    let g = &a["gpu_work"];
    let got: BTreeMap<Key, (u64, i64, i64)> = g["memory_copies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                (
                    c["copy_kind"].as_str().unwrap().to_owned(),
                    c["source"].as_str().map(str::to_owned),
                    c["destination"].as_str().map(str::to_owned),
                ),
                (
                    c["count"].as_u64().unwrap(),
                    int(&c["bytes"]),
                    int(&c["total_ns"]),
                ),
            )
        })
        .collect();
    assert_eq!(got, copies);
    assert_eq!(
        (
            g["memsets"]["count"].as_u64().unwrap(),
            int(&g["memsets"]["bytes"]),
            int(&g["memsets"]["total_ns"])
        ),
        memsets
    );
    let got: BTreeMap<String, (u64, u64)> = g["devices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["device"].as_str().unwrap().to_owned(),
                (
                    d["kernels"].as_u64().unwrap(),
                    d["memory_operations"].as_u64().unwrap(),
                ),
            )
        })
        .collect();
    assert_eq!(got, devices);
}

/// The kernels per range, computed here the slow and obvious way from nsys's JSON
/// `cuda_api_trace` and `cuda_gpu_trace` and an ordinary reading of the push/pop CSV: each
/// kernel's API call, the innermost range of its thread containing it, its scoped name below
/// a counted iteration; every enclosing scoped name gets the kernel too.
fn check_per_range(run: &Run, a: &Value, api: &[Value], trace: &[Value]) {
    let rows = plain_pushpop(&run.path("stats/nsys_nvtx_pushpop_trace.csv"));
    let iterations: Vec<u64> = a["iterations"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["complete"] == true && i["duplicate"] == false)
        .map(|i| i["range_id"].as_u64().unwrap())
        .collect();
    let by_id: HashMap<u64, &common::CsvRange> = rows.iter().map(|r| (r.range_id, r)).collect();
    let calls: HashMap<i64, (i64, i64, i64)> = api
        .iter()
        .map(|c| {
            let start = int(&c["Start (ns)"]);
            (
                int(&c["CorrID"]),
                (start, start + int(&c["Duration (ns)"]), int(&c["Tid"])),
            )
        })
        .collect();
    // scoped name -> kernel name -> (launches, total)
    let mut want: BTreeMap<String, BTreeMap<String, (u64, i64)>> = BTreeMap::new();
    let mut in_iterations = 0;
    for k in trace.iter().filter(|r| r["GrdX"].as_i64().is_some()) {
        let (start, end, tid) = calls[&int(&k["CorrId"])];
        let innermost = rows
            .iter()
            .filter(|r| r.tid as i64 == tid && r.start <= start && r.end >= end)
            .min_by_key(|r| r.end - r.start);
        let Some(mut r) = innermost else { continue };
        let mut names = Vec::new();
        while !iterations.contains(&r.range_id) {
            names.push(r.name.clone());
            match r.parent_id {
                Some(p) => r = by_id[&p],
                None => break,
            }
        }
        if !iterations.contains(&r.range_id) {
            continue;
        }
        in_iterations += 1;
        names.reverse();
        let kernel = k["Name"].as_str().unwrap().to_owned();
        for depth in 0..=names.len() {
            let scope = names[..depth].join(".");
            let e = want
                .entry(scope)
                .or_default()
                .entry(kernel.clone())
                .or_default();
            e.0 += 1;
            e.1 += int(&k["Duration (ns)"]);
        }
    }
    let g = &a["gpu_work"];
    assert_eq!(
        g["kernel_attribution"]["in_counted_iterations"],
        in_iterations
    );
    let mix = |kernels: &Value| -> BTreeMap<String, (u64, i64)> {
        kernels
            .as_array()
            .unwrap()
            .iter()
            .map(|k| {
                (
                    k["name"].as_str().unwrap().to_owned(),
                    (k["launches"].as_u64().unwrap(), int(&k["total_ns"])),
                )
            })
            .collect()
    };
    // The fixtures' mixes have fewer kernels than the top few: nothing in `other_kernels`.
    assert_eq!(mix(&g["iteration_kernels"]["kernels"]), want[""]);
    let ranges = g["per_range_kernels"].as_array().unwrap();
    let listed: Vec<&str> = ranges.iter().map(|r| r["name"].as_str().unwrap()).collect();
    let expected: Vec<&str> = want
        .keys()
        .filter(|k| !k.is_empty())
        .map(String::as_str)
        .collect();
    let mut sorted = listed.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, expected);
    for r in ranges {
        assert_eq!(mix(&r["kernels"]), want[r["name"].as_str().unwrap()], "{r}");
        assert!(r["other_kernels"].is_null());
    }
}

#[test]
fn gpu_work_matches_nsys_json_output_on_every_tested_version() {
    for (name, version) in VERSIONS {
        let nsys = require_nsys!(version);
        let run = fixture(name);
        assert_status(&analyze(&run.dir, &nsys, &[]), 0);
        let a = run.analysis();
        let trace = run.path("trace.sqlite");
        let report = |new: &str, old: &str| {
            if legacy(version) {
                old.to_owned()
            } else {
                new.to_owned()
            }
        };
        let kern = nsys_json(
            &nsys,
            &trace,
            &report("cuda_gpu_kern_sum", "gpukernsum"),
            "json",
        );
        let gpu = nsys_json(
            &nsys,
            &trace,
            &report("cuda_gpu_trace", "gputrace"),
            "json:mem=B",
        );
        let api = nsys_json(
            &nsys,
            &trace,
            &report("cuda_api_trace", "cudaapitrace"),
            "json",
        );
        check_kernels(&a, &kern);
        check_trace(&a, &gpu);
        check_per_range(&run, &a, &api, &gpu);
        // The base names are nsys's own (`cuda_gpu_kern_sum:base`, the export's shortName).
        let base = nsys_json(
            &nsys,
            &trace,
            &report("cuda_gpu_kern_sum:base", "gpukernsum:base"),
            "json",
        );
        let mut want: Vec<&str> = base.iter().map(|r| r["Name"].as_str().unwrap()).collect();
        want.sort_unstable();
        want.dedup();
        let mut got: Vec<&str> = a["gpu_work"]["kernels"]
            .as_array()
            .unwrap()
            .iter()
            .map(|k| k["base_name"].as_str().unwrap())
            .collect();
        got.sort_unstable();
        assert_eq!(got, want, "{version}");

        let g = &a["gpu_work"];
        assert_eq!(g["unavailable"], serde_json::json!({}), "{version}");
        // What the fixture holds (tests/fixtures/README.md), beside nsys's own numbers.
        assert_eq!(
            g["devices"][0]["name"], "NVIDIA A100-SXM4-80GB",
            "{version}"
        );
        assert_eq!(g["devices"][0]["id"], 0);
        assert!(g["kernels"]
            .as_array()
            .unwrap()
            .iter()
            .any(|k| k["name"]
                == r#"void attention_kernel<"causal",64, cutlass::half_t>(int, float const*, "x",1,2)"#));
        let ranges: Vec<&str> = g["per_range_kernels"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["name"].as_str().unwrap())
            .collect();
        // Largest GPU-projected total first; `postprocessing.resize` launched nothing.
        assert_eq!(
            ranges,
            ["inference", "preprocessing", "preprocessing.resize"],
            "{version}"
        );
        assert_eq!(g["iteration_kernels"]["launches"], 15);
        assert_eq!(g["kernel_attribution"]["report"], "cuda_kern_exec_trace");
        assert_eq!(
            a["provenance"]["report_status"]["cuda_api_trace"]["status"], "skipped",
            "not asked of an nsys with cuda_kern_exec_trace"
        );
        // No name here has digits: each group is one range, with the same mix.
        let groups = g["per_range_kernel_groups"].as_array().unwrap();
        assert_eq!(groups.len(), ranges.len());
        for (group, range) in groups
            .iter()
            .zip(g["per_range_kernels"].as_array().unwrap())
        {
            assert_eq!(group["group"], range["name"]);
            assert_eq!(group["kernels"], range["kernels"]);
        }
        assert_eq!(
            g["kernel_attribution"]["elsewhere"], 5,
            "reduce_sum_kernel, between iterations"
        );
        let w = warning(&a, "pageable_memory_copies");
        assert_eq!(
            (w["count"].as_u64(), w["bytes"].as_u64()),
            (Some(10), Some(5 * 49152 + 5 * 16384))
        );
        assert_eq!(w["gating"], false);
        assert!(!codes(&a).contains(&"gpu_work_unavailable".to_owned()));
        assert!(!codes(&a).contains(&"nsys_version_untested".to_owned()));
    }
}

#[test]
fn a_failed_gpu_trace_leaves_its_parts_null_and_keeps_the_rest() {
    // The gpu-projection fixtures have CUDA data but no TARGET_INFO_GPU table: nsys 2024.2
    // skips cuda_gpu_trace for it, nsys 2022.4 fails on it (exit 0, an internal error). The
    // kernels per range come from cuda_kern_exec_trace, which needs no GPU description.
    for (name, version, words) in [
        (
            "gpu-projection",
            "2024.2",
            "trace.sqlite file does not contain TARGET_INFO_GPU table.",
        ),
        (
            "gpu-projection-2022.4",
            "2022.4",
            "ERROR: Report 'gputrace.py' encountered an internal error: no such table: TARGET_INFO_GPU",
        ),
    ] {
        let nsys = require_nsys!(version);
        let run = fixture(name);
        assert_status(&analyze(&run.dir, &nsys, &[]), 0);
        let a = run.analysis();
        let g = &a["gpu_work"];
        assert_eq!(g["kernels"].as_array().unwrap().len(), 3, "{version}");
        for part in ["devices", "memory_copies", "memsets"] {
            assert!(g[part].is_null(), "{version} {part}");
            let why = g["unavailable"][part].as_str().unwrap();
            assert!(why.contains("cuda_gpu_trace") && why.contains(words), "{why}");
        }
        for part in [
            "iteration_kernels",
            "per_range_kernels",
            "per_range_kernel_groups",
            "kernel_attribution",
        ] {
            assert!(!g[part].is_null(), "{version} {part}");
        }
        // Every kernel of the capture, counted by the kernel summary.
        assert_eq!(
            g["kernel_attribution"],
            serde_json::json!({"kernels": 15, "in_counted_iterations": 10, "elsewhere": 5,
                               "without_api_call": 0, "ambiguous": 0,
                               "report": "cuda_kern_exec_trace"}),
            "{version}"
        );
        assert!(g["unavailable"]["kernels"].is_null());
        let w = warning(&a, "gpu_work_unavailable");
        assert_eq!(w["report"], "cuda_gpu_trace");
        assert_eq!(w["gating"], false);
        assert!(w["message"].as_str().unwrap().contains(words), "{w}");
        let status = &a["provenance"]["report_status"]["cuda_gpu_trace"];
        assert_eq!(status["status"], "skipped");
        // The rest of the analysis is as before.
        assert!(!a["iteration_summary"]["gpu_projected"].is_null());
        assert!(!codes(&a).contains(&"gpu_projection_unavailable".to_owned()));
    }
}

#[test]
fn no_cuda_data_at_all_is_gpu_work_null_with_one_warning() {
    let nsys = require_nsys!("2024.2");
    let run = analysed_with_status("clean", &nsys, 0);
    let a = run.analysis();
    assert!(a["gpu_work"].is_null());
    let c = codes(&a);
    assert!(
        c.contains(&"gpu_projection_unavailable".to_owned()),
        "{c:?}"
    );
    assert!(!c.contains(&"gpu_work_unavailable".to_owned()), "{c:?}");
    for report in [
        "cuda_gpu_kern_sum",
        "cuda_gpu_kern_sum:base",
        "cuda_gpu_trace",
        "cuda_kern_exec_trace",
        "cuda_api_trace",
    ] {
        assert_eq!(
            a["provenance"]["report_status"][report]["status"],
            "skipped"
        );
    }
}

#[test]
fn reuse_stats_reads_the_gpu_work_csvs_and_classifies_what_is_wrong_with_them() {
    let nsys = require_nsys!("2024.2");
    let run = analysed_with_status("gpu-work", &nsys, 0);
    let first = run.analysis();
    assert_status(&common::reuse_stats(&run.dir), 0);
    let again = run.analysis();
    assert_eq!(again["gpu_work"], first["gpu_work"]);

    // The GPU trace written in MB instead of bytes: a missing column, named.
    let csv = run.path("stats/nsys_cuda_gpu_trace.csv");
    let original = std::fs::read_to_string(&csv).unwrap();
    std::fs::write(&csv, original.replacen("Bytes (B)", "Bytes (MB)", 1)).unwrap();
    assert_status(&common::reuse_stats(&run.dir), 0);
    let a = run.analysis();
    let why = a["gpu_work"]["unavailable"]["memory_copies"]
        .as_str()
        .unwrap();
    assert!(why.contains("missing required column `Bytes`"), "{why}");
    assert!(why.contains("nsys_cuda_gpu_trace.csv"), "{why}");
    assert_eq!(a["gpu_work"]["kernels"], first["gpu_work"]["kernels"]);

    // nsys's base names win where their sums pin them down: a summary naming the attention
    // kernel's base `half_t` (an identifier of its name) gives it that name, in the mixes too.
    std::fs::write(&csv, &original).unwrap();
    let base_csv = run.path("stats/nsys_cuda_gpu_kern_sum_base.csv");
    let base = std::fs::read_to_string(&base_csv).unwrap();
    assert!(base.contains(",attention_kernel\n"), "{base}");
    std::fs::write(&base_csv, base.replace(",attention_kernel\n", ",half_t\n")).unwrap();
    assert_status(&common::reuse_stats(&run.dir), 0);
    let a = run.analysis();
    let attention = |kernels: &Value| -> Option<String> {
        kernels
            .as_array()
            .unwrap()
            .iter()
            .find(|k| k["name"].as_str().unwrap().contains("attention_kernel<"))
            .map(|k| k["base_name"].as_str().unwrap().to_owned())
    };
    assert_eq!(
        attention(&a["gpu_work"]["kernels"]).as_deref(),
        Some("half_t")
    );
    assert_eq!(
        attention(&a["gpu_work"]["iteration_kernels"]["kernels"]).as_deref(),
        Some("half_t")
    );
    // A summary that is not there: derived base names, and a note of it.
    std::fs::write(&base_csv, "").unwrap();
    assert_status(&common::reuse_stats(&run.dir), 0);
    let a = run.analysis();
    assert_eq!(
        attention(&a["gpu_work"]["kernels"]).as_deref(),
        Some("attention_kernel")
    );
    let w = warning(&a, "gpu_work_unavailable");
    assert_eq!(w["report"], "cuda_gpu_kern_sum:base");
    assert_eq!(a["gpu_work"]["unavailable"], serde_json::json!({}));
    std::fs::write(&base_csv, &base).unwrap();

    // A 0-byte kernel launch trace: the kernels per range are unavailable, the copies are back.
    std::fs::write(&csv, &original).unwrap();
    std::fs::write(run.path("stats/nsys_cuda_kern_exec_trace.csv"), "").unwrap();
    assert_status(&common::reuse_stats(&run.dir), 0);
    let a = run.analysis();
    let g = &a["gpu_work"];
    assert_eq!(g["memory_copies"], first["gpu_work"]["memory_copies"]);
    assert!(g["per_range_kernels"].is_null());
    let why = g["unavailable"]["per_range_kernels"].as_str().unwrap();
    assert!(why.contains("empty file (0 bytes)"), "{why}");
    // One warning: cuda_api_trace was not asked, so its absence is not a second one.
    let w: Vec<&Value> = a["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["code"] == "gpu_work_unavailable")
        .collect();
    assert_eq!(w.len(), 1, "{w:?}");
    assert_eq!(w[0]["report"], "cuda_kern_exec_trace");
}

#[test]
fn an_untested_nsys_version_is_a_note() {
    let nsys = require_nsys!("2024.2");
    let run = analysed_with_status("gpu-work", &nsys, 0);
    // No nsys 2025.1 here: the stamp says the CSVs came from one (they are 2024.2's, and
    // their columns are the same in the public outputs of 2025.x).
    let stamp = run.path("stats/nsys-gate-stats.json");
    let text = std::fs::read_to_string(&stamp).unwrap();
    std::fs::write(
        &stamp,
        text.replace("2024.2.3.38-242334140272v0", "2025.1.1.131-251135540420v0"),
    )
    .unwrap();
    assert_status(&common::reuse_stats(&run.dir), 0);
    let a = run.analysis();
    let w = warning(&a, "nsys_version_untested");
    assert_eq!(w["gating"], false);
    let message = w["message"].as_str().unwrap();
    assert!(message.contains("2025.1.1.131-251135540420v0"), "{message}");
    assert!(message.contains("2022.4, 2023.4, 2024.2"), "{message}");
}

/// The same analysis whether nsys runs the reports in one call or in concurrent processes,
/// for a `.sqlite` trace (read by all at once) and a `.nsys-rep` (exported by the first
/// process, then removed), on every tested nsys.
#[test]
fn concurrent_processes_give_the_analysis_of_one_call() {
    for (name, version) in [
        ("gpu-work", "2024.2"),
        ("clean", "2024.2"),
        ("gpu-work-2023.4", "2023.4"),
        ("clean-2023.4", "2023.4"),
        ("gpu-work-2022.4", "2022.4"),
        ("clean-2022.4", "2022.4"),
    ] {
        let nsys = require_nsys!(version);
        let mut analyses = Vec::new();
        for processes in ["1", "2", "3"] {
            let run = fixture(name);
            let out = analyze(&run.dir, &nsys, &["--nsys-processes", processes]);
            assert_status(&out, 0);
            assert!(
                !run.path("stats/trace.sqlite").exists(),
                "{name} {processes}"
            );
            let mut a = read_json(&run.path("analysis.json"));
            a["provenance"]["run_dir"] = Value::Null;
            analyses.push(a);
        }
        assert_eq!(analyses[0], analyses[1], "{name}");
        assert_eq!(analyses[0], analyses[2], "{name}");
    }
}

/// A real nsys whose install lacks a GPU-work report: the report is not asked for, its parts
/// are `null`, and `gpu_work_unavailable` says this nsys has no such report.
#[test]
fn an_nsys_without_a_gpu_work_report_leaves_its_parts_null() {
    let real = require_nsys!("2024.2");
    let (_install, copy) =
        common::nsys_without(&real, &["cuda_kern_exec_trace.py", "cuda_api_trace.py"]);
    let run = fixture("gpu-work");
    assert_status(&analyze(&run.dir, &copy, &[]), 0);
    let a = run.analysis();
    let g = &a["gpu_work"];
    assert!(g["per_range_kernels"].is_null());
    assert!(!g["memory_copies"].is_null());
    let why = g["unavailable"]["per_range_kernels"].as_str().unwrap();
    assert!(
        why.contains("has no `cuda_kern_exec_trace` report"),
        "{why}"
    );
    assert!(why.contains("has no `cuda_api_trace` report"), "{why}");
    let reports: Vec<&Value> = a["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["code"] == "gpu_work_unavailable")
        .map(|w| &w["report"])
        .collect();
    assert_eq!(reports, ["cuda_api_trace", "cuda_kern_exec_trace"]);
    for report in ["cuda_kern_exec_trace", "cuda_api_trace"] {
        assert_eq!(
            a["provenance"]["report_status"][report]["status"],
            "skipped"
        );
    }
}

/// Two processes whose correlation ids overlap (`gpu-processes`: a second process on GPU 1,
/// its calls numbered from the same start): with `cuda_kern_exec_trace` each kernel is placed
/// by its own process's call, none ambiguous; the second process's kernels, launched on its
/// own thread outside the counted iterations, land in none of the first's ranges. An nsys
/// without that report joins `cuda_api_trace` on the correlation id alone, as before: the
/// kernels of the repeated ids are left out, and the report says so.
#[test]
fn kernels_of_processes_with_overlapping_correlation_ids_land_in_their_own_ranges() {
    let nsys = require_nsys!("2024.2");
    let run = analysed_with_status("gpu-processes", &nsys, 0);
    let a = run.analysis();
    let g = &a["gpu_work"];
    // 25 kernels of the first process (20 in its iterations, 5 between them), 10 of the second.
    assert_eq!(
        g["kernel_attribution"],
        serde_json::json!({"kernels": 35, "in_counted_iterations": 20, "elsewhere": 15,
                           "without_api_call": 0, "ambiguous": 0,
                           "report": "cuda_kern_exec_trace"})
    );
    // The first process's ranges hold its own kernels only (the second's are `__half` and NCCL).
    let mix = |r: &Value| -> Vec<(String, u64)> {
        r["kernels"]
            .as_array()
            .unwrap()
            .iter()
            .map(|k| {
                (
                    k["base_name"].as_str().unwrap().to_owned(),
                    k["launches"].as_u64().unwrap(),
                )
            })
            .collect()
    };
    let ranges: BTreeMap<&str, Vec<(String, u64)>> = g["per_range_kernels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["name"].as_str().unwrap(), mix(r)))
        .collect();
    let pair = |n: &str, l: u64| (n.to_owned(), l);
    assert_eq!(
        ranges["inference"],
        [pair("attention_kernel", 5), pair("conv2d_fprop_kernel", 5)]
    );
    assert_eq!(
        ranges["preprocessing.resize"],
        [
            pair("resize_bilinear_kernel", 5),
            pair("distribution_elementwise_grid_stride_kernel", 5)
        ]
    );
    assert!(g["per_range_kernels"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r["kernels"].as_array().unwrap())
        .all(|k| !k["name"].as_str().unwrap().contains("__half")));
    assert_eq!(g["devices"].as_array().unwrap().len(), 2);

    // The report: short names, the two conv2d_fprop_kernel told apart, full names collapsed.
    let md = report_of(&run);
    assert!(md.contains(r"conv2d\_fprop\_kernel \[1\]"), "{md}");
    assert!(md.contains(r"conv2d\_fprop\_kernel \[2\]"), "{md}");
    assert!(md.contains("<summary>Kernel names in full"), "{md}");
    assert!(
        md.contains(
            r"- **conv2d\_fprop\_kernel \[2\]**: void conv2d\_fprop\_kernel&lt;\_\_half, 64, 8&gt;"
        ),
        "{md}"
    );
    // In the kernel-mix table's cells a long name is shortened (the table fits 760 px); the
    // list of names in full gives it whole.
    assert!(md.contains(r"distribution\_elementwis… 28.6"), "{md}");
    assert!(
        md.contains(r"- **distribution\_elementwise\_grid\_stride\_kernel**: void"),
        "{md}"
    );
    let pytorch = md
        .lines()
        .filter(|l| l.contains(r"distribution\_elementwise\_grid\_stride\_kernel"))
        .filter(|l| l.contains(r"normal\_and\_transform"))
        .count();
    assert_eq!(pytorch, 1, "the full name once: {md}");
    assert!(!md.contains("left out of the kernel mixes"), "{md}");

    // Without cuda_kern_exec_trace: the old join, ambiguous kernels, and the note.
    let (_install, copy) = common::nsys_without(&nsys, &["cuda_kern_exec_trace.py"]);
    let old = fixture("gpu-processes");
    assert_status(&analyze(&old.dir, &copy, &[]), 0);
    let b = old.analysis();
    let k = &b["gpu_work"]["kernel_attribution"];
    assert_eq!(k["report"], "cuda_api_trace");
    // The second process's 10 calls reuse ids 101-110 of the first's: every kernel of those
    // ids is left out, the second process's 10 and the first's 6 (4 of them in its counted
    // iterations, 2 between them).
    assert_eq!(
        (
            k["ambiguous"].as_u64(),
            k["in_counted_iterations"].as_u64(),
            k["elsewhere"].as_u64()
        ),
        (Some(16), Some(16), Some(3)),
        "{k}"
    );
    assert!(!codes(&b).contains(&"gpu_work_unavailable".to_owned()));
    let md = report_of(&old);
    assert!(
        md.contains("16 kernel launches are left out of the kernel mixes"),
        "{md}"
    );
}
