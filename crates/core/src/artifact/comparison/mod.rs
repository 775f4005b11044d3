//! `comparison.json`, schema version 2: the current runs against the base branch's history,
//! written beside report.md and documented for users in `docs/comparison-json.md`.
//!
//! Deterministic like analysis.json: no wall-clock time of its own (the base runs' creation
//! times are the forge's data), every list in a fixed order. New optional fields may be added
//! within a schema version; nothing is renamed, removed or retyped.
//!
//! Schema changelog:
//! - 1: one base run against each current run; a verdict from the interval within that pair.
//! - 2: the base runs are a history: each run reduced to run-level statistics, the run-to-run
//!   noise learned from them (`history`, `method`), runs of one key combined (`heads`), a
//!   verdict per range, `noise_unknown`; the interval within the pair of runs kept as
//!   `measures[].within_pair`.

mod history;
mod items;

pub use self::history::{
    BaseRun, ChangePoint, Drift, HeadRunner, History, LeftOut, LeftOutReason, NewestMoved, RunMark,
};
pub use self::items::{
    GpuWorkChanges, IterationBasis, Member, RangeChange, RangeChanges, RangeOnly, RankChange,
    RankChanges, RankOnly, WorkBasis, WorkChange, WorkChanges, LARGEST_MEMBERS,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// `comparison.json`'s `schema_version`.
pub const COMPARISON_SCHEMA_VERSION: u32 = 2;

/// The comparison file's name, beside report.md.
pub const COMPARISON_FILE: &str = "comparison.json";

/// Runs of one side only listed in `unmatched_head` and in `unmatched_base`, at most.
pub const MAX_UNMATCHED: usize = 256;

/// Items listed in each list of a run's ranges (`changed`, `new`, `gone`) and GPU work
/// (`kernels`, `memory_copies`), at most.
pub const MAX_LISTED: usize = 1000;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    pub schema_version: u32,
    pub tool_version: String,
    /// Where the base runs came from.
    pub baseline: BaselineSource,
    /// How the verdicts were reached, with every setting.
    pub method: Method,
    /// Whatever kept a comparison from being made or complete, in words (no base run found,
    /// an artifact expired, a download that failed, …). Never an error.
    pub notes: Vec<String>,
    /// One per key of the current runs that has base runs of the same key, in the order of
    /// the current runs.
    pub runs: Vec<RunComparison>,
    /// Current runs with no base run of their key.
    pub unmatched_head: Vec<RunRef>,
    /// Keys of the base runs with no current run: the newest base run of each.
    pub unmatched_base: Vec<RunRef>,
    /// Current runs with no base run of their key that `unmatched_head` leaves out (it lists
    /// 256 at most); absent when none is.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unmatched_head_omitted: u64,
    /// Keys of base runs with no current run that `unmatched_base` leaves out (it lists 256
    /// at most: a base artifact can hold any keys); absent when none is.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unmatched_base_omitted: u64,
}

/// For `skip_serializing_if`: a count of items left out of a bounded list, absent when 0.
fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn is_one(n: &u64) -> bool {
    *n == 1
}

fn one() -> u64 {
    1
}

/// `path`: `--baseline PATH` (or `compare`'s BASE); `auto`: the artifacts of the base branch's
/// runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BaselineKind {
    Path,
    Auto,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BaselineSource {
    pub kind: BaselineKind,
    /// `path`: the paths given, oldest first.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub paths: Vec<String>,
    /// `auto`: the workflow whose runs were read (GitHub).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub workflow: Option<String>,
    /// `auto`: the job whose artifacts were read, in each pipeline (GitLab).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub job: Option<String>,
    /// `auto`: the branch whose push runs were read.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub branch: Option<String>,
    /// `auto`: the artifact's name.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub artifact: Option<String>,
    /// `auto` on GitHub: the workflow runs whose artifacts were read, newest first (the same
    /// runs as `ci_runs`, in GitHub's words).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub workflow_runs: Vec<WorkflowRunRef>,
    /// `auto`: the CI runs (GitHub's workflow runs, GitLab's pipelines) whose artifacts were
    /// read, newest first: each one point of the history.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub ci_runs: Vec<CiRunRef>,
    /// The analysis.json files read as base runs, as paths inside the PATHs or the artifacts.
    pub analyses: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkflowRunRef {
    pub id: u64,
    pub head_sha: String,
    pub head_branch: Option<String>,
    pub html_url: Option<String>,
    /// When the forge created the run (ISO 8601, as it says).
    pub created_at: Option<String>,
    /// The run's artifact.
    pub artifact_id: Option<u64>,
}

/// A CI run of the history, in the words of every forge.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CiRunRef {
    /// The workflow run's or the pipeline's id.
    pub id: u64,
    /// The commit it ran on.
    pub commit: String,
    pub branch: Option<String>,
    /// Its page.
    pub url: Option<String>,
    /// When the forge created it (ISO 8601, as it says).
    pub created_at: Option<String>,
    /// The artifact read (GitHub: the artifact's id; GitLab: the job's).
    pub artifact_id: Option<u64>,
}

/// The method and its settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Method {
    /// `prediction_interval`: each run reduced to one value per measure (the median of its
    /// counted iterations; for a range, its time per counted iteration); a head outside the
    /// Student-t prediction interval of the base runs' logarithms is `slower` or `faster`.
    pub name: String,
    /// The prediction interval's confidence (0.95).
    pub confidence: f64,
    /// Changes smaller than this (in %) are never `slower` or `faster`.
    pub noise_floor_pct: f64,
    /// Fewer usable base runs than this: `noise_unknown`.
    pub min_base_runs: u64,
    /// Per-range verdicts: the false-discovery rate over a run's ranges (Benjamini-Hochberg).
    pub ranges_false_discovery_rate: f64,
    /// The history's level shifts: a two-sample t test over every split, Bonferroni-corrected
    /// at this family-wise level.
    pub change_point_alpha: f64,
    /// Runs on each side of a level shift, at least.
    pub change_point_min_runs: u64,
    /// Each measure's verdict is at this level (two-sided): the comment's measures share
    /// `1 - confidence` equally (Bonferroni), this being the share of one when both are
    /// judged. Absent in files written before it was recorded.
    #[serde(default)]
    pub measure_alpha: Option<f64>,
    /// The run-to-run standard deviation is never taken as less than this (in %).
    #[serde(default)]
    pub spread_floor_pct: Option<f64>,
    /// History points left out as outliers: Rosner's generalized ESD test at this level.
    #[serde(default)]
    pub outlier_alpha: Option<f64>,
    /// Gross outliers, before the history's shape is looked for: this many robust standard
    /// deviations from their neighbours.
    #[serde(default)]
    pub gross_outlier_sds: Option<f64>,
    /// A drift of the base branch: a trend's slope at this family-wise level (Bonferroni over
    /// the trend's possible starts), over at least `drift_min_runs` points.
    #[serde(default)]
    pub drift_alpha: Option<f64>,
    #[serde(default)]
    pub drift_min_runs: Option<u64>,
    /// `true`: ranges are compared by group, as the report shows them (names that differ only
    /// in decimal numbers together, each run of digits written `#`); `false`: by exact name
    /// (`--exact-names`). Absent in files written before ranges were grouped (exact names).
    #[serde(default)]
    pub ranges_grouped: Option<bool>,
    /// A runner has a level of its own from this many base points on (fewer: it shares the
    /// others' level and faces the outlier test). Absent in files written before it.
    #[serde(default)]
    pub runner_min_points: Option<u64>,
    /// The F test that gives the head's runner a spread of its own, at this level.
    #[serde(default)]
    pub runner_spread_alpha: Option<f64>,
    /// The spread between runners added for a head on a runner the history barely knows, in
    /// noise floors.
    #[serde(default)]
    pub barely_known_runner_spread_floors: Option<f64>,
    /// Runners (none with more than half of the points) that make a pool whose spread holds
    /// their differences.
    #[serde(default)]
    pub pool_runners: Option<u64>,
    /// Deviates this close (relatively) are a tie in the outlier test: the older point goes.
    #[serde(default)]
    pub outlier_tie: Option<f64>,
    /// A table of fewer items than this takes each run's offset from its measure.
    #[serde(default)]
    pub table_own_offsets_min_items: Option<u64>,
}

/// A run as the comparison names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunRef {
    pub profile_name: String,
    /// `run.target.name` when the target has one.
    pub target: Option<String>,
    pub run_id: String,
    pub git_commit: Option<String>,
    /// The analysis.json this run was read from (or written to).
    pub analysis_path: String,
}

/// What makes runs comparable: the same profile, target and leg (the `--label`, else the GPU
/// names: the legs of a matrix share a profile and a run id).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct RunKey {
    pub profile_name: String,
    pub target: Option<String>,
    /// The run's label, else its GPUs' names joined with `, `; `null` when it has neither.
    pub leg: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunComparison {
    pub key: RunKey,
    /// The current runs of the key (the harness run more than once): combined.
    pub heads: Vec<RunRef>,
    /// The base run the conditions and the within-pair intervals compare with: the newest
    /// usable base run (the newest base run when none is usable).
    pub base: RunRef,
    /// The base runs: used, left out, and the history's last level shift.
    pub history: History,
    /// False when any judged condition of `base` differs from the head's.
    pub like_for_like: bool,
    /// Every condition of `base` and the first head run, judged ones first, in a fixed order.
    pub conditions: Vec<Condition>,
    /// `host_inclusive`, then `gpu_projected`.
    pub measures: Vec<Measure>,
    /// Host exclusive time per counted iteration, range by range.
    pub host_ranges: RangeChanges,
    /// GPU-projected time per counted iteration, range by range; `None` unless the head and
    /// the history have a GPU projection.
    pub gpu_ranges: Option<RangeChanges>,
    /// Capture-wide GPU work (kernels, memory copies) of `base` and the first head run; `None`
    /// unless both record it.
    pub gpu_work: Option<GpuWorkChanges>,
    /// Kernel by kernel (base name), time per counted iteration, each against its own history
    /// and under the ranges' false-discovery control; `None` unless the head and the history
    /// record kernels. Absent in files written before kernels were judged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernels: Option<WorkChanges>,
    /// Memory copies by kind, the same way.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_copies: Option<WorkChanges>,
    /// A distributed run's ranks, each rank's median host inclusive time against its own
    /// history, under the ranges' false-discovery control; `None` unless the head has ranks.
    /// Absent in files written before ranks were judged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ranks: Option<RankChanges>,
    /// Exposed communication device by device (`gpu_work.devices[].exposed_communication_ns`,
    /// each item named as the device, `NAME (ID)`), the same way; `None` unless the head and
    /// the history have a device that communicated. Absent in files written before it was
    /// judged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exposed_communication: Option<WorkChanges>,
    /// Most of the host ranges moving alike (as on a slower runner): said once here, and each
    /// range then judged by how it moved beyond it; `null` when they did not. No verdict of
    /// its own: the measures carry it.
    #[serde(default)]
    pub run_wide: Option<RunWide>,
    /// The compared keys of this profile (its legs: GPUs or labels) that share its error
    /// budget: each is judged at this share of the measures' level and of the false-discovery
    /// rate. 1 (absent) for a profile of one leg, and in files written before it was shared.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub budget_legs: u64,
}

/// The whole run moving: most range groups by about the same change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunWide {
    /// The median change of the groups, in %.
    pub change_pct: f64,
    /// Groups that moved at least the noise floor that way.
    pub groups_moved: u64,
    /// Groups judged.
    pub groups: u64,
}

/// The conditions, in the order they are listed. The first nine are judged: any difference
/// makes the comparison "not like for like" and leaves a base run out of the history. The
/// nsys-gate version and the Git commit are shown, never judged. Then the run's own settings:
/// every key under the manifest's `workload` (but `warmup` and `iterations`, conditions of
/// their own) is judged, named `workload.KEY`; a top-level manifest key nsys-gate does not
/// know (kept in `run.extra`) is named `manifest.KEY`, shown when it differs and judged only
/// when the comparison is asked to (`--condition KEY`): real manifests carry keys that differ
/// on every run (`ci: {job, attempt}`).
///
/// The environment the trace recorded follows (analysis.json's `environment`): the GPUs that
/// ran work (`gpu`: names, SM counts and memory), the driver (`driver`) and the CUDA version
/// it supports (`cuda`) are judged, each only when both runs record it; the CPU (`cpu`) and
/// the operating system (`os`) are shown, judged only when the comparison is asked to
/// (`--condition cpu`, `--condition os`).
///
/// Written as a string in comparison.json: `target`, …, `git_commit`, `workload.KEY`,
/// `manifest.KEY`, `gpu`, `driver`, `cuda`, `clock`, `cpu`, `os`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ConditionName {
    /// The ranks of a distributed run (the manifest's `world_size`, else the ranks found; 1
    /// for a run of one process): listed, and judged, when either run has ranks.
    WorldSize,
    Target,
    DataSource,
    Device,
    Synchronization,
    CaptureRange,
    IterationPattern,
    Warmup,
    Iterations,
    NsysVersion,
    ToolVersion,
    GitCommit,
    /// A key under the manifest's `workload`.
    Workload(String),
    /// A top-level key of the manifest that nsys-gate does not know.
    Manifest(String),
    Gpu,
    Driver,
    Cuda,
    /// The median SM clock over the counted iterations (GPU metrics), in MHz.
    Clock,
    Cpu,
    Os,
}

impl ConditionName {
    /// Every condition every run has, in the order listed (the run's own keys follow them).
    pub const ALL: [ConditionName; 17] = [
        ConditionName::Target,
        ConditionName::DataSource,
        ConditionName::Device,
        ConditionName::Synchronization,
        ConditionName::CaptureRange,
        ConditionName::IterationPattern,
        ConditionName::Warmup,
        ConditionName::Iterations,
        ConditionName::NsysVersion,
        ConditionName::ToolVersion,
        ConditionName::GitCommit,
        ConditionName::Gpu,
        ConditionName::Driver,
        ConditionName::Cuda,
        ConditionName::Clock,
        ConditionName::Cpu,
        ConditionName::Os,
    ];

    /// Whether a difference makes the comparison "not like for like" (a `manifest.KEY`, `cpu`
    /// and `os` only when the comparison is asked to judge it: see [`Condition::judged`]).
    pub fn judged(&self) -> bool {
        !matches!(
            self,
            ConditionName::ToolVersion
                | ConditionName::GitCommit
                | ConditionName::Manifest(_)
                | ConditionName::Cpu
                | ConditionName::Os
        )
    }

    /// The name as comparison.json writes it.
    pub fn as_str(&self) -> std::borrow::Cow<'static, str> {
        use std::borrow::Cow;
        Cow::Borrowed(match self {
            ConditionName::Target => "target",
            ConditionName::DataSource => "data_source",
            ConditionName::Device => "device",
            ConditionName::Synchronization => "synchronization",
            ConditionName::CaptureRange => "capture_range",
            ConditionName::IterationPattern => "iteration_pattern",
            ConditionName::Warmup => "warmup",
            ConditionName::Iterations => "iterations",
            ConditionName::NsysVersion => "nsys_version",
            ConditionName::ToolVersion => "tool_version",
            ConditionName::GitCommit => "git_commit",
            ConditionName::WorldSize => "world_size",
            ConditionName::Gpu => "gpu",
            ConditionName::Driver => "driver",
            ConditionName::Cuda => "cuda",
            ConditionName::Clock => "clock",
            ConditionName::Cpu => "cpu",
            ConditionName::Os => "os",
            ConditionName::Workload(key) => return Cow::Owned(format!("workload.{key}")),
            ConditionName::Manifest(key) => return Cow::Owned(format!("manifest.{key}")),
        })
    }

    /// For people (untrusted for the run's own keys: escape it where it is shown).
    pub fn label(&self) -> std::borrow::Cow<'static, str> {
        use std::borrow::Cow;
        Cow::Borrowed(match self {
            ConditionName::Target => "target",
            ConditionName::DataSource => "data source and record ids",
            ConditionName::Device => "device",
            ConditionName::Synchronization => "synchronization policy",
            ConditionName::CaptureRange => "capture range",
            ConditionName::IterationPattern => "iteration pattern",
            ConditionName::Warmup => "warm-up",
            ConditionName::Iterations => "iteration count",
            ConditionName::NsysVersion => "Nsight Systems version",
            ConditionName::ToolVersion => "nsys-gate version",
            ConditionName::GitCommit => "Git commit",
            ConditionName::WorldSize => "world size (ranks)",
            ConditionName::Gpu => "GPU",
            ConditionName::Driver => "driver",
            ConditionName::Cuda => "CUDA version",
            ConditionName::Clock => "SM clock",
            ConditionName::Cpu => "CPU",
            ConditionName::Os => "operating system",
            ConditionName::Workload(_) | ConditionName::Manifest(_) => return self.as_str(),
        })
    }

    /// The name written `name` (as [`ConditionName::as_str`] writes it), if it is one.
    pub fn from_name(name: &str) -> Option<ConditionName> {
        if let Some(key) = name.strip_prefix("workload.") {
            return Some(ConditionName::Workload(key.to_owned()));
        }
        if let Some(key) = name.strip_prefix("manifest.") {
            return Some(ConditionName::Manifest(key.to_owned()));
        }
        if name == "world_size" {
            return Some(ConditionName::WorldSize);
        }
        ConditionName::ALL.into_iter().find(|c| c.as_str() == name)
    }
}

impl Serialize for ConditionName {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.as_str())
    }
}

impl<'de> Deserialize<'de> for ConditionName {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        ConditionName::from_name(&name)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown condition `{name}`")))
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Condition {
    pub name: ConditionName,
    /// False for the conditions shown but never judged (nsys-gate version, Git commit, a
    /// `manifest.KEY` the comparison was not asked to judge).
    pub judged: bool,
    pub differs: bool,
    /// What the base run recorded (`null`: not recorded).
    pub base: Value,
    pub head: Value,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MeasureName {
    HostInclusive,
    GpuProjected,
}

impl MeasureName {
    pub fn label(self) -> &'static str {
        match self {
            MeasureName::HostInclusive => "host inclusive",
            MeasureName::GpuProjected => "GPU projected",
        }
    }
}

/// The verdict on a change: beyond the run-to-run noise and at least the noise floor
/// (`slower`, `faster`), or not (`within_noise`), or not known because the base runs are too
/// few to know the noise (`noise_unknown`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeVerdict {
    Faster,
    Slower,
    WithinNoise,
    NoiseUnknown,
}

impl ChangeVerdict {
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeVerdict::Faster => "faster",
            ChangeVerdict::Slower => "slower",
            ChangeVerdict::WithinNoise => "within noise",
            ChangeVerdict::NoiseUnknown => "noise unknown",
        }
    }
}

/// The used base runs of a measure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HistorySummary {
    /// Base runs with a value.
    pub runs: u64,
    /// Their geometric mean.
    pub level_ns: f64,
    pub minimum_ns: f64,
    pub maximum_ns: f64,
    /// The run-to-run standard deviation, in % (of the logarithms); `null` with fewer than
    /// two runs.
    pub spread_pct: Option<f64>,
}

/// The head runs of a measure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HeadSummary {
    /// Head runs with a value.
    pub runs: u64,
    /// Their geometric mean (a run's own value when there is one).
    pub value_ns: f64,
    /// Counted iterations of the first head run.
    pub iterations: u64,
}

/// The change within one pair of runs (the first head run and `base`), from their
/// per-iteration durations: the Hodges-Lehmann estimate and its Mann-Whitney interval. It
/// knows nothing of the noise between runs: never a verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairChange {
    pub change_pct: f64,
    /// 95 %, within this pair of runs; `null` with fewer than 4 iterations a side.
    pub interval_pct: Option<[f64; 2]>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measure {
    pub name: MeasureName,
    pub base: Option<HistorySummary>,
    pub head: Option<HeadSummary>,
    /// The head against the history's level, in %.
    pub change_pct: Option<f64>,
    /// Where a head of unchanged code lands (95 % prediction interval), as a change in %
    /// (low, high); `null` with too few base runs.
    pub interval_pct: Option<[f64; 2]>,
    /// The two-sided p-value of the head's distance from the history's level.
    pub p_value: Option<f64>,
    pub verdict: Option<ChangeVerdict>,
    /// The change within the pair of the first head run and `base`.
    pub within_pair: Option<PairChange>,
    /// Why the measure is not compared, or why its noise is unknown.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub note: Option<String>,
    /// The smallest slowdown, in %, that this history would call `slower` 4 times in 5 for
    /// this head (never under the noise floor); `null` when the noise is unknown. Absent in
    /// files written before it was computed.
    #[serde(default)]
    pub detectable_pct: Option<f64>,
}

impl Comparison {
    /// Pretty JSON with a trailing newline.
    pub fn to_json(&self) -> Vec<u8> {
        let mut bytes = serde_json::to_vec_pretty(self).expect("a comparison serializes");
        bytes.push(b'\n');
        bytes
    }
}
