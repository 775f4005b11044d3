//! The driver every report shares: from the bytes of a CSV report to its rows.
//!
//! [`read_header`] finds the header (lines before it are skipped) and builds the report's
//! [`Report`] from the columns it names; [`read_records`] splits the records after it
//! ([`scan`](super::scan)) and turns each checked split into a row ([`Report::finish`]),
//! interning its names. [`parse_report`] and [`parse_report_into`] do both over any reader;
//! a file is opened with [`open`] and read through a bounded window ([`ReadLimits`]).

use std::fs::File;
use std::io::Read;
use std::marker::PhantomData;
use std::path::Path;

use super::cells::Check;
use super::columns::{match_header, ColumnDef, Layout};
use super::error::ReportError;
use super::interner::{InternError, Interner, NameId};
use super::scan::{self, Cell, ColType, Schema, Span, Split, Splitter};
use super::window::{count_newlines, FillError, Window};

/// How a report's names are read, decided by the caller from the nsys version that wrote it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReadOptions {
    /// Drop one leading `:` from every name: nsys 2025.1 and newer write `:message` for a
    /// range of the default domain (see `nsys::adds_default_domain_prefix`). Older versions
    /// write a name as pushed, so a program's own leading `:` must stay.
    pub strip_default_domain: bool,
}

/// Opens a report, only when it is a regular file (a FIFO left under `stats/` would block).
pub(super) fn open(path: &Path) -> Result<(File, u64, ReadLimits), ReportError> {
    let (file, size) = nsys_gate_core::files::open_regular(path).map_err(|e| ReportError::Io {
        path: path.to_path_buf(),
        source: e.into_io_error(),
    })?;
    Ok((file, size, ReadLimits::for_file_size(size)))
}

/// Sizes of the read window, and the rows to make room for.
#[derive(Clone, Copy, Debug)]
pub struct ReadLimits {
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

impl ReadLimits {
    pub const DEFAULT: ReadLimits = ReadLimits {
        initial_window: 1 << 20,
        max_window: 256 << 20,
        expected_rows: 0,
        candidate_budget: scan::CANDIDATE_BUDGET,
    };

    /// For a file of `bytes` bytes: rows are rarely under 64 bytes.
    pub fn for_file_size(bytes: u64) -> ReadLimits {
        let rows = usize::try_from(bytes / 64).unwrap_or(usize::MAX);
        ReadLimits {
            // Capped: an estimate, not a promise (the vector still grows past it).
            expected_rows: rows.min(16 << 20),
            ..ReadLimits::DEFAULT
        }
    }
}

/// What turning a checked split into a row can still fail on: interning one of its names.
pub enum NameError {
    /// The name is not UTF-8; `offset` of the bad byte in the record.
    NotUtf8 {
        offset: usize,
    },
    TooManyNames,
}

/// A report as the six report files define it: its column table, its checks of a split, and
/// how a checked split becomes a row. The header's layout and where each column sits are kept
/// by [`Table`], the one [`Schema`] and [`Report`] every report shares.
pub trait Columns<const N: usize>: Sized {
    /// A split and checked row, with its names still spans of the record.
    type Pending: Copy;
    type Row;
    /// The report's columns, `N` of them.
    const DEFS: &'static [ColumnDef];
    /// Cross-column checks on a complete split (see [`Schema::check`]).
    fn check(
        table: &Table<Self, N>,
        data: &[u8],
        spans: &[Span],
        cells: &[Cell],
    ) -> Check<Self::Pending>;
    /// The row of a checked split, its names interned.
    fn finish(
        pending: Self::Pending,
        record: &[u8],
        line: u32,
        names: Names<'_>,
    ) -> Result<Self::Row, NameError>;
    /// A row read by a part of the file, placed in the whole file (see
    /// [`parts`](super::parts)).
    fn relocate(row: &mut Self::Row, lines: u64, ids: &[NameId]);
}

/// A report's header matched against its column table `C::DEFS`: the header's layout, each
/// entry's column in the header (`col`), and whether the header has it (`present`; required
/// entries always do).
pub struct Table<C, const N: usize> {
    pub layout: Layout,
    pub col: [usize; N],
    pub present: [bool; N],
    report: PhantomData<C>,
}

impl<C, const N: usize> Table<C, N> {
    /// An optional entry's column, when the header has it.
    #[inline]
    pub fn optional(&self, entry: usize) -> Option<usize> {
        self.present[entry].then_some(self.col[entry])
    }
}

impl<C: Columns<N>, const N: usize> Schema for Table<C, N> {
    type Pending = C::Pending;

    fn types(&self) -> &[ColType] {
        &self.layout.types
    }

    #[inline]
    fn check(&self, data: &[u8], spans: &[Span], cells: &[Cell]) -> Check<C::Pending> {
        C::check(self, data, spans, cells)
    }
}

impl<C: Columns<N>, const N: usize> Report for Table<C, N> {
    type Row = C::Row;
    const DEFS: &'static [ColumnDef] = C::DEFS;

    fn build(layout: Layout) -> Option<Self> {
        let (col, present) = layout.resolve(C::DEFS)?;
        Some(Table {
            layout,
            col,
            present,
            report: PhantomData,
        })
    }

    fn layout(&self) -> &Layout {
        &self.layout
    }

    #[inline]
    fn finish(
        &self,
        pending: C::Pending,
        record: &[u8],
        line: u32,
        names: Names<'_>,
    ) -> Result<C::Row, NameError> {
        C::finish(pending, record, line, names)
    }

    fn relocate(row: &mut C::Row, lines: u64, ids: &[NameId]) {
        C::relocate(row, lines, ids);
    }
}

/// What the reader needs of a report ([`Table`] for every report).
pub trait Report: Schema + Sized {
    type Row;
    const DEFS: &'static [ColumnDef];
    /// The schema of a header matched against `DEFS`; `None` when a required column is
    /// missing.
    fn build(layout: Layout) -> Option<Self>;
    fn layout(&self) -> &Layout;
    fn finish(
        &self,
        pending: Self::Pending,
        record: &[u8],
        line: u32,
        names: Names<'_>,
    ) -> Result<Self::Row, NameError>;
    /// A row read by a part of the file, placed in the whole file (see
    /// [`parts`](super::parts)).
    fn relocate(row: &mut Self::Row, lines: u64, ids: &[NameId]);
}

/// Where a report's names go, and how they are read ([`ReadOptions`]).
pub struct Names<'a> {
    pub interner: &'a mut Interner,
    pub strip_default_domain: bool,
}

impl Names<'_> {
    /// Interns a name as the analysis sees it: exact bytes, UTF-8, and one leading `:`
    /// dropped when nsys marks the default domain with it.
    #[inline]
    pub(super) fn intern(self, record: &[u8], span: Span) -> Result<NameId, NameError> {
        intern_name(record, span, self.interner, self.strip_default_domain)
    }
}

#[inline]
pub(super) fn intern_name(
    record: &[u8],
    span: Span,
    interner: &mut Interner,
    strip_default_domain: bool,
) -> Result<NameId, NameError> {
    let bytes = span.of(record);
    let (skipped, name) = match bytes.strip_prefix(b":") {
        Some(rest) if strip_default_domain => (1, rest),
        _ => (0, bytes),
    };
    interner.intern_bytes(name).map_err(|e| match e {
        InternError::NotUtf8(at) => NameError::NotUtf8 {
            offset: span.start + skipped + at,
        },
        InternError::Full => NameError::TooManyNames,
    })
}

fn size_text(bytes: usize) -> String {
    if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{bytes} bytes")
    }
}

pub(super) fn line_u32(line: u64) -> u32 {
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

#[cfg(test)]
pub fn parse_report<T: Report, R: Read>(
    reader: R,
    label: &Path,
    interner: &mut Interner,
    limits: ReadLimits,
    options: ReadOptions,
) -> Result<Vec<T::Row>, ReportError> {
    let mut rows = Vec::with_capacity(limits.expected_rows);
    parse_report_into::<T, R, _>(reader, label, interner, limits, options, &mut rows)?;
    Ok(rows)
}

/// Reads a whole report from `reader`, handing each row to `sink` as it is read.
pub fn parse_report_into<T: Report, R: Read, E: Extend<T::Row>>(
    reader: R,
    label: &Path,
    interner: &mut Interner,
    limits: ReadLimits,
    options: ReadOptions,
    sink: &mut E,
) -> Result<(), ReportError> {
    let mut w = Window::new(reader, limits.initial_window, limits.max_window);
    let (schema, crlf) = read_header::<T, R>(&mut w, label, limits)?;
    let setup = RecordSetup {
        schema: &schema,
        crlf,
        label,
        limits,
        options,
    };
    read_records(&mut w, &setup, interner, u64::MAX, sink)
}

/// What reading records needs besides the data: the header's schema, how to name the file
/// and how to read names.
pub struct RecordSetup<'a, T> {
    pub schema: &'a T,
    pub crlf: bool,
    pub label: &'a Path,
    pub limits: ReadLimits,
    pub options: ReadOptions,
}

fn fill<R: Read>(
    w: &mut Window<R>,
    label: &Path,
    limits: ReadLimits,
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
pub fn read_header<T: Report, R: Read>(
    w: &mut Window<R>,
    label: &Path,
    limits: ReadLimits,
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
pub fn read_records<T: Report, R: Read, E: Extend<T::Row>>(
    w: &mut Window<R>,
    setup: &RecordSetup<'_, T>,
    interner: &mut Interner,
    stop: u64,
    rows: &mut E,
) -> Result<(), ReportError> {
    let path = || setup.label.to_path_buf();
    let schema = setup.schema;
    let mut splitter = Splitter::new(schema, setup.crlf, setup.limits.candidate_budget);
    while w.offset() < stop {
        let data = w.data();
        // Line ends after the last record (and nothing else) end the file.
        if data.iter().all(|&b| b == b'\n' || b == b'\r') {
            if w.eof() {
                break;
            }
            fill(w, setup.label, setup.limits, "a record")?;
            continue;
        }
        match splitter.next_record(data, w.eof()) {
            Split::Record { pending, len } => {
                let record = &data[..len.min(data.len())];
                let line = line_u32(w.line());
                let names = Names {
                    interner: &mut *interner,
                    strip_default_domain: setup.options.strip_default_domain,
                };
                match schema.finish(pending, record, line, names) {
                    Ok(row) => rows.extend(std::iter::once(row)),
                    Err(NameError::NotUtf8 { offset }) => {
                        let at = record.get(..offset).unwrap_or(record);
                        return Err(ReportError::NotUtf8 {
                            path: path(),
                            line: line_u32(w.line().saturating_add(count_newlines(at))),
                        });
                    }
                    Err(NameError::TooManyNames) => return Err(too_many_names(setup.label, line)),
                }
                w.consume(len);
            }
            Split::NeedMore if w.eof() => {
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
            Split::NeedMore => fill(
                w,
                setup.label,
                setup.limits,
                "a record (with the record after it)",
            )?,
            Split::Fail(failure) => {
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

pub(super) fn too_many_names(label: &Path, line: u32) -> ReportError {
    ReportError::Invalid {
        path: label.to_path_buf(),
        line,
        column: None,
        message: format!("more than {} distinct names", u32::MAX),
    }
}
