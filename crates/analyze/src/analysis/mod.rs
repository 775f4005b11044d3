//! From report rows to the numbers of `analysis.json`.
//!
//! Pure: takes the manifest's settings and the rows of the two nsys reports, returns the
//! iterations, statistics, range tables and warnings. Every rule here is the contract's
//! (section 3, "Reading the reports"); each rule lives in one module, whose comment says
//! which rules it owns:
//!
//! - `tree`: the ranges as a tree (a `RangeId` once, a `ParentId` in the report), walks;
//! - `capture`: the capture range(s), `capture_range_missing`, `capture_range_multiple`;
//! - `iterations`: the iteration pattern, which ranges are measured iterations, their
//!   order, duplicates, the counted set, `capture_range_exceeded`;
//! - `completeness`: whether a measured iteration is complete;
//! - `index_checks`: `missing_iterations`, `unexpected_iterations`, `duplicate_iterations`;
//! - `gpu`: the projection joined to the ranges, and the GPU warnings;
//! - `summary`: `iteration_summary` (statistics, first iteration, unattributed ranges) and
//!   `iterations[]`;
//! - `ranges`: `host_ranges[]` and `gpu_projected_ranges[]` by scoped name, the nesting
//!   limit and `nesting_truncated`;
//! - `timing_warnings`: `first_iteration_slow`, `high_variance`, `slow_iterations`;
//! - `gpu_work`: the GPU-work reports (kernels, memory copies, memsets, devices), the kernels
//!   attributed to ranges, `pageable_memory_copies`;
//! - `steady`: `steady_state`, the counted iterations but the slow ones, which advice rests on;
//! - `advice`: `advice[]`, the host-bound and GPU-bound ranges, from the range groups and the
//!   kernels of the GPU-bound ones;
//! - `clocks`: the SM clock over the counted iterations (GPU metrics), `gpu_clock_unsteady`;
//! - `wording`: how messages list indexes.
//!
//! [`apply_rules`] runs them in order, and holds the only threads: the order in which it adds
//! warnings is the order of [`Findings::warnings`].
//!
//! Nothing here recurses over the range tree: ranges nest as deep as a program pushes them
//! (10,000 levels is a test case), so walks use explicit stacks.

mod advice;
mod capture;
pub mod clocks;
mod completeness;
mod gpu;
pub mod gpu_work;
mod groups;
mod index_checks;
mod iterations;
mod ranges;
mod ranks;
pub mod stage_warnings;
mod steady;
mod summary;
mod timing_warnings;
mod tree;
mod wording;

#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};
use std::thread;

use regex::Regex;

use crate::reports::{GpuProjRow, Interner, PushPopRow};
use nsys_gate_core::artifact::{
    Advice, GpuProjectedRange, GpuProjectedRangeGroup, HostRange, HostRangeGroup, Iteration,
    IterationSummary, Rank, SteadyState, Warning,
};

pub use gpu_work::{KernelMix, Launches};
pub use iterations::full_match_regex;
pub use ranks::{devices_by_process, RankRows};

use gpu::GpuIndex;
use iterations::IterationIndexes;
use tree::Tree;

/// The manifest settings the analysis needs.
#[derive(Debug, Clone)]
pub struct Settings {
    pub capture_range: Option<String>,
    /// Full-match regex with exactly one capture group for the index.
    pub iteration_pattern: Regex,
    pub expected_iterations: u64,
    /// The warm-up passes the manifest records (`workload.warmup`), when it does: what a slow
    /// first iteration advises.
    pub warmup: Option<u64>,
    /// The manifest's `world_size`, when it gives one: the ranks a distributed run should have
    /// (a rank not found misses every index).
    pub world_size: Option<u64>,
}

/// The rows of both reports, and where they came from (for error messages).
pub struct Reports<'a> {
    pub names: &'a Interner,
    pub pushpop: &'a [PushPopRow],
    pub pushpop_path: &'a Path,
    /// `None` when nsys produced no GPU projection.
    pub gpu: Option<&'a [GpuProjRow]>,
    pub gpu_path: &'a Path,
    /// The CUDA API calls and the kernels they launched (`cuda_kern_exec_trace`, or
    /// `cuda_api_trace` with `cuda_gpu_trace`), when read: the kernels are then attributed to
    /// ranges.
    pub launches: Option<Launches<'a>>,
}

/// Everything the analysis found; the caller adds provenance, run settings and the gate.
#[derive(Debug, Clone, PartialEq)]
pub struct Findings {
    pub warnings: Vec<Warning>,
    pub iteration_summary: IterationSummary,
    pub iterations: Vec<Iteration>,
    pub host_ranges: Vec<HostRange>,
    pub gpu_projected_ranges: Vec<GpuProjectedRange>,
    pub host_range_groups: Vec<HostRangeGroup>,
    pub gpu_projected_range_groups: Vec<GpuProjectedRangeGroup>,
    /// The kernels of the counted iterations and of the largest GPU-projected ranges, when
    /// [`Reports::launches`] was given.
    pub kernel_mix: Option<KernelMix>,
    /// The range groups without the slow iterations (`None` when none is slow): what
    /// `advice` rests on.
    pub steady_state: Option<SteadyState>,
    /// What to look at (`advice`), over the steady state, with the kernels of the GPU-bound
    /// groups when [`Reports::launches`] was given.
    pub advice: Vec<Advice>,
    /// The ranks, when several processes each ran the iterations (`ranks`); `None` for one.
    /// Each rank's `trace` is left empty here: the caller knows the file.
    pub ranks: Option<Vec<Rank>>,
    /// Each rank's own iterations (in `ranks`' order), in its own trace's time: with one trace
    /// per rank, what each trace's GPU metrics are read over. Empty for one process.
    pub rank_iterations: Vec<Vec<Iteration>>,
}

/// Rows that are individually valid but do not fit together.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{}:{line}: column `{column}`: {message}",
    nsys_gate_core::text::shown_path(path)
)]
pub struct DataError {
    pub path: PathBuf,
    pub line: u32,
    pub column: &'static str,
    pub message: String,
}

/// Reads the reports' rows: the tree, the capture range, the measured iterations and their
/// checks, the GPU join, then (beside the range tables, on a second thread) the statistics,
/// the advice and the list of iterations.
///
/// When several processes each run the iterations (the ranks of a distributed run), each is
/// analysed on its own and the findings are steps (`ranks`).
pub fn apply_rules(settings: &Settings, reports: &Reports<'_>) -> Result<Findings, DataError> {
    match ranks::find(settings, reports.pushpop, reports.names) {
        Some(pids) => {
            let mut findings = ranks::analyse(settings, reports, &pids)?;
            let found: Vec<u64> = (0..pids.len() as u64).collect();
            findings
                .warnings
                .extend(ranks::missing_ranks(settings, &found, settings.world_size));
            Ok(findings)
        }
        None => analyse_rows(settings, reports, Scope::Process),
    }
}

/// The ranks of a run recorded one trace per rank: each rank's rows (`ranks`, their own range
/// ids), every rank's rows at once in `all` (range ids made distinct, a rank's PID its
/// position in `ranks`), and the ranks the run should have had (`world_size`: a rank without
/// a trace is `missing_iterations` for every index).
pub fn apply_rules_per_rank(
    settings: &Settings,
    all: &Reports<'_>,
    ranks: &[RankRows],
    world_size: Option<u64>,
) -> Result<Findings, DataError> {
    let mut findings = ranks::analyse_ranks(settings, all, ranks)?;
    findings.warnings.extend(ranks::missing_ranks(
        settings,
        &ranks.iter().map(|r| r.rank).collect::<Vec<_>>(),
        world_size,
    ));
    Ok(findings)
}

/// What [`analyse_rows`] reads: one process, or every rank at once (for the range tables over
/// every rank's iterations: the capture range once per process, an index once per process;
/// the warnings and statistics are the ranks' own then, and only the range tables' kept).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scope {
    Process,
    Ranks,
}

impl Scope {
    /// The timing warnings: none when every rank is read at once (the steps' are made apart).
    fn timing(
        self,
        timing: &timing_warnings::Counted<'_>,
        first: Option<&nsys_gate_core::artifact::FirstIteration>,
        warmup: Option<u64>,
    ) -> (Vec<Warning>, Option<Warning>) {
        match self {
            Scope::Process => timing.warnings(first, warmup),
            Scope::Ranks => (Vec::new(), None),
        }
    }

    /// Every rank at once keeps only the range tables' warning (`nesting_truncated`): the
    /// others are each rank's.
    fn kept(self, mut warnings: Vec<Warning>) -> Vec<Warning> {
        if self == Scope::Ranks {
            warnings.retain(|w| w.code == nsys_gate_core::artifact::WarningCode::NestingTruncated);
        }
        warnings
    }
}

fn analyse_rows(
    settings: &Settings,
    reports: &Reports<'_>,
    reading: Scope,
) -> Result<Findings, DataError> {
    let rows = reports.pushpop;
    let names = reports.names;
    // The pattern runs over the names while the tree is built.
    let (tree, matcher) = thread::scope(|scope| {
        let matcher = scope.spawn(|| IterationIndexes::new(&settings.iteration_pattern, names));
        let tree = Tree::build(rows, reports.pushpop_path);
        (
            tree,
            matcher.join().expect("the name matcher does not panic"),
        )
    });
    let tree = tree?;
    let mut warnings = Vec::new();

    let (captures, capture_warning) =
        capture::find(&tree, rows, names, settings.capture_range.as_deref());
    warnings.extend(capture_warning.filter(|_| reading == Scope::Process));

    let selected = iterations::select(&tree, rows, &matcher, &captures);
    warnings.extend(iterations::exceeded_warning(
        &tree, rows, &matcher, &captures, &selected,
    ));
    let mut measured = completeness::assess(&tree, rows, &selected, !captures.is_empty());
    iterations::order_and_mark_duplicates(&mut measured, rows, reading == Scope::Ranks);

    let expected = settings.expected_iterations;
    warnings.extend(index_checks::warnings(&measured, expected));

    let gpu = match reports.gpu {
        Some(gpu_rows) => Some(GpuIndex::build(gpu_rows, rows, &tree, reports.gpu_path)?),
        None => None,
    };
    let counted = iterations::counted(&measured);

    // The range tables take a walk of their own: on a second thread, beside the rest.
    thread::scope(|scope| {
        let tables = scope.spawn(|| {
            ranges::range_tables(
                &tree,
                rows,
                names,
                &counted,
                gpu.as_ref(),
                reports.launches.is_some(),
            )
        });

        let samples = summary::Samples::new(rows, &counted, gpu.as_ref());
        let first_iteration = summary::first_iteration(rows, &counted, &samples.host_inclusive);
        let timing = timing_warnings::Counted {
            rows,
            counted: &counted,
            host_inclusive: &samples.host_inclusive,
        };
        let (advisory, slow) = reading.timing(&timing, first_iteration.as_ref(), settings.warmup);
        warnings.extend(advisory);
        // The steady state's range tables take a walk of their own, here, beside the other
        // thread's (only when an iteration is slow).
        let steady = steady::split(&tree, rows, names, &counted, gpu.as_ref(), slow.as_ref());
        warnings.extend(slow);
        if let Some(g) = &gpu {
            warnings.extend(g.outside_ranges_warning());
            warnings.extend(g.idle_capture_warning(&captures));
            warnings.extend(g.idle_iterations_warning(&counted));
        }

        let unattributed = summary::unattributed_ranges(&tree, &captures, &measured);
        let iteration_summary = summary::iteration_summary(
            expected,
            &measured,
            unattributed,
            &samples,
            first_iteration,
        );
        let iteration_list = summary::iteration_list(rows, &measured, gpu.as_ref());
        let tables = tables.join().expect("the range tables do not panic");
        warnings.extend(tables.nesting);
        let host_range_groups = groups::host_groups(&tables.host);
        let gpu_projected_range_groups = groups::gpu_groups(&tables.gpu);
        let steady_state = steady.state(rows);
        // Advice rests on the steady state: never on one slow pass.
        let mut advice = advice::decide(
            &steady.advice_input(
                steady_state.as_ref(),
                advice::AdviceInput {
                    host: &tables.host,
                    host_groups: &host_range_groups,
                    gpu_groups: &gpu_projected_range_groups,
                    iterations_host_inclusive_ns: iteration_summary
                        .host_inclusive
                        .as_ref()
                        .map_or(0, |h| h.total_ns),
                    projection: gpu.is_some(),
                },
            ),
        );
        let mut kernel_mix = match (&reports.launches, &tables.scopes) {
            (Some(launches), Some(scopes)) => Some(gpu_work::kernel_mix(
                &tree,
                rows,
                &counted,
                scopes,
                launches,
                &gpu_work::MixInput {
                    host: &tables.host,
                    gpu: &tables.gpu,
                    host_groups: &host_range_groups,
                    gpu_groups: &gpu_projected_range_groups,
                    groups: &advice::kernel_groups(&advice),
                },
            )),
            _ => None,
        };
        if let Some(mix) = &mut kernel_mix {
            advice::attach_kernels(&mut advice, std::mem::take(&mut mix.groups));
        }
        Ok(Findings {
            warnings: reading.kept(warnings),
            iteration_summary,
            iterations: iteration_list,
            host_range_groups,
            gpu_projected_range_groups,
            host_ranges: tables.host,
            gpu_projected_ranges: tables.gpu,
            kernel_mix,
            steady_state,
            advice,
            ranks: None,
            rank_iterations: Vec::new(),
        })
    })
}
