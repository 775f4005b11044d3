//! `ranks`: distributed runs recorded by the project's harness under real nsys, the ranks
//! forked by the harness under one nsys (`--ranks N`): each process a rank judged on its own,
//! steps timed by their slowest rank, checked against nsys's own push/pop report.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use crate::common::{analyze, assert_status, codes, fixture, plain_pushpop, CsvRange, Run};
use crate::require_nsys;

/// The ranks-2 fixture of each tested nsys, with the nsys that reads it.
const TWO_RANKS: [(&str, &str); 3] = [
    ("ranks-2", "2024.2"),
    ("ranks-2-2023.4", "2023.4"),
    ("ranks-2-2022.4", "2022.4"),
];

/// The median as nsys-gate defines it (linear interpolation, `numpy.percentile`).
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

/// The push/pop CSV nsys wrote for the run (2022.4: its legacy name).
fn pushpop_csv(run: &Run) -> Vec<CsvRange> {
    for name in ["nsys_nvtx_pushpop_trace.csv", "nsys_nvtxpptrace.csv"] {
        let path = run.path("stats").join(name);
        if path.exists() {
            return plain_pushpop(&path);
        }
    }
    panic!("no push/pop CSV under {}", run.path("stats").display());
}

/// Per PID: index -> host inclusive duration of the iterations under its capture range, as
/// nsys's report gives them.
fn iterations_by_pid(rows: &[CsvRange]) -> BTreeMap<u64, BTreeMap<u64, i64>> {
    let captures: Vec<u64> = rows
        .iter()
        .filter(|r| r.parent_id.is_none() && r.name == "profile-target")
        .map(|r| r.range_id)
        .collect();
    let mut out: BTreeMap<u64, BTreeMap<u64, i64>> = BTreeMap::new();
    for r in rows {
        if !r.parent_id.is_some_and(|p| captures.contains(&p)) {
            continue;
        }
        if let Some(index) = r.name.strip_prefix("iteration ") {
            out.entry(r.pid)
                .or_default()
                .insert(index.parse().unwrap(), r.duration);
        }
    }
    out
}

/// What a distributed run with a slower rank must give: it passes the gate, no capture or
/// duplicate warning, every rank's median is nsys's, the step median is the median of the
/// per-index maxima, and `slow_rank` was the slowest in at least 8 of 10 steps.
fn check_slower_rank(
    run: &Run,
    per_pid: &BTreeMap<u64, BTreeMap<u64, i64>>,
    ranks: usize,
    slow_rank: u64,
) {
    // one trace per rank: keyed by rank, and every process may have the same PID
    let keyed_by_pid = !run.path("trace_0.nsys-rep").exists();
    let a = run.analysis();
    let codes = codes(&a);
    assert!(
        !codes.contains(&"capture_range_multiple".to_owned()),
        "{codes:?}"
    );
    assert!(
        !codes.contains(&"duplicate_iterations".to_owned()),
        "{codes:?}"
    );
    assert_eq!(a["gate"]["result"], "pass", "{codes:?}");
    let list = a["ranks"].as_array().expect("ranks[]");
    assert_eq!(list.len(), ranks);
    assert_eq!(per_pid.len(), ranks);
    for (k, (pid, iterations)) in per_pid.iter().enumerate() {
        let rank = &list[k];
        assert_eq!(rank["rank"], k as u64);
        if keyed_by_pid {
            assert_eq!(rank["pid"], *pid);
        }
        assert_eq!(rank["iterations"], 10);
        let values: Vec<i64> = iterations.values().copied().collect();
        assert_eq!(
            rank["iteration_summary"]["host_inclusive"]["median_ns"]
                .as_f64()
                .unwrap(),
            median(&values),
            "rank {k}"
        );
    }
    // steps: the per-index maxima
    let maxima: Vec<i64> = (0..10u64)
        .map(|i| per_pid.values().map(|m| m[&i]).max().unwrap())
        .collect();
    let summary = &a["iteration_summary"];
    assert_eq!(summary["expected"], 10);
    assert_eq!(summary["found"], 10);
    assert_eq!(summary["complete"], 10);
    assert_eq!(
        summary["host_inclusive"]["median_ns"].as_f64().unwrap(),
        median(&maxima)
    );
    let steps = a["iterations"].as_array().unwrap();
    assert_eq!(steps.len(), 10);
    for (i, step) in steps.iter().enumerate() {
        assert_eq!(step["index"], i as u64);
        assert_eq!(step["host"]["inclusive_ns"], maxima[i]);
        let rank = step["rank"].as_u64().unwrap();
        assert_eq!(
            per_pid.values().nth(rank as usize).unwrap()[&(i as u64)],
            maxima[i]
        );
    }
    let slowest = list[slow_rank as usize]["slowest_steps"].as_u64().unwrap();
    assert!(
        slowest >= 8,
        "rank {slow_rank} slowest in {slowest} of 10 steps"
    );
    let all: u64 = list
        .iter()
        .map(|r| r["slowest_steps"].as_u64().unwrap())
        .sum();
    assert_eq!(all, 10);
}

#[test]
fn two_ranks_in_one_trace_pass_the_gate_on_each_tested_nsys() {
    for (name, version) in TWO_RANKS {
        let nsys = require_nsys!(version);
        let run = fixture(name);
        assert_status(&analyze(&run.dir, &nsys, &[]), 0);
        let per_pid = iterations_by_pid(&pushpop_csv(&run));
        check_slower_rank(&run, &per_pid, 2, 1);
        // the range tables cover both ranks, and name the rank `inference` took longest on
        let a = run.analysis();
        let inference = a["host_ranges"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == "inference")
            .unwrap();
        assert_eq!(inference["instances"], 20, "{version}");
        assert_eq!(inference["slowest_rank"], 1, "{version}");
    }
}

#[test]
fn four_ranks_in_one_trace_name_the_slower_one() {
    let nsys = require_nsys!("2024.2");
    let run = fixture("ranks-4");
    assert_status(&analyze(&run.dir, &nsys, &[]), 0);
    let per_pid = iterations_by_pid(&pushpop_csv(&run));
    check_slower_rank(&run, &per_pid, 4, 2);
}

#[test]
fn a_rank_missing_iterations_fails_the_gate_naming_it() {
    let nsys = require_nsys!("2024.2");
    let run = fixture("ranks-missing");
    assert_status(&analyze(&run.dir, &nsys, &[]), 1);
    let a = run.analysis();
    let missing: Vec<&Value> = a["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["code"] == "missing_iterations")
        .collect();
    assert_eq!(missing.len(), 1, "{:?}", a["warnings"]);
    assert_eq!(missing[0]["rank"], 1);
    assert_eq!(missing[0]["iterations"], serde_json::json!([8, 9]));
    assert!(
        missing[0]["message"]
            .as_str()
            .unwrap()
            .starts_with("rank 1: "),
        "{}",
        missing[0]["message"]
    );
    assert!(missing[0]["gating"].as_bool().unwrap());
    assert_eq!(a["ranks"][0]["iterations"], 10);
    assert_eq!(a["ranks"][1]["iterations"], 8);
    // steps 8 and 9 are incomplete: only rank 0 ran them
    let summary = &a["iteration_summary"];
    assert_eq!(summary["found"], 10);
    assert_eq!(summary["complete"], 8);
    assert!(!codes(&a).contains(&"capture_range_multiple".to_owned()));
}

#[test]
fn a_run_of_one_process_has_no_ranks() {
    let nsys = require_nsys!("2024.2");
    let run = fixture("clean");
    assert_status(&analyze(&run.dir, &nsys, &[]), 0);
    let a = run.analysis();
    assert_eq!(a["ranks"], Value::Null);
    assert!(a["iterations"][0].get("rank").is_none());
    let _: &Path = &run.dir;
}

#[test]
fn one_trace_per_rank_gives_the_same() {
    let nsys = require_nsys!("2024.2");
    let run = fixture("ranks-per-trace");
    assert_status(&analyze(&run.dir, &nsys, &[]), 0);
    // each rank's reports apart, under stats/RANK/; the ranks numbered by the file names
    let mut per_trace: BTreeMap<u64, BTreeMap<u64, i64>> = BTreeMap::new();
    for rank in 0..2u64 {
        let csv = run
            .path("stats")
            .join(rank.to_string())
            .join("nsys_nvtx_pushpop_trace.csv");
        let by_pid = iterations_by_pid(&plain_pushpop(&csv));
        assert_eq!(by_pid.len(), 1);
        per_trace.insert(rank, by_pid.into_values().next().unwrap());
    }
    check_slower_rank(&run, &per_trace, 2, 1);
    let a = run.analysis();
    assert_eq!(a["ranks"][0]["trace"], "trace_0.nsys-rep");
    assert_eq!(a["ranks"][1]["trace"], "trace_1.nsys-rep");
}

#[test]
fn a_rank_without_its_trace_is_missing_every_iteration() {
    let nsys = require_nsys!("2024.2");
    let run = fixture("ranks-per-trace");
    // ranks 0 and 2 of 3: rank 1 has no trace, and the manifest says there are 3 ranks
    std::fs::rename(run.path("trace_1.nsys-rep"), run.path("trace_2.nsys-rep")).unwrap();
    let manifest = run.manifest();
    run.set_manifest(&format!("{manifest}world_size: 4\n"));
    assert_status(&analyze(&run.dir, &nsys, &[]), 1);
    let a = run.analysis();
    let missing: Vec<u64> = a["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["code"] == "missing_iterations")
        .map(|w| w["rank"].as_u64().unwrap())
        .collect();
    assert_eq!(missing, [1, 3]);
    let ranks: Vec<u64> = a["ranks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["rank"].as_u64().unwrap())
        .collect();
    assert_eq!(ranks, [0, 2]);
}

/// Analyses of `names` (distributed runs), as a history folder beside `head`: one folder per
/// run, oldest first in path order.
fn history_of(names: &[&str], nsys: &Path, head: &Run) -> std::path::PathBuf {
    let folder = head.dir.parent().unwrap().join("history");
    for (k, name) in names.iter().enumerate() {
        let run = fixture(name);
        assert_status(&analyze(&run.dir, nsys, &[]), 0);
        let dir = folder.join(format!("{k:03}"));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::copy(run.path("analysis.json"), dir.join("analysis.json")).unwrap();
    }
    folder
}

#[test]
fn a_head_whose_rank_1_is_slower_is_slower_and_names_rank_1() {
    let nsys = require_nsys!("2024.2");
    let head = fixture("ranks-head");
    assert_status(&analyze(&head.dir, &nsys, &[]), 0);
    let bases = [
        "ranks-base-1",
        "ranks-base-2",
        "ranks-base-3",
        "ranks-base-4",
        "ranks-base-5",
    ];
    let history = history_of(&bases, &nsys, &head);
    let (out, c) = crate::compare::compare_json(&[&history, &head.dir]);
    let run = &c["runs"][0];
    assert_eq!(run["history"]["used"].as_array().unwrap().len(), 5, "{run}");
    let host = run["measures"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "host_inclusive")
        .unwrap();
    assert_eq!(host["verdict"], "slower", "{host}");
    // each rank an item: rank 1 slower, rank 0 not
    let ranks = run["ranks"]["changed"].as_array().expect("runs[].ranks");
    let verdict = |rank: u64| {
        ranks
            .iter()
            .find(|r| r["rank"] == rank)
            .map(|r| r["verdict"].as_str().unwrap().to_owned())
    };
    assert_eq!(verdict(1).as_deref(), Some("slower"), "{ranks:?}");
    assert_ne!(verdict(0).as_deref(), Some("slower"), "{ranks:?}");
    let r1 = ranks.iter().find(|r| r["rank"] == 1).unwrap();
    let pct = r1["change_pct"].as_f64().unwrap();
    assert!((4.0..12.0).contains(&pct), "{pct}");
    assert!(r1["p_value"].as_f64().is_some());
    // the world size is a judged condition, the same here
    let world = run["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "world_size")
        .expect("world_size");
    assert_eq!(world["judged"], true);
    assert_eq!(world["differs"], false);
    assert_eq!(world["head"], 2);
    let markdown = String::from_utf8(out.stdout).unwrap();
    assert!(markdown.contains("rank 1 +"), "{markdown}");
    assert!(markdown.contains(", **slower**"), "{markdown}");
}

#[test]
fn a_four_rank_head_against_two_rank_history_is_not_like_for_like() {
    let nsys = require_nsys!("2024.2");
    let head = fixture("ranks-4");
    assert_status(&analyze(&head.dir, &nsys, &[]), 0);
    let history = history_of(&["ranks-base-1", "ranks-base-2"], &nsys, &head);
    let (out, c) = crate::compare::compare_json(&[&history, &head.dir]);
    let run = &c["runs"][0];
    assert_eq!(run["like_for_like"], false);
    let conditions = run["conditions"].as_array().unwrap();
    // said first
    assert_eq!(conditions[0]["name"], "world_size");
    assert_eq!(conditions[0]["differs"], true);
    assert_eq!(conditions[0]["base"], 2);
    assert_eq!(conditions[0]["head"], 4);
    let markdown = String::from_utf8(out.stdout).unwrap();
    assert!(
        markdown.contains("**Not like for like:** world size (ranks)"),
        "{markdown}"
    );
}

fn sha256_of(path: &Path) -> String {
    use sha2::{Digest, Sha256};
    let bytes = std::fs::read(path).unwrap();
    Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[test]
fn each_rank_trace_is_checked_against_its_own_digest() {
    let nsys = require_nsys!("2024.2");
    let run = fixture("ranks-per-trace");
    let (d0, d1) = (
        sha256_of(&run.path("trace_0.nsys-rep")),
        sha256_of(&run.path("trace_1.nsys-rep")),
    );
    let manifest = run.manifest();
    // a list, rank 0 first
    run.set_manifest(&format!("{manifest}trace_sha256:\n- {d0}\n- {d1}\n"));
    assert_status(&analyze(&run.dir, &nsys, &[]), 0);
    let a = run.analysis();
    assert_eq!(
        a["provenance"]["traces"],
        serde_json::json!(["trace_0.nsys-rep", "trace_1.nsys-rep"])
    );
    assert_eq!(
        a["provenance"]["reports"]["nvtx_pushpop_trace"],
        "stats/0/nsys_nvtx_pushpop_trace.csv"
    );
    // a mapping by rank, rank 1's digest wrong: refused, naming its trace
    run.set_manifest(&format!("{manifest}trace_sha256:\n  0: {d0}\n  1: {d0}\n"));
    let out = analyze(&run.dir, &nsys, &[]);
    assert_status(&out, 2);
    let err = crate::common::stderr(&out);
    assert!(
        err.contains("trace_1.nsys-rep") && err.contains("trace_sha256"),
        "{err}"
    );
}

#[test]
fn fewer_processes_than_the_world_size_miss_the_others() {
    let nsys = require_nsys!("2024.2");
    for (name, world, missing) in [("ranks-2", 3, vec![2]), ("clean", 2, vec![1])] {
        let run = fixture(name);
        let manifest = run.manifest();
        run.set_manifest(&format!("{manifest}world_size: {world}\n"));
        assert_status(&analyze(&run.dir, &nsys, &[]), 1);
        let a = run.analysis();
        let named: Vec<u64> = a["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|w| w["code"] == "missing_iterations")
            .map(|w| w["rank"].as_u64().unwrap())
            .collect();
        assert_eq!(named, missing, "{name}");
        assert_eq!(
            a["ranks"].as_array().unwrap().len() as u64,
            world - 1,
            "{name}"
        );
    }
}
