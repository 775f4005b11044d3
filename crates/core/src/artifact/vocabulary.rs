//! The contract's words: warning codes, gate results and report states.
//!
//! Each is an enum that serialises to exactly the string the contract fixes, so a typo is a
//! compile error and `analysis.json` stays byte-identical. `docs/analysis-json.md` and the
//! README list the same codes; a test reads both and compares them with [`WarningCode::ALL`].

use std::fmt;

use serde::{Deserialize, Serialize};

/// Every warning code nsys-gate emits (contract section 4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WarningCode {
    CaptureRangeExceeded,
    CaptureRangeMissing,
    CaptureRangeMultiple,
    CaptureRangeWithoutGpuWork,
    DuplicateIterations,
    FirstIterationSlow,
    GpuClockUnsteady,
    GpuOpsOutsideRanges,
    GpuProjectionUnavailable,
    GpuWorkUnavailable,
    HighVariance,
    IterationsWithoutGpuProjection,
    LegacyNsysReports,
    ManifestUnknownKey,
    MissingIterations,
    NestingTruncated,
    NsysVersionUntested,
    PageableMemoryCopies,
    SlowIterations,
    TraceEnvironmentSecrets,
    TracePathMoved,
    UnexpectedIterations,
}

impl WarningCode {
    /// Every code, in byte order of its name (the order `warnings[]` is sorted in).
    pub const ALL: [WarningCode; 22] = [
        WarningCode::CaptureRangeExceeded,
        WarningCode::CaptureRangeMissing,
        WarningCode::CaptureRangeMultiple,
        WarningCode::CaptureRangeWithoutGpuWork,
        WarningCode::DuplicateIterations,
        WarningCode::FirstIterationSlow,
        WarningCode::GpuClockUnsteady,
        WarningCode::GpuOpsOutsideRanges,
        WarningCode::GpuProjectionUnavailable,
        WarningCode::GpuWorkUnavailable,
        WarningCode::HighVariance,
        WarningCode::IterationsWithoutGpuProjection,
        WarningCode::LegacyNsysReports,
        WarningCode::ManifestUnknownKey,
        WarningCode::MissingIterations,
        WarningCode::NestingTruncated,
        WarningCode::NsysVersionUntested,
        WarningCode::PageableMemoryCopies,
        WarningCode::SlowIterations,
        WarningCode::TraceEnvironmentSecrets,
        WarningCode::TracePathMoved,
        WarningCode::UnexpectedIterations,
    ];

    /// The code as `analysis.json` writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            WarningCode::CaptureRangeExceeded => "capture_range_exceeded",
            WarningCode::CaptureRangeMissing => "capture_range_missing",
            WarningCode::CaptureRangeMultiple => "capture_range_multiple",
            WarningCode::CaptureRangeWithoutGpuWork => "capture_range_without_gpu_work",
            WarningCode::DuplicateIterations => "duplicate_iterations",
            WarningCode::FirstIterationSlow => "first_iteration_slow",
            WarningCode::GpuClockUnsteady => "gpu_clock_unsteady",
            WarningCode::GpuOpsOutsideRanges => "gpu_ops_outside_ranges",
            WarningCode::GpuProjectionUnavailable => "gpu_projection_unavailable",
            WarningCode::GpuWorkUnavailable => "gpu_work_unavailable",
            WarningCode::HighVariance => "high_variance",
            WarningCode::IterationsWithoutGpuProjection => "iterations_without_gpu_projection",
            WarningCode::LegacyNsysReports => "legacy_nsys_reports",
            WarningCode::ManifestUnknownKey => "manifest_unknown_key",
            WarningCode::MissingIterations => "missing_iterations",
            WarningCode::NestingTruncated => "nesting_truncated",
            WarningCode::NsysVersionUntested => "nsys_version_untested",
            WarningCode::PageableMemoryCopies => "pageable_memory_copies",
            WarningCode::SlowIterations => "slow_iterations",
            WarningCode::TraceEnvironmentSecrets => "trace_environment_secrets",
            WarningCode::TracePathMoved => "trace_path_moved",
            WarningCode::UnexpectedIterations => "unexpected_iterations",
        }
    }

    /// The code written `name` (as [`WarningCode::as_str`] writes it), if there is one.
    pub fn from_name(name: &str) -> Option<WarningCode> {
        WarningCode::ALL.into_iter().find(|c| c.as_str() == name)
    }

    /// Whether the job fails on this code unless `--no-gate-on` says otherwise: missing
    /// iterations and capture-range problems, nothing else.
    pub fn gates_by_default(self) -> bool {
        matches!(
            self,
            WarningCode::MissingIterations
                | WarningCode::CaptureRangeMissing
                | WarningCode::CaptureRangeMultiple
                | WarningCode::CaptureRangeExceeded
                | WarningCode::CaptureRangeWithoutGpuWork
        )
    }
}

impl fmt::Display for WarningCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The gate's verdict on one analysis (`gate.result`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GateResult {
    /// No gating warning.
    Pass,
    /// At least one gating warning.
    Fail,
}

/// The gate's verdict on a run directory as a whole, for outputs and the report: an analysis
/// that could not be made is an `error`, which `analysis.json` itself never records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Pass,
    Fail,
    Error,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Fail => "fail",
            Verdict::Error => "error",
        }
    }
}

impl From<GateResult> for Verdict {
    fn from(result: GateResult) -> Self {
        match result {
            GateResult::Pass => Verdict::Pass,
            GateResult::Fail => Verdict::Fail,
        }
    }
}

/// What nsys did with one report (`provenance.report_status[].status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReportState {
    /// nsys wrote the CSV (possibly with no rows).
    Written,
    /// nsys skipped the report and said why.
    Skipped,
}

impl ReportState {
    pub fn as_str(self) -> &'static str {
        match self {
            ReportState::Written => "written",
            ReportState::Skipped => "skipped",
        }
    }
}

/// The NVIDIA reports nsys-gate reads (`provenance.reports` keys).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ReportName {
    /// `nvtx_pushpop_trace`: every NVTX push/pop range with host times.
    PushPop,
    /// `nvtx_gpu_proj_trace`: the GPU projection of each range.
    GpuProjection,
    /// `cuda_gpu_kern_sum`: each kernel name with its instances and times over the capture.
    KernelSummary,
    /// `cuda_gpu_kern_sum:base`: the same over each kernel's base name (Nsight Systems' `base`
    /// naming, the export's `shortName`), which names the kernels in the report.
    KernelBaseSummary,
    /// `cuda_gpu_trace`: one row per kernel, memory copy and memset on the GPU.
    GpuTrace,
    /// `cuda_kern_exec_trace`: one row per kernel with the CUDA API call that launched it
    /// (nsys joins them on correlation id and process): its process, thread and times.
    KernelExecTrace,
    /// `cuda_api_trace`: one row per CUDA API call on the host, with its thread. Asked only of
    /// an nsys without `cuda_kern_exec_trace` (see [`ReportName::replaced_by`]).
    ApiTrace,
}

impl ReportName {
    /// Every report, in the order nsys is asked for them.
    pub const ALL: [ReportName; 7] = [
        ReportName::PushPop,
        ReportName::GpuProjection,
        ReportName::KernelSummary,
        ReportName::KernelBaseSummary,
        ReportName::GpuTrace,
        ReportName::KernelExecTrace,
        ReportName::ApiTrace,
    ];

    /// The two NVTX reports: without them there is no analysis.
    pub const REQUIRED: [ReportName; 2] = [ReportName::PushPop, ReportName::GpuProjection];

    /// The GPU-work reports (`gpu_work`): each may fail on its own, with a warning.
    pub const GPU_WORK: [ReportName; 5] = [
        ReportName::KernelSummary,
        ReportName::KernelBaseSummary,
        ReportName::GpuTrace,
        ReportName::KernelExecTrace,
        ReportName::ApiTrace,
    ];

    /// The report's name as `nsys stats --report` takes it (with its argument after a `:`,
    /// which nsys writes `_` in the CSV's name: `nsys_cuda_gpu_kern_sum_base.csv`).
    pub const fn as_str(self) -> &'static str {
        match self {
            ReportName::PushPop => "nvtx_pushpop_trace",
            ReportName::GpuProjection => "nvtx_gpu_proj_trace",
            ReportName::KernelSummary => "cuda_gpu_kern_sum",
            ReportName::KernelBaseSummary => "cuda_gpu_kern_sum:base",
            ReportName::GpuTrace => "cuda_gpu_trace",
            ReportName::KernelExecTrace => "cuda_kern_exec_trace",
            ReportName::ApiTrace => "cuda_api_trace",
        }
    }

    /// The same report's name in nsys 2022.x (same columns, except that 2022.4's
    /// `gpukernsum` has a row per kernel name, grid and block).
    pub const fn legacy_name(self) -> &'static str {
        match self {
            ReportName::PushPop => "nvtxpptrace",
            ReportName::GpuProjection => "nvtxgpuproj",
            ReportName::KernelSummary => "gpukernsum",
            ReportName::KernelBaseSummary => "gpukernsum:base",
            ReportName::GpuTrace => "gputrace",
            ReportName::KernelExecTrace => "kernexectrace",
            ReportName::ApiTrace => "cudaapitrace",
        }
    }

    /// What a report costs nsys, in milliseconds: its wall time alone over the GPU-heavy trace of
    /// `scripts/bench-gpu-work.sh` (140,005 NVTX ranges, 163,339 GPU operations), one `nsys
    /// stats` process, machine otherwise idle (docs/performance.md, "What each report costs"):
    /// push/pop 4.51-4.63 s, projection 3.75-3.93 s, `cuda_gpu_trace` 2.35-2.85 s,
    /// `cuda_api_trace` 1.36-1.97 s, `cuda_gpu_kern_sum` 0.14 s, `cuda_kern_exec_trace` 1.48 s.
    ///
    /// Only the order of the costs and their sums matter to `nsys::stats::groups`. The two traces' runs
    /// differed by about half a second; each is taken at the end of its range that keeps the
    /// groupings measured there (`cuda_gpu_trace` 2.4 s, `cuda_api_trace` 2.0 s): with the
    /// middles (2.6 s, 1.7 s) two processes would put the kernel summary beside the push/pop
    /// report instead, a split never measured (and the `error_incompatible_trace` snapshot, which
    /// quotes the first of two processes' command, pins the measured one).
    ///
    /// Every report has a cost: the match has no catch-all, so a new [`ReportName`] does not
    /// compile until it is given one, and then `nsys::stats::groups` schedules it.
    pub const fn cost(self) -> u32 {
        match self {
            ReportName::PushPop => 4500,
            ReportName::GpuProjection => 3800,
            ReportName::GpuTrace => 2400,
            ReportName::ApiTrace => 2000,
            ReportName::KernelExecTrace => 1480,
            ReportName::KernelSummary => 140,
            // Not measured apart: the same query as `cuda_gpu_kern_sum`, over another column.
            ReportName::KernelBaseSummary => 140,
        }
    }

    /// The report that makes this one unnecessary when the nsys has it: `cuda_api_trace` is
    /// asked only of an nsys without `cuda_kern_exec_trace`, which gives each kernel its
    /// launching process and thread (nsys's GPU trace has no process column, so joining it with
    /// `cuda_api_trace` cannot tell apart processes whose correlation ids repeat).
    pub const fn replaced_by(self) -> Option<ReportName> {
        match self {
            ReportName::ApiTrace => Some(ReportName::KernelExecTrace),
            _ => None,
        }
    }

    /// Whether the analysis needs it (the NVTX reports) or can go on without it.
    pub const fn is_required(self) -> bool {
        matches!(self, ReportName::PushPop | ReportName::GpuProjection)
    }
}

impl fmt::Display for ReportName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_serialise_to_their_names_in_byte_order() {
        let names: Vec<&str> = WarningCode::ALL.iter().map(|c| c.as_str()).collect();
        let mut sorted = names.clone();
        sorted.sort_unstable();
        assert_eq!(names, sorted, "ALL is in byte order");
        for code in WarningCode::ALL {
            assert_eq!(
                serde_json::to_string(&code).unwrap(),
                format!("\"{}\"", code.as_str())
            );
            let back: WarningCode =
                serde_json::from_str(&format!("\"{}\"", code.as_str())).unwrap();
            assert_eq!(back, code);
            assert_eq!(WarningCode::from_name(code.as_str()), Some(code));
        }
        assert_eq!(WarningCode::from_name("no_such_code"), None);
    }

    /// The warning-code table of docs/analysis-json.md: `(code, gating by default)` rows.
    fn documented_codes(doc: &str) -> Vec<(String, bool)> {
        let section = doc
            .split("\n## warnings[]")
            .nth(1)
            .expect("docs/analysis-json.md has a `## warnings[]` section");
        let section = section.split("\n## ").next().unwrap_or(section);
        section
            .lines()
            .filter_map(|line| {
                let cells: Vec<&str> = line.split('|').map(str::trim).collect();
                let code = cells.get(1)?.strip_prefix('`')?.strip_suffix('`')?;
                let gating = match *cells.get(2)? {
                    "yes" => true,
                    "no" => false,
                    other => panic!("`{code}`: gating column says {other:?}"),
                };
                Some((code.to_owned(), gating))
            })
            .collect()
    }

    /// The words a reader copies into `gate-on` / `--gate-on`: every snake_case word in a
    /// code span of `text` (split at commas and spaces), and the values given to
    /// `gate-on:` / `no-gate-on:` / `--gate-on` / `--no-gate-on`.
    fn named_codes(text: &str) -> Vec<String> {
        let snake = |w: &&str| {
            let parts: Vec<&str> = w.split('_').collect();
            parts.len() >= 2
                && parts.iter().all(|p| {
                    !p.is_empty()
                        && p.chars()
                            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
                })
                && w.starts_with(|c: char| c.is_ascii_lowercase())
        };
        let words = |s: &str| -> Vec<String> {
            s.split(|c: char| c == ',' || c.is_whitespace())
                .filter(snake)
                .map(str::to_owned)
                .collect()
        };
        let mut out: Vec<String> = text
            .split('`')
            .skip(1)
            .step_by(2)
            .filter(|span| !span.contains('\n'))
            .flat_map(words)
            .collect();
        for line in text.lines() {
            for key in ["gate-on:", "--gate-on", "--no-gate-on"] {
                if let Some((_, value)) = line.split_once(key) {
                    out.extend(words(value.trim_start_matches('=')));
                }
            }
        }
        out
    }

    /// Issue 30, item 6: action.yml suggested `gate-on: unclosed_ranges, cross_thread_ranges`,
    /// neither of which exists, and the step failed. Every warning code a reader can copy from
    /// action.yml, the README, its docs/ pages or examples/ is a code of [`WarningCode`]; a snake_case word there
    /// that is not a code is one of the other names listed here (keys, fields, reports,
    /// GitHub's events).
    #[test]
    fn every_code_named_in_the_action_the_readme_and_the_examples_exists() {
        const OTHER_NAMES: &[&str] = &[
            // manifest.yaml's keys, analysis.json's fields, a range name
            "capture_range",
            "expected_trace_path",
            "iteration_pattern",
            "profile_name",
            "run_id",
            "trace_sha256",
            "gpu_work",
            "layer_3_token_6",
            // a kernel name in an example comment
            "gemv_kernel",
            // GitHub's events and fields
            "pull_request",
            "pull_request_target",
            "pull_requests",
            "workflow_run",
            "head_sha",
            "head_branch",
            "runner_name",
            // GitLab CI's keywords and fields
            "expire_in",
            "artifacts_expire_at",
            "merge_request_event",
            // the proxy's variables, in the lower case curl reads first
            "http_proxy",
            "https_proxy",
            "no_proxy",
            "all_proxy",
        ];
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let mut files = vec![root.join("action.yml"), root.join("README.md")];
        // The pages the README's reference moved to (the files' own pages name their fields).
        for page in [
            "commands",
            "comparison",
            "development",
            "forks",
            "github-action",
            "gitlab",
            "install",
            "troubleshooting",
        ] {
            files.push(root.join("docs").join(format!("{page}.md")));
        }
        let mut folders = vec![root.join("examples")];
        while let Some(dir) = folders.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    folders.push(path);
                } else if path
                    .extension()
                    .is_some_and(|e| e == "yml" || e == "yaml" || e == "md")
                {
                    files.push(path);
                }
            }
        }
        let mut checked = 0;
        for file in &files {
            let text = std::fs::read_to_string(file).unwrap();
            for word in named_codes(&text) {
                let report = ReportName::ALL
                    .iter()
                    .any(|r| r.as_str() == word || r.legacy_name() == word);
                assert!(
                    WarningCode::from_name(&word).is_some()
                        || report
                        || OTHER_NAMES.contains(&word.as_str()),
                    "{}: `{word}` is no warning code (nor a name listed as something else)",
                    file.display()
                );
                checked += usize::from(WarningCode::from_name(&word).is_some());
            }
        }
        assert!(
            checked > 20,
            "only {checked} codes found: the search is broken"
        );
        assert_eq!(
            named_codes("e.g. `unclosed_ranges, cross_thread_ranges`\n  gate-on: high_variance"),
            ["unclosed_ranges", "cross_thread_ranges", "high_variance"]
        );
    }

    #[test]
    fn the_docs_list_every_code_and_its_default_gating() {
        let doc = include_str!("../../../../docs/analysis-json.md");
        let mut documented = documented_codes(doc);
        documented.sort();
        let known: Vec<(String, bool)> = WarningCode::ALL
            .iter()
            .map(|c| (c.as_str().to_owned(), c.gates_by_default()))
            .collect();
        assert_eq!(
            documented, known,
            "docs/analysis-json.md's warning-code table and WarningCode differ"
        );

        // The README names the default gating set where it explains exit status 1.
        let readme = include_str!("../../../../README.md");
        let line = readme
            .lines()
            .find(|l| l.starts_with("| 1 |") && l.contains("by default"))
            .expect("README's exit-status table has a row for status 1");
        let named: std::collections::BTreeSet<&str> = line
            .split('`')
            .skip(1)
            .step_by(2)
            .filter(|w| WarningCode::ALL.iter().any(|c| c.as_str() == *w))
            .collect();
        let gating: std::collections::BTreeSet<&str> = WarningCode::ALL
            .iter()
            .filter(|c| c.gates_by_default())
            .map(|c| c.as_str())
            .collect();
        assert_eq!(
            named, gating,
            "README's default gating set and WarningCode differ"
        );
    }
}
