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
mod vocabulary;

pub use advice::{Advice, AdviceKernels, AdviceKind};
pub use vocabulary::{GateResult, ReportName, ReportState, Verdict, WarningCode};
// The statistics types are part of the artifact.
pub use crate::stats::{IterationStats, RangeStats};

pub const SCHEMA_VERSION: u32 = 1;

/// This nsys-gate's version (`provenance.tool_version`).
pub const TOOL_VERSION: &str = env!("CARGO_PKG_VERSION");

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
    /// `--label`: what the person running nsys-gate calls this run directory (a matrix leg's
    /// name); absent when not given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
}

/// `gpu_work`: what ran on the GPU, from `cuda_gpu_kern_sum`, `cuda_gpu_trace` and
/// `cuda_api_trace`. A part whose report failed is `null`, and `unavailable` says why.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct GpuWork {
    /// The GPUs that ran work, by `cuda_gpu_trace`'s `Device` column (sorted).
    pub devices: Option<Vec<GpuDevice>>,
    /// Every kernel name over the whole capture (`cuda_gpu_kern_sum`), largest total first.
    pub kernels: Option<Vec<KernelStats>>,
    /// Memory copies grouped by copy kind, source and destination memory kind, largest total
    /// time first.
    pub memory_copies: Option<Vec<MemoryCopies>>,
    pub memsets: Option<Memsets>,
    /// The kernels launched inside the counted iterations (complete, not duplicate).
    pub iteration_kernels: Option<IterationKernels>,
    /// The kernels launched inside the ranges with the largest GPU-projected totals (scoped
    /// names, counted iterations only), largest first.
    pub per_range_kernels: Option<Vec<RangeKernels>>,
    /// How the kernels of `cuda_gpu_trace` were attributed to ranges.
    pub kernel_attribution: Option<KernelAttribution>,
    /// Part (`devices`, `kernels`, …) -> why it is `null`: the report and nsys's words.
    pub unavailable: BTreeMap<String, String>,
}

impl GpuWork {
    /// The names of the GPUs that ran work (nsys's `NAME (ID)` when it gave no name), sorted,
    /// each once: what tells the legs of a matrix, or a base and a head run, apart.
    pub fn gpu_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .devices
            .iter()
            .flatten()
            .map(|d| d.name.clone().unwrap_or_else(|| d.device.clone()))
            .collect();
        names.sort();
        names.dedup();
        names
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GpuDevice {
    /// As nsys writes it: `NAME (ID)`, e.g. `NVIDIA A100-SXM4-80GB (0)`.
    pub device: String,
    /// The GPU's name (`NAME`), `null` when nsys had none.
    pub name: Option<String>,
    /// The CUDA device id (`ID`).
    pub id: Option<u64>,
    pub kernels: u64,
    pub memory_operations: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelStats {
    /// Exactly as nsys wrote it (a demangled signature).
    pub name: String,
    pub instances: u64,
    pub total_ns: i64,
    pub mean_ns: f64,
    /// `null` when nsys 2022.4 split the name over several grid/block rows (medians do not
    /// merge).
    pub median_ns: Option<f64>,
    pub minimum_ns: i64,
    pub maximum_ns: i64,
    pub stddev_ns: Option<f64>,
    /// Share of all kernel time of the capture (0..1).
    pub share: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryCopies {
    /// `Host-to-Device`, `Device-to-Host`, `Device-to-Device`, … (nsys's label).
    pub copy_kind: String,
    /// Source memory kind: `Pageable`, `Pinned`, `Device`, …; `null` when nsys had none.
    pub source: Option<String>,
    pub destination: Option<String>,
    pub count: u64,
    pub bytes: u64,
    pub total_ns: i64,
    /// Bytes over the copies' total duration; `null` when that is 0.
    pub bandwidth_bytes_per_s: Option<f64>,
    /// A host-to-device copy from, or device-to-host copy to, pageable host memory.
    pub pageable_host: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Memsets {
    pub count: u64,
    pub bytes: u64,
    pub total_ns: i64,
}

/// A kernel in a range's mix.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RangeKernel {
    pub name: String,
    pub launches: u64,
    pub total_ns: i64,
    /// Share of the range's kernel time (0..1).
    pub share: f64,
}

/// The kernels past the first few of a mix, together.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OtherKernels {
    /// How many kernel names.
    pub kernels: u64,
    pub launches: u64,
    pub total_ns: i64,
    pub share: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IterationKernels {
    /// Counted iterations.
    pub iterations: u64,
    pub launches: u64,
    /// Sum of the kernels' durations: GPU busy time of kernels, not a projection.
    pub total_ns: i64,
    pub kernels: Vec<RangeKernel>,
    pub other_kernels: Option<OtherKernels>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RangeKernels {
    /// Scoped name, as in `host_ranges` and `gpu_projected_ranges`.
    pub name: String,
    pub path: Vec<String>,
    /// Instances of the range in the counted iterations.
    pub instances: u64,
    /// Its GPU-projected total (`gpu_projected_ranges`), for reference; `null` without one.
    pub projected_total_ns: Option<i64>,
    /// Kernels launched inside the range, nested ranges included.
    pub launches: u64,
    pub total_ns: i64,
    pub kernels: Vec<RangeKernel>,
    pub other_kernels: Option<OtherKernels>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelAttribution {
    /// Kernel rows of `cuda_gpu_trace`.
    pub kernels: u64,
    /// Launched (by their CUDA API call) inside a counted iteration.
    pub in_counted_iterations: u64,
    /// Launched elsewhere: outside every counted iteration, or on another thread.
    pub elsewhere: u64,
    /// No CUDA API call has their correlation id.
    pub without_api_call: u64,
    /// Their correlation id is on API calls of more than one process: left out.
    pub ambiguous: u64,
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
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReportStatus {
    pub status: ReportState,
    /// nsys's own words when it skipped the report.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub message: Option<String>,
}

impl ReportStatus {
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
        }
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
}

impl Iteration {
    /// Counted in every statistic: complete, and not a later pass of an index seen before.
    pub fn is_counted(&self) -> bool {
        self.complete && !self.duplicate
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

/// How analysis.json is laid out: the top two levels one member per line (indented by two
/// spaces), anything deeper on one line (`{"index": 0, "range_id": 2, ...}`), as in the
/// contract's example. One line per iteration, warning or range keeps a large analysis
/// readable and greppable, and a large analysis a third smaller than fully indented JSON.
/// `gpu_work` goes one level deeper (one line per kernel, copy group, device or range), its
/// lists being one level further down.
#[derive(Default)]
struct JsonLayout {
    /// Containers open.
    level: usize,
    /// The innermost open container has a member already.
    has_value: bool,
    /// Reading a key of the top-level object (its text goes to `top_key`).
    in_top_key: bool,
    /// The top-level member being written.
    top_key: String,
}

/// Containers opened at this level or deeper are written on one line.
const INLINE_LEVEL: usize = 3;
/// The top-level member whose lists hold objects one level deeper.
const DEEPER_MEMBER: &str = "gpu_work";

impl JsonLayout {
    fn inline(&self) -> bool {
        let inline_level = if self.top_key == DEEPER_MEMBER {
            INLINE_LEVEL + 1
        } else {
            INLINE_LEVEL
        };
        self.level >= inline_level
    }

    fn open<W: ?Sized + Write>(&mut self, w: &mut W, bracket: &[u8]) -> std::io::Result<()> {
        self.level += 1;
        self.has_value = false;
        w.write_all(bracket)
    }

    fn close<W: ?Sized + Write>(&mut self, w: &mut W, bracket: &[u8]) -> std::io::Result<()> {
        let inline = self.inline();
        self.level -= 1;
        if self.has_value && !inline {
            w.write_all(b"\n")?;
            indent(w, self.level)?;
        }
        w.write_all(bracket)
    }

    fn member<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> std::io::Result<()> {
        if self.inline() {
            return w.write_all(if first { b"" } else { b", " });
        }
        w.write_all(if first { b"\n" } else { b",\n" })?;
        indent(w, self.level)
    }
}

fn indent<W: ?Sized + Write>(w: &mut W, level: usize) -> std::io::Result<()> {
    for _ in 0..level {
        w.write_all(b"  ")?;
    }
    Ok(())
}

impl serde_json::ser::Formatter for JsonLayout {
    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.open(w, b"[")
    }

    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.close(w, b"]")
    }

    fn begin_array_value<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.member(w, first)
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> std::io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.open(w, b"{")
    }

    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.close(w, b"}")
    }

    fn begin_object_key<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        if self.level == 1 {
            self.in_top_key = true;
            self.top_key.clear();
        }
        self.member(w, first)
    }

    fn end_object_key<W: ?Sized + Write>(&mut self, _w: &mut W) -> std::io::Result<()> {
        self.in_top_key = false;
        Ok(())
    }

    fn write_string_fragment<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> std::io::Result<()> {
        if self.in_top_key {
            self.top_key.push_str(fragment);
        }
        w.write_all(fragment.as_bytes())
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        w.write_all(b": ")
    }

    fn end_object_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> std::io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}
