//! The pull request's comment: its body (the report, marker first, cut or rendered again
//! smaller to fit GitHub's limit) and its posting (find the pull request, then create or
//! update the one comment of a key).

use std::time::Duration;

use crate::actions;
use crate::artifact::comparison::Comparison;
use crate::environment::Environment;
use crate::github::marker::{self, with_marker};
use crate::github::{self, EventPr, PostError, Repo};
use crate::outcome::RunOutcome;
use crate::render::{limit, Budget, RenderOptions, Renderer};
use crate::say::{self, say};

/// Where and as whom the comment is posted: `--repo`, `--api-url`, `--pr`, `--token-env`,
/// `--comment-author` and `--post-timeout`, as plain data.
#[derive(Debug, Clone)]
pub struct PostSettings {
    /// OWNER/NAME (`None` or empty: not given).
    pub repo: Option<String>,
    pub api_url: String,
    /// The pull request (`None`: from the event).
    pub pr: Option<u64>,
    /// The environment variable holding the token.
    pub token_env: String,
    /// The login of the comment's author to update (`*`: any).
    pub author: String,
    /// All requests and waits together.
    pub timeout: Duration,
}

/// The report cut to `chars` characters at a line boundary, the first line (the marker) kept;
/// unchanged when it fits.
pub fn cut(text: &str, chars: usize) -> String {
    limit::cut(
        text,
        Budget::Chars(chars),
        &format!(
            "**This report was cut to fit the server's limit of {} characters.** The full report is in the job's report.md.",
            crate::units::thousands(chars)
        ),
    )
}

/// A report rendered here, as the comment of `key` shows it.
pub struct Rendered<'a> {
    pub renderer: &'a Renderer<'a>,
    pub outcomes: &'a [RunOutcome],
    pub comparison: Option<&'a Comparison>,
    pub options: &'a RenderOptions,
    /// The report as rendered within `options`.
    pub report: &'a str,
}

impl Rendered<'_> {
    /// Posts the report as the comment of `key`: marker of `key` first, cut to the comment
    /// limit; when the server refuses it as too long, rendered again within what it allows
    /// (tables shrink first, as for the step summary).
    pub fn post(&self, key: &str, settings: &PostSettings, env: &Environment) -> Posted {
        let body = cut(&with_marker(self.report, key), limit::COMMENT_CHARS);
        let shrink = |chars: usize| {
            let text = self
                .renderer
                .render_with(
                    self.outcomes,
                    self.comparison,
                    &self.options.within(Budget::Chars(chars)),
                )
                .unwrap_or_else(|_| self.report.to_owned());
            cut(&with_marker(&text, key), chars)
        };
        post_comment(settings, key, body, &shrink, env)
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

/// What became of a comment.
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
    settings: &PostSettings,
    key: &str,
    body: String,
    shrink: &dyn Fn(usize) -> String,
    env: &Environment,
) -> Posted {
    let key = marker::sanitize_key(key);
    let target = match target(settings, env) {
        Ok(Some(target)) => target,
        Ok(None) => return Posted::Skipped,
        Err(e) => return Posted::Failed(e),
    };
    let matcher = github::Matcher {
        key: key.clone(),
        author: settings.author.clone(),
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
fn target(settings: &PostSettings, env: &Environment) -> Result<Option<Target>, PostError> {
    let event = match settings.pr {
        Some(n) => EventPr::Number(n),
        None => match env.pull_request()? {
            EventPr::None { event } => {
                let mut text = format!(
                    "nsys-gate: no pull request to comment on (event: {event}); the report was not posted (pass --pr N to post anyway)"
                );
                // Said now, not first on a pull request's run: the setup cannot post.
                if !matches!(github::Token::from_env(&settings.token_env), Ok(Some(_))) {
                    text.push_str(&format!(
                        "\n  note: there is no token in ${} either, so posting would fail on a pull request too: {}",
                        settings.token_env,
                        token_hint(&settings.token_env)
                    ));
                }
                say::message(&text);
                return Ok(None);
            }
            e => e,
        },
    };
    let repo = match settings
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
    let Some(token) = github::Token::from_env(&settings.token_env)? else {
        return Err(PostError::Config(format!(
            "no token in ${}: {}",
            settings.token_env,
            token_hint(&settings.token_env)
        )));
    };
    let api_url = settings.api_url.trim();
    let api_url = if api_url.is_empty() {
        github::DEFAULT_API_URL.to_owned()
    } else {
        api_url.to_owned()
    };
    let config =
        github::ClientConfig::for_stage(api_url, token, settings.timeout, "--post-timeout");
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
