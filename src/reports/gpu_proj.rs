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

use super::columns::{def, ColumnDef, Layout};
use super::scan::{Cell, ColType, Schema, Span};
use super::{last_stack_id, optional_i64, required_id, required_u64, Check, RangeStyle};

pub(crate) const DEFS: &[ColumnDef] = &[
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

pub(crate) struct GpuProjSchema {
    pub layout: Layout,
    col: [usize; DEFS.len()],
    present: [bool; DEFS.len()],
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Pending {
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

impl GpuProjSchema {
    /// `None` when a required column is missing.
    pub(crate) fn new(layout: Layout) -> Option<Self> {
        let defs: &[ColumnDef; DEFS.len()] = DEFS.try_into().ok()?;
        let (col, present) = layout.resolve(defs)?;
        Some(GpuProjSchema {
            layout,
            col,
            present,
        })
    }
}

impl Schema for GpuProjSchema {
    type Pending = Pending;

    fn types(&self) -> &[ColType] {
        &self.layout.types
    }

    fn check(&self, data: &[u8], spans: &[Span], cells: &[Cell]) -> Check<Pending> {
        let c = &self.col;
        let range_id = cells[c[RANGE_ID]].as_num();
        if self.present[RANGE_STACK] {
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
}
