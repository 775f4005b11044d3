//! Writing report rows as nsys writes its CSV (what the readers read), for tests, fixtures and
//! benchmarks.
//!
//! nsys wraps a value in double quotes only when it holds a comma, leaves quotes inside it
//! as they are and writes newlines raw (nsys 2024.2, checked against real output).

use super::gpu_proj::RangeStyle;
use std::io::{self, Write};

/// The header nsys 2023.4 to 2024.2 write for `nvtx_pushpop_trace` with `--timeunit nsec`.
pub const PUSHPOP_HEADER: &str = "Start (ns),End (ns),Duration (ns),DurChild (ns),DurNonChild (ns),Name,PID,TID,Lvl,NumChild,RangeId,ParentId,RangeStack,NameTree";

/// The header of `nvtx_gpu_proj_trace` with `--timeunit nsec`.
pub const GPU_PROJ_HEADER: &str = "Name,Projected Start (ns),Projected Duration (ns),Orig Start (ns),Orig Duration (ns),Style,PID,TID,NumGPUOps,Lvl,NumChild,RangeId,ParentId,RangeStack";

/// Writes `value` as nsys writes a text field: in quotes if it holds a comma, else raw.
pub fn write_field<W: Write>(out: &mut W, value: &str) -> io::Result<()> {
    if value.contains(',') {
        out.write_all(b"\"")?;
        out.write_all(value.as_bytes())?;
        out.write_all(b"\"")
    } else {
        out.write_all(value.as_bytes())
    }
}

/// One `nvtx_pushpop_trace` row, as the generator takes it. `Duration`, `DurNonChild` and
/// `NameTree` are derived, as nsys derives them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushPopRecord<'a> {
    pub start_ns: i64,
    pub end_ns: i64,
    pub dur_child_ns: i64,
    /// Written as is (no `:` added or dropped).
    pub name: &'a str,
    pub pid: u64,
    pub tid: u64,
    pub lvl: u32,
    pub num_child: u64,
    pub range_id: u64,
    pub parent_id: Option<u64>,
    /// The ids from the root to this range, e.g. `[1, 2, 5]` (written `:1:2:5`).
    pub range_stack: &'a [u64],
}

/// Writes one row of [`PUSHPOP_HEADER`]'s columns, ending with `eol` (`"\n"` as nsys on
/// Linux writes it).
pub fn write_pushpop_row<W: Write>(
    out: &mut W,
    r: &PushPopRecord<'_>,
    eol: &str,
) -> io::Result<()> {
    let duration = i128::from(r.end_ns) - i128::from(r.start_ns);
    let non_child = duration - i128::from(r.dur_child_ns);
    write!(
        out,
        "{},{},{},{},{},",
        r.start_ns, r.end_ns, duration, r.dur_child_ns, non_child
    )?;
    write_field(out, r.name)?;
    write!(
        out,
        ",{},{},{},{},{},",
        r.pid, r.tid, r.lvl, r.num_child, r.range_id
    )?;
    if let Some(parent) = r.parent_id {
        write!(out, "{parent}")?;
    }
    out.write_all(b",")?;
    for id in r.range_stack {
        write!(out, ":{id}")?;
    }
    out.write_all(b",")?;
    let tree = format!("{}{}", "--".repeat(r.lvl as usize), r.name);
    write_field(out, &tree)?;
    out.write_all(eol.as_bytes())
}

/// One `nvtx_gpu_proj_trace` row, as the generator takes it (`None`: an empty field).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuProjRecord<'a> {
    /// `None` for nsys's synthetic root row (empty name).
    pub name: Option<&'a str>,
    pub projected_start_ns: Option<i64>,
    pub projected_duration_ns: Option<i64>,
    pub orig_start_ns: Option<i64>,
    pub orig_duration_ns: Option<i64>,
    pub style: Option<RangeStyle>,
    pub pid: u64,
    pub tid: u64,
    pub num_gpu_ops: u64,
    pub lvl: Option<u32>,
    pub num_child: u64,
    pub range_id: Option<u64>,
    pub parent_id: Option<u64>,
    pub range_stack: &'a [u64],
}

/// Writes one row of [`GPU_PROJ_HEADER`]'s columns, ending with `eol`.
pub fn write_gpu_proj_row<W: Write>(
    out: &mut W,
    r: &GpuProjRecord<'_>,
    eol: &str,
) -> io::Result<()> {
    fn opt<W: Write, T: std::fmt::Display>(out: &mut W, v: Option<T>) -> io::Result<()> {
        match v {
            Some(v) => write!(out, ",{v}"),
            None => out.write_all(b","),
        }
    }
    write_field(out, r.name.unwrap_or(""))?;
    opt(out, r.projected_start_ns)?;
    opt(out, r.projected_duration_ns)?;
    opt(out, r.orig_start_ns)?;
    opt(out, r.orig_duration_ns)?;
    opt(out, r.style.map(RangeStyle::as_str))?;
    write!(out, ",{},{},{}", r.pid, r.tid, r.num_gpu_ops)?;
    opt(out, r.lvl)?;
    write!(out, ",{}", r.num_child)?;
    opt(out, r.range_id)?;
    opt(out, r.parent_id)?;
    out.write_all(b",")?;
    for id in r.range_stack {
        write!(out, ":{id}")?;
    }
    out.write_all(eol.as_bytes())
}
