//! Reading one report in parts, a thread each.
//!
//! The records after the header are cut at line starts near equal offsets, and each part is
//! read on a thread of its own as if a record began there. nsys writes newlines raw inside
//! names, so a line start is not always a record start; but a record's split depends only
//! on the data from its first byte on (see `scan`), so a part that begins at a true record
//! start reads exactly what one pass over the file would. Whether it does is known when the
//! part before it is done: that part must end exactly where this one begins. When it does
//! not (the cut fell inside a record), the part is dropped and its share is read again from
//! where the records really end. Errors found in a part count only
//! once the part is known to be good. Rows, names (ids in order of first appearance), line
//! numbers and errors are those of one pass.

use std::io::{self, Read};
use std::path::Path;

use super::error::ReportError;
use super::interner::{Interner, NameId};
use super::reader::{
    line_u32, open, read_header, read_records, too_many_names, ReadLimits, ReadOptions,
    RecordSetup, Report,
};
use super::window::Window;

/// Reads the report file at `path`, in parts, one per core (in one pass when it is small).
pub(super) fn read_file<T>(
    path: &Path,
    interner: &mut Interner,
    options: ReadOptions,
) -> Result<Vec<T::Row>, ReportError>
where
    T: Report + Sync,
    T::Row: Send,
{
    let (file, size, limits) = open(path)?;
    read_in_parts::<T, _>(
        &file,
        size,
        path,
        interner,
        (limits, options),
        default_parts(),
        MIN_PART,
    )
}

/// Bytes that can be read at any offset, from several threads at once.
pub trait Source: Sync {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize>;
}

impl Source for std::fs::File {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        std::os::unix::fs::FileExt::read_at(self, buf, offset)
    }
}

impl Source for [u8] {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        let rest = usize::try_from(offset)
            .ok()
            .and_then(|o| self.get(o..))
            .unwrap_or(&[]);
        let n = rest.len().min(buf.len());
        buf[..n].copy_from_slice(&rest[..n]);
        Ok(n)
    }
}

/// A reader over a [`Source`] from a given offset on.
struct At<'a, S: ?Sized> {
    src: &'a S,
    pos: u64,
}

impl<S: Source + ?Sized> Read for At<'_, S> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.src.read_at(buf, self.pos)?;
        self.pos += n as u64;
        Ok(n)
    }
}

/// A read window over `src` from `pos` on, which is on line `line` of the file.
fn window<S: Source + ?Sized>(
    src: &S,
    pos: u64,
    line: u64,
    limits: ReadLimits,
) -> Window<At<'_, S>> {
    Window::new(At { src, pos }, limits.initial_window, limits.max_window).starting_at(pos, line)
}

/// How far ahead of a cut point a line start is looked for; a cut with none is not made.
const LINE_SEARCH: usize = 1 << 16;

/// One part's reading, kept until the part before it says whether it counts.
struct Part<Row> {
    start: u64,
    result: Result<Vec<Row>, ReportError>,
    names: Interner,
    /// Where its last record ends.
    end: u64,
    /// Line ends it read past.
    lines: u64,
}

/// Reads the report in `src` (`size` bytes) in up to `parts` parts of at least `min_part`
/// bytes each; with one part, or a file too small for two, in one pass on this thread. The
/// window's limits and the name options travel together.
pub fn read_in_parts<T, S>(
    src: &S,
    size: u64,
    label: &Path,
    interner: &mut Interner,
    (limits, options): (ReadLimits, ReadOptions),
    parts: usize,
    min_part: u64,
) -> Result<Vec<T::Row>, ReportError>
where
    T: Report + Sync,
    T::Row: Send,
    S: Source + ?Sized,
{
    read_with_starts::<T, S>(src, label, interner, (limits, options), |body| {
        cut_points(src, body, size, parts, min_part)
    })
}

/// Reads the header, then the records in parts starting where `starts` says (given the
/// offset where the records begin).
fn read_with_starts<T, S>(
    src: &S,
    label: &Path,
    interner: &mut Interner,
    (limits, options): (ReadLimits, ReadOptions),
    starts: impl FnOnce(u64) -> Vec<u64>,
) -> Result<Vec<T::Row>, ReportError>
where
    T: Report + Sync,
    T::Row: Send,
    S: Source + ?Sized,
{
    let mut w = window(src, 0, 1, limits);
    let (schema, crlf) = read_header::<T, _>(&mut w, label, limits)?;
    let setup = RecordSetup {
        schema: &schema,
        crlf,
        label,
        limits,
        options,
    };
    let starts = starts(w.offset());
    read_parts(src, w, &setup, interner, &starts)
}

/// Reads the records after the header (`w` is just past it) in parts starting at `starts`
/// (increasing offsets past the header; any offsets, though only line starts can be good).
fn read_parts<T, S>(
    src: &S,
    mut w: Window<At<'_, S>>,
    setup: &RecordSetup<'_, T>,
    interner: &mut Interner,
    starts: &[u64],
) -> Result<Vec<T::Row>, ReportError>
where
    T: Report + Sync,
    T::Row: Send,
    S: Source + ?Sized,
{
    let limits = setup.limits;
    let window = |pos: u64, line: u64| window(src, pos, line, limits);
    let mut rows = Vec::with_capacity(limits.expected_rows);
    let Some(&first_stop) = starts.first() else {
        read_records(&mut w, setup, interner, u64::MAX, &mut rows)?;
        return Ok(rows);
    };

    let (first, later) = std::thread::scope(|scope| {
        let handles: Vec<_> = starts
            .iter()
            .enumerate()
            .map(|(k, &start)| {
                let stop = starts.get(k + 1).copied().unwrap_or(u64::MAX);
                scope.spawn(move || {
                    let mut w = window(start, 1);
                    let mut names = Interner::new();
                    let mut rows = Vec::new();
                    let result =
                        read_records(&mut w, setup, &mut names, stop, &mut rows).map(|()| rows);
                    Part {
                        start,
                        result,
                        names,
                        end: w.offset(),
                        lines: w.line() - 1,
                    }
                })
            })
            .collect();
        let first = read_records(&mut w, setup, interner, first_stop, &mut rows);
        let later: Vec<Part<T::Row>> = handles
            .into_iter()
            .map(|h| h.join().expect("a report part reader does not panic"))
            .collect();
        (first, later)
    });
    first?;

    let mut end = w.offset();
    let mut line = w.line();
    let mut later = later.into_iter().peekable();
    while let Some(part) = later.next() {
        if end != part.start {
            // The cut fell inside a record: this part's share is read again, from where the
            // records really end (the parts after it may still be good).
            let stop = later.peek().map_or(u64::MAX, |next| next.start);
            let mut rest = window(end, line);
            read_records(&mut rest, setup, interner, stop, &mut rows)?;
            end = rest.offset();
            line = rest.line();
            continue;
        }
        let before = line - 1;
        let part_rows = part.result.map_err(|e| e.lines_shifted(before))?;
        let mut ids = Vec::with_capacity(part.names.len());
        interner.reserve_for(&part.names);
        for name in part.names.names() {
            ids.push(
                interner
                    .intern_bytes(name.as_bytes())
                    .map_err(|_| too_many_names(setup.label, line_u32(line)))?,
            );
        }
        rows.reserve(part_rows.len());
        rows.extend(part_rows.into_iter().map(|mut row| {
            T::relocate(&mut row, before, &ids);
            row
        }));
        end = part.end;
        line += part.lines;
    }
    Ok(rows)
}

/// Line starts near `parts - 1` equal cuts of `setup..size`, in increasing order.
pub fn cut_points<S: Source + ?Sized>(
    src: &S,
    body: u64,
    size: u64,
    parts: usize,
    min_part: u64,
) -> Vec<u64> {
    let span = size.saturating_sub(body);
    let parts = (parts as u64).min(span / min_part.max(1));
    let mut starts: Vec<u64> = Vec::new();
    let mut buf = vec![0u8; LINE_SEARCH];
    for k in 1..parts {
        let target = body + span / parts * k;
        let Ok(n) = src.read_at(&mut buf, target) else {
            break;
        };
        let Some(i) = buf[..n].iter().position(|&b| b == b'\n') else {
            continue;
        };
        let start = target + i as u64 + 1;
        if start < size && starts.last().is_none_or(|&last| start > last) {
            starts.push(start);
        }
    }
    starts
}

/// How many parts to read a large report in: one per core.
pub fn default_parts() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(MAX_PARTS)
}

const MAX_PARTS: usize = 8;

/// Parts smaller than this are not worth a thread.
pub const MIN_PART: u64 = 8 << 20;

impl ReportError {
    /// The same error `lines` lines further down (for a part read from the middle of a file).
    fn lines_shifted(self, lines: u64) -> ReportError {
        let shift = |line: u32| relocated_line(line, lines);
        match self {
            ReportError::Invalid {
                path,
                line,
                column,
                message,
            } => ReportError::Invalid {
                path,
                line: shift(line),
                column,
                message,
            },
            ReportError::NotUtf8 { path, line } => ReportError::NotUtf8 {
                path,
                line: shift(line),
            },
            other => other,
        }
    }
}

/// A line number counted from a part's start, counted from the file's (`lines` line ends
/// before the part). A saturated number stays saturated.
pub fn relocated_line(line: u32, lines: u64) -> u32 {
    if line == u32::MAX {
        line
    } else {
        line_u32(u64::from(line) + lines)
    }
}

/// A name id from a part's own interner, in the whole file's (`ids`, by the part's id).
pub fn relocated_name(name: NameId, ids: &[NameId]) -> NameId {
    ids[name.0 as usize]
}

/// [`read_in_parts`] with the parts starting at `cuts` (those past the header), for tests
/// that try every cut.
#[cfg(test)]
pub fn read_with_cuts<T>(
    data: &[u8],
    label: &Path,
    interner: &mut Interner,
    (limits, options): (ReadLimits, ReadOptions),
    cuts: &[u64],
) -> Result<Vec<T::Row>, ReportError>
where
    T: Report + Sync,
    T::Row: Send,
{
    read_with_starts::<T, _>(data, label, interner, (limits, options), |body| {
        let mut starts: Vec<u64> = cuts.iter().copied().filter(|&c| c > body).collect();
        starts.sort_unstable();
        starts.dedup();
        starts
    })
}
