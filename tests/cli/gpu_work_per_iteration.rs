//! `gpu_work.kernels_by_base_name` and the memory copies' `iteration_*` fields on real
//! fixtures, every number computed here again the slow and obvious way from nsys's own JSON
//! output: `cuda_gpu_kern_sum:base` for the capture's totals; `cuda_kern_exec_trace` (or
//! `cuda_api_trace` joined with `cuda_gpu_trace`) and an ordinary reading of the push/pop CSV
//! for what the counted iterations launched.

use std::collections::{BTreeMap, HashMap};

use serde_json::Value;

use crate::common::{self, analyze, assert_status, fixture, plain_pushpop, CsvRange, Run};
use crate::gpu_work::nsys_json;
use crate::require_nsys;

fn int(v: &Value) -> i64 {
    v.as_i64().unwrap_or_else(|| panic!("not an integer: {v}"))
}

/// A kernel or copy with the CUDA API call that launched it.
struct Launch {
    name: String,
    pid: u64,
    tid: u64,
    call_start: i64,
    call_end: i64,
    duration: i64,
    /// A copy's bytes (0 for a kernel).
    bytes: i64,
}

/// Each run of ASCII digits written `#`.
fn grouped(name: &str) -> String {
    let mut out = String::new();
    let mut in_digits = false;
    for c in name.chars() {
        if !c.is_ascii_digit() {
            out.push(c);
        } else if !in_digits {
            out.push('#');
        }
        in_digits = c.is_ascii_digit();
    }
    out
}

/// The push/pop ranges of a run and its counted iterations' range ids.
struct Ranges {
    rows: Vec<CsvRange>,
    counted: Vec<u64>,
}

impl Ranges {
    fn of(run: &Run, a: &Value) -> Self {
        Ranges {
            rows: plain_pushpop(&run.path("stats/nsys_nvtx_pushpop_trace.csv")),
            counted: a["iterations"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|i| i["complete"] == true && i["duplicate"] == false)
                .map(|i| i["range_id"].as_u64().unwrap())
                .collect(),
        }
    }

    /// The group of the innermost range around a call below a counted iteration (`""` for the
    /// iteration itself); `None` for a call outside every counted iteration.
    fn place(&self, l: &Launch) -> Option<String> {
        let innermost = self
            .rows
            .iter()
            .filter(|r| {
                r.pid == l.pid && r.tid == l.tid && r.start <= l.call_start && r.end >= l.call_end
            })
            .min_by_key(|r| r.end - r.start)?;
        let mut names = Vec::new();
        let mut r = innermost;
        while !self.counted.contains(&r.range_id) {
            names.push(r.name.as_str());
            r = self.rows.iter().find(|p| Some(p.range_id) == r.parent_id)?;
        }
        names.reverse();
        Some(grouped(&names.join(".")))
    }
}

/// `kernels_by_base_name` against nsys's base-name summary (`base`) and the kernels `launches`
/// placed in the counted iterations here.
fn check_base_names(ranges: &Ranges, a: &Value, base: &[Value], launches: &[Launch]) {
    let g = &a["gpu_work"];
    // The base name of each kernel: the analysis's, which gpu_work.rs checks against nsys's.
    let kernels = g["kernels"].as_array().unwrap();
    let base_of: HashMap<&str, &str> = kernels
        .iter()
        .map(|k| {
            (
                k["name"].as_str().unwrap(),
                k["base_name"].as_str().unwrap(),
            )
        })
        .collect();
    let mut names: HashMap<&str, u64> = HashMap::new();
    for b in base_of.values() {
        *names.entry(b).or_default() += 1;
    }
    let mut capture: BTreeMap<String, (u64, i64)> = BTreeMap::new();
    for r in base {
        let e = capture
            .entry(r["Name"].as_str().unwrap().to_owned())
            .or_default();
        e.0 += r["Instances"].as_u64().unwrap();
        e.1 += int(&r["Total Time (ns)"]);
    }
    // Base name -> (launches, total, group -> total) in the counted iterations.
    type Launched = (u64, i64, BTreeMap<String, i64>);
    let mut launched: BTreeMap<&str, Launched> = BTreeMap::new();
    for l in launches {
        let Some(group) = ranges.place(l) else {
            continue;
        };
        let e = launched.entry(base_of[l.name.as_str()]).or_default();
        e.0 += 1;
        e.1 += l.duration;
        if !group.is_empty() {
            *e.2.entry(group).or_default() += l.duration;
        }
    }
    let iterations = ranges.counted.len() as u64;
    assert_eq!(g["iteration_kernels"]["iterations"], iterations);

    let mut want: Vec<Value> = capture
        .iter()
        .map(|(b, (instances, total))| {
            let (launches, in_iterations, by_group) =
                launched.get(b.as_str()).cloned().unwrap_or_default();
            let mut groups: Vec<(String, i64)> = by_group.into_iter().collect();
            groups.sort_by(|x, y| y.1.cmp(&x.1).then_with(|| x.0.cmp(&y.0)));
            let mut launched_by = Vec::new();
            let mut held = 0;
            for (group, total) in groups {
                if launched_by.len() == 3 || 2 * held > in_iterations {
                    break;
                }
                held += total;
                launched_by.push(serde_json::json!({"group": group, "total_ns": total}));
            }
            serde_json::json!({
                "base_name": b,
                "names": names[b.as_str()],
                "instances": instances,
                "total_ns": total,
                "iteration_launches": launches,
                "iteration_total_ns": in_iterations,
                "per_iteration_ns": in_iterations as f64 / iterations as f64,
                "launched_by": launched_by,
            })
        })
        .collect();
    want.sort_by(|x, y| {
        int(&y["total_ns"])
            .cmp(&int(&x["total_ns"]))
            .then_with(|| x["base_name"].as_str().cmp(&y["base_name"].as_str()))
    });
    assert_eq!(g["kernels_by_base_name"], Value::Array(want));
    // Every kernel of the iterations is in one base name.
    let sum: i64 = g["kernels_by_base_name"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| int(&k["iteration_total_ns"]))
        .sum();
    assert_eq!(sum, int(&g["iteration_kernels"]["total_ns"]));
}

/// `cuda_kern_exec_trace`'s kernels with their calls.
fn exec_launches(exec: &[Value]) -> Vec<Launch> {
    exec.iter()
        .map(|k| {
            let start = int(&k["API Start (ns)"]);
            Launch {
                name: k["Kernel Name"].as_str().unwrap().to_owned(),
                pid: k["PID"].as_u64().unwrap(),
                tid: k["TID"].as_u64().unwrap(),
                call_start: start,
                call_end: start + int(&k["API Dur (ns)"]),
                duration: int(&k["Kernel Dur (ns)"]),
                bytes: 0,
            }
        })
        .collect()
}

/// The GPU trace's rows (kernels when `kernels`, else memory copies, memsets left out) with
/// the call of `cuda_api_trace` of the same correlation id; the name of a copy is its group:
/// `copy kind|source|destination`.
fn api_launches(api: &[Value], trace: &[Value], kernels: bool) -> Vec<Launch> {
    let calls: HashMap<i64, &Value> = api.iter().map(|c| (int(&c["CorrID"]), c)).collect();
    trace
        .iter()
        .filter(|r| r["Bytes (B)"].as_i64().is_none() == kernels)
        .filter(|r| r["Name"] != "[CUDA memset]")
        .map(|r| {
            let c = calls[&int(&r["CorrId"])];
            let start = int(&c["Start (ns)"]);
            let name = if kernels {
                r["Name"].as_str().unwrap().to_owned()
            } else {
                copy_group(r)
            };
            Launch {
                name,
                pid: c["Pid"].as_u64().unwrap(),
                tid: c["Tid"].as_u64().unwrap(),
                call_start: start,
                call_end: start + int(&c["Duration (ns)"]),
                duration: int(&r["Duration (ns)"]),
                bytes: r["Bytes (B)"].as_i64().unwrap_or(0),
            }
        })
        .collect()
}

fn copy_group(r: &Value) -> String {
    let kind = r["Name"]
        .as_str()
        .unwrap()
        .trim_start_matches("[CUDA memcpy ")
        .trim_end_matches(']')
        .replace("HtoD", "Host-to-Device")
        .replace("DtoH", "Device-to-Host");
    let memory = |v: &Value| v.as_str().unwrap_or("").to_owned();
    format!(
        "{kind}|{}|{}",
        memory(&r["SrcMemKd"]),
        memory(&r["DstMemKd"])
    )
}

/// On each tested nsys and on the fixtures with several range groups and several processes:
/// each base name's capture totals are nsys's own summary over base names, and its time in
/// the counted iterations and launching groups what the launching calls and the ranges say.
/// The copies' launching calls are not in `cuda_kern_exec_trace`: their `iteration_*` are null.
#[test]
fn kernels_by_base_name_match_nsys_own_reports() {
    for (name, version) in [
        ("gpu-work", "2024.2"),
        ("gpu-work-2023.4", "2023.4"),
        ("gpu-work-2022.4", "2022.4"),
        ("llama-gpu", "2024.2"),
        ("gpu-processes", "2024.2"),
    ] {
        let nsys = require_nsys!(version);
        let run = fixture(name);
        assert_status(&analyze(&run.dir, &nsys, &[]), 0);
        let a = run.analysis();
        let legacy = version == "2022.4";
        let report = |new: &'static str, old: &'static str| if legacy { old } else { new };
        let trace = run.path("trace.sqlite");
        let base = nsys_json(
            &nsys,
            &trace,
            report("cuda_gpu_kern_sum:base", "gpukernsum:base"),
            "json",
        );
        let exec = nsys_json(
            &nsys,
            &trace,
            report("cuda_kern_exec_trace", "kernexectrace"),
            "json",
        );
        let ranges = Ranges::of(&run, &a);
        check_base_names(&ranges, &a, &base, &exec_launches(&exec));
        let g = &a["gpu_work"];
        for c in g["memory_copies"].as_array().unwrap() {
            for field in [
                "iteration_count",
                "iteration_bytes",
                "iteration_total_ns",
                "per_iteration_ns",
            ] {
                assert!(c[field].is_null(), "{name}: {c}");
            }
        }
        // What the fixtures hold (tests/fixtures/README.md), beside nsys's own numbers.
        let entry = |b: &str| -> &Value {
            g["kernels_by_base_name"]
                .as_array()
                .unwrap()
                .iter()
                .find(|k| k["base_name"] == b)
                .unwrap_or_else(|| panic!("{name}: no {b}"))
        };
        match name {
            "llama-gpu" => {
                let gemm = entry("gemm_bf16_kernel");
                assert_eq!(g["kernels_by_base_name"][0], *gemm, "the largest first");
                assert_eq!(
                    gemm["launched_by"][0]["group"],
                    "layer_#_token_#.forward_layer_#"
                );
                assert_eq!(
                    entry("embedding_lookup_kernel")["launched_by"][0]["group"],
                    "embed"
                );
            }
            "gpu-processes" => {
                // Two kernels of one base name, one of them the second process's: summed
                // over the capture; only the first process's in the iterations.
                let conv = entry("conv2d_fprop_kernel");
                assert_eq!(conv["names"], 2);
                assert!(int(&conv["iteration_total_ns"]) < int(&conv["total_ns"]));
                assert_eq!(conv["launched_by"][0]["group"], "inference");
            }
            _ => {
                // Launched between iterations only: 0 in them, not null.
                let reduce = entry("reduce_sum_kernel");
                assert_eq!(reduce["iteration_launches"], 0, "{name}");
                assert_eq!(reduce["launched_by"], serde_json::json!([]), "{name}");
            }
        }
    }
}

/// An nsys without `cuda_kern_exec_trace`: the calls of `cuda_api_trace` launched the copies
/// too, so the copies launched in the counted iterations are known, by group.
#[test]
fn copies_per_iteration_come_with_the_calls_of_cuda_api_trace() {
    let real = require_nsys!("2024.2");
    let (_install, nsys) = common::nsys_without(&real, &["cuda_kern_exec_trace.py"]);
    let run = fixture("gpu-work");
    assert_status(&analyze(&run.dir, &nsys, &[]), 0);
    let a = run.analysis();
    let g = &a["gpu_work"];
    assert_eq!(g["kernel_attribution"]["report"], "cuda_api_trace");
    let trace = run.path("trace.sqlite");
    let api = nsys_json(&real, &trace, "cuda_api_trace", "json");
    let gpu = nsys_json(&real, &trace, "cuda_gpu_trace", "json:mem=B");
    let base = nsys_json(&real, &trace, "cuda_gpu_kern_sum:base", "json");
    let ranges = Ranges::of(&run, &a);
    check_base_names(&ranges, &a, &base, &api_launches(&api, &gpu, true));

    let copies = api_launches(&api, &gpu, false);
    let mut want: BTreeMap<String, (u64, i64, i64)> = BTreeMap::new();
    for l in &copies {
        let e = want.entry(l.name.clone()).or_default();
        if ranges.place(l).is_some() {
            *e = (e.0 + 1, e.1 + l.bytes, e.2 + l.duration);
        }
    }
    let iterations = ranges.counted.len() as f64;
    let mut got: BTreeMap<String, (u64, i64, i64)> = BTreeMap::new();
    for c in g["memory_copies"].as_array().unwrap() {
        let memory = |v: &Value| v.as_str().unwrap_or("").to_owned();
        let key = format!(
            "{}|{}|{}",
            c["copy_kind"].as_str().unwrap(),
            memory(&c["source"]),
            memory(&c["destination"])
        );
        let total = int(&c["iteration_total_ns"]);
        assert_eq!(
            c["per_iteration_ns"].as_f64(),
            Some(total as f64 / iterations)
        );
        got.insert(
            key,
            (
                c["iteration_count"].as_u64().unwrap(),
                int(&c["iteration_bytes"]),
                total,
            ),
        );
    }
    assert_eq!(got, want);
    // The fixture: a pageable copy each way in every iteration, the loader's pinned copy
    // outside them.
    assert_eq!(got["Host-to-Device|Pageable|Device"].0, 5);
    assert_eq!(got["Device-to-Host|Device|Pageable"].0, 5);
    assert_eq!(got["Host-to-Device|Pinned|Device"], (0, 0, 0));
}
