//! One run reduced to what the comparison needs: its key, its conditions, one value per
//! measure (the median of its counted iterations), each range's time per counted iteration,
//! its GPU work's totals, and (for the within-pair interval) its per-iteration durations.
//!
//! A base branch's history can be a hundred runs of tens of thousands of iterations each, so
//! each analysis is reduced as soon as it is read and dropped: what is kept is a few numbers
//! per range and two lists of durations. It is read as a [`Recorded`], which keeps of the
//! iterations only those two lists.

use super::work_totals::work_totals;
pub use super::work_totals::WorkTotals;
use std::collections::BTreeMap;
use std::fmt;

use serde::de::{IgnoredAny, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::Value;

use super::conditions;
use nsys_gate_core::artifact::comparison::{MeasureName, RunKey, RunRef};
use nsys_gate_core::artifact::{
    self, Advice, Analysis, CiRun, Environment, Gate, GpuProjectedRange, GpuProjectedRangeGroup,
    GpuWork, HostRange, HostRangeGroup, IterationSummary, Provenance, Rank, Run, SteadyState,
    Warning, WarningCode,
};

/// An analysis.json as the comparison reads it ([`crate::load::each`]): every member of an
/// [`Analysis`], read and checked as `Analysis` reads it, except the iterations. Of those only
/// the counted iterations' host inclusive and GPU-projected durations are kept, as they are
/// read; each iteration's other members must be there, as in `Analysis`, but are skipped
/// unread (their types are not checked). An analysis of 20,000 iterations is about 7 MB of
/// JSON, nearly all of it iterations: read this way it takes about 10 % fewer instructions
/// than the whole `Analysis`, and no list of iterations is built.
#[derive(Debug, Deserialize)]
#[serde(rename = "Analysis")]
pub struct Recorded {
    pub schema_version: u32,
    pub provenance: Provenance,
    pub run: Run,
    // Read only to be checked, as `Analysis` checks it: the comparison refuses what `report`
    // refuses (likewise the range groups and the advice).
    #[serde(rename = "gate")]
    _gate: Gate,
    pub warnings: Vec<Warning>,
    pub iteration_summary: IterationSummary,
    iterations: Counted,
    pub host_ranges: Vec<HostRange>,
    pub gpu_projected_ranges: Vec<GpuProjectedRange>,
    #[serde(default, rename = "host_range_groups")]
    _host_range_groups: Vec<HostRangeGroup>,
    #[serde(default, rename = "gpu_projected_range_groups")]
    _gpu_projected_range_groups: Vec<GpuProjectedRangeGroup>,
    #[serde(default)]
    pub gpu_work: Option<GpuWork>,
    #[serde(default, rename = "advice")]
    _advice: Vec<Advice>,
    #[serde(default)]
    pub label: Option<String>,
    #[serde(default)]
    pub ranks: Option<Vec<Rank>>,
    pub environment: Option<Environment>,
    #[serde(default)]
    pub steady_state: Option<SteadyState>,
}

/// The counted iterations' durations, in index order: `iterations` read without keeping it.
#[derive(Debug, Default)]
struct Counted {
    /// Host inclusive durations.
    host: Vec<f64>,
    /// GPU-projected durations, of those with a GPU projection.
    gpu: Vec<f64>,
}

impl<'de> Deserialize<'de> for Counted {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_seq(CountedVisitor)
    }
}

struct CountedVisitor;

impl<'de> Visitor<'de> for CountedVisitor {
    type Value = Counted;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a sequence")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Counted, A::Error> {
        let mut counted = Counted::default();
        while let Some(i) = seq.next_element::<IterationRead>()? {
            if i.complete && !i.duplicate {
                counted.host.push(i.host.inclusive_ns as f64);
                if let Some(gpu) = i.gpu_projection {
                    counted.gpu.push(gpu.projected_ns as f64);
                }
            }
        }
        // Kept for every base run until the comparison: not the half-empty tail of doubling.
        counted.host.shrink_to_fit();
        counted.gpu.shrink_to_fit();
        Ok(counted)
    }
}

/// An [`artifact::Iteration`] as [`Recorded`] reads it: the members it does not use are
/// required and skipped.
#[derive(Deserialize)]
#[serde(rename = "Iteration")]
struct IterationRead {
    #[serde(rename = "index")]
    _index: IgnoredAny,
    #[serde(rename = "range_id")]
    _range_id: IgnoredAny,
    #[serde(rename = "pid")]
    _pid: IgnoredAny,
    #[serde(rename = "tid")]
    _tid: IgnoredAny,
    complete: bool,
    duplicate: bool,
    host: HostRead,
    gpu_projection: Option<GpuRead>,
}

/// [`artifact::IterationHost`], as [`IterationRead`].
#[derive(Deserialize)]
#[serde(rename = "IterationHost")]
struct HostRead {
    #[serde(rename = "start_ns")]
    _start_ns: IgnoredAny,
    #[serde(rename = "end_ns")]
    _end_ns: IgnoredAny,
    inclusive_ns: i64,
    #[serde(rename = "exclusive_ns")]
    _exclusive_ns: IgnoredAny,
    #[serde(rename = "child_total_ns")]
    _child_total_ns: IgnoredAny,
}

/// [`artifact::IterationGpu`], as [`IterationRead`].
#[derive(Deserialize)]
#[serde(rename = "IterationGpu")]
struct GpuRead {
    #[serde(rename = "start_ns")]
    _start_ns: IgnoredAny,
    #[serde(rename = "end_ns")]
    _end_ns: IgnoredAny,
    projected_ns: i64,
    #[serde(rename = "gpu_operation_count")]
    _gpu_operation_count: IgnoredAny,
}

/// What a [`RunLevel`] is made of, borrowed from an [`Analysis`] or a [`Recorded`].
struct Parts<'a> {
    provenance: &'a Provenance,
    run: &'a Run,
    warnings: &'a [Warning],
    iteration_summary: &'a IterationSummary,
    host_ranges: &'a [HostRange],
    gpu_projected_ranges: &'a [GpuProjectedRange],
    gpu_work: Option<&'a GpuWork>,
    label: Option<&'a String>,
    ranks: Option<&'a [Rank]>,
    environment: Option<&'a Environment>,
    steady_state: Option<&'a SteadyState>,
}

/// How a rank is named as an item of the comparison's tables: `rank 2`.
pub const RANK_ITEM: &str = "rank ";

/// A run as the comparison uses it.
#[derive(Debug, Clone, PartialEq)]
pub struct RunLevel {
    pub run: RunRef,
    pub key: RunKey,
    /// What the run recorded for each condition.
    pub conditions: conditions::Recorded,
    /// Whether nsys made a GPU projection for the run.
    pub gpu_available: bool,
    /// Counted iterations.
    pub iterations: u64,
    /// The median host inclusive time of the counted iterations.
    pub host_inclusive_ns: Option<f64>,
    /// The median GPU-projected time of the counted iterations that launched GPU work.
    pub gpu_projected_ns: Option<f64>,
    /// Host exclusive time per counted iteration, by scoped range name.
    pub host_ranges: BTreeMap<String, f64>,
    /// GPU-projected time per counted iteration, by scoped range name (empty without a
    /// projection).
    pub gpu_ranges: BTreeMap<String, f64>,
    /// The capture's kernels by name and memory copies by kind, total time of each; `None`
    /// when the run records no GPU work.
    pub gpu_work: Option<WorkTotals>,
    /// A distributed run's ranks: each rank's median host inclusive time, by `rank N` (empty
    /// for a run of one process).
    pub ranks: BTreeMap<String, f64>,
    /// The counted iterations' host inclusive durations, in index order.
    pub host_samples: Vec<f64>,
    /// The counted iterations' GPU-projected durations (those that launched GPU work).
    pub gpu_samples: Vec<f64>,
    /// `auto`: the CI run (GitHub's workflow run, GitLab's pipeline) whose artifact the
    /// analysis came from, and when the forge created it.
    pub ci_run_id: Option<u64>,
    pub created_at: Option<String>,
    /// The CI run the analysis was made in (`provenance.ci_run`).
    pub ci_run: Option<CiRun>,
    /// The CI runner it ran on (`provenance.runner`), followed by the UUIDs of the GPUs that
    /// ran its work when the trace records them (`environment.gpus[].uuid`): two GPUs of one
    /// host are two runners. With `--baseline auto` the name is the forge's
    /// ([`RunLevel::with_forge_runner`]).
    pub runner: Option<String>,
    /// The UUIDs of the GPUs that ran its work, as `runner` ends with them (comma-separated).
    pub gpu_uuids: Option<String>,
    /// The spread of the counted iterations' host inclusive and GPU-projected durations
    /// (the robust standard deviation of their logarithms): how well the run's median knows
    /// its own value.
    pub host_iteration_sd: Option<f64>,
    pub gpu_iteration_sd: Option<f64>,
    /// Why the run's numbers cannot be true (a counted iteration of zero or negative
    /// duration, no counted iteration, a negative range total); `None` when they can.
    pub invalid: Option<String>,
    /// Its range groups over the steady state (the counted iterations but the slow ones, as
    /// the report's tables show them).
    pub steady: Steady,
    /// Each range's instances in the counted iterations (host, GPU-projected), by name.
    pub host_instances: BTreeMap<String, u64>,
    pub gpu_instances: BTreeMap<String, u64>,
}

/// A run's range groups over its steady state (analysis.json's `steady_state`).
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Steady {
    /// No counted iteration is slow: the steady state is every counted iteration.
    #[default]
    Every,
    /// Some are left out: each group's time per steady iteration (host exclusive,
    /// GPU-projected), by group.
    Own {
        left_out: u64,
        host: BTreeMap<String, f64>,
        gpu: BTreeMap<String, f64>,
    },
    /// Slow iterations without `steady_state`: an analysis.json written before it, or a
    /// distributed run (whose tables hold every counted iteration).
    Unknown,
}

/// Which history point a base run belongs to: the runs of one CI run (or, with `--baseline
/// auto`, of one workflow run) are repeats of one point; a run recorded outside CI is a point
/// of its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PointKey {
    Workflow(u64),
    Ci(CiRun),
    Own(usize),
}

/// The runner as the comparison's runner model tells runners apart: the runner's name and the
/// physical GPUs (`NAME GPU-…`, the UUIDs alone outside CI); the name alone when the trace
/// records no UUID.
fn runner(name: Option<&str>, gpus: Option<&str>) -> Option<String> {
    match (name, gpus) {
        (Some(name), Some(gpus)) => Some(format!("{name} {gpus}")),
        (name, None) => name.map(str::to_owned),
        (None, Some(gpus)) => Some(gpus.to_owned()),
    }
}

/// The UUIDs of the GPUs the trace records (`environment.gpus[].uuid`), comma-separated.
fn gpu_uuids(environment: Option<&Environment>) -> Option<String> {
    let uuids: Vec<&str> = environment
        .iter()
        .flat_map(|e| &e.gpus)
        .filter_map(|g| g.uuid.as_deref())
        .collect();
    (!uuids.is_empty()).then(|| uuids.join(","))
}

impl RunLevel {
    /// The commit the CI run was made on, as the forge says (a file can name any commit): set
    /// as the run's and as its `git_commit` condition. Returns the commit the file named.
    pub fn with_forge_commit(&mut self, commit: &str) -> Option<String> {
        self.conditions.set(
            &nsys_gate_core::artifact::comparison::ConditionName::GitCommit,
            Value::String(commit.to_owned()),
        );
        self.run.git_commit.replace(commit.to_owned())
    }

    /// The runner the CI run ran on, as the forge says (`None`: it names none), in place of
    /// the file's `provenance.runner` (a file can name any runner, the head's among them);
    /// the GPUs' UUIDs stay the trace's. Returns the runner name the file gave.
    pub fn with_forge_runner(&mut self, name: Option<&str>) -> Option<String> {
        let claimed = self.claimed_runner();
        self.runner = runner(name, self.gpu_uuids.as_deref());
        claimed
    }

    /// The runner name the run gives (the file's `provenance.runner`, until
    /// [`RunLevel::with_forge_runner`] replaces it), without the GPUs' UUIDs.
    pub fn claimed_runner(&self) -> Option<String> {
        match (&self.runner, &self.gpu_uuids) {
            (Some(runner), Some(gpus)) => runner
                .strip_suffix(gpus.as_str())
                .and_then(|n| n.strip_suffix(' '))
                .map(str::to_owned),
            (runner, None) => runner.clone(),
            (None, Some(_)) => None,
        }
    }

    /// `analysis` (read from `path`, as people should see it) reduced.
    pub fn of(analysis: &Analysis, path: &str) -> RunLevel {
        let host_samples = analysis
            .counted_iterations()
            .map(|i| i.host.inclusive_ns as f64)
            .collect();
        let gpu_samples = analysis
            .counted_iterations()
            .filter_map(|i| i.gpu_projection.as_ref().map(|g| g.projected_ns as f64))
            .collect();
        let parts = Parts {
            provenance: &analysis.provenance,
            run: &analysis.run,
            warnings: &analysis.warnings,
            iteration_summary: &analysis.iteration_summary,
            host_ranges: &analysis.host_ranges,
            gpu_projected_ranges: &analysis.gpu_projected_ranges,
            gpu_work: analysis.gpu_work.as_ref(),
            label: analysis.label.as_ref(),
            ranks: analysis.ranks.as_deref(),
            environment: analysis.environment.as_ref(),
            steady_state: analysis.steady_state.as_ref(),
        };
        parts.level(path, host_samples, gpu_samples)
    }

    /// [`RunLevel::of`] an analysis read as a [`Recorded`]: the same run level.
    pub fn read(recorded: Recorded, path: &str) -> RunLevel {
        let parts = Parts {
            provenance: &recorded.provenance,
            run: &recorded.run,
            warnings: &recorded.warnings,
            iteration_summary: &recorded.iteration_summary,
            host_ranges: &recorded.host_ranges,
            gpu_projected_ranges: &recorded.gpu_projected_ranges,
            gpu_work: recorded.gpu_work.as_ref(),
            label: recorded.label.as_ref(),
            ranks: recorded.ranks.as_deref(),
            environment: recorded.environment.as_ref(),
            steady_state: recorded.steady_state.as_ref(),
        };
        let Counted { host, gpu } = recorded.iterations;
        parts.level(path, host, gpu)
    }

    /// The run's value of a measure.
    pub fn value(&self, measure: MeasureName) -> Option<f64> {
        match measure {
            MeasureName::HostInclusive => self.host_inclusive_ns,
            MeasureName::GpuProjected => self.gpu_projected_ns.filter(|_| self.gpu_available),
        }
    }

    /// The run's counted iterations' durations of a measure, in index order.
    pub fn samples(&self, measure: MeasureName) -> &[f64] {
        match measure {
            MeasureName::HostInclusive => &self.host_samples,
            MeasureName::GpuProjected => &self.gpu_samples,
        }
    }

    /// The point of a history this run belongs to; `index` is its place among the runs, for
    /// a run that is a point of its own.
    pub fn point_key(&self, index: usize) -> PointKey {
        match (self.ci_run_id, &self.ci_run) {
            (Some(id), _) => PointKey::Workflow(id),
            (None, Some(ci)) => PointKey::Ci(ci.clone()),
            (None, None) => PointKey::Own(index),
        }
    }

    /// The spread of a measure's iterations (see [`RunLevel::host_iteration_sd`]).
    pub fn iteration_sd(&self, measure: MeasureName) -> Option<f64> {
        match measure {
            MeasureName::HostInclusive => self.host_iteration_sd,
            MeasureName::GpuProjected => self.gpu_iteration_sd.filter(|_| self.gpu_available),
        }
    }
}

impl Parts<'_> {
    /// The run level, with the counted iterations' host inclusive durations and those of
    /// their GPU-projected durations there are (left out without a GPU projection).
    fn level(&self, path: &str, host_samples: Vec<f64>, mut gpu_samples: Vec<f64>) -> RunLevel {
        let gpu_available = artifact::gpu_projection_available(self.provenance, self.warnings);
        if !gpu_available {
            gpu_samples = Vec::new();
        }
        let counted = self.iteration_summary.counted();
        let per_iteration = |total: i64| {
            if counted == 0 {
                0.0
            } else {
                total as f64 / counted as f64
            }
        };
        RunLevel {
            run: self.run_ref(path),
            key: self.key(),
            ranks: self
                .ranks
                .unwrap_or_default()
                .iter()
                .filter_map(|r| {
                    let median = r.iteration_summary.host_inclusive.as_ref()?.median_ns;
                    Some((format!("{RANK_ITEM}{}", r.rank), median))
                })
                .collect(),
            conditions: conditions::recorded(conditions::Sources {
                run: self.run,
                provenance: self.provenance,
                gpu_work: self.gpu_work,
                environment: self.environment,
                ranks: self.ranks,
            }),
            gpu_available,
            iterations: counted,
            host_inclusive_ns: median(&host_samples),
            gpu_projected_ns: median(&gpu_samples),
            host_ranges: self
                .host_ranges
                .iter()
                .map(|r| (r.name.clone(), per_iteration(r.exclusive.total_ns)))
                .collect(),
            gpu_ranges: if gpu_available {
                self.gpu_projected_ranges
                    .iter()
                    .map(|r| (r.name.clone(), per_iteration(r.projected.total_ns)))
                    .collect()
            } else {
                BTreeMap::new()
            },
            gpu_work: self.gpu_work.map(work_totals),
            invalid: invalid(&host_samples, &gpu_samples, self.host_ranges, counted),
            host_iteration_sd: iteration_sd(&host_samples),
            gpu_iteration_sd: iteration_sd(&gpu_samples),
            host_samples,
            gpu_samples,
            ci_run_id: None,
            created_at: None,
            ci_run: self.provenance.ci_run.clone(),
            runner: runner(
                self.provenance.runner.as_deref(),
                gpu_uuids(self.environment).as_deref(),
            ),
            gpu_uuids: gpu_uuids(self.environment),
            steady: self.steady(gpu_available),
            host_instances: self
                .host_ranges
                .iter()
                .map(|r| (r.name.clone(), r.instances))
                .collect(),
            gpu_instances: if gpu_available {
                self.gpu_projected_ranges
                    .iter()
                    .map(|r| (r.name.clone(), r.instances))
                    .collect()
            } else {
                BTreeMap::new()
            },
        }
    }

    /// The run's range groups over its steady state.
    fn steady(&self, gpu_available: bool) -> Steady {
        let Some(s) = self.steady_state else {
            let slow = self.warnings.iter().any(|w| {
                w.code == WarningCode::SlowIterations
                    && w.iterations.as_ref().is_some_and(|i| !i.is_empty())
            });
            return if slow { Steady::Unknown } else { Steady::Every };
        };
        let count = s.host_inclusive.count;
        let per_iteration = |total: i64| {
            if count == 0 {
                0.0
            } else {
                total as f64 / count as f64
            }
        };
        Steady::Own {
            left_out: s.left_out.len() as u64,
            host: s
                .host_range_groups
                .iter()
                .map(|g| (g.group.clone(), per_iteration(g.exclusive.total_ns)))
                .collect(),
            gpu: if gpu_available {
                s.gpu_projected_range_groups
                    .iter()
                    .map(|g| (g.group.clone(), per_iteration(g.projected.total_ns)))
                    .collect()
            } else {
                BTreeMap::new()
            },
        }
    }

    /// The run as the comparison names it.
    fn run_ref(&self, path: &str) -> RunRef {
        RunRef {
            profile_name: self.run.profile_name.clone(),
            target: target_name(self.run),
            run_id: self.run.run_id.clone(),
            git_commit: self.run.git_commit.clone(),
            analysis_path: path.to_owned(),
        }
    }

    /// The run's key: profile, target, and its leg (the label, else the GPU names).
    fn key(&self) -> RunKey {
        let gpus = self
            .gpu_work
            .map(|w| w.gpu_names().join(", "))
            .filter(|n| !n.is_empty());
        RunKey {
            profile_name: self.run.profile_name.clone(),
            target: target_name(self.run),
            leg: self.label.cloned().or(gpus),
        }
    }
}

/// `run.target.name`, when the target is a mapping with a string name.
pub fn target_name(run: &Run) -> Option<String> {
    run.target
        .as_ref()
        .and_then(|t| t.get("name"))
        .and_then(Value::as_str)
        .map(str::to_owned)
}

/// Why a run's numbers cannot be true, if they cannot: a duration is never zero or negative,
/// a range's total never negative, and a run without a counted iteration has no value.
fn invalid(host: &[f64], gpu: &[f64], ranges: &[HostRange], counted: u64) -> Option<String> {
    if counted == 0 || host.is_empty() {
        return Some("no counted iteration".to_owned());
    }
    if host.iter().chain(gpu).any(|&d| d <= 0.0 || !d.is_finite()) {
        return Some("a counted iteration lasted zero or less".to_owned());
    }
    if ranges
        .iter()
        .any(|r| r.exclusive.total_ns < 0 || r.inclusive.total_ns < 0)
    {
        return Some("a range's total time is negative".to_owned());
    }
    None
}

/// The robust standard deviation of the logarithms of durations (their median absolute
/// deviation, scaled); `None` for fewer than three or any duration not positive.
fn iteration_sd(samples: &[f64]) -> Option<f64> {
    if samples.len() < 3 || samples.iter().any(|&d| d <= 0.0) {
        return None;
    }
    let logs: Vec<f64> = samples.iter().map(|d| d.ln()).collect();
    Some(super::outliers::mad_sd(&logs))
}

/// The median of durations, as the analysis computes medians; `None` when there are none.
fn median(values: &[f64]) -> Option<f64> {
    // Whole nanoseconds, as the analysis has them.
    let mut whole: Vec<f64> = values.iter().map(|&v| v as i64 as f64).collect();
    (!whole.is_empty()).then(|| nsys_gate_core::stats::median_in_place(&mut whole))
}

#[cfg(test)]
mod tests {
    use super::*;
    use nsys_gate_core::artifact::GpuInfo;

    /// Issue 37 item 1: the forge's runner replaces the file's name; the GPUs stay the trace's.
    #[test]
    fn the_forges_runner_replaces_the_files_name_and_keeps_the_gpus() {
        let mut analysis = nsys_gate_core::artifact::fake::analysis(&[100, 110, 105], &[], false);
        analysis.provenance.runner = Some("gpu runner h100".into());
        let gpu = |uuid: &str| GpuInfo {
            id: 0,
            name: None,
            uuid: Some(uuid.into()),
            sm_count: None,
            max_clock_mhz: None,
            memory_bytes: None,
            compute_capability: None,
            clock_mhz: None,
        };
        analysis.environment = Some(Environment {
            gpus: vec![gpu("GPU-aaaa"), gpu("GPU-bbbb")],
            ..Environment::default()
        });
        let mut level = RunLevel::of(&analysis, "a/analysis.json");
        assert_eq!(
            level.runner.as_deref(),
            Some("gpu runner h100 GPU-aaaa,GPU-bbbb")
        );
        let claimed = level.with_forge_runner(Some("gpu-a100"));
        assert_eq!(claimed.as_deref(), Some("gpu runner h100"));
        assert_eq!(level.runner.as_deref(), Some("gpu-a100 GPU-aaaa,GPU-bbbb"));
        // The forge names none: the GPUs alone.
        assert_eq!(level.with_forge_runner(None).as_deref(), Some("gpu-a100"));
        assert_eq!(level.runner.as_deref(), Some("GPU-aaaa,GPU-bbbb"));
        assert_eq!(level.with_forge_runner(Some("x")), None);

        // No UUIDs in the trace: the name alone.
        analysis.environment = None;
        let mut level = RunLevel::of(&analysis, "a/analysis.json");
        assert_eq!(
            level.with_forge_runner(Some("gpu-a100")).as_deref(),
            Some("gpu runner h100")
        );
        assert_eq!(level.runner.as_deref(), Some("gpu-a100"));
    }
}
