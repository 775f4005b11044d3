//! Report CSVs the tests write themselves, analysed with `--reuse-stats`: exact error
//! positions for bad rows, and shapes no recorded trace has (10,000-level nesting).

use std::fmt::Write as _;

use crate::common::{self, assert_status, fixture, stderr, Run};

const HEADER: &str = "Start (ns),End (ns),Duration (ns),DurChild (ns),DurNonChild (ns),Name,PID,TID,Lvl,NumChild,RangeId,ParentId,RangeStack,NameTree";

/// The clean fixture's manifest and trace, with the given push/pop CSV and a stamp saying
/// nsys 2024.2 wrote it and skipped the GPU projection.
fn run_with_csv(pushpop: &[u8]) -> Run {
    let run = fixture("clean");
    let stats = run.path("stats");
    std::fs::create_dir_all(&stats).unwrap();
    std::fs::write(stats.join("nsys_nvtx_pushpop_trace.csv"), pushpop).unwrap();
    std::fs::write(stats.join("nsys_nvtx_gpu_proj_trace.csv"), "").unwrap();
    std::fs::write(
        stats.join("nsys-gate-stats.json"),
        r#"{"nsys_version": "2024.2.3.38-242334140272v0", "legacy_reports": false,
            "reports": {"nvtx_pushpop_trace": {"status": "written"},
                        "nvtx_gpu_proj_trace": {"status": "skipped", "message": "stats/trace.sqlite does not contain CUDA API data."}}}"#,
    )
    .unwrap();
    std::fs::write(run.path("analysis.json"), "previous\n").unwrap();
    run
}

fn reuse(run: &Run) -> std::process::Output {
    common::reuse_stats(&run.dir)
}

/// A capture range holding `iteration 0..n` with one `work` child each, as nsys writes it.
fn rows(n: u64) -> String {
    let mut out = format!("{HEADER}\n");
    let per = 1000;
    let total = n as i64 * per;
    writeln!(
        out,
        "0,{end},{end},{total},{rest},profile-target,7,7,0,{n},1,,:1,profile-target",
        end = total + 10,
        rest = 10
    )
    .unwrap();
    for i in 0..n {
        let start = 5 + i as i64 * per;
        let id = 2 + 2 * i;
        writeln!(
            out,
            "{start},{end},{per},400,600,iteration {i},7,7,1,1,{id},1,:1:{id},--iteration {i}",
            end = start + per
        )
        .unwrap();
        writeln!(
            out,
            "{s},{e},400,0,400,work,7,7,2,0,{c},{id},:1:{id}:{c},----work",
            s = start + 100,
            e = start + 500,
            c = id + 1
        )
        .unwrap();
    }
    out
}

#[track_caller]
fn refused(run: &Run, needles: &[&str]) {
    let out = reuse(run);
    assert_status(&out, 2);
    let err = stderr(&out);
    for needle in needles {
        assert!(err.contains(needle), "{needle:?} not in:\n{err}");
    }
    assert_eq!(
        std::fs::read_to_string(run.path("analysis.json")).unwrap(),
        "previous\n"
    );
}

#[test]
fn written_rows_analyse_as_expected() {
    let run = run_with_csv(rows(5).as_bytes());
    assert_status(&reuse(&run), 0);
    let a = run.analysis();
    assert_eq!(a["iteration_summary"]["complete"], 5);
    assert_eq!(a["iteration_summary"]["host_inclusive"]["total_ns"], 5000);
    assert_eq!(a["host_ranges"][0]["name"], "work");
    assert_eq!(a["host_ranges"][0]["inclusive"]["total_ns"], 2000);
}

#[test]
fn end_before_start_names_file_line_and_column() {
    let mut text = rows(3);
    text = text.replacen(
        "5,1005,1000,400,600,iteration 0",
        "1005,5,0,400,0,iteration 0",
        1,
    );
    let run = run_with_csv(text.as_bytes());
    refused(
        &run,
        &[
            "stats/nsys_nvtx_pushpop_trace.csv:3: column `End (ns)`: `End` (5) is before `Start` (1005)",
            "2024.2.3.38-242334140272v0",
        ],
    );
}

#[test]
fn a_row_that_does_not_parse_names_file_line_and_column() {
    let text = rows(3).replacen(",7,7,1,1,4,1,", ",7,seven,1,1,4,1,", 1);
    let run = run_with_csv(text.as_bytes());
    refused(
        &run,
        &["stats/nsys_nvtx_pushpop_trace.csv:5", "column `TID`"],
    );
}

#[test]
fn a_parent_that_is_not_there_names_file_line_and_column() {
    let text = rows(3).replacen(
        ",work,7,7,2,0,5,4,:1:4:5,",
        ",work,7,7,2,0,5,99,:1:99:5,",
        1,
    );
    let run = run_with_csv(text.as_bytes());
    refused(
        &run,
        &[
            "stats/nsys_nvtx_pushpop_trace.csv:6",
            "column `ParentId`",
            "parent range 99",
        ],
    );
}

#[test]
fn a_csv_that_is_not_utf8_is_refused() {
    // A name that is not UTF-8, in both Name and NameTree as nsys would write it.
    let text = rows(2);
    let at = text.rfind(",work,").unwrap() + 2;
    let tree = text.rfind("----work").unwrap() + 5;
    let mut bytes = text.into_bytes();
    bytes[at] = 0xff;
    bytes[tree] = 0xff;
    let run = run_with_csv(&bytes);
    refused(&run, &["nsys_nvtx_pushpop_trace.csv", "UTF-8"]);
}

#[test]
fn ten_thousand_nested_levels_do_not_overflow_the_stack() {
    // One iteration with a short chain below it, then a 10,000-deep chain outside every
    // iteration: the tree walks are iterative. (RangeStack and NameTree are left out: they
    // would make the file quadratic in depth, and they are optional checks.)
    const DEPTH: u64 = 10_000;
    let header = "Start (ns),End (ns),Duration (ns),DurChild (ns),DurNonChild (ns),Name,PID,TID,Lvl,NumChild,RangeId,ParentId";
    let mut out = format!("{header}\n");
    writeln!(out, "0,100,100,50,50,profile-target,7,7,0,1,1,").unwrap();
    writeln!(out, "10,60,50,40,10,iteration 0,7,7,1,1,2,1").unwrap();
    let mut parent = 2;
    for level in 0..200u64 {
        let (s, e) = (11 + level as i64 / 10, 59 - level as i64 / 10);
        let child = if level == 199 { 0 } else { 1 };
        let id = 3 + level;
        writeln!(
            out,
            "{s},{e},{d},0,{d},nested,7,7,{lvl},{child},{id},{parent}",
            d = e - s,
            lvl = 2 + level
        )
        .unwrap();
        parent = id;
    }
    let base = 1_000_000i64;
    let mut parent: Option<u64> = None;
    for level in 0..DEPTH {
        let id = 10_000 + level;
        let (s, e) = (base + level as i64, base + 2 * DEPTH as i64 - level as i64);
        let p = parent.map(|p| p.to_string()).unwrap_or_default();
        writeln!(
            out,
            "{s},{e},{d},0,{d},deep,7,7,{level},1,{id},{p}",
            d = e - s
        )
        .unwrap();
        parent = Some(id);
    }
    let run = run_with_csv(out.as_bytes());
    std::fs::remove_file(run.path("analysis.json")).unwrap();
    let out = reuse(&run);
    // Only one of the five expected iterations: the gate fails, nothing crashes.
    assert_status(&out, 1);
    let a = run.analysis();
    assert_eq!(a["iteration_summary"]["unattributed_ranges"], DEPTH);
    let deepest = a["host_ranges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["path"].as_array().unwrap().len())
        .max()
        .unwrap();
    assert_eq!(deepest, 200);
}

/// A capture range holding `iteration 0` with a chain `depth` levels deep below it (each
/// level's exclusive time 10 ns), without `RangeStack` and `NameTree` (which would make the
/// file quadratic in depth), as nsys writes the other columns.
fn deep_chain(depth: u64) -> String {
    let header = "Start (ns),End (ns),Duration (ns),DurChild (ns),DurNonChild (ns),Name,PID,TID,Lvl,NumChild,RangeId,ParentId";
    let total = 10 * depth as i64 + 100;
    let mut out = String::with_capacity(64 * depth as usize);
    writeln!(out, "{header}").unwrap();
    let (end, inner) = (total + 20, total + 10);
    writeln!(out, "0,{end},{end},{inner},10,profile-target,7,7,0,1,1,").unwrap();
    writeln!(
        out,
        "5,{e},{inner},{total},10,iteration 0,7,7,1,1,2,1",
        e = total + 15
    )
    .unwrap();
    for level in 0..depth {
        let (s, e) = (10 + 5 * level as i64, total + 10 - 5 * level as i64);
        let d = e - s;
        let (child, children) = if level + 1 == depth {
            (0, 0)
        } else {
            (d - 10, 1)
        };
        writeln!(
            out,
            "{s},{e},{d},{child},{non},d,7,7,{lvl},{children},{id},{parent}",
            non = d - child,
            lvl = 2 + level,
            id = 3 + level,
            parent = 2 + level
        )
        .unwrap();
    }
    out
}

/// Analyses a `deep_chain(depth)` (one iteration expected) with the memory capped at 128 MiB;
/// checks what holds at any depth over the limit, and returns the analysis.
fn analyse_deep_chain(depth: u64) -> serde_json::Value {
    const CAP_KIB: u64 = 128 << 10;
    let run = run_with_csv(deep_chain(depth).as_bytes());
    run.edit_manifest("  iterations: 5\n", "  iterations: 1\n");
    let (out, peak_kib) = common::reuse_stats_capped(&run.dir, CAP_KIB);
    eprintln!("{depth} levels: peak resident memory {peak_kib} KiB");
    assert!(
        peak_kib <= CAP_KIB,
        "{depth} levels: peak resident memory {peak_kib} KiB (killed over {CAP_KIB} KiB)"
    );
    assert_status(&out, 0);
    let size = std::fs::metadata(run.path("analysis.json")).unwrap().len();
    eprintln!("{depth} levels: analysis.json {size} bytes");
    assert!(size < 2 << 20, "analysis.json is {size} bytes");
    let a = run.analysis();

    let w = a["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["code"] == "nesting_truncated")
        .expect("nesting_truncated");
    assert_eq!(w["gating"], false);
    assert_eq!(w["depth"], depth);
    assert_eq!(w["depth_limit"], 256);
    assert_eq!(w["count"], depth - 256);
    let message = w["message"].as_str().unwrap();
    assert!(message.contains(&format!("{depth} levels")), "{message}");

    // 256 names, the deepest at level 256 holding the time of everything below it.
    let ranges = a["host_ranges"].as_array().unwrap();
    assert_eq!(ranges.len(), 256);
    let deepest = ranges
        .iter()
        .max_by_key(|r| r["path"].as_array().unwrap().len())
        .unwrap();
    assert_eq!(deepest["path"].as_array().unwrap().len(), 256);
    assert_eq!(
        deepest["exclusive"]["total_ns"],
        deepest["inclusive"]["total_ns"]
    );
    assert_eq!(deepest["child_total_ns"], 0);
    let total = |v: &serde_json::Value| v["total_ns"].as_i64().unwrap();
    let exclusive: i64 = ranges.iter().map(|r| total(&r["exclusive"])).sum::<i64>()
        + total(&a["iteration_summary"]["host_exclusive"]);
    assert_eq!(exclusive, total(&a["iteration_summary"]["host_inclusive"]));
    a
}

#[test]
fn ten_thousand_levels_below_an_iteration_fold_into_a_small_analysis() {
    // Before the nesting limit: a 353 MB analysis.json and 2.8 GB of memory.
    analyse_deep_chain(10_000);
}

#[test]
fn two_hundred_thousand_levels_below_an_iteration_stay_in_bounded_memory() {
    // Memory and output linear in the input: 20 times the depth of the test above, in the
    // same 128 MiB and under the same 2 MB of output.
    analyse_deep_chain(200_000);
}
