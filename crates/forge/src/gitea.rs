//! Gitea and Forgejo as the forge: their REST API (`…/api/v1`) takes GitHub's comment calls
//! and their runners read GitHub Actions' step files, so both go through [`GitHub`]; they have
//! no artifacts API, so there is no `--baseline auto` history (a note says to give the base
//! branch's analysis.json files as paths).

use super::github::GitHub;
use super::{
    BaseRuns, CiFacts, CommentBody, CommentKey, CommentSettings, Forge, HistoryRequest, Links,
    Posted, StepResults,
};

pub struct Gitea {
    github: GitHub,
}

impl Gitea {
    pub fn new(github: GitHub) -> Self {
        Gitea { github }
    }
}

impl Forge for Gitea {
    fn ci(&self) -> CiFacts {
        self.github.ci()
    }

    fn links(&self) -> Links {
        self.github.links()
    }

    fn words(&self) -> crate::CiWords {
        self.github.words()
    }

    fn comment_limit(&self) -> usize {
        self.github.comment_limit()
    }

    fn access_hint(&self) -> &'static str {
        self.github.access_hint()
    }

    fn post_comment(
        &self,
        settings: &CommentSettings,
        key: &CommentKey,
        body: CommentBody<'_>,
    ) -> Posted {
        self.github.post_comment(settings, key, body)
    }

    fn history(&self, request: &HistoryRequest) -> BaseRuns {
        let request = &self.github.history_request(request);
        let mut found = BaseRuns::none(request);
        found.notes.push(super::HistoryNote::NoBaseline(format!(
            "no baseline: the API at {} is Gitea's or Forgejo's, which has no GitHub Actions artifacts endpoint; pass --baseline PATH with the base branch's analysis.json files instead",
            nsys_gate_core::text::without_userinfo(request.api_url.as_deref().unwrap_or("").trim())
        )));
        found
    }

    fn publish_step(&self, step: &StepResults<'_>) -> anyhow::Result<()> {
        self.github.publish_step(step)
    }
}
