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

use std::collections::BTreeMap;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use anyhow::Context;
use serde::{Deserialize, Serialize};

use crate::say::shown_path;

pub mod comparison;
mod vocabulary;

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
    /// Issue 13's capture-wide GPU work, read tolerantly (the comparison needs its device
    /// names, kernels and memory copies); not written by this version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_work: Option<GpuWork>,
}

/// The GPU work of the capture as far as the comparison reads it: GPU names, and kernels and
/// memory copies as JSON objects (their fields are read by `compare::gpu_work` alone).
///
/// Read tolerantly, since its schema is issue 13's: whatever shape `gpu_work` has, reading it
/// never fails an analysis.json (a device may be a string or an object with a `name`; a list
/// that is not a list is absent).
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct GpuWork {
    pub devices: Vec<String>,
    pub kernels: Option<Vec<serde_json::Value>>,
    pub memory_copies: Option<Vec<serde_json::Value>>,
}

impl<'de> Deserialize<'de> for GpuWork {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = serde_json::Value::deserialize(d)?;
        let list = |key: &str| v.get(key).and_then(serde_json::Value::as_array).cloned();
        let name = |d: &serde_json::Value| {
            d.as_str()
                .or_else(|| d.get("name").and_then(serde_json::Value::as_str))
                .map(str::to_owned)
        };
        Ok(GpuWork {
            devices: list("devices")
                .unwrap_or_default()
                .iter()
                .filter_map(name)
                .collect(),
            kernels: list("kernels"),
            memory_copies: list("memory_copies"),
        })
    }
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
        }
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

impl Analysis {
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
#[derive(Default)]
struct JsonLayout {
    /// Containers open.
    level: usize,
    /// The innermost open container has a member already.
    has_value: bool,
}

/// Containers opened at this level or deeper are written on one line.
const INLINE_LEVEL: usize = 3;

impl JsonLayout {
    fn inline(&self) -> bool {
        self.level >= INLINE_LEVEL
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
        self.member(w, first)
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        w.write_all(b": ")
    }

    fn end_object_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> std::io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}

/// Writes `bytes` to `path` atomically: see [`write_atomically_with`].
pub fn write_atomically(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    write_atomically_with(path, |out| out.write_all(bytes))
}

/// Writes what `write` makes to `path` atomically: a temporary file in the same folder
/// (through a buffer), then renamed over `path`. A reader sees the old file or the new one,
/// never a partial one, and a failure or a kill leaves the old file as it was.
///
/// The file gets the umask's mode (0666 less the umask), as a file made by `>` or `cp`
/// would, also when it replaces an existing file.
///
/// The file is not fsynced: that would guard against a power cut between the write and the
/// next writeback, at 0.1 s per 60 MB (a large analysis), for a file any rerun rebuilds from
/// the CSVs; and ext4, the usual runner file system, flushes a file renamed over another
/// before the rename itself reaches the disk.
pub fn write_atomically_with(
    path: &Path,
    write: impl FnOnce(&mut std::io::BufWriter<tempfile::NamedTempFile>) -> std::io::Result<()>,
) -> anyhow::Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let tmp = tempfile::Builder::new()
        .prefix(".nsys-gate-")
        .suffix(".tmp")
        // The mode any tool's new file gets (0666 less the umask), not tempfile's private
        // 0600: a later step running as another user reads these files.
        .permissions(std::fs::Permissions::from_mode(0o666))
        .tempfile_in(dir)
        .with_context(|| format!("cannot create a temporary file in {}", shown_path(dir)))?;
    let mut out = std::io::BufWriter::with_capacity(1 << 16, tmp);
    write(&mut out)
        .and_then(|()| out.flush())
        .with_context(|| format!("cannot write a temporary file in {}", shown_path(dir)))?;
    let tmp = out
        .into_inner()
        .map_err(|e| e.into_error())
        .with_context(|| format!("cannot write a temporary file in {}", shown_path(dir)))?;
    tmp.persist(path)
        .map_err(|e| e.error)
        .with_context(|| format!("cannot replace {}", shown_path(path)))?;
    Ok(())
}
