//! The manifest as the rest of the tool sees it: [`Manifest`], every key it needs checked
//! and typed, and the [`NearMiss`]es found among the keys it does not know.

use std::collections::BTreeMap;

/// The iteration range pattern used when the manifest has no `iteration_pattern`.
pub const DEFAULT_ITERATION_PATTERN: &str = r"^iteration (\d+)$";

/// A validated manifest.
#[derive(Debug, Clone, PartialEq)]
pub struct Manifest {
    /// `profile_name`: the harness's name for what was profiled.
    pub profile_name: String,
    /// `run_id`: the run's identifier (usually also the run directory's name).
    pub run_id: String,
    /// `capture_range`: the top-level NVTX range nsys captured; `None` (written `null`) when the
    /// whole trace was captured.
    pub capture_range: Option<String>,
    /// `workload.iterations`: how many measured iterations the run made (at least 1).
    pub iterations: u64,
    /// `iteration_pattern`, or [`DEFAULT_ITERATION_PATTERN`]: a valid regular expression with
    /// exactly one capture group, which captures the iteration index.
    pub iteration_pattern: String,
    /// `trace_sha256`, lowercased: 64 hexadecimal digits the trace must hash to.
    pub trace_sha256: Option<String>,
    /// `trace_sha256` given per rank (one trace per rank): a list (rank 0 first) or a mapping
    /// from rank to digest, lowercased; `None` when it is one digest or absent.
    pub trace_sha256_per_rank: Option<std::collections::BTreeMap<u64, String>>,
    /// `expected_trace_path`, as written.
    pub expected_trace_path: Option<String>,
    /// `device`, e.g. `cuda:0`.
    pub device: Option<String>,
    /// `git_commit`.
    pub git_commit: Option<String>,
    /// `command_line` (folded onto one line, as YAML reads it).
    pub command_line: Option<String>,
    /// Length of `record_ids`; `None` when the key is absent or null.
    pub record_count: Option<u64>,
    /// SHA-256 of `record_ids` (their compact JSON), so that two runs' record ids can be told
    /// apart without keeping them; `None` when the key is absent or null.
    pub record_ids_sha256: Option<String>,
    /// `target`, as JSON.
    pub target: Option<serde_json::Value>,
    /// `workload`, whole, as JSON.
    pub workload: serde_json::Value,
    /// `cuda` (the synchronization policy), as JSON.
    pub cuda: Option<serde_json::Value>,
    /// `data_source`, as JSON.
    pub data_source: Option<serde_json::Value>,
    /// Top-level keys this tool does not know, by their string form.
    pub extra: BTreeMap<String, serde_json::Value>,
    /// Unknown keys that look like misspellings of known ones, in key order.
    pub near_misses: Vec<NearMiss>,
}

/// An unknown key that is probably a misspelling of a known one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NearMiss {
    /// The key as written, as a dotted path (`workload.iteration`).
    pub key: String,
    /// The known key it resembles, as a dotted path.
    pub suggestion: String,
    /// 1-based line of the key.
    pub line: usize,
}
