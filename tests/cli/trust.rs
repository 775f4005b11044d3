//! The trust boundary, round 3 (the issue's smaller findings and the report's escapes): text
//! that reorders what a reader sees, numbers at the edge of `f64`, a run refused by another's
//! lock, and a comparison of a run with itself. No nsys: analyses come from
//! `analyze --reuse-stats` ([`reusable_run`]).

use std::path::Path;

use serde_json::Value;

use crate::common::{assert_status, bin, read_json, reuse_stats, stderr, Run};
use crate::post::analyses::reusable_run;

/// A run directory holding an analysis.json (edited by `edit`).
fn analysed_run(edit: impl FnOnce(&mut Value)) -> Run {
    let run = reusable_run();
    assert_status(&reuse_stats(&run.dir), 0);
    let mut analysis = run.analysis();
    edit(&mut analysis);
    std::fs::write(
        run.path("analysis.json"),
        serde_json::to_string_pretty(&analysis).unwrap(),
    )
    .unwrap();
    run
}

/// `nsys-gate report --run-dir DIR --output -` from `cwd`: the report.
fn report_of(dir: &Path, cwd: &Path) -> String {
    let out = bin()
        .args(["report", "--output", "-", "--run-dir"])
        .arg(dir)
        .current_dir(cwd)
        .env_remove("GITHUB_ACTIONS")
        .output()
        .unwrap();
    assert_status(&out, 0);
    String::from_utf8(out.stdout).unwrap()
}

const BIDI: [char; 12] = [
    '\u{061C}', '\u{200E}', '\u{200F}', '\u{202A}', '\u{202B}', '\u{202C}', '\u{202D}', '\u{202E}',
    '\u{2066}', '\u{2067}', '\u{2068}', '\u{2069}',
];

/// Issue item 4: an `iteration_pattern` holding U+202E and U+202C reached the facts table,
/// and a folder named with U+202E reached `Full data: …`, inside code spans, which lacked the
/// check every other escape has.
#[test]
fn bidirectional_overrides_never_reach_the_report_even_in_code_spans() {
    let run = analysed_run(|a| {
        a["run"]["iteration_pattern"] = "^iteration\u{202E} (\\d+)\u{202C}$".into();
    });
    let tmp = assert_fs::TempDir::new().unwrap();
    let folder = tmp.path().join("runs\u{202E}txt.exe");
    std::fs::create_dir_all(&folder).unwrap();
    let dir = folder.join("clean");
    std::fs::rename(&run.dir, &dir).unwrap();
    let report = report_of(&dir, tmp.path());
    for c in BIDI {
        assert!(
            !report.contains(c),
            "U+{:04X} reached the report:\n{report}",
            c as u32
        );
    }
    assert!(report.contains("Full data: "), "{report}");
    assert!(report.contains("| iteration pattern | "), "{report}");
}

/// Also seen: `f64::MAX` in an analysis.json printed as a 309-digit number. Whatever an
/// analysis.json holds, a number in the report is a few characters.
#[test]
fn numbers_at_the_edge_of_f64_print_short() {
    let run = analysed_run(|a| {
        let host = &mut a["iteration_summary"]["host_inclusive"];
        for field in [
            "mean_ns",
            "median_ns",
            "p90_ns",
            "p99_ns",
            "stddev_ns",
            "cv",
        ] {
            host[field] = Value::from(f64::MAX);
        }
    });
    let report = report_of(&run.dir, run.dir.parent().unwrap());
    let longest = report
        .split(|c: char| !c.is_ascii_digit())
        .map(str::len)
        .max()
        .unwrap_or(0);
    assert!(longest < 20, "a number of {longest} digits:\n{report}");
    for word in ["inf", "NaN"] {
        assert!(
            !report
                .split_whitespace()
                .any(|w| w.trim_matches('|') == word),
            "{word} in:\n{report}"
        );
    }
}

/// Also seen: a `run` refused by the lock replaced report.md with a "gate error" report. A run
/// refused because another nsys-gate is analysing the run directory touches none of its
/// files.
#[test]
fn a_run_refused_by_the_lock_touches_nothing_of_the_other_run() {
    let run = reusable_run();
    std::fs::write(run.path("report.md"), "the other run's report\n").unwrap();
    std::fs::write(run.path("analysis.json"), "the other run's analysis\n").unwrap();
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(run.path("stats/.nsys-gate.lock"))
        .unwrap();
    lock.try_lock().unwrap();
    let out = bin()
        .args(["run", "--no-post", "--reuse-stats", "--run-dir"])
        .arg(&run.dir)
        .env_remove("GITHUB_ACTIONS")
        .output()
        .unwrap();
    assert_status(&out, 2);
    assert!(
        stderr(&out).contains("another nsys-gate is analysing"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        std::fs::read_to_string(run.path("report.md")).unwrap(),
        "the other run's report\n"
    );
    assert_eq!(
        std::fs::read_to_string(run.path("analysis.json")).unwrap(),
        "the other run's analysis\n"
    );
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    drop(lock);
}

/// Also seen: `compare X X` said "0.0 % slower" and wrote `-0.0`.
#[test]
fn a_run_compared_with_itself_is_neither_slower_nor_negative_zero() {
    let run = analysed_run(|_| {});
    let json = run.dir.parent().unwrap().join("comparison.json");
    let out = bin()
        .arg("compare")
        .arg(&run.dir)
        .arg(&run.dir)
        .arg("--json")
        .arg(&json)
        .env_remove("GITHUB_ACTIONS")
        .output()
        .unwrap();
    assert_status(&out, 0);
    let text = String::from_utf8_lossy(&out.stdout).replace('\u{a0}', " ");
    let slower = regex::Regex::new(r"0\.0 ?% (slower|faster)").unwrap();
    assert!(!slower.is_match(&text), "{text}");
    let written = std::fs::read_to_string(&json).unwrap();
    assert!(
        !written.contains("-0.0") && !written.contains(": -0,"),
        "{written}"
    );
    let _ = read_json(&json);
}
