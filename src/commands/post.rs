//! `nsys-gate post`: a report to the pull request's comment. Two sources:
//!
//! - `--report FILE`: a report.md this same job rendered, posted word for word under the key of
//!   its marker (or `--comment-key`);
//! - `--analyses DIR`: the privileged half of the fork-safe pattern. The analysis.json files
//!   under DIR come from another job's artifact, and on a fork's pull request that job ran the
//!   fork's code and the fork's own copy of the workflow file: every byte of the artifact is
//!   the fork's. So the artifact is data: only regular files named analysis.json are read
//!   ([`crate::load::under`]: no symlink followed, the search and the reads bounded); the
//!   comment is rendered here, with this binary and its built-in template, every name escaped
//!   as in any report; and it is posted under a key derived from the analyses' profile names
//!   in a namespace of its own, `artifact:` ([`CommentKey::of_artifact`]: no profile name can
//!   make it a key the trusted side posts under), or given by `--comment-key` (this job's
//!   command line). Nothing else of the artifact is used: not a report.md, not a marker, not
//!   a file name, not the gate it says it had (recomputed here from its warnings with this
//!   command's `--gate-on`/`--no-gate-on`); and the comment says that its numbers come from
//!   the pull request's own job.

use std::path::{Path, PathBuf};

use anyhow::Context as _;

use super::{baseline_comparison, links, post_settings};
use crate::artifact::ANALYSIS_FILE;
use crate::cli::PostArgs;
use crate::forge::{Forge, Level};
use crate::gate::{self, Ending, GateConfig};
use crate::interrupt;
use crate::load;
use crate::outcome::RunOutcome;
use crate::publish::{CommentSink, Delivery, Junit, Sinks};
use crate::render::marker::{self, key_of_marker, CommentKey};
use crate::render::{Budget, RenderOptions, Renderer, Template, DEFAULT_TOP};
use crate::say::say;
use crate::text::shown_path;

pub fn post(args: &PostArgs, forge: &dyn Forge) -> anyhow::Result<Ending> {
    match (&args.report, &args.analyses) {
        (_, Some(dir)) => post_analyses(dir, args, forge),
        (Some(report), None) => post_report(report, args, forge),
        (None, None) => anyhow::bail!("pass --report FILE or --analyses DIR"),
    }
}

/// `post --report FILE`: the file as it is, under the key of its marker (or --comment-key).
fn post_report(report: &Path, args: &PostArgs, forge: &dyn Forge) -> anyhow::Result<Ending> {
    anyhow::ensure!(
        args.baseline.baseline.is_empty(),
        "--baseline goes with --analyses: a --report is posted as it was rendered (give --baseline to the `run` or `report` that renders it)"
    );
    anyhow::ensure!(
        args.junit.is_none(),
        "--junit goes with --analyses: a --report is posted as it was rendered, its gate unknown here (give --junit to the `run` or `report` that renders it)"
    );
    anyhow::ensure!(
        args.gate.is_empty(),
        "--gate-on and --no-gate-on go with --analyses: a --report is posted as it was rendered (give them to the `run` that renders it)"
    );
    interrupt::doing("reading the report; nothing was posted");
    let text = read_report(report)?;
    let key = match &args.comment.comment_key {
        Some(k) => CommentKey::given(k),
        None => match key_of_marker(&text) {
            Some(k) => CommentKey::given(k),
            None => {
                say!(
                    "nsys-gate: {} does not start with a `<!-- nsys-gate:KEY -->` marker and --comment-key is not given; using the key `{}`",
                    shown_path(report),
                    marker::DEFAULT_KEY
                );
                CommentKey::given(marker::DEFAULT_KEY)
            }
        },
    };
    comment_sinks(key, args, None).deliver(&Delivery::given(text), forge)
}

/// `post`'s ways out: the JUnit report (`--junit`, with `--analyses`), then the comment of
/// `key`, a failure to post it an error.
fn comment_sinks(key: CommentKey, args: &PostArgs, junit: Option<PathBuf>) -> Sinks {
    Sinks::new(false)
        .with_some(junit.map(Junit))
        .with(CommentSink {
            key,
            settings: post_settings(&args.comment),
            failure: Level::Error,
        })
}

/// `post --analyses DIR`: the comment rendered here from the analyses under DIR.
fn post_analyses(dir: &Path, args: &PostArgs, forge: &dyn Forge) -> anyhow::Result<Ending> {
    interrupt::doing("reading the artifact's analysis.json files; nothing was posted");
    let mut outcomes = load::under(dir, "nothing to post")?;
    // The artifact's own gate is its job's word (a fork's job can write `pass` beside a
    // gating warning): the gate shown is this command's, from the warnings.
    let config = GateConfig::new(&args.gate.gate_on, &args.gate.no_gate_on);
    for outcome in &mut outcomes {
        if let RunOutcome::Analysed { analysis, .. } = outcome {
            analysis.gate = gate::apply(&config, &mut analysis.warnings);
        }
    }
    // The workflow's --comment-key, or a key in the artifact's own namespace: no profile
    // name in the artifact can make it the key of a comment the trusted side posts.
    let key = match &args.comment.comment_key {
        Some(k) => CommentKey::given(k),
        None => CommentKey::of_artifact(&outcomes),
    };
    let template = Template::builtin();
    let renderer = Renderer::new(&template)?;
    let options = RenderOptions {
        top: DEFAULT_TOP,
        budget: Budget::Chars(forge.comment_limit()),
        exact_names: args.exact_names,
        links: links(forge),
        from_artifact: true,
    };
    let c = &args.comment;
    let comparison = baseline_comparison(
        &args.baseline,
        args.exact_names,
        (&c.repo, &c.api_url, &c.token_env),
        &outcomes,
        forge,
    )?;
    let sinks = comment_sinks(key.clone(), args, args.junit.clone());
    interrupt::doing("rendering the comment; nothing was posted");
    let result = Delivery::rendered(&renderer, &outcomes, comparison.as_ref(), options)?;
    // The comment is found and updated by the key derived above: the comment's sink makes
    // its marker the body's first line (`marker::comment_body`), whatever the analyses hold.
    let read = outcomes
        .iter()
        .filter(|o| matches!(o, RunOutcome::Analysed { .. }))
        .count();
    say!(
        "nsys-gate: rendered the comment `{key}` from {read} of {} {ANALYSIS_FILE} files under {}",
        outcomes.len(),
        dir.display()
    );
    sinks.deliver(&result, forge)
}

/// The report to post. It may come from a fork's artifact: data, read only when it is a
/// regular file, and with a size limit.
fn read_report(path: &Path) -> anyhow::Result<String> {
    const MAX_REPORT_BYTES: u64 = 16 << 20;
    crate::files::read_regular_text(path, MAX_REPORT_BYTES)
        .with_context(|| format!("cannot read the report {}", shown_path(path)))
}
