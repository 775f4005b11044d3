//! Analyses made up for the comparison's unit tests (the CLI tests use real traces).

use serde_json::json;

use crate::artifact::Analysis;

/// An analysis of a clean run: one counted iteration per `host_ns` value (GPU projection half
/// of it when `gpu`), and host ranges `(name, exclusive total)`.
pub fn analysis(host_ns: &[i64], ranges: &[(&str, i64)], gpu: bool) -> Analysis {
    let iterations: Vec<_> = host_ns
        .iter()
        .enumerate()
        .map(|(i, &ns)| {
            json!({"index": i, "range_id": i + 2, "pid": 19, "tid": 19, "complete": true,
                   "duplicate": false,
                   "host": {"start_ns": 0, "end_ns": ns, "inclusive_ns": ns, "exclusive_ns": 0,
                            "child_total_ns": ns},
                   "gpu_projection": if gpu {
                       json!({"start_ns": 0, "end_ns": ns / 2, "projected_ns": ns / 2,
                              "gpu_operation_count": 3})
                   } else { json!(null) }})
        })
        .collect();
    let stats = |total: i64| {
        json!({"total_ns": total, "mean_ns": 0.0, "median_ns": 0.0, "minimum_ns": 0,
               "maximum_ns": 0, "stddev_ns": 0.0})
    };
    let host_ranges: Vec<_> = ranges
        .iter()
        .map(|(name, total)| {
            json!({"name": name, "path": name.split('.').collect::<Vec<_>>(),
                   "instances": host_ns.len(), "inclusive": stats(*total),
                   "exclusive": stats(*total), "child_total_ns": 0})
        })
        .collect();
    let gpu_ranges: Vec<_> = if gpu {
        ranges
            .iter()
            .map(|(name, total)| {
                json!({"name": name, "path": [name], "style": "PushPop",
                       "instances": host_ns.len(), "projected": stats(total / 2),
                       "host_total_ns": total, "gpu_operation_count": 3})
            })
            .collect()
    } else {
        Vec::new()
    };
    let count = host_ns.len();
    let warnings = if gpu {
        json!([])
    } else {
        json!([{"code": "gpu_projection_unavailable", "gating": false, "message": "no CUDA"}])
    };
    let value = json!({
        "schema_version": 1,
        "provenance": {"run_dir": "/runs/r", "manifest_path": "manifest.yaml",
                       "manifest_sha256": "0", "trace_path": "trace.nsys-rep", "reports": {},
                       "report_status": {}, "nsys_version": "2024.2.3.38-242334140272v0",
                       "legacy_reports": false, "stats_reused": false, "tool_version": "0.1.0"},
        "run": {"profile_name": "smoke-tensor", "run_id": "r1",
                "target": {"import_path": null, "name": "smoke-tensor", "profile_prepare": false},
                "device": "cuda:0", "git_commit": "0123abc", "command_line": null,
                "capture_range": "profile-target", "iteration_pattern": "^iteration (\\d+)$",
                "record_count": 2, "workload": {"iterations": count, "warmup": 1},
                "cuda": {"synchronize_each_iteration": false},
                "data_source": {"name": "dummy"}, "extra": {}},
        "gate": {"gating_codes": [], "result": "pass", "failing_codes": []},
        "warnings": warnings,
        "iteration_summary": {"expected": count, "found": count, "complete": count,
                              "unattributed_ranges": 0,
                              "host_inclusive": {"count": count, "total_ns": 0, "mean_ns": 0.0,
                                  "median_ns": 0.0, "minimum_ns": 0, "maximum_ns": 0,
                                  "p90_ns": 0.0, "p99_ns": 0.0, "stddev_ns": 0.0, "cv": 0.0},
                              "host_exclusive": null, "gpu_projected": null,
                              "first_iteration": null},
        "iterations": iterations,
        "host_ranges": host_ranges,
        "gpu_projected_ranges": gpu_ranges,
    });
    serde_json::from_value(value).expect("a made-up analysis")
}
