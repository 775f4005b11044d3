//! The forge: the platform nsys-gate runs on and reports to. Everything the rest of the crate
//! needs from it goes through [`Forge`]:
//!
//! - the pull request's comment, found by its key and updated in place ([`Forge::post_comment`]);
//! - the base branch's history for `--baseline auto` ([`Forge::history`]);
//! - what the CI step shows besides the report: the job summary, annotations and step outputs
//!   ([`Forge::publish_step`]).
//!
//! [`detect`] picks the forge of a run: [`github`] (github.com and GitHub Enterprise Server,
//! in GitHub Actions) or [`gitea`] (Gitea and Forgejo, whose API and runner are GitHub's
//! for comments and step files, without the artifacts the history needs). Another CI
//! platform is another module here implementing [`Forge`], and a line in [`detect`].

pub mod gitea;
pub mod github;

use std::time::Duration;

use crate::artifact::comparison::{BaselineKind, BaselineSource};
use crate::compare::RunLevel;
use crate::environment::Environment;
pub use crate::github::marker::CommentKey;
pub use crate::github::{CommentBody, PostError};

/// What a forge does for nsys-gate.
pub trait Forge {
    /// Posts `body` as the pull request's comment of `key` (the one starting with its marker,
    /// by `settings.author`), created or updated in place; says what it did on standard
    /// error. [`Posted::Skipped`] when the event has no pull request to comment on.
    fn post_comment(
        &self,
        settings: &CommentSettings,
        key: &CommentKey,
        body: CommentBody<'_>,
    ) -> Posted;

    /// `--baseline auto`: the base branch's newest runs, reduced; whatever is missing is a
    /// note, never an error.
    fn history(&self, request: &HistoryRequest) -> BaseRuns;

    /// In a CI step: the job summary, the annotations and the step outputs. Nothing outside
    /// one. Every part is attempted; the first error is returned.
    fn publish_step(&self, step: &StepResults<'_>) -> anyhow::Result<()>;
}

/// The forge of this run: Gitea or Forgejo when their runner says so, or when the API is
/// theirs (`…/api/v1`); else GitHub.
pub fn detect(env: &Environment, api_url: &str) -> Box<dyn Forge> {
    let github = github::GitHub::new(env.clone());
    if env.gitea || api_url.trim().trim_end_matches('/').ends_with("/api/v1") {
        Box::new(gitea::Gitea::new(github))
    } else {
        Box::new(github)
    }
}

/// Where and as whom the comment is posted: `--repo`, `--api-url`, `--pr`, `--token-env`,
/// `--comment-author` and `--post-timeout`, as plain data.
#[derive(Debug, Clone)]
pub struct CommentSettings {
    /// OWNER/NAME (`None` or empty: not given).
    pub repo: Option<String>,
    pub api_url: String,
    /// The pull request (`None`: from the event).
    pub pr: Option<u64>,
    /// The environment variable holding the token.
    pub token_env: String,
    /// The login of the comment's author to update (`*`: any).
    pub author: String,
    /// The deadline of posting, every request and wait included.
    pub timeout: Duration,
}

/// What became of a comment.
pub enum Posted {
    Done,
    Skipped,
    Failed(PostError),
}

/// What `--baseline auto` reads.
#[derive(Debug, Clone)]
pub struct HistoryRequest {
    /// The workflow whose runs hold the history (`None`: this run's).
    pub workflow: Option<String>,
    /// The artifact's name.
    pub artifact: String,
    /// How many of the base branch's newest runs.
    pub runs: usize,
    /// `--repo`, `--api-url`, `--token-env`.
    pub repo: Option<String>,
    pub api_url: String,
    pub token_env: String,
    /// The deadline of finding and fetching it all.
    pub timeout: Duration,
}

/// The base runs a forge found: reduced, oldest first; where they came from; and notes.
pub struct BaseRuns {
    pub runs: Vec<RunLevel>,
    pub source: BaselineSource,
    pub notes: Vec<String>,
}

impl BaseRuns {
    /// No base run yet: an `auto` source naming only `request`'s artifact, and no note.
    pub fn none(request: &HistoryRequest) -> BaseRuns {
        BaseRuns {
            runs: Vec::new(),
            source: BaselineSource {
                kind: BaselineKind::Auto,
                paths: Vec::new(),
                workflow: None,
                branch: None,
                artifact: Some(request.artifact.clone()),
                workflow_runs: Vec::new(),
                analyses: Vec::new(),
            },
            notes: Vec::new(),
        }
    }
}

/// What the CI step shows besides the report on standard output.
pub struct StepResults<'a> {
    /// The report for the job summary, rendered within so many bytes.
    pub summary: &'a dyn Fn(usize) -> anyhow::Result<String>,
    /// Gating warnings and failed analyses as errors, the other warnings as warnings.
    pub annotations: Vec<crate::actions::Annotation>,
    /// Step outputs, by name.
    pub outputs: Vec<(&'static str, String)>,
}
