//! `iteration_summary` and `iterations[]`.
//!
//! Owns the rules: the statistics (`host_inclusive`, `host_exclusive`, `gpu_projected`) are
//! over the counted iterations (complete, first pass of an index), `gpu_projected` over those
//! with a projection and `null` with no projection report; `first_iteration` is the first
//! counted iteration by start time, its ratio to the median 1 when the median is 0;
//! `unattributed_ranges` counts the ranges that are not a capture range, not a measured
//! iteration and not below one; `iterations[]` lists every measured iteration, incomplete and
//! duplicate ones included, each with its own projection.

use super::gpu::GpuIndex;
use super::iterations::Measured;
use super::tree::Tree;
use crate::reports::PushPopRow;
use nsys_gate_core::artifact::{FirstIteration, Iteration, IterationHost, IterationSummary};
use nsys_gate_core::stats::Sample;

/// The counted iterations' times, the samples of the summary's statistics.
pub(super) struct Samples {
    pub(super) host_inclusive: Sample,
    pub(super) host_exclusive: Sample,
    /// `None` with no projection report.
    pub(super) gpu_projected: Option<Sample>,
}

impl Samples {
    pub(super) fn new(rows: &[PushPopRow], counted: &[&Measured], gpu: Option<&GpuIndex>) -> Self {
        let host_inclusive = Sample::new(
            counted
                .iter()
                .map(|m| rows[m.row as usize].duration_ns())
                .collect(),
        );
        let host_exclusive = Sample::new(
            counted
                .iter()
                .map(|m| rows[m.row as usize].dur_non_child_ns())
                .collect(),
        );
        let gpu_projected = gpu.map(|g| {
            Sample::new(
                counted
                    .iter()
                    .filter_map(|m| g.projection(m.row).map(|p| p.projected_ns))
                    .collect(),
            )
        });
        Samples {
            host_inclusive,
            host_exclusive,
            gpu_projected,
        }
    }
}

/// The first counted iteration by start time (then row), against the median.
pub(super) fn first_iteration(
    rows: &[PushPopRow],
    counted: &[&Measured],
    host_inclusive: &Sample,
) -> Option<FirstIteration> {
    counted
        .iter()
        .min_by_key(|m| (rows[m.row as usize].start_ns, m.row))
        .map(|m| {
            let ns = rows[m.row as usize].duration_ns();
            let median = host_inclusive.median();
            FirstIteration {
                index: m.index,
                host_inclusive_ns: ns,
                ratio_to_median: if median > 0.0 {
                    ns as f64 / median
                } else {
                    1.0
                },
            }
        })
}

/// The ranges that are not a capture range, not a measured iteration and not below one.
pub(super) fn unattributed_ranges(tree: &Tree, captures: &[u32], iterations: &[Measured]) -> u64 {
    let mut attributed = vec![false; tree.row_count()];
    for &c in captures {
        attributed[c as usize] = true;
    }
    tree.mark_subtrees(&mut attributed, iterations.iter().map(|m| m.row).collect());
    attributed.iter().filter(|&&a| !a).count() as u64
}

pub(super) fn iteration_summary(
    expected: u64,
    iterations: &[Measured],
    unattributed_ranges: u64,
    samples: &Samples,
    first_iteration: Option<FirstIteration>,
) -> IterationSummary {
    IterationSummary {
        expected,
        found: iterations.len() as u64,
        complete: iterations.iter().filter(|m| m.complete).count() as u64,
        unattributed_ranges,
        host_inclusive: samples.host_inclusive.iteration_stats(),
        host_exclusive: samples.host_exclusive.iteration_stats(),
        gpu_projected: samples
            .gpu_projected
            .as_ref()
            .and_then(|s| s.iteration_stats()),
        first_iteration,
    }
}

/// `iterations[]`: every measured iteration, in the order given.
pub(super) fn iteration_list(
    rows: &[PushPopRow],
    iterations: &[Measured],
    gpu: Option<&GpuIndex>,
) -> Vec<Iteration> {
    iterations
        .iter()
        .map(|m| {
            let r = &rows[m.row as usize];
            Iteration {
                index: m.index,
                range_id: r.range_id,
                pid: u64::from(r.pid),
                tid: u64::from(r.tid),
                complete: m.complete,
                duplicate: m.duplicate,
                host: IterationHost {
                    start_ns: r.start_ns,
                    end_ns: r.end_ns,
                    inclusive_ns: r.duration_ns(),
                    exclusive_ns: r.dur_non_child_ns(),
                    child_total_ns: r.dur_child_ns,
                },
                gpu_projection: gpu.and_then(|g| g.projection(m.row)),
                rank: None,
            }
        })
        .collect()
}
