//! `nsys-gate report`: the run directories' analysis.json files to one markdown report.

use std::path::Path;

use super::WRITING;
use super::{baseline_comparison, load_template, render_options};
use crate::cli::ReportArgs;
use crate::forge::Forge;
use crate::gate::Ending;
use crate::interrupt;
use crate::load;
use crate::outcome::RunOutcome;
use crate::publish::{Delivery, Destination, Junit, ReportSink, Sinks, StepSink};
use crate::render::Renderer;

pub fn report(args: &ReportArgs, forge: &dyn Forge) -> anyhow::Result<Ending> {
    // The report's ways out, from the command line: the JUnit report, report.md (or standard
    // output) and the CI step's files.
    let destination = match args.output.as_deref() {
        Some(path) if path == Path::new("-") => Destination::Stdout,
        given => Destination::File(given.map(Path::to_owned)),
    };
    let sinks = Sinks::new(true)
        .with_some(args.junit.clone().map(Junit))
        .with(ReportSink {
            destination,
            run_dirs: args.run_dirs.clone(),
        })
        .with(StepSink);
    let template = load_template(args.render.template.as_deref())?;
    let renderer = Renderer::new(&template)?;
    interrupt::doing("reading the analyses; nothing was written");
    let outcomes: Vec<RunOutcome> = args.run_dirs.iter().map(|d| load::run_dir(d)).collect();
    let api = &args.api;
    let comparison = baseline_comparison(
        &args.baseline,
        args.render.exact_names,
        (&api.repo, &api.api_url, &api.token_env),
        &outcomes,
        forge,
    )?;
    interrupt::doing(WRITING);
    let options = render_options(&args.render, forge);
    let result = Delivery::rendered(&renderer, &outcomes, comparison.as_ref(), options)?;
    sinks.deliver(&result, forge)
}
