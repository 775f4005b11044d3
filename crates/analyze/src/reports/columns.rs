//! Finding a report's columns by header name.
//!
//! Each report lists its columns in a small table ([`ColumnDef`]): the name nsys writes, the
//! other names accepted for it, whether it is required and what it holds. A header line is
//! matched against the table; a column the table does not know is kept as free text (so a
//! text column added by a later nsys, which may hold commas, cannot break the splitting).

use super::scan::ColType;

pub struct ColumnDef {
    /// The name nsys writes, without its unit.
    pub name: &'static str,
    /// A time column: nsys writes it as `NAME (ns)` with `--timeunit nsec`; the report
    /// scripts' own `NAME:ts_ns` / `NAME:dur_ns` and a bare `NAME` are accepted too. Other
    /// units (`(us)`, ...) are not: the values would be in another unit.
    pub timed: bool,
    pub required: bool,
    pub ty: ColType,
    /// Other exact header texts accepted for this column.
    pub aliases: &'static [&'static str],
}

/// A column with no other accepted header text.
pub const fn def(name: &'static str, timed: bool, required: bool, ty: ColType) -> ColumnDef {
    ColumnDef {
        name,
        timed,
        required,
        ty,
        aliases: &[],
    }
}

impl ColumnDef {
    /// The same column, with other exact header texts accepted for it.
    pub const fn or(mut self, aliases: &'static [&'static str]) -> ColumnDef {
        self.aliases = aliases;
        self
    }
}

/// The header's columns, resolved against a report's table.
#[derive(Debug)]
pub struct Layout {
    /// What each header column holds (unknown columns: text).
    pub types: Vec<ColType>,
    /// Each header column's text, for messages.
    pub names: Vec<String>,
    /// For each entry of the table, its column in the header.
    pub index: Vec<Option<usize>>,
}

impl Layout {
    /// Each table entry's header column and whether it is present; `None` when a required
    /// entry is missing (or the table does not have `N` entries).
    pub fn resolve<const N: usize>(&self, defs: &[ColumnDef]) -> Option<([usize; N], [bool; N])> {
        let defs: &[ColumnDef; N] = defs.try_into().ok()?;
        let mut col = [0; N];
        let mut present = [false; N];
        for (i, def) in defs.iter().enumerate() {
            match self.index.get(i).copied().flatten() {
                Some(c) => {
                    col[i] = c;
                    present[i] = true;
                }
                None if def.required => return None,
                None => {}
            }
        }
        Some((col, present))
    }

    /// Number of table entries found in the header.
    pub fn known(&self) -> usize {
        self.index.iter().filter(|i| i.is_some()).count()
    }

    /// The first required entry the header lacks.
    pub fn first_missing(&self, defs: &[ColumnDef]) -> Option<&'static str> {
        defs.iter()
            .zip(&self.index)
            .find(|(def, index)| def.required && index.is_none())
            .map(|(def, _)| def.name)
    }
}

/// Reads `line` (no line end) as a header for the table `defs`.
pub fn match_header(line: &[u8], defs: &[ColumnDef]) -> Layout {
    let mut layout = Layout {
        types: Vec::new(),
        names: Vec::new(),
        index: vec![None; defs.len()],
    };
    for (col, raw) in line.split(|&b| b == b',').enumerate() {
        let text = String::from_utf8_lossy(raw);
        let cell = normalize(&text);
        let def = defs
            .iter()
            .enumerate()
            .find(|(i, def)| layout.index[*i].is_none() && matches(def, cell));
        match def {
            Some((i, def)) => {
                layout.index[i] = Some(col);
                layout.types.push(def.ty);
            }
            None => layout.types.push(ColType::Text),
        }
        layout.names.push(cell.to_string());
    }
    layout
}

fn normalize(cell: &str) -> &str {
    let cell = cell.trim_start_matches('\u{feff}').trim();
    cell.strip_prefix('"')
        .and_then(|c| c.strip_suffix('"'))
        .unwrap_or(cell)
        .trim()
}

fn matches(def: &ColumnDef, cell: &str) -> bool {
    if def.aliases.contains(&cell) {
        return true;
    }
    let unitless = [" (ns)", ":ts_ns", ":dur_ns"]
        .iter()
        .find_map(|unit| cell.strip_suffix(unit));
    match unitless {
        Some(base) => def.timed && base == def.name,
        None => cell == def.name,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEFS: &[ColumnDef] = &[
        ColumnDef {
            name: "Start",
            timed: true,
            required: true,
            ty: ColType::Unsigned,
            aliases: &[],
        },
        ColumnDef {
            name: "PID",
            timed: false,
            required: true,
            ty: ColType::Unsigned,
            aliases: &["Pid"],
        },
        ColumnDef {
            name: "Note",
            timed: false,
            required: false,
            ty: ColType::Lenient,
            aliases: &[],
        },
    ];

    #[test]
    fn finds_columns_by_name() {
        let layout = match_header(b"\xef\xbb\xbfExtra, Pid ,Start (ns),Start (ns)", DEFS);
        assert_eq!(layout.index, vec![Some(2), Some(1), None]);
        assert_eq!(
            layout.types,
            vec![
                ColType::Text,
                ColType::Unsigned,
                ColType::Unsigned,
                ColType::Text
            ]
        );
        assert_eq!(
            layout.names,
            vec!["Extra", "Pid", "Start (ns)", "Start (ns)"]
        );
        assert_eq!(layout.known(), 2);
        assert_eq!(layout.first_missing(DEFS), None);
    }

    #[test]
    fn units_must_be_nanoseconds_and_only_on_times() {
        for ok in ["Start", "Start:ts_ns", "Start:dur_ns", "\"Start (ns)\""] {
            assert_eq!(match_header(ok.as_bytes(), DEFS).index[0], Some(0), "{ok}");
        }
        for bad in ["Start (us)", "start (ns)", "Start(ns)"] {
            assert_eq!(match_header(bad.as_bytes(), DEFS).index[0], None, "{bad}");
        }
        let layout = match_header(b"PID (ns)", DEFS);
        assert_eq!(layout.index[1], None);
        assert_eq!(layout.first_missing(DEFS), Some("Start"));
    }
}
