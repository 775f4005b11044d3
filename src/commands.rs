//! The `report`, `run` and `post` commands: outcomes in, report file, standard output, GitHub
//! Actions files, the pull-request comment and exit status out.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;

use crate::artifact::{self, Analysis};
use crate::cli::{CommentArgs, PostArgs, ReportArgs, RunArgs};
use crate::gate::{self, GateConfig};
use crate::github::{self, EventPr, PostError};
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
    let template = load_template(args.render.template.as_deref())?;
    let renderer = Renderer::new(&template)?;
    let outcomes: Vec<RunOutcome> = args.run_dirs.iter().map(|d| read_outcome(d)).collect();
    let to_stdout = args.output.as_deref() == Some(Path::new("-"));
    finish(
        &renderer,
        &outcomes,
        &Finish {
            top: usize::from(args.render.top),
            output: args.output.clone().filter(|_| !to_stdout),
            write_file: !to_stdout,
            run_dirs: &args.run_dirs,
            print: to_stdout,
        },
    )
    .map(|(code, _)| code)
}

/// `nsys-gate run`: analyses every run directory, then renders, prints and gates.
pub fn run(args: &RunArgs) -> anyhow::Result<ExitCode> {
    let gate = GateConfig::new(&args.analysis.gate_on, &args.analysis.no_gate_on);
    // A broken template fails before nsys runs.
    let template = load_template(args.render.template.as_deref())?;
    let renderer = Renderer::new(&template)?;
    let mut outcomes = Vec::with_capacity(args.run_dirs.len());
    for dir in &args.run_dirs {
        let options = AnalyzeOptions::new(dir, None, &args.analysis, gate.clone());
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
    let (code, report) = finish(
        &renderer,
        &outcomes,
        &Finish {
            top: usize::from(args.render.top),
            output: args.output.clone(),
            write_file: true,
            run_dirs: &args.run_dirs,
            print: true,
        },
    )?;
    if args.no_post {
        return Ok(code);
    }
    let key = args
        .comment
        .comment_key
        .clone()
        .unwrap_or_else(|| render::view::report_key(&outcomes));
    let top = usize::from(args.render.top);
    let shrink = |chars: usize| {
        let options = RenderOptions {
            top,
            budget: Budget::Chars(chars),
        };
        let text = renderer
            .render(&outcomes, &options)
            .unwrap_or_else(|_| report.clone());
        cut_report(&with_marker(&text, &key), chars)
    };
    let body = cut_report(&with_marker(&report, &key), limit::COMMENT_CHARS);
    match post_comment(&args.comment, &key, body, &shrink) {
        Posted::Done | Posted::Skipped => Ok(code),
        Posted::Failed(err) => {
            let level = if args.fail_on_post_error {
                "error"
            } else {
                "warning"
            };
            eprintln!("{}", post_failure_text(level, &err));
            if args.fail_on_post_error {
                Ok(ExitCode::from(gate::exit::ERROR))
            } else {
                Ok(code)
            }
        }
    }
}

/// `nsys-gate post`: posts a rendered report as the pull request's comment.
pub fn post(args: &PostArgs) -> anyhow::Result<ExitCode> {
    // The report may come from a fork's artifact: data, read with a size limit.
    const MAX_REPORT_BYTES: u64 = 16 << 20;
    let size = std::fs::metadata(&args.report)
        .with_context(|| format!("cannot read the report {}", args.report.display()))?
        .len();
    if size > MAX_REPORT_BYTES {
        anyhow::bail!(
            "the report {} is {size} bytes; refusing to read more than {MAX_REPORT_BYTES}",
            args.report.display()
        );
    }
    let text = std::fs::read_to_string(&args.report)
        .with_context(|| format!("cannot read the report {}", args.report.display()))?;
    let key = match &args.comment.comment_key {
        Some(k) => k.clone(),
        None => match render::view::key_of_marker(&text) {
            Some(k) => k.to_owned(),
            None => {
                eprintln!(
                    "nsys-gate: {} does not start with a `<!-- nsys-gate:KEY -->` marker and --comment-key is not given; using the key `{}`",
                    args.report.display(),
                    render::view::DEFAULT_KEY
                );
                render::view::DEFAULT_KEY.to_owned()
            }
        },
    };
    let text = with_marker(&text, &key);
    let body = cut_report(&text, limit::COMMENT_CHARS);
    let shrink = |chars: usize| cut_report(&text, chars);
    match post_comment(&args.comment, &key, body, &shrink) {
        Posted::Done | Posted::Skipped => Ok(ExitCode::SUCCESS),
        Posted::Failed(err) => {
            eprintln!("{}", post_failure_text("error", &err));
            Ok(ExitCode::from(gate::exit::ERROR))
        }
    }
}

/// The report cut to `chars` characters at a line boundary, the first line (the marker) kept;
/// unchanged when it fits.
fn cut_report(text: &str, chars: usize) -> String {
    limit::cut(
        text,
        Budget::Chars(chars),
        &format!(
            "**This report was cut to fit the server's limit of {} characters.** The full report is in the job's report.md.",
            limit::thousands(chars)
        ),
    )
}

/// `text` with the marker of `key` as its first line (replacing a marker already there).
pub fn with_marker(text: &str, key: &str) -> String {
    let marker = render::view::marker(key);
    if render::view::key_of_marker(text).is_some() {
        let rest = text.split_once('\n').map_or("", |(_, rest)| rest);
        format!("{marker}\n{rest}")
    } else {
        format!("{marker}\n{text}")
    }
}

fn post_failure_text(level: &str, err: &PostError) -> String {
    let mut text = format!("nsys-gate: {level}: cannot post the pull-request comment: {err}");
    if err.is_no_access() {
        text.push_str("\n  hint: ");
        text.push_str(github::FORK_HINT);
    }
    text
}

enum Posted {
    Done,
    Skipped,
    Failed(PostError),
}

/// Posts `body` as the comment of `key`: finds the pull request, then creates or updates.
/// Prints what it did (and the comment's URL) on standard error; in GitHub Actions also sets
/// the step output `comment-url`.
fn post_comment(
    args: &CommentArgs,
    key: &str,
    body: String,
    shrink: &dyn Fn(usize) -> String,
) -> Posted {
    let key = render::view::sanitize_key(key);
    let event = match args.pr {
        Some(n) => Ok(EventPr::Number(n)),
        None => github::event::read(
            env_string("GITHUB_EVENT_NAME").as_deref(),
            env_path("GITHUB_EVENT_PATH").as_deref(),
        ),
    };
    let event = match event {
        Ok(EventPr::None { event }) => {
            eprintln!(
                "nsys-gate: no pull request to comment on (event: {event}); the report was not posted (pass --pr N to post anyway)"
            );
            return Posted::Skipped;
        }
        Ok(e) => e,
        Err(e) => return Posted::Failed(e),
    };
    let repo = match args
        .repo
        .clone()
        .or_else(|| env_string("GITHUB_REPOSITORY"))
    {
        Some(r) => match github::Repo::parse(&r) {
            Ok(r) => r,
            Err(e) => return Posted::Failed(e),
        },
        None => {
            return Posted::Failed(PostError::Config(
                "no repository: pass --repo OWNER/NAME or set GITHUB_REPOSITORY".into(),
            ))
        }
    };
    let Some(token) = github::Token::from_env(&args.token_env) else {
        return Posted::Failed(PostError::Config(format!(
            "no token in ${}: in a workflow pass it with `env: {}: ${{{{ secrets.GITHUB_TOKEN }}}}` and grant `permissions: pull-requests: write`",
            args.token_env, args.token_env
        )));
    };
    let budget = Duration::from_secs(args.post_timeout);
    let config = github::ClientConfig {
        api_url: env_string("GITHUB_API_URL").unwrap_or_else(|| github::DEFAULT_API_URL.into()),
        token,
        max_tries: 3,
        budget,
        connect_timeout: (budget / 2).min(Duration::from_secs(10)),
        request_timeout: (budget / 2).min(Duration::from_secs(30)),
    };
    let matcher = github::Matcher {
        key: key.clone(),
        author: args.comment_author.clone(),
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            return Posted::Failed(PostError::Config(format!(
                "cannot start the async runtime: {e}"
            )))
        }
    };
    let result = runtime.block_on(async {
        let client = github::Client::new(config)?;
        let pr = match event {
            EventPr::Number(n) => n,
            EventPr::HeadSha(sha) => match client.pull_by_head(&repo, &sha).await? {
                Some(n) => {
                    eprintln!("nsys-gate: pull request #{n} has head commit {sha}");
                    n
                }
                None => return Ok(None),
            },
            EventPr::None { .. } => unreachable!("handled above"),
        };
        let outcome = github::upsert(
            &client,
            &repo,
            pr,
            &matcher,
            github::Body { text: body, shrink },
        )
        .await?;
        Ok::<_, PostError>(Some((pr, outcome)))
    });
    match result {
        Ok(None) => {
            eprintln!(
                "nsys-gate: no open pull request of {repo} has the workflow run's head commit; the report was not posted"
            );
            Posted::Skipped
        }
        Ok(Some((pr, outcome))) => {
            let url = outcome.url().unwrap_or("").to_owned();
            eprintln!(
                "nsys-gate: comment `{key}` on {repo}#{pr} {}: {}",
                outcome.verb(),
                if url.is_empty() {
                    "(no URL returned)"
                } else {
                    &url
                }
            );
            if actions::enabled() {
                if let Some(path) = env_path("GITHUB_OUTPUT") {
                    if let Err(e) = actions::write_outputs(&path, &[("comment-url", url)]) {
                        eprintln!("nsys-gate: warning: {e}");
                    }
                }
            }
            Posted::Done
        }
        Err(e) => Posted::Failed(e),
    }
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

/// Writes, prints and gates; returns the exit status and the report.
fn finish(
    renderer: &Renderer,
    outcomes: &[RunOutcome],
    f: &Finish,
) -> anyhow::Result<(ExitCode, String)> {
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
            return Ok((ExitCode::from(gate::exit::ERROR), report));
        }
    }
    Ok((ExitCode::from(status), report))
}

fn env_string(name: &str) -> Option<String> {
    std::env::var(name)
        .ok()
        .map(|v| v.trim().to_owned())
        .filter(|v| !v.is_empty())
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
