//! What a GitHub Actions step shows besides the report on standard output (Gitea's and
//! Forgejo's runners read the same files): the report again in `$GITHUB_STEP_SUMMARY`, within
//! the 1 MiB a step may write there; the annotations (workflow commands, at most 10 of a kind,
//! through [`nsys_gate_core::say::commands`]); the step outputs in `$GITHUB_OUTPUT`.

use std::path::Path;

use anyhow::Context as _;

use super::env::Environment;
use super::{actions, SUMMARY_BYTES};
use crate::StepResults;
use nsys_gate_core::say::{self, say};
use nsys_gate_core::text::shown_path;
use nsys_gate_render::limit::Budget;

/// Smallest room in the step summary worth writing a report into.
const MIN_SUMMARY_BYTES: usize = 4096;

/// The step's files and annotations, when in Actions. Every part is attempted; the first
/// error is returned.
pub fn publish(env: &Environment, step: &StepResults<'_>) -> anyhow::Result<()> {
    if !env.in_actions {
        return Ok(());
    }
    let mut first_error: Option<anyhow::Error> = None;
    let mut keep = |r: anyhow::Result<()>| {
        if let Err(e) = r {
            first_error.get_or_insert(e);
        }
    };
    if let Some(path) = &env.step_summary {
        keep(append_summary(step, path));
    }
    let commands: Vec<String> = actions::shown(&step.annotations)
        .iter()
        .map(actions::command)
        .collect();
    keep(say::commands(&commands).context("cannot write annotations"));
    if let Some(path) = &env.output {
        keep(actions::write_outputs(path, &step.outputs).map_err(anyhow::Error::from));
    }
    match first_error {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// The report again, within what is left of the step summary's 1 MiB.
fn append_summary(step: &StepResults<'_>, path: &Path) -> anyhow::Result<()> {
    let room = SUMMARY_BYTES.saturating_sub(actions::summary_size(path) + 1);
    if room < MIN_SUMMARY_BYTES {
        say!(
            "nsys-gate: warning: the step summary {} already holds nearly {}; the report was not added to it",
            shown_path(path),
            Budget::Bytes(SUMMARY_BYTES).describe()
        );
        return Ok(());
    }
    let summary = (step.summary)(room)?;
    actions::append_summary(path, &summary)?;
    Ok(())
}
