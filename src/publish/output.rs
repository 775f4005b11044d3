//! The report's sinks of `report` and `run`: report.md (and comparison.json beside it) and
//! standard output ([`ReportSink`]); what the CI step shows, handed to the forge (the job
//! summary, the annotations and the step outputs: [`StepSink`]).

use std::path::{Path, PathBuf};

use anyhow::Context as _;

use crate::artifact::comparison::{Comparison, COMPARISON_FILE};
use crate::artifact::Verdict;
use crate::files::{self, absolute};
use crate::forge::{Annotation, Forge, Level, StepResults};
use crate::gate::Ending;
use crate::outcome::{chain_text, overall_verdict, RunOutcome};
use crate::render::Budget;
use crate::say::{self, say};
use crate::text::shown_path;

use super::{Delivery, Done, Sink};

/// The report's file name in a run directory.
pub const REPORT_FILE: &str = "report.md";

/// Where the rendered report goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Destination {
    /// Standard output only (`report --output -`).
    Stdout,
    /// report.md: the file given (`--output FILE`), else the first existing run directory's;
    /// printed instead when there is neither (`report`).
    File(Option<PathBuf>),
    /// report.md as [`Destination::File`], and standard output too (`run`).
    FileAndStdout(Option<PathBuf>),
}

impl Destination {
    /// The file given, if any.
    fn given(&self) -> Option<&Path> {
        match self {
            Destination::Stdout => None,
            Destination::File(given) | Destination::FileAndStdout(given) => given.as_deref(),
        }
    }

    fn writes_file(&self) -> bool {
        *self != Destination::Stdout
    }
}

/// The report's sink: report.md (and comparison.json beside it when there is a comparison),
/// and standard output, as `destination` says.
pub struct ReportSink {
    pub destination: Destination,
    /// The run directories: report.md goes into the first that holds a manifest when no file
    /// is given.
    pub run_dirs: Vec<PathBuf>,
}

impl Sink for ReportSink {
    fn deliver(&self, result: &Delivery<'_>, done: &mut Done, _: &dyn Forge) -> anyhow::Result<()> {
        let report = result.text();
        done.report = write_report(report, &self.destination, &self.run_dirs)?;
        if let (Some(c), Some(report_path)) = (result.comparison, &done.report) {
            done.comparison = Some(write_comparison(c, report_path)?);
        }
        print_report(
            report,
            done.report.as_deref(),
            result.outcomes,
            &self.destination,
        )
    }
}

/// The CI step's sink: the job summary (the report rendered again within the room it has),
/// the annotations and the step outputs, handed to the forge. A failure is said, and the
/// command ends failed after the sinks that follow.
pub struct StepSink;

impl Sink for StepSink {
    fn deliver(
        &self,
        result: &Delivery<'_>,
        done: &mut Done,
        forge: &dyn Forge,
    ) -> anyhow::Result<()> {
        let verdict = overall_verdict(result.outcomes);
        if let Err(err) = publish_step(result, done, verdict, forge) {
            say!(
                "nsys-gate: error: {}",
                chain_text(&err).replace('\n', "\n  ")
            );
            done.ending = Ending::Failed;
        }
        Ok(())
    }
}

/// Prints the report when it goes to standard output; not to a terminal when no run directory
/// could be analysed (the errors above say it all), nor `run`'s to a terminal when it was
/// written to a file (the summary above is what a person reads there; the file is named).
fn print_report(
    report: &str,
    report_path: Option<&Path>,
    outcomes: &[RunOutcome],
    destination: &Destination,
) -> anyhow::Result<()> {
    let nothing_analysed = outcomes.iter().all(|o| matches!(o, RunOutcome::Failed(_)));
    let print = report_path.is_none() || matches!(destination, Destination::FileAndStdout(_));
    if print && destination.writes_file() && nothing_analysed && say::stdout_is_terminal() {
        // A mistyped --run-dir: a page of markdown repeating the errors would only push them
        // off the screen.
        say!(
            "nsys-gate: no run directory could be analysed, so the report (the errors above, in markdown) is not printed to the terminal{}",
            report_path
                .map(|p| format!("; it is in {}", shown_path(p)))
                .unwrap_or_default()
        );
    } else if let (Destination::FileAndStdout(_), Some(path), true) =
        (destination, report_path, say::stdout_is_terminal())
    {
        // `run` in a terminal: a person reading. The report is markdown for a pull-request
        // comment (HTML tags, entities, a mermaid block), and a page of it would scroll the
        // summary above off the screen: it goes to its file, and to pipes and logs as before.
        say!(
            "nsys-gate: the report is markdown for a pull-request comment ({} lines), so it is not printed to a terminal: read {}, or pipe the command (`| less`) to print it",
            report.lines().count(),
            shown_path(path)
        );
    } else if print {
        // Inside GitHub Actions, between `::stop-commands::TOKEN` and `::TOKEN::`.
        say::report(report).context("cannot write the report to standard output")?;
    }
    Ok(())
}

/// Hands the forge what the CI step shows: a job summary rendered to the room it has, the
/// annotations and the step outputs.
fn publish_step(
    result: &Delivery<'_>,
    done: &Done,
    verdict: Verdict,
    forge: &dyn Forge,
) -> anyhow::Result<()> {
    let mut outputs = step_outputs(result.outcomes, done.report.as_deref(), verdict).to_vec();
    outputs.push((
        "comparison-path",
        done.comparison
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_default(),
    ));
    let summary =
        |room: usize| -> anyhow::Result<String> { Ok(result.within(Budget::Bytes(room))?) };
    forge.publish_step(&StepResults {
        summary: &summary,
        annotations: annotations(result.outcomes),
        outputs,
    })
}

/// Characters of one annotation message (GitHub shows long ones cut anyway).
const ANNOTATION_CHARS: usize = 1000;

/// The annotations of every run, for the forge to show: gating warnings and failed analyses
/// as errors, other warnings as warnings.
pub fn annotations(outcomes: &[RunOutcome]) -> Vec<Annotation> {
    let mut errors = Vec::new();
    let mut warnings = Vec::new();
    for o in outcomes {
        match o {
            RunOutcome::Analysed { analysis, .. } => {
                let who = format!(
                    "{} (run {})",
                    analysis.run.profile_name, analysis.run.run_id
                );
                for w in &analysis.warnings {
                    let (level, list, title) = if w.gating {
                        (
                            Level::Error,
                            &mut errors,
                            format!("nsys-gate: {} (fails the job)", w.code),
                        )
                    } else {
                        (
                            Level::Warning,
                            &mut warnings,
                            format!("nsys-gate: {}", w.code),
                        )
                    };
                    list.push(Annotation {
                        level,
                        title,
                        message: crate::text::shorten(
                            &format!("{who}: {}", w.message),
                            ANNOTATION_CHARS,
                        ),
                    });
                }
            }
            RunOutcome::Failed(f) => errors.push(Annotation {
                level: Level::Error,
                title: format!("nsys-gate: {}", f.kind.label()),
                message: crate::text::shorten(
                    &format!("{}: {}", f.run_dir.display(), f.error),
                    ANNOTATION_CHARS,
                ),
            }),
        }
    }
    errors.extend(warnings);
    errors
}

/// Writes report.md (`--output`, else the first run directory's: a folder holding a
/// manifest.yaml, never a folder of runs given by mistake); returns where.
fn write_report(
    report: &str,
    destination: &Destination,
    run_dirs: &[PathBuf],
) -> anyhow::Result<Option<PathBuf>> {
    let report_path = match destination.given() {
        Some(given) => Some(given.to_owned()),
        None if destination.writes_file() => run_dirs
            .iter()
            .find(|d| d.join(crate::rundir::MANIFEST_FILE).is_file())
            .map(|d| absolute(d).join(REPORT_FILE)),
        None => None,
    };
    match &report_path {
        Some(path) => {
            files::write_atomically(path, report.as_bytes())
                .with_context(|| format!("cannot write the report to {}", shown_path(path)))?;
            say!("nsys-gate: report written to {}", shown_path(path));
        }
        None if destination.writes_file() => say!(
            "nsys-gate: no run directory (a folder with {}) to write {REPORT_FILE} into (pass --output FILE to keep the report)",
            crate::rundir::MANIFEST_FILE
        ),
        None => {}
    }
    Ok(report_path)
}

/// comparison.json beside the report; returns where.
fn write_comparison(c: &Comparison, report_path: &Path) -> anyhow::Result<PathBuf> {
    let dir = match report_path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let path = dir.join(COMPARISON_FILE);
    files::write_atomically(&path, &c.to_json())
        .with_context(|| format!("cannot write the comparison to {}", shown_path(&path)))?;
    say!("nsys-gate: comparison written to {}", shown_path(&path));
    Ok(path)
}

/// `analysis-paths`, `report-path`, `gate` and `warnings`.
fn step_outputs(
    outcomes: &[RunOutcome],
    report_path: Option<&Path>,
    verdict: Verdict,
) -> [(&'static str, String); 4] {
    let analysis_paths: Vec<String> = outcomes
        .iter()
        .filter_map(|o| match o {
            RunOutcome::Analysed { path, .. } => Some(path.display().to_string()),
            RunOutcome::Failed(_) => None,
        })
        .collect();
    let warnings: usize = outcomes
        .iter()
        .map(|o| match o {
            RunOutcome::Analysed { analysis, .. } => analysis.warnings.len(),
            RunOutcome::Failed(_) => 0,
        })
        .sum();
    [
        ("analysis-paths", analysis_paths.join("\n")),
        (
            "report-path",
            report_path
                .map(|p| p.display().to_string())
                .unwrap_or_default(),
        ),
        ("gate", verdict.as_str().to_owned()),
        ("warnings", warnings.to_string()),
    ]
}
