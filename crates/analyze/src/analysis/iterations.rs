//! Which ranges are the measured iterations, and in which order.
//!
//! Owns the rules: the iteration pattern must match a whole name and its one capture group is
//! the index (one that does not fit a u64 is no match); the measured iterations are the
//! direct children of the capture range(s) that match, or with no capture range the
//! outermost matching ranges of the busiest thread (most of them; ties: the earliest first
//! iteration, then the lowest (pid, tid)); iterations are listed by index, then start time,
//! and a later pass of an index is a duplicate; the counted iterations (the statistics set)
//! are the complete ones, the first pass of each index. Also owns the warning
//! `capture_range_exceeded` (matching ranges outside the measured iterations). Whether an
//! iteration is complete is decided in `completeness`.

use std::collections::BTreeMap;

use regex::Regex;

use super::tree::Tree;
use super::wording::noun_for;
use crate::reports::{Interner, NameId, PushPopRow};
use nsys_gate_core::artifact::{Warning, WarningCode};

/// Compiles the manifest's pattern so that it must match a whole name, as `re.fullmatch` does.
pub fn full_match_regex(pattern: &str) -> Result<Regex, regex::Error> {
    Regex::new(&format!("^(?:{pattern})$"))
}

/// Per name: does it match the iteration pattern, and with which index.
pub(super) struct IterationIndexes(Vec<Option<u64>>);

impl IterationIndexes {
    /// Runs the pattern on every distinct name once (a trace can hold one name per pass).
    pub(super) fn new(regex: &Regex, names: &Interner) -> Self {
        let mut slots = regex.capture_locations();
        IterationIndexes(
            names
                .names()
                .map(|text| {
                    regex
                        .captures_read(&mut slots, text)
                        .and_then(|_| slots.get(1))
                        .and_then(|(a, b)| text[a..b].parse::<u64>().ok())
                })
                .collect(),
        )
    }

    #[inline]
    pub(super) fn index(&self, name: NameId) -> Option<u64> {
        self.0.get(name.0 as usize).copied().flatten()
    }
}

/// A range chosen as a measured iteration, before its completeness is known.
pub(super) struct Selected {
    pub(super) row: u32,
    pub(super) index: u64,
    /// Where nsys would have closed it had it never been popped: the end of its capture
    /// range, or with none the latest end in the report.
    pub(super) capture_end: i64,
}

/// One measured iteration while the analysis works on it.
pub(super) struct Measured {
    pub(super) row: u32,
    pub(super) index: u64,
    pub(super) complete: bool,
    pub(super) duplicate: bool,
}

/// The measured iterations: the direct children of the capture range(s) that match the
/// pattern; with no capture range, the outermost matching ranges of the busiest thread.
pub(super) fn select(
    tree: &Tree,
    rows: &[PushPopRow],
    matcher: &IterationIndexes,
    captures: &[u32],
) -> Vec<Selected> {
    let mut selected = Vec::new();
    if !captures.is_empty() {
        for &c in captures {
            for &child in tree.children(c) {
                if let Some(index) = matcher.index(rows[child as usize].name) {
                    selected.push(Selected {
                        row: child,
                        index,
                        capture_end: rows[c as usize].end_ns,
                    });
                }
            }
        }
    } else if let Some(chosen) = busiest_thread(tree, rows, matcher) {
        let latest_end = rows.iter().map(|r| r.end_ns).max().unwrap_or(0);
        for i in chosen {
            let index = matcher.index(rows[i as usize].name).unwrap_or(0);
            selected.push(Selected {
                row: i,
                index,
                capture_end: latest_end,
            });
        }
    }
    selected
}

/// The outermost matching ranges of the thread with the most of them (ties: the thread whose
/// first one starts earliest, then the lowest (pid, tid)), in row order.
fn busiest_thread(
    tree: &Tree,
    rows: &[PushPopRow],
    matcher: &IterationIndexes,
) -> Option<Vec<u32>> {
    let outermost = outermost_matches(tree, rows, matcher);
    let mut per_thread: BTreeMap<(u32, u32), Vec<u32>> = BTreeMap::new();
    for i in outermost {
        let r = &rows[i as usize];
        per_thread.entry((r.pid, r.tid)).or_default().push(i);
    }
    let busiest = per_thread.into_iter().max_by(|(ta, a), (tb, b)| {
        let first = |v: &Vec<u32>| v.iter().map(|&i| rows[i as usize].start_ns).min();
        a.len()
            .cmp(&b.len())
            .then_with(|| first(b).cmp(&first(a)))
            .then_with(|| tb.cmp(ta))
    });
    busiest.map(|(_, chosen)| chosen)
}

/// Matching ranges with no matching ancestor.
fn outermost_matches(tree: &Tree, rows: &[PushPopRow], matcher: &IterationIndexes) -> Vec<u32> {
    let mut found = Vec::new();
    let mut stack: Vec<u32> = tree.roots().collect();
    while let Some(i) = stack.pop() {
        if matcher.index(rows[i as usize].name).is_some() {
            found.push(i);
        } else {
            stack.extend_from_slice(tree.children(i));
        }
    }
    found.sort_unstable();
    found
}

/// `capture_range_exceeded`: ranges matching the pattern that are not measured iterations
/// (nor a capture range, nor on a parent cycle).
pub(super) fn exceeded_warning(
    tree: &Tree,
    rows: &[PushPopRow],
    matcher: &IterationIndexes,
    captures: &[u32],
    selected: &[Selected],
) -> Option<Warning> {
    let mut is_measured = vec![false; rows.len()];
    for m in selected {
        is_measured[m.row as usize] = true;
    }
    let reachable = tree.reachable_from_roots();
    let elsewhere = (0..rows.len() as u32)
        .filter(|&i| reachable[i as usize] && !is_measured[i as usize])
        .filter(|&i| !captures.contains(&i))
        .filter(|&i| matcher.index(rows[i as usize].name).is_some())
        .count() as u64;
    (elsewhere > 0).then(|| {
        Warning::new(
            WarningCode::CaptureRangeExceeded,
            format!(
                "{elsewhere} {} matching the iteration pattern {} outside the measured iterations",
                noun_for(elsewhere, "range", "ranges"),
                if elsewhere == 1 { "is" } else { "are" }
            ),
        )
        .with_count(elsewhere)
    })
}

/// Puts the iterations in index order, then start time, and marks every pass of an index
/// after the first as a duplicate; `per_process`: an index once per process (the ranks of a
/// distributed run), ordered by process first.
pub(super) fn order_and_mark_duplicates(
    iterations: &mut [Measured],
    rows: &[PushPopRow],
    per_process: bool,
) {
    let process = |m: &Measured| {
        if per_process {
            rows[m.row as usize].pid
        } else {
            0
        }
    };
    iterations.sort_by_key(|m| (process(m), m.index, rows[m.row as usize].start_ns, m.row));
    for pair in 1..iterations.len() {
        if iterations[pair].index == iterations[pair - 1].index
            && process(&iterations[pair]) == process(&iterations[pair - 1])
        {
            iterations[pair].duplicate = true;
        }
    }
}

/// The statistics set: the complete measured iterations, the first pass of each index.
pub(super) fn counted(iterations: &[Measured]) -> Vec<&Measured> {
    iterations
        .iter()
        .filter(|m| m.complete && !m.duplicate)
        .collect()
}
