//! `--baseline PATH|auto` of `report` and `run`, and the two sides of `compare`: analysis.json
//! files read as data (regular files only, bounded), matched and compared by [`crate::compare`].
//!
//! A baseline that cannot be had is a note in the report, never an error: the comparison is
//! information for the reader and never changes the gate or the exit status.

use std::path::Path;

use super::analyses::read_analyses;
use super::report::{parse_analysis, MAX_ANALYSIS_BYTES};
use super::Context;
use crate::artifact::comparison::{BaselineKind, BaselineSource, Comparison};
use crate::artifact::Analysis;
use crate::cli::BaselineArgs;
use crate::compare::{self, Side};
use crate::outcome::RunOutcome;
use crate::say::say;
use crate::text::{shown, shown_path};
use crate::{files, ANALYSIS_FILE};

/// Analyses read as one side of a comparison.
#[derive(Debug, Default)]
pub struct Loaded {
    /// Each analysis and its path for people (inside the folder searched, or as given).
    pub runs: Vec<(Analysis, String)>,
    /// The analysis.json files that could not be read, and why.
    pub notes: Vec<String>,
}

/// An analysis.json, a run directory holding one, or a folder searched for them. `Err` says
/// why nothing could be read.
pub fn load_path(path: &Path) -> Result<Loaded, String> {
    let meta =
        std::fs::metadata(path).map_err(|e| format!("cannot read {}: {e}", shown_path(path)))?;
    let one = |file: &Path| -> Result<Loaded, String> {
        let bytes = files::read_regular(file, MAX_ANALYSIS_BYTES).map_err(|e| e.to_string())?;
        let analysis = parse_analysis(file, &bytes)?;
        Ok(Loaded {
            runs: vec![(analysis, file.display().to_string())],
            notes: Vec::new(),
        })
    };
    if meta.is_file() {
        return one(path);
    }
    let in_run_dir = path.join(ANALYSIS_FILE);
    if in_run_dir.is_file() {
        return one(&in_run_dir);
    }
    let outcomes = read_analyses(path, "no baseline").map_err(|e| format!("{e:#}"))?;
    let mut loaded = Loaded::default();
    for outcome in outcomes {
        match outcome {
            RunOutcome::Analysed { analysis, path } => {
                loaded.runs.push((*analysis, path.display().to_string()));
            }
            RunOutcome::Failed(f) => loaded.notes.push(f.error),
        }
    }
    if loaded.runs.is_empty() {
        return Err(format!(
            "no readable {ANALYSIS_FILE} in {}: {}",
            shown_path(path),
            loaded.notes.join("; ")
        ));
    }
    Ok(loaded)
}

/// The current runs' analyses as comparison sides.
fn heads(outcomes: &[RunOutcome]) -> Vec<(&Analysis, String)> {
    outcomes
        .iter()
        .filter_map(|o| match o {
            RunOutcome::Analysed { analysis, path } => {
                Some((analysis.as_ref(), path.display().to_string()))
            }
            RunOutcome::Failed(_) => None,
        })
        .collect()
}

/// Compares `heads` with `base` (both as read).
pub fn compare_loaded(
    heads: &[(&Analysis, String)],
    base: &Loaded,
    mut source: BaselineSource,
    mut notes: Vec<String>,
) -> Comparison {
    let head_sides: Vec<Side> = heads
        .iter()
        .map(|(analysis, path)| Side { analysis, path })
        .collect();
    let base_sides: Vec<Side> = base
        .runs
        .iter()
        .map(|(analysis, path)| Side { analysis, path })
        .collect();
    source.analyses = base.runs.iter().map(|(_, p)| p.clone()).collect();
    notes.extend(
        base.notes
            .iter()
            .map(|n| format!("a baseline file could not be read: {n}")),
    );
    compare::compare(&head_sides, &base_sides, source, notes)
}

/// The API settings `--baseline auto` uses.
pub struct Api<'a> {
    pub repo: Option<&'a str>,
    pub api_url: &'a str,
    pub token_env: &'a str,
    /// All requests and waits of `auto` together.
    pub timeout: std::time::Duration,
}

/// The comparison `--baseline` asks for, if any: never an error (what is missing is a note).
pub fn comparison_for(
    args: &BaselineArgs,
    outcomes: &[RunOutcome],
    api: &Api<'_>,
    context: &Context,
) -> Option<Comparison> {
    let spec = args.baseline.as_deref()?.trim();
    let heads = heads(outcomes);
    let (loaded, source, mut notes) = if spec == "auto" {
        let auto = super::baseline_auto::load(args, api, context);
        (auto.loaded, auto.source, auto.notes)
    } else {
        let source = BaselineSource {
            kind: BaselineKind::Path,
            path: Some(spec.to_owned()),
            workflow_run: None,
            artifact: None,
            analyses: Vec::new(),
        };
        match load_path(Path::new(spec)) {
            Ok(loaded) => (Some(loaded), source, Vec::new()),
            Err(why) => (None, source, vec![format!("no baseline: {why}")]),
        }
    };
    let comparison = match &loaded {
        Some(base) => compare_loaded(&heads, base, source, notes),
        None => {
            notes.sort();
            compare_loaded(&heads, &Loaded::default(), source, notes)
        }
    };
    for note in &comparison.notes {
        say!("nsys-gate: baseline: {}", shown(note));
    }
    say!(
        "nsys-gate: compared {} of {} run(s) with the baseline",
        comparison.runs.len(),
        heads.len()
    );
    Some(comparison)
}
