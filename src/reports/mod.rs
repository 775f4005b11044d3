//! Reading nsys's two CSV reports, `nvtx_pushpop_trace` and `nvtx_gpu_proj_trace` (and
//! nsys 2022.4's `nvtxpptrace` / `nvtxgpuproj`, which have the same columns), into compact
//! rows.
//!
//! This module owns everything between the report files and typed rows: finding the header
//! (lines before it are skipped), finding columns by name (unknown ones are ignored),
//! splitting records, checking each row against what its columns pin down, and interning
//! names. It does not interpret the ranges (capture range, iterations): that is the
//! analysis's job.
//!
//! nsys's CSV is not RFC 4180: a value holding a comma is wrapped in double quotes, quotes
//! inside are not doubled, and newlines are written raw, so a name can hold `",` or `"\n`
//! and no plain CSV reader splits it right. [`scan`] splits each record by trying the
//! possible ends of its text fields and keeping the first reading that the typed columns
//! confirm (see there). Names come out exactly as pushed, except that with
//! [`ReadOptions::strip_default_domain`] (for the nsys versions that mark the default domain
//! with a leading `:`) that one leading `:` is dropped; a `DOMAIN:` prefix always stays.
//!
//! Files are read through a bounded window ([`window`]) and parsed in place: memory does
//! not grow with the file, except for the rows returned and the distinct names.

mod api_trace;
mod columns;
mod gpu_proj;
mod gpu_trace;
mod interner;
mod kern_sum;
mod parts;
mod pushpop;
mod render;
mod scan;
mod window;

#[cfg(test)]
mod tests;

pub use api_trace::ApiCall;
use interner::InternError;
pub use interner::{Interner, NameId};
pub use render::{
    render_field, write_gpu_proj_row, write_pushpop_row, GpuProjRecord, PushPopRecord,
    GPU_PROJ_HEADER, PUSHPOP_HEADER,
};

use columns::{match_header, ColumnDef, Layout};
use scan::{Cell, Outcome, Schema, Span, Splitter};
use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use window::{count_newlines, FillError, Window};

use crate::text::shown_path;

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

/// One row of `cuda_gpu_kern_sum`: a kernel name and its times over the capture.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelSummaryRow {
    pub name: NameId,
    pub total_ns: i64,
    pub instances: u64,
    pub mean_ns: f64,
    pub median_ns: f64,
    pub minimum_ns: i64,
    pub maximum_ns: i64,
    /// Empty when nsys had no standard deviation to give.
    pub stddev_ns: Option<f64>,
}

/// One row of `cuda_gpu_trace`: a kernel (`bytes` is `None`), a memory copy or a memset
/// (`Start` is checked, not kept).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GpuOpRow {
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

/// How a report's names are read, decided by the caller from the nsys version that wrote it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReadOptions {
    /// Drop one leading `:` from every name: nsys 2025.1 and newer write `:message` for a
    /// range of the default domain (see `nsys::adds_default_domain_prefix`). Older versions
    /// write a name as pushed, so a program's own leading `:` must stay.
    pub strip_default_domain: bool,
}

/// Why a report could not be read. Every variant names the file.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// A 0-byte file (what nsys leaves behind for a skipped or failed report).
    #[error("{}: empty file (0 bytes)", shown_path(.path))]
    Empty { path: PathBuf },
    #[error("{}: cannot read: {source}", shown_path(.path))]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    /// No line of the file holds all the required columns; `header` is the line that came
    /// closest (or the first line).
    #[error("{}: missing required column `{column}` (header: {header})", shown_path(.path))]
    MissingColumn {
        path: PathBuf,
        column: String,
        header: String,
    },
    /// A name is not valid UTF-8 (names are never read lossily).
    #[error("{}: file is not UTF-8 at line {line}", shown_path(.path))]
    NotUtf8 { path: PathBuf, line: u32 },
    /// A record that does not parse or is inconsistent. `line` is 1-based.
    #[error("{}:{line}: {}{message}", shown_path(.path), column_prefix(.column))]
    Invalid {
        path: PathBuf,
        line: u32,
        column: Option<String>,
        message: String,
    },
}

fn column_prefix(column: &Option<String>) -> String {
    match column {
        Some(c) => format!("column `{c}`: "),
        None => String::new(),
    }
}

impl ReportError {
    /// The file the error is about.
    pub fn path(&self) -> &Path {
        match self {
            ReportError::Empty { path }
            | ReportError::Io { path, .. }
            | ReportError::MissingColumn { path, .. }
            | ReportError::NotUtf8 { path, .. }
            | ReportError::Invalid { path, .. } => path,
        }
    }
}

/// Reads a `nvtx_pushpop_trace` CSV file (or 2022.4's `nvtxpptrace`). A large file is read
/// in parts, one per core.
pub fn read_pushpop(
    path: &Path,
    interner: &mut Interner,
    options: ReadOptions,
) -> Result<Vec<PushPopRow>, ReportError> {
    read_file::<pushpop::PushPopSchema>(path, interner, options)
}

/// Reads a `nvtx_gpu_proj_trace` CSV file (or 2022.4's `nvtxgpuproj`). A large file is read
/// in parts, one per core.
pub fn read_gpu_proj(
    path: &Path,
    interner: &mut Interner,
    options: ReadOptions,
) -> Result<Vec<GpuProjRow>, ReportError> {
    read_file::<gpu_proj::GpuProjSchema>(path, interner, options)
}

/// Reads a `cuda_gpu_kern_sum` CSV file (or 2022.4's `gpukernsum`).
pub fn read_kernel_summary(
    path: &Path,
    interner: &mut Interner,
) -> Result<Vec<KernelSummaryRow>, ReportError> {
    read_file::<kern_sum::KernSumSchema>(path, interner, ReadOptions::default())
}

/// Reads a `cuda_api_trace` CSV file (or 2022.4's `cudaapitrace`): every CUDA API call.
pub fn read_api_trace(path: &Path) -> Result<Vec<ApiCall>, ReportError> {
    read_file::<api_trace::ApiTraceSchema>(path, &mut Interner::new(), ReadOptions::default())
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
    parse_report_into::<gpu_trace::GpuTraceSchema, _, _>(
        file,
        path,
        interner,
        limits,
        ReadOptions::default(),
        sink,
    )
}

fn read_file<T>(
    path: &Path,
    interner: &mut Interner,
    options: ReadOptions,
) -> Result<Vec<T::Row>, ReportError>
where
    T: Report + Sync,
    T::Row: Send,
{
    let (file, size, limits) = open(path)?;
    parts::read_in_parts::<T, _>(
        &file,
        size,
        path,
        interner,
        (limits, options),
        parts::default_parts(),
        parts::MIN_PART,
    )
}

/// Reads `nvtx_pushpop_trace` CSV from `reader`; `file_label` names it in errors.
pub fn parse_pushpop<R: Read>(
    reader: R,
    file_label: &Path,
    interner: &mut Interner,
    options: ReadOptions,
) -> Result<Vec<PushPopRow>, ReportError> {
    parse_report::<pushpop::PushPopSchema, R>(
        reader,
        file_label,
        interner,
        Limits::DEFAULT,
        options,
    )
}

/// Reads `nvtx_gpu_proj_trace` CSV from `reader`; `file_label` names it in errors.
pub fn parse_gpu_proj<R: Read>(
    reader: R,
    file_label: &Path,
    interner: &mut Interner,
    options: ReadOptions,
) -> Result<Vec<GpuProjRow>, ReportError> {
    parse_report::<gpu_proj::GpuProjSchema, R>(
        reader,
        file_label,
        interner,
        Limits::DEFAULT,
        options,
    )
}

/// Opens a report, only when it is a regular file (a FIFO left under `stats/` would block).
fn open(path: &Path) -> Result<(File, u64, Limits), ReportError> {
    let (file, size) = crate::files::open_regular(path).map_err(|e| ReportError::Io {
        path: path.to_path_buf(),
        source: e.into_io_error(),
    })?;
    Ok((file, size, Limits::for_file_size(size)))
}

/// Sizes of the read window.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Limits {
    pub initial_window: usize,
    /// The largest record (plus the record after it) that can be read. Bounds memory on a
    /// file that is not a report (say, a quote that never closes).
    pub max_window: usize,
    /// Rows to make room for at once (from the file's size): growing a vector of millions
    /// of rows by doubling copies it over and over.
    pub expected_rows: usize,
    /// Candidate field ends one record may try (see `scan`).
    pub candidate_budget: u32,
}

impl Limits {
    pub(crate) const DEFAULT: Limits = Limits {
        initial_window: 1 << 20,
        max_window: 256 << 20,
        expected_rows: 0,
        candidate_budget: scan::CANDIDATE_BUDGET,
    };

    /// For a file of `bytes` bytes: rows are rarely under 64 bytes.
    pub(crate) fn for_file_size(bytes: u64) -> Limits {
        let rows = usize::try_from(bytes / 64).unwrap_or(usize::MAX);
        Limits {
            // Capped: an estimate, not a promise (the vector still grows past it).
            expected_rows: rows.min(16 << 20),
            ..Limits::DEFAULT
        }
    }
}

/// What turning a checked split into a row can still fail on.
pub(crate) enum Finish {
    /// The name is not UTF-8; `offset` of the bad byte in the record.
    NotUtf8 {
        offset: usize,
    },
    TooManyNames,
}

/// A report: its column table, and how a checked split becomes a row.
pub(crate) trait Report: Schema + Sized {
    type Row;
    const DEFS: &'static [ColumnDef];
    fn build(layout: Layout) -> Option<Self>;
    fn layout(&self) -> &Layout;
    fn finish(
        &self,
        pending: Self::Pending,
        record: &[u8],
        line: u32,
        names: Names<'_>,
    ) -> Result<Self::Row, Finish>;
    /// A row read by a part of the file, placed in the whole file (see [`parts`]).
    fn relocate(row: &mut Self::Row, lines: u64, ids: &[NameId]);
}

impl Report for pushpop::PushPopSchema {
    type Row = PushPopRow;
    const DEFS: &'static [ColumnDef] = pushpop::DEFS;

    fn build(layout: Layout) -> Option<Self> {
        Self::new(layout)
    }

    fn layout(&self) -> &Layout {
        &self.layout
    }

    fn finish(
        &self,
        p: pushpop::Pending,
        record: &[u8],
        line: u32,
        names: Names<'_>,
    ) -> Result<PushPopRow, Finish> {
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

impl Report for gpu_proj::GpuProjSchema {
    type Row = GpuProjRow;
    const DEFS: &'static [ColumnDef] = gpu_proj::DEFS;

    fn build(layout: Layout) -> Option<Self> {
        Self::new(layout)
    }

    fn layout(&self) -> &Layout {
        &self.layout
    }

    fn finish(
        &self,
        p: gpu_proj::Pending,
        record: &[u8],
        line: u32,
        names: Names<'_>,
    ) -> Result<GpuProjRow, Finish> {
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

impl Report for kern_sum::KernSumSchema {
    type Row = KernelSummaryRow;
    const DEFS: &'static [ColumnDef] = kern_sum::DEFS;

    fn build(layout: Layout) -> Option<Self> {
        Self::new(layout)
    }

    fn layout(&self) -> &Layout {
        &self.layout
    }

    fn finish(
        &self,
        p: kern_sum::Pending,
        record: &[u8],
        _line: u32,
        names: Names<'_>,
    ) -> Result<KernelSummaryRow, Finish> {
        Ok(KernelSummaryRow {
            name: intern_name(record, p.name, names.interner, false)?,
            total_ns: p.total_ns,
            instances: p.instances,
            mean_ns: p.mean_ns,
            median_ns: p.median_ns,
            minimum_ns: p.minimum_ns,
            maximum_ns: p.maximum_ns,
            stddev_ns: p.stddev_ns,
        })
    }

    fn relocate(row: &mut KernelSummaryRow, _lines: u64, ids: &[NameId]) {
        row.name = parts::relocated_name(row.name, ids);
    }
}

impl Report for api_trace::ApiTraceSchema {
    type Row = ApiCall;
    const DEFS: &'static [ColumnDef] = api_trace::DEFS;

    fn build(layout: Layout) -> Option<Self> {
        Self::new(layout)
    }

    fn layout(&self) -> &Layout {
        &self.layout
    }

    fn finish(
        &self,
        p: ApiCall,
        _record: &[u8],
        _line: u32,
        _names: Names<'_>,
    ) -> Result<ApiCall, Finish> {
        Ok(p)
    }

    fn relocate(_row: &mut ApiCall, _lines: u64, _ids: &[NameId]) {}
}

impl Report for gpu_trace::GpuTraceSchema {
    type Row = GpuOpRow;
    const DEFS: &'static [ColumnDef] = gpu_trace::DEFS;

    fn build(layout: Layout) -> Option<Self> {
        Self::new(layout)
    }

    fn layout(&self) -> &Layout {
        &self.layout
    }

    fn finish(
        &self,
        p: gpu_trace::Pending,
        record: &[u8],
        _line: u32,
        names: Names<'_>,
    ) -> Result<GpuOpRow, Finish> {
        let interner = names.interner;
        let mut optional = |span: Span| -> Result<Option<NameId>, Finish> {
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

/// Where a report's names go, and how they are read ([`ReadOptions`]).
pub(crate) struct Names<'a> {
    pub interner: &'a mut Interner,
    pub strip_default_domain: bool,
}

impl Names<'_> {
    /// Interns a name as the analysis sees it: exact bytes, UTF-8, and one leading `:`
    /// dropped when nsys marks the default domain with it.
    #[inline]
    fn intern(self, record: &[u8], span: Span) -> Result<NameId, Finish> {
        intern_name(record, span, self.interner, self.strip_default_domain)
    }
}

#[inline]
fn intern_name(
    record: &[u8],
    span: Span,
    interner: &mut Interner,
    strip_default_domain: bool,
) -> Result<NameId, Finish> {
    let bytes = span.of(record);
    let (skipped, name) = match bytes.strip_prefix(b":") {
        Some(rest) if strip_default_domain => (1, rest),
        _ => (0, bytes),
    };
    interner.intern_bytes(name).map_err(|e| match e {
        InternError::NotUtf8(at) => Finish::NotUtf8 {
            offset: span.start + skipped + at,
        },
        InternError::Full => Finish::TooManyNames,
    })
}

pub(crate) type Check<P> = Result<P, (Option<usize>, String)>;

#[cold]
fn nothing(col: usize) -> (Option<usize>, String) {
    (
        Some(col),
        "expected an unsigned integer, found nothing".to_string(),
    )
}

#[cold]
fn too_large(col: usize, v: u64) -> (Option<usize>, String) {
    (Some(col), format!("{v} is too large (over {})", i64::MAX))
}

#[inline(always)]
pub(crate) fn required_u64(cells: &[Cell], col: usize) -> Result<u64, (Option<usize>, String)> {
    match cells.get(col).and_then(|c| c.as_num()) {
        Some(v) => Ok(v),
        None => Err(nothing(col)),
    }
}

/// A process or thread id: nsys derives them from 24-bit fields.
#[inline(always)]
pub(crate) fn required_id(cells: &[Cell], col: usize) -> Result<u32, (Option<usize>, String)> {
    let v = required_u64(cells, col)?;
    u32::try_from(v).map_err(|_| id_too_large(col, v))
}

#[cold]
fn id_too_large(col: usize, v: u64) -> (Option<usize>, String) {
    (
        Some(col),
        format!(
            "{v} is too large for a process or thread id (over {})",
            u32::MAX
        ),
    )
}

#[inline(always)]
pub(crate) fn required_i64(cells: &[Cell], col: usize) -> Result<i64, (Option<usize>, String)> {
    let v = required_u64(cells, col)?;
    i64::try_from(v).map_err(|_| too_large(col, v))
}

#[inline(always)]
pub(crate) fn optional_i64(
    cells: &[Cell],
    col: usize,
) -> Result<Option<i64>, (Option<usize>, String)> {
    match cells.get(col).and_then(|c| c.as_num()) {
        Some(_) => required_i64(cells, col).map(Some),
        None => Ok(None),
    }
}

/// The last id of a range stack such as `:1:2:5`.
#[inline(always)]
pub(crate) fn last_stack_id(stack: &[u8]) -> Option<u64> {
    let colon = stack.iter().rposition(|&b| b == b':')?;
    scan::digits_u64(&stack[colon + 1..])
}

fn size_text(bytes: usize) -> String {
    if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{bytes} bytes")
    }
}

fn line_u32(line: u64) -> u32 {
    u32::try_from(line).unwrap_or(u32::MAX)
}

/// The longest header text quoted in an error.
const HEADER_SHOWN: usize = 300;

fn shown_header(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(line);
    let mut shown: String = text.chars().take(HEADER_SHOWN).collect();
    if text.chars().nth(HEADER_SHOWN).is_some() {
        shown.push('…');
    }
    shown
}

pub(crate) fn parse_report<T: Report, R: Read>(
    reader: R,
    label: &Path,
    interner: &mut Interner,
    limits: Limits,
    options: ReadOptions,
) -> Result<Vec<T::Row>, ReportError> {
    let mut rows = Vec::with_capacity(limits.expected_rows);
    parse_report_into::<T, R, _>(reader, label, interner, limits, options, &mut rows)?;
    Ok(rows)
}

/// Reads a whole report from `reader`, handing each row to `sink` as it is read.
pub(crate) fn parse_report_into<T: Report, R: Read, E: Extend<T::Row>>(
    reader: R,
    label: &Path,
    interner: &mut Interner,
    limits: Limits,
    options: ReadOptions,
    sink: &mut E,
) -> Result<(), ReportError> {
    let mut w = Window::new(reader, limits.initial_window, limits.max_window);
    let (schema, crlf) = read_header::<T, R>(&mut w, label, limits)?;
    let body = Body {
        schema: &schema,
        crlf,
        label,
        limits,
        options,
    };
    read_records(&mut w, &body, interner, u64::MAX, sink)
}

/// What reading records needs besides the data: the header's schema, how to name the file
/// and how to read names.
pub(crate) struct Body<'a, T> {
    pub schema: &'a T,
    pub crlf: bool,
    pub label: &'a Path,
    pub limits: Limits,
    pub options: ReadOptions,
}

fn fill<R: Read>(
    w: &mut Window<R>,
    label: &Path,
    limits: Limits,
    what: &str,
) -> Result<(), ReportError> {
    match w.fill() {
        Ok(()) => Ok(()),
        Err(FillError::Io(source)) => Err(ReportError::Io {
            path: label.to_path_buf(),
            source,
        }),
        Err(FillError::TooLong) => Err(ReportError::Invalid {
            path: label.to_path_buf(),
            line: line_u32(w.line()),
            column: None,
            message: format!("{what} is longer than {}", size_text(limits.max_window)),
        }),
    }
}

/// Reads up to and including the header (the first line holding every required column):
/// the report's schema, and whether the header ended with `\r\n`.
pub(crate) fn read_header<T: Report, R: Read>(
    w: &mut Window<R>,
    label: &Path,
    limits: Limits,
) -> Result<(T, bool), ReportError> {
    let path = || label.to_path_buf();
    fill(w, label, limits, "the first line")?;
    if w.data().is_empty() && w.eof() {
        return Err(ReportError::Empty { path: path() });
    }

    let mut closest: Option<(usize, &'static str, String)> = None;
    let found = loop {
        let data = w.data();
        let (line, consumed) = match scan::memchr(b'\n', data) {
            Some(i) => (&data[..i], i + 1),
            None if w.eof() => (data, data.len()),
            None => {
                fill(w, label, limits, "a line before the header")?;
                continue;
            }
        };
        if consumed == 0 {
            break None;
        }
        let crlf = line.last() == Some(&b'\r');
        let line = if crlf { &line[..line.len() - 1] } else { line };
        let layout = match_header(line, T::DEFS);
        match layout.first_missing(T::DEFS) {
            None => {
                if let Some(schema) = T::build(layout) {
                    w.consume(consumed);
                    break Some((schema, crlf));
                }
            }
            Some(missing) => {
                let known = layout.known();
                let closer = match &closest {
                    None => true,
                    Some((best, _, _)) => known > *best,
                };
                if closer {
                    closest = Some((known, missing, shown_header(line)));
                }
            }
        }
        w.consume(consumed);
    };
    found.ok_or_else(|| {
        let (_, column, header) = closest.unwrap_or((0, "Name", String::new()));
        ReportError::MissingColumn {
            path: path(),
            column: column.to_string(),
            header,
        }
    })
}

/// Reads records into `rows` until the end of the file, or until the window's offset reaches
/// `stop` (always at a record boundary: the record that crosses `stop` is read whole).
pub(crate) fn read_records<T: Report, R: Read, E: Extend<T::Row>>(
    w: &mut Window<R>,
    body: &Body<'_, T>,
    interner: &mut Interner,
    stop: u64,
    rows: &mut E,
) -> Result<(), ReportError> {
    let path = || body.label.to_path_buf();
    let schema = body.schema;
    let mut splitter = Splitter::new(schema, body.crlf, body.limits.candidate_budget);
    while w.offset() < stop {
        let data = w.data();
        // Line ends after the last record (and nothing else) end the file.
        if data.iter().all(|&b| b == b'\n' || b == b'\r') {
            if w.eof() {
                break;
            }
            fill(w, body.label, body.limits, "a record")?;
            continue;
        }
        match splitter.next_record(data, w.eof()) {
            Outcome::Record { pending, len } => {
                let record = &data[..len.min(data.len())];
                let line = line_u32(w.line());
                let names = Names {
                    interner: &mut *interner,
                    strip_default_domain: body.options.strip_default_domain,
                };
                match schema.finish(pending, record, line, names) {
                    Ok(row) => rows.extend(std::iter::once(row)),
                    Err(Finish::NotUtf8 { offset }) => {
                        let at = record.get(..offset).unwrap_or(record);
                        return Err(ReportError::NotUtf8 {
                            path: path(),
                            line: line_u32(w.line().saturating_add(count_newlines(at))),
                        });
                    }
                    Err(Finish::TooManyNames) => return Err(too_many_names(body.label, line)),
                }
                w.consume(len);
            }
            Outcome::NeedMore if w.eof() => {
                // Cannot happen (candidates ask for more only before the end of the file);
                // an error rather than a loop if it ever does.
                return Err(ReportError::Invalid {
                    path: path(),
                    line: line_u32(w.line()),
                    column: None,
                    message: "record cannot be split (internal: incomplete at end of file)"
                        .to_string(),
                });
            }
            Outcome::NeedMore => fill(
                w,
                body.label,
                body.limits,
                "a record (with the record after it)",
            )?,
            Outcome::Fail(failure) => {
                let before = data.get(..failure.rec_start).unwrap_or(data);
                let line = w.line().saturating_add(count_newlines(before));
                return Err(ReportError::Invalid {
                    path: path(),
                    line: line_u32(line),
                    column: failure
                        .col
                        .and_then(|c| schema.layout().names.get(c).cloned()),
                    message: failure.message,
                });
            }
        }
    }
    Ok(())
}

fn too_many_names(label: &Path, line: u32) -> ReportError {
    ReportError::Invalid {
        path: label.to_path_buf(),
        line,
        column: None,
        message: format!("more than {} distinct names", u32::MAX),
    }
}
