//! Posting the comment on GitHub (and Gitea, whose API is GitHub's for comments): the pull
//! request from the event (for a `workflow_run`, from the run's head commit), the repository
//! and the token from the settings, then the one comment of the key upserted
//! ([`crate::upsert`] over [`super::api::Comments`]). In GitHub Actions the comment's
//! URL is the step output `comment-url`.

use super::actions;
use super::api::{self, Comments};
use super::env::Environment;
use super::event::EventPr;
use super::repo::Repo;
use crate::comment::Matcher;
use crate::http::{ApiError, Client, ClientConfig, Token};
use crate::upsert::{self, Upserted};
use crate::{CommentBody, CommentKey, CommentSettings, Posted};
use nsys_gate_core::say::{self, say};

/// Where the comment goes, once the event, the repository and the token are known.
struct Target {
    event: EventPr,
    repo: Repo,
    config: ClientConfig,
}

/// Posts `body` as the comment of `key`: finds the pull request, then creates or updates.
/// Prints what it did (and the comment's URL) on standard error; in GitHub Actions also sets
/// the step output `comment-url`.
pub fn post(
    env: &Environment,
    settings: &CommentSettings,
    key: &CommentKey,
    body: CommentBody<'_>,
) -> Posted {
    let target = match target(settings, env) {
        Ok(Some(target)) => target,
        Ok(None) => return Posted::Skipped,
        Err(e) => return Posted::Failed(e),
    };
    let matcher = Matcher {
        key: key.as_str().to_owned(),
        author: settings
            .author
            .clone()
            .unwrap_or_else(|| super::DEFAULT_AUTHOR.to_owned()),
    };
    let runtime = match crate::http::runtime() {
        Ok(r) => r,
        Err(e) => return Posted::Failed(ApiError::Config(e)),
    };
    let repo = target.repo.clone();
    let result = runtime.block_on(upsert(target, &matcher, body));
    match result {
        Ok(None) => {
            say!(
                "nsys-gate: no open pull request of {repo} has the workflow run's head commit; the report was not posted"
            );
            Posted::Skipped
        }
        Ok(Some((pr, outcome))) => {
            report_posted(key, &repo, pr, &outcome, env);
            Posted::Done
        }
        Err(e) => Posted::Failed(e),
    }
}

/// The event's pull request, the repository and the client's settings; `None` when there is
/// no pull request to comment on.
fn target(settings: &CommentSettings, env: &Environment) -> Result<Option<Target>, ApiError> {
    let token_env = settings.token_env.as_deref().unwrap_or(super::TOKEN_ENV);
    let event = match settings.pr {
        Some(n) => EventPr::Number(n),
        None => match env.pull_request()? {
            EventPr::None { event } => {
                let mut text = format!(
                    "nsys-gate: no pull request to comment on (event: {event}); the report was not posted (pass --pr N to post anyway)"
                );
                // Said now, not first on a pull request's run: the setup cannot post.
                if !matches!(Token::from_env(token_env), Ok(Some(_))) {
                    text.push_str(&format!(
                        "\n  note: there is no token in ${token_env} either, so posting would fail on a pull request too: {}",
                        token_hint(token_env)
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
            return Err(ApiError::Config(
                "no repository: pass --repo OWNER/NAME or set GITHUB_REPOSITORY".into(),
            ))
        }
    };
    let Some(token) = Token::from_env(token_env)? else {
        return Err(ApiError::Config(format!(
            "no token in ${token_env}: {}",
            token_hint(token_env)
        )));
    };
    let api_url = settings
        .api_url
        .as_deref()
        .map(str::trim)
        .filter(|u| !u.is_empty())
        .unwrap_or(super::DEFAULT_API_URL)
        .to_owned();
    let config = ClientConfig::for_stage(
        api_url,
        (token, &super::DIALECT),
        settings.timeout,
        "--post-timeout",
    );
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
    matcher: &Matcher,
    body: CommentBody<'_>,
) -> Result<Option<(u64, Upserted)>, ApiError> {
    let client = Client::new(target.config)?;
    let pr = match target.event {
        EventPr::Number(n) => n,
        EventPr::HeadSha(sha) => match api::pull_by_head(&client, &target.repo, &sha).await? {
            Some(n) => {
                say!("nsys-gate: pull request #{n} has head commit {sha}");
                n
            }
            None => return Ok(None),
        },
        EventPr::None { .. } => unreachable!("`target` returns no target without a pull request"),
    };
    let thread = Comments {
        client: &client,
        repo: &target.repo,
        pr,
    };
    let outcome = upsert::upsert(&thread, matcher, body).await?;
    Ok(Some((pr, outcome)))
}

/// Says what was done, and sets the step output `comment-url` in GitHub Actions.
fn report_posted(key: &CommentKey, repo: &Repo, pr: u64, outcome: &Upserted, env: &Environment) {
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
