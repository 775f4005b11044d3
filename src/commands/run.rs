//! `nsys-gate run`: `analyze` on each run directory, one report covering all of them, the
//! gate, and the pull-request comment.

use super::{
    analyze_options, baseline_comparison, interrupted, load_template, post_settings,
    render_options, Context, WRITING,
};
use crate::cli::RunArgs;
use crate::files::absolute;
use crate::forge::{CommentKey, Forge, Level};
use crate::gate::{Ending, GateConfig};
use crate::interrupt;
use crate::outcome::{chain_text, FailureKind, RunOutcome};
use crate::progress::Progress;
use crate::publish::{CommentSink, Delivery, Destination, Junit, ReportSink, Sinks, StepSink};
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
    // The report's ways out, from the command line: the JUnit report, report.md and standard
    // output, the CI step's files, and the comment (of `--comment-key`, else of the report's
    // profile names) unless `--no-post`.
    let comment = (!args.no_post).then(|| CommentSink {
        key: c
            .comment_key
            .as_deref()
            .map_or_else(|| CommentKey::of_report(&outcomes), CommentKey::given),
        settings: post_settings(c),
        failure: if args.fail_on_post_error {
            Level::Error
        } else {
            Level::Warning
        },
    });
    let sinks = Sinks::new(true)
        .with_some(args.junit.clone().map(Junit))
        .with(ReportSink {
            destination: Destination::FileAndStdout(args.output.clone()),
            run_dirs: args.run_dirs.clone(),
        })
        .with(StepSink)
        .with_some(comment);
    interrupt::doing(WRITING);
    let options = render_options(&args.render, forge);
    let result = Delivery::rendered(&renderer, &outcomes, comparison.as_ref(), options)?;
    sinks.deliver(&result, forge)
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
