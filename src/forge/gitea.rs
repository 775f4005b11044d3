//! Gitea and Forgejo as the forge: their REST API (`…/api/v1`) takes GitHub's comment calls
//! and their runners read GitHub Actions' step files, so both go through [`GitHub`]; they have
//! no artifacts API, so there is no `--baseline auto` history (a note says to give the base
//! branch's analysis.json files as paths).

use super::github::GitHub;
use super::{
    BaseRuns, CommentBody, CommentKey, CommentSettings, Forge, HistoryRequest, Posted, StepResults,
};
use crate::artifact::comparison::{BaselineKind, BaselineSource};

pub struct Gitea {
    github: GitHub,
}

impl Gitea {
    pub fn new(github: GitHub) -> Self {
        Gitea { github }
    }
}

impl Forge for Gitea {
    fn post_comment(
        &self,
        settings: &CommentSettings,
        key: &CommentKey,
        body: CommentBody<'_>,
    ) -> Posted {
        self.github.post_comment(settings, key, body)
    }

    fn history(&self, request: &HistoryRequest) -> BaseRuns {
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
            notes: vec![format!(
                "no baseline: the API at {} is Gitea's or Forgejo's, which has no GitHub Actions artifacts endpoint; pass --baseline PATH with the base branch's analysis.json files instead",
                request.api_url
            )],
        }
    }

    fn publish_step(&self, step: &StepResults<'_>) -> anyhow::Result<()> {
        self.github.publish_step(step)
    }
}
