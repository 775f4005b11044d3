//! Reading nsys's CSV reports into compact rows: those of `artifact::ReportName::ALL`,
//! which nsys writes in one `nsys stats` call or as concurrent processes over one export, each
//! file read on its own. The two NVTX reports, which the analysis needs: `nvtx_pushpop_trace`
//! ([`read_pushpop`]) and `nvtx_gpu_proj_trace` ([`read_gpu_proj`]). The three GPU-work
//! reports, each optional: `cuda_gpu_kern_sum` ([`read_kernel_summary`]), `cuda_gpu_trace`
//! ([`stream_gpu_trace`]), `cuda_kern_exec_trace` ([`read_kernel_exec_trace`]) and, for an
//! nsys without the last, `cuda_api_trace` ([`read_api_trace`]). nsys 2022.4's older names
//! for them (`nvtxpptrace`, `nvtxgpuproj`, `gpukernsum`, `gputrace`, `kernexectrace`,
//! `cudaapitrace`) are read too.
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
//!
//! Each report has a file of its own (`pushpop`, `gpu_proj`, `kern_sum`, `gpu_trace`,
//! `kern_exec`, `api_trace`): its columns, its checks, its rows and its read functions (a
//! `reader::Columns` impl). What they share: `reader` (the header, the records, a row's names,
//! the window's limits, and `reader::Table`, the one `Schema` and `Report` every report is read
//! through), `cells` (the checks of one cell), `parts` (a large file read in parts, a thread
//! each), `error` ([`ReportError`]) and `interner` (the names). `write` writes rows as nsys
//! does, for tests, fixtures and benchmarks.

mod api_trace;
mod cells;
mod columns;
mod error;
mod gpu_proj;
mod gpu_trace;
mod interner;
mod kern_exec;
mod kern_sum;
mod parts;
mod pushpop;
mod reader;
mod scan;
mod window;
mod write;

#[cfg(test)]
mod tests;

pub use api_trace::{read_api_trace, ApiCall};
pub use error::ReportError;
pub use gpu_proj::{read_gpu_proj, GpuProjRow, RangeStyle};
pub use gpu_trace::{stream_gpu_trace, GpuOpRow};
pub use interner::{Interner, NameId};
pub use kern_exec::{read_kernel_exec_trace, KernelExecRow};
pub use kern_sum::{read_kernel_summary, KernelSummaryRow};
pub use pushpop::{read_pushpop, PushPopRow};
pub use reader::ReadOptions;
pub use write::{
    write_field, write_gpu_proj_row, write_pushpop_row, GpuProjRecord, PushPopRecord,
    GPU_PROJ_HEADER, PUSHPOP_HEADER,
};
