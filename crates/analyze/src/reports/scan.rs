//! Splitting one record of nsys's CSV into fields.
//!
//! nsys wraps a value in double quotes only when it holds a comma, does not double the quotes
//! inside it, and writes newlines raw. So a field has no single end: a name such as
//! `a",1,2` or `x"\ny` leaves several places where it could stop. This module enumerates the
//! possible ends of each field, in order, and backtracks:
//!
//! * a column that can never hold a comma ([`ColType`] other than `Text`: numbers, `Style`,
//!   `RangeStack`) ends at the first `,` (or, as the last column, at the end of the line);
//! * a `Text` column read unquoted holds no comma, so it ends at the first `,`; as the last
//!   column it ends at one of the line ends before the next `,` (it may hold newlines);
//! * a `Text` column starting with `"` may also be quoted: it then ends at a `"` followed by
//!   `,` (or by a line end / the end of the file, as the last column), and what lies
//!   between the quotes must hold a comma (else nsys would not have quoted it).
//!
//! Candidates are tried shortest first. A complete split must pass the per-column checks
//! (numbers parse), the report's own cross-column checks ([`Schema::check`]: `NameTree`
//! repeats `Name`, `RangeStack` ends with `RangeId`, ...), and the record after it must
//! split too (one record of look-ahead, whose result is kept for the next call). The first
//! split that passes wins. On a valid file that is almost always the first candidate, so
//! each record is scanned about once. The number of candidates per record is capped.
//!
//! When nothing passes, the error reported is the one of the most plausible attempt: a
//! failing look-ahead (this record parsed, the next did not) beats a failing cross-column
//! check, which beats a field that does not parse; ties go to the failure furthest into the
//! data, then to the first found.

use super::RangeStyle;

/// How many field candidates one record, with its look-aheads, may try by default. A
/// valid record takes one or two; each `",` inside a quoted name adds a couple.
pub const CANDIDATE_BUDGET: u32 = 1 << 20;

/// What a column holds, as far as splitting and checking a single field go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColType {
    /// An unsigned integer, required.
    Unsigned,
    /// An unsigned integer, or nothing (empty or `None`, which nsys 2022.4 writes for NULL).
    OptUnsigned,
    /// An integer (of either sign) or nothing; its value is not used.
    Lenient,
    /// A decimal number such as `64166.7` (nsys's means, medians and standard deviations),
    /// or nothing.
    Decimal,
    /// `PushPop`, `StartEnd`, or nothing.
    Style,
    /// Range ids such as `:1:2:3`, or nothing.
    RangeStack,
    /// Free text: may hold commas (then quoted), quotes and newlines. Unknown columns are
    /// read as text too, so that a new text column of a later nsys cannot break splitting.
    Text,
}

/// A field as checked on its own.
///
/// A tag and a number rather than an enum with payloads: this shape is returned in two
/// registers, which matters at 14 fields a row.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Cell {
    tag: Tag,
    value: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
enum Tag {
    /// Empty or `None`.
    #[default]
    Empty,
    Num,
    PushPop,
    StartEnd,
    /// A decimal number: `value` holds its `f64` bits.
    Float,
    /// Anything else that passed its check (text, a lenient number, a range stack).
    Other,
}

impl Cell {
    pub const EMPTY: Cell = Cell {
        tag: Tag::Empty,
        value: 0,
    };
    pub const OTHER: Cell = Cell {
        tag: Tag::Other,
        value: 0,
    };

    pub fn num(value: u64) -> Cell {
        Cell {
            tag: Tag::Num,
            value,
        }
    }

    pub fn style(style: RangeStyle) -> Cell {
        let tag = match style {
            RangeStyle::PushPop => Tag::PushPop,
            RangeStyle::StartEnd => Tag::StartEnd,
        };
        Cell { tag, value: 0 }
    }

    pub fn float(value: f64) -> Cell {
        Cell {
            tag: Tag::Float,
            value: value.to_bits(),
        }
    }

    /// A decimal number; a plain integer is one too.
    pub fn as_float(self) -> Option<f64> {
        match self.tag {
            Tag::Float => Some(f64::from_bits(self.value)),
            Tag::Num => Some(self.value as f64),
            _ => None,
        }
    }

    pub fn as_num(self) -> Option<u64> {
        (self.tag == Tag::Num).then_some(self.value)
    }

    pub fn as_style(self) -> Option<RangeStyle> {
        match self.tag {
            Tag::PushPop => Some(RangeStyle::PushPop),
            Tag::StartEnd => Some(RangeStyle::StartEnd),
            _ => None,
        }
    }

    pub fn is_empty(self) -> bool {
        self.tag == Tag::Empty
    }
}

/// A field's value (quotes excluded), as byte offsets into the record's data.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

impl Span {
    pub fn of<'a>(&self, data: &'a [u8]) -> &'a [u8] {
        data.get(self.start..self.end).unwrap_or(&[])
    }
}

/// Why a record could not be split.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SplitFailure {
    /// Offset of the failing record's first byte in the data given to `next_record`.
    pub rec_start: usize,
    /// How far the attempt got: 0 a field failed, 1 a cross-column check failed, 2 the
    /// record was fine but the next one failed.
    stage: u8,
    /// Where it failed (offset in the data given to `next_record`).
    pos: usize,
    /// The column (index in the header) it is about, when one.
    pub col: Option<usize>,
    pub message: String,
    /// The candidate budget ran out: stop searching, whatever is left to try.
    fatal: bool,
}

impl SplitFailure {
    fn key(&self) -> (u8, usize) {
        (self.stage, self.pos)
    }

    fn shifted(mut self, by: usize) -> SplitFailure {
        self.rec_start += by;
        self.pos += by;
        self
    }
}

/// A report: the type of each header column, and the checks and conversion of a split row.
pub trait Schema {
    /// A split and checked row, with the name still as a span of the record.
    type Pending: Copy;

    fn types(&self) -> &[ColType];

    /// Cross-column checks on a complete split of the record `data[..]` (spans and cells
    /// are indexed by column); on failure, the column it is about and a message.
    fn check(
        &self,
        data: &[u8],
        spans: &[Span],
        cells: &[Cell],
    ) -> Result<Self::Pending, (Option<usize>, String)>;
}

pub enum Split<P> {
    /// The record at the start of the data, `len` bytes long (its line end included).
    Record {
        pending: P,
        len: usize,
    },
    /// The data ends before the record (or its look-ahead) could be decided.
    NeedMore,
    Fail(SplitFailure),
}

enum Lookahead<P> {
    EndOfFile,
    Record(P, usize),
    NeedMore,
    Fail(SplitFailure),
}

#[derive(Default)]
struct Workspace {
    spans: Vec<Span>,
    cells: Vec<Cell>,
    iters: Vec<Candidates>,
}

pub struct Splitter<'s, S: Schema> {
    schema: &'s S,
    /// The header's line end was `\r\n`: try a last field without its `\r` first.
    prefer_crlf: bool,
    /// 0: the record being read, 1: its look-ahead.
    workspaces: [Workspace; 2],
    /// The split of the record after the last one returned, found by its look-ahead.
    cache: Option<(S::Pending, usize)>,
    /// Candidates left for the current call of `next_record`, look-aheads included.
    budget: u32,
    max_budget: u32,
}

impl<'s, S: Schema> Splitter<'s, S> {
    pub fn new(schema: &'s S, prefer_crlf: bool, max_budget: u32) -> Self {
        let n = schema.types().len();
        let ws = || Workspace {
            spans: vec![Span::default(); n],
            cells: vec![Cell::default(); n],
            iters: vec![Candidates::default(); n],
        };
        Splitter {
            schema,
            prefer_crlf,
            workspaces: [ws(), ws()],
            cache: None,
            budget: max_budget,
            max_budget,
        }
    }

    /// Splits the record at the start of `data` (`eof`: nothing follows `data`).
    ///
    /// After `Record { len }`, the next call must get the data from `len` on (the split of
    /// that record is kept from this call's look-ahead).
    pub fn next_record(&mut self, data: &[u8], eof: bool) -> Split<S::Pending> {
        self.budget = self.max_budget;
        if let Some((pending, len)) = self.cache.take() {
            if let Some(rest) = data.get(len..) {
                match self.lookahead(rest, eof) {
                    Lookahead::EndOfFile => return Split::Record { pending, len },
                    Lookahead::Record(next, next_len) => {
                        self.cache = Some((next, next_len));
                        return Split::Record { pending, len };
                    }
                    Lookahead::NeedMore => {
                        self.cache = Some((pending, len));
                        return Split::NeedMore;
                    }
                    Lookahead::Fail(f) if f.fatal => return Split::Fail(f.shifted(len)),
                    // Its first split is not the one: search it again, in full.
                    Lookahead::Fail(_) => {}
                }
            }
        }
        self.split(data, eof, true)
    }

    fn lookahead(&mut self, rest: &[u8], eof: bool) -> Lookahead<S::Pending> {
        if rest.iter().all(|&b| b == b'\n' || b == b'\r') {
            return if eof {
                Lookahead::EndOfFile
            } else {
                Lookahead::NeedMore
            };
        }
        match self.split(rest, eof, false) {
            Split::Record { pending, len } => Lookahead::Record(pending, len),
            Split::NeedMore => Lookahead::NeedMore,
            Split::Fail(f) => Lookahead::Fail(f),
        }
    }

    fn split(&mut self, data: &[u8], eof: bool, with_lookahead: bool) -> Split<S::Pending> {
        let slot = usize::from(!with_lookahead);
        let mut ws = std::mem::take(&mut self.workspaces[slot]);
        let outcome = match self.first_reading(&mut ws, data, eof, with_lookahead) {
            Some(outcome) => outcome,
            None => self.search(&mut ws, data, eof, with_lookahead),
        };
        self.workspaces[slot] = ws;
        outcome
    }

    /// The fast path: the shortest reading of the record (each field up to its first
    /// delimiter), when no text field starts with a quote, with numbers parsed eight bytes
    /// at a time. That reading is `search`'s first candidate, checked the same way (and
    /// with the same look-ahead), so taking it when it passes changes nothing but speed;
    /// `None` leaves the record to `search`, which also gives the errors and asks for
    /// more data.
    fn first_reading(
        &mut self,
        ws: &mut Workspace,
        data: &[u8],
        eof: bool,
        with_lookahead: bool,
    ) -> Option<Split<S::Pending>> {
        let schema = self.schema;
        let types = schema.types();
        let n = types.len();
        if n == 0 || ws.spans.len() < n || ws.cells.len() < n {
            return None;
        }
        let len = data.len();
        let mut start = 0;
        let mut pos = 0;
        for (col, &ty) in types.iter().enumerate() {
            let last = col + 1 == n;
            let rest = data.get(start..)?;
            // `at`: the delimiter ending the field (`len` at the end of the file).
            let (at, c) = match ty {
                ColType::Text => {
                    if rest.first() == Some(&b'"') {
                        return None;
                    }
                    if !last {
                        (start + memchr(b',', rest)?, Cell::OTHER)
                    } else {
                        match memchr2(b'\n', b',', rest) {
                            Some(i) if rest[i] == b'\n' => (start + i, Cell::OTHER),
                            None if eof => (len, Cell::OTHER),
                            _ => return None,
                        }
                    }
                }
                ColType::Unsigned | ColType::OptUnsigned => match leading_number(rest) {
                    Some((v, i)) if matches!(rest.get(i), Some(b',' | b'\n' | b'\r')) => {
                        (start + i, Cell::num(v))
                    }
                    _ => {
                        let i = plain_end(rest);
                        (start + i, cell(ty, &rest[..i])?)
                    }
                },
                _ => {
                    let i = plain_end(rest);
                    let value = &rest[..i];
                    let c = if ty == ColType::RangeStack && is_range_stack(value) {
                        Cell::OTHER
                    } else {
                        cell(ty, value)?
                    };
                    (start + i, c)
                }
            };
            // The field's end, and where what follows it starts.
            let (end, next) = match data.get(at) {
                Some(b',') if !last => (at, at + 1),
                Some(b'\n') if last => {
                    if ty == ColType::Text && !self.prefer_crlf {
                        (at, at + 1)
                    } else {
                        (strip_cr(data, start, at), at + 1)
                    }
                }
                None if last && eof => (len, len),
                _ => return None,
            };
            if end != at && ty != ColType::Text {
                // A `\r` was cut from a number: check what is left.
                ws.cells[col] = cell(ty, &data[start..end])?;
            } else {
                ws.cells[col] = c;
            }
            ws.spans[col] = Span { start, end };
            start = next;
            pos = next;
        }
        let record = data.get(..pos)?;
        let pending = schema.check(record, &ws.spans[..n], &ws.cells[..n]).ok()?;
        if !with_lookahead {
            return Some(Split::Record { pending, len: pos });
        }
        match self.lookahead(&data[pos..], eof) {
            Lookahead::EndOfFile => {
                self.cache = None;
                Some(Split::Record { pending, len: pos })
            }
            Lookahead::Record(p, next_len) => {
                self.cache = Some((p, next_len));
                Some(Split::Record { pending, len: pos })
            }
            Lookahead::NeedMore => Some(Split::NeedMore),
            Lookahead::Fail(f) if f.fatal => Some(Split::Fail(f.shifted(pos))),
            Lookahead::Fail(_) => None,
        }
    }

    // The scanner's hot loop over split candidates: one function keeps its state in registers.
    #[allow(clippy::too_many_lines)]
    fn search(
        &mut self,
        ws: &mut Workspace,
        data: &[u8],
        eof: bool,
        with_lookahead: bool,
    ) -> Split<S::Pending> {
        let schema = self.schema;
        let types = schema.types();
        let n = types.len();
        if n == 0 || ws.iters.len() < n || ws.spans.len() < n || ws.cells.len() < n {
            return Split::Fail(SplitFailure {
                rec_start: 0,
                stage: 0,
                pos: 0,
                col: None,
                message: "the header has no columns".to_string(),
                fatal: false,
            });
        }
        let mut best: Option<SplitFailure> = None;
        let mut col = 0;
        ws.iters[0] = Candidates::at(0);
        loop {
            let ty = types[col];
            let last = col + 1 == n;
            match ws.iters[col].next(data, eof, ty == ColType::Text, last, self.prefer_crlf) {
                Step::NeedMore => return Split::NeedMore,
                Step::Exhausted => {
                    if col == 0 {
                        let failure = best.unwrap_or_else(|| SplitFailure {
                            rec_start: 0,
                            stage: 0,
                            pos: 0,
                            col: None,
                            message: format!(
                                "record cannot be split into the header's {n} columns"
                            ),
                            fatal: false,
                        });
                        return Split::Fail(failure);
                    }
                    col -= 1;
                }
                Step::Broken(span, why) => {
                    let value = span.of(data);
                    let failure = match check_cell(ty, value) {
                        Err(message) => SplitFailure {
                            rec_start: 0,
                            stage: 0,
                            pos: span.start,
                            col: Some(col),
                            message,
                            fatal: false,
                        },
                        Ok(_) => SplitFailure {
                            rec_start: 0,
                            stage: 0,
                            pos: span.end,
                            col: Some(col),
                            message: match why {
                                Broken::RecordEnds => format!(
                                    "the record ends after this column (column {} of {n})",
                                    col + 1
                                ),
                                Broken::ExtraColumns => format!(
                                    "more columns than the header's {n} after this last column"
                                ),
                            },
                            fatal: false,
                        },
                    };
                    keep(&mut best, failure);
                }
                Step::Found(span, next) => {
                    self.budget = self.budget.saturating_sub(1);
                    if self.budget == 0 {
                        return Split::Fail(SplitFailure {
                            rec_start: 0,
                            stage: 0,
                            pos: span.start,
                            col: Some(col),
                            message: format!(
                                "record cannot be split: more than {} ways to read it were tried",
                                self.max_budget
                            ),
                            fatal: true,
                        });
                    }
                    let checked = match cell(ty, span.of(data)) {
                        Some(c) => Ok(c),
                        None => check_cell(ty, span.of(data)),
                    };
                    match checked {
                        Err(message) => keep(
                            &mut best,
                            SplitFailure {
                                rec_start: 0,
                                stage: 0,
                                pos: span.start,
                                col: Some(col),
                                message,
                                fatal: false,
                            },
                        ),
                        Ok(cell) => {
                            ws.cells[col] = cell;
                            ws.spans[col] = span;
                            if !last {
                                col += 1;
                                ws.iters[col] = Candidates::at(next);
                                continue;
                            }
                            let record = data.get(..next).unwrap_or(data);
                            match schema.check(record, &ws.spans[..n], &ws.cells[..n]) {
                                Err((col, message)) => keep(
                                    &mut best,
                                    SplitFailure {
                                        rec_start: 0,
                                        stage: 1,
                                        pos: next,
                                        col,
                                        message,
                                        fatal: false,
                                    },
                                ),
                                Ok(pending) if !with_lookahead => {
                                    return Split::Record { pending, len: next }
                                }
                                Ok(pending) => match self.lookahead(&data[next..], eof) {
                                    Lookahead::EndOfFile => {
                                        self.cache = None;
                                        return Split::Record { pending, len: next };
                                    }
                                    Lookahead::Record(p, len) => {
                                        self.cache = Some((p, len));
                                        return Split::Record { pending, len: next };
                                    }
                                    Lookahead::NeedMore => return Split::NeedMore,
                                    Lookahead::Fail(f) if f.fatal => {
                                        return Split::Fail(f.shifted(next))
                                    }
                                    Lookahead::Fail(f) => {
                                        let mut f = f.shifted(next);
                                        f.stage = 2;
                                        keep(&mut best, f);
                                    }
                                },
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The first `needle` in `haystack`. Plain loops: fields are short, and this keeps the
/// module on std alone.
#[inline]
pub fn memchr(needle: u8, haystack: &[u8]) -> Option<usize> {
    haystack.iter().position(|&b| b == needle)
}

/// The first `a` or `b` in `haystack`.
#[inline]
fn memchr2(a: u8, b: u8, haystack: &[u8]) -> Option<usize> {
    haystack.iter().position(|&x| x == a || x == b)
}

/// Keeps the more plausible of two failures (the first one on a tie).
fn keep(best: &mut Option<SplitFailure>, f: SplitFailure) {
    if best.as_ref().is_none_or(|b| f.key() > b.key()) {
        *best = Some(f);
    }
}

enum Broken {
    /// A column that cannot hold a line end met one (or the file ended) before the next `,`.
    RecordEnds,
    /// The last column is followed by a `,`.
    ExtraColumns,
}

enum Step {
    /// A possible value and where the next field (or record) starts.
    Found(Span, usize),
    /// The field cannot end here; reported only if nothing better is found.
    Broken(Span, Broken),
    Exhausted,
    NeedMore,
}

#[derive(Clone, Copy, Default, PartialEq, Eq)]
enum Phase {
    #[default]
    Unquoted,
    Quoted,
    Done,
}

/// The possible ends of one field, produced in order.
#[derive(Clone, Copy, Default)]
struct Candidates {
    start: usize,
    phase: Phase,
    /// Where to resume scanning (0: not started).
    cursor: usize,
    /// A second reading of the same line end (with or without its `\r`), still to give.
    pending: Option<(Span, usize)>,
}

impl Candidates {
    fn at(start: usize) -> Self {
        Candidates {
            start,
            ..Candidates::default()
        }
    }

    // The per-byte hot loop of field splitting: splitting it costs speed on every row.
    #[allow(clippy::too_many_lines)]
    fn next(&mut self, d: &[u8], eof: bool, text: bool, last: bool, prefer_crlf: bool) -> Step {
        let start = self.start;
        let len = d.len();
        if start > len {
            return Step::Exhausted;
        }
        loop {
            match self.phase {
                Phase::Done => return Step::Exhausted,
                Phase::Unquoted => {
                    let can_quote = text && d.get(start) == Some(&b'"');
                    let after = if can_quote {
                        Phase::Quoted
                    } else {
                        Phase::Done
                    };
                    if !text {
                        // Numbers and ids: no comma, no line end inside.
                        self.phase = after;
                        return match memchr2(b',', b'\n', &d[start..]) {
                            Some(i) => {
                                let at = start + i;
                                let value = Span {
                                    start,
                                    end: strip_cr(d, start, at),
                                };
                                match (d[at] == b',', last) {
                                    (true, false) => Step::Found(Span { start, end: at }, at + 1),
                                    (true, true) => {
                                        Step::Broken(Span { start, end: at }, Broken::ExtraColumns)
                                    }
                                    (false, true) => Step::Found(value, at + 1),
                                    (false, false) => Step::Broken(value, Broken::RecordEnds),
                                }
                            }
                            None if !eof => Step::NeedMore,
                            None if last => Step::Found(Span { start, end: len }, len),
                            None => Step::Broken(Span { start, end: len }, Broken::RecordEnds),
                        };
                    }
                    if !last {
                        // Unquoted text holds no comma: it ends at the first one.
                        self.phase = after;
                        return match memchr(b',', &d[start..]) {
                            Some(i) => Step::Found(
                                Span {
                                    start,
                                    end: start + i,
                                },
                                start + i + 1,
                            ),
                            None if !eof => Step::NeedMore,
                            None => Step::Broken(Span { start, end: len }, Broken::RecordEnds),
                        };
                    }
                    // Last column, unquoted: any line end before the next comma.
                    if let Some((span, next)) = self.pending.take() {
                        return Step::Found(span, next);
                    }
                    let from = if self.cursor == 0 { start } else { self.cursor };
                    match memchr2(b'\n', b',', &d[from..]) {
                        Some(i) if d[from + i] == b'\n' => {
                            let at = from + i;
                            self.cursor = at + 1;
                            let without_cr = Span {
                                start,
                                end: strip_cr(d, start, at),
                            };
                            let with_cr = Span { start, end: at };
                            if without_cr == with_cr {
                                return Step::Found(with_cr, at + 1);
                            }
                            let (first, second) = if prefer_crlf {
                                (without_cr, with_cr)
                            } else {
                                (with_cr, without_cr)
                            };
                            self.pending = Some((second, at + 1));
                            return Step::Found(first, at + 1);
                        }
                        Some(i) => {
                            self.phase = after;
                            if from == start {
                                // Not a single line end before the comma.
                                return Step::Broken(
                                    Span {
                                        start,
                                        end: from + i,
                                    },
                                    Broken::ExtraColumns,
                                );
                            }
                        }
                        None if !eof => return Step::NeedMore,
                        None => {
                            // The file ends without a line end: the value runs to the end.
                            self.phase = after;
                            return Step::Found(Span { start, end: len }, len);
                        }
                    }
                }
                Phase::Quoted => {
                    if self.cursor <= start {
                        // The content must hold a comma: closing quotes start after the first.
                        match memchr(b',', d.get(start + 1..).unwrap_or(&[])) {
                            Some(i) => self.cursor = start + 1 + i + 1,
                            None if !eof => return Step::NeedMore,
                            None => {
                                self.phase = Phase::Done;
                                continue;
                            }
                        }
                    }
                    let Some(i) = memchr(b'"', d.get(self.cursor..).unwrap_or(&[])) else {
                        if !eof {
                            return Step::NeedMore;
                        }
                        self.phase = Phase::Done;
                        continue;
                    };
                    let j = self.cursor + i;
                    self.cursor = j + 1;
                    let value = Span {
                        start: start + 1,
                        end: j,
                    };
                    match (d.get(j + 1), d.get(j + 2)) {
                        (None, _) if !eof => return Step::NeedMore,
                        (None, _) if last => return Step::Found(value, j + 1),
                        (Some(b','), _) if !last => return Step::Found(value, j + 2),
                        (Some(b'\n'), _) if last => return Step::Found(value, j + 2),
                        (Some(b'\r'), None) if last && !eof => return Step::NeedMore,
                        (Some(b'\r'), Some(b'\n')) if last => return Step::Found(value, j + 3),
                        _ => {}
                    }
                }
            }
        }
    }
}

/// Where a field that holds no comma and no line end ends: its first `,` or `\n`.
#[inline]
fn plain_end(rest: &[u8]) -> usize {
    rest.iter()
        .position(|&b| b == b',' || b == b'\n')
        .unwrap_or(rest.len())
}

/// The digits at the start of `rest` (1 to 19 of them) as a number, and where they end;
/// eight bytes at a time. `None` when there are none, more than 19, or fewer than eight
/// bytes are left to read them in whole words (near the end of the data).
#[inline]
fn leading_number(rest: &[u8]) -> Option<(u64, usize)> {
    const POW10: [u64; 8] = [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000];
    let mut n: u64 = 0;
    let mut digits = 0;
    loop {
        let chunk = rest.get(digits..digits + 8)?;
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let x = u64::from_le_bytes(word);
        // A byte of `odd` is non-zero iff that byte is not a digit (exact up to the first
        // non-digit: a carry out of `x + 6` comes only from a non-digit byte, and goes up).
        let high = x & 0xf0f0_f0f0_f0f0_f0f0;
        let high_plus_6 = x.wrapping_add(0x0606_0606_0606_0606) & 0xf0f0_f0f0_f0f0_f0f0;
        let odd = (high ^ 0x3030_3030_3030_3030) | ((high_plus_6 >> 4) ^ 0x0303_0303_0303_0303);
        const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
        let nonzero = ((odd & LOW7).wrapping_add(LOW7) | odd) & !LOW7;
        let count = if nonzero == 0 {
            8
        } else {
            (nonzero.trailing_zeros() / 8) as usize
        };
        if digits + count > 19 {
            return None;
        }
        if count > 0 {
            // Shift the digits to the top and fill the bottom with '0's: the same value.
            let shift = 8 * (8 - count) as u32;
            let fill = 0x3030_3030_3030_3030u64
                .checked_shr(8 * count as u32)
                .unwrap_or(0);
            let padded = x.checked_shl(shift).unwrap_or(0) | fill;
            let value = eight_digits(padded);
            n = if count == 8 {
                n.checked_mul(100_000_000)?.checked_add(value)?
            } else {
                n.checked_mul(POW10[count])?.checked_add(value)?
            };
            digits += count;
        }
        if count < 8 {
            return (digits > 0).then_some((n, digits));
        }
    }
}

/// Eight ASCII digits in a little-endian word (the first digit in the lowest byte).
#[inline]
fn eight_digits(x: u64) -> u64 {
    let mut y = x - 0x3030_3030_3030_3030;
    y = (y.wrapping_mul(10) + (y >> 8)) & 0x00ff_00ff_00ff_00ff;
    y = (y.wrapping_mul(100) + (y >> 16)) & 0x0000_ffff_0000_ffff;
    (y.wrapping_mul(10_000) + (y >> 32)) & 0xffff_ffff
}

/// Plain digits (at most 19: no overflow) as a number; eight at a time where it can.
#[inline]
pub fn digits_u64(v: &[u8]) -> Option<u64> {
    if v.is_empty() || v.len() > 19 {
        return None;
    }
    let mut n: u64 = 0;
    let mut rest = v;
    while let Some(chunk) = rest.get(..8) {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let x = u64::from_le_bytes(word);
        // Every byte 0x30..=0x39 (a byte that carries is not a digit and fails on its own).
        let high = x & 0xf0f0_f0f0_f0f0_f0f0;
        let high_plus_6 = x.wrapping_add(0x0606_0606_0606_0606) & 0xf0f0_f0f0_f0f0_f0f0;
        if high | (high_plus_6 >> 4) != 0x3333_3333_3333_3333 {
            return None;
        }
        n = n * 100_000_000 + eight_digits(x);
        rest = &rest[8..];
    }
    for &b in rest {
        let digit = b.wrapping_sub(b'0');
        if digit > 9 {
            return None;
        }
        n = n * 10 + u64::from(digit);
    }
    Some(n)
}

/// End of a value that stops at the line end at `at`, without the `\r` of a `\r\n`.
fn strip_cr(d: &[u8], start: usize, at: usize) -> usize {
    if at > start && d[at - 1] == b'\r' {
        at - 1
    } else {
        at
    }
}

/// Checks one field on its own: the fast path, without a message.
#[inline]
pub fn cell(ty: ColType, v: &[u8]) -> Option<Cell> {
    let null = v.is_empty() || v == b"None";
    match ty {
        ColType::Text => Some(Cell::OTHER),
        ColType::Unsigned => parse_u64(v).map(Cell::num),
        ColType::OptUnsigned if null => Some(Cell::EMPTY),
        ColType::OptUnsigned => parse_u64(v).map(Cell::num),
        ColType::Lenient if null => Some(Cell::EMPTY),
        ColType::Lenient => {
            let digits = v.strip_prefix(b"-").unwrap_or(v);
            (!digits.is_empty() && digits.iter().all(u8::is_ascii_digit)).then_some(Cell::OTHER)
        }
        ColType::Decimal if null => Some(Cell::EMPTY),
        ColType::Decimal => parse_decimal(v).map(Cell::float),
        ColType::Style => match v {
            b"PushPop" => Some(Cell::style(RangeStyle::PushPop)),
            b"StartEnd" => Some(Cell::style(RangeStyle::StartEnd)),
            _ => null.then_some(Cell::EMPTY),
        },
        ColType::RangeStack if null => Some(Cell::EMPTY),
        ColType::RangeStack => is_range_stack(v).then_some(Cell::OTHER),
    }
}

/// A finite decimal number as nsys writes one (`64166.7`, `0.0`, `1.5e+06`, `-3`): digits, one
/// point, an exponent; nothing else (no spaces, no `inf`, no `nan`).
#[inline]
fn parse_decimal(v: &[u8]) -> Option<f64> {
    if !v
        .iter()
        .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'))
        || !v.iter().any(u8::is_ascii_digit)
    {
        return None;
    }
    std::str::from_utf8(v)
        .ok()?
        .parse::<f64>()
        .ok()
        .filter(|x| x.is_finite())
}

/// `:1:2:3`: ids of digits, each after a colon.
#[inline]
fn is_range_stack(v: &[u8]) -> bool {
    if v.first() != Some(&b':') || v.last() == Some(&b':') {
        return false;
    }
    let mut prev_colon = false;
    for &b in v {
        if b == b':' {
            if prev_colon {
                return false;
            }
            prev_colon = true;
        } else if b.is_ascii_digit() {
            prev_colon = false;
        } else {
            return false;
        }
    }
    true
}

/// Checks one field on its own, saying what is wrong.
pub fn check_cell(ty: ColType, v: &[u8]) -> Result<Cell, String> {
    if let Some(c) = cell(ty, v) {
        return Ok(c);
    }
    Err(match ty {
        ColType::Unsigned | ColType::OptUnsigned => match parse_unsigned(v) {
            Err(message) => message,
            Ok(_) => format!("expected an unsigned integer, found {}", quote(v)),
        },
        ColType::Lenient => format!("expected an integer or nothing, found {}", quote(v)),
        ColType::Decimal => format!("expected a number or nothing, found {}", quote(v)),
        ColType::Style => format!("expected `PushPop` or `StartEnd`, found {}", quote(v)),
        ColType::RangeStack => format!("expected range ids such as `:1:2`, found {}", quote(v)),
        ColType::Text => "unexpected text".to_string(),
    })
}

/// An unsigned integer. SQLite's `total()` makes nsys's `DurChild` a REAL, so a fraction of
/// zeros (`12.0`) is accepted too; anything else that is not plain digits is not a number.
#[inline]
pub fn parse_u64(v: &[u8]) -> Option<u64> {
    let mut value: u64 = 0;
    let mut i = 0;
    while i < v.len() && v[i].is_ascii_digit() {
        value = value.checked_mul(10)?.checked_add(u64::from(v[i] - b'0'))?;
        i += 1;
    }
    if i == v.len() {
        return (i > 0).then_some(value);
    }
    match &v[i..] {
        [b'.', zeros @ ..] if i > 0 && !zeros.is_empty() && zeros.iter().all(|&b| b == b'0') => {
            Some(value)
        }
        _ => None,
    }
}

/// [`parse_u64`], saying what is wrong.
pub fn parse_unsigned(v: &[u8]) -> Result<u64, String> {
    if let Some(value) = parse_u64(v) {
        return Ok(value);
    }
    let digits = v.iter().take_while(|b| b.is_ascii_digit()).count();
    let too_large = digits > 0
        && match &v[digits..] {
            [] => true,
            [b'.', zeros @ ..] => !zeros.is_empty() && zeros.iter().all(|&b| b == b'0'),
            _ => false,
        };
    Err(if too_large {
        format!(
            "expected an unsigned integer, found {} (too large)",
            quote(v)
        )
    } else {
        format!("expected an unsigned integer, found {}", quote(v))
    })
}

/// A value for a message: quoted, escaped, and cut to a readable length.
pub fn quote(v: &[u8]) -> String {
    const MAX: usize = 60;
    let text = String::from_utf8_lossy(v);
    let mut shown: String = text.chars().take(MAX).collect();
    if text.chars().nth(MAX).is_some() {
        shown.push('…');
    }
    format!("{shown:?}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers() {
        assert_eq!(parse_unsigned(b"0"), Ok(0));
        assert_eq!(parse_unsigned(b"18446744073709551615"), Ok(u64::MAX));
        assert_eq!(parse_unsigned(b"12.000"), Ok(12));
        assert!(parse_unsigned(b"18446744073709551616")
            .unwrap_err()
            .contains("too large"));
        for bad in [
            &b""[..],
            b"-1",
            b"1.5",
            b"12.",
            b"+1",
            b" 1",
            b"abc",
            b"1e3",
        ] {
            assert_eq!(
                parse_unsigned(bad),
                Err(format!(
                    "expected an unsigned integer, found {}",
                    quote(bad)
                ))
            );
        }
        assert_eq!(
            parse_unsigned(b"abc").unwrap_err(),
            "expected an unsigned integer, found \"abc\""
        );
    }

    #[test]
    fn eight_digits_at_a_time() {
        for v in [
            "0",
            "12345678",
            "123456789",
            "1234567890123456789",
            "00000000",
            "99999999",
            "9999999999999999999",
            "10000000",
            "01234567",
        ] {
            assert_eq!(digits_u64(v.as_bytes()), v.parse::<u64>().ok(), "{v}");
        }
        for bad in [
            "",
            "1234567/",
            "1234567:",
            "/2345678",
            ":2345678",
            "12345678x",
            "1234\u{ff}678",
            "12345678901234567890",
            "1234 678",
            "\u{fa}\u{fa}",
            "123456\u{fa}8",
        ] {
            assert_eq!(digits_u64(bad.as_bytes()), None, "{bad:?}");
        }
        // Every byte value in every position of an otherwise valid number.
        for pos in 0..10 {
            for b in 0..=255u8 {
                let mut v = *b"1234567890";
                v[pos] = b;
                let want = std::str::from_utf8(&v).ok().and_then(|s| {
                    s.bytes()
                        .all(|c| c.is_ascii_digit())
                        .then(|| s.parse::<u64>().ok())
                        .flatten()
                });
                assert_eq!(digits_u64(&v), want, "{v:?}");
            }
        }
    }

    #[test]
    fn leading_numbers() {
        let cases: &[(&str, Option<(u64, usize)>)] = &[
            ("1234567,xxxxxxxx", Some((1234567, 7))),
            ("12345678,xxxxxxx", Some((12345678, 8))),
            ("123456789\nxxxxxxxxxxxxxx", Some((123456789, 9))),
            (",xxxxxxx", None),
            ("0,xxxxxxx", Some((0, 1))),
            ("1234", None),
            (
                "1234567890123456789,xxxxxxxxxxxx",
                Some((1234567890123456789, 19)),
            ),
            ("12345678901234567890,xxxxxxxxxxx", None),
            ("18446744073709551615,xxxxxxxxxxx", None),
            (
                "9999999999999999999.xxxxxxxxxxxxx",
                Some((9999999999999999999, 19)),
            ),
            ("00000000000000000001,xxxxxxxx", None),
        ];
        for (input, want) in cases {
            assert_eq!(leading_number(input.as_bytes()), *want, "{input:?}");
        }
        // Every byte value at every position of a number followed by filler.
        for pos in 0..12 {
            for b in 0..=255u8 {
                let mut v = *b"123456789012,abcdefgh";
                v[pos] = b;
                let digits = v.iter().take_while(|c| c.is_ascii_digit()).count();
                let want = (digits > 0).then(|| {
                    let s = std::str::from_utf8(&v[..digits]).unwrap();
                    (s.parse::<u64>().unwrap(), digits)
                });
                assert_eq!(leading_number(&v), want, "{v:?}");
            }
        }
    }

    #[test]
    fn cells() {
        assert_eq!(check_cell(ColType::OptUnsigned, b"None"), Ok(Cell::EMPTY));
        assert_eq!(check_cell(ColType::OptUnsigned, b""), Ok(Cell::EMPTY));
        assert_eq!(check_cell(ColType::Lenient, b"-3"), Ok(Cell::OTHER));
        assert!(check_cell(ColType::Lenient, b"x").is_err());
        assert_eq!(
            check_cell(ColType::Decimal, b"64166.7").map(Cell::as_float),
            Ok(Some(64166.7))
        );
        assert_eq!(check_cell(ColType::Decimal, b"None"), Ok(Cell::EMPTY));
        for bad in [&b"1,5"[..], b"nan", b"inf", b" 1", b"."] {
            assert!(check_cell(ColType::Decimal, bad).is_err(), "{bad:?}");
        }
        assert_eq!(
            check_cell(ColType::Style, b"StartEnd"),
            Ok(Cell::style(RangeStyle::StartEnd))
        );
        assert!(check_cell(ColType::Style, b"pushpop").is_err());
        assert_eq!(check_cell(ColType::RangeStack, b":1:22"), Ok(Cell::OTHER));
        for bad in [&b"1:2"[..], b":", b":1:", b"::1", b":a"] {
            assert!(check_cell(ColType::RangeStack, bad).is_err());
        }
    }

    #[test]
    fn quote_cuts_long_values() {
        let long = "é".repeat(100);
        let q = quote(long.as_bytes());
        assert_eq!(q.chars().count(), 60 + 3);
        assert!(q.ends_with("…\""));
    }
}
