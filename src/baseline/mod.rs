//! The baseline a report compares its runs with: `--baseline PATH` (analysis.json files read
//! as data, [`crate::load::path`]) or `--baseline auto` ([`auto`]: the base branch's artifact,
//! through the forge's API), compared by [`crate::compare`].
//!
//! A baseline that cannot be had is a note in the report, never an error: the comparison is
//! information for the reader and never changes the gate or the exit status.

pub mod auto;

use std::path::Path;
use std::time::Duration;

use crate::artifact::comparison::{BaselineKind, BaselineSource, Comparison};
use crate::artifact::Analysis;
use crate::compare::{self, Side};
use crate::environment::Environment;
use crate::load::{self, Loaded};
use crate::outcome::RunOutcome;
use crate::say::say;
use crate::text::shown;

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

/// What `--baseline` asks for, as the stages take it.
#[derive(Debug, Clone)]
pub struct Request {
    /// `--baseline`: a path, or `auto`.
    pub spec: String,
    /// `auto`: the workflow whose runs hold the baseline (`None`: this run's).
    pub workflow: Option<String>,
    /// `auto`: the artifact's name.
    pub artifact: String,
    /// `auto`: how to reach the forge's API.
    pub api: Api,
}

/// The API settings `--baseline auto` uses.
#[derive(Debug, Clone)]
pub struct Api {
    pub repo: Option<String>,
    pub api_url: String,
    pub token_env: String,
    /// All requests and waits of `auto` together.
    pub timeout: Duration,
}

/// The comparison `--baseline` asks for: never an error (what is missing is a note).
pub fn comparison(request: &Request, outcomes: &[RunOutcome], env: &Environment) -> Comparison {
    let spec = request.spec.trim();
    let heads = heads(outcomes);
    let (loaded, source, mut notes) = if spec == "auto" {
        let auto = auto::load(request, env);
        (auto.loaded, auto.source, auto.notes)
    } else {
        let source = BaselineSource {
            kind: BaselineKind::Path,
            path: Some(spec.to_owned()),
            workflow_run: None,
            artifact: None,
            analyses: Vec::new(),
        };
        match load::path(Path::new(spec)) {
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
    comparison
}
