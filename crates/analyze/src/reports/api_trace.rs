//! The `cuda_api_trace` report (2022.4: `cudaapitrace`, same columns): one row per CUDA API
//! call on the host. Kept: start, end, correlation id, process and thread.
//!
//! Two text columns: `Name` (the API function, in the middle) and `Thread Name` (last, may be
//! `None` in 2022.4); `Result`, `CorrID`, `Pid`, `Tid` and `T-Pri` around them are numbers,
//! which pin both down.

use std::path::Path;

use super::cells::{required_i64, required_id, required_u64, Check};
use super::columns::{def, ColumnDef};
use super::error::ReportError;
use super::interner::{Interner, NameId};
use super::parts::read_file;
use super::reader::{Columns, NameError, Names, ReadOptions, Table};
use super::scan::{Cell, ColType, Span};

/// Reads a `cuda_api_trace` CSV file (or 2022.4's `cudaapitrace`): every CUDA API call.
pub fn read_api_trace(path: &Path) -> Result<Vec<ApiCall>, ReportError> {
    read_file::<ApiTraceSchema>(path, &mut Interner::new(), ReadOptions::default())
}

pub const DEFS: &[ColumnDef] = &[
    def("Start", true, true, ColType::Unsigned),
    def("Duration", true, true, ColType::Unsigned),
    def("Result", false, false, ColType::Lenient),
    def("CorrID", false, true, ColType::Unsigned).or(&["CorrId"]),
    def("Pid", false, true, ColType::Unsigned).or(&["PID"]),
    def("Tid", false, true, ColType::Unsigned).or(&["TID"]),
    def("T-Pri", false, false, ColType::Lenient),
];

const START: usize = 0;
const DURATION: usize = 1;
const CORR_ID: usize = 3;
const PID: usize = 4;
const TID: usize = 5;

/// The report's columns and checks; [`Table`] keeps where each column sits.
pub enum ApiTrace {}

pub type ApiTraceSchema = Table<ApiTrace, { DEFS.len() }>;

/// One CUDA API call: when it ran on which thread, and the correlation id that ties it to
/// the GPU operation it launched (24 bytes; a trace has millions of calls).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApiCall {
    pub start_ns: i64,
    pub end_ns: i64,
    pub corr_id: u64,
    /// nsys writes 24-bit process and thread ids.
    pub pid: u32,
    pub tid: u32,
}

impl Columns<{ DEFS.len() }> for ApiTrace {
    type Pending = ApiCall;
    type Row = ApiCall;
    const DEFS: &'static [ColumnDef] = DEFS;

    fn check(
        table: &ApiTraceSchema,
        _data: &[u8],
        _spans: &[Span],
        cells: &[Cell],
    ) -> Check<ApiCall> {
        let c = &table.col;
        let start = required_i64(cells, c[START])?;
        let duration = required_i64(cells, c[DURATION])?;
        Ok(ApiCall {
            start_ns: start,
            end_ns: start.saturating_add(duration),
            corr_id: required_u64(cells, c[CORR_ID])?,
            pid: required_id(cells, c[PID])?,
            tid: required_id(cells, c[TID])?,
        })
    }

    fn finish(
        p: ApiCall,
        _record: &[u8],
        _line: u32,
        _names: Names<'_>,
    ) -> Result<ApiCall, NameError> {
        Ok(p)
    }

    fn relocate(_row: &mut ApiCall, _lines: u64, _ids: &[NameId]) {}
}
