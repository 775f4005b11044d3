//! The ranks of a distributed run: several processes that each run the iterations (the
//! harness started once per rank, under one nsys or one nsys per rank).
//!
//! Owns the rules: a process is a rank when it holds a top-level capture range (with no
//! capture range: a top-level range matching the iteration pattern), and a run is
//! distributed when two or more processes are; in one trace the ranks are numbered by their
//! CUDA devices when each process launched its kernels on a device of its own, else by PID;
//! each rank's iterations are judged on their own
//! (its capture range, its missing, duplicate and unexpected indexes, its statistics), and its
//! warnings name it (`rank`); a step is one index across the ranks, timed by its slowest rank
//! (host inclusive; the GPU projection likewise, on its own clock), and complete when every
//! rank completed that index; `iterations[]` and `iteration_summary` describe the steps, and
//! the timing warnings are the steps'; the range tables cover every rank's counted iterations.

use std::collections::{BTreeMap, BTreeSet};
use std::thread;

use rustc_hash::FxHashMap;

use super::capture::is_capture_name;
use super::gpu_work::{Launches, NO_DEVICE};
use super::iterations::Measured;
use super::timing_warnings;
use super::wording::list_named_indexes;
use super::{analyse_rows, DataError, Findings, Reports, Scope, Settings};
use crate::reports::{GpuProjRow, Interner, NameId, PushPopRow};
use nsys_gate_core::artifact::{
    FirstIteration, HostRange, Iteration, IterationSummary, Rank, Warning, WarningCode,
};
use nsys_gate_core::stats::Sample;

/// The processes that are ranks (sorted by PID), when there are two or more.
pub(super) fn find(settings: &Settings, rows: &[PushPopRow], names: &Interner) -> Option<Vec<u32>> {
    let mut pids: Vec<u32> = rows
        .iter()
        .filter(|r| r.parent_id.is_none())
        .filter(|r| {
            let name = names.resolve(r.name);
            match &settings.capture_range {
                Some(cap) => is_capture_name(name, cap),
                None => settings.iteration_pattern.is_match(name),
            }
        })
        .map(|r| r.pid)
        .collect();
    pids.sort_unstable();
    pids.dedup();
    // one process of a run the manifest says has more ranks is a distributed run too
    let distributed = pids.len() >= 2 || (pids.len() == 1 && settings.world_size > Some(1));
    distributed.then_some(pids)
}

/// One rank's rows, to be analysed alone.
pub struct RankRows {
    pub rank: u64,
    pub pid: u32,
    pub device: Option<u64>,
    pub pushpop: Vec<PushPopRow>,
    pub gpu: Option<Vec<GpuProjRow>>,
}

/// The CUDA devices each process launched kernels on, from the launches' calls (the
/// process) joined with their kernels (the device) on the correlation id. A correlation id
/// that calls of more than one process share (`cuda_api_trace`, where each process counts its
/// own) tells nothing and is left out; so are kernels of no known device.
pub fn devices_by_process(launches: &Launches<'_>) -> BTreeMap<u32, BTreeSet<u32>> {
    // the process of each correlation id; `None` once two processes share it
    let mut pid_of: FxHashMap<u64, Option<u32>> = FxHashMap::default();
    for call in launches.api {
        pid_of
            .entry(call.corr_id)
            .and_modify(|p| {
                if *p != Some(call.pid) {
                    *p = None;
                }
            })
            .or_insert(Some(call.pid));
    }
    let mut devices: BTreeMap<u32, BTreeSet<u32>> = BTreeMap::new();
    for k in launches.kernels.iter().filter(|k| k.device != NO_DEVICE) {
        if let Some(Some(pid)) = pid_of.get(&k.corr_id) {
            devices.entry(*pid).or_default().insert(k.device);
        }
    }
    devices
}

/// The device of each process that launched its kernels on exactly one (`None` otherwise),
/// and whether the ranks are numbered by it: every process on a device of its own.
pub(super) fn rank_devices(
    pids: &[u32],
    by_process: &BTreeMap<u32, BTreeSet<u32>>,
) -> (Vec<Option<u64>>, bool) {
    let devices: Vec<Option<u64>> = pids
        .iter()
        .map(|pid| match by_process.get(pid) {
            Some(set) if set.len() == 1 => set.first().map(|&d| u64::from(d)),
            _ => None,
        })
        .collect();
    let distinct: BTreeSet<u64> = devices.iter().flatten().copied().collect();
    let own = devices.iter().all(Option::is_some) && distinct.len() == devices.len();
    (devices, own)
}

/// The ranks of one trace: numbered by their CUDA devices when each process launched its
/// work on a device of its own (the usual `cuda:LOCAL_RANK`), else by the order of their
/// PIDs.
pub(super) fn analyse(
    settings: &Settings,
    reports: &Reports<'_>,
    pids: &[u32],
) -> Result<Findings, DataError> {
    let by_process = reports
        .launches
        .as_ref()
        .map(devices_by_process)
        .unwrap_or_default();
    let (devices, by_device) = rank_devices(pids, &by_process);
    let mut order: Vec<(u32, Option<u64>)> = pids.iter().copied().zip(devices).collect();
    if by_device {
        order.sort_by_key(|&(_, device)| device);
    }
    let ranks: Vec<RankRows> = order
        .iter()
        .enumerate()
        .map(|(k, &(pid, device))| RankRows {
            rank: k as u64,
            pid,
            device,
            pushpop: reports
                .pushpop
                .iter()
                .filter(|r| r.pid == pid)
                .cloned()
                .collect(),
            gpu: reports
                .gpu
                .map(|rows| rows.iter().filter(|r| r.pid == pid).cloned().collect()),
        })
        .collect();
    analyse_ranks(settings, reports, &ranks)
}

/// Each rank alone, and every rank at once for the range tables (`all`: the rows of every
/// rank, a process's PID telling its iterations apart), on threads; then the steps.
pub(super) fn analyse_ranks(
    settings: &Settings,
    all: &Reports<'_>,
    ranks: &[RankRows],
) -> Result<Findings, DataError> {
    let (union, each) = thread::scope(|scope| {
        let union = scope.spawn(|| analyse_rows(settings, all, Scope::Ranks));
        let each: Result<Vec<Findings>, DataError> = ranks
            .iter()
            .map(|r| {
                let reports = Reports {
                    names: all.names,
                    pushpop: &r.pushpop,
                    pushpop_path: all.pushpop_path,
                    gpu: r.gpu.as_deref(),
                    gpu_path: all.gpu_path,
                    launches: None,
                };
                analyse_rows(settings, &reports, Scope::Process)
            })
            .collect();
        (union.join().expect("the analysis does not panic"), each)
    });
    Ok(combine(settings, union?, ranks, each?))
}

/// The steps, their summary and timing warnings, the ranks' warnings (naming their rank) and
/// `ranks[]`, over the range tables of every rank (`union`).
fn combine(
    settings: &Settings,
    union: Findings,
    ranks: &[RankRows],
    each: Vec<Findings>,
) -> Findings {
    let (steps, slowest_steps) = steps(ranks, &each);
    let (iteration_summary, advisory, slow) = step_summary(settings, &steps, &each);
    let mut warnings = Vec::new();
    for (r, f) in ranks.iter().zip(&each) {
        // the timing warnings are the steps' (each rank's timing is in `ranks[]`)
        for w in f.warnings.iter().filter(|w| !is_timing(w.code)) {
            let mut w = w.clone();
            w.message = format!("rank {}: {}", r.rank, w.message);
            w.rank = Some(r.rank);
            warnings.push(w);
        }
    }
    warnings.extend(union.warnings);
    warnings.extend(advisory);
    warnings.extend(slow);

    let rank_list = ranks
        .iter()
        .zip(&each)
        .zip(slowest_steps)
        .map(|((r, f), slowest)| Rank {
            rank: r.rank,
            pid: u64::from(r.pid),
            device: r.device,
            trace: String::new(),
            iterations: f.iteration_summary.counted(),
            iteration_summary: f.iteration_summary.clone(),
            slowest_steps: slowest,
        })
        .collect();
    let mut host_ranges = union.host_ranges;
    name_slowest_ranks(&mut host_ranges, ranks, &each);
    // the devices' work per step: each step runs every rank's iteration
    let mut kernel_mix = union.kernel_mix;
    if let Some(mix) = &mut kernel_mix {
        mix.device_iterations = iteration_summary.complete;
    }
    Findings {
        warnings,
        iteration_summary,
        iterations: steps,
        host_ranges,
        gpu_projected_ranges: union.gpu_projected_ranges,
        host_range_groups: union.host_range_groups,
        gpu_projected_range_groups: union.gpu_projected_range_groups,
        kernel_mix,
        steady_state: None,
        advice: union.advice,
        ranks: Some(rank_list),
        rank_iterations: each.into_iter().map(|f| f.iterations).collect(),
    }
}

fn is_timing(code: WarningCode) -> bool {
    matches!(
        code,
        WarningCode::FirstIterationSlow | WarningCode::HighVariance | WarningCode::SlowIterations
    )
}

/// `missing_iterations` for every rank below `world_size` (or below the highest rank found)
/// that has no trace: every index of it is missing.
pub(super) fn missing_ranks(
    settings: &Settings,
    found: &[u64],
    world_size: Option<u64>,
) -> Vec<Warning> {
    let highest = found.iter().map(|r| r + 1).max().unwrap_or(0);
    let expected = world_size.unwrap_or(0).max(highest);
    let indexes: Vec<u64> = (0..settings.expected_iterations).collect();
    (0..expected)
        .filter(|k| !found.contains(k))
        .map(|k| {
            let mut w = Warning::new(
                WarningCode::MissingIterations,
                format!(
                    "rank {k}: no trace of this rank; {} missing",
                    list_named_indexes(&indexes)
                ),
            )
            .with_iterations(indexes.clone())
            .with_count(settings.expected_iterations);
            w.rank = Some(k);
            w
        })
        .collect()
}

/// The steps (one per index any rank measured: the slowest rank's iteration, with `rank`)
/// and, per rank, the complete steps it was the slowest in.
fn steps(ranks: &[RankRows], each: &[Findings]) -> (Vec<Iteration>, Vec<u64>) {
    let n = ranks.len();
    let by_index: Vec<BTreeMap<u64, &Iteration>> = each
        .iter()
        .map(|f| {
            f.iterations
                .iter()
                .filter(|i| !i.duplicate)
                .map(|i| (i.index, i))
                .collect()
        })
        .collect();
    let indexes: BTreeSet<u64> = by_index.iter().flat_map(|m| m.keys().copied()).collect();
    let mut slowest_steps = vec![0u64; n];
    let mut steps = Vec::with_capacity(indexes.len());
    for index in indexes {
        let present: Vec<(usize, &Iteration)> = by_index
            .iter()
            .enumerate()
            .filter_map(|(k, m)| m.get(&index).map(|i| (k, *i)))
            .collect();
        let complete = present.len() == n && present.iter().all(|(_, i)| i.complete);
        // the slowest rank (ties: the lowest rank); of an incomplete step, the slowest of the
        // iterations it has
        let Some(&(k, slowest)) = present.iter().max_by(|a, b| {
            a.1.host
                .inclusive_ns
                .cmp(&b.1.host.inclusive_ns)
                .then_with(|| b.0.cmp(&a.0))
        }) else {
            continue;
        };
        let mut step = slowest.clone();
        step.complete = complete;
        step.rank = Some(ranks[k].rank);
        step.gpu_projection = present
            .iter()
            .filter_map(|(_, i)| i.gpu_projection.as_ref())
            .max_by_key(|g| g.projected_ns)
            .cloned();
        if complete {
            slowest_steps[k] += 1;
        }
        steps.push(step);
    }
    (steps, slowest_steps)
}

/// The steps' summary and timing warnings, read as the iterations of one process would be.
fn step_summary(
    settings: &Settings,
    steps: &[Iteration],
    each: &[Findings],
) -> (IterationSummary, Vec<Warning>, Option<Warning>) {
    // The steps' statistics and timing warnings, read as iterations of one process would be.
    let counted: Vec<&Iteration> = steps.iter().filter(|s| s.complete).collect();
    let step_rows: Vec<PushPopRow> = counted
        .iter()
        .enumerate()
        .map(|(k, s)| PushPopRow {
            start_ns: s.host.start_ns,
            end_ns: s.host.end_ns,
            dur_child_ns: s.host.child_total_ns,
            range_id: k as u64,
            parent_id: None,
            name: NameId(0),
            pid: s.pid as u32,
            tid: s.tid as u32,
            line: 0,
        })
        .collect();
    let measured: Vec<Measured> = counted
        .iter()
        .enumerate()
        .map(|(k, s)| Measured {
            row: k as u32,
            index: s.index,
            complete: true,
            duplicate: false,
        })
        .collect();
    let measured_refs: Vec<&Measured> = measured.iter().collect();
    let host_inclusive = Sample::new(counted.iter().map(|s| s.host.inclusive_ns).collect());
    let host_exclusive = Sample::new(counted.iter().map(|s| s.host.exclusive_ns).collect());
    let projection = each
        .iter()
        .any(|f| f.iteration_summary.gpu_projected.is_some())
        || steps.iter().any(|s| s.gpu_projection.is_some());
    let gpu_projected = projection.then(|| {
        Sample::new(
            counted
                .iter()
                .filter_map(|s| s.gpu_projection.as_ref().map(|g| g.projected_ns))
                .collect(),
        )
    });
    let first_iteration = counted
        .iter()
        .min_by_key(|s| (s.host.start_ns, s.index))
        .map(|s| {
            let median = host_inclusive.median();
            FirstIteration {
                index: s.index,
                host_inclusive_ns: s.host.inclusive_ns,
                ratio_to_median: if median > 0.0 {
                    s.host.inclusive_ns as f64 / median
                } else {
                    1.0
                },
            }
        });
    let timing = timing_warnings::Counted {
        rows: &step_rows,
        counted: &measured_refs,
        host_inclusive: &host_inclusive,
    };
    let (advisory, slow) = timing.warnings(first_iteration.as_ref(), settings.warmup);

    let summary = IterationSummary {
        expected: settings.expected_iterations,
        found: steps.len() as u64,
        complete: counted.len() as u64,
        unattributed_ranges: each
            .iter()
            .map(|f| f.iteration_summary.unattributed_ranges)
            .sum(),
        host_inclusive: host_inclusive.iteration_stats(),
        host_exclusive: host_exclusive.iteration_stats(),
        gpu_projected: gpu_projected.and_then(|s| s.iteration_stats()),
        first_iteration,
    };
    (summary, advisory, slow)
}

/// Each host range's slowest rank (by mean inclusive time), where the ranks differ beyond
/// their noise: the slowest rank's mean over the fastest's by more than 1 % and by more than
/// three standard errors of the difference.
fn name_slowest_ranks(host: &mut [HostRange], ranks: &[RankRows], each: &[Findings]) {
    let per_rank: Vec<BTreeMap<&[String], &HostRange>> = each
        .iter()
        .map(|f| {
            f.host_ranges
                .iter()
                .map(|r| (r.path.as_slice(), r))
                .collect()
        })
        .collect();
    for range in host.iter_mut() {
        let present: Vec<(u64, &HostRange)> = ranks
            .iter()
            .zip(&per_rank)
            .filter_map(|(r, m)| m.get(range.path.as_slice()).map(|h| (r.rank, *h)))
            .collect();
        if present.len() < 2 {
            continue;
        }
        let mean = |h: &HostRange| h.inclusive.mean_ns;
        let se = |h: &HostRange| h.inclusive.stddev_ns / (h.instances.max(1) as f64).sqrt();
        let slowest = present
            .iter()
            .max_by(|a, b| mean(a.1).total_cmp(&mean(b.1)));
        let fastest = present
            .iter()
            .min_by(|a, b| mean(a.1).total_cmp(&mean(b.1)));
        if let (Some(&(rank, slow)), Some(&(_, fast))) = (slowest, fastest) {
            let gap = mean(slow) - mean(fast);
            let noise = 3.0 * (se(slow).powi(2) + se(fast).powi(2)).sqrt();
            if gap > 0.01 * mean(fast) && gap > noise {
                range.slowest_rank = Some(rank);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::gpu_work::KernelLaunch;
    use crate::reports::ApiCall;

    fn call(corr_id: u64, pid: u32) -> ApiCall {
        ApiCall {
            start_ns: 0,
            end_ns: 1,
            corr_id,
            pid,
            tid: pid,
        }
    }

    fn kernel(corr_id: u64, device: u32) -> KernelLaunch {
        KernelLaunch {
            corr_id,
            start_ns: 2,
            duration_ns: 1,
            name: NameId(0),
            device,
        }
    }

    /// A process's devices come from its calls' kernels; a correlation id two processes share
    /// and a kernel of no known device tell nothing.
    #[test]
    fn each_process_launched_on_the_devices_of_its_kernels() {
        let names = Interner::new();
        let api = [
            call(1, 10),
            call(2, 10),
            call(3, 20),
            call(4, 20),
            call(4, 30),
        ];
        let kernels = [
            kernel(1, 1),
            kernel(2, 1),
            kernel(3, 0),
            kernel(4, 5),
            kernel(9, 7),
            kernel(3, NO_DEVICE),
        ];
        let launches = Launches {
            api: &api,
            kernels: &kernels,
            kernel_rows: 6,
            names: &names,
            report: "cuda_api_trace",
            base_names: Default::default(),
            copies: None,
        };
        let by_process = devices_by_process(&launches);
        assert_eq!(
            by_process,
            BTreeMap::from([(10, BTreeSet::from([1])), (20, BTreeSet::from([0]))])
        );
    }

    /// Ranks are numbered by device only when every process has a device of its own.
    #[test]
    fn ranks_by_device_only_when_each_has_its_own() {
        let of = |list: &[(u32, &[u32])]| -> BTreeMap<u32, BTreeSet<u32>> {
            list.iter()
                .map(|(pid, d)| (*pid, d.iter().copied().collect()))
                .collect()
        };
        // the usual cuda:LOCAL_RANK, started in another order
        assert_eq!(
            rank_devices(&[10, 20], &of(&[(10, &[1]), (20, &[0])])),
            (vec![Some(1), Some(0)], true)
        );
        // sharing a device: its device, numbered by PID
        assert_eq!(
            rank_devices(&[10, 20], &of(&[(10, &[0]), (20, &[0])])),
            (vec![Some(0), Some(0)], false)
        );
        // a process on two devices, or with no GPU work
        assert_eq!(
            rank_devices(&[10, 20], &of(&[(10, &[0, 1]), (20, &[2])])),
            (vec![None, Some(2)], false)
        );
        assert_eq!(
            rank_devices(&[10, 20], &BTreeMap::new()),
            (vec![None, None], false)
        );
    }
}
