//! The `cuda_gpu_kern_sum` report (2022.4: `gpukernsum`, which has a row per kernel name,
//! grid and block: the caller merges rows of one name).
//!
//! `Name` (a demangled C++ signature: commas, templates, quotes) is the last column; what
//! pins its start down is the rest of the row: `Instances` at least 1, `Min` <= `Avg`, `Med`
//! <= `Max`, `Total Time` between `Instances` x `Min` and `Instances` x `Max`, and the next
//! row. `Time (%)` is not read: the share is computed from the totals.

use std::path::Path;

use super::cells::{required_i64, required_u64, Check};
use super::columns::{def, ColumnDef};
use super::error::ReportError;
use super::interner::{Interner, NameId};
use super::parts::{self, read_file};
use super::reader::{intern_name, Columns, NameError, Names, ReadOptions, Table};
use super::scan::{Cell, ColType, Span};

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

/// Reads a `cuda_gpu_kern_sum` CSV file (or 2022.4's `gpukernsum`).
pub fn read_kernel_summary(
    path: &Path,
    interner: &mut Interner,
) -> Result<Vec<KernelSummaryRow>, ReportError> {
    read_file::<KernSumSchema>(path, interner, ReadOptions::default())
}

pub const DEFS: &[ColumnDef] = &[
    def("Total Time", true, true, ColType::Unsigned),
    def("Instances", false, true, ColType::Unsigned),
    def("Avg", true, true, ColType::Decimal),
    def("Med", true, true, ColType::Decimal),
    def("Min", true, true, ColType::Unsigned),
    def("Max", true, true, ColType::Unsigned),
    def("StdDev", true, true, ColType::Decimal),
    def("Name", false, true, ColType::Text),
];

const TOTAL: usize = 0;
const INSTANCES: usize = 1;
const AVG: usize = 2;
const MED: usize = 3;
const MIN: usize = 4;
const MAX: usize = 5;
const STDDEV: usize = 6;
const NAME: usize = 7;

/// The report's columns and checks; [`Table`] keeps where each column sits.
pub enum KernSum {}

pub type KernSumSchema = Table<KernSum, { DEFS.len() }>;

#[derive(Clone, Copy, Debug)]
pub struct Pending {
    pub name: Span,
    pub total_ns: i64,
    pub instances: u64,
    pub mean_ns: f64,
    pub median_ns: f64,
    pub minimum_ns: i64,
    pub maximum_ns: i64,
    pub stddev_ns: Option<f64>,
}

/// nsys rounds means and medians to one decimal.
const ROUNDING: f64 = 0.051;

impl Columns<{ DEFS.len() }> for KernSum {
    type Pending = Pending;
    type Row = KernelSummaryRow;
    const DEFS: &'static [ColumnDef] = DEFS;

    fn check(
        table: &KernSumSchema,
        _data: &[u8],
        spans: &[Span],
        cells: &[Cell],
    ) -> Check<Pending> {
        let c = &table.col;
        let total = required_i64(cells, c[TOTAL])?;
        let instances = required_u64(cells, c[INSTANCES])?;
        let min = required_i64(cells, c[MIN])?;
        let max = required_i64(cells, c[MAX])?;
        let float = |k: usize| cells[c[k]].as_float();
        let (Some(mean), Some(median)) = (float(AVG), float(MED)) else {
            return Err((Some(c[AVG]), "expected a mean and a median".to_owned()));
        };
        if instances == 0 {
            return Err((Some(c[INSTANCES]), "no instances".to_owned()));
        }
        if min > max {
            return Err((
                Some(c[MAX]),
                format!("`Max` ({max}) is below `Min` ({min})"),
            ));
        }
        let within = |x: f64| x >= min as f64 - ROUNDING && x <= max as f64 + ROUNDING;
        if !within(mean) || !within(median) {
            return Err((
                Some(c[AVG]),
                format!(
                    "`Avg` ({mean}) or `Med` ({median}) is outside `Min`..`Max` ({min}..{max})"
                ),
            ));
        }
        let n = i128::from(instances);
        if i128::from(total) < n * i128::from(min) || i128::from(total) > n * i128::from(max) {
            return Err((
                Some(c[TOTAL]),
                format!("`Total Time` ({total}) is not between `Instances` x `Min` and `Instances` x `Max`"),
            ));
        }
        Ok(Pending {
            name: spans[c[NAME]],
            total_ns: total,
            instances,
            mean_ns: mean,
            median_ns: median,
            minimum_ns: min,
            maximum_ns: max,
            stddev_ns: float(STDDEV),
        })
    }

    fn finish(
        p: Pending,
        record: &[u8],
        _line: u32,
        names: Names<'_>,
    ) -> Result<KernelSummaryRow, NameError> {
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
