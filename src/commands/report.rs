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
use crate::publish::{self, Destination, Output};
use crate::render::Renderer;

pub fn report(args: &ReportArgs, forge: &dyn Forge) -> anyhow::Result<Ending> {
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
    let destination = match args.output.as_deref() {
        Some(path) if path == Path::new("-") => Destination::Stdout,
        given => Destination::File(given.map(Path::to_owned)),
    };
    let output = Output {
        options: render_options(&args.render, &outcomes, forge),
        destination,
        run_dirs: &args.run_dirs,
        comparison: comparison.as_ref(),
    };
    interrupt::doing(WRITING);
    publish::junit::write(args.junit.as_deref(), &outcomes)?;
    publish::deliver(&renderer, &outcomes, &output, forge).map(|(code, _)| code)
}
