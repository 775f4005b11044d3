//! The one made-up analysis for unit tests (the CLI tests use real traces): a clean run, built
//! from the artifact's types with the statistics computed as the analysis computes them, that
//! each test then changes where it needs to.

use std::collections::BTreeMap;

use super::{
    Analysis, Gate, GateResult, GpuProjectedRange, HostRange, Iteration, IterationGpu,
    IterationHost, IterationSummary, Provenance, RangeStats, ReportName, ReportStatus, Run,
    Warning, WarningCode,
};
use crate::stats::Sample;

/// A clean run of profile `smoke-tensor`: one counted iteration per `host_ns` value (each
/// with 5 µs of host exclusive time, and a GPU projection of half its host time when `gpu`),
/// and host ranges `(name, exclusive total)` with one instance per iteration (their
/// GPU-projected totals half as much when `gpu`).
pub fn analysis(host_ns: &[i64], ranges: &[(&str, i64)], gpu: bool) -> Analysis {
    let count = host_ns.len() as u64;
    let iterations = host_ns
        .iter()
        .enumerate()
        .map(|(i, &ns)| Iteration {
            index: i as u64,
            range_id: i as u64 + 2,
            pid: 19,
            tid: 19,
            complete: true,
            duplicate: false,
            host: IterationHost {
                start_ns: i as i64 * 3_000_000,
                end_ns: i as i64 * 3_000_000 + ns,
                inclusive_ns: ns,
                exclusive_ns: 5_000,
                child_total_ns: ns - 5_000,
            },
            gpu_projection: gpu.then_some(IterationGpu {
                start_ns: 0,
                end_ns: ns / 2,
                projected_ns: ns / 2,
                gpu_operation_count: 3,
            }),
            rank: None,
        })
        .collect();
    let per_instance = |total: i64| {
        let n = count.max(1) as i64;
        let each: Vec<i64> = (0..n)
            .map(|k| total / n + i64::from(k < total % n))
            .collect();
        Sample::new(each).range_stats()
    };
    let host_ranges = ranges
        .iter()
        .map(|(name, total)| HostRange {
            name: (*name).to_owned(),
            path: name.split('.').map(str::to_owned).collect(),
            instances: count,
            inclusive: per_instance(*total),
            exclusive: per_instance(*total),
            child_total_ns: 0,
            slowest_rank: None,
        })
        .collect();
    let gpu_projected_ranges = if gpu {
        ranges
            .iter()
            .map(|(name, total)| GpuProjectedRange {
                name: (*name).to_owned(),
                path: name.split('.').map(str::to_owned).collect(),
                style: "PushPop".to_owned(),
                instances: count,
                projected: per_instance(total / 2),
                host_total_ns: *total,
                gpu_operation_count: 3,
            })
            .collect()
    } else {
        Vec::new()
    };
    let host = Sample::new(host_ns.to_vec());
    Analysis {
        schema_version: super::SCHEMA_VERSION,
        provenance: provenance(gpu),
        run: run(count),
        gate: Gate {
            gating_codes: Vec::new(),
            result: GateResult::Pass,
            failing_codes: Vec::new(),
        },
        warnings: if gpu {
            Vec::new()
        } else {
            vec![Warning::new(
                WarningCode::GpuProjectionUnavailable,
                "nsys skipped it: no CUDA".to_owned(),
            )]
        },
        iteration_summary: IterationSummary {
            expected: count,
            found: count,
            complete: count,
            unattributed_ranges: 0,
            host_inclusive: host.iteration_stats(),
            host_exclusive: Sample::new(vec![5_000; host_ns.len()]).iteration_stats(),
            gpu_projected: if gpu {
                Sample::new(host_ns.iter().map(|d| d / 2).collect()).iteration_stats()
            } else {
                None
            },
            first_iteration: None,
        },
        iterations,
        host_ranges,
        gpu_projected_ranges,
        host_range_groups: Vec::new(),
        gpu_projected_range_groups: Vec::new(),
        ranks: None,
        steady_state: None,
        gpu_work: None,
        advice: Vec::new(),
        label: None,
        environment: None,
    }
}

/// Where the made-up numbers came from: nsys 2024.2, the projection written when `gpu`.
fn provenance(gpu: bool) -> Provenance {
    Provenance {
        run_dir: "/runs/r".to_owned(),
        manifest_path: "manifest.yaml".to_owned(),
        manifest_sha256: "0".repeat(64),
        trace_path: "trace.nsys-rep".to_owned(),
        trace_sha256: None,
        traces: Vec::new(),
        reports: BTreeMap::new(),
        report_status: [(
            ReportName::GpuProjection.as_str().to_owned(),
            if gpu {
                ReportStatus::written()
            } else {
                ReportStatus::skipped("no CUDA")
            },
        )]
        .into_iter()
        .collect(),
        nsys_version: "2024.2.3.38-242334140272v0".to_owned(),
        legacy_reports: false,
        stats_reused: false,
        tool_version: "0.1.0".to_owned(),
        ci_run: None,
        runner: None,
    }
}

/// The run settings of `smoke-tensor` with `count` iterations.
fn run(count: u64) -> Run {
    Run {
        profile_name: "smoke-tensor".to_owned(),
        run_id: "r1".to_owned(),
        target: Some(
            serde_json::json!({"import_path": null, "name": "smoke-tensor", "profile_prepare": false}),
        ),
        device: Some("cuda:0".to_owned()),
        git_commit: Some("0123abc".to_owned()),
        command_line: None,
        capture_range: Some("profile-target".to_owned()),
        iteration_pattern: "^iteration (\\d+)$".to_owned(),
        record_count: Some(2),
        record_ids_sha256: None,
        workload: serde_json::json!({"iterations": count, "warmup": 1}),
        cuda: Some(serde_json::json!({"synchronize_each_iteration": false})),
        data_source: Some(serde_json::json!({"name": "dummy"})),
        extra: BTreeMap::new(),
    }
}

/// The statistics of `n` instances with these values: for tests that need other range
/// statistics than an even split.
pub fn range_stats(values: Vec<i64>) -> RangeStats {
    Sample::new(values).range_stats()
}
