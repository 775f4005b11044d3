//! `nsys-gate post --report`, and the posting that `run` and `post --analyses` share with it:
//! find the pull request, then create or update the one comment of a key.

use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context as _;

use super::Context;
use crate::actions;
use crate::artifact::comparison::Comparison;
use crate::cli::{CommentArgs, PostArgs};
use crate::environment::Environment;
use crate::gate;
use crate::github::marker::{self, key_of_marker, with_marker};
use crate::github::{self, EventPr, PostError, Repo};
use crate::outcome::RunOutcome;
use crate::render::{limit, Budget, RenderOptions, Renderer};
use crate::say::{self, say};
use crate::text::shown_path;

pub fn post(args: &PostArgs, context: &Context) -> anyhow::Result<ExitCode> {
    match (&args.report, &args.analyses) {
        (_, Some(dir)) => super::analyses::post_analyses(dir, args, context),
        (Some(report), None) => post_report(report, args, context),
        (None, None) => anyhow::bail!("pass --report FILE or --analyses DIR"),
    }
}

/// `post --report FILE`: the file as it is, under the key of its marker (or --comment-key).
fn post_report(report: &Path, args: &PostArgs, context: &Context) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(
        args.baseline.baseline.is_none(),
        "--baseline goes with --analyses: a --report is posted as it was rendered (give --baseline to the `run` or `report` that renders it)"
    );
    let text = read_report(report)?;
    let key = match &args.comment.comment_key {
        Some(k) => k.clone(),
        None => match key_of_marker(&text) {
            Some(k) => k.to_owned(),
            None => {
                say!(
                    "nsys-gate: {} does not start with a `<!-- nsys-gate:KEY -->` marker and --comment-key is not given; using the key `{}`",
                    shown_path(report),
                    marker::DEFAULT_KEY
                );
                marker::DEFAULT_KEY.to_owned()
            }
        },
    };
    let text = with_marker(&text, &key);
    let body = cut_report(&text, limit::COMMENT_CHARS);
    let shrink = |chars: usize| cut_report(&text, chars);
    Ok(exit_status(post_comment(
        &args.comment,
        &key,
        body,
        &shrink,
        &context.env,
    )))
}

/// `post`'s exit status: 0 posted, unchanged or skipped; 2 failed (said on standard error).
pub fn exit_status(posted: Posted) -> ExitCode {
    match posted {
        Posted::Done | Posted::Skipped => ExitCode::SUCCESS,
        Posted::Failed(err) => {
            print_post_failure("error", &err);
            ExitCode::from(gate::exit::ERROR)
        }
    }
}

/// The report to post. It may come from a fork's artifact: data, read only when it is a
/// regular file, and with a size limit.
fn read_report(path: &Path) -> anyhow::Result<String> {
    const MAX_REPORT_BYTES: u64 = 16 << 20;
    crate::files::read_regular_text(path, MAX_REPORT_BYTES)
        .with_context(|| format!("cannot read the report {}", shown_path(path)))
}

/// The report cut to `chars` characters at a line boundary, the first line (the marker) kept;
/// unchanged when it fits.
pub fn cut_report(text: &str, chars: usize) -> String {
    limit::cut(
        text,
        Budget::Chars(chars),
        &format!(
            "**This report was cut to fit the server's limit of {} characters.** The full report is in the job's report.md.",
            crate::units::thousands(chars)
        ),
    )
}

/// The comment shrunk to `chars` by rendering the outcomes again within that budget (tables
/// first, as for the step summary), marker of `key` first; the full report when that fails.
pub fn rerendered<'a>(
    renderer: &'a Renderer,
    outcomes: &'a [RunOutcome],
    comparison: Option<&'a Comparison>,
    options: &'a RenderOptions,
    report: &'a str,
    key: &'a str,
) -> impl Fn(usize) -> String + 'a {
    move |chars: usize| {
        let text = renderer
            .render_with(outcomes, comparison, &options.within(Budget::Chars(chars)))
            .unwrap_or_else(|_| report.to_owned());
        cut_report(&with_marker(&text, key), chars)
    }
}

/// Prints why posting failed, with a hint when the token may not write (a fork).
pub fn print_post_failure(level: &str, err: &PostError) {
    let mut text = format!("nsys-gate: {level}: cannot post the pull-request comment: {err}");
    if err.is_no_access() {
        text.push_str("\n  hint: ");
        text.push_str(github::FORK_HINT);
    }
    say::message(&text);
}

pub enum Posted {
    Done,
    Skipped,
    Failed(PostError),
}

/// Where the comment goes, once the event, the repository and the token are known.
struct Target {
    event: EventPr,
    repo: Repo,
    config: github::ClientConfig,
}

/// Posts `body` as the comment of `key`: finds the pull request, then creates or updates.
/// Prints what it did (and the comment's URL) on standard error; in GitHub Actions also sets
/// the step output `comment-url`.
pub fn post_comment(
    args: &CommentArgs,
    key: &str,
    body: String,
    shrink: &dyn Fn(usize) -> String,
    env: &Environment,
) -> Posted {
    let key = marker::sanitize_key(key);
    let target = match target(args, env) {
        Ok(Some(target)) => target,
        Ok(None) => return Posted::Skipped,
        Err(e) => return Posted::Failed(e),
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
    let repo = target.repo.clone();
    let result = runtime.block_on(upsert(
        target,
        &matcher,
        github::Body { text: body, shrink },
    ));
    match result {
        Ok(None) => {
            say!(
                "nsys-gate: no open pull request of {repo} has the workflow run's head commit; the report was not posted"
            );
            Posted::Skipped
        }
        Ok(Some((pr, outcome))) => {
            report_posted(&key, &repo, pr, &outcome, env);
            Posted::Done
        }
        Err(e) => Posted::Failed(e),
    }
}

/// The event's pull request, the repository and the client's settings; `None` when there is
/// no pull request to comment on.
fn target(args: &CommentArgs, env: &Environment) -> Result<Option<Target>, PostError> {
    let event = match args.pr {
        Some(n) => EventPr::Number(n),
        None => match env.pull_request()? {
            EventPr::None { event } => {
                let mut text = format!(
                    "nsys-gate: no pull request to comment on (event: {event}); the report was not posted (pass --pr N to post anyway)"
                );
                // Said now, not first on a pull request's run: the setup cannot post.
                if !matches!(github::Token::from_env(&args.token_env), Ok(Some(_))) {
                    text.push_str(&format!(
                        "\n  note: there is no token in ${} either, so posting would fail on a pull request too: {}",
                        args.token_env,
                        token_hint(&args.token_env)
                    ));
                }
                say::message(&text);
                return Ok(None);
            }
            e => e,
        },
    };
    let repo = match args
        .repo
        .as_deref()
        .map(str::trim)
        .filter(|r| !r.is_empty())
    {
        Some(r) => Repo::parse(r)?,
        None => {
            return Err(PostError::Config(
                "no repository: pass --repo OWNER/NAME or set GITHUB_REPOSITORY".into(),
            ))
        }
    };
    let Some(token) = github::Token::from_env(&args.token_env)? else {
        return Err(PostError::Config(format!(
            "no token in ${}: {}",
            args.token_env,
            token_hint(&args.token_env)
        )));
    };
    let budget = Duration::from_secs(args.post_timeout);
    let api_url = args.api_url.trim();
    let config = github::ClientConfig {
        api_url: if api_url.is_empty() {
            github::DEFAULT_API_URL.to_owned()
        } else {
            api_url.to_owned()
        },
        token,
        max_tries: 3,
        budget,
        connect_timeout: (budget / 2).min(Duration::from_secs(10)),
        request_timeout: (budget / 2).min(Duration::from_secs(30)),
    };
    Ok(Some(Target {
        event,
        repo,
        config,
    }))
}

/// How to give the token that is missing from `$name`.
fn token_hint(name: &str) -> String {
    format!(
        "in a workflow pass it with `env: {name}: ${{{{ secrets.GITHUB_TOKEN }}}}` and grant `permissions: pull-requests: write`; locally, set {name} to a token that may comment on the pull requests"
    )
}

/// Finds the pull request (from a head commit, for `workflow_run`) and upserts the comment.
async fn upsert(
    target: Target,
    matcher: &github::Matcher,
    body: github::Body<'_>,
) -> Result<Option<(u64, github::Outcome)>, PostError> {
    let client = github::Client::new(target.config)?;
    let pr = match target.event {
        EventPr::Number(n) => n,
        EventPr::HeadSha(sha) => match client.pull_by_head(&target.repo, &sha).await? {
            Some(n) => {
                say!("nsys-gate: pull request #{n} has head commit {sha}");
                n
            }
            None => return Ok(None),
        },
        EventPr::None { .. } => unreachable!("`target` returns no target without a pull request"),
    };
    let outcome = github::upsert(&client, &target.repo, pr, matcher, body).await?;
    Ok(Some((pr, outcome)))
}

/// Says what was done, and sets the step output `comment-url` in GitHub Actions.
fn report_posted(key: &str, repo: &Repo, pr: u64, outcome: &github::Outcome, env: &Environment) {
    let url = outcome.url().unwrap_or("").to_owned();
    say!(
        "nsys-gate: comment `{key}` on {repo}#{pr} {}: {}",
        outcome.verb(),
        if url.is_empty() {
            "(no URL returned)"
        } else {
            &url
        }
    );
    if let Some(path) = env.output_file() {
        if let Err(e) = actions::write_outputs(path, &[("comment-url", url)]) {
            say!("nsys-gate: warning: {e}");
        }
    }
}
