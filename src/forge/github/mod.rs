//! GitHub as the forge (github.com and GitHub Enterprise Server, whose REST API is at
//! `GITHUB_API_URL`): comments through the REST API ([`comment`]), the base branch's history
//! from its push runs' artifacts ([`history`]), and the GitHub Actions step's files
//! ([`step`]).

pub mod comment;
pub mod history;
pub mod step;

use super::{
    BaseRuns, CommentBody, CommentKey, CommentSettings, Forge, HistoryRequest, Posted, StepResults,
};
use crate::environment::Environment;

/// GitHub, as this run's environment describes it.
pub struct GitHub {
    env: Environment,
}

impl GitHub {
    pub fn new(env: Environment) -> Self {
        GitHub { env }
    }
}

impl Forge for GitHub {
    fn post_comment(
        &self,
        settings: &CommentSettings,
        key: &CommentKey,
        body: CommentBody<'_>,
    ) -> Posted {
        comment::post(&self.env, settings, key, body)
    }

    fn history(&self, request: &HistoryRequest) -> BaseRuns {
        history::load(request, &self.env)
    }

    fn publish_step(&self, step: &StepResults<'_>) -> anyhow::Result<()> {
        step::publish(&self.env, step)
    }
}
