//! The non-gating timing warnings on the host inclusive times of the counted iterations (the
//! `advice` on ranges is `advice.rs`).
//!
//! Owns the warnings `first_iteration_slow` (the first counted iteration took over
//! [`FIRST_ITERATION_SLOW_RATIO`] x the median; needs two iterations), `high_variance` (cv
//! over [`HIGH_VARIANCE_CV`]; needs two) and `slow_iterations` (over the median +
//! [`OUTLIER_MADS`] x MAD, unscaled: an outlier as [`nsys_gate_core::stats`] defines it; needs three),
//! their thresholds and wording. The thresholds are recorded on the warnings (`threshold`,
//! `threshold_ns`), so that the report can show them without a copy of its own, and so are
//! the facts their advice rests on: the warm-up passes before a slow first iteration
//! (`warmup_passes`; none: add one), and whether the iterations `slow_iterations` names alone
//! make the variance (`cv_without_slow`, the others' cv, recorded only then).

use super::iterations::Measured;
use super::wording::list_named_indexes;
use crate::reports::PushPopRow;
use nsys_gate_core::artifact::{FirstIteration, Warning, WarningCode};
use nsys_gate_core::stats::{outlier_limit, Sample, OUTLIER_MADS};

/// Thresholds of the non-gating timing warnings.
pub const FIRST_ITERATION_SLOW_RATIO: f64 = 1.5;
pub const HIGH_VARIANCE_CV: f64 = 0.10;

/// The counted iterations' host inclusive times, as the timing warnings read them.
pub(super) struct Counted<'a> {
    pub rows: &'a [PushPopRow],
    pub counted: &'a [&'a Measured],
    pub host_inclusive: &'a Sample,
}

impl Counted<'_> {
    /// `first_iteration_slow` and `high_variance`, then `slow_iterations` apart (the steady
    /// state leaves its iterations out).
    pub(super) fn warnings(
        &self,
        first_iteration: Option<&FirstIteration>,
        warmup: Option<u64>,
    ) -> (Vec<Warning>, Option<Warning>) {
        let slow = slow_iterations_warning(self.rows, self.counted, self.host_inclusive);
        let advisory = first_iteration_slow_warning(first_iteration, self.counted.len(), warmup)
            .into_iter()
            .chain(high_variance_warning(
                self.host_inclusive,
                self.rows,
                self.counted,
                slow.as_ref(),
            ))
            .collect();
        (advisory, slow)
    }
}

/// `first_iteration_slow`, from the summary's first iteration and the number of counted
/// iterations.
pub(super) fn first_iteration_slow_warning(
    first_iteration: Option<&FirstIteration>,
    counted: usize,
    warmup: Option<u64>,
) -> Option<Warning> {
    let first = first_iteration?;
    (counted >= 2 && first.ratio_to_median > FIRST_ITERATION_SLOW_RATIO).then(|| {
        Warning::new(
            WarningCode::FirstIterationSlow,
            format!(
                "first measured iteration {} took {} the median host inclusive time",
                first.index,
                nsys_gate_core::units::ratio(first.ratio_to_median)
            ),
        )
        .with_iterations(vec![first.index])
        .with_threshold(FIRST_ITERATION_SLOW_RATIO)
        .with_warmup_passes(warmup)
    })
}

/// `high_variance`, from the counted iterations' host inclusive times; with the others' cv
/// when the iterations `slow` names (at most 3) alone make the variance (the others, two or
/// more, vary under the threshold).
pub(super) fn high_variance_warning(
    host_inclusive: &Sample,
    rows: &[PushPopRow],
    counted: &[&Measured],
    slow: Option<&Warning>,
) -> Option<Warning> {
    let slow_indexes = slow.and_then(|w| w.iterations.as_deref()).unwrap_or(&[]);
    let without_slow = (!slow_indexes.is_empty() && slow_indexes.len() <= 3)
        .then(|| {
            let others: Vec<i64> = counted
                .iter()
                .filter(|m| !slow_indexes.contains(&m.index))
                .map(|m| rows[m.row as usize].duration_ns())
                .collect();
            let cv = Sample::new(others.clone()).cv();
            (others.len() >= 2 && cv <= HIGH_VARIANCE_CV).then_some(cv)
        })
        .flatten();
    (host_inclusive.len() >= 2 && host_inclusive.cv() > HIGH_VARIANCE_CV).then(|| {
        let mut warning = Warning::new(
            WarningCode::HighVariance,
            format!(
                "host inclusive iteration times vary widely: cv {:.3} over {} iterations (threshold {HIGH_VARIANCE_CV})",
                host_inclusive.cv(),
                host_inclusive.len()
            ),
        )
        .with_threshold(HIGH_VARIANCE_CV);
        warning.cv_without_slow = without_slow;
        warning
    })
}

/// `slow_iterations`: the counted iterations, in index order, whose host inclusive time is
/// over the limit.
pub(super) fn slow_iterations_warning(
    rows: &[PushPopRow],
    counted: &[&Measured],
    host_inclusive: &Sample,
) -> Option<Warning> {
    if host_inclusive.len() < 3 {
        return None;
    }
    let limit = outlier_limit(host_inclusive.median(), host_inclusive.mad());
    let slow: Vec<(u64, i64)> = counted
        .iter()
        .map(|m| (m.index, rows[m.row as usize].duration_ns()))
        .filter(|&(_, ns)| ns as f64 > limit)
        .collect();
    if slow.is_empty() {
        return None;
    }
    // The iterations' own times first (the first few), then the limit, named as such.
    const TIMES_SHOWN: usize = 5;
    let times: Vec<String> = slow
        .iter()
        .take(TIMES_SHOWN)
        .map(|&(i, ns)| format!("{i}: {}", nsys_gate_core::units::duration_i(ns)))
        .collect();
    let more = slow.len().saturating_sub(TIMES_SHOWN);
    let slow_indexes: Vec<u64> = slow.iter().map(|&(i, _)| i).collect();
    Some(
        Warning::new(
            WarningCode::SlowIterations,
            format!(
                "{} took longer than the slow limit of {}, the median + {OUTLIER_MADS} × MAD of host inclusive time ({}{})",
                list_named_indexes(&slow_indexes),
                nsys_gate_core::units::duration(limit),
                times.join(", "),
                if more > 0 {
                    format!(", and {more} more")
                } else {
                    String::new()
                }
            ),
        )
        .with_count(slow_indexes.len() as u64)
        .with_iterations(slow_indexes)
        .with_threshold_ns(limit),
    )
}
