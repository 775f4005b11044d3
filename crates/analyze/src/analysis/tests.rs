//! Tests of the whole analysis on hand-made trees; the rule modules test their own helpers.

use std::path::Path;

use super::*;
use crate::reports::{Interner, PushPopRow};

/// A tree of push/pop rows built from (parent index, name, start, length) tuples, with
/// consistent DurChild/DurNonChild, as nsys would write them.
pub(super) fn build_rows(
    spec: &[(Option<usize>, &str, i64, i64)],
    names: &mut Interner,
) -> Vec<PushPopRow> {
    let mut rows: Vec<PushPopRow> = spec
        .iter()
        .enumerate()
        .map(|(i, &(parent, name, start, len))| PushPopRow {
            start_ns: start,
            end_ns: start + len,
            dur_child_ns: 0,
            name: names.intern(name),
            pid: 1,
            tid: 1,
            range_id: i as u64 + 1,
            parent_id: parent.map(|p| p as u64 + 1),
            line: i as u32 + 2,
        })
        .collect();
    for i in 0..rows.len() {
        if let Some(p) = spec[i].0 {
            let d = rows[i].end_ns - rows[i].start_ns;
            rows[p].dur_child_ns += d;
        }
    }
    rows
}

fn run(capture: Option<&str>, expected: u64, rows: &[PushPopRow], names: &Interner) -> Findings {
    let settings = Settings {
        capture_range: capture.map(str::to_owned),
        iteration_pattern: full_match_regex(r"^iteration (\d+)$").unwrap(),
        expected_iterations: expected,
        warmup: None,
        world_size: None,
    };
    apply_rules(
        &settings,
        &Reports {
            names,
            pushpop: rows,
            pushpop_path: Path::new("p.csv"),
            gpu: None,
            gpu_path: Path::new("g.csv"),
            launches: None,
        },
    )
    .unwrap()
}

fn codes(f: &Findings) -> Vec<&str> {
    f.warnings.iter().map(|w| w.code.as_str()).collect()
}

#[test]
fn scoped_names_keep_parents_apart_and_exclusive_times_add_up() {
    let mut names = Interner::new();
    let rows = build_rows(
        &[
            (None, "cap", 0, 1000),
            (Some(0), "iteration 0", 10, 400),
            (Some(1), "pre", 20, 100),
            (Some(2), "resize", 30, 50),
            (Some(1), "post", 200, 100),
            (Some(4), "resize", 210, 30),
            (Some(0), "iteration 1", 500, 400),
            (Some(6), "pre", 520, 100),
            (Some(7), "resize", 530, 60),
            (Some(6), "post", 700, 100),
            (Some(9), "resize", 710, 20),
        ],
        &mut names,
    );
    let f = run(Some("cap"), 2, &rows, &names);
    assert!(f.warnings.is_empty(), "{:?}", f.warnings);
    let table: Vec<(&str, u64, i64)> = f
        .host_ranges
        .iter()
        .map(|r| (r.name.as_str(), r.instances, r.inclusive.total_ns))
        .collect();
    assert_eq!(
        table,
        [
            ("post", 2, 200),
            ("post.resize", 2, 50),
            ("pre", 2, 200),
            ("pre.resize", 2, 110),
        ]
    );
    // An iteration's exclusive time plus its ranges' exclusive times is its inclusive time.
    let exclusive: i64 = f
        .host_ranges
        .iter()
        .map(|r| r.exclusive.total_ns)
        .sum::<i64>()
        + f.iteration_summary
            .host_exclusive
            .as_ref()
            .unwrap()
            .total_ns;
    assert_eq!(
        exclusive,
        f.iteration_summary
            .host_inclusive
            .as_ref()
            .unwrap()
            .total_ns
    );
}

#[test]
fn without_a_capture_range_ties_go_to_the_earliest_thread() {
    let mut names = Interner::new();
    let mut rows = build_rows(
        &[
            (None, "iteration 0", 100, 10),
            (None, "iteration 1", 120, 10),
            (None, "iteration 0", 50, 10),
            (None, "iteration 1", 70, 10),
        ],
        &mut names,
    );
    rows[0].tid = 2;
    rows[1].tid = 2;
    rows[2].tid = 3;
    rows[3].tid = 3;
    let f = run(None, 2, &rows, &names);
    assert!(f.iterations.iter().all(|i| i.tid == 3));
    assert_eq!(codes(&f), ["capture_range_exceeded"]);
}

#[test]
fn without_a_capture_range_a_cut_short_last_pass_is_incomplete() {
    let mut names = Interner::new();
    let rows = build_rows(
        &[
            (None, "iteration 0", 0, 100),
            (Some(0), "work", 10, 50),
            (Some(0), "tail", 70, 20),
            (None, "iteration 1", 200, 100),
            (Some(3), "work", 210, 50),
            (Some(3), "tail", 270, 20),
            (None, "iteration 2", 400, 600),
            (Some(6), "work", 410, 590),
        ],
        &mut names,
    );
    let f = run(None, 3, &rows, &names);
    let complete: Vec<bool> = f.iterations.iter().map(|i| i.complete).collect();
    assert_eq!(complete, [true, true, false]);
    assert_eq!(f.warnings[0].iterations.as_deref(), Some(&[2][..]));
}

#[test]
fn ranges_deeper_than_the_limit_are_folded_with_a_warning() {
    // An iteration holding a chain 300 levels deep: the tables name 256 levels, the 44
    // below count in the range at level 256, and the exclusive times still add up.
    const DEPTH: usize = 300;
    let mut spec: Vec<(Option<usize>, String, i64, i64)> = vec![
        (None, "cap".to_owned(), 0, 10_000),
        (Some(0), "iteration 0".to_owned(), 10, 5_000),
    ];
    for level in 0..DEPTH {
        let start = 20 + 10 * level as i64;
        spec.push((
            Some(level + 1),
            format!("l{level}"),
            start,
            4_000 - 20 * level as i64,
        ));
    }
    let spec: Vec<(Option<usize>, &str, i64, i64)> = spec
        .iter()
        .map(|(p, n, s, l)| (*p, n.as_str(), *s, *l))
        .collect();
    let mut names = Interner::new();
    let rows = build_rows(&spec, &mut names);
    let f = run(Some("cap"), 1, &rows, &names);
    assert_eq!(codes(&f), ["nesting_truncated"]);
    let w = &f.warnings[0];
    assert_eq!(
        (w.count, w.depth, w.depth_limit),
        (Some(44), Some(300), Some(256))
    );
    assert_eq!(f.host_ranges.len(), 256);
    let deepest = f.host_ranges.iter().max_by_key(|r| r.path.len()).unwrap();
    assert_eq!(deepest.path.len(), 256);
    assert_eq!(deepest.path.last().map(String::as_str), Some("l255"));
    assert_eq!(deepest.name, deepest.path.join("."));
    assert_eq!(deepest.exclusive.total_ns, deepest.inclusive.total_ns);
    assert_eq!(deepest.child_total_ns, 0);
    let exclusive: i64 = f
        .host_ranges
        .iter()
        .map(|r| r.exclusive.total_ns)
        .sum::<i64>()
        + f.iteration_summary
            .host_exclusive
            .as_ref()
            .unwrap()
            .total_ns;
    assert_eq!(
        exclusive,
        f.iteration_summary
            .host_inclusive
            .as_ref()
            .unwrap()
            .total_ns
    );
}

proptest::proptest! {
    /// Whatever rows a report holds (cycles, self-parents, any times), the analysis
    /// returns without panicking, and its counts stay consistent.
    #[test]
    fn arbitrary_rows_never_panic(
        spec in proptest::collection::vec(
            (proptest::option::of(0usize..40), 0usize..6, -5i64..1000, 0i64..500, 1u32..3),
            0..40,
        ),
        expected in 1u64..6,
        capture in proptest::option::of(0usize..6),
    ) {
        let labels = ["cap", "iteration 0", "iteration 1", "iteration 9", "work", ":x"];
        let mut names = Interner::new();
        let rows: Vec<PushPopRow> = spec
            .iter()
            .enumerate()
            .map(|(i, &(parent, name, start, len, tid))| PushPopRow {
                start_ns: start,
                end_ns: start + len,
                dur_child_ns: len / 2,
                name: names.intern(labels[name]),
                pid: 1,
                tid,
                range_id: i as u64 + 1,
                parent_id: parent.filter(|&p| p < spec.len()).map(|p| p as u64 + 1),
                line: i as u32 + 2,
            })
            .collect();
        let f = run(capture.map(|c| labels[c]), expected, &rows, &names);
        let s = &f.iteration_summary;
        proptest::prop_assert_eq!(s.found, f.iterations.len() as u64);
        proptest::prop_assert!(s.complete <= s.found);
        if let Some(h) = &s.host_inclusive {
            proptest::prop_assert!(h.count <= s.complete);
            proptest::prop_assert!(h.minimum_ns as f64 <= h.median_ns && h.median_ns <= h.maximum_ns as f64);
        }
        for r in &f.host_ranges {
            proptest::prop_assert!(r.exclusive.total_ns <= r.inclusive.total_ns);
        }
        proptest::prop_assert!(s.unattributed_ranges <= rows.len() as u64);
    }
}
