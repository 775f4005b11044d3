//! The SM clock over the counted iterations, from the GPU metrics nsys sampled
//! (`environment.gpus[].clock_mhz`), and `gpu_clock_unsteady`.
//!
//! Each GPU's clock is a series of runs of one value (`trace_env::ClockSeries`), each holding
//! from its first sample until the next run starts (the last one holds on). An iteration's
//! clock is the time-weighted median of the runs it overlaps (host start to host end); the
//! run's median is the same over the time of every counted iteration, and its minimum and
//! maximum are the lowest and highest of the iterations' medians, so one stray sample (NVIDIA
//! notes that the GPC clock "can fluctuate slightly between samples") moves neither.

use crate::artifact::{ClockMhz, Environment, Iteration, Warning, WarningCode};
use crate::trace_env::ClockSeries;
use crate::units::thousands;

use super::wording::list_named_indexes;

/// `gpu_clock_unsteady` when the highest iteration's clock is more than this fraction above
/// the lowest's (relative to the highest).
pub const UNSTEADY_FRACTION: f64 = 0.10;

/// One GPU's clock over the counted iterations.
#[derive(Debug, Clone, PartialEq)]
pub struct GpuClock {
    pub gpu: u64,
    pub clock: ClockMhz,
    /// `(iteration index, median MHz)` of each counted iteration the samples cover.
    pub per_iteration: Vec<(u64, u32)>,
}

/// Each sampled GPU's clock over the counted iterations; a GPU whose samples cover none of
/// them has none.
pub fn over_iterations(series: &[ClockSeries], iterations: &[Iteration]) -> Vec<GpuClock> {
    let windows: Vec<(u64, i64, i64)> = iterations
        .iter()
        .filter(|i| i.is_counted() && i.host.end_ns > i.host.start_ns)
        .map(|i| (i.index, i.host.start_ns, i.host.end_ns))
        .collect();
    let mut out = Vec::new();
    for s in series {
        let mut all: Vec<(u32, i64)> = Vec::new();
        let mut per_iteration = Vec::new();
        for &(index, start, end) in &windows {
            let weights = overlaps(&s.runs, start, end);
            if let Some(median) = weighted_median(&mut weights.clone()) {
                per_iteration.push((index, median));
                all.extend(weights);
            }
        }
        let Some(median) = weighted_median(&mut all) else {
            continue;
        };
        let minimum = per_iteration
            .iter()
            .map(|(_, m)| *m)
            .min()
            .unwrap_or(median);
        let maximum = per_iteration
            .iter()
            .map(|(_, m)| *m)
            .max()
            .unwrap_or(median);
        out.push(GpuClock {
            gpu: s.gpu,
            clock: ClockMhz {
                median,
                minimum,
                maximum,
            },
            per_iteration,
        });
    }
    out
}

/// `(MHz, ns)` of each run overlapping `[start, end)`.
fn overlaps(runs: &[(i64, u32)], start: i64, end: i64) -> Vec<(u32, i64)> {
    let mut out = Vec::new();
    // the run holding at `start`: the last one starting at or before it
    let first = runs.partition_point(|(t, _)| *t <= start).saturating_sub(1);
    for (i, &(t, mhz)) in runs.iter().enumerate().skip(first) {
        if t >= end {
            break;
        }
        let until = runs.get(i + 1).map_or(i64::MAX, |(next, _)| *next);
        let overlap = until.min(end) - t.max(start);
        if overlap > 0 {
            out.push((mhz, overlap));
        }
    }
    out
}

/// The value at half of the total weight; `None` without weight.
fn weighted_median(values: &mut [(u32, i64)]) -> Option<u32> {
    let total: i64 = values.iter().map(|(_, w)| *w).sum();
    if total <= 0 {
        return None;
    }
    values.sort_unstable_by_key(|(v, _)| *v);
    let mut sum = 0;
    for (v, w) in values.iter() {
        sum += *w;
        if 2 * sum >= total {
            return Some(*v);
        }
    }
    values.last().map(|(v, _)| *v)
}

/// Writes each GPU's clock into `environment.gpus[].clock_mhz` (by device id).
pub fn record(environment: &mut Environment, clocks: &[GpuClock]) {
    for g in &mut environment.gpus {
        g.clock_mhz = clocks.iter().find(|c| c.gpu == g.id).map(|c| c.clock);
    }
}

/// `gpu_clock_unsteady` for each GPU of `environment` (those that ran work) whose clock moved
/// by more than [`UNSTEADY_FRACTION`] within the counted iterations: how far, between which
/// figures, in which iterations it was low, and what can cause it.
pub fn unsteady(environment: &Environment, clocks: &[GpuClock]) -> Vec<Warning> {
    let mut out = Vec::new();
    for c in clocks {
        let Some(gpu) = environment.gpus.iter().find(|g| g.id == c.gpu) else {
            continue;
        };
        let ClockMhz {
            minimum, maximum, ..
        } = c.clock;
        let moved = f64::from(maximum - minimum) / f64::from(maximum.max(1));
        if moved <= UNSTEADY_FRACTION {
            continue;
        }
        let floor = f64::from(maximum) * (1.0 - UNSTEADY_FRACTION);
        let mut low: Vec<u64> = c
            .per_iteration
            .iter()
            .filter(|(_, m)| f64::from(*m) < floor)
            .map(|(i, _)| *i)
            .collect();
        low.sort_unstable();
        let name = gpu
            .name
            .as_deref()
            .map_or_else(String::new, |n| format!(" ({n})"));
        let message = format!(
            "the SM clock of GPU {}{name} moved by {:.0} % within the counted iterations: {} MHz at most, {} MHz at least, more than {:.0} % below the highest in {}; throttling (heat), a power cap or an unlocked clock can cause it, and those iterations' times are not comparable with the others'",
            c.gpu,
            moved * 100.0,
            thousands(maximum as usize),
            thousands(minimum as usize),
            UNSTEADY_FRACTION * 100.0,
            list_named_indexes(&low),
        );
        out.push(
            Warning::new(WarningCode::GpuClockUnsteady, message)
                .with_threshold(UNSTEADY_FRACTION)
                .with_iterations(low),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_holds_until_the_next_and_medians_are_time_weighted() {
        let runs = [(0, 1980), (100, 1380), (150, 1980)];
        assert_eq!(
            overlaps(&runs, 50, 200),
            [(1980, 50), (1380, 50), (1980, 50)]
        );
        assert_eq!(overlaps(&runs, 200, 300), [(1980, 100)]);
        assert!(overlaps(&[(500, 1980)], 0, 400).is_empty());
        assert_eq!(weighted_median(&mut [(1380, 40), (1980, 60)]), Some(1980));
        assert_eq!(weighted_median(&mut [(1380, 60), (1980, 40)]), Some(1380));
        assert_eq!(weighted_median(&mut []), None);
    }
}
