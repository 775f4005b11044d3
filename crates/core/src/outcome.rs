//! What happened to one run directory, as the report and the exit status see it: analysed
//! (the artifact), or failed with a typed [`Failure`] that the failing stage filled in.
//!
//! Plain data only: the renderer reads these types and nothing of the stages behind them.

use std::path::PathBuf;

use crate::artifact::TESTED_VERSIONS;
use crate::artifact::{Analysis, Verdict, SCHEMA_VERSION};
use crate::text::and_list;

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
    /// The gate's verdict on this run directory alone: its analysis's gate, or `error`.
    pub fn verdict(&self) -> Verdict {
        match self {
            RunOutcome::Analysed { analysis, .. } => analysis.gate.result.into(),
            RunOutcome::Failed(_) => Verdict::Error,
        }
    }
}

/// The gate's verdict over several run directories: the worst of them (`error` over `fail`
/// over `pass`); `error` for none. [`crate::gate::Ending::Judged`] carries it to the exit status.
pub fn overall_verdict(outcomes: &[RunOutcome]) -> Verdict {
    outcomes
        .iter()
        .map(RunOutcome::verdict)
        .max()
        .unwrap_or(Verdict::Error)
}

/// A run directory that could not be analysed, as the stage that failed described it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub run_dir: PathBuf,
    pub kind: FailureKind,
    /// The whole error: every cause, one per line (`caused by: …`), with nsys's own words.
    pub error: String,
    /// The exact version of the nsys involved, when it is known.
    pub nsys_version: Option<String>,
    /// What nsys printed, when nsys ran and its words explain the failure.
    pub nsys_words: Option<String>,
    /// The command that was tried, when the failure is nsys's.
    pub command: Option<String>,
    /// Run facts read before the failure.
    pub facts: RunFacts,
}

/// What was known of the run when it failed: empty when the manifest could not be read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunFacts {
    /// The manifest's `profile_name`.
    pub profile_name: Option<String>,
    /// The manifest's `run_id`.
    pub run_id: Option<String>,
}

impl Failure {
    /// A failure with no nsys facts; the builder methods below add what the stage knows.
    pub fn new(run_dir: PathBuf, kind: FailureKind, error: String) -> Self {
        Failure {
            run_dir,
            kind,
            error,
            nsys_version: None,
            nsys_words: None,
            command: None,
            facts: RunFacts::default(),
        }
    }

    /// What to check, most likely first.
    pub fn checks(&self) -> Vec<String> {
        self.kind.checks()
    }
}

/// What kind of failure, for the words and the things to check in the report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureKind {
    /// No nsys executable, or it could not be run or asked its version.
    MissingExecutable,
    /// The trace was recorded by a newer nsys than this one.
    IncompatibleTrace,
    /// This nsys lacks the NVTX reports (older than 2022.4).
    NsysTooOld,
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
    /// Another nsys-gate holds the run directory's lock: its files are the other run's.
    Busy,
    Other,
}

impl FailureKind {
    /// A short phrase: what failed.
    pub fn label(self) -> &'static str {
        match self {
            FailureKind::MissingExecutable => "nsys could not be run",
            FailureKind::IncompatibleTrace => "the trace is newer than this nsys",
            FailureKind::NsysTooOld => "this nsys lacks the NVTX reports",
            FailureKind::NoNvtxData => "nsys found no NVTX data",
            FailureKind::NsysFailed => "nsys stats failed",
            FailureKind::Timeout => "nsys stats ran past the timeout",
            FailureKind::ReportColumns => "nsys's CSV reports could not be read",
            FailureKind::Manifest => "manifest.yaml could not be read",
            FailureKind::RunDirectory => "the run directory or its trace is missing",
            FailureKind::NoAnalysis => "there is no readable analysis.json",
            FailureKind::Busy => "another nsys-gate is analysing the run directory",
            FailureKind::Other => "the analysis failed",
        }
    }

    /// What to check, most likely first.
    pub fn checks(self) -> Vec<String> {
        let fixed = |checks: &[&str]| checks.iter().map(|c| (*c).to_owned()).collect();
        match self {
            FailureKind::MissingExecutable => fixed(&[
                "Nsight Systems is installed where the job runs (for example with `scripts/install-nsys.sh` or NVIDIA's packages)",
                "`--nsys PATH` or `$NSYS` names the `nsys` executable itself, and the job's user may run it",
            ]),
            FailureKind::IncompatibleTrace => vec![
                format!("read the trace with the Nsight Systems that recorded it, or a newer one: NVIDIA's installers ({}, or the CUDA toolkit's) put it in `/opt/nvidia/nsight-systems/VERSION/bin` (found there) or anywhere you give with `--nsys PATH` or `NSYS`", crate::artifact::DOWNLOAD_URL),
                "the runner that records and the runner that analyses have the same Nsight Systems, or the analysing one a newer".to_owned(),
            ],
            FailureKind::NsysTooOld => fixed(&[
                "the nsys reading the trace is 2022.4 or newer (older ones lack the NVTX reports): NVIDIA's installers, then `--nsys PATH` or `NSYS`",
            ]),
            FailureKind::NoNvtxData => fixed(&[
                "the program was profiled with NVTX tracing on (`nsys profile --trace cuda,nvtx …`)",
                "the program pushes its NVTX ranges (the capture range and the iteration ranges) on the profiled path",
            ]),
            FailureKind::NsysFailed => fixed(&[
                "nsys's own words above",
                "the trace is complete (the profiled program ended normally and nsys finished writing it) and the disk is not full",
            ]),
            FailureKind::Timeout => fixed(&[
                "raise `--nsys-timeout` for large traces",
                "the trace is not unusually large (a capture range that covers more than the measured iterations)",
            ]),
            FailureKind::ReportColumns => vec![
                "the Nsight Systems version: a newer or older nsys may have renamed or dropped a report column (the message names the column, the file and the version)".to_owned(),
                format!(
                    "versions {} are tested; with `--reuse-stats`, that the CSVs under `stats/` were not edited or cut short",
                    and_list(&TESTED_VERSIONS)
                ),
            ],
            FailureKind::Manifest => fixed(&[
                "manifest.yaml at the line named above",
                "the required keys: `profile_name`, `run_id`, `capture_range` and `workload.iterations`",
            ]),
            FailureKind::RunDirectory => fixed(&[
                "`--run-dir` names the folder the profiling harness wrote, with manifest.yaml and the trace in it",
                "a downloaded artifact kept the whole folder, trace included",
            ]),
            FailureKind::NoAnalysis => vec![
                "run `nsys-gate analyze --run-dir DIR` (or `nsys-gate run`) on the run directory first".to_owned(),
                format!("analysis.json was written by this version of nsys-gate (schema version {SCHEMA_VERSION})"),
            ],
            FailureKind::Busy => fixed(&[
                "wait for the other analysis of this run directory to finish, then run again",
            ]),
            FailureKind::Other => fixed(&["the message above"]),
        }
    }
}

/// The error and every cause, one per line (`caused by: …`).
pub fn chain_text(error: &anyhow::Error) -> String {
    chain_lines(error, "caused by: ")
}

/// The error, then each cause on a line of its own after `prefix`, except a cause whose words
/// are already there (an error that quotes its source, such as `cannot read X: No such file`,
/// would otherwise say it twice).
pub fn chain_lines(error: &anyhow::Error, prefix: &str) -> String {
    let mut text = error.to_string();
    for cause in error.chain().skip(1) {
        let cause = cause.to_string();
        if !text.contains(&cause) {
            text.push('\n');
            text.push_str(prefix);
            text.push_str(&cause);
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cause_the_error_already_quotes_is_not_repeated() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "No such file");
        let quoting = anyhow::Error::new(io).context("cannot read t.j2: No such file");
        assert_eq!(chain_text(&quoting), "cannot read t.j2: No such file");
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "No such file");
        let terse = anyhow::Error::new(io).context("cannot read t.j2");
        assert_eq!(
            chain_lines(&terse, "  caused by: "),
            "cannot read t.j2\n  caused by: No such file"
        );
    }
}
