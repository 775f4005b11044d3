//! Whether a measured iteration is complete (`iterations[].complete`).
//!
//! Owns the rule: nsys ends a never-popped range at the end of the capture, so an iteration
//! that ends with its capture range is incomplete. With no capture range that end is the
//! latest in the report, which a last pass that did finish may share too: there, such a pass
//! is incomplete only if it also did different work (its set of direct-child names) than
//! most passes.

use rustc_hash::FxHashMap;

use super::iterations::{Measured, Selected};
use super::tree::Tree;
use crate::reports::{NameId, PushPopRow};

/// The selected iterations with their completeness, in the order given; none is a duplicate
/// yet. `from_capture`: they were read from capture ranges.
pub(super) fn assess(
    tree: &Tree,
    rows: &[PushPopRow],
    selected: &[Selected],
    from_capture: bool,
) -> Vec<Measured> {
    let usual_children = if from_capture {
        None
    } else {
        most_common_child_set(tree, rows, selected.iter().map(|m| m.row))
    };
    selected
        .iter()
        .map(|s| {
            let r = &rows[s.row as usize];
            let ends_with_capture = r.end_ns == s.capture_end;
            let complete = if from_capture {
                !ends_with_capture
            } else {
                !(ends_with_capture
                    && usual_children
                        .as_ref()
                        .is_some_and(|usual| &child_set(tree, rows, s.row) != usual))
            };
            Measured {
                row: s.row,
                index: s.index,
                complete,
                duplicate: false,
            }
        })
        .collect()
}

fn child_set(tree: &Tree, rows: &[PushPopRow], i: u32) -> Vec<NameId> {
    let mut set = Vec::new();
    child_set_into(tree, rows, i, &mut set);
    set
}

/// The distinct names of the direct children of `i`, sorted, into `set`.
fn child_set_into(tree: &Tree, rows: &[PushPopRow], i: u32, set: &mut Vec<NameId>) {
    set.clear();
    set.extend(tree.children(i).iter().map(|&c| rows[c as usize].name));
    set.sort_unstable();
    set.dedup();
}

/// The set of direct-child names most iterations have (ties: the earliest seen).
fn most_common_child_set(
    tree: &Tree,
    rows: &[PushPopRow],
    iterations: impl Iterator<Item = u32>,
) -> Option<Vec<NameId>> {
    // Set -> (count, order first seen). Hashed: every pass may have a set of its own.
    let mut counts: FxHashMap<Vec<NameId>, (usize, usize)> = FxHashMap::default();
    let mut set = Vec::new();
    for i in iterations {
        child_set_into(tree, rows, i, &mut set);
        let seen = counts.len();
        match counts.get_mut(&set) {
            Some((n, _)) => *n += 1,
            None => {
                counts.insert(set.clone(), (1, seen));
            }
        }
    }
    counts
        .into_iter()
        .max_by(|(_, (na, fa)), (_, (nb, fb))| na.cmp(nb).then(fb.cmp(fa)))
        .map(|(set, _)| set)
}
