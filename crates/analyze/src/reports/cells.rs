//! The checks of one cell that every report's [`Schema::check`](super::scan::Schema::check)
//! shares: a required or optional number, a process or thread id, the last id of a range
//! stack. A failed check is the column and what is wrong with it ([`Check`]).

use super::scan::{self, Cell};

pub type Check<P> = Result<P, (Option<usize>, String)>;

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
pub fn required_u64(cells: &[Cell], col: usize) -> Result<u64, (Option<usize>, String)> {
    match cells.get(col).and_then(|c| c.as_num()) {
        Some(v) => Ok(v),
        None => Err(nothing(col)),
    }
}

/// A process or thread id: nsys derives them from 24-bit fields.
#[inline(always)]
pub fn required_id(cells: &[Cell], col: usize) -> Result<u32, (Option<usize>, String)> {
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
pub fn required_i64(cells: &[Cell], col: usize) -> Result<i64, (Option<usize>, String)> {
    let v = required_u64(cells, col)?;
    i64::try_from(v).map_err(|_| too_large(col, v))
}

#[inline(always)]
pub fn optional_i64(cells: &[Cell], col: usize) -> Result<Option<i64>, (Option<usize>, String)> {
    match cells.get(col).and_then(|c| c.as_num()) {
        Some(_) => required_i64(cells, col).map(Some),
        None => Ok(None),
    }
}

/// The last id of a range stack such as `:1:2:5`.
#[inline(always)]
pub fn last_stack_id(stack: &[u8]) -> Option<u64> {
    let colon = stack.iter().rposition(|&b| b == b':')?;
    scan::digits_u64(&stack[colon + 1..])
}
