//! The `report` and `run` commands: outcomes in, report file, standard output, GitHub
//! Actions files and exit status out.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;

use crate::artifact::{self, Analysis};
use crate::cli::{ReportArgs, RunArgs};
use crate::gate::{self, GateConfig};
use crate::progress::Progress;
use crate::render::{
    self, limit, outcome::chain_text, Budget, Failure, FailureCategory, RenderOptions, Renderer,
    RunOutcome, Template,
};
use crate::{actions, AnalyzeOptions, ANALYSIS_FILE};

/// The report's file name in a run directory.
pub const REPORT_FILE: &str = "report.md";

/// Smallest room in the step summary worth writing a report into.
const MIN_SUMMARY_BYTES: usize = 4096;

/// `nsys-gate report`: renders the run directories' analysis.json files.
pub fn report(args: &ReportArgs) -> anyhow::Result<ExitCode> {
    let template = load_template(args.template.as_deref())?;
    let renderer = Renderer::new(&template)?;
    let outcomes: Vec<RunOutcome> = args.run_dirs.iter().map(|d| read_outcome(d)).collect();
    let to_stdout = args.output.as_deref() == Some(Path::new("-"));
    finish(
        &renderer,
        &outcomes,
        &Finish {
            top: usize::from(args.top),
            output: args.output.clone().filter(|_| !to_stdout),
            write_file: !to_stdout,
            run_dirs: &args.run_dirs,
            print: to_stdout,
        },
    )
}

/// `nsys-gate run`: analyses every run directory, then renders, prints and gates.
pub fn run(args: &RunArgs) -> anyhow::Result<ExitCode> {
    let gate = GateConfig::new(&args.gate_on, &args.no_gate_on)?;
    // A broken template fails before nsys runs.
    let template = load_template(args.template.as_deref())?;
    let renderer = Renderer::new(&template)?;
    if !args.no_post {
        eprintln!(
            "nsys-gate: posting the report as a pull-request comment is not implemented yet; behaving as with --no-post (the report is printed to standard output)"
        );
    }
    let mut outcomes = Vec::with_capacity(args.run_dirs.len());
    for dir in &args.run_dirs {
        let options = AnalyzeOptions {
            run_dir: dir.clone(),
            nsys: args.nsys.clone(),
            nsys_timeout: Duration::from_secs(args.nsys_timeout),
            output: None,
            reuse_stats: args.reuse_stats,
            gate: gate.clone(),
        };
        let mut progress = Progress::stderr();
        match crate::analyze(&options, &mut progress) {
            Ok((analysis, path)) => {
                progress.summary(&analysis, &path);
                outcomes.push(RunOutcome::Analysed {
                    analysis: Box::new(analysis),
                    path,
                });
            }
            Err(err) => {
                eprintln!(
                    "nsys-gate: error: {}: {}",
                    dir.display(),
                    chain_text(&err).replace('\n', "\n  ")
                );
                outcomes.push(RunOutcome::Failed(Failure::from_error(absolute(dir), &err)));
            }
        }
    }
    finish(
        &renderer,
        &outcomes,
        &Finish {
            top: usize::from(args.top),
            output: args.output.clone(),
            write_file: true,
            run_dirs: &args.run_dirs,
            print: true,
        },
    )
}

fn load_template(path: Option<&Path>) -> anyhow::Result<Template> {
    Ok(match path {
        Some(p) => Template::from_file(p)?,
        None => Template::builtin(),
    })
}

/// Reads `DIR/analysis.json`; a missing or unreadable one is a failed outcome.
pub fn read_outcome(dir: &Path) -> RunOutcome {
    let dir = absolute(dir);
    let path = dir.join(ANALYSIS_FILE);
    let fail = |error: String| {
        RunOutcome::Failed(Failure {
            run_dir: dir.clone(),
            category: FailureCategory::NoAnalysis,
            error,
            nsys_version: None,
        })
    };
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return fail(format!(
                "no {ANALYSIS_FILE} in {} (run `nsys-gate analyze --run-dir {}` first)",
                dir.display(),
                dir.display()
            ))
        }
        Err(e) => return fail(format!("cannot read {}: {e}", path.display())),
    };
    match serde_json::from_slice::<Analysis>(&bytes) {
        Ok(analysis) if analysis.schema_version == artifact::SCHEMA_VERSION => {
            RunOutcome::Analysed {
                analysis: Box::new(analysis),
                path,
            }
        }
        Ok(analysis) => fail(format!(
            "{} has schema_version {}; this nsys-gate reads {}",
            path.display(),
            analysis.schema_version,
            artifact::SCHEMA_VERSION
        )),
        Err(e) => {
            let version = serde_json::from_slice::<serde_json::Value>(&bytes)
                .ok()
                .and_then(|v| v.get("schema_version").cloned());
            match version {
                Some(v) if v != serde_json::json!(artifact::SCHEMA_VERSION) => fail(format!(
                    "{} has schema_version {v}; this nsys-gate reads {}",
                    path.display(),
                    artifact::SCHEMA_VERSION
                )),
                _ => fail(format!(
                    "{} is not an analysis.json that nsys-gate wrote: {e}",
                    path.display()
                )),
            }
        }
    }
}

/// The absolute form of a path, without resolving symlinks when it does not exist.
fn absolute(path: &Path) -> PathBuf {
    std::fs::canonicalize(path)
        .or_else(|_| std::path::absolute(path))
        .unwrap_or_else(|_| path.to_owned())
}

struct Finish<'a> {
    top: usize,
    /// `--output` (not `-`).
    output: Option<PathBuf>,
    /// False for `--output -`: standard output only.
    write_file: bool,
    run_dirs: &'a [PathBuf],
    /// Print the report to standard output.
    print: bool,
}

fn finish(renderer: &Renderer, outcomes: &[RunOutcome], f: &Finish) -> anyhow::Result<ExitCode> {
    let status = render::overall_status(outcomes);
    let options = RenderOptions {
        top: f.top,
        budget: Budget::comment(),
    };
    let report = renderer.render(outcomes, &options)?;

    let report_path = f.output.clone().filter(|_| f.write_file).or_else(|| {
        f.run_dirs
            .iter()
            .find(|d| f.write_file && d.is_dir())
            .map(|d| absolute(d).join(REPORT_FILE))
    });
    match &report_path {
        Some(path) => {
            artifact::write_atomically(path, report.as_bytes())
                .with_context(|| format!("cannot write the report to {}", path.display()))?;
            eprintln!("nsys-gate: report written to {}", path.display());
        }
        None if f.write_file => eprintln!(
            "nsys-gate: no run directory exists to write {REPORT_FILE} into (pass --output FILE); the report goes to standard output"
        ),
        None => {}
    }

    let in_actions = actions::enabled();
    if f.print || report_path.is_none() {
        let text = if in_actions {
            actions::without_commands(&report)
        } else {
            report.clone()
        };
        let mut stdout = std::io::stdout().lock();
        stdout
            .write_all(text.as_bytes())
            .and_then(|()| stdout.flush())
            .context("cannot write the report to standard output")?;
    }

    if in_actions {
        if let Err(err) = write_actions_files(renderer, outcomes, f, report_path.as_deref(), status)
        {
            eprintln!(
                "nsys-gate: error: {}",
                chain_text(&err).replace('\n', "\n  ")
            );
            return Ok(ExitCode::from(gate::exit::ERROR));
        }
    }
    Ok(ExitCode::from(status))
}

fn env_path(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// Step summary, annotations and step outputs. Every part is attempted; the first error is
/// returned.
fn write_actions_files(
    renderer: &Renderer,
    outcomes: &[RunOutcome],
    f: &Finish,
    report_path: Option<&Path>,
    status: u8,
) -> anyhow::Result<()> {
    let mut first_error: Option<anyhow::Error> = None;
    let mut keep = |r: anyhow::Result<()>| {
        if let Err(e) = r {
            first_error.get_or_insert(e);
        }
    };

    if let Some(path) = env_path("GITHUB_STEP_SUMMARY") {
        keep((|| {
            let room = limit::SUMMARY_BYTES.saturating_sub(actions::summary_size(&path) + 1);
            if room < MIN_SUMMARY_BYTES {
                eprintln!(
                    "nsys-gate: warning: the step summary {} already holds nearly {}; the report was not added to it",
                    path.display(),
                    Budget::Bytes(limit::SUMMARY_BYTES).describe()
                );
                return Ok(());
            }
            let options = RenderOptions {
                top: f.top,
                budget: Budget::Bytes(room),
            };
            let summary = renderer.render(outcomes, &options)?;
            actions::append_summary(&path, &summary)?;
            Ok(())
        })());
    }

    let mut stdout = std::io::stdout().lock();
    for annotation in actions::annotations(outcomes) {
        keep(writeln!(stdout, "{}", annotation.command()).context("cannot write annotations"));
    }
    keep(stdout.flush().context("cannot write annotations"));
    drop(stdout);

    if let Some(path) = env_path("GITHUB_OUTPUT") {
        let analysis_paths: Vec<String> = outcomes
            .iter()
            .filter_map(|o| match o {
                RunOutcome::Analysed { path, .. } => Some(path.display().to_string()),
                RunOutcome::Failed(_) => None,
            })
            .collect();
        let warnings: usize = outcomes
            .iter()
            .map(|o| match o {
                RunOutcome::Analysed { analysis, .. } => analysis.warnings.len(),
                RunOutcome::Failed(_) => 0,
            })
            .sum();
        let gate = match status {
            gate::exit::PASS => "pass",
            gate::exit::FAIL => "fail",
            _ => "error",
        };
        let outputs = [
            ("analysis-paths", analysis_paths.join("\n")),
            (
                "report-path",
                report_path
                    .map(|p| p.display().to_string())
                    .unwrap_or_default(),
            ),
            ("gate", gate.to_owned()),
            ("warnings", warnings.to_string()),
        ];
        keep(actions::write_outputs(&path, &outputs).map_err(anyhow::Error::from));
    }

    match first_error {
        Some(e) => Err(e),
        None => Ok(()),
    }
}
