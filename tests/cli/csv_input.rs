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
