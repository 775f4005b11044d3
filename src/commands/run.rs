//! `nsys-gate run`: `analyze` on each run directory, one report covering all of them, the
//! gate, and the pull-request comment.

use super::{
    analyze_options, baseline_comparison, interrupted, load_template, post_settings,
    render_options, Context, POSTING, WRITING,
};
use crate::cli::RunArgs;
use crate::files::absolute;
use crate::forge::{CommentKey, Forge, Posted};
use crate::gate::{Ending, GateConfig};
use crate::interrupt;
use crate::outcome::{chain_text, FailureKind, RunOutcome};
use crate::progress::Progress;
use crate::publish::comment::print_post_failure;
use crate::publish::{self, Destination, Output, Rendered};
use crate::render::Renderer;
use crate::say::say;
use crate::text::shown_path;

pub fn run(args: &RunArgs, context: &Context, forge: &dyn Forge) -> anyhow::Result<Ending> {
    let gate = GateConfig::new(&args.analysis.gate.gate_on, &args.analysis.gate.no_gate_on);
    // A broken template fails before nsys runs.
    let template = load_template(args.render.template.as_deref())?;
    let renderer = Renderer::new(&template)?;
    let outcomes = interrupt::deferred(|| analyze_each(args, &gate, context, forge));
    if let Some(signal) = interrupt::received() {
        // Neither a report of half the run directories nor a comment.
        return Ok(interrupted(signal));
    }
    // A run directory another nsys-gate is analysing is that run's: its report.md (the report
    // of the first run directory), step outputs and comment are left to it (said above).
    if outcomes
        .iter()
        .any(|o| matches!(o, RunOutcome::Failed(f) if f.kind == FailureKind::Busy))
    {
        say!("nsys-gate: error: nothing was written or posted: another nsys-gate is analysing a run directory of this run, and its files are that run's");
        return Ok(Ending::Failed);
    }
    let c = &args.comment;
    let comparison = baseline_comparison(
        &args.baseline,
        args.render.exact_names,
        (&c.repo, &c.api_url, &c.token_env),
        &outcomes,
        forge,
    )?;
    let options = render_options(&args.render, &outcomes, forge);
    let output = Output {
        options: options.clone(),
        destination: Destination::FileAndStdout(args.output.clone()),
        run_dirs: &args.run_dirs,
        comparison: comparison.as_ref(),
    };
    interrupt::doing(WRITING);
    publish::junit::write(args.junit.as_deref(), &outcomes)?;
    let (code, report) = publish::deliver(&renderer, &outcomes, &output, forge)?;
    if args.no_post {
        return Ok(code);
    }
    let key = c
        .comment_key
        .as_deref()
        .map_or_else(|| CommentKey::of_report(&outcomes), CommentKey::given);
    let rendered = Rendered {
        renderer: &renderer,
        outcomes: &outcomes,
        comparison: comparison.as_ref(),
        options: &options,
        report: &report,
    };
    interrupt::doing(POSTING);
    match rendered.post(&key, &post_settings(c), forge) {
        Posted::Done | Posted::Skipped => Ok(code),
        Posted::Failed(err) if args.fail_on_post_error => {
            print_post_failure("error", &err, forge);
            Ok(Ending::Failed)
        }
        Posted::Failed(err) => {
            print_post_failure("warning", &err, forge);
            Ok(code)
        }
    }
}

/// `analyze` on each run directory in turn, stopping at a SIGINT/SIGTERM.
fn analyze_each(
    args: &RunArgs,
    gate: &GateConfig,
    context: &Context,
    forge: &dyn Forge,
) -> Vec<RunOutcome> {
    let mut outcomes = Vec::new();
    for dir in &args.run_dirs {
        if interrupt::received().is_some() {
            break;
        }
        let options = analyze_options(dir, None, &args.analysis, gate.clone(), context, forge);
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
