//! `analysis.json`, schema version 1: the stable artifact every later stage reads.
//!
//! The field names, warning codes and their meaning are fixed by the project's contract and
//! documented for users in `docs/analysis-json.md`; new optional fields may be added within a
//! schema version, nothing is renamed, removed or retyped. Every list is in a fixed order and
//! nothing depends on the wall clock, so the same inputs give byte-identical files.
//!
//! Times are integer nanoseconds (`_ns`), except means, medians, percentiles and standard
//! deviations, which are numbers.
//!
//! Schema changelog:
//! - 1: first version.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::Write;

mod advice;
pub mod comparison;
mod environment;
#[cfg(any(test, feature = "fake"))]
pub mod fake;
mod gpu_work;
mod layout;
mod vocabulary;

pub use advice::{Advice, AdviceKernels, AdviceKind};
pub use environment::{ClockMhz, Environment, GpuInfo};
pub use gpu_work::{
    kernel_base_name, DeviceCopies, GpuDevice, GpuWork, IterationKernels, KernelAttribution,
    KernelBaseName, KernelStats, LaunchingGroup, MemoryCopies, Memsets, OtherKernels, RangeKernel,
    RangeKernelGroup, RangeKernels, LAUNCHING_GROUPS,
};
use layout::JsonLayout;
pub use vocabulary::{GateResult, ReportName, ReportState, Verdict, WarningCode};
// The statistics types are part of the artifact.
pub use crate::stats::{IterationStats, RangeStats};

pub const SCHEMA_VERSION: u32 = 1;

/// This nsys-gate's version (`provenance.tool_version`).
pub const TOOL_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The Nsight Systems versions the tests run (`year.release`).
pub const TESTED_VERSIONS: [&str; 3] = ["2022.4", "2023.4", "2024.2"];

/// Where NVIDIA gives Nsight Systems out: the one address nsys-gate's own words link to.
pub const DOWNLOAD_URL: &str = "https://developer.nvidia.com/nsight-systems";

/// The analysis's file name in a run directory.
pub const ANALYSIS_FILE: &str = "analysis.json";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Analysis {
    pub schema_version: u32,
    pub provenance: Provenance,
    pub run: Run,
    pub gate: Gate,
    pub warnings: Vec<Warning>,
    pub iteration_summary: IterationSummary,
    pub iterations: Vec<Iteration>,
    pub host_ranges: Vec<HostRange>,
    pub gpu_projected_ranges: Vec<GpuProjectedRange>,
    /// `host_ranges` with names that differ only in decimal numbers taken together (absent in
    /// files written before it was added).
    #[serde(default)]
    pub host_range_groups: Vec<HostRangeGroup>,
    /// `gpu_projected_ranges` grouped the same way.
    #[serde(default)]
    pub gpu_projected_range_groups: Vec<GpuProjectedRangeGroup>,
    /// The same figures without the iterations `slow_iterations` names (a cold first pass):
    /// what the report's shares and `advice` rest on. `null` when no counted iteration is
    /// slow (the figures above are then the steady state), and in files written before it
    /// existed.
    #[serde(default)]
    pub steady_state: Option<SteadyState>,
    /// The GPU work of the capture: kernels, memory copies, memsets, the kernels of the
    /// iterations and of the largest GPU-projected ranges. `null` when the trace holds no
    /// CUDA data (`gpu_projection_unavailable` says why). Absent in files written before it
    /// existed: read as `null`.
    #[serde(default)]
    pub gpu_work: Option<GpuWork>,
    /// What to look at: ranges the analysis found host-bound or GPU-bound (or, with no GPU
    /// projection, the largest host exclusive time), each with the numbers the rule rests on
    /// (`analysis::advice`). Absent in files written before it was added: read as empty, and
    /// the report then gives no advice.
    #[serde(default)]
    pub advice: Vec<Advice>,
    /// The ranks of a distributed run (several processes each running the iterations, in one
    /// trace or one trace per rank), sorted by `rank`; `null` for a run of one process and in
    /// files written before it existed. With ranks, `iterations[]` and `iteration_summary`
    /// describe steps: one index across the ranks, timed by its slowest rank.
    #[serde(default)]
    pub ranks: Option<Vec<Rank>>,
    /// `--label`: what the person running nsys-gate calls this run directory (a matrix leg's
    /// name); absent when not given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// The GPUs, driver and system nsys recorded in the trace ([`Environment`]). `null` when
    /// the trace's SQLite export could not be read, and in files written before it existed.
    #[serde(default)]
    pub environment: Option<Environment>,
}

/// Where the numbers came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    /// Absolute path of the run directory.
    pub run_dir: String,
    /// Relative to `run_dir`.
    pub manifest_path: String,
    pub manifest_sha256: String,
    /// Relative to `run_dir`.
    pub trace_path: String,
    /// The trace's SHA-256, checked against the manifest's `trace_sha256`: present only when
    /// the manifest gives one (it matched, or there is no analysis).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_sha256: Option<String>,
    /// One trace per rank: every trace read, by rank (relative to `run_dir`; `trace_path` is
    /// the first, and `reports` name the first's CSVs, each rank's being under
    /// `stats/RANK/`). Absent for one trace.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub traces: Vec<String>,
    /// Report name -> CSV path relative to `run_dir`.
    pub reports: BTreeMap<String, String>,
    /// What nsys did with each report: `written`, or `skipped` with nsys's words.
    pub report_status: BTreeMap<String, ReportStatus>,
    /// `nsys --version` of the nsys that produced the CSVs.
    pub nsys_version: String,
    /// True when nsys 2022.x's `nvtxpptrace`/`nvtxgpuproj` produced the CSVs.
    pub legacy_reports: bool,
    /// True when `--reuse-stats` analysed CSVs left by an earlier run instead of running nsys.
    pub stats_reused: bool,
    pub tool_version: String,
    /// The CI run the analysis was made in (GitHub Actions: `GITHUB_RUN_ID` and
    /// `GITHUB_RUN_ATTEMPT`); `null` outside CI and in files written before it was recorded.
    /// The comparison counts the analyses of one CI run as one point of a history.
    #[serde(default)]
    pub ci_run: Option<CiRun>,
    /// The CI runner's name (GitHub Actions: `RUNNER_NAME`); `null` outside CI and in files
    /// written before it was recorded. The comparison tells runners of different speed apart
    /// by it.
    #[serde(default)]
    pub runner: Option<String>,
}

/// A CI run: the platform's number for it and, where the platform re-runs a run under the
/// same number, which attempt.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct CiRun {
    pub id: u64,
    pub attempt: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReportStatus {
    pub status: ReportState,
    /// nsys's own words when it skipped the report.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub message: Option<String>,
}

impl ReportStatus {
    /// For messages: `written` or `skipped (nsys's words)`.
    pub fn describe(&self) -> String {
        match &self.message {
            Some(m) => format!("{} ({m})", self.status.as_str()),
            None => self.status.as_str().to_owned(),
        }
    }

    pub fn written() -> Self {
        ReportStatus {
            status: ReportState::Written,
            message: None,
        }
    }

    pub fn skipped(message: impl Into<String>) -> Self {
        ReportStatus {
            status: ReportState::Skipped,
            message: Some(message.into()),
        }
    }

    pub fn is_written(&self) -> bool {
        self.status == ReportState::Written
    }
}

/// The run settings, from the manifest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Run {
    pub profile_name: String,
    pub run_id: String,
    pub target: Option<serde_json::Value>,
    pub device: Option<String>,
    pub git_commit: Option<String>,
    pub command_line: Option<String>,
    pub capture_range: Option<String>,
    pub iteration_pattern: String,
    pub record_count: Option<u64>,
    /// SHA-256 of the manifest's `record_ids` (compact JSON): two runs read the same records
    /// when these agree. Absent when the manifest has no record ids (and in analysis.json
    /// files of nsys-gate 0.1.0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub record_ids_sha256: Option<String>,
    pub workload: serde_json::Value,
    pub cuda: Option<serde_json::Value>,
    pub data_source: Option<serde_json::Value>,
    pub extra: BTreeMap<String, serde_json::Value>,
}

/// Which warning codes fail the job, and whether this run passed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Gate {
    /// The gating set used for this analysis (sorted).
    pub gating_codes: Vec<WarningCode>,
    pub result: GateResult,
    /// Codes of the gating warnings present (sorted, unique).
    pub failing_codes: Vec<WarningCode>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Warning {
    pub code: WarningCode,
    pub gating: bool,
    pub message: String,
    /// Iteration indexes the warning is about.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iterations: Option<Vec<u64>>,
    /// How many ranges or operations the warning is about.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub count: Option<u64>,
    /// Range names the warning is about.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ranges: Option<Vec<String>>,
    /// Environment variable names (never values) the warning is about.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variables: Option<Vec<String>>,
    /// `nesting_truncated`: the deepest level seen below an iteration.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub depth: Option<u64>,
    /// `nesting_truncated`: the deepest level the range tables name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub depth_limit: Option<u64>,
    /// `pageable_memory_copies`: bytes copied.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    /// `gpu_work_unavailable`: the report that failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub report: Option<String>,
    /// The rule's limit, for the rules with a number: `high_variance`, the cv (0.1);
    /// `first_iteration_slow`, the ratio to the median (1.5). Absent in files written before
    /// it was added.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold: Option<f64>,
    /// `slow_iterations`: the time above which an iteration is slow (the median + 5 x MAD of
    /// the host inclusive times), in nanoseconds. Absent in files written before it was added.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold_ns: Option<f64>,
    /// `first_iteration_slow`: the warm-up passes the manifest records before the counted
    /// iterations (0: none, add one); absent when it records none or in files written before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup_passes: Option<u64>,
    /// `high_variance`: when the iterations `slow_iterations` names (at most 3) alone make the
    /// variance, the cv of the other counted iterations (under `threshold`); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cv_without_slow: Option<f64>,
    /// The rank the warning is about, in a distributed run (`ranks[].rank`); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rank: Option<u64>,
}

impl Warning {
    /// A warning not (yet) marked gating; [`crate::gate::apply`] decides that.
    pub fn new(code: WarningCode, message: String) -> Self {
        Warning {
            code,
            gating: false,
            message,
            iterations: None,
            count: None,
            ranges: None,
            variables: None,
            depth: None,
            depth_limit: None,
            bytes: None,
            report: None,
            threshold: None,
            threshold_ns: None,
            warmup_passes: None,
            cv_without_slow: None,
            rank: None,
        }
    }

    /// The warm-up passes before the counted iterations (`warmup_passes`).
    pub fn with_warmup_passes(mut self, passes: Option<u64>) -> Self {
        self.warmup_passes = passes;
        self
    }

    /// The rule's limit (`threshold`).
    pub fn with_threshold(mut self, threshold: f64) -> Self {
        self.threshold = Some(threshold);
        self
    }

    /// The rule's limit in nanoseconds (`threshold_ns`).
    pub fn with_threshold_ns(mut self, threshold_ns: f64) -> Self {
        self.threshold_ns = Some(threshold_ns);
        self
    }

    pub fn with_bytes(mut self, bytes: u64) -> Self {
        self.bytes = Some(bytes);
        self
    }

    pub fn with_report(mut self, report: &str) -> Self {
        self.report = Some(report.to_owned());
        self
    }

    pub fn with_iterations(mut self, iterations: Vec<u64>) -> Self {
        self.iterations = Some(iterations);
        self
    }

    pub fn with_count(mut self, count: u64) -> Self {
        self.count = Some(count);
        self
    }

    pub fn with_ranges(mut self, ranges: Vec<String>) -> Self {
        self.ranges = Some(ranges);
        self
    }

    pub fn with_variables(mut self, variables: Vec<String>) -> Self {
        self.variables = Some(variables);
        self
    }

    /// The deepest nesting level seen and the limit (`nesting_truncated`).
    pub fn with_depth(mut self, depth: u64, limit: u64) -> Self {
        self.depth = Some(depth);
        self.depth_limit = Some(limit);
        self
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IterationSummary {
    pub expected: u64,
    pub found: u64,
    pub complete: u64,
    pub unattributed_ranges: u64,
    pub host_inclusive: Option<IterationStats>,
    pub host_exclusive: Option<IterationStats>,
    pub gpu_projected: Option<IterationStats>,
    pub first_iteration: Option<FirstIteration>,
}

impl IterationSummary {
    /// The number of counted iterations, as the statistics have it.
    pub fn counted(&self) -> u64 {
        self.host_inclusive.as_ref().map_or(0, |h| h.count)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FirstIteration {
    pub index: u64,
    pub host_inclusive_ns: i64,
    pub ratio_to_median: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Iteration {
    pub index: u64,
    pub range_id: u64,
    pub pid: u64,
    pub tid: u64,
    pub complete: bool,
    /// A later pass with an index seen before: kept here, left out of every statistic.
    pub duplicate: bool,
    pub host: IterationHost,
    pub gpu_projection: Option<IterationGpu>,
    /// In a distributed run, where the entry is a step: the rank that was slowest in it (whose
    /// fields these are). Absent for a run of one process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rank: Option<u64>,
}

impl Iteration {
    /// Counted in every statistic: complete, and not a later pass of an index seen before.
    pub fn is_counted(&self) -> bool {
        self.complete && !self.duplicate
    }
}

/// One rank of a distributed run (`ranks[]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rank {
    /// The number in the trace's file name (one trace per rank), else the CUDA device when each
    /// process launched its work on one of its own, else the order of the processes by PID.
    pub rank: u64,
    pub pid: u64,
    /// The CUDA device the process launched its work on, when it used exactly one.
    pub device: Option<u64>,
    /// The trace's file name.
    pub trace: String,
    /// Its counted iterations.
    pub iterations: u64,
    /// Its iterations alone, as the top-level `iteration_summary` describes a run of one
    /// process.
    pub iteration_summary: IterationSummary,
    /// In how many steps it was the slowest rank.
    pub slowest_steps: u64,
}

/// How a distributed run's ranks were numbered (`ranks[]`), for the report: by the trace's
/// file name (one trace per rank), else by device when every rank has a device of its own
/// (the ranks sorted by rank then have increasing devices), else by the order of the PIDs.
pub fn rank_identity(ranks: &[Rank]) -> &'static str {
    if ranks.len() > 1 && ranks.windows(2).all(|w| w[0].trace != w[1].trace) {
        "the number in each trace's file name"
    } else if ranks.iter().all(|r| r.device.is_some())
        && ranks.windows(2).all(|w| w[0].device < w[1].device)
    {
        "the CUDA device each process launched its work on"
    } else {
        "the order of the processes by PID"
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IterationHost {
    pub start_ns: i64,
    pub end_ns: i64,
    pub inclusive_ns: i64,
    pub exclusive_ns: i64,
    pub child_total_ns: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IterationGpu {
    pub start_ns: i64,
    pub end_ns: i64,
    pub projected_ns: i64,
    pub gpu_operation_count: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostRange {
    pub name: String,
    pub path: Vec<String>,
    pub instances: u64,
    pub inclusive: RangeStats,
    pub exclusive: RangeStats,
    pub child_total_ns: i64,
    /// A distributed run: the rank the range took longest on (mean inclusive time), when the
    /// ranks differ beyond their noise; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slowest_rank: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GpuProjectedRange {
    pub name: String,
    pub path: Vec<String>,
    pub style: String,
    pub instances: u64,
    pub projected: RangeStats,
    /// Host inclusive total of the same instances (a different clock: never add the two).
    pub host_total_ns: i64,
    pub gpu_operation_count: u64,
}

/// The group of a scoped range name (`host_range_groups[].group`): each run of ASCII digits
/// replaced with `#` (`layer_3_token_6` -> `layer_#_token_#`).
pub fn group_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut in_digits = false;
    for c in name.chars() {
        if c.is_ascii_digit() {
            if !in_digits {
                out.push('#');
            }
            in_digits = true;
        } else {
            out.push(c);
            in_digits = false;
        }
    }
    out
}

/// Totals of a group of ranges: no median or standard deviation (they need every instance).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroupStats {
    pub total_ns: i64,
    pub mean_ns: f64,
    pub minimum_ns: i64,
    pub maximum_ns: i64,
}

/// Host ranges whose scoped names differ only in decimal numbers (`group`: each run of digits
/// written `#`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostRangeGroup {
    pub group: String,
    /// Distinct scoped names in the group.
    pub names: u64,
    pub instances: u64,
    pub inclusive: GroupStats,
    pub exclusive: GroupStats,
}

/// The counted iterations without the slow ones (`slow_iterations`): one slow pass (a cold
/// start 15 times the others) makes a range's totals its own, and a range that is a tenth of
/// the steady iterations can look like a quarter of the run. The contract's fields keep every
/// counted iteration; these figures leave the slow ones out, and say which.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SteadyState {
    /// The counted iterations left out: those `slow_iterations` names, in index order.
    pub left_out: Vec<u64>,
    /// Host inclusive statistics of the other counted iterations.
    pub host_inclusive: IterationStats,
    /// `host_range_groups` over the other counted iterations.
    pub host_range_groups: Vec<HostRangeGroup>,
    /// `gpu_projected_range_groups` over the other counted iterations.
    pub gpu_projected_range_groups: Vec<GpuProjectedRangeGroup>,
}

/// GPU-projected ranges grouped as [`HostRangeGroup`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GpuProjectedRangeGroup {
    pub group: String,
    pub names: u64,
    pub instances: u64,
    pub projected: GroupStats,
    pub host_total_ns: i64,
    pub gpu_operation_count: u64,
}

/// [`Analysis::gpu_projection_available`], from the parts of an analysis it reads.
pub fn gpu_projection_available(provenance: &Provenance, warnings: &[Warning]) -> bool {
    let written = provenance
        .report_status
        .get(ReportName::GpuProjection.as_str())
        .is_none_or(|s| s.is_written());
    written
        && !warnings
            .iter()
            .any(|w| w.code == WarningCode::GpuProjectionUnavailable)
}

impl Analysis {
    /// Whether nsys made a GPU projection for the run: the projection report was written
    /// (or the analysis predates report statuses) and no `gpu_projection_unavailable` says
    /// otherwise.
    pub fn gpu_projection_available(&self) -> bool {
        gpu_projection_available(&self.provenance, &self.warnings)
    }

    /// The first warning of `code`, if any.
    pub fn warning(&self, code: WarningCode) -> Option<&Warning> {
        self.warnings.iter().find(|w| w.code == code)
    }

    /// The iterations every statistic is over, in index order: complete and not duplicates.
    pub fn counted_iterations(&self) -> impl Iterator<Item = &Iteration> + Clone {
        self.iterations.iter().filter(|i| i.is_counted())
    }

    /// The GPU's busy time per counted iteration: the sum of the kernels' durations launched
    /// inside the counted iterations (`gpu_work.iteration_kernels`) over their number; `None`
    /// without kernel data or without a kernel launched. Busy time, never a projection.
    pub fn gpu_busy_per_iteration(&self) -> Option<f64> {
        let k = self.gpu_work.as_ref()?.iteration_kernels.as_ref()?;
        (k.launches > 0 && k.iterations > 0).then(|| k.total_ns as f64 / k.iterations as f64)
    }

    /// The number of counted iterations, as the statistics have it.
    pub fn counted(&self) -> u64 {
        self.iteration_summary.counted()
    }

    /// Pretty JSON with a trailing newline.
    pub fn to_json(&self) -> Vec<u8> {
        let mut bytes = Vec::new();
        self.write_json(&mut bytes)
            .expect("writing to memory cannot fail");
        bytes
    }

    /// [`Analysis::to_json`], written as it is made (a large analysis is tens of MB).
    pub fn write_json<W: Write>(&self, mut out: W) -> std::io::Result<()> {
        let mut ser = serde_json::Serializer::with_formatter(&mut out, JsonLayout::default());
        self.serialize(&mut ser).map_err(std::io::Error::from)?;
        out.write_all(b"\n")
    }
}
