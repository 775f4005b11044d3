//! Posting the comment on GitHub (and Gitea, whose API is GitHub's for comments): the pull
//! request from the event (for a `workflow_run`, from the run's head commit), the repository
//! and the token from the settings, then the one comment of the key upserted
//! ([`crate::github::upsert`]). In GitHub Actions the comment's URL is the step output
//! `comment-url`.

use crate::actions;
use crate::environment::Environment;
use crate::forge::{CommentBody, CommentKey, CommentSettings, Posted};
use crate::github::{self, EventPr, PostError, Repo};
use crate::say::{self, say};

/// Where the comment goes, once the event, the repository and the token are known.
struct Target {
    event: EventPr,
    repo: Repo,
    config: github::ClientConfig,
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
    let matcher = github::Matcher {
        key: key.as_str().to_owned(),
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
fn target(settings: &CommentSettings, env: &Environment) -> Result<Option<Target>, PostError> {
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
    body: github::CommentBody<'_>,
) -> Result<Option<(u64, github::Upserted)>, PostError> {
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
fn report_posted(
    key: &CommentKey,
    repo: &Repo,
    pr: u64,
    outcome: &github::Upserted,
    env: &Environment,
) {
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
