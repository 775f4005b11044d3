//! `nsys-gate run`: `analyze` on each run directory, one report covering all of them, the
//! gate, and the pull-request comment.

use std::process::ExitCode;

use super::baseline::{comparison_for, Api};
use super::output::{finish, Finish};
use super::post::{cut_report, post_comment, print_post_failure, rerendered, Posted};
use super::{absolute, analyze_options, interrupted, load_template, render_options, Context};
use crate::cli::RunArgs;
use crate::gate::{self, GateConfig};
use crate::github::marker::{report_key, with_marker};
use crate::interrupt;
use crate::outcome::{chain_text, RunOutcome};
use crate::progress::Progress;
use crate::render::{limit, Renderer};
use crate::say::say;
use crate::text::shown_path;

pub fn run(args: &RunArgs, context: &Context) -> anyhow::Result<ExitCode> {
    let gate = GateConfig::new(&args.analysis.gate_on, &args.analysis.no_gate_on);
    // A broken template fails before nsys runs.
    let template = load_template(args.render.template.as_deref())?;
    let renderer = Renderer::new(&template)?;
    let outcomes = interrupt::deferred(|| analyze_each(args, &gate, context));
    if let Some(signal) = interrupt::received() {
        // Neither a report of half the run directories nor a comment.
        return Ok(interrupted(signal));
    }
    let options = render_options(&args.render, &outcomes, &context.env);
    let api = Api {
        repo: args.comment.repo.as_deref(),
        api_url: &args.comment.api_url,
        token_env: &args.comment.token_env,
        timeout: std::time::Duration::from_secs(args.comment.post_timeout),
    };
    let comparison = comparison_for(&args.baseline, &outcomes, &api, context);
    let (code, report) = finish(
        &renderer,
        &outcomes,
        &Finish {
            options: options.clone(),
            output: args.output.clone(),
            write_file: true,
            run_dirs: &args.run_dirs,
            print: true,
            comparison: comparison.as_ref(),
        },
        &context.env,
    )?;
    if args.no_post {
        return Ok(code);
    }
    let key = args
        .comment
        .comment_key
        .clone()
        .unwrap_or_else(|| report_key(&outcomes));
    let shrink = rerendered(
        &renderer,
        &outcomes,
        comparison.as_ref(),
        &options,
        &report,
        &key,
    );
    let body = cut_report(&with_marker(&report, &key), limit::COMMENT_CHARS);
    match post_comment(&args.comment, &key, body, &shrink, &context.env) {
        Posted::Done | Posted::Skipped => Ok(code),
        Posted::Failed(err) if args.fail_on_post_error => {
            print_post_failure("error", &err);
            Ok(ExitCode::from(gate::exit::ERROR))
        }
        Posted::Failed(err) => {
            print_post_failure("warning", &err);
            Ok(code)
        }
    }
}

/// `analyze` on each run directory in turn, stopping at a SIGINT/SIGTERM.
fn analyze_each(args: &RunArgs, gate: &GateConfig, context: &Context) -> Vec<RunOutcome> {
    let mut outcomes = Vec::new();
    for dir in &args.run_dirs {
        if interrupt::received().is_some() {
            break;
        }
        let options = analyze_options(dir, None, &args.analysis, gate.clone(), context);
        let mut progress = Progress::stderr();
        outcomes.push(match crate::analyze(&options, &mut progress) {
            Ok((analysis, path)) => {
                progress.summary(&analysis, &path);
                RunOutcome::Analysed {
                    analysis: Box::new(analysis),
                    path,
                }
            }
            Err(err) => {
                say!(
                    "nsys-gate: error: {}: {}",
                    shown_path(dir),
                    chain_text(&err.error).replace('\n', "\n  ")
                );
                RunOutcome::Failed(err.to_failure(absolute(dir)))
            }
        });
    }
    outcomes
}
