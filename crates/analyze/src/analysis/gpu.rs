//! The GPU projection joined to the push/pop ranges.
//!
//! Owns the join rule: a projection row belongs to the push/pop range with its `RangeId`,
//! PID and TID (PushPop style only); its `Orig Start` must be that range's start, or the two
//! reports are not from the same export (a [`DataError`]); a row that launched no GPU
//! operation is no projection; nsys's synthetic root row (no range) counts the operations
//! launched outside every range. Also owns the warnings `gpu_ops_outside_ranges`,
//! `capture_range_without_gpu_work` and `iterations_without_gpu_projection`.

use std::path::Path;

use super::iterations::Measured;
use super::tree::{Tree, NONE};
use super::wording::{list_named_indexes, noun_for};
use super::DataError;
use crate::reports::{GpuProjRow, PushPopRow, RangeStyle};
use nsys_gate_core::artifact::{IterationGpu, Warning, WarningCode};

/// GPU projection rows by push/pop row.
pub(super) struct GpuIndex<'a> {
    /// Per push/pop row: the index of its projection row in `gpu`, or NONE.
    by_row: Vec<u32>,
    gpu: &'a [GpuProjRow],
    outside_ops: u64,
}

impl<'a> GpuIndex<'a> {
    pub(super) fn build(
        gpu: &'a [GpuProjRow],
        rows: &[PushPopRow],
        tree: &Tree,
        path: &Path,
    ) -> Result<GpuIndex<'a>, DataError> {
        let mut by_row = vec![NONE; rows.len()];
        let mut outside_ops = 0u64;
        for (k, g) in gpu.iter().enumerate() {
            let Some(range_id) = g.range_id else {
                // nsys's synthetic root (no range): the operations launched outside every
                // range.
                outside_ops = outside_ops.saturating_add(g.num_gpu_ops);
                continue;
            };
            if g.style != Some(RangeStyle::PushPop) {
                continue;
            }
            let Some(row) = tree.row_of(range_id) else {
                continue;
            };
            let r = &rows[row as usize];
            if r.pid != g.pid || r.tid != g.tid {
                continue;
            }
            if let Some(orig) = g.orig_start_ns {
                if orig != r.start_ns {
                    return Err(DataError {
                        path: path.to_owned(),
                        line: g.line,
                        column: "Orig Start (ns)",
                        message: format!(
                            "range {range_id} starts at {orig} here but at {} in the push/pop report (line {}): the two reports are not from the same export",
                            r.start_ns, r.line
                        ),
                    });
                }
            }
            if projection_of(g).is_some() {
                by_row[row as usize] = k as u32;
            }
        }
        Ok(GpuIndex {
            by_row,
            gpu,
            outside_ops,
        })
    }

    /// The projection of the range in push/pop row `row`: `None` when it launched nothing.
    #[inline]
    pub(super) fn projection(&self, row: u32) -> Option<IterationGpu> {
        match self.by_row[row as usize] {
            NONE => None,
            k => projection_of(&self.gpu[k as usize]),
        }
    }

    /// `gpu_ops_outside_ranges`.
    pub(super) fn outside_ranges_warning(&self) -> Option<Warning> {
        (self.outside_ops > 0).then(|| {
            Warning::new(
                WarningCode::GpuOpsOutsideRanges,
                format!(
                    "{} GPU {} launched outside every NVTX range",
                    self.outside_ops,
                    noun_for(self.outside_ops, "operation was", "operations were")
                ),
            )
            .with_count(self.outside_ops)
        })
    }

    /// `capture_range_without_gpu_work`: a capture range launched nothing.
    pub(super) fn idle_capture_warning(&self, captures: &[u32]) -> Option<Warning> {
        captures
            .iter()
            .any(|&c| self.projection(c).is_none())
            .then(|| {
                Warning::new(
                    WarningCode::CaptureRangeWithoutGpuWork,
                    "the GPU projection exists but the capture range launched no GPU work"
                        .to_owned(),
                )
            })
    }

    /// `iterations_without_gpu_projection`: counted iterations that launched nothing.
    pub(super) fn idle_iterations_warning(&self, counted: &[&Measured]) -> Option<Warning> {
        let without: Vec<u64> = counted
            .iter()
            .filter(|m| self.projection(m.row).is_none())
            .map(|m| m.index)
            .collect();
        if without.is_empty() {
            return None;
        }
        Some(
            Warning::new(
                WarningCode::IterationsWithoutGpuProjection,
                format!("{} launched no GPU work", list_named_indexes(&without)),
            )
            .with_count(without.len() as u64)
            .with_iterations(without),
        )
    }
}

/// What a projection row says about its range: `None` when it launched nothing.
#[inline]
fn projection_of(g: &GpuProjRow) -> Option<IterationGpu> {
    let (Some(start), Some(projected)) = (g.projected_start_ns, g.projected_duration_ns) else {
        return None;
    };
    (g.num_gpu_ops > 0).then(|| IterationGpu {
        start_ns: start,
        end_ns: start.saturating_add(projected),
        projected_ns: projected,
        gpu_operation_count: g.num_gpu_ops,
    })
}
