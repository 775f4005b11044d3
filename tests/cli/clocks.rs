//! The SM clock over the counted iterations (`environment.gpus[].clock_mhz`) and
//! `gpu_clock_unsteady`, from the GPU metrics of the export.
//!
//! The machines that record the fixtures have no GPU, so nsys samples no GPU metrics there:
//! `gpu-clocks` is a real nsys 2024.2 trace whose export was given `TARGET_INFO_GPU_METRICS`
//! and `GPU_METRICS` rows (tables created with the statements of nsys's own non-lazy export)
//! by `tests/harness/fixtures.py add-gpu-work --metrics clock-drop`: GPU 0's SM clock at 1,410
//! MHz, 987 MHz (30 % lower) during iterations 3-7. Tests that need another clock rewrite
//! those rows in a copy, which is what real nsys cannot record here.

use std::path::Path;

use rusqlite::Connection;
use serde_json::{json, Value};

use crate::common::{self, analyze, assert_status, fixture, Run};
use crate::require_nsys;

/// The report of a run directory, on standard output.
pub fn report(run: &Run) -> String {
    let out = common::bin()
        .args(["report", "--output", "-", "--run-dir"])
        .arg(&run.dir)
        .output()
        .unwrap();
    assert_status(&out, 0);
    String::from_utf8(out.stdout).unwrap()
}

/// Sets every SM clock sample of the export to `mhz` (in hertz, as nsys writes them).
pub fn set_clock(db: &Path, mhz: i64) {
    let db = Connection::open(db).unwrap();
    let changed = db
        .execute(
            "UPDATE GPU_METRICS SET value = ?1 WHERE metricId IN (SELECT metricId FROM
             TARGET_INFO_GPU_METRICS WHERE metricName = 'GPC Clock Frequency')",
            [mhz * 1_000_000],
        )
        .unwrap();
    assert!(changed > 100, "{changed} samples");
}

fn unsteady(a: &Value) -> Vec<Value> {
    a["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["code"] == "gpu_clock_unsteady")
        .cloned()
        .collect()
}

#[test]
fn a_clock_that_drops_by_30_percent_in_iterations_3_to_7_is_recorded_and_named() {
    let nsys = require_nsys!("2024.2");
    let run = fixture("gpu-clocks");
    assert_status(&analyze(&run.dir, &nsys, &[]), 0);
    let a = run.analysis();
    let gpu = &a["environment"]["gpus"][0];
    assert_eq!(gpu["max_clock_mhz"], 1410);
    // 7 of the 12 counted iterations at 1,410 MHz (1,411 on every other sample), 5 at 987.
    assert_eq!(
        gpu["clock_mhz"],
        json!({"median": 1410, "minimum": 987, "maximum": 1411})
    );
    let warnings = unsteady(&a);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    let w = &warnings[0];
    assert_eq!(w["gating"], false);
    assert_eq!(w["iterations"], json!([3, 4, 5, 6, 7]));
    assert_eq!(w["threshold"], 0.1);
    let message = w["message"].as_str().unwrap();
    for part in [
        "GPU 0 (NVIDIA A100-SXM4-80GB)",
        "moved by 30 %",
        "1,411 MHz at most, 987 MHz at least",
        "iterations 3-7",
        "throttling (heat), a power cap or an unlocked clock",
    ] {
        assert!(message.contains(part), "{part}: {message}");
    }
    // Not gating: the run passes.
    assert_eq!(a["gate"]["result"], "pass");

    // --reuse-stats: the same figures, from the samples kept in the stamp.
    let before = a["environment"].clone();
    assert_status(&common::reuse_stats(&run.dir), 0);
    let again = run.analysis();
    assert_eq!(again["environment"], before);
    assert_eq!(unsteady(&again), warnings);

    // The report's GPU line.
    let md = report(&run);
    assert!(
        md.contains("**GPU:** NVIDIA A100-SXM4-80GB · driver not recorded · CUDA not recorded · SM clock 1,410 MHz (max 1,410)"),
        "{md}"
    );
}

#[test]
fn a_steady_clock_raises_no_warning() {
    let nsys = require_nsys!("2024.2");
    let run = fixture("gpu-clocks");
    set_clock(&run.path("trace.sqlite"), 1_275);
    assert_status(&analyze(&run.dir, &nsys, &[]), 0);
    let a = run.analysis();
    assert_eq!(
        a["environment"]["gpus"][0]["clock_mhz"],
        json!({"median": 1275, "minimum": 1275, "maximum": 1275})
    );
    assert!(unsteady(&a).is_empty());
}

#[test]
fn a_clock_that_moves_by_10_percent_or_less_is_steady_enough() {
    let nsys = require_nsys!("2024.2");
    let run = fixture("gpu-clocks");
    // iterations 3-7 at 1,270 MHz: 9.99 % below the highest iteration's 1,411
    let db = Connection::open(run.path("trace.sqlite")).unwrap();
    db.execute(
        "UPDATE GPU_METRICS SET value = 1270000000 WHERE value BETWEEN 900000000 AND 1000000000",
        [],
    )
    .unwrap();
    drop(db);
    assert_status(&analyze(&run.dir, &nsys, &[]), 0);
    let a = run.analysis();
    assert_eq!(a["environment"]["gpus"][0]["clock_mhz"]["minimum"], 1270);
    assert!(unsteady(&a).is_empty(), "{:?}", unsteady(&a));
}

#[test]
fn without_gpu_metrics_no_clock_is_recorded_and_the_report_says_so() {
    for (name, version) in [
        ("gpu-work", "2024.2"),
        ("gpu-work-2023.4", "2023.4"),
        ("gpu-work-2022.4", "2022.4"),
    ] {
        let nsys = require_nsys!(version);
        let run = fixture(name);
        let out = analyze(&run.dir, &nsys, &[]);
        assert!(matches!(out.status.code(), Some(0 | 1)), "{name}: {out:?}");
        let a = run.analysis();
        let gpu = a["environment"]["gpus"][0].as_object().unwrap().clone();
        assert_eq!(gpu.get("clock_mhz"), Some(&Value::Null), "{name}: {gpu:?}");
        assert!(unsteady(&a).is_empty(), "{name}");
        let md = report(&run);
        assert!(
            md.contains("· CUDA not recorded · clocks not recorded"),
            "{name}: {md}"
        );
    }
}

/// A history of 7 copies of `head`'s analysis (times a hair apart), the environment of the
/// `(index, analysis)` pairs given put in place of theirs.
fn clock_history(head: &Run, name: &str, others: &[(usize, &Value)]) -> std::path::PathBuf {
    let folder = crate::compare::history(
        head,
        name,
        &[1.003, 0.996, 1.005, 0.998, 1.001, 1.004, 0.997],
    );
    for (k, other) in others {
        let path = folder.join(format!("{k:03}/analysis.json"));
        let mut a = common::read_json(&path);
        a["environment"] = other["environment"].clone();
        std::fs::write(&path, serde_json::to_vec(&a).unwrap()).unwrap();
    }
    folder
}

/// `gpu-clocks` analysed with every SM clock sample at `mhz`.
fn steady_run(nsys: &Path, mhz: i64) -> Run {
    let run = fixture("gpu-clocks");
    set_clock(&run.path("trace.sqlite"), mhz);
    assert_status(&analyze(&run.dir, nsys, &[]), 0);
    run
}

#[test]
fn base_runs_whose_clock_is_20_percent_lower_are_left_out_and_the_comment_says_at_what_clock() {
    let nsys = require_nsys!("2024.2");
    let head = steady_run(&nsys, 1_410);
    // 20 % below the head's clock, and 4 % below it (the same, within 5 %).
    let slow = steady_run(&nsys, 1_128).analysis();
    let near = steady_run(&nsys, 1_354).analysis();
    let folder = clock_history(&head, "clocks", &[(0, &slow), (1, &slow), (2, &near)]);
    let (out, c) = crate::compare::compare_json(&[&folder, &head.dir]);
    let r = &c["runs"][0];
    let left: Vec<(&str, &Value, &Value)> = r["history"]["left_out"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l["run"]["run_id"].as_str().unwrap(),
                &l["reason"],
                &l["differs"],
            )
        })
        .collect();
    assert_eq!(
        left,
        [
            ("base-0", &json!("conditions"), &json!(["clock"])),
            ("base-1", &json!("conditions"), &json!(["clock"]))
        ]
    );
    assert_eq!(r["history"]["left_out"][0]["run"]["clock_mhz"], 1128);
    assert_eq!(r["history"]["used"].as_array().unwrap().len(), 5);
    let clock = r["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "clock")
        .unwrap();
    // The newest base run (1,410 MHz) against the head: the same.
    assert_eq!(
        clock,
        &json!({"name": "clock", "judged": true, "differs": false, "base": 1410, "head": 1410})
    );
    let md = String::from_utf8(out.stdout).unwrap();
    assert!(
        md.contains("2 base runs are left out of the history: SM clock differs"),
        "{md}"
    );
    assert!(
        md.contains("2 base runs ran at 1,128 MHz, this one at 1,410 MHz."),
        "{md}"
    );
}

#[test]
fn a_head_at_another_clock_than_its_base_is_not_like_for_like() {
    let nsys = require_nsys!("2024.2");
    let base = steady_run(&nsys, 1_128);
    let head = steady_run(&nsys, 1_410);
    let (out, c) = crate::compare::compare_json(&[&base.dir, &head.dir]);
    let r = &c["runs"][0];
    assert_eq!(r["like_for_like"], false);
    let md = String::from_utf8(out.stdout).unwrap();
    assert!(
        md.contains("| SM clock | 1,128 MHz | 1,410 MHz | differs |"),
        "{md}"
    );
    // Without GPU metrics in one run, the clock is not judged.
    let plain = fixture("gpu-work");
    assert!(matches!(
        analyze(&plain.dir, &nsys, &[]).status.code(),
        Some(0 | 1)
    ));
    let (_, c) = crate::compare::compare_json(&[&plain.dir, &head.dir]);
    let clock = c["runs"][0]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "clock")
        .unwrap()
        .clone();
    assert_eq!(clock["base"], Value::Null);
    assert_eq!(clock["differs"], false);
}

#[test]
fn the_clock_is_read_the_same_whichever_nsys_reads_the_export() {
    // The `.sqlite` fixture is readable by all three versions; the clock comes from the export
    // itself, not from nsys's reports.
    for version in ["2023.4", "2022.4"] {
        let nsys = require_nsys!(version);
        let run = fixture("gpu-clocks");
        let out = analyze(&run.dir, &nsys, &[]);
        assert!(
            matches!(out.status.code(), Some(0 | 1)),
            "{version}: {out:?}"
        );
        let a = run.analysis();
        assert_eq!(
            a["environment"]["gpus"][0]["clock_mhz"],
            json!({"median": 1410, "minimum": 987, "maximum": 1411}),
            "{version}"
        );
        assert_eq!(unsteady(&a).len(), 1, "{version}");
    }
}

/// The SM clock samples of one GPU, written into a copy of a per-rank trace as
/// `tests/harness/fixtures.py` `add_gpu_metrics` writes them into `gpu-clocks`: the two tables
/// made with the statements of nsys's own export (taken from the `gpu-clocks` fixture), the
/// metric named per `typeId` (`<hardware:8><VM:8><source:16><event tag:24><GPU:8>`), a sample
/// every 100 µs (10 kHz) from just before the trace's first NVTX event to after its last, in
/// hertz, at `mhz` except at `low_mhz` from the start of iteration `low.0` to the end of
/// iteration `low.1`. What real nsys cannot record on these GPU-less machines.
fn inject_clock(trace: &Path, gpu: u64, mhz: i64, low: Option<(u64, u64, i64)>) {
    let template = fixture("gpu-clocks");
    let source = Connection::open(template.path("trace.sqlite")).unwrap();
    let db = Connection::open(trace).unwrap();
    for table in ["TARGET_INFO_GPU_METRICS", "GPU_METRICS"] {
        let sql: String = source
            .query_row(
                "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?1",
                [table],
                |r| r.get(0),
            )
            .unwrap();
        db.execute(
            &sql.replace("CREATE TABLE", "CREATE TABLE IF NOT EXISTS"),
            [],
        )
        .unwrap();
    }
    let type_id: i64 = (4 << 32) | (1 << 8) | gpu as i64;
    for (metric, name) in [(0, "GPC Clock Frequency"), (1, "SYS Clock Frequency")] {
        db.execute(
            "INSERT INTO TARGET_INFO_GPU_METRICS (typeId, sourceId, typeName, metricId, metricName) VALUES (?1, 4, 'GPU Metrics', ?2, ?3)",
            rusqlite::params![type_id, metric, name],
        )
        .unwrap();
    }
    let iteration = |n: u64| -> (i64, i64) {
        db.query_row(
            "SELECT e.start, e.end FROM NVTX_EVENTS AS e LEFT JOIN StringIds AS s ON e.textId = s.id WHERE coalesce(s.value, e.text) = ?1",
            [format!("iteration {n}")],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap()
    };
    let window = low.map(|(from, to, low_mhz)| (iteration(from).0, iteration(to).1, low_mhz));
    let (first, last): (i64, i64) = db
        .query_row(
            "SELECT min(start), max(coalesce(end, start)) FROM NVTX_EVENTS",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    let step = 100_000;
    let mut ts = first - step;
    while ts < last + 2 * step {
        let sm = match window {
            Some((start, end, low_mhz)) if (start..end).contains(&ts) => low_mhz,
            _ => mhz,
        };
        for (metric, value) in [(0, sm * 1_000_000), (1, 1_155_000_000)] {
            db.execute(
                "INSERT INTO GPU_METRICS (timestamp, typeId, metricId, value) VALUES (?1, ?2, ?3, ?4)",
                rusqlite::params![ts, type_id, metric, value],
            )
            .unwrap();
        }
        ts += step;
    }
}

/// Issue 36: with one trace per rank, each trace keeps its own time, and each rank's GPU
/// metrics are read over its own iterations. `ranks-devices-per-trace` (rank R on device R),
/// GPU metrics injected: rank 0's trace samples GPU 0 at a steady 1,410 MHz; rank 1's samples
/// GPU 1 at 1,380 MHz, 30 % lower (966 MHz) during its iterations 2-3, and GPU 0 too, at a
/// steady 1,200 MHz (GPU 0 is rank 0's: its clock is rank 0's figure). Before, only one trace's
/// clocks were ever read, and none with one trace per rank.
#[test]
fn one_trace_per_rank_gives_each_gpus_clock_from_its_ranks_trace() {
    let nsys = require_nsys!("2024.2");
    let run: Run = fixture("ranks-devices-per-trace");
    inject_clock(&run.path("trace_0.sqlite"), 0, 1_410, None);
    inject_clock(&run.path("trace_1.sqlite"), 1, 1_380, Some((2, 3, 966)));
    inject_clock(&run.path("trace_1.sqlite"), 0, 1_200, None);
    assert_status(&analyze(&run.dir, &nsys, &[]), 0);
    let a = run.analysis();
    let gpus = a["environment"]["gpus"].as_array().unwrap();
    let ids: Vec<u64> = gpus.iter().map(|g| g["id"].as_u64().unwrap()).collect();
    assert_eq!(ids, [0, 1], "{gpus:?}");
    assert_eq!(
        gpus[0]["clock_mhz"],
        json!({"median": 1410, "minimum": 1410, "maximum": 1410})
    );
    assert_eq!(
        gpus[1]["clock_mhz"],
        json!({"median": 1380, "minimum": 966, "maximum": 1380})
    );
    let warnings = unsteady(&a);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    let w = &warnings[0];
    assert_eq!(w["rank"], 1);
    assert_eq!(w["iterations"], json!([2, 3]));
    let message = w["message"].as_str().unwrap();
    for part in [
        "rank 1: the SM clock of GPU 1 (NVIDIA A100-SXM4-80GB)",
        "moved by 30 %",
        "1,380 MHz at most, 966 MHz at least",
        "in iterations 2, 3;",
    ] {
        assert!(message.contains(part), "{part}: {message}");
    }

    // --reuse-stats: the same, from the samples each rank's stamp kept.
    let before = a["environment"].clone();
    assert_status(&common::reuse_stats(&run.dir), 0);
    let again = run.analysis();
    assert_eq!(again["environment"], before);
    assert_eq!(unsteady(&again), warnings);
}
