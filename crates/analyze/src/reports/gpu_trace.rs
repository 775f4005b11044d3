//! The `cuda_gpu_trace` report (2022.4: `gputrace`), written with `--format csv:mem=B`: one
//! row per kernel, memory copy and memset on the GPU, sorted by start.
//!
//! A kernel row has its grid (`GrdX`) and no `Bytes`; a memory operation has `Bytes` and no
//! grid, its source and destination memory kinds (`SrcMemKd`, `DstMemKd`; a memset has only
//! the first), and a fixed name (`[CUDA memcpy Host-to-Device]`, 2022.4 `[CUDA memcpy
//! HtoD]`; `[CUDA memset]`). `Device` is `NAME (ID)`. Text columns: the memory kinds, the
//! device and `Name` (last: kernel signatures hold commas, templates and quotes); the numbers
//! around them, the kernel-or-memory rule and the next row pin them down. Empty and `None`
//! (2022.4) are nothing.
//!
//! The report can be large (a row per GPU operation): it is read in one pass into a caller's
//! sink ([`stream_gpu_trace`]), not into a vector.

use std::path::Path;

use super::cells::{required_i64, Check};
use super::columns::{def, ColumnDef};
use super::error::ReportError;
use super::interner::{Interner, NameId};
use super::parts;
use super::reader::{
    intern_name, open, parse_report_into, Columns, NameError, Names, ReadOptions, Table,
};
use super::scan::{Cell, ColType, Span};

/// One row of `cuda_gpu_trace`: a kernel (`bytes` is `None`), a memory copy or a memset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GpuOpRow {
    pub start_ns: i64,
    pub duration_ns: i64,
    pub corr_id: Option<u64>,
    pub bytes: Option<u64>,
    /// The kernel's name, or `[CUDA memcpy …]` / `[CUDA memset]`.
    pub name: NameId,
    /// `NAME (ID)`; `None` when empty.
    pub device: Option<NameId>,
    /// Source memory kind (a memset's memory kind); `None` when empty or `None`.
    pub src: Option<NameId>,
    /// Destination memory kind; `None` when empty or `None`.
    pub dst: Option<NameId>,
}

/// Reads a `cuda_gpu_trace` CSV file (or 2022.4's `gputrace`) in one pass, handing each row
/// to `sink` as it is read: the report has a row per GPU operation, and the caller keeps
/// only what it needs.
pub fn stream_gpu_trace(
    path: &Path,
    interner: &mut Interner,
    sink: &mut impl Extend<GpuOpRow>,
) -> Result<(), ReportError> {
    let (file, _, limits) = open(path)?;
    parse_report_into::<GpuTraceSchema, _, _>(
        file,
        path,
        interner,
        limits,
        ReadOptions::default(),
        sink,
    )
}

pub const DEFS: &[ColumnDef] = &[
    def("Start", true, true, ColType::Unsigned),
    def("Duration", true, true, ColType::Unsigned),
    def("CorrId", false, true, ColType::OptUnsigned).or(&["CorrID"]),
    def("GrdX", false, true, ColType::OptUnsigned),
    // Bytes, never MB: `--format csv:mem=B` (the default unit is MB with three decimals).
    def("Bytes", false, true, ColType::OptUnsigned).or(&["Bytes (B)", "Bytes:mem_B"]),
    def("SrcMemKd", false, true, ColType::Text),
    def("DstMemKd", false, true, ColType::Text),
    def("Device", false, true, ColType::Text),
    def("Name", false, true, ColType::Text),
    // Numbers between the text columns, checked and not kept.
    def("GrdY", false, false, ColType::Lenient),
    def("GrdZ", false, false, ColType::Lenient),
    def("BlkX", false, false, ColType::Lenient),
    def("BlkY", false, false, ColType::Lenient),
    def("BlkZ", false, false, ColType::Lenient),
    def("Reg/Trd", false, false, ColType::Lenient),
    def("Ctx", false, false, ColType::Lenient),
    def("GreenCtx", false, false, ColType::Lenient),
    def("Strm", false, false, ColType::Lenient),
];

const START: usize = 0;
const DURATION: usize = 1;
const CORR_ID: usize = 2;
const GRID_X: usize = 3;
const BYTES: usize = 4;
const SRC: usize = 5;
const DST: usize = 6;
const DEVICE: usize = 7;
const NAME: usize = 8;

/// The report's columns and checks; [`Table`] keeps where each column sits.
pub enum GpuTrace {}

pub type GpuTraceSchema = Table<GpuTrace, { DEFS.len() }>;

#[derive(Clone, Copy, Debug)]
pub struct Pending {
    pub start_ns: i64,
    pub duration_ns: i64,
    pub corr_id: Option<u64>,
    /// `None`: a kernel.
    pub bytes: Option<u64>,
    pub src: Span,
    pub dst: Span,
    pub device: Span,
    pub name: Span,
}

impl Columns<{ DEFS.len() }> for GpuTrace {
    type Pending = Pending;
    type Row = GpuOpRow;
    const DEFS: &'static [ColumnDef] = DEFS;

    fn check(
        table: &GpuTraceSchema,
        _data: &[u8],
        spans: &[Span],
        cells: &[Cell],
    ) -> Check<Pending> {
        let c = &table.col;
        let grid = cells[c[GRID_X]].as_num();
        let bytes = cells[c[BYTES]].as_num();
        if grid.is_some() == bytes.is_some() {
            return Err((
                Some(c[BYTES]),
                "a row is either a kernel (`GrdX`, no `Bytes`) or a memory operation (`Bytes`, no `GrdX`)".to_owned(),
            ));
        }
        Ok(Pending {
            start_ns: required_i64(cells, c[START])?,
            duration_ns: required_i64(cells, c[DURATION])?,
            corr_id: cells[c[CORR_ID]].as_num(),
            bytes,
            src: spans[c[SRC]],
            dst: spans[c[DST]],
            device: spans[c[DEVICE]],
            name: spans[c[NAME]],
        })
    }

    fn finish(
        p: Pending,
        record: &[u8],
        _line: u32,
        names: Names<'_>,
    ) -> Result<GpuOpRow, NameError> {
        let interner = names.interner;
        let mut optional = |span: Span| -> Result<Option<NameId>, NameError> {
            let bytes = span.of(record);
            if bytes.is_empty() || bytes == b"None" {
                Ok(None)
            } else {
                intern_name(record, span, interner, false).map(Some)
            }
        };
        let device = optional(p.device)?;
        let src = optional(p.src)?;
        let dst = optional(p.dst)?;
        Ok(GpuOpRow {
            start_ns: p.start_ns,
            duration_ns: p.duration_ns,
            corr_id: p.corr_id,
            bytes: p.bytes,
            name: intern_name(record, p.name, interner, false)?,
            device,
            src,
            dst,
        })
    }

    fn relocate(row: &mut GpuOpRow, _lines: u64, ids: &[NameId]) {
        row.name = parts::relocated_name(row.name, ids);
        for id in [&mut row.device, &mut row.src, &mut row.dst]
            .into_iter()
            .flatten()
        {
            *id = parts::relocated_name(*id, ids);
        }
    }
}
