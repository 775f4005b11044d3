//! What happened to one run directory: analysed, or failed with a classified error.

use std::path::PathBuf;

use regex::Regex;

use crate::artifact::Analysis;
use crate::manifest::ManifestError;
use crate::nsys::NsysError;
use crate::reports::ReportError;
use crate::rundir::RunDirError;

/// One run directory as the report sees it.
#[derive(Debug, Clone)]
pub enum RunOutcome {
    /// analysis.json was written (or read); `path` is where it is.
    Analysed {
        analysis: Box<Analysis>,
        path: PathBuf,
    },
    /// No analysis (exit status 2): what failed and what to check.
    Failed(Failure),
}

impl RunOutcome {
    /// The contract's exit status for this run directory alone.
    pub fn status(&self) -> u8 {
        match self {
            RunOutcome::Analysed { analysis, .. }
                if analysis.gate.result == crate::artifact::GateResult::Pass =>
            {
                crate::gate::exit::PASS
            }
            RunOutcome::Analysed { .. } => crate::gate::exit::FAIL,
            RunOutcome::Failed(_) => crate::gate::exit::ERROR,
        }
    }
}

/// The exit status over several run directories: the worst of them (2 over 1 over 0).
pub fn overall_status(outcomes: &[RunOutcome]) -> u8 {
    outcomes
        .iter()
        .map(RunOutcome::status)
        .max()
        .unwrap_or(crate::gate::exit::ERROR)
}

/// A run directory that could not be analysed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub run_dir: PathBuf,
    pub category: FailureCategory,
    /// The whole error: every cause, one per line, with nsys's own words.
    pub error: String,
    /// The exact version of the nsys involved, when it is known.
    pub nsys_version: Option<String>,
}

/// What kind of failure, for the words and the things to check in the report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureCategory {
    /// No nsys executable, or it could not be run or asked its version.
    MissingExecutable,
    /// The trace is newer than this nsys, or this nsys lacks the NVTX reports.
    IncompatibleTrace,
    /// nsys found no NVTX data it could report.
    NoNvtxData,
    /// nsys ran and failed otherwise.
    NsysFailed,
    /// nsys ran past `--nsys-timeout`.
    Timeout,
    /// A CSV report lacks a column, or its rows do not parse or fit together.
    ReportColumns,
    /// manifest.yaml is missing a key, ill-typed or not YAML.
    Manifest,
    /// The run directory or its trace is missing or not what it should be.
    RunDirectory,
    /// `report`: there is no readable analysis.json.
    NoAnalysis,
    Other,
}

impl FailureCategory {
    /// A short phrase: what failed.
    pub fn label(self) -> &'static str {
        match self {
            FailureCategory::MissingExecutable => "nsys could not be run",
            FailureCategory::IncompatibleTrace => "the trace and this nsys are incompatible",
            FailureCategory::NoNvtxData => "nsys found no NVTX data",
            FailureCategory::NsysFailed => "nsys stats failed",
            FailureCategory::Timeout => "nsys stats ran past the timeout",
            FailureCategory::ReportColumns => "nsys's CSV reports could not be read",
            FailureCategory::Manifest => "manifest.yaml could not be read",
            FailureCategory::RunDirectory => "the run directory or its trace is missing",
            FailureCategory::NoAnalysis => "there is no readable analysis.json",
            FailureCategory::Other => "the analysis failed",
        }
    }

    /// What to check, most likely first.
    pub fn checks(self) -> &'static [&'static str] {
        match self {
            FailureCategory::MissingExecutable => &[
                "Nsight Systems is installed where the job runs (for example with `scripts/install-nsys.sh` or NVIDIA's packages)",
                "`--nsys PATH` or `$NSYS` names the `nsys` executable itself, and the job's user may run it",
            ],
            FailureCategory::IncompatibleTrace => &[
                "the trace was recorded by a newer Nsight Systems than the one reading it: read it with the same or a newer version (`--nsys PATH`)",
                "the nsys reading the trace is 2022.4 or newer (older ones lack the NVTX reports)",
            ],
            FailureCategory::NoNvtxData => &[
                "the program was profiled with NVTX tracing on (`nsys profile --trace cuda,nvtx …`)",
                "the program pushes its NVTX ranges (the capture range and the iteration ranges) on the profiled path",
            ],
            FailureCategory::NsysFailed => &[
                "nsys's own words above",
                "the trace is complete (the profiled program ended normally and nsys finished writing it) and the disk is not full",
            ],
            FailureCategory::Timeout => &[
                "raise `--nsys-timeout` for large traces",
                "the trace is not unusually large (a capture range that covers more than the measured iterations)",
            ],
            FailureCategory::ReportColumns => &[
                "the Nsight Systems version: a newer or older nsys may have renamed or dropped a report column (the message names the column, the file and the version)",
                "versions 2022.4, 2023.4 and 2024.2 are tested; with `--reuse-stats`, that the CSVs under `stats/` were not edited or cut short",
            ],
            FailureCategory::Manifest => &[
                "manifest.yaml at the line named above",
                "the required keys: `profile_name`, `run_id`, `capture_range` and `workload.iterations`",
            ],
            FailureCategory::RunDirectory => &[
                "`--run-dir` names the folder the profiling harness wrote, with manifest.yaml and the trace in it",
                "a downloaded artifact kept the whole folder, trace included",
            ],
            FailureCategory::NoAnalysis => &[
                "run `nsys-gate analyze --run-dir DIR` (or `nsys-gate run`) on the run directory first",
                "analysis.json was written by this version of nsys-gate (schema version 1)",
            ],
            FailureCategory::Other => &["the message above"],
        }
    }
}

impl Failure {
    /// Classifies an error of the analyze pipeline by the typed errors in its chain.
    pub fn from_error(run_dir: PathBuf, error: &anyhow::Error) -> Self {
        let mut category = FailureCategory::Other;
        let mut nsys_version = None;
        if let Some(e) = find::<NsysError>(error) {
            (category, nsys_version) = match e {
                NsysError::NotFound { .. }
                | NsysError::NotExecutable { .. }
                | NsysError::Spawn { .. }
                | NsysError::Version { .. } => (FailureCategory::MissingExecutable, None),
                NsysError::MissingReports { version, .. } => {
                    (FailureCategory::IncompatibleTrace, Some(version.clone()))
                }
                NsysError::IncompatibleTrace { nsys_version, .. } => (
                    FailureCategory::IncompatibleTrace,
                    Some(nsys_version.clone()),
                ),
                NsysError::Timeout { version, .. } => {
                    (FailureCategory::Timeout, Some(version.clone()))
                }
                NsysError::Failed { version, words, .. } => (
                    if words.contains("NVTX") || words.contains("NV Tools Extension") {
                        FailureCategory::NoNvtxData
                    } else {
                        FailureCategory::NsysFailed
                    },
                    Some(version.clone()),
                ),
                NsysError::Io { .. } => (FailureCategory::NsysFailed, None),
            };
        } else if find::<ReportError>(error).is_some()
            || find::<crate::analysis::DataError>(error).is_some()
        {
            category = FailureCategory::ReportColumns;
        } else if let Some(e) = find::<RunDirError>(error) {
            category = match e {
                RunDirError::Manifest(_) | RunDirError::NoTraceName { .. } => {
                    FailureCategory::Manifest
                }
                _ => FailureCategory::RunDirectory,
            };
        } else if find::<ManifestError>(error).is_some() {
            category = FailureCategory::Manifest;
        }
        let text = chain_text(error);
        if nsys_version.is_none() {
            nsys_version = version_in(&text);
        }
        Failure {
            run_dir,
            category,
            error: text,
            nsys_version,
        }
    }
}

fn find<T: std::error::Error + Send + Sync + 'static>(error: &anyhow::Error) -> Option<&T> {
    error
        .downcast_ref::<T>()
        .or_else(|| error.chain().find_map(|e| e.downcast_ref::<T>()))
}

/// The error and every cause, one per line, as `nsys-gate: error:` prints them.
pub fn chain_text(error: &anyhow::Error) -> String {
    let mut text = error.to_string();
    for cause in error.chain().skip(1) {
        text.push_str(&format!("\ncaused by: {cause}"));
    }
    text
}

/// `nsys 2024.2.3.38-242334140272v0` in a message (the pipeline's context lines name it).
fn version_in(text: &str) -> Option<String> {
    let re = Regex::new(r"nsys (\d{4}\.\d+[0-9A-Za-z.\-]*)").expect("valid regex");
    re.captures(text)
        .map(|c| c[1].trim_end_matches('.').to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nsys_errors_are_classified_with_their_version() {
        let err = anyhow::Error::new(NsysError::IncompatibleTrace {
            trace_version: "2024.2.3".into(),
            nsys_version: "2023.4.4.54-234433681190v0".into(),
            words: "Report was created in Nsight Systems version (2024.2.3), newer than your current version (2023.4.4).".into(),
            command: "nsys stats …".into(),
        });
        let f = Failure::from_error("/r".into(), &err);
        assert_eq!(f.category, FailureCategory::IncompatibleTrace);
        assert_eq!(
            f.nsys_version.as_deref(),
            Some("2023.4.4.54-234433681190v0")
        );
        assert!(f.error.contains("newer than your current version"));

        let err = anyhow::Error::new(NsysError::NotFound {
            searched: vec!["PATH".into()],
        })
        .context("analysing /r");
        let f = Failure::from_error("/r".into(), &err);
        assert_eq!(f.category, FailureCategory::MissingExecutable);
        assert_eq!(f.nsys_version, None);
        assert!(f
            .error
            .starts_with("analysing /r\ncaused by: no nsys executable found"));
    }

    #[test]
    fn report_errors_take_the_version_from_the_context() {
        let err = anyhow::Error::new(ReportError::MissingColumn {
            path: "stats/nsys_nvtx_pushpop_trace.csv".into(),
            column: "RangeId".into(),
            header: "Start (ns),End (ns)".into(),
        })
        .context("cannot read a report written by nsys 2024.2.3.38-242334140272v0");
        let f = Failure::from_error("/r".into(), &err);
        assert_eq!(f.category, FailureCategory::ReportColumns);
        assert_eq!(
            f.nsys_version.as_deref(),
            Some("2024.2.3.38-242334140272v0")
        );
    }

    #[test]
    fn run_directory_errors() {
        let err = anyhow::Error::new(RunDirError::Missing("/nowhere".into()));
        let f = Failure::from_error("/nowhere".into(), &err);
        assert_eq!(f.category, FailureCategory::RunDirectory);
        let err = anyhow::anyhow!("something else");
        assert_eq!(
            Failure::from_error("/r".into(), &err).category,
            FailureCategory::Other
        );
    }
}
