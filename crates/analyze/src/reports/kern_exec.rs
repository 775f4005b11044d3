//! The `cuda_kern_exec_trace` report (2022.4: `kernexectrace`, same columns): one row per
//! kernel with the CUDA API call that launched it, which nsys joins on the correlation id *and*
//! the process (`k.globalPid == (r.globalTid & 0xFFFFFFFFFF000000)`), so that processes whose
//! correlation ids repeat (each process counts its own) are told apart. Kept: the call's start
//! and end, its process and thread, the kernel's start, duration, device and name.
//!
//! Text columns: `API Function`, `GridXYZ` and `BlockXYZ` in the middle (no commas: a function
//! name, `%4d %4d %4d`), `Kernel Name` last (a demangled signature: commas, quotes,
//! templates). The numbers around them pin them down, and so does `Total Dur`, which nsys
//! computes as `max(call end, kernel end) - call start`.

use std::path::Path;

use super::cells::{required_i64, required_id, Check};
use super::columns::{def, ColumnDef};
use super::error::ReportError;
use super::interner::{Interner, NameId};
use super::parts::{self, read_file};
use super::reader::{intern_name, Columns, NameError, Names, ReadOptions, Table};
use super::scan::{Cell, ColType, Span};

/// One kernel and the call that launched it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelExecRow {
    /// The launching CUDA API call.
    pub api_start_ns: i64,
    pub api_end_ns: i64,
    /// nsys writes 24-bit process and thread ids.
    pub pid: u32,
    pub tid: u32,
    /// The kernel's start and duration on the GPU.
    pub start_ns: i64,
    pub duration_ns: i64,
    /// The CUDA device that ran it (`DevId`); `None` when nsys gave none.
    pub device: Option<u32>,
    pub name: NameId,
}

/// Reads a `cuda_kern_exec_trace` CSV file (or 2022.4's `kernexectrace`), names interned in
/// `interner`.
pub fn read_kernel_exec_trace(
    path: &Path,
    interner: &mut Interner,
) -> Result<Vec<KernelExecRow>, ReportError> {
    read_file::<KernExecSchema>(path, interner, ReadOptions::default())
}

pub const DEFS: &[ColumnDef] = &[
    def("API Start", true, true, ColType::Unsigned),
    def("API Dur", true, true, ColType::Unsigned),
    def("Queue Start", true, false, ColType::OptUnsigned),
    def("Queue Dur", true, false, ColType::OptUnsigned),
    def("Kernel Start", true, true, ColType::Unsigned),
    def("Kernel Dur", true, true, ColType::Unsigned),
    def("Total Dur", true, true, ColType::Unsigned),
    def("PID", false, true, ColType::Unsigned).or(&["Pid"]),
    def("TID", false, true, ColType::Unsigned).or(&["Tid"]),
    def("DevId", false, false, ColType::OptUnsigned),
    def("Kernel Name", false, true, ColType::Text),
];

const API_START: usize = 0;
const API_DUR: usize = 1;
const KERNEL_START: usize = 4;
const KERNEL_DUR: usize = 5;
const TOTAL: usize = 6;
const PID: usize = 7;
const TID: usize = 8;
const DEVICE: usize = 9;
const NAME: usize = 10;

/// The report's columns and checks; [`Table`] keeps where each column sits.
pub enum KernExec {}

pub type KernExecSchema = Table<KernExec, { DEFS.len() }>;

#[derive(Clone, Copy, Debug)]
pub struct Pending {
    api_start_ns: i64,
    api_end_ns: i64,
    pid: u32,
    tid: u32,
    start_ns: i64,
    duration_ns: i64,
    device: Option<u32>,
    name: Span,
}

impl Columns<{ DEFS.len() }> for KernExec {
    type Pending = Pending;
    type Row = KernelExecRow;
    const DEFS: &'static [ColumnDef] = DEFS;

    fn check(
        table: &KernExecSchema,
        _data: &[u8],
        spans: &[Span],
        cells: &[Cell],
    ) -> Check<Pending> {
        let c = &table.col;
        let api_start = required_i64(cells, c[API_START])?;
        let api_end = api_start.saturating_add(required_i64(cells, c[API_DUR])?);
        let kernel_start = required_i64(cells, c[KERNEL_START])?;
        let duration = required_i64(cells, c[KERNEL_DUR])?;
        let total = required_i64(cells, c[TOTAL])?;
        let expected = api_end
            .max(kernel_start.saturating_add(duration))
            .saturating_sub(api_start);
        if total != expected {
            return Err((
                Some(c[TOTAL]),
                format!(
                    "`Total Dur` ({total}) is not from the call's start to the later of its end and the kernel's ({expected})"
                ),
            ));
        }
        Ok(Pending {
            api_start_ns: api_start,
            api_end_ns: api_end,
            pid: required_id(cells, c[PID])?,
            tid: required_id(cells, c[TID])?,
            start_ns: kernel_start,
            duration_ns: duration,
            // `DevId` when the header has it
            device: table
                .optional(DEVICE)
                .and_then(|col| cells[col].as_num())
                .map(|d| u32::try_from(d).unwrap_or(u32::MAX)),
            name: spans[c[NAME]],
        })
    }

    fn finish(
        p: Pending,
        record: &[u8],
        _line: u32,
        names: Names<'_>,
    ) -> Result<KernelExecRow, NameError> {
        Ok(KernelExecRow {
            api_start_ns: p.api_start_ns,
            api_end_ns: p.api_end_ns,
            pid: p.pid,
            tid: p.tid,
            start_ns: p.start_ns,
            duration_ns: p.duration_ns,
            device: p.device,
            name: intern_name(record, p.name, names.interner, false)?,
        })
    }

    fn relocate(row: &mut KernelExecRow, _lines: u64, ids: &[NameId]) {
        row.name = parts::relocated_name(row.name, ids);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// nsys 2024.2's output for the `gpu-work` fixture (its hostile kernel name included), and
    /// a second process launching with the same times.
    #[test]
    fn rows_are_pinned_down_by_their_numbers() {
        let dir = assert_fs::TempDir::new().unwrap();
        let path = dir.path().join("k.csv");
        std::fs::write(
            &path,
            concat!(
                "API Start (ns),API Dur (ns),Queue Start (ns),Queue Dur (ns),Kernel Start (ns),Kernel Dur (ns),Total Dur (ns),PID,TID,DevId,API Function,GridXYZ,BlockXYZ,Kernel Name\n",
                "1485921,4000,1489921,6000,1495921,90000,100000,19,19,0,cudaLaunchKernel, 256    1    1, 128    1    1,\"void reduce_sum_kernel<float, 256>(float const*, float*, int)\"\n",
                "2798281,4000,2802281,6000,2808281,1400000,1410000,19,19,0,cudaLaunchKernel, 256    1    1, 128    1    1,\"void attention_kernel<\"causal\",64, cutlass::half_t>(int, float const*, \"x\",1,2)\"\n",
                "2798281,4000,,,2800000,10,4000,21,21,1,cudaLaunchKernel, 256    1    1, 128    1    1,gemm\n",
            ),
        )
        .unwrap();
        let mut names = Interner::new();
        let rows = read_kernel_exec_trace(&path, &mut names).unwrap();
        let placed: Vec<(i64, Option<u32>)> = rows.iter().map(|r| (r.start_ns, r.device)).collect();
        assert_eq!(
            placed,
            [(1495921, Some(0)), (2808281, Some(0)), (2800000, Some(1))]
        );
        let got: Vec<(i64, i64, u32, u32, i64, &str)> = rows
            .iter()
            .map(|r| {
                (
                    r.api_start_ns,
                    r.api_end_ns,
                    r.pid,
                    r.tid,
                    r.duration_ns,
                    names.resolve(r.name),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                (
                    1485921,
                    1489921,
                    19,
                    19,
                    90000,
                    "void reduce_sum_kernel<float, 256>(float const*, float*, int)"
                ),
                (
                    2798281,
                    2802281,
                    19,
                    19,
                    1400000,
                    r#"void attention_kernel<"causal",64, cutlass::half_t>(int, float const*, "x",1,2)"#
                ),
                (2798281, 2802281, 21, 21, 10, "gemm"),
            ]
        );

        // A total that does not add up is named.
        std::fs::write(
            &path,
            "API Start (ns),API Dur (ns),Kernel Start (ns),Kernel Dur (ns),Total Dur (ns),PID,TID,Kernel Name\n1,2,3,4,5,6,7,k\n",
        )
        .unwrap();
        let e = read_kernel_exec_trace(&path, &mut names).unwrap_err();
        assert!(e.to_string().contains("Total Dur"), "{e}");
    }
}
