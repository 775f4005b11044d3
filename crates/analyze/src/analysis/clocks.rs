//! The SM clock over the counted iterations, from the GPU metrics nsys sampled
//! (`environment.gpus[].clock_mhz`), and `gpu_clock_unsteady`.
//!
//! Each GPU's clock is a series of runs of one value (`trace_env::ClockSeries`), each holding
//! from its first sample until the next run starts (the last one holds on). An iteration's
//! clock is the time-weighted median of the runs it overlaps (host start to host end); the
//! run's median is the same over the time of every counted iteration, and its minimum and
//! maximum are the lowest and highest of the iterations' medians, so one stray sample (NVIDIA
//! notes that the GPC clock "can fluctuate slightly between samples") moves neither.
//!
//! Each trace keeps its own time, so a trace's samples are read over its own process's
//! iterations ([`TraceClocks`]): with one trace per rank, each rank's trace over that rank's
//! iterations. The run's environment lists every trace's GPUs; each GPU's clock is the one a
//! trace measured for it (the same UUID, or device id when either has none), the trace of the
//! rank that ran on it first, else the first trace that sampled it; its warning names the rank.

use crate::trace_env::ClockSeries;
use nsys_gate_core::artifact::{ClockMhz, Environment, GpuInfo, Iteration, Warning, WarningCode};
use nsys_gate_core::units::thousands;

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

/// One trace's GPU clocks over its own process's counted iterations.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceClocks {
    /// The rank whose trace it is (one trace per rank); `None` for the run's one trace.
    pub rank: Option<u64>,
    /// The device the rank ran on (the trace's device id), when it ran on one.
    pub device: Option<u64>,
    /// The GPUs the trace lists (its device ids, its UUIDs).
    pub gpus: Vec<GpuInfo>,
    /// [`over_iterations`] of its samples and its process's iterations.
    pub clocks: Vec<GpuClock>,
}

/// A GPU of the run's environment and the clock a trace measured for it.
#[derive(Debug, Clone, PartialEq)]
pub struct Measured<'a> {
    /// Its place in `environment.gpus`.
    pub gpu: usize,
    /// The rank whose trace measured it (`None`: the run's one trace).
    pub rank: Option<u64>,
    pub clock: &'a GpuClock,
}

/// Whether a trace's GPU is the environment's GPU: the same UUID when both have one, else the
/// same device id (as [`Environment::add_gpus`] tells them apart).
fn same_gpu(a: &GpuInfo, b: &GpuInfo) -> bool {
    match (&a.uuid, &b.uuid) {
        (Some(x), Some(y)) => x == y,
        _ => a.id == b.id,
    }
}

/// For each GPU of `environment` that a trace measured, the clock: from the trace of the rank
/// that ran on it if that trace measured it, else from the first trace that did.
pub fn measured<'a>(environment: &Environment, traces: &'a [TraceClocks]) -> Vec<Measured<'a>> {
    let mut out = Vec::new();
    for (place, gpu) in environment.gpus.iter().enumerate() {
        // The trace's clock of this GPU: the trace's own GPU of that device id must be it.
        let of = |t: &'a TraceClocks| {
            t.clocks.iter().find(|c| {
                t.gpus
                    .iter()
                    .find(|g| g.id == c.gpu)
                    .map_or(gpu.id == c.gpu && gpu.uuid.is_none(), |g| same_gpu(g, gpu))
            })
        };
        let own = traces
            .iter()
            .filter_map(|t| of(t).map(|c| (t, c)))
            .find(|(t, c)| t.device == Some(c.gpu));
        let found = own.or_else(|| traces.iter().find_map(|t| of(t).map(|c| (t, c))));
        if let Some((t, clock)) = found {
            out.push(Measured {
                gpu: place,
                rank: t.rank,
                clock,
            });
        }
    }
    out
}

/// Writes each measured GPU's clock into `environment.gpus[].clock_mhz`.
pub fn record(environment: &mut Environment, measured: &[Measured<'_>]) {
    for m in measured {
        if let Some(g) = environment.gpus.get_mut(m.gpu) {
            g.clock_mhz = Some(m.clock.clock);
        }
    }
}

/// `gpu_clock_unsteady` for each measured GPU of `environment` (those that ran work) whose
/// clock moved by more than [`UNSTEADY_FRACTION`] within the counted iterations: how far,
/// between which figures, in which iterations it was low (the rank's, named), and what can
/// cause it.
pub fn unsteady(environment: &Environment, measured: &[Measured<'_>]) -> Vec<Warning> {
    let mut out = Vec::new();
    for m in measured {
        let (Some(gpu), c) = (environment.gpus.get(m.gpu), m.clock) else {
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
        let rank = m.rank.map_or_else(String::new, |r| format!("rank {r}: "));
        let message = format!(
            "{rank}the SM clock of GPU {}{name} moved by {:.0} % within the counted iterations: {} MHz at most, {} MHz at least, more than {:.0} % below the highest in {}; throttling (heat), a power cap or an unlocked clock can cause it, and those iterations' times are not comparable with the others'",
            gpu.id,
            moved * 100.0,
            thousands(maximum as usize),
            thousands(minimum as usize),
            UNSTEADY_FRACTION * 100.0,
            list_named_indexes(&low),
        );
        let mut warning = Warning::new(WarningCode::GpuClockUnsteady, message)
            .with_threshold(UNSTEADY_FRACTION)
            .with_iterations(low);
        warning.rank = m.rank;
        out.push(warning);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gpu(id: u64, uuid: Option<&str>) -> GpuInfo {
        GpuInfo {
            id,
            name: None,
            uuid: uuid.map(str::to_owned),
            sm_count: None,
            max_clock_mhz: None,
            memory_bytes: None,
            compute_capability: None,
            clock_mhz: None,
        }
    }

    fn clock(gpu: u64, median: u32) -> GpuClock {
        GpuClock {
            gpu,
            clock: ClockMhz {
                median,
                minimum: median,
                maximum: median,
            },
            per_iteration: Vec::new(),
        }
    }

    /// One trace per rank: each GPU's clock from the trace of the rank that ran on it, else
    /// the first that sampled it; two nodes' GPUs of one device id told apart by UUID.
    #[test]
    fn each_gpu_takes_the_clock_of_the_rank_that_ran_on_it() {
        let environment = Environment {
            gpus: vec![
                gpu(0, Some("GPU-a")),
                gpu(1, Some("GPU-b")),
                gpu(0, Some("GPU-c")),
            ],
            ..Environment::default()
        };
        let traces = [
            // rank 0 on GPU-a samples GPU-a and GPU-b
            TraceClocks {
                rank: Some(0),
                device: Some(0),
                gpus: vec![gpu(0, Some("GPU-a")), gpu(1, Some("GPU-b"))],
                clocks: vec![clock(0, 1410), clock(1, 1200)],
            },
            // rank 1 on GPU-b samples both too
            TraceClocks {
                rank: Some(1),
                device: Some(1),
                gpus: vec![gpu(0, Some("GPU-a")), gpu(1, Some("GPU-b"))],
                clocks: vec![clock(0, 1000), clock(1, 1380)],
            },
            // rank 2, another node: its GPU 0 is GPU-c
            TraceClocks {
                rank: Some(2),
                device: None,
                gpus: vec![gpu(0, Some("GPU-c"))],
                clocks: vec![clock(0, 1755)],
            },
        ];
        let found: Vec<(usize, Option<u64>, u32)> = measured(&environment, &traces)
            .iter()
            .map(|m| (m.gpu, m.rank, m.clock.clock.median))
            .collect();
        assert_eq!(
            found,
            [(0, Some(0), 1410), (1, Some(1), 1380), (2, Some(2), 1755)]
        );
    }

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
