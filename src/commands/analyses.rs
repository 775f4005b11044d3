//! `nsys-gate post --analyses DIR`: the privileged half of the fork-safe pattern.
//!
//! The analysis.json files under DIR come from another job's artifact, and on a fork's pull
//! request that job ran the fork's code and the fork's own copy of the workflow file: every
//! byte of the artifact is the fork's. So the artifact is data. Only regular files named
//! analysis.json are read (no symlink is followed, the search and the reads are bounded);
//! the comment is rendered here, with this binary and its built-in template, every name
//! escaped as in any report; and it is posted under a key derived from the analyses'
//! profile names ([`marker::analyses_key`]) or given by `--comment-key` (this job's command
//! line). Nothing else of the artifact is used: not a report.md, not a marker, not a file
//! name.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;

use super::post::{cut_report, exit_status, post_comment, rerendered};
use super::report::{parse_analysis, MAX_ANALYSIS_BYTES};
use super::Context;
use crate::cli::PostArgs;
use crate::files::{self, SearchBounds};
use crate::github::marker::{self, key_of_marker};
use crate::outcome::{Failure, FailureKind, RunOutcome};
use crate::render::{limit, Budget, RenderOptions, Renderer, Template, DEFAULT_TOP};
use crate::say::say;
use crate::text::shown_shortened;
use crate::ANALYSIS_FILE;

/// How far DIR is searched: an artifact's folders are a few levels deep and hold a few
/// analyses; a larger one is refused rather than read without end.
const SEARCH: SearchBounds = SearchBounds {
    max_depth: 16,
    max_entries: 100_000,
    max_found: 256,
};

/// The analysis.json files read, in all.
const MAX_TOTAL_BYTES: u64 = 1 << 30;

/// Characters of artifact text (a path, a parse error) shown in one message at most.
const SHOWN_CHARS: usize = 300;

pub fn post_analyses(dir: &Path, args: &PostArgs, context: &Context) -> anyhow::Result<ExitCode> {
    let outcomes = read_analyses(dir, "nothing to post")?;
    let key = match &args.comment.comment_key {
        Some(k) => marker::sanitize_key(k),
        None => marker::analyses_key(&outcomes),
    };
    let template = Template::builtin();
    let renderer = Renderer::new(&template)?;
    let options = RenderOptions {
        top: DEFAULT_TOP,
        budget: Budget::comment(),
        marker: marker::marker(&key),
        exact_names: args.exact_names,
        links: super::links(&context.env),
    };
    let api = super::baseline::Api {
        repo: args.comment.repo.as_deref(),
        api_url: &args.comment.api_url,
        token_env: &args.comment.token_env,
        timeout: std::time::Duration::from_secs(args.comment.post_timeout),
    };
    let comparison = super::baseline::comparison_for(&args.baseline, &outcomes, &api, context);
    let report = renderer.render_with(&outcomes, comparison.as_ref(), &options)?;
    // The comment is found and updated by the key derived above: its marker must be the
    // body's first line, whatever the analyses hold.
    anyhow::ensure!(
        key_of_marker(&report) == Some(key.as_str()),
        "the rendered comment does not start with the marker of its key `{key}`; nothing was posted"
    );
    let read = outcomes
        .iter()
        .filter(|o| matches!(o, RunOutcome::Analysed { .. }))
        .count();
    say!(
        "nsys-gate: rendered the comment `{key}` from {read} of {} {ANALYSIS_FILE} files under {}",
        outcomes.len(),
        dir.display()
    );
    let shrink = rerendered(
        &renderer,
        &outcomes,
        comparison.as_ref(),
        &options,
        &report,
        &key,
    );
    let body = cut_report(&report, limit::COMMENT_CHARS);
    Ok(exit_status(post_comment(
        &args.comment,
        &key,
        body,
        &shrink,
        &context.env,
    )))
}

/// Every analysis.json under `dir`, in path order: an analysis, or a failed outcome saying
/// why the file could not be read. No file at all is an error.
pub(super) fn read_analyses(dir: &Path, nothing: &str) -> anyhow::Result<Vec<RunOutcome>> {
    let found = files::find_named(dir, ANALYSIS_FILE, SEARCH)
        .with_context(|| format!("cannot search {} for {ANALYSIS_FILE}", dir.display()))?;
    for (path, what) in &found.skipped {
        say!(
            "nsys-gate: warning: {} is {what}, not a regular file; not read",
            artifact_path(dir, path)
        );
    }
    if let Some(first) = found.too_deep.first() {
        say!(
            "nsys-gate: warning: {} folders deeper than {} levels were not searched, the first {}",
            found.too_deep.len(),
            SEARCH.max_depth,
            artifact_path(dir, first)
        );
    }
    anyhow::ensure!(
        !found.files.is_empty(),
        "no {ANALYSIS_FILE} under {} (searched {} levels deep for regular files; symlinks are not followed): {nothing}",
        dir.display(),
        SEARCH.max_depth
    );
    let mut left = MAX_TOTAL_BYTES;
    Ok(found
        .files
        .iter()
        .map(|path| read_one(dir, path, &mut left))
        .collect())
}

/// One analysis.json, named in the report by its path inside `dir` (as the artifact has it).
fn read_one(dir: &Path, path: &Path, left: &mut u64) -> RunOutcome {
    let name = path.strip_prefix(dir).unwrap_or(path).to_owned();
    let parsed = files::read_regular_no_symlink(path, MAX_ANALYSIS_BYTES.min(*left))
        .map_err(|e| format!("{}: {}", name.display(), e.into_io_error()))
        .and_then(|bytes| {
            *left = left.saturating_sub(bytes.len() as u64);
            parse_analysis(&name, &bytes)
        });
    match parsed {
        Ok(analysis) => RunOutcome::Analysed {
            analysis: Box::new(analysis),
            path: name,
        },
        Err(error) => {
            say!(
                "nsys-gate: warning: {}",
                shown_shortened(&error, SHOWN_CHARS * 2)
            );
            let folder = match name.parent() {
                Some(p) if !p.as_os_str().is_empty() => p.to_owned(),
                _ => PathBuf::from("."),
            };
            RunOutcome::Failed(Failure::new(folder, FailureKind::NoAnalysis, error))
        }
    }
}

/// A path inside the artifact, on one line of standard error: a line break or other control
/// character in it is shown escaped (`\n`), so that no line it holds can start a workflow
/// command (`::add-mask::`, `::error::`, …) in this privileged job.
fn artifact_path(dir: &Path, path: &Path) -> String {
    shown_shortened(
        &path.strip_prefix(dir).unwrap_or(path).to_string_lossy(),
        SHOWN_CHARS,
    )
}
