//! Every recorded fixture through the built binary and real nsys: warning codes, exit
//! statuses and counts, and the numbers checked against the CSV rows nsys wrote.

use std::collections::HashMap;

use serde_json::Value;

use crate::common::{self, analyze, assert_status, codes, fixture, plain_pushpop, warning, Run};
use crate::require_nsys;

/// Analyses a fixture with the given nsys version and expected exit status.
fn analysed(name: &str, version: &str, status: i32) -> Option<(Run, Value)> {
    let run = common::analysed_with_status(name, &common::nsys(version)?, status);
    let a = run.analysis();
    Some((run, a))
}

fn gating_codes(a: &Value) -> Vec<String> {
    let mut c: Vec<String> = a["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["gating"] == true)
        .map(|w| w["code"].as_str().unwrap().to_owned())
        .collect();
    c.dedup();
    c
}

/// The analysis's numbers, checked against an ordinary CSV reading of the push/pop report
/// (fixtures whose names are plain): each iteration's host times are its row's, and every
/// scoped range's instances and totals are the sums of the rows below counted iterations.
fn check_numbers_against_csv(run: &Run, a: &Value) {
    let rows = plain_pushpop(&run.path("stats/nsys_nvtx_pushpop_trace.csv"));
    let by_id: HashMap<u64, &common::CsvRange> = rows.iter().map(|r| (r.range_id, r)).collect();
    let mut counted = Vec::new();
    for it in a["iterations"].as_array().unwrap() {
        let r = by_id[&it["range_id"].as_u64().unwrap()];
        let host = &it["host"];
        assert_eq!(host["start_ns"], r.start);
        assert_eq!(host["end_ns"], r.end);
        assert_eq!(host["inclusive_ns"], r.duration);
        assert_eq!(host["exclusive_ns"], r.dur_non_child);
        assert_eq!(host["child_total_ns"], r.dur_child);
        assert_eq!(it["tid"], r.tid);
        if it["complete"] == true && it["duplicate"] == false {
            counted.push(r.range_id);
        }
    }
    let summary = &a["iteration_summary"];
    if counted.is_empty() {
        assert!(summary["host_inclusive"].is_null());
    } else {
        let total: i64 = counted.iter().map(|id| by_id[id].duration).sum();
        assert_eq!(summary["host_inclusive"]["count"], counted.len());
        assert_eq!(summary["host_inclusive"]["total_ns"], total);
        let ex_total: i64 = counted.iter().map(|id| by_id[id].dur_non_child).sum();
        assert_eq!(summary["host_exclusive"]["total_ns"], ex_total);
        let min = counted.iter().map(|id| by_id[id].duration).min().unwrap();
        let max = counted.iter().map(|id| by_id[id].duration).max().unwrap();
        assert_eq!(summary["host_inclusive"]["minimum_ns"], min);
        assert_eq!(summary["host_inclusive"]["maximum_ns"], max);
    }
    let expected = common::scoped_totals(&rows, &counted);
    let ranges = a["host_ranges"].as_array().unwrap();
    assert_eq!(ranges.len(), expected.len(), "scoped names: {expected:?}");
    for r in ranges {
        let name = r["name"].as_str().unwrap();
        let (instances, inclusive, exclusive) = expected[name];
        assert_eq!(r["instances"], instances, "{name}");
        assert_eq!(r["inclusive"]["total_ns"], inclusive, "{name}");
        assert_eq!(r["exclusive"]["total_ns"], exclusive, "{name}");
        let path: Vec<&str> = r["path"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p.as_str().unwrap())
            .collect();
        assert_eq!(path.join("."), name);
        // Exclusive never exceeds inclusive; min <= median <= max.
        assert!(r["exclusive"]["total_ns"].as_i64() <= r["inclusive"]["total_ns"].as_i64());
        let st = &r["inclusive"];
        assert!(st["minimum_ns"].as_f64() <= st["median_ns"].as_f64());
        assert!(st["median_ns"].as_f64() <= st["maximum_ns"].as_f64());
    }
    let names: Vec<&str> = ranges.iter().map(|r| r["name"].as_str().unwrap()).collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted, "host_ranges sorted by name");
}

#[test]
fn clean_run_passes_with_every_number_from_the_csv() {
    let Some((run, a)) = analysed("clean", "2024.2", 0) else {
        return;
    };
    let s = &a["iteration_summary"];
    let expected = s["expected"].as_u64().unwrap();
    assert_eq!(s["found"], expected);
    assert_eq!(s["complete"], expected);
    assert_eq!(s["unattributed_ranges"], 0);
    assert!(gating_codes(&a).is_empty(), "{}", a["warnings"]);
    assert_eq!(a["gate"]["result"], "pass");
    let names: Vec<&str> = a["host_ranges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    for scoped in [
        "inference",
        "postprocessing",
        "postprocessing.resize",
        "preprocessing",
        "preprocessing.resize",
    ] {
        assert!(names.contains(&scoped), "{scoped} not in {names:?}");
    }
    let indexes: Vec<u64> = a["iterations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["index"].as_u64().unwrap())
        .collect();
    assert_eq!(indexes, (0..expected).collect::<Vec<_>>());
    assert_eq!(a["run"]["profile_name"], "smoke-tensor");
    assert_eq!(a["provenance"]["stats_reused"], false);
    assert_eq!(a["provenance"]["trace_path"], "trace.nsys-rep");
    check_numbers_against_csv(&run, &a);
}

#[test]
fn clean_run_recorded_and_read_by_2023_4() {
    let Some((run, a)) = analysed("clean-2023.4", "2023.4", 0) else {
        return;
    };
    assert!(a["provenance"]["nsys_version"]
        .as_str()
        .unwrap()
        .starts_with("2023.4"));
    check_numbers_against_csv(&run, &a);
}

#[test]
fn clean_run_read_by_2024_2_and_2023_4_gives_the_same_numbers() {
    let Some((_, newer)) = analysed("clean-2023.4", "2024.2", 0) else {
        return;
    };
    let Some((_, older)) = analysed("clean-2023.4", "2023.4", 0) else {
        return;
    };
    assert_eq!(newer["iterations"], older["iterations"]);
    assert_eq!(newer["host_ranges"], older["host_ranges"]);
}

#[test]
fn clean_run_of_2022_4_read_with_legacy_report_names() {
    let Some((run, a)) = analysed("clean-2022.4", "2022.4", 0) else {
        return;
    };
    assert!(codes(&a).contains(&"legacy_nsys_reports".to_owned()));
    check_numbers_against_csv(&run, &a);
}

#[test]
fn missing_iterations_fail_the_gate_and_are_listed() {
    let Some((run, a)) = analysed("missing-iterations", "2024.2", 1) else {
        return;
    };
    assert_eq!(gating_codes(&a), ["missing_iterations"]);
    let w = warning(&a, "missing_iterations");
    let expected = a["iteration_summary"]["expected"].as_u64().unwrap();
    let found = a["iteration_summary"]["found"].as_u64().unwrap();
    let missing: Vec<u64> = (found..expected).collect();
    assert_eq!(w["iterations"], serde_json::json!(missing));
    assert!(w["message"]
        .as_str()
        .unwrap()
        .starts_with(&format!("expected iterations 0-{}", expected - 1)));
    assert_eq!(a["gate"]["result"], "fail");
    check_numbers_against_csv(&run, &a);
}

#[test]
fn a_last_iteration_never_popped_is_incomplete_and_missing() {
    let Some((run, a)) = analysed("unclosed-last", "2024.2", 1) else {
        return;
    };
    let its = a["iterations"].as_array().unwrap();
    let last = its.last().unwrap();
    assert_eq!(last["complete"], false);
    assert!(its[..its.len() - 1].iter().all(|i| i["complete"] == true));
    let s = &a["iteration_summary"];
    assert_eq!(
        s["found"].as_u64().unwrap(),
        s["complete"].as_u64().unwrap() + 1
    );
    assert_eq!(s["host_inclusive"]["count"], s["complete"]);
    let w = warning(&a, "missing_iterations");
    assert!(w["iterations"].as_array().unwrap().contains(&last["index"]));
    check_numbers_against_csv(&run, &a);
}

#[test]
fn a_missing_capture_range_gates_and_iterations_are_still_read() {
    let Some((_, a)) = analysed("capture-missing", "2024.2", 1) else {
        return;
    };
    assert!(gating_codes(&a).contains(&"capture_range_missing".to_owned()));
    assert!(a["iteration_summary"]["found"].as_u64().unwrap() > 0);
}

#[test]
fn two_capture_ranges_gate_and_both_count() {
    let Some((run, a)) = analysed("capture-multiple", "2024.2", 1) else {
        return;
    };
    assert!(gating_codes(&a).contains(&"capture_range_multiple".to_owned()));
    assert_eq!(warning(&a, "capture_range_multiple")["count"], 2);
    let rows = plain_pushpop(&run.path("stats/nsys_nvtx_pushpop_trace.csv"));
    let iterations = rows
        .iter()
        .filter(|r| r.name.starts_with("iteration "))
        .count();
    assert_eq!(a["iteration_summary"]["found"], iterations);
}

#[test]
fn iteration_ranges_outside_the_capture_range_gate() {
    let Some((_, a)) = analysed("iterations-outside-capture", "2024.2", 1) else {
        return;
    };
    assert!(gating_codes(&a).contains(&"capture_range_exceeded".to_owned()));
    assert!(
        warning(&a, "capture_range_exceeded")["count"]
            .as_u64()
            .unwrap()
            > 0
    );
    assert!(
        a["iteration_summary"]["unattributed_ranges"]
            .as_u64()
            .unwrap()
            > 0
    );
}

#[test]
fn duplicate_and_unexpected_indexes_are_reported_not_gated() {
    let Some((run, a)) = analysed("duplicate-unexpected", "2024.2", 0) else {
        return;
    };
    let c = codes(&a);
    assert!(c.contains(&"duplicate_iterations".to_owned()), "{c:?}");
    assert!(c.contains(&"unexpected_iterations".to_owned()), "{c:?}");
    let dups: Vec<&Value> = a["iterations"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["duplicate"] == true)
        .collect();
    assert!(!dups.is_empty());
    // The later pass of an index stays in the list but not in the statistics.
    let counted = a["iterations"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["complete"] == true && i["duplicate"] == false)
        .count();
    assert_eq!(a["iteration_summary"]["host_inclusive"]["count"], counted);
    for d in dups {
        let first = a["iterations"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["index"] == d["index"] && i["duplicate"] == false)
            .unwrap();
        assert!(first["host"]["start_ns"].as_i64() < d["host"]["start_ns"].as_i64());
    }
    check_numbers_against_csv(&run, &a);
}

#[test]
fn iterations_on_a_worker_thread_are_outside_the_capture_range() {
    let Some((_, a)) = analysed("worker-thread", "2024.2", 1) else {
        return;
    };
    assert!(gating_codes(&a).contains(&"capture_range_exceeded".to_owned()));
    let tids: Vec<u64> = a["iterations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["tid"].as_u64().unwrap())
        .collect();
    assert!(
        tids.windows(2).all(|w| w[0] == w[1]),
        "measured on one thread: {tids:?}"
    );
}

#[test]
fn without_a_capture_range_the_busiest_thread_is_measured() {
    let Some((run, a)) = analysed("no-capture-worker", "2024.2", 1) else {
        return;
    };
    let rows = plain_pushpop(&run.path("stats/nsys_nvtx_pushpop_trace.csv"));
    let mut per_thread: HashMap<u64, usize> = HashMap::new();
    for r in rows.iter().filter(|r| r.name.starts_with("iteration ")) {
        *per_thread.entry(r.tid).or_default() += 1;
    }
    let busiest = per_thread
        .iter()
        .max_by_key(|(_, n)| **n)
        .map(|(t, _)| *t)
        .unwrap();
    for it in a["iterations"].as_array().unwrap() {
        assert_eq!(it["tid"], busiest);
    }
    assert!(codes(&a).contains(&"capture_range_exceeded".to_owned()));
}

#[test]
fn ranges_in_a_named_domain_keep_their_domain() {
    let Some((_, a)) = analysed("named-domain", "2024.2", 0) else {
        return;
    };
    assert!(!codes(&a).contains(&"capture_range_missing".to_owned()));
    let s = &a["iteration_summary"];
    assert_eq!(s["found"], s["expected"]);
    let names: Vec<&str> = a["host_ranges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert!(names.iter().all(|n| n.starts_with("harness:")), "{names:?}");
}

#[test]
fn capture_range_null_reads_the_whole_trace() {
    let Some((run, a)) = analysed("capture-null", "2024.2", 0) else {
        return;
    };
    assert!(a["run"]["capture_range"].is_null());
    assert!(!codes(&a).iter().any(|c| c.starts_with("capture_range")));
    check_numbers_against_csv(&run, &a);
}

#[test]
fn a_custom_iteration_pattern_names_the_iterations() {
    let Some((run, a)) = analysed("custom-pattern", "2024.2", 0) else {
        return;
    };
    assert_ne!(a["run"]["iteration_pattern"], "^iteration (\\d+)$");
    let s = &a["iteration_summary"];
    assert_eq!(s["found"], s["expected"]);
    check_numbers_against_csv(&run, &a);
}

#[test]
fn hostile_names_come_out_exactly_as_pushed() {
    let Some((_, a)) = analysed("hostile-names", "2024.2", 0) else {
        return;
    };
    let names: Vec<String> = a["host_ranges"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| {
            r["path"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p.as_str().unwrap().to_owned())
        })
        .collect();
    let joined = names.join("\u{1}");
    for needle in [",", "\"", "\n", "|", "`", "<", "@", "#", "🚀"] {
        assert!(
            joined.contains(needle),
            "no name holds {needle:?}: {names:?}"
        );
    }
    // Every scoped name appears as many times as iterations were counted.
    let count = a["iteration_summary"]["host_inclusive"]["count"].clone();
    for r in a["host_ranges"].as_array().unwrap() {
        assert_eq!(r["instances"], count, "{}", r["name"]);
    }
}

#[test]
fn gpu_projection_is_joined_on_range_id() {
    let Some((_, a)) = analysed("gpu-projection", "2024.2", 0) else {
        return;
    };
    assert!(!codes(&a).contains(&"gpu_projection_unavailable".to_owned()));
    let s = &a["iteration_summary"];
    assert!(!s["gpu_projected"].is_null());
    for it in a["iterations"].as_array().unwrap() {
        let g = &it["gpu_projection"];
        assert!(!g.is_null(), "{it}");
        assert_eq!(
            g["end_ns"].as_i64().unwrap() - g["start_ns"].as_i64().unwrap(),
            g["projected_ns"].as_i64().unwrap()
        );
        assert!(g["gpu_operation_count"].as_u64().unwrap() > 0);
    }
    let gpu_names: Vec<&str> = a["gpu_projected_ranges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert!(gpu_names.contains(&"inference"), "{gpu_names:?}");
    // A child range that launched nothing is not listed.
    assert!(
        !gpu_names.contains(&"postprocessing.resize"),
        "{gpu_names:?}"
    );
}

#[test]
fn gpu_projection_of_2023_4_counts_work_outside_every_range() {
    let Some((_, a)) = analysed("gpu-projection-2023.4", "2023.4", 0) else {
        return;
    };
    let w = warning(&a, "gpu_ops_outside_ranges");
    assert!(w["count"].as_u64().unwrap() > 0);
    assert_eq!(w["gating"], false);
}

#[test]
fn no_gpu_work_in_the_capture_range_gates() {
    // CUDA data exists but only work outside every range: nsys 2024.2 writes an empty
    // projection (neither PROCESSED nor SKIPPED), which is a result, not a skip.
    let Some((_, a)) = analysed("gpu-outside-capture", "2024.2", 1) else {
        return;
    };
    assert_eq!(gating_codes(&a), ["capture_range_without_gpu_work"]);
    assert!(!codes(&a).contains(&"gpu_projection_unavailable".to_owned()));
    assert_eq!(
        warning(&a, "iterations_without_gpu_projection")["iterations"],
        serde_json::json!([0, 1, 2, 3, 4])
    );
    assert_eq!(
        a["provenance"]["report_status"]["nvtx_gpu_proj_trace"]["status"],
        "written"
    );
}

#[test]
fn no_gpu_work_in_the_capture_range_read_by_2023_4() {
    let Some((_, a)) = analysed("gpu-outside-capture-2023.4", "2023.4", 1) else {
        return;
    };
    assert_eq!(gating_codes(&a), ["capture_range_without_gpu_work"]);
    assert_eq!(warning(&a, "gpu_ops_outside_ranges")["count"], 1);
}

#[test]
fn an_iteration_that_launched_nothing_has_no_projection() {
    let Some((_, a)) = analysed("gpu-iteration-without-work", "2024.2", 0) else {
        return;
    };
    assert_eq!(
        warning(&a, "iterations_without_gpu_projection")["iterations"],
        serde_json::json!([2])
    );
    let its = a["iterations"].as_array().unwrap();
    assert!(its[2]["gpu_projection"].is_null());
    assert!(!its[1]["gpu_projection"].is_null());
    assert_eq!(a["iteration_summary"]["gpu_projected"]["count"], 4);
}

#[test]
fn gpu_projection_read_by_2022_4_with_legacy_names() {
    let Some((_, a)) = analysed("gpu-projection-2022.4", "2022.4", 0) else {
        return;
    };
    assert!(codes(&a).contains(&"legacy_nsys_reports".to_owned()));
    assert!(!a["iteration_summary"]["gpu_projected"].is_null());
}

#[test]
fn slow_first_iteration_and_variance_are_advisory() {
    let Some((_, a)) = analysed("slow-iterations", "2024.2", 0) else {
        return;
    };
    for code in ["first_iteration_slow", "high_variance", "slow_iterations"] {
        assert_eq!(warning(&a, code)["gating"], false, "{code}");
    }
    assert_eq!(
        warning(&a, "slow_iterations")["iterations"],
        serde_json::json!([0, 5])
    );
    let first = &a["iteration_summary"]["first_iteration"];
    assert_eq!(first["index"], 0);
    assert!(first["ratio_to_median"].as_f64().unwrap() > 1.5);
}

/// The shape of a real public GPU LLM inference trace (`llama-like`): 64 passes named
/// `token_N_processing`, per-layer ranges whose names hold decimal indexes (1,536 distinct
/// scoped names), and a first pass about 15 times the steady ones.
#[test]
fn an_llm_trace_has_indexed_names_and_one_slow_first_pass() {
    let Some((run, a)) = analysed("llama-like", "2024.2", 0) else {
        return;
    };
    assert_eq!(a["run"]["iteration_pattern"], "^token_(\\d+)_processing$");
    let s = &a["iteration_summary"];
    assert_eq!(s["expected"], 64);
    assert_eq!(s["found"], 64);
    assert_eq!(s["complete"], 64);
    assert_eq!(a["gate"]["result"], "pass");

    // One outlier: the first pass, ~15x the median; every other pass within 10 % of it.
    let first = &s["first_iteration"];
    assert_eq!(first["index"], 0);
    let ratio = first["ratio_to_median"].as_f64().unwrap();
    assert!((10.0..20.0).contains(&ratio), "first / median = {ratio}");
    let median = s["host_inclusive"]["median_ns"].as_f64().unwrap();
    let its = a["iterations"].as_array().unwrap();
    assert_eq!(its[0]["index"], 0);
    for it in &its[1..] {
        let host = it["host"]["inclusive_ns"].as_f64().unwrap();
        assert!((host / median - 1.0).abs() < 0.1, "{it}");
    }
    // By the contract's definitions one pass 15x the others is all three, none gating.
    for code in ["first_iteration_slow", "high_variance", "slow_iterations"] {
        assert_eq!(warning(&a, code)["gating"], false, "{code}");
    }
    assert_eq!(
        warning(&a, "slow_iterations")["iterations"],
        serde_json::json!([0])
    );
    assert!(gating_codes(&a).is_empty(), "{}", a["warnings"]);

    // Names with decimal indexes: every (layer, token) pair is a scoped name of its own.
    let ranges = a["host_ranges"].as_array().unwrap();
    let indexed = ranges
        .iter()
        .filter(|r| {
            r["name"]
                .as_str()
                .unwrap()
                .contains(|c: char| c.is_ascii_digit())
        })
        .count();
    assert!(indexed > 500, "{indexed} indexed scoped names");
    assert_eq!(
        ranges.len(),
        1538,
        "8 layers x 3 ranges x 64 tokens, embed, sample"
    );
    let nested = ranges
        .iter()
        .find(|r| r["name"] == "layer_3_token_6.ensure_layer_3_weights")
        .expect("layer_3_token_6.ensure_layer_3_weights");
    assert_eq!(
        nested["path"],
        serde_json::json!(["layer_3_token_6", "ensure_layer_3_weights"])
    );
    assert_eq!(nested["instances"], 1);
    for plain in ["embed", "sample"] {
        let r = ranges.iter().find(|r| r["name"] == plain).expect(plain);
        assert_eq!(r["instances"], 64, "{plain}");
    }
    check_numbers_against_csv(&run, &a);
}

#[test]
fn gate_flags_change_the_set_and_the_status() {
    let nsys = require_nsys!("2024.2");
    let run = fixture("missing-iterations");
    let out = analyze(&run.dir, &nsys, &["--no-gate-on", "missing_iterations"]);
    assert_status(&out, 0);
    let a = run.analysis();
    assert_eq!(warning(&a, "missing_iterations")["gating"], false);
    assert!(!a["gate"]["gating_codes"]
        .as_array()
        .unwrap()
        .contains(&"missing_iterations".into()));
    let out = analyze(
        &run.dir,
        &nsys,
        &[
            "--gate-on",
            "gpu_projection_unavailable",
            "--no-gate-on",
            "missing_iterations",
        ],
    );
    assert_status(&out, 1);
    assert_eq!(
        run.analysis()["gate"]["failing_codes"],
        serde_json::json!(["gpu_projection_unavailable"])
    );
}
