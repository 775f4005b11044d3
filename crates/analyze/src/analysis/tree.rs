//! The push/pop ranges as a tree over row indexes, and the walks over it.
//!
//! Owns the report's consistency rules on the tree: a `RangeId` appears once, and a
//! `ParentId` names a range of the report (both are [`DataError`]s). Nothing here recurses:
//! ranges nest as deep as a program pushes them (10,000 levels is a test case), so walks use
//! explicit stacks.

use std::path::Path;

use rustc_hash::FxHashMap;

use super::DataError;
use crate::reports::PushPopRow;

/// "No row": a top-level range's parent, an empty slot.
pub(super) const NONE: u32 = u32::MAX;

/// Range id -> row index. nsys numbers ranges by their NVTX_EVENTS row, so ids are dense
/// with small gaps: a flat table when they are, a hash map otherwise.
enum IdIndex {
    Dense { min: u64, rows: Vec<u32> },
    Sparse(FxHashMap<u64, u32>),
}

impl IdIndex {
    /// Builds the index; `Err((first, second))` names two rows with the same id.
    fn build(rows: &[PushPopRow]) -> Result<IdIndex, (usize, usize)> {
        let min = rows.iter().map(|r| r.range_id).min().unwrap_or(0);
        let max = rows.iter().map(|r| r.range_id).max().unwrap_or(0);
        let span = max - min;
        if span < 4 * rows.len() as u64 + 1024 {
            let mut table = vec![NONE; span as usize + 1];
            for (i, r) in rows.iter().enumerate() {
                let slot = &mut table[(r.range_id - min) as usize];
                if *slot != NONE {
                    return Err((*slot as usize, i));
                }
                *slot = i as u32;
            }
            Ok(IdIndex::Dense { min, rows: table })
        } else {
            let mut map = FxHashMap::with_capacity_and_hasher(rows.len(), Default::default());
            for (i, r) in rows.iter().enumerate() {
                if let Some(first) = map.insert(r.range_id, i as u32) {
                    return Err((first as usize, i));
                }
            }
            Ok(IdIndex::Sparse(map))
        }
    }

    #[inline]
    fn get(&self, id: u64) -> Option<u32> {
        match self {
            IdIndex::Dense { min, rows } => id
                .checked_sub(*min)
                .and_then(|k| rows.get(usize::try_from(k).ok()?))
                .copied()
                .filter(|&r| r != NONE),
            IdIndex::Sparse(map) => map.get(&id).copied(),
        }
    }
}

/// The push/pop ranges as a tree: parent index and children lists (CSR) over row indexes.
pub(super) struct Tree {
    by_id: IdIndex,
    parent: Vec<u32>,
    child_offsets: Vec<u32>,
    children: Vec<u32>,
}

impl Tree {
    pub(super) fn build(rows: &[PushPopRow], path: &Path) -> Result<Tree, DataError> {
        let n = rows.len();
        let by_id = IdIndex::build(rows).map_err(|(first, second)| DataError {
            path: path.to_owned(),
            line: rows[second].line,
            column: "RangeId",
            message: format!(
                "range id {} appears twice (first at line {})",
                rows[second].range_id, rows[first].line
            ),
        })?;
        let mut parent = Vec::with_capacity(n);
        for r in rows {
            let p = match r.parent_id {
                None => NONE,
                Some(pid) => by_id.get(pid).ok_or_else(|| DataError {
                    path: path.to_owned(),
                    line: r.line,
                    column: "ParentId",
                    message: format!(
                        "parent range {pid} of range {} is not in the report",
                        r.range_id
                    ),
                })?,
            };
            parent.push(p);
        }
        let mut child_offsets = vec![0u32; n + 1];
        for &p in &parent {
            if p != NONE {
                child_offsets[p as usize + 1] += 1;
            }
        }
        for i in 0..n {
            child_offsets[i + 1] += child_offsets[i];
        }
        let mut fill = child_offsets.clone();
        let mut children = vec![0u32; child_offsets[n] as usize];
        for (i, &p) in parent.iter().enumerate() {
            if p != NONE {
                children[fill[p as usize] as usize] = i as u32;
                fill[p as usize] += 1;
            }
        }
        Ok(Tree {
            by_id,
            parent,
            child_offsets,
            children,
        })
    }

    /// How many ranges (rows) the tree holds.
    pub(super) fn row_count(&self) -> usize {
        self.parent.len()
    }

    /// The row of the range with this `RangeId`.
    #[inline]
    pub(super) fn row_of(&self, range_id: u64) -> Option<u32> {
        self.by_id.get(range_id)
    }

    #[inline]
    pub(super) fn children(&self, i: u32) -> &[u32] {
        let (a, b) = (
            self.child_offsets[i as usize] as usize,
            self.child_offsets[i as usize + 1] as usize,
        );
        &self.children[a..b]
    }

    pub(super) fn roots(&self) -> impl Iterator<Item = u32> + '_ {
        self.parent
            .iter()
            .enumerate()
            .filter(|(_, &p)| p == NONE)
            .map(|(i, _)| i as u32)
    }

    /// Per row: can it be reached from a top-level range (a row on a parent cycle cannot).
    pub(super) fn reachable_from_roots(&self) -> Vec<bool> {
        let mut seen = vec![false; self.row_count()];
        self.mark_subtrees(&mut seen, self.roots().collect());
        seen
    }

    /// Sets `slot[row] = value` for every row below row `i` (not `i` itself).
    pub(super) fn mark_subtree_with(&self, slot: &mut [u32], i: u32, value: u32) {
        let mut stack: Vec<u32> = self.children(i).to_vec();
        while let Some(j) = stack.pop() {
            slot[j as usize] = value;
            stack.extend_from_slice(self.children(j));
        }
    }

    /// Marks the rows of `stack` and everything below them, not walking on below a row that
    /// is marked already.
    pub(super) fn mark_subtrees(&self, marked: &mut [bool], mut stack: Vec<u32>) {
        while let Some(i) = stack.pop() {
            if !marked[i as usize] {
                marked[i as usize] = true;
                stack.extend_from_slice(self.children(i));
            }
        }
    }
}
