//! `steady_state`: the counted iterations without the slow ones (those `slow_iterations`
//! names), and their range groups: what `advice` rests on. One slow pass (a cold start 15
//! times the others) would make a range's totals its own; the contract's fields keep every
//! counted iteration, these leave the slow ones out and say which.

use super::advice::AdviceInput;
use super::gpu::GpuIndex;
use super::groups;
use super::iterations::Measured;
use super::ranges::{self, RangeTables};
use super::tree::Tree;
use crate::reports::{Interner, PushPopRow};
use nsys_gate_core::artifact::{SteadyState, Warning};
use nsys_gate_core::stats::Sample;

/// The steady iterations and their range tables; `tables` is `None` when no counted
/// iteration is slow (the steady state is then every counted iteration).
pub(super) struct Steady<'a> {
    pub left_out: Vec<u64>,
    pub iterations: Vec<&'a Measured>,
    pub tables: Option<RangeTables>,
}

/// The counted iterations but those `slow` (the `slow_iterations` warning) names, with
/// their range tables when any is left out.
pub(super) fn split<'a>(
    tree: &Tree,
    rows: &[PushPopRow],
    names: &Interner,
    counted: &[&'a Measured],
    gpu: Option<&GpuIndex>,
    slow: Option<&Warning>,
) -> Steady<'a> {
    let left_out: Vec<u64> = slow.and_then(|w| w.iterations.clone()).unwrap_or_default();
    // A set: a slow run may leave out a third of a million passes, and a scan of them for
    // each pass took longer than the rest of the analysis.
    let leave_out: std::collections::BTreeSet<u64> = left_out.iter().copied().collect();
    let iterations: Vec<&Measured> = counted
        .iter()
        .copied()
        .filter(|m| !leave_out.contains(&m.index))
        .collect();
    let tables = (!left_out.is_empty() && !iterations.is_empty())
        .then(|| ranges::range_tables(tree, rows, names, &iterations, gpu, false));
    Steady {
        left_out,
        iterations,
        tables,
    }
}

impl<'a> Steady<'a> {
    /// What the advice reads: the steady state's groups when it has one (`state`, from
    /// [`Steady::state`]), else `all` (every counted iteration's). Advice never rests on one
    /// slow pass.
    pub(super) fn advice_input<'t>(
        &'t self,
        state: Option<&'t SteadyState>,
        all: AdviceInput<'t>,
    ) -> AdviceInput<'t> {
        match (state, &self.tables) {
            (Some(s), Some(t)) => AdviceInput {
                host: &t.host,
                host_groups: &s.host_range_groups,
                gpu_groups: &s.gpu_projected_range_groups,
                iterations_host_inclusive_ns: s.host_inclusive.total_ns,
                projection: all.projection,
            },
            _ => all,
        }
    }

    /// `steady_state` of analysis.json: `None` when no iteration is left out.
    pub(super) fn state(&self, rows: &[PushPopRow]) -> Option<SteadyState> {
        let tables = self.tables.as_ref()?;
        let host = Sample::new(
            self.iterations
                .iter()
                .map(|m| rows[m.row as usize].duration_ns())
                .collect(),
        );
        Some(SteadyState {
            left_out: self.left_out.clone(),
            host_inclusive: host.iteration_stats()?,
            host_range_groups: groups::host_groups(&tables.host),
            gpu_projected_range_groups: groups::gpu_groups(&tables.gpu),
        })
    }
}
