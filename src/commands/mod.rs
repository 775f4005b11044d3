//! The subcommands, one file each: they read the command line and the environment once,
//! turn them into the stages' plain options, run the stages, and print, write and post what
//! came out.
//!
//! - [`analyze`]: one run directory to analysis.json;
//! - [`report`]: analysis.json files to the markdown report;
//! - [`run`]: `analyze` on each run directory, then the report, then the comment;
//! - [`post`]: a rendered report, or another job's analysis.json files (the fork-safe
//!   pattern), to the pull-request comment;
//! - [`compare`]: two sets of analysis.json files compared locally.
//!
//! Each is a leaf: the stages they run (`pipeline`, `load`, `baseline`, `render`, `publish`)
//! take plain data, converted from the command line here. The forge is found once
//! ([`execute`]) and handed to the command, which takes from it what the stages need as data
//! (the CI run for analysis.json, the URLs and the comment limit for the report).

mod analyze;
mod compare;
mod post;
mod report;
mod run;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::parser::ValueSource;
use clap::{CommandFactory, FromArgMatches};

use crate::artifact::comparison::Comparison;
use crate::baseline;
use crate::cli::{AnalysisArgs, BaselineArgs, Cli, Command, CommentArgs, RenderArgs};
use crate::forge::{self, CommentSettings, Forge, Vars};
use crate::gate::{self, Ending, GateConfig};
use crate::interrupt;
use crate::nsys::{NsysChoice, StatsPlan};
use crate::outcome::RunOutcome;
use crate::pipeline::AnalyzeOptions;
use crate::render::{Budget, RenderError, RenderOptions, Template, MAX_TEMPLATE_BYTES};
use crate::say::{self, say};

/// What a command is doing while it renders and writes the report, for the words of a
/// SIGINT/SIGTERM ([`interrupt::doing`]).
const WRITING: &str = "rendering and writing the report; each file written is whole (written to a temporary file and renamed into place), nothing was posted";

/// What every command gets besides its arguments: read once, at the start.
#[derive(Debug, Clone, Default)]
pub struct Context {
    /// The environment, which only the forge reads.
    pub vars: Vars,
    /// `--nsys` came from `$NSYS`, not the command line (for the words of its errors).
    pub nsys_from_env: bool,
}

/// The program: parses the command line, reads the environment, runs the command.
pub fn main() -> ExitCode {
    // First, whether a runner that acts on workflow commands reads what is printed
    // (everything, panics and command-line errors too, goes through `say`).
    let vars = Vars::from_process();
    say::set_actions(forge::log_reads_commands(&vars));
    say::install_panic_hook();
    // A SIGINT/SIGTERM from now on ends nsys-gate with status 130/143, and one during an
    // analysis stops nsys and the analysis cleanly first (see `interrupt`).
    if let Err(e) = interrupt::install() {
        say!("nsys-gate: warning: cannot handle SIGINT/SIGTERM: {e}");
    }
    let matches = Cli::command()
        .try_get_matches()
        .unwrap_or_else(|e| clap_exit(&e));
    let mut cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| clap_exit(&e));
    without_env_defaults(&mut cli, &matches);
    let nsys_from_env = match matches.subcommand() {
        Some(("analyze" | "run", sub)) => {
            sub.value_source("nsys") == Some(ValueSource::EnvVariable)
        }
        _ => false,
    };
    let context = Context {
        vars,
        nsys_from_env,
    };
    execute(cli, &context)
}

/// Drops `--repo` and `--api-url` when clap took them from `$GITHUB_REPOSITORY` and
/// `$GITHUB_API_URL` (declared there so that `--help` shows them): they are GitHub's
/// variables, which only GitHub's forge (and Gitea's) reads, as its defaults. In a GitLab job a
/// stray `GITHUB_API_URL` would otherwise send GitLab's token to its host, and a stray
/// `GITHUB_REPOSITORY` the note to another project.
fn without_env_defaults(cli: &mut Cli, matches: &clap::ArgMatches) {
    let Some((_, sub)) = matches.subcommand() else {
        return;
    };
    let from_env = |id: &str| sub.value_source(id) == Some(ValueSource::EnvVariable);
    let (repo, api_url) = match &mut cli.command {
        Command::Report(args) => (&mut args.api.repo, &mut args.api.api_url),
        Command::Run(args) => (&mut args.comment.repo, &mut args.comment.api_url),
        Command::Post(args) => (&mut args.comment.repo, &mut args.comment.api_url),
        Command::Analyze(_) | Command::Compare(_) => return,
    };
    if from_env("repo") {
        *repo = None;
    }
    if from_env("api_url") {
        *api_url = None;
    }
}

/// Runs one command line and returns the contract's exit status.
pub fn execute(cli: Cli, context: &Context) -> ExitCode {
    say::set_actions(forge::log_reads_commands(&context.vars));
    // The forge, found once: the API a command names (`--api-url`) can tell it too.
    let api_url = match &cli.command {
        Command::Report(args) => args.api.api_url.as_deref(),
        Command::Run(args) => args.comment.api_url.as_deref(),
        Command::Post(args) => args.comment.api_url.as_deref(),
        Command::Analyze(_) | Command::Compare(_) => None,
    };
    let forge = forge::detect(&context.vars, api_url);
    let forge = forge.as_ref();
    let doing = match &cli.command {
        Command::Analyze(_) => "analyze",
        Command::Report(_) => "report",
        Command::Run(_) => "run",
        Command::Post(_) => "post",
        Command::Compare(_) => "compare",
    };
    say::set_doing(doing);
    let run = || {
        forced_panic(context);
        match cli.command {
            Command::Analyze(args) => analyze::analyze(&args, context, forge),
            Command::Report(args) => report::report(&args, forge),
            Command::Run(args) => run::run(&args, context, forge),
            Command::Post(args) => post::post(&args, forge),
            Command::Compare(args) => compare::compare(&args, &forge.words()),
        }
    };
    // A panic is a bug: said in one line by the panic hook (`say::install_panic_hook`), and the
    // command fails with the contract's error status (2), not Rust's 101.
    let Some(result) = unwind_to_failure(run) else {
        return gate::exit_code(Ending::Failed);
    };
    let ending = match result {
        Ok(ending) => ending,
        Err(err) => match err.downcast_ref::<interrupt::Stopped>() {
            // Wound down after SIGINT/SIGTERM; what was interrupted was said where it happened.
            Some(interrupt::Stopped(signal)) => Ending::Stopped(*signal),
            None => {
                report_error(&err);
                Ending::Failed
            }
        },
    };
    gate::exit_code(ending)
}

/// The tests' way to make a command panic (`NSYS_GATE_TEST_PANIC` set): in debug builds only,
/// which the tests run; a release build has no such trigger.
fn forced_panic(context: &Context) {
    if cfg!(debug_assertions) {
        if let Some(text) = context.vars.text("NSYS_GATE_TEST_PANIC") {
            panic!("forced by NSYS_GATE_TEST_PANIC: {text}");
        }
    }
}

/// `run`'s result, or `None` when it panicked (the panic was said by the hook).
fn unwind_to_failure<T>(run: impl FnOnce() -> T) -> Option<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)).ok()
}

/// The ending after SIGINT/SIGTERM stopped an analysis (130/143), said on standard error.
fn interrupted(signal: interrupt::Signal) -> Ending {
    say!(
        "nsys-gate: stopped by {}: nsys (if it was running) was stopped with it, the run directory unlocked; no analysis.json was left half-written",
        signal.name()
    );
    Ending::Stopped(signal)
}

fn report_error(err: &anyhow::Error) {
    let text = crate::outcome::chain_lines(err, "  caused by: ");
    say::message(&format!("nsys-gate: error: {text}"));
}

/// The pipeline's options for one run directory; `gate` is checked once for all of them.
fn analyze_options(
    run_dir: &Path,
    output: Option<PathBuf>,
    args: &AnalysisArgs,
    gate: GateConfig,
    context: &Context,
    forge: &dyn Forge,
) -> AnalyzeOptions {
    let ci = forge.ci();
    let nsys = match args.nsys.as_ref().filter(|p| !p.is_empty()) {
        Some(path) if context.nsys_from_env => NsysChoice::Env(PathBuf::from(path)),
        Some(path) => NsysChoice::Flag(PathBuf::from(path)),
        None => NsysChoice::Search,
    };
    AnalyzeOptions {
        run_dir: run_dir.to_owned(),
        nsys,
        nsys_timeout: Duration::from_secs(args.nsys_timeout),
        stats_plan: match args.nsys_processes {
            Some(n) => StatsPlan {
                processes: usize::from(n),
            },
            None => StatsPlan::default_for_machine(),
        },
        output,
        reuse_stats: args.reuse_stats,
        keep_export: args.keep_export,
        gate,
        label: args.label.clone().filter(|l| !l.trim().is_empty()),
        ci_run: ci.run,
        runner: ci.runner,
    }
}

/// `--template FILE` (a regular file, read with a bound), else the built-in template.
fn load_template(path: Option<&Path>) -> anyhow::Result<Template> {
    let Some(path) = path else {
        return Ok(Template::builtin());
    };
    let source = crate::files::read_regular_text(path, MAX_TEMPLATE_BYTES).map_err(|e| {
        RenderError::Read {
            path: path.to_owned(),
            source: e.into_io_error(),
        }
    })?;
    Ok(Template::from_source(path, source))
}

/// The report's options: the command line's, the forge's comment limit, and where the reader
/// finds the full data.
fn render_options(args: &RenderArgs, forge: &dyn Forge) -> RenderOptions {
    RenderOptions {
        top: usize::from(args.top),
        budget: Budget::Chars(forge.comment_limit()),
        exact_names: args.exact_names,
        links: links(forge),
        from_artifact: false,
    }
}

/// The forge's pages (the CI run's, a commit's); paths relative to the working folder.
fn links(forge: &dyn Forge) -> crate::render::Links {
    let links = forge.links();
    let (run_label, run_url) = links.run.unzip();
    crate::render::Links {
        run_url,
        run_label: run_label.unwrap_or_default(),
        commit_prefix: links.commit_prefix,
        base_dir: std::env::current_dir().ok(),
        words: forge.words(),
    }
}

/// Where and as whom the comment is posted.
fn post_settings(args: &CommentArgs) -> CommentSettings {
    CommentSettings {
        repo: args.repo.clone(),
        api_url: args.api_url.clone(),
        pr: args.pr,
        token_env: args.token_env.clone(),
        author: args.comment_author.clone(),
        timeout: Duration::from_secs(args.post_timeout),
    }
}

/// The repository, API URL and token variable a command was given (`--repo`, `--api-url`,
/// `--token-env`).
type Api<'a> = (&'a Option<String>, &'a Option<String>, &'a Option<String>);

/// The comparison `--baseline` asks for, if any, from `forge`'s history or paths;
/// `exact_names` the report's `--exact-names` (the comparison names ranges as the report does).
fn baseline_comparison(
    args: &BaselineArgs,
    exact_names: bool,
    (repo, api_url, token_env): Api<'_>,
    outcomes: &[RunOutcome],
    forge: &dyn Forge,
) -> anyhow::Result<Option<Comparison>> {
    let specs: Vec<&str> = args
        .baseline
        .iter()
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
        .collect();
    if specs.is_empty() {
        return Ok(None);
    }
    let base = if specs.contains(&"auto") {
        anyhow::ensure!(
            specs.len() == 1,
            "--baseline auto reads the base branch's history by itself: give it alone, not with paths"
        );
        baseline::Base::Auto(forge::HistoryRequest {
            workflow: args.baseline_workflow.clone(),
            job: args.baseline_job.clone(),
            artifact: args.baseline_artifact.clone(),
            runs: usize::from(args.baseline_runs),
            repo: repo.clone(),
            api_url: api_url.clone(),
            token_env: token_env.clone(),
            timeout: Duration::from_secs(args.baseline_timeout),
            concurrency: usize::from(args.baseline_concurrency),
        })
    } else {
        baseline::Base::Paths(specs.iter().map(PathBuf::from).collect())
    };
    let request = baseline::Request {
        base,
        criteria: crate::compare::Criteria {
            noise_floor_pct: args.noise_floor,
            judged_keys: args.conditions.clone(),
            exact_names,
        },
    };
    // `auto`: a SIGINT/SIGTERM while the history was fetched removes its downloads and
    // unpacking and says so (the forge); nothing is rendered or posted after it. Paths are
    // only read: a signal ends the command at once, saying so.
    let comparison = match request.base {
        baseline::Base::Auto(_) => {
            interrupt::deferred(|| baseline::comparison(&request, outcomes, forge))
        }
        baseline::Base::Paths(_) => {
            interrupt::doing("reading the baseline's analysis.json files; nothing was written");
            baseline::comparison(&request, outcomes, forge)
        }
    };
    if let Some(signal) = interrupt::received() {
        return Err(interrupt::Stopped(signal).into());
    }
    Ok(Some(comparison))
}

/// A command-line error, `--help` or `--version` from clap: printed as clap prints it, made
/// inert by [`say::usage`] where it would not be (in GitHub Actions, or with a `##vso[`); then
/// exits with clap's status.
fn clap_exit(error: &clap::Error) -> ! {
    let text = error.render().to_string();
    if say::prints_as_is(&text) {
        error.exit()
    }
    say::usage(&text, error.use_stderr());
    std::process::exit(error.exit_code())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A panic ends the command with the contract's error status, not Rust's 101.
    #[test]
    fn a_panic_fails_with_the_error_status() {
        let result: Option<()> = unwind_to_failure(|| panic!("a bug"));
        assert_eq!(result, None);
        assert_eq!(gate::exit_status(Ending::Failed), 2);
        assert_eq!(unwind_to_failure(|| 7), Some(7));
    }
}
