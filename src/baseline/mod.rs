//! The base runs a report compares its runs with: `--baseline PATH` (analysis.json files read
//! as data, [`crate::load::each`], oldest first in the order given) or `--baseline auto` (the
//! forge's history of the base branch, [`crate::forge::Forge::history`]).
//! Each analysis is reduced to its run-level statistics as it is read
//! ([`crate::compare::RunLevel`]) and compared by [`crate::compare`].
//!
//! A baseline that cannot be had is a note in the report, never an error: the comparison is
//! information for the reader and never changes the gate or the exit status.

use std::path::PathBuf;

use crate::artifact::comparison::{BaselineKind, BaselineSource, Comparison};
use crate::compare::{self, Criteria, RunLevel};
use crate::forge::{Forge, HistoryNote, HistoryRequest};
use crate::load;
use crate::outcome::RunOutcome;
use crate::say::say;
use crate::text::shown;

/// What `--baseline` asks for, as the stages take it.
#[derive(Debug, Clone)]
pub struct Request {
    pub base: Base,
    pub criteria: Criteria,
}

/// Where the base runs come from.
#[derive(Debug, Clone)]
pub enum Base {
    /// `--baseline PATH` (repeatable): oldest first.
    Paths(Vec<PathBuf>),
    /// `--baseline auto`.
    Auto(HistoryRequest),
}

/// The comparison `--baseline` asks for: never an error (what is missing is a note).
pub fn comparison(request: &Request, outcomes: &[RunOutcome], forge: &dyn Forge) -> Comparison {
    let heads = heads(outcomes);
    let (bases, source, mut notes) = match &request.base {
        Base::Auto(auto) => {
            let found = forge.history(auto);
            (found.runs, found.source, found.notes)
        }
        Base::Paths(paths) => {
            let read = read_paths(paths);
            let (source, notes) = (read.source(), read.notes());
            (read.runs, source, notes)
        }
    };
    if bases.is_empty() && !notes.iter().any(HistoryNote::is_no_baseline) {
        notes.push(HistoryNote::NoBaseline(
            "no baseline: no base run could be read".to_owned(),
        ));
    }
    let notes = notes.into_iter().map(HistoryNote::into_text).collect();
    let comparison = compare::compare(&heads, &bases, source, notes, request.criteria.clone());
    if crate::interrupt::received().is_some() {
        // Stopped (and said so) while the history was fetched: the command ends here.
        return comparison;
    }
    for note in &comparison.notes {
        say!("nsys-gate: baseline: {}", shown(note));
    }
    say!(
        "nsys-gate: compared {} of {} run(s) with {} base run(s)",
        comparison.runs.iter().map(|r| r.heads.len()).sum::<usize>(),
        heads.len(),
        bases.len()
    );
    comparison
}

/// The current runs' analyses, reduced.
fn heads(outcomes: &[RunOutcome]) -> Vec<RunLevel> {
    outcomes
        .iter()
        .filter_map(|o| match o {
            RunOutcome::Analysed { analysis, path } => {
                Some(RunLevel::of(analysis, &path.display().to_string()))
            }
            RunOutcome::Failed(_) => None,
        })
        .collect()
}

/// What [`read_paths`] read.
#[derive(Debug, Default)]
pub struct PathRuns {
    /// Each analysis read, reduced, in the order given (its file, as shown to people, in
    /// `run.analysis_path`).
    pub runs: Vec<RunLevel>,
    /// The paths given that at least one run was read from.
    pub read_from: Vec<PathBuf>,
    /// Why a path given, or a file under it, gave no run: one line each, naming its path.
    pub unread: Vec<String>,
}

impl PathRuns {
    /// Where `--baseline PATH` read from: the paths runs were read from, and their files.
    pub fn source(&self) -> BaselineSource {
        BaselineSource {
            kind: BaselineKind::Path,
            paths: self
                .read_from
                .iter()
                .map(|p| p.display().to_string())
                .collect(),
            workflow: None,
            job: None,
            branch: None,
            artifact: None,
            workflow_runs: Vec::new(),
            ci_runs: Vec::new(),
            analyses: self
                .runs
                .iter()
                .map(|r| r.run.analysis_path.clone())
                .collect(),
        }
    }

    /// The comparison's notes on what could not be read: why there is no baseline when
    /// nothing was, otherwise one note per path or file left out.
    pub fn notes(&self) -> Vec<HistoryNote> {
        self.unread
            .iter()
            .map(|u| {
                if self.runs.is_empty() {
                    HistoryNote::NoBaseline(format!("no baseline: {u}"))
                } else {
                    HistoryNote::Partial(format!("a base run could not be read: {u}"))
                }
            })
            .collect()
    }
}

/// The analyses of `paths` (each an analysis.json, a run directory or a folder of them), in
/// the order given and path order within a folder, each reduced as it is read; and why each
/// path or file that gave no run could not be read.
pub fn read_paths(paths: &[PathBuf]) -> PathRuns {
    let mut out = PathRuns::default();
    for path in paths {
        let before = out.runs.len();
        // A signal stops the reading of a large file at its next piece.
        let stop = || crate::interrupt::received().is_some();
        match load::each(path, &stop, |recorded, shown| {
            out.runs.push(RunLevel::read(recorded, &shown))
        }) {
            Ok(unread) => out.unread.extend(unread),
            Err(why) => out.unread.push(why),
        }
        if out.runs.len() > before {
            out.read_from.push(path.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether a note says there is no baseline is its type, not its words.
    #[test]
    fn an_unreadable_path_is_a_typed_no_baseline_note() {
        let dir = tempfile::tempdir().unwrap();
        let read = read_paths(&[dir.path().join("none")]);
        let notes = read.notes();
        assert_eq!(notes.len(), 1);
        assert!(notes[0].is_no_baseline(), "{notes:?}");
        assert!(notes[0].clone().into_text().starts_with("no baseline: "));
        assert!(!HistoryNote::Partial("no baseline lookalike".to_owned()).is_no_baseline());
    }
}
