//! GitHub's REST calls of the comment (Gitea and Forgejo take the same): a pull request's
//! comments ([`Comments`], the [`Thread`] the upsert works on) and the open pull request whose
//! head is a commit. The workflow runs and artifacts of `--baseline auto` are
//! [`super::artifacts`]'s calls on the same [`Client`].
//!
//! Responses are parsed into the few fields needed, so Gitea's and Forgejo's JSON fit too;
//! a comment's URL (shown, and stored as the step output `comment-url`) is redacted where it
//! enters.

use http::Method;
use serde::Deserialize;

use super::repo::Repo;
use crate::comment::{Comment, Matcher};
use crate::http::{ApiError, Client};
use crate::upsert::{calls, Created, Thread};

/// Pages of comments read at most (100 comments each).
const MAX_PAGES: usize = 200;

/// A comment as GitHub's (and Gitea's) JSON has it.
#[derive(Debug, Deserialize)]
struct GhComment {
    id: u64,
    #[serde(default)]
    body: Option<String>,
    #[serde(default)]
    user: Option<GhUser>,
    #[serde(default)]
    html_url: Option<String>,
}

#[derive(Debug, Deserialize)]
struct GhUser {
    #[serde(default)]
    login: Option<String>,
}

/// The comments of pull request `pr` of `repo`.
pub struct Comments<'a> {
    pub client: &'a Client,
    pub repo: &'a Repo,
    pub pr: u64,
}

impl Comments<'_> {
    /// A comment as the crate reads it, its URL redacted.
    fn comment(&self, c: GhComment) -> Comment {
        Comment {
            id: c.id,
            body: c.body,
            author: c.user.and_then(|u| u.login),
            url: c.html_url.map(|url| self.client.redact(&url)),
        }
    }

    fn comment_url(&self, id: u64) -> String {
        self.client.url(&format!(
            "/repos/{}/{}/issues/comments/{id}",
            self.repo.owner, self.repo.name
        ))
    }
}

impl Thread for Comments<'_> {
    fn client(&self) -> &Client {
        self.client
    }

    /// `/repos/O/R/issues/N/comments`.
    fn path(&self) -> String {
        format!(
            "/repos/{}/{}/issues/{}/comments",
            self.repo.owner, self.repo.name, self.pr
        )
    }

    async fn list(&self, ours: &Matcher) -> Result<Vec<Comment>, ApiError> {
        let url = self.client.url(&format!("{}?per_page=100", self.path()));
        calls::list(
            self.client,
            url,
            (MAX_PAGES, None),
            ("comments", ours),
            |_: &GhComment| true,
            |c| self.comment(c),
        )
        .await
    }

    async fn create(&self, body: &str) -> Result<Created, ApiError> {
        let url = self.client.url(&self.path());
        calls::create(self.client, &url, body, |c: GhComment| self.comment(c)).await
    }

    async fn update(&self, id: u64, body: &str) -> Result<Comment, ApiError> {
        let url = self.comment_url(id);
        calls::update(
            self.client,
            Method::PATCH,
            &url,
            id,
            body,
            |c: GhComment| self.comment(c),
        )
        .await
    }

    async fn delete(&self, id: u64) -> Result<(), ApiError> {
        calls::delete(self.client, &self.comment_url(id)).await
    }
}

/// An open pull request as [`open_pull_by_head`] finds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenPull {
    pub number: u64,
    /// The base branch's name, and the commit it pointed at when the pull request was last
    /// updated.
    pub base_ref: Option<String>,
    pub base_sha: Option<String>,
}

pub async fn pull_by_head(
    client: &Client,
    repo: &Repo,
    sha: &str,
) -> Result<Option<u64>, ApiError> {
    Ok(open_pull_by_head(client, repo, sha)
        .await?
        .map(|p| p.number))
}

/// The open pull request whose head is `sha` (the lowest number if several), with its
/// base; every page of open pull requests is looked at.
pub async fn open_pull_by_head(
    client: &Client,
    repo: &Repo,
    sha: &str,
) -> Result<Option<OpenPull>, ApiError> {
    #[derive(Deserialize)]
    struct Pull {
        number: u64,
        head: Side,
        #[serde(default)]
        base: Option<Side>,
    }
    #[derive(Deserialize)]
    struct Side {
        #[serde(default)]
        sha: Option<String>,
        #[serde(rename = "ref", default)]
        branch: Option<String>,
    }
    let url = client.url(&format!(
        "/repos/{}/{}/pulls?state=open&per_page=100",
        repo.owner, repo.name
    ));
    let mut found: Option<OpenPull> = None;
    client
        .pages(url, MAX_PAGES, |pulls: Vec<Pull>| {
            for p in pulls {
                let matches = p
                    .head
                    .sha
                    .as_deref()
                    .is_some_and(|s| s.eq_ignore_ascii_case(sha));
                if matches && found.as_ref().is_none_or(|f| p.number < f.number) {
                    let base = p.base.unwrap_or(Side {
                        sha: None,
                        branch: None,
                    });
                    // Stored in comparison.json: server text, redacted.
                    found = Some(OpenPull {
                        number: p.number,
                        base_ref: base.branch.map(|b| client.redact(&b)),
                        base_sha: base.sha.map(|s| client.redact(&s)),
                    });
                }
            }
            true
        })
        .await?;
    Ok(found)
}
