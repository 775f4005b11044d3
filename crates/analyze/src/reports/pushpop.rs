//! The `nvtx_pushpop_trace` report (2022.4: `nvtxpptrace`, same columns).
//!
//! Its rows pin a name down twice: `Name`, and `NameTree`, which is `Lvl` pairs of dashes
//! followed by the same name (both empty, or both `None` in 2022.4, for a NULL name).
//! With `Duration` = `End` - `Start`, `DurChild` + `DurNonChild` = `Duration` and
//! `RangeStack` ending with `:RangeId`, a wrong split of a name is all but impossible.

use std::path::Path;

use super::cells::{last_stack_id, required_i64, required_id, required_u64, Check};
use super::columns::{def, ColumnDef};
use super::error::ReportError;
use super::interner::{Interner, NameId};
use super::parts::{self, read_file};
use super::reader::{Columns, NameError, Names, ReadOptions, Table};
use super::scan::{Cell, ColType, Span};

/// One row of `nvtx_pushpop_trace`: one NVTX push/pop range, in 64 bytes (a trace has
/// millions). `Duration`, `DurNonChild` and `Lvl` are checked while reading and not kept:
/// `DurNonChild` is `End - Start - DurChild` (see [`PushPopRow::dur_non_child_ns`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushPopRow {
    pub start_ns: i64,
    pub end_ns: i64,
    pub dur_child_ns: i64,
    pub range_id: u64,
    /// `None` for a top-level range (empty, or `None` in nsys 2022.4).
    pub parent_id: Option<u64>,
    pub name: NameId,
    /// nsys writes 24-bit process and thread ids.
    pub pid: u32,
    pub tid: u32,
    /// 1-based line where the record starts (saturates at `u32::MAX`).
    pub line: u32,
}

impl PushPopRow {
    /// `End - Start`.
    pub fn duration_ns(&self) -> i64 {
        self.end_ns.saturating_sub(self.start_ns)
    }

    /// The time not spent in child ranges (nsys's `DurNonChild`, checked to be
    /// `End - Start - DurChild` while reading).
    pub fn dur_non_child_ns(&self) -> i64 {
        self.duration_ns().saturating_sub(self.dur_child_ns)
    }
}

/// Reads a `nvtx_pushpop_trace` CSV file (or 2022.4's `nvtxpptrace`). A large file is read
/// in parts, one per core.
pub fn read_pushpop(
    path: &Path,
    interner: &mut Interner,
    options: ReadOptions,
) -> Result<Vec<PushPopRow>, ReportError> {
    read_file::<PushPopSchema>(path, interner, options)
}

/// The columns, by name. Required: what a row stores. `Duration`, `RangeStack` and
/// `NameTree` are only checked (when present); `NumChild` is not used.
pub const DEFS: &[ColumnDef] = &[
    def("Start", true, true, ColType::Unsigned),
    def("End", true, true, ColType::Unsigned),
    def("Duration", true, false, ColType::Unsigned),
    def("DurChild", true, true, ColType::Unsigned),
    def("DurNonChild", true, true, ColType::Unsigned),
    def("Name", false, true, ColType::Text),
    def("PID", false, true, ColType::Unsigned),
    def("TID", false, true, ColType::Unsigned),
    def("Lvl", false, true, ColType::Unsigned),
    def("NumChild", false, false, ColType::Lenient),
    def("RangeId", false, true, ColType::Unsigned),
    def("ParentId", false, true, ColType::OptUnsigned),
    def("RangeStack", false, false, ColType::RangeStack),
    def("NameTree", false, false, ColType::Text),
];

// Positions in DEFS.
const START: usize = 0;
const END: usize = 1;
const DURATION: usize = 2;
const DUR_CHILD: usize = 3;
const DUR_NON_CHILD: usize = 4;
const NAME: usize = 5;
const PID: usize = 6;
const TID: usize = 7;
const LVL: usize = 8;
const RANGE_ID: usize = 10;
const PARENT_ID: usize = 11;
const RANGE_STACK: usize = 12;
const NAME_TREE: usize = 13;

/// The report's columns and checks; [`Table`] keeps where each column sits.
pub enum PushPop {}

pub type PushPopSchema = Table<PushPop, { DEFS.len() }>;

#[derive(Clone, Copy, Debug)]
pub struct Pending {
    pub start_ns: i64,
    pub end_ns: i64,
    pub dur_child_ns: i64,
    pub name: Span,
    pub pid: u32,
    pub tid: u32,
    pub range_id: u64,
    pub parent_id: Option<u64>,
}

impl Columns<{ DEFS.len() }> for PushPop {
    type Pending = Pending;
    type Row = PushPopRow;
    const DEFS: &'static [ColumnDef] = DEFS;

    fn check(table: &PushPopSchema, data: &[u8], spans: &[Span], cells: &[Cell]) -> Check<Pending> {
        let c = &table.col;
        let start = required_i64(cells, c[START])?;
        let end = required_i64(cells, c[END])?;
        if end < start {
            return Err((
                Some(c[END]),
                format!("`End` ({end}) is before `Start` ({start})"),
            ));
        }
        // Both are non-negative i64: no overflow.
        let duration = end - start;
        if let Some(col) = table.optional(DURATION) {
            let written = required_u64(cells, col)?;
            if written != duration as u64 {
                return Err((
                    Some(col),
                    format!("`Duration` ({written}) is not `End` - `Start` ({duration})"),
                ));
            }
        }
        let dur_child = required_i64(cells, c[DUR_CHILD])?;
        let dur_non_child = required_i64(cells, c[DUR_NON_CHILD])?;
        if dur_child.checked_add(dur_non_child) != Some(duration) {
            return Err((
                Some(c[DUR_NON_CHILD]),
                format!(
                    "`DurChild` + `DurNonChild` ({dur_child} + {dur_non_child}) is not `Duration` ({duration})"
                ),
            ));
        }
        let lvl = required_u64(cells, c[LVL])?;
        let lvl = u32::try_from(lvl)
            .map_err(|_| (Some(c[LVL]), format!("`Lvl` ({lvl}) is too large")))?;
        let range_id = required_u64(cells, c[RANGE_ID])?;
        let parent_id = cells[c[PARENT_ID]].as_num();
        if let Some(col) = table.optional(RANGE_STACK) {
            let stack = spans[col].of(data);
            if last_stack_id(stack) != Some(range_id) {
                return Err((
                    Some(col),
                    format!(
                        "`RangeStack` ({}) does not end with `RangeId` ({range_id})",
                        super::scan::quote(stack)
                    ),
                ));
            }
        }
        let name = spans[c[NAME]];
        if let Some(col) = table.optional(NAME_TREE) {
            let tree = spans[col].of(data);
            let name_bytes = name.of(data);
            if !is_name_tree(tree, lvl, name_bytes) {
                return Err((
                    Some(col),
                    format!(
                        "`NameTree` is not {} dashes followed by `Name` ({})",
                        u64::from(lvl) * 2,
                        super::scan::quote(name_bytes)
                    ),
                ));
            }
        }
        Ok(Pending {
            start_ns: start,
            end_ns: end,
            dur_child_ns: dur_child,
            name,
            pid: required_id(cells, c[PID])?,
            tid: required_id(cells, c[TID])?,
            range_id,
            parent_id,
        })
    }

    fn finish(
        p: Pending,
        record: &[u8],
        line: u32,
        names: Names<'_>,
    ) -> Result<PushPopRow, NameError> {
        Ok(PushPopRow {
            start_ns: p.start_ns,
            end_ns: p.end_ns,
            dur_child_ns: p.dur_child_ns,
            name: names.intern(record, p.name)?,
            pid: p.pid,
            tid: p.tid,
            range_id: p.range_id,
            parent_id: p.parent_id,
            line,
        })
    }

    fn relocate(row: &mut PushPopRow, lines: u64, ids: &[NameId]) {
        row.line = parts::relocated_line(row.line, lines);
        row.name = parts::relocated_name(row.name, ids);
    }
}

/// `tree` is `2 * lvl` dashes then `name`; or, for a NULL name (empty, or `None` in 2022.4),
/// the same NULL: SQL's `'--' || NULL` is NULL.
#[inline]
fn is_name_tree(tree: &[u8], lvl: u32, name: &[u8]) -> bool {
    let dashes = (lvl as usize).saturating_mul(2);
    let shaped = tree.len().checked_sub(name.len()) == Some(dashes)
        && tree[..dashes].iter().all(|&b| b == b'-')
        && &tree[dashes..] == name;
    shaped || ((name.is_empty() || name == b"None") && tree == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_tree_shape() {
        assert!(is_name_tree(b"----a,b", 2, b"a,b"));
        assert!(is_name_tree(b"x", 0, b"x"));
        assert!(!is_name_tree(b"--x", 0, b"x"));
        assert!(!is_name_tree(b"-+x", 1, b"x"));
        assert!(!is_name_tree(b"----x", 1, b"x"));
        assert!(is_name_tree(b"", 3, b""));
        assert!(is_name_tree(b"None", 3, b"None"));
        assert!(is_name_tree(b"------", 3, b""));
        assert!(!is_name_tree(b"", u32::MAX, b"x"));
    }
}
