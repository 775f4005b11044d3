//! `gpu_work.devices`: each GPU's work and communication, on the `gpu-devices` fixtures (one
//! process driving two GPUs, NCCL all-reduces on a stream of their own overlapping compute for
//! part of their time; `tests/harness/fixtures.py` `DEVICE_KERNELS`), recorded with each tested
//! nsys; the one-GPU fixtures' devices.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::common::{self, analyze, assert_status, fixture, Run};
use crate::gpu_work::nsys_json;
use crate::require_nsys;

const VERSIONS: [(&str, &str); 3] = [
    ("gpu-devices", "2024.2"),
    ("gpu-devices-2023.4", "2023.4"),
    ("gpu-devices-2022.4", "2022.4"),
];

/// What each device does per iteration by construction (`DEVICE_EXPECTED`, µs): compute
/// (device 0: 600 µs and 200 µs kernels on two streams overlapping by 100 µs), communication,
/// and the communication no compute kernel overlaps.
const EXPECTED: [(u64, f64, f64, f64); 2] = [(0, 700.0, 500.0, 200.0), (1, 800.0, 400.0, 250.0)];

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

fn within_1pct(got: f64, want: f64, what: &str) {
    assert!(
        (got - want).abs() <= 0.01 * want,
        "{what}: {got} is not within 1 % of {want}"
    );
}

/// The devices' per-iteration fields against the construction.
fn check_devices(a: &Value, name: &str) {
    let devices = a["gpu_work"]["devices"].as_array().unwrap();
    assert_eq!(devices.len(), 2, "{name}");
    for (d, (id, compute, communication, exposed)) in devices.iter().zip(EXPECTED) {
        assert_eq!(d["id"], id, "{name}");
        // 3 kernels of device 0, 2 of device 1, in each of the 5 iterations.
        assert_eq!(
            d["iteration_kernels"],
            if id == 0 { 15 } else { 10 },
            "{name}"
        );
        let us = |field: &str| f(&d[field]) / 1000.0;
        within_1pct(
            us("compute_ns"),
            compute,
            &format!("{name} device {id} compute"),
        );
        within_1pct(
            us("communication_ns"),
            communication,
            &format!("{name} device {id} communication"),
        );
        within_1pct(
            us("exposed_communication_ns"),
            exposed,
            &format!("{name} device {id} exposed communication"),
        );
    }
}

/// Each device's kernel time and copies by kind against nsys's own JSON `cuda_gpu_trace`.
fn check_against_gpu_trace(a: &Value, json: &[Value]) {
    // device -> (kernel total, copy kind -> (count, bytes, total))
    type Copies = BTreeMap<String, (u64, u64, i64)>;
    let mut want: BTreeMap<String, (i64, Copies)> = BTreeMap::new();
    for r in json {
        let e = want
            .entry(r["Device"].as_str().unwrap().to_owned())
            .or_default();
        let duration = r["Duration (ns)"].as_i64().unwrap();
        match r["Bytes (B)"].as_u64() {
            None => e.0 += duration,
            Some(bytes) => {
                let kind = r["Name"]
                    .as_str()
                    .unwrap()
                    .trim_start_matches("[CUDA memcpy ")
                    .trim_end_matches(']')
                    .replace("PtoP", "Peer-to-Peer");
                let c = e.1.entry(kind).or_default();
                *c = (c.0 + 1, c.1 + bytes, c.2 + duration);
            }
        }
    }
    let got: BTreeMap<String, (i64, Copies)> = a["gpu_work"]["devices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            let copies = d["memory_copies"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| {
                    (
                        c["copy_kind"].as_str().unwrap().to_owned(),
                        (
                            c["count"].as_u64().unwrap(),
                            c["bytes"].as_u64().unwrap(),
                            c["total_ns"].as_i64().unwrap(),
                        ),
                    )
                })
                .collect();
            (
                d["device"].as_str().unwrap().to_owned(),
                (d["kernel_total_ns"].as_i64().unwrap(), copies),
            )
        })
        .collect();
    assert_eq!(got, want);
}

/// Each device's exposed communication equals the time its NCCL kernels ran with no compute
/// kernel beside them, as injected, on every tested nsys; kernel time and copies by device
/// agree with nsys's own GPU trace; peer-to-peer copies are a kind of their own.
#[test]
fn each_device_has_its_compute_communication_and_exposed_communication() {
    for (name, version) in VERSIONS {
        let nsys = require_nsys!(version);
        let run = fixture(name);
        assert_status(&analyze(&run.dir, &nsys, &[]), 0);
        let a = run.analysis();
        check_devices(&a, name);
        let report = if version == "2022.4" {
            "gputrace"
        } else {
            "cuda_gpu_trace"
        };
        let trace = nsys_json(&nsys, &run.path("trace.sqlite"), report, "json:mem=B");
        check_against_gpu_trace(&a, &trace);
        let kinds: Vec<&str> = a["gpu_work"]["memory_copies"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["copy_kind"].as_str().unwrap())
            .collect();
        assert_eq!(kinds, ["Peer-to-Peer"], "{name}");
        let d1 = &a["gpu_work"]["devices"][1];
        assert_eq!(d1["memory_copies"], serde_json::json!([]), "{name}");
    }
}

/// An nsys without `cuda_kern_exec_trace` (the kernels joined with their calls here, from
/// `cuda_api_trace` and `cuda_gpu_trace`, whose devices are `NAME (ID)`): the same devices.
#[test]
fn the_devices_are_the_same_when_the_kernels_are_joined_here() {
    let real = require_nsys!("2024.2");
    let (_install, copy) = common::nsys_without(&real, &["cuda_kern_exec_trace.py"]);
    let run = fixture("gpu-devices");
    assert_status(&analyze(&run.dir, &copy, &[]), 0);
    let a = run.analysis();
    assert_eq!(
        a["gpu_work"]["kernel_attribution"]["report"],
        "cuda_api_trace"
    );
    check_devices(&a, "gpu-devices joined on cuda_api_trace");
}

/// The report shows each device's communication and exposed communication per iteration.
#[test]
fn the_report_shows_each_devices_communication() {
    let nsys = require_nsys!("2024.2");
    let run = fixture("gpu-devices");
    assert_status(&analyze(&run.dir, &nsys, &[]), 0);
    let md = report_md(&run).replace('\u{a0}', " ");
    assert!(md.contains("**Devices.**"), "{md}");
    for row in [
        "| NVIDIA A100-SXM4-80GB (0) | 15 | 6.50 ms | Peer-to-Peer 5 (320 KiB, 150 µs) | 700 µs | 500 µs | 200 µs (40.0 %) |",
        "| NVIDIA A100-SXM4-80GB (1) | 10 | 6.00 ms | none | 800 µs | 400 µs | 250 µs (62.5 %) |",
    ] {
        assert!(md.contains(row), "{row}\n{md}");
    }
}

/// A run on one GPU without communication: compute only, no exposed communication, and the
/// report reads as before (no devices table; the `gpu_work` snapshot holds the rest).
#[test]
fn one_gpu_without_communication_has_compute_only() {
    let nsys = require_nsys!("2024.2");
    let run = fixture("gpu-work");
    assert_status(&analyze(&run.dir, &nsys, &[]), 0);
    let a = run.analysis();
    let g = &a["gpu_work"];
    let devices = g["devices"].as_array().unwrap();
    assert_eq!(devices.len(), 1);
    let d = &devices[0];
    assert_eq!(f(&d["communication_ns"]), 0.0);
    assert_eq!(f(&d["exposed_communication_ns"]), 0.0);
    // One stream of kernels: nothing overlaps, so the busy time is the kernels' summed time.
    let iterations = g["iteration_kernels"]["iterations"].as_u64().unwrap() as f64;
    let summed = g["iteration_kernels"]["total_ns"].as_i64().unwrap() as f64;
    assert_eq!(f(&d["compute_ns"]), summed / iterations);
    assert_eq!(d["iteration_kernels"], g["iteration_kernels"]["launches"]);
    assert!(!report_md(&run).contains("**Devices.**"));
}

/// `nsys-gate report` of an analysed run directory: its report.md.
fn report_md(run: &Run) -> String {
    let out = common::bin()
        .args(["report", "--run-dir"])
        .arg(&run.dir)
        .output()
        .unwrap();
    assert_status(&out, 0);
    common::report_md(run)
}
