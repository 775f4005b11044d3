//! `comparison.json`, schema version 1: the current runs against a baseline (the base
//! branch's runs), written beside report.md and documented for users in
//! `docs/comparison-json.md`.
//!
//! Deterministic like analysis.json: no wall-clock time, every list in a fixed order. New
//! optional fields may be added within a schema version; nothing is renamed, removed or
//! retyped.
//!
//! Schema changelog:
//! - 1: first version.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// `comparison.json`'s `schema_version`.
pub const COMPARISON_SCHEMA_VERSION: u32 = 1;

/// The comparison file's name, beside report.md.
pub const COMPARISON_FILE: &str = "comparison.json";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    pub schema_version: u32,
    pub tool_version: String,
    /// Where the baseline came from.
    pub baseline: BaselineSource,
    /// Whatever kept a comparison from being made or complete, in words (no baseline run
    /// found, the artifact expired, no permission, …). Never an error.
    pub notes: Vec<String>,
    /// One per current run with a baseline of the same profile, in the current runs' order.
    pub runs: Vec<RunComparison>,
    /// Current runs with no baseline of the same profile.
    pub unmatched_head: Vec<RunRef>,
    /// Baseline runs with no current run of the same profile.
    pub unmatched_base: Vec<RunRef>,
}

/// `path`: `--baseline PATH`; `auto`: the artifact of a run of the base branch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BaselineKind {
    Path,
    Auto,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BaselineSource {
    pub kind: BaselineKind,
    /// `path`: the PATH given.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub path: Option<String>,
    /// `auto`: the workflow run the artifact came from.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub workflow_run: Option<WorkflowRunRef>,
    /// `auto`: the artifact.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub artifact: Option<ArtifactRef>,
    /// The analysis.json files read as the baseline (inside PATH or the artifact), in path
    /// order.
    pub analyses: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkflowRunRef {
    pub id: u64,
    pub head_sha: String,
    pub head_branch: Option<String>,
    pub html_url: Option<String>,
    /// `base_commit`: the run of the pull request's base commit; `newest`: the newest
    /// successful run of the base branch (none ran at the base commit).
    pub chosen: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArtifactRef {
    pub id: u64,
    pub name: String,
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

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunComparison {
    pub base: RunRef,
    pub head: RunRef,
    /// False when any judged condition differs: the numbers are then shown, labelled.
    pub like_for_like: bool,
    /// Every condition, judged ones first, in a fixed order.
    pub conditions: Vec<Condition>,
    /// `host_inclusive`, then `gpu_projected`.
    pub measures: Vec<Measure>,
    /// Host exclusive time per counted iteration, range by range.
    pub host_ranges: RangeChanges,
    /// GPU-projected time per counted iteration, range by range; `None` unless both runs have
    /// a GPU projection.
    pub gpu_ranges: Option<RangeChanges>,
    /// Capture-wide GPU work (kernels, memory copies); `None` unless both runs record it.
    pub gpu_work: Option<GpuWorkChanges>,
}

/// The conditions, in the order they are listed. The first nine are judged: any difference
/// makes the comparison "not like for like". The rest are shown, never judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConditionName {
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
}

impl ConditionName {
    /// Whether a difference makes the comparison "not like for like".
    pub fn judged(self) -> bool {
        !matches!(self, ConditionName::ToolVersion | ConditionName::GitCommit)
    }

    /// For people.
    pub fn label(self) -> &'static str {
        match self {
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
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Condition {
    pub name: ConditionName,
    /// False for the conditions shown but never judged (nsys-gate version, Git commit).
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

/// The verdict on one measure: the 95 % interval of the change lies above zero (`slower`),
/// below it (`faster`), or holds it (`within_noise`; also when there is no interval).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeVerdict {
    Faster,
    Slower,
    WithinNoise,
}

impl ChangeVerdict {
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeVerdict::Faster => "faster",
            ChangeVerdict::Slower => "slower",
            ChangeVerdict::WithinNoise => "within noise",
        }
    }
}

/// The per-iteration durations of one side: complete, counted iterations only.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SideSummary {
    pub count: u64,
    pub median_ns: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measure {
    pub name: MeasureName,
    pub base: Option<SideSummary>,
    pub head: Option<SideSummary>,
    /// Hodges-Lehmann estimate of head / base - 1, in %.
    pub change_pct: Option<f64>,
    /// The 95 % interval of the change, in % (low, high); `None` with too few iterations.
    pub interval_pct: Option<[f64; 2]>,
    pub verdict: Option<ChangeVerdict>,
    /// Why the measure is not compared, or why it has no interval.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub note: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RangeChanges {
    /// Iterations the per-iteration times are over (base, head).
    pub base_iterations: u64,
    pub head_iterations: u64,
    /// Ranges in both runs, the largest absolute change first (then by name).
    pub changed: Vec<RangeChange>,
    /// Ranges only the head run has, the largest first.
    pub new: Vec<RangeOnly>,
    /// Ranges only the base run has, the largest first.
    pub gone: Vec<RangeOnly>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RangeChange {
    pub name: String,
    pub base_per_iteration_ns: f64,
    pub head_per_iteration_ns: f64,
    pub change_ns: f64,
    /// `None` when the base time is zero.
    pub change_pct: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RangeOnly {
    pub name: String,
    pub per_iteration_ns: f64,
}

/// Capture-wide GPU work of both runs, item by item (kernels by name, memory copies by kind).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GpuWorkChanges {
    pub kernels: Vec<WorkChange>,
    pub memory_copies: Vec<WorkChange>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkChange {
    pub name: String,
    /// Total time in the capture; `None` on the side that does not have it.
    pub base_total_ns: Option<f64>,
    pub head_total_ns: Option<f64>,
}

impl Comparison {
    /// Pretty JSON with a trailing newline.
    pub fn to_json(&self) -> Vec<u8> {
        let mut bytes = serde_json::to_vec_pretty(self).expect("a comparison serializes");
        bytes.push(b'\n');
        bytes
    }
}
