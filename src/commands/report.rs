//! `nsys-gate report`: the run directories' analysis.json files to one markdown report.

use std::path::Path;
use std::process::ExitCode;

use super::baseline::{comparison_for, Api};
use super::output::{finish, Finish};
use super::{absolute, load_template, render_options, Context};
use crate::artifact::{self, Analysis};
use crate::cli::ReportArgs;
use crate::outcome::{Failure, FailureKind, RunFacts, RunOutcome};
use crate::render::Renderer;
use crate::text::shown_path;
use crate::{files, manifest, rundir, ANALYSIS_FILE};

pub fn report(args: &ReportArgs, context: &Context) -> anyhow::Result<ExitCode> {
    let template = load_template(args.render.template.as_deref())?;
    let renderer = Renderer::new(&template)?;
    let outcomes: Vec<RunOutcome> = args.run_dirs.iter().map(|d| read_outcome(d)).collect();
    let api = Api {
        repo: args.api.repo.as_deref(),
        api_url: &args.api.api_url,
        token_env: &args.api.token_env,
        timeout: std::time::Duration::from_secs(60),
    };
    let comparison = comparison_for(&args.baseline, &outcomes, &api, context);
    let to_stdout = args.output.as_deref() == Some(Path::new("-"));
    finish(
        &renderer,
        &outcomes,
        &Finish {
            options: render_options(&args.render, &outcomes, &context.env),
            output: args.output.clone().filter(|_| !to_stdout),
            write_file: !to_stdout,
            run_dirs: &args.run_dirs,
            print: to_stdout,
            comparison: comparison.as_ref(),
        },
        &context.env,
    )
    .map(|(code, _)| code)
}

/// Reads `DIR/analysis.json`; a missing or unreadable one is a failed outcome, with the
/// manifest's profile name when the manifest reads.
pub fn read_outcome(dir: &Path) -> RunOutcome {
    let dir = absolute(dir);
    let path = dir.join(ANALYSIS_FILE);
    match read_analysis(&dir, &path) {
        Ok(analysis) => RunOutcome::Analysed {
            analysis: Box::new(analysis),
            path,
        },
        Err(error) => {
            let mut failure = Failure::new(dir.clone(), FailureKind::NoAnalysis, error);
            failure.facts = facts_of(&dir);
            RunOutcome::Failed(failure)
        }
    }
}

/// Largest analysis.json read: a trace of a million ranges makes about 42 MB.
pub(super) const MAX_ANALYSIS_BYTES: u64 = 1 << 30;

fn read_analysis(dir: &Path, path: &Path) -> Result<Analysis, String> {
    let bytes = match files::read_regular(path, MAX_ANALYSIS_BYTES) {
        Ok(b) => b,
        Err(e) if e.is_not_found() => {
            return Err(format!(
                "no {ANALYSIS_FILE} in {} (run `nsys-gate analyze --run-dir {}` first)",
                shown_path(dir),
                shown_path(dir)
            ))
        }
        Err(e) => return Err(e.to_string()),
    };
    parse_analysis(path, &bytes)
}

/// An analysis.json's bytes as an [`Analysis`] of this schema version; `Err` says why not,
/// naming `path`.
pub(super) fn parse_analysis(path: &Path, bytes: &[u8]) -> Result<Analysis, String> {
    let wrong_version = |v: &dyn std::fmt::Display| {
        format!(
            "{} has schema_version {v}; this nsys-gate reads {}",
            shown_path(path),
            artifact::SCHEMA_VERSION
        )
    };
    match serde_json::from_slice::<Analysis>(bytes) {
        Ok(analysis) if analysis.schema_version == artifact::SCHEMA_VERSION => Ok(analysis),
        Ok(analysis) => Err(wrong_version(&analysis.schema_version)),
        Err(e) => {
            let version = serde_json::from_slice::<serde_json::Value>(bytes)
                .ok()
                .and_then(|v| v.get("schema_version").cloned());
            match version {
                Some(v) if v != serde_json::json!(artifact::SCHEMA_VERSION) => {
                    Err(wrong_version(&v))
                }
                _ => Err(format!(
                    "{} is not an analysis.json that nsys-gate wrote: {e}",
                    shown_path(path)
                )),
            }
        }
    }
}

/// What the run directory's manifest says, when it reads.
fn facts_of(dir: &Path) -> RunFacts {
    let path = dir.join(rundir::MANIFEST_FILE);
    RunFacts {
        profile_name: manifest::read_bytes(&path)
            .ok()
            .and_then(|bytes| manifest::parse(&bytes, &path).ok())
            .map(|m| m.profile_name),
    }
}
