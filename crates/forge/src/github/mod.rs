//! GitHub as the forge (github.com and GitHub Enterprise Server, whose REST API is at
//! `GITHUB_API_URL`), in GitHub Actions: the variables it reads ([`env`]) and its event
//! ([`event`]), comments through the REST API ([`comment`], [`api`]), the base branch's
//! history from its push runs' artifacts ([`runs`], [`artifacts`]), and the Actions step's
//! files and workflow commands ([`step`], [`actions`]).

pub mod actions;
pub mod api;
pub mod artifacts;
pub mod comment;
pub mod dialect;
pub mod env;
pub mod event;
pub mod repo;
pub mod runs;
pub mod step;

use super::{
    BaseRuns, CiFacts, CommentBody, CommentKey, CommentSettings, Forge, HistoryRequest, Links,
    Posted, StepResults, Vars,
};
use env::Environment;

/// The default API base.
pub const DEFAULT_API_URL: &str = "https://api.github.com";

/// The variable holding the token by default.
pub const TOKEN_ENV: &str = "GITHUB_TOKEN";

/// The default author of the comment: the workflow token's bot.
pub const DEFAULT_AUTHOR: &str = "github-actions[bot]";

pub use dialect::DIALECT;

/// GitHub's comment limit, counted in Unicode scalar values: safe under every interpretation
/// of the limit that has been observed (characters, UTF-16 units or 262,144 bytes).
pub const COMMENT_CHARS: usize = 65_536;

/// GitHub's limit for one step's job summary.
pub const SUMMARY_BYTES: usize = 1024 * 1024;

/// The explanation added to a 403/404 warning.
pub const FORK_HINT: &str = "the token cannot write comments here. On a pull request from a fork GITHUB_TOKEN is read-only: use the fork-safe pattern. The `pull_request` job runs `nsys-gate run --no-post` and uploads its analysis.json files (only those) as an artifact; a second workflow `on: workflow_run` (with `permissions: pull-requests: write`) downloads them and runs `nsys-gate post --analyses DIR`, which renders the comment itself and finds the pull request from the event (never post the artifact's report.md: the fork wrote it). Otherwise grant the job `permissions: pull-requests: write`.";

/// Whether this is a step of GitHub Actions (or of a runner that says it is one).
pub fn in_actions(vars: &Vars) -> bool {
    vars.is_true("GITHUB_ACTIONS")
}

/// GitHub, as this run's environment describes it.
pub struct GitHub {
    env: Environment,
}

impl GitHub {
    pub fn new(vars: &Vars) -> Self {
        GitHub {
            env: Environment::from_vars(vars),
        }
    }

    /// Whether the runner is Gitea's or Forgejo's.
    pub fn is_gitea(&self) -> bool {
        self.env.gitea
    }

    /// `request` with GitHub's defaults: `GITHUB_REPOSITORY` and `GITHUB_API_URL` where
    /// `--repo` and `--api-url` were not given.
    pub fn history_request(&self, request: &HistoryRequest) -> HistoryRequest {
        let mut request = request.clone();
        request.repo = given(request.repo).or_else(|| self.env.repository.clone());
        request.api_url = given(request.api_url).or_else(|| self.env.api_url.clone());
        request
    }

    fn comment_settings(&self, settings: &CommentSettings) -> CommentSettings {
        let mut settings = settings.clone();
        settings.repo = given(settings.repo).or_else(|| self.env.repository.clone());
        settings.api_url = given(settings.api_url).or_else(|| self.env.api_url.clone());
        settings
    }
}

/// An option's value unless it is blank.
fn given(value: Option<String>) -> Option<String> {
    value.filter(|v| !v.trim().is_empty())
}

impl Forge for GitHub {
    fn ci(&self) -> CiFacts {
        CiFacts {
            run: self.env.ci_run(),
            runner: self.env.runner_name.clone(),
        }
    }

    fn links(&self) -> Links {
        Links {
            run: self
                .env
                .run_url
                .clone()
                .map(|url| ("the workflow run".to_owned(), url)),
            commit_prefix: self.env.repo_url.as_ref().map(|r| format!("{r}/commit/")),
        }
    }

    fn words(&self) -> crate::CiWords {
        crate::words::GITHUB
    }

    fn comment_limit(&self) -> usize {
        COMMENT_CHARS
    }

    fn access_hint(&self) -> &'static str {
        FORK_HINT
    }

    fn post_comment(
        &self,
        settings: &CommentSettings,
        key: &CommentKey,
        body: CommentBody<'_>,
    ) -> Posted {
        comment::post(&self.env, &self.comment_settings(settings), key, body)
    }

    fn history(&self, request: &HistoryRequest) -> BaseRuns {
        runs::load(&self.history_request(request), &self.env)
    }

    fn publish_step(&self, step: &StepResults<'_>) -> anyhow::Result<()> {
        step::publish(&self.env, step)
    }
}
