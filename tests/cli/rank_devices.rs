//! A distributed run's ranks on CUDA devices of their own, recorded by the project's harness
//! under real nsys with each rank's kernels injected on its device (`tests/harness/fixtures.py`
//! `--work rank-devices`): in one trace the ranks are numbered by device (the first-started
//! process is on device 1, so that the order of the processes says otherwise), and with one
//! trace per rank `gpu_work` comes from every rank's trace.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::common::{analyze, assert_status, bin, fixture, plain_pushpop, report_md, Run};
use crate::gpu_work::nsys_json;
use crate::require_nsys;

/// Per iteration of a rank, on its device, by construction (`RANK_KERNELS`, µs): compute,
/// communication, and the communication no compute kernel overlaps.
const PER_STEP_US: (f64, f64, f64) = (700.0, 500.0, 200.0);

fn within_1pct(got: f64, want: f64, what: &str) {
    assert!(
        (got - want).abs() <= 0.01 * want,
        "{what}: {got} is not within 1 % of {want}"
    );
}

/// The median as nsys-gate defines it.
fn median(values: &[i64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_unstable();
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2] as f64
    } else {
        (v[n / 2 - 1] + v[n / 2]) as f64 / 2.0
    }
}

/// Per PID, the devices its kernels ran on, as nsys's own `cuda_kern_exec_trace` gives them.
fn devices_by_pid(nsys: &std::path::Path, trace: &std::path::Path) -> BTreeMap<u64, Vec<u64>> {
    let mut out: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    for r in nsys_json(nsys, trace, "cuda_kern_exec_trace", "json") {
        let devices = out.entry(r["PID"].as_u64().unwrap()).or_default();
        let device = r["DevId"].as_u64().unwrap();
        if !devices.contains(&device) {
            devices.push(device);
        }
    }
    out
}

/// Per PID, the host inclusive durations of `iteration N` as nsys's push/pop report gives them.
fn iterations_by_pid(csv: &std::path::Path) -> BTreeMap<u64, Vec<i64>> {
    let mut out: BTreeMap<u64, Vec<i64>> = BTreeMap::new();
    for r in plain_pushpop(csv) {
        if r.name.starts_with("iteration ") {
            out.entry(r.pid).or_default().push(r.duration);
        }
    }
    out
}

/// The report of the run directory, rendered.
fn rendered(run: &Run) -> String {
    bin()
        .args(["report", "--run-dir"])
        .arg(&run.dir)
        .assert()
        .success();
    report_md(run)
}

/// Both devices of the node, each with one rank's work: per step compute, communication and
/// exposed communication as constructed.
fn check_devices(a: &Value, what: &str) {
    let devices = a["gpu_work"]["devices"]
        .as_array()
        .expect("gpu_work.devices");
    let ids: Vec<u64> = devices.iter().map(|d| d["id"].as_u64().unwrap()).collect();
    assert_eq!(ids, [0, 1], "{what}");
    let (compute, communication, exposed) = PER_STEP_US;
    for d in devices {
        let id = &d["id"];
        // 3 kernels in each of the 5 iterations of the rank on it
        assert_eq!(d["iteration_kernels"], 15, "{what} device {id}");
        let us = |field: &str| d[field].as_f64().unwrap() / 1000.0;
        within_1pct(
            us("compute_ns"),
            compute,
            &format!("{what} device {id} compute"),
        );
        within_1pct(
            us("communication_ns"),
            communication,
            &format!("{what} device {id} communication"),
        );
        within_1pct(
            us("exposed_communication_ns"),
            exposed,
            &format!("{what} device {id} exposed communication"),
        );
    }
}

#[test]
fn ranks_on_devices_of_their_own_are_numbered_by_device() {
    let nsys = require_nsys!("2024.2");
    let run: Run = fixture("ranks-devices");
    assert_status(&analyze(&run.dir, &nsys, &[]), 0);
    let a = run.analysis();
    assert_eq!(a["gate"]["result"], "pass");

    // nsys's own account: two processes, each on one device, the first-started (lower PID)
    // on device 1
    let by_pid = devices_by_pid(&nsys, &run.path("trace.sqlite"));
    assert_eq!(by_pid.len(), 2, "{by_pid:?}");
    let pids: Vec<u64> = by_pid.keys().copied().collect();
    assert_eq!(by_pid[&pids[0]], [1]);
    assert_eq!(by_pid[&pids[1]], [0]);

    // rank k is the process on device k, whatever their order
    let ranks = a["ranks"].as_array().expect("ranks[]");
    assert_eq!(ranks.len(), 2);
    let per_pid = iterations_by_pid(&run.path("stats").join("nsys_nvtx_pushpop_trace.csv"));
    for (k, r) in ranks.iter().enumerate() {
        assert_eq!(r["rank"], k as u64);
        assert_eq!(r["device"], k as u64);
        let pid = r["pid"].as_u64().unwrap();
        assert_eq!(by_pid[&pid], [k as u64], "rank {k}");
        // the rank's own figures moved with it: its median is its process's
        assert_eq!(r["iterations"], 5);
        assert_eq!(
            r["iteration_summary"]["host_inclusive"]["median_ns"]
                .as_f64()
                .unwrap(),
            median(&per_pid[&pid]),
            "rank {k}"
        );
    }
    assert_eq!(ranks[0]["pid"], pids[1]);
    assert_eq!(ranks[1]["pid"], pids[0]);
    // the second-started process (harness rank 1, 510 µs slower) is rank 0 here
    assert!(
        ranks[0]["slowest_steps"].as_u64().unwrap() >= 4,
        "{}",
        ranks[0]
    );
    let steps = a["iterations"].as_array().unwrap();
    assert!(steps.iter().filter(|s| s["rank"] == 0).count() >= 4);

    check_devices(&a, "ranks-devices");

    let md = rendered(&run);
    assert!(
        md.contains("Ranks are numbered by the CUDA device each process launched its work on."),
        "{md}"
    );
    assert!(md.contains("| 0 | "), "{md}");
    assert!(md.contains("cuda:0"), "{md}");
}

/// Processes that share a device are numbered by the order of their PIDs, the report says so,
/// and each keeps its device.
#[test]
fn ranks_sharing_a_device_are_numbered_by_process_order() {
    let nsys = require_nsys!("2024.2");
    let run: Run = fixture("ranks-devices");
    // the recorded kernels moved onto device 0: both processes on one device (a fake of a
    // recording where every rank ran on cuda:0, which the harness does not make)
    let db = rusqlite::Connection::open(run.path("trace.sqlite")).unwrap();
    db.execute("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET deviceId = 0", [])
        .unwrap();
    drop(db);
    assert_status(&analyze(&run.dir, &nsys, &[]), 0);
    let a = run.analysis();
    let ranks = a["ranks"].as_array().expect("ranks[]");
    let pids: Vec<u64> = ranks.iter().map(|r| r["pid"].as_u64().unwrap()).collect();
    assert!(pids[0] < pids[1], "{pids:?}");
    assert_eq!(ranks[0]["device"], 0);
    assert_eq!(ranks[1]["device"], 0);
    let md = rendered(&run);
    assert!(
        md.contains("Ranks are numbered by the order of the processes by PID."),
        "{md}"
    );
}

/// One trace per rank: `gpu_work` from every rank's trace (each holds one device's work), each
/// rank's device from its own trace's kernels, the ranks numbered by the file names.
#[test]
fn one_trace_per_rank_gives_every_traces_gpu_work() {
    let nsys = require_nsys!("2024.2");
    let run: Run = fixture("ranks-devices-per-trace");
    assert_status(&analyze(&run.dir, &nsys, &[]), 0);
    let a = run.analysis();
    assert_eq!(a["gate"]["result"], "pass");
    let ranks = a["ranks"].as_array().expect("ranks[]");
    assert_eq!(ranks.len(), 2);
    let mut kernels_per_trace = 0;
    for (k, r) in ranks.iter().enumerate() {
        let trace = format!("trace_{k}.sqlite");
        assert_eq!(r["rank"], k as u64);
        assert_eq!(r["trace"], trace.as_str());
        // nsys's own account of the trace: one process, on device k
        let by_pid = devices_by_pid(&nsys, &run.path(&trace));
        assert_eq!(by_pid.len(), 1, "{trace}: {by_pid:?}");
        assert_eq!(by_pid.values().next().unwrap(), &[k as u64], "{trace}");
        assert_eq!(r["device"], k as u64);
        kernels_per_trace =
            nsys_json(&nsys, &run.path(&trace), "cuda_kern_exec_trace", "json").len();
    }
    // the rank 510 µs slower is rank 1 (its trace's name)
    assert!(
        ranks[1]["slowest_steps"].as_u64().unwrap() >= 4,
        "{}",
        ranks[1]
    );

    check_devices(&a, "ranks-devices-per-trace");
    let gpu = &a["gpu_work"];
    // every kernel of both traces is attributed, inside the counted iterations
    assert_eq!(gpu["kernel_attribution"]["kernels"], 2 * kernels_per_trace);
    assert_eq!(
        gpu["kernel_attribution"]["in_counted_iterations"],
        2 * kernels_per_trace
    );
    assert_eq!(gpu["kernel_attribution"]["ambiguous"], 0);
    // the kernel table sums both traces' rows of a name
    let kernels = gpu["kernels"].as_array().unwrap();
    assert_eq!(kernels.len(), 3);
    for k in kernels {
        assert_eq!(k["instances"], 10, "{k}");
    }
    let shares: f64 = kernels.iter().map(|k| k["share"].as_f64().unwrap()).sum();
    assert!((shares - 1.0).abs() < 1e-9, "{shares}");
    let md = rendered(&run);
    assert!(
        md.contains("Ranks are numbered by the number in each trace's file name."),
        "{md}"
    );
    assert!(md.contains("cuda:1"), "{md}");
}

/// An nsys without `cuda_kern_exec_trace` (the kernels joined with their calls here, on the
/// correlation id alone): in one trace the two processes count their correlation ids from the
/// same start, so no kernel tells its process and the ranks are numbered by PID; one trace per
/// rank keeps each trace's ids apart, and gives the same devices as nsys's own join.
#[test]
fn without_nsys_join_devices_come_from_each_rank_trace_alone() {
    let real = require_nsys!("2024.2");
    let (_install, copy) = crate::common::nsys_without(&real, &["cuda_kern_exec_trace.py"]);

    let run: Run = fixture("ranks-devices");
    assert_status(&analyze(&run.dir, &copy, &[]), 0);
    let a = run.analysis();
    assert_eq!(
        a["gpu_work"]["kernel_attribution"]["report"],
        "cuda_api_trace"
    );
    assert_eq!(a["gpu_work"]["kernel_attribution"]["ambiguous"], 30);
    let ranks = a["ranks"].as_array().unwrap();
    assert!(ranks.iter().all(|r| r["device"].is_null()), "{ranks:?}");
    assert!(ranks[0]["pid"].as_u64() < ranks[1]["pid"].as_u64());

    let run: Run = fixture("ranks-devices-per-trace");
    assert_status(&analyze(&run.dir, &copy, &[]), 0);
    let a = run.analysis();
    assert_eq!(
        a["gpu_work"]["kernel_attribution"]["report"],
        "cuda_api_trace"
    );
    assert_eq!(a["gpu_work"]["kernel_attribution"]["ambiguous"], 0);
    for (k, r) in a["ranks"].as_array().unwrap().iter().enumerate() {
        assert_eq!(r["device"], k as u64);
    }
    check_devices(&a, "ranks-devices-per-trace joined on cuda_api_trace");
}
