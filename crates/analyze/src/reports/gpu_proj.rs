//! The `nvtx_gpu_proj_trace` report (2022.4: `nvtxgpuproj`, same columns).
//!
//! `Name` is the only text column and comes first; what pins its end down is the rest of
//! the row: four optional times, a `Style` word, `PID`, `TID`, `NumGPUOps`, `RangeStack`
//! ending with `:RangeId`, and the next row. `Lvl`, `NumChild` and `ParentId` are read
//! leniently and not kept: `StartEnd` ranges shift `Lvl` and `ParentId` in this report.
//!
//! nsys 2023.4 writes a first row for the GPU work launched outside every range: empty
//! `Name`, `Orig Start`, `Orig Duration`, `Style`, `Lvl`, `RangeId`, `ParentId` and
//! `RangeStack` (SQL NULLs of a LEFT JOIN that found no range).

use std::path::Path;

use super::cells::{last_stack_id, optional_i64, required_id, required_u64, Check};
use super::columns::{def, ColumnDef};
use super::error::ReportError;
use super::interner::{Interner, NameId};
use super::parts::{self, read_file};
use super::reader::{Columns, NameError, Names, ReadOptions, Table};
use super::scan::{Cell, ColType, Span};

/// One row of `nvtx_gpu_proj_trace`: the GPU work launched inside one NVTX range, with
/// what the join to the push/pop report needs (`Orig Duration` is checked, not kept).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuProjRow {
    pub projected_start_ns: Option<i64>,
    pub projected_duration_ns: Option<i64>,
    pub orig_start_ns: Option<i64>,
    pub range_id: Option<u64>,
    pub num_gpu_ops: u64,
    /// `None` for an empty name: nsys 2023.4's synthetic root row, which holds the GPU
    /// operations launched outside every range (its `range_id` is `None` too).
    pub name: Option<NameId>,
    /// nsys writes 24-bit process and thread ids.
    pub pid: u32,
    pub tid: u32,
    /// 1-based line where the record starts (saturates at `u32::MAX`).
    pub line: u32,
    /// `None` when the field is empty, as on the synthetic root row.
    pub style: Option<RangeStyle>,
}

/// How an NVTX range was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RangeStyle {
    PushPop,
    StartEnd,
}

impl RangeStyle {
    /// The word nsys writes.
    pub fn as_str(self) -> &'static str {
        match self {
            RangeStyle::PushPop => "PushPop",
            RangeStyle::StartEnd => "StartEnd",
        }
    }
}

/// Reads a `nvtx_gpu_proj_trace` CSV file (or 2022.4's `nvtxgpuproj`). A large file is read
/// in parts, one per core.
pub fn read_gpu_proj(
    path: &Path,
    interner: &mut Interner,
    options: ReadOptions,
) -> Result<Vec<GpuProjRow>, ReportError> {
    read_file::<GpuProjSchema>(path, interner, options)
}

pub const DEFS: &[ColumnDef] = &[
    def("Name", false, true, ColType::Text),
    def("Projected Start", true, true, ColType::OptUnsigned),
    def("Projected Duration", true, true, ColType::OptUnsigned),
    def("Orig Start", true, true, ColType::OptUnsigned),
    def("Orig Duration", true, true, ColType::OptUnsigned),
    def("Style", false, true, ColType::Style),
    def("PID", false, true, ColType::Unsigned),
    def("TID", false, true, ColType::Unsigned),
    def("NumGPUOps", false, true, ColType::Unsigned),
    def("Lvl", false, false, ColType::Lenient),
    def("NumChild", false, false, ColType::Lenient),
    def("RangeId", false, true, ColType::OptUnsigned),
    def("ParentId", false, false, ColType::Lenient),
    def("RangeStack", false, false, ColType::RangeStack),
];

const NAME: usize = 0;
const PROJECTED_START: usize = 1;
const PROJECTED_DURATION: usize = 2;
const ORIG_START: usize = 3;
const ORIG_DURATION: usize = 4;
const STYLE: usize = 5;
const PID: usize = 6;
const TID: usize = 7;
const NUM_GPU_OPS: usize = 8;
const RANGE_ID: usize = 11;
const RANGE_STACK: usize = 13;

/// The report's columns and checks; [`Table`] keeps where each column sits.
pub enum GpuProj {}

pub type GpuProjSchema = Table<GpuProj, { DEFS.len() }>;

#[derive(Clone, Copy, Debug)]
pub struct Pending {
    pub name: Span,
    pub projected_start_ns: Option<i64>,
    pub projected_duration_ns: Option<i64>,
    pub orig_start_ns: Option<i64>,
    pub style: Option<RangeStyle>,
    pub pid: u32,
    pub tid: u32,
    pub num_gpu_ops: u64,
    pub range_id: Option<u64>,
}

impl Columns<{ DEFS.len() }> for GpuProj {
    type Pending = Pending;
    type Row = GpuProjRow;
    const DEFS: &'static [ColumnDef] = DEFS;

    fn check(table: &GpuProjSchema, data: &[u8], spans: &[Span], cells: &[Cell]) -> Check<Pending> {
        let c = &table.col;
        let range_id = cells[c[RANGE_ID]].as_num();
        if table.present[RANGE_STACK] {
            let col = c[RANGE_STACK];
            let stack = spans[col].of(data);
            // An empty stack goes with a NULL range (the synthetic root).
            if !cells[col].is_empty() && (range_id.is_none() || last_stack_id(stack) != range_id) {
                let id = range_id.map_or_else(|| "nothing".to_string(), |v| v.to_string());
                return Err((
                    Some(col),
                    format!(
                        "`RangeStack` ({}) does not end with `RangeId` ({id})",
                        super::scan::quote(stack)
                    ),
                ));
            }
        }
        let style = cells[c[STYLE]].as_style();
        // Checked (a number or nothing, within range), not kept.
        optional_i64(cells, c[ORIG_DURATION])?;
        Ok(Pending {
            name: spans[c[NAME]],
            projected_start_ns: optional_i64(cells, c[PROJECTED_START])?,
            projected_duration_ns: optional_i64(cells, c[PROJECTED_DURATION])?,
            orig_start_ns: optional_i64(cells, c[ORIG_START])?,
            style,
            pid: required_id(cells, c[PID])?,
            tid: required_id(cells, c[TID])?,
            num_gpu_ops: required_u64(cells, c[NUM_GPU_OPS])?,
            range_id,
        })
    }

    fn finish(
        p: Pending,
        record: &[u8],
        line: u32,
        names: Names<'_>,
    ) -> Result<GpuProjRow, NameError> {
        let name = if p.name.start == p.name.end {
            None
        } else {
            Some(names.intern(record, p.name)?)
        };
        Ok(GpuProjRow {
            name,
            projected_start_ns: p.projected_start_ns,
            projected_duration_ns: p.projected_duration_ns,
            orig_start_ns: p.orig_start_ns,
            style: p.style,
            pid: p.pid,
            tid: p.tid,
            num_gpu_ops: p.num_gpu_ops,
            range_id: p.range_id,
            line,
        })
    }

    fn relocate(row: &mut GpuProjRow, lines: u64, ids: &[NameId]) {
        row.line = parts::relocated_line(row.line, lines);
        row.name = row.name.map(|n| parts::relocated_name(n, ids));
    }
}
