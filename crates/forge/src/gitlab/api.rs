//! GitLab's REST API v4 calls: a merge request's notes ([`Notes`], the thread the upsert works
//! on; paged by `x-next-page`), the token's own user, a branch's push pipelines and a
//! pipeline's jobs. Server text that may be shown or stored (a URL, a commit, a time) is
//! redacted where it enters.

use http::Method;
use serde::Deserialize;

use crate::comment::{Comment, MarkedBody, Matcher};
use crate::http::{query_value, ApiError, Client};
use crate::upsert::{calls, Created, Thread};

/// Pages of notes read at most (100 notes each).
const MAX_NOTE_PAGES: usize = 200;

/// The most of one page of notes read (streamed through a temporary file, never held): 100
/// notes of GitLab's 1,000,000 characters at most, each up to 6 bytes as JSON writes it.
const MAX_NOTE_PAGE_BYTES: u64 = 1 << 30;

/// Pages of pipelines read at most (100 each).
const MAX_PIPELINE_PAGES: usize = 10;

/// Pages of a pipeline's jobs read at most (100 each).
const MAX_JOB_PAGES: usize = 5;

/// A note as GitLab's JSON has it.
#[derive(Debug, Deserialize)]
struct GlNote {
    id: u64,
    #[serde(default)]
    body: Option<String>,
    #[serde(default)]
    author: Option<GlUser>,
}

/// A note as the list of notes is read: its body kept only when it starts with the marker
/// (others' notes, up to GitLab's 1,000,000 characters each, are dropped as they are read).
#[derive(Debug, Deserialize)]
struct GlListedNote {
    id: u64,
    #[serde(default)]
    body: MarkedBody,
    #[serde(default)]
    author: Option<GlUser>,
    /// System notes ("added 1 commit") are GitLab's own.
    #[serde(default)]
    system: bool,
}

#[derive(Debug, Deserialize)]
struct GlUser {
    #[serde(default)]
    username: Option<String>,
}

/// The username of the token's own user (`GET /user`): the author of the notes it writes.
/// Only a GitLab username is taken ([`is_username`]): the answer is the server's word, and a
/// `*` (the any-author wildcard of `--comment-author`) or a name holding the token (which
/// redaction would turn into `***`, matching no note) would make another user's note, or
/// none, ours.
pub async fn current_user(client: &Client) -> Result<String, ApiError> {
    let url = client.url("/user");
    let reply = client.request(Method::GET, &url, None).await?;
    if reply.status != 200 {
        return Err(client.failure("GET", &url, &reply));
    }
    let user: GlUser = client.parse("GET", &url, &reply)?;
    let refused = |why: String| ApiError::Response {
        method: "GET".into(),
        path: client.display_path(&url),
        message: why,
    };
    let Some(name) = user.username.filter(|u| !u.is_empty()) else {
        return Err(refused("the token's user has no username".into()));
    };
    let redacted = client.redact(&name);
    if !is_username(&name) || redacted != name {
        return Err(refused(format!(
            "the token's user has no valid username (GitLab's are letters, digits, `_`, `-` and `.`), so its notes cannot be told from others': the API answered `{}`; pass --comment-author NAME to say whose notes to update",
            nsys_gate_core::text::shown_shortened(&redacted, 80)
        )));
    }
    Ok(name)
}

/// Whether `name` can be a GitLab username: 1 to 255 ASCII letters, digits, `_`, `-` and
/// `.`.
pub fn is_username(name: &str) -> bool {
    (1..=255).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

/// The notes of merge request `iid` of `project` (an ID, or a URL-encoded path).
pub struct Notes<'a> {
    pub client: &'a Client,
    pub project: &'a str,
    pub iid: u64,
}

impl Notes<'_> {
    fn comment(&self, n: GlNote) -> Comment {
        Comment {
            id: n.id,
            body: n.body,
            author: n.author.and_then(|a| a.username),
            url: None,
        }
    }

    fn note_url(&self, id: u64) -> String {
        self.client.url(&format!("{}/{id}", self.path()))
    }
}

impl Thread for Notes<'_> {
    fn client(&self) -> &Client {
        self.client
    }

    /// `/projects/ID/merge_requests/IID/notes`.
    fn path(&self) -> String {
        format!(
            "/projects/{}/merge_requests/{}/notes",
            self.project, self.iid
        )
    }

    async fn list(&self, ours: &Matcher) -> Result<Vec<Comment>, ApiError> {
        let url = self.client.url(&format!(
            "{}?per_page=100&sort=asc&order_by=created_at",
            self.path()
        ));
        // GitLab's own notes (a push, a label) are not comments anyone wrote. Each page is
        // streamed and only marked bodies are kept: others' notes can fill a page past the
        // cap of a reply held in memory, and 200 pages of them many gigabytes.
        calls::list(
            self.client,
            url,
            (MAX_NOTE_PAGES, Some(MAX_NOTE_PAGE_BYTES)),
            ("notes", ours),
            |n: &GlListedNote| !n.system,
            |n| {
                self.comment(GlNote {
                    id: n.id,
                    body: n.body.0,
                    author: n.author,
                })
            },
        )
        .await
    }

    async fn create(&self, body: &str) -> Result<Created, ApiError> {
        let url = self.client.url(&self.path());
        calls::create(self.client, &url, body, |n: GlNote| self.comment(n)).await
    }

    async fn update(&self, id: u64, body: &str) -> Result<Comment, ApiError> {
        let url = self.note_url(id);
        calls::update(self.client, Method::PUT, &url, id, body, |n: GlNote| {
            self.comment(n)
        })
        .await
    }

    async fn delete(&self, id: u64) -> Result<(), ApiError> {
        calls::delete(self.client, &self.note_url(id)).await
    }
}

/// A pipeline as far as the history needs it.
#[derive(Debug, Clone, Deserialize)]
pub struct Pipeline {
    pub id: u64,
    pub sha: String,
    #[serde(rename = "ref", default)]
    pub branch: Option<String>,
    #[serde(default)]
    pub status: Option<String>,
    #[serde(default)]
    pub source: Option<String>,
    #[serde(default)]
    pub tag: Option<bool>,
    #[serde(default)]
    pub web_url: Option<String>,
    #[serde(default)]
    pub created_at: Option<String>,
}

/// A job of a pipeline as far as the history needs it.
#[derive(Debug, Clone, Deserialize)]
pub struct Job {
    pub id: u64,
    pub name: String,
    #[serde(default)]
    pub status: Option<String>,
    /// When its artifacts expire (or expired): ISO 8601.
    #[serde(default)]
    pub artifacts_expire_at: Option<String>,
    #[serde(default)]
    pub artifacts: Vec<JobArtifact>,
    /// The runner it ran on (`null` when GitLab no longer knows it).
    #[serde(default)]
    pub runner: Option<JobRunner>,
}

/// A job's runner: its description is what `CI_RUNNER_DESCRIPTION` says inside the job.
#[derive(Debug, Clone, Deserialize)]
pub struct JobRunner {
    #[serde(default)]
    pub description: Option<String>,
}

/// One of a job's artifact files: `archive` is the zip of its `artifacts:paths`.
#[derive(Debug, Clone, Deserialize)]
pub struct JobArtifact {
    pub file_type: String,
    #[serde(default)]
    pub size: Option<u64>,
}

/// The newest successful pipelines of `project` that ran on `push` to the branch `branch`
/// (never a tag's, never a merge request's), newest first; pages are read until `enough`
/// says the pipelines found so far are, or the list ends.
pub async fn push_pipelines(
    client: &Client,
    project: &str,
    branch: &str,
    enough: impl Fn(&[Pipeline]) -> bool,
) -> Result<Vec<Pipeline>, ApiError> {
    let url = client.url(&format!(
        "/projects/{project}/pipelines?ref={}&status=success&source=push&scope=branches&order_by=id&sort=desc&per_page=100",
        query_value(branch)
    ));
    let mut found: Vec<Pipeline> = Vec::new();
    client
        .pages(url, MAX_PIPELINE_PAGES, |page: Vec<Pipeline>| {
            found.extend(
                page.into_iter()
                    .filter(|p| {
                        p.branch.as_deref() == Some(branch)
                            && p.status.as_deref().is_none_or(|s| s == "success")
                            && p.source.as_deref().is_none_or(|s| s == "push")
                            && p.tag != Some(true)
                    })
                    .map(|p| redacted(client, p)),
            );
            !enough(&found)
        })
        .await?;
    Ok(found)
}

/// A pipeline whose text, stored in comparison.json and shown in the report, holds no token.
fn redacted(client: &Client, mut p: Pipeline) -> Pipeline {
    let redact = |text: Option<String>| text.map(|t| client.redact(&t));
    p.sha = client.redact(&p.sha);
    p.branch = redact(p.branch);
    p.web_url = redact(p.web_url);
    p.created_at = redact(p.created_at);
    p
}

/// The jobs of pipeline `pipeline` named `name` (its latest attempts, retried ones left
/// out).
pub async fn jobs_named(
    client: &Client,
    project: &str,
    pipeline: u64,
    name: &str,
) -> Result<Vec<Job>, ApiError> {
    let url = client.url(&format!(
        "/projects/{project}/pipelines/{pipeline}/jobs?per_page=100"
    ));
    let mut found = Vec::new();
    client
        .pages(url, MAX_JOB_PAGES, |page: Vec<Job>| {
            found.extend(page.into_iter().filter(|j| j.name == name).map(|mut j| {
                // Quoted in the "expired" note: no token in it.
                j.artifacts_expire_at = j.artifacts_expire_at.map(|t| client.redact(&t));
                // Stored in comparison.json as the base runs' runner.
                if let Some(r) = &mut j.runner {
                    r.description = r.description.take().map(|d| client.redact(&d));
                }
                j
            }));
            true
        })
        .await?;
    Ok(found)
}

/// The API URL of a job's artifacts archive.
pub fn artifacts_url(client: &Client, project: &str, job: u64) -> String {
    client.url(&format!("/projects/{project}/jobs/{job}/artifacts"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usernames_are_gitlabs() {
        for ok in ["nsys-bot", "project_42_bot_0123abcd", "a.b", "A1"] {
            assert!(is_username(ok), "{ok}");
        }
        for bad in ["", "*", "a b", "a*", "ü", "a/b", "@a", &"a".repeat(256)] {
            assert!(!is_username(bad), "{bad}");
        }
    }
}
