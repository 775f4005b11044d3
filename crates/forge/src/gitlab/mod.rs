//! GitLab as the forge (gitlab.com and self-managed GitLab, REST API v4), in GitLab CI:
//! detected from `GITLAB_CI=true` (or an API URL ending in `/api/v4`), its predefined
//! variables read here ([`Env`]); one note per profile on the merge request, found by its
//! marker and by the token's own user (`GET /user`) and updated in place ([`api::Notes`]);
//! the target branch's history from its push pipelines' job artifacts ([`history`]); the
//! findings in the job log (the merge request widget shows the gate through `--junit`).
//!
//! The token is `GITLAB_TOKEN` (a project access token with the `api` scope), sent as
//! `PRIVATE-TOKEN` to the API's own host only and redacted like GitHub's; `CI_JOB_TOKEN`
//! cannot write notes, which the messages say when only it is there.

pub mod api;
pub mod dialect;
pub mod history;

use super::http::{ApiError, Client, ClientConfig, Token};
use super::{
    Annotation, BaseRuns, CiFacts, CommentBody, CommentKey, CommentSettings, Forge, HistoryRequest,
    Level, Links, Posted, StepResults, Vars,
};
use crate::comment::Matcher;
use crate::upsert::{self, Upserted};
use nsys_gate_core::artifact::CiRun;
use nsys_gate_core::say::say;

/// The variable holding the token by default.
pub const TOKEN_ENV: &str = "GITLAB_TOKEN";

/// A note's limit: 1,000,000 characters.
pub const COMMENT_CHARS: usize = 1_000_000;

pub use dialect::DIALECT;

/// What to do when the token may not write notes.
pub const ACCESS_HINT: &str = "the token cannot write notes on this merge request. Give GITLAB_TOKEN a project access token of the target project with the `api` scope and at least the Reporter role (Settings > Access tokens), stored as a masked CI/CD variable. A merge request from a fork runs its pipeline in the fork's project, without the target project's CI/CD variables: a member of the target project can run the merge request's pipeline in the target project instead (the merge request's Pipelines tab, Run pipeline) once they have read the fork's changes, or the fork's job runs with --no-post and its report stays in its job log and artifacts.";

/// Whether this run is GitLab's: `GITLAB_CI=true`, or an API URL of GitLab's shape.
pub fn detected(vars: &Vars, api_url: Option<&str>) -> bool {
    vars.is_true("GITLAB_CI") || api_url.is_some_and(|u| u.ends_with("/api/v4"))
}

/// GitLab CI's predefined variables, as nsys-gate reads them.
#[derive(Debug, Clone, Default)]
pub struct Env {
    pub in_ci: bool,
    /// `CI_API_V4_URL`.
    pub api_url: Option<String>,
    /// `CI_PROJECT_ID`: the pipeline's project.
    pub project_id: Option<String>,
    /// `CI_MERGE_REQUEST_PROJECT_ID`: the merge request's (target) project.
    pub mr_project_id: Option<String>,
    /// `CI_MERGE_REQUEST_IID`.
    pub mr_iid: Option<u64>,
    /// `CI_PIPELINE_SOURCE`: `push`, `merge_request_event`, `schedule`, …
    pub pipeline_source: Option<String>,
    /// `CI_PIPELINE_ID`: this pipeline (never a base run of its own comparison).
    pub pipeline_id: Option<u64>,
    /// `CI_COMMIT_BRANCH` (a branch pipeline's).
    pub commit_branch: Option<String>,
    /// `CI_MERGE_REQUEST_TARGET_BRANCH_NAME`, `CI_MERGE_REQUEST_DIFF_BASE_SHA`.
    pub target_branch: Option<String>,
    pub diff_base_sha: Option<String>,
    /// `CI_JOB_NAME`, `CI_JOB_URL`.
    pub job_name: Option<String>,
    pub job_url: Option<String>,
    /// `CI_PROJECT_URL`, `CI_MERGE_REQUEST_PROJECT_URL`: where commits and the merge request
    /// are.
    pub project_url: Option<String>,
    pub mr_project_url: Option<String>,
    /// `CI_RUNNER_DESCRIPTION`.
    pub runner: Option<String>,
    /// Whether `CI_JOB_TOKEN` is set (it cannot write notes).
    pub job_token: bool,
}

impl Env {
    pub fn from_vars(vars: &Vars) -> Self {
        let text = |name: &str| vars.text(name);
        let number = |name: &str| text(name).and_then(|v| v.parse().ok());
        // Values that go into links: an http(s) URL of plain characters only.
        let url = |name: &str| text(name).filter(|u| plain_url(u));
        Env {
            in_ci: vars.is_true("GITLAB_CI"),
            api_url: url("CI_API_V4_URL"),
            project_id: text("CI_PROJECT_ID"),
            mr_project_id: text("CI_MERGE_REQUEST_PROJECT_ID"),
            mr_iid: number("CI_MERGE_REQUEST_IID").filter(|&n| n > 0),
            pipeline_source: text("CI_PIPELINE_SOURCE"),
            pipeline_id: number("CI_PIPELINE_ID"),
            commit_branch: text("CI_COMMIT_BRANCH"),
            target_branch: text("CI_MERGE_REQUEST_TARGET_BRANCH_NAME"),
            diff_base_sha: text("CI_MERGE_REQUEST_DIFF_BASE_SHA")
                .filter(|s| s.chars().all(|c| c.is_ascii_hexdigit())),
            job_name: text("CI_JOB_NAME"),
            job_url: url("CI_JOB_URL"),
            project_url: url("CI_PROJECT_URL"),
            mr_project_url: url("CI_MERGE_REQUEST_PROJECT_URL"),
            runner: text("CI_RUNNER_DESCRIPTION"),
            job_token: vars.text("CI_JOB_TOKEN").is_some(),
        }
    }

    /// The project of the merge request (the target project), else the pipeline's.
    fn project(&self) -> Option<&str> {
        self.mr_project_id.as_deref().or(self.project_id.as_deref())
    }
}

/// An `http(s)` URL made of plain characters, fit for a link.
fn plain_url(url: &str) -> bool {
    (url.starts_with("https://") || url.starts_with("http://"))
        && url
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, ':' | '/' | '.' | '-' | '_' | '~'))
}

/// A project as it goes into a path: its numeric ID, or its full path (`group/sub/name`)
/// URL-encoded; `None` when it is neither.
fn project_path(project: &str) -> Option<String> {
    let project = project.trim().trim_matches('/');
    if project.is_empty()
        || project
            .split('/')
            .any(|p| p.is_empty() || p == "." || p == "..")
    {
        return None;
    }
    project
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | '.' | '-' | '_'))
        .then(|| project.replace('/', "%2F"))
}

/// GitLab, as this job's variables describe it.
pub struct GitLab {
    env: Env,
}

impl GitLab {
    pub fn new(vars: &Vars) -> Self {
        GitLab {
            env: Env::from_vars(vars),
        }
    }

    /// The API's base: `--api-url`, else `CI_API_V4_URL`.
    fn api_url(&self, given: Option<&str>) -> Result<String, String> {
        given
            .map(str::trim)
            .filter(|u| !u.is_empty())
            .map(str::to_owned)
            .or_else(|| self.env.api_url.clone())
            .ok_or_else(|| "no API URL: pass --api-url https://HOST/api/v4 or run in GitLab CI, where CI_API_V4_URL is set".to_owned())
    }

    /// The project: `--repo` (an ID or a full path), else the merge request's, else the
    /// pipeline's.
    fn project(&self, given: Option<&str>) -> Result<String, String> {
        let project = given
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .or(self.env.project())
            .ok_or("no project: pass --repo ID or GROUP/NAME, or run in GitLab CI, where CI_PROJECT_ID is set")?;
        project_path(project).ok_or_else(|| {
            format!(
                "`{}` is not a GitLab project (a numeric ID, or a path GROUP/NAME of letters, digits, `.`, `-` and `_`)",
                project.escape_debug()
            )
        })
    }

    /// The token in `$token_env` (default `GITLAB_TOKEN`), or why there is none.
    fn token(&self, token_env: Option<&str>, what: &str) -> Result<Token, String> {
        let name = token_env.unwrap_or(TOKEN_ENV);
        match Token::from_env(name) {
            Ok(Some(t)) => Ok(t),
            Ok(None) if self.env.job_token => Err(format!(
                "no token in ${name}: CI_JOB_TOKEN is set, but a job token cannot {what}; create a project access token with the `api` scope (Settings > Access tokens, at least the Reporter role) and store it as a masked CI/CD variable {name}"
            )),
            Ok(None) => Err(format!(
                "no token in ${name}: {what} needs a project access token with the `api` scope (Settings > Access tokens, at least the Reporter role), stored as a masked CI/CD variable {name}"
            )),
            Err(e) => Err(e.to_string()),
        }
    }

    /// The merge request to note: `--pr`, else the merge request pipeline's.
    fn merge_request(&self, given: Option<u64>) -> Option<u64> {
        given.or(self.env.mr_iid)
    }

    /// The note's page: the merge request's page and the note's anchor.
    fn note_url(&self, iid: u64, id: u64) -> Option<String> {
        let project = self
            .env
            .mr_project_url
            .as_deref()
            .or(self.env.project_url.as_deref())?;
        Some(format!("{project}/-/merge_requests/{iid}#note_{id}"))
    }
}

impl Forge for GitLab {
    fn ci(&self) -> CiFacts {
        if !self.env.in_ci {
            return CiFacts::default();
        }
        CiFacts {
            run: self.env.pipeline_id.map(|id| CiRun { id, attempt: None }),
            runner: self.env.runner.clone(),
        }
    }

    fn links(&self) -> Links {
        Links {
            run: self
                .env
                .job_url
                .clone()
                .map(|url| ("the job".to_owned(), url)),
            commit_prefix: self
                .env
                .project_url
                .as_ref()
                .map(|p| format!("{p}/-/commit/")),
        }
    }

    fn words(&self) -> crate::CiWords {
        crate::words::GITLAB
    }

    fn comment_limit(&self) -> usize {
        COMMENT_CHARS
    }

    fn access_hint(&self) -> &'static str {
        ACCESS_HINT
    }

    fn post_comment(
        &self,
        settings: &CommentSettings,
        key: &CommentKey,
        body: CommentBody<'_>,
    ) -> Posted {
        let Some(iid) = self.merge_request(settings.pr) else {
            say!(
                "nsys-gate: no merge request to comment on (pipeline source: {}); the report was not posted (pass --pr N to post anyway)",
                nsys_gate_core::text::shown(self.env.pipeline_source.as_deref().unwrap_or("none"))
            );
            return Posted::Skipped;
        };
        let config = self
            .api_url(settings.api_url.as_deref())
            .and_then(|api| {
                let project = self.project(settings.repo.as_deref())?;
                let token =
                    self.token(settings.token_env.as_deref(), "write merge request notes")?;
                Ok((api, project, token))
            })
            .map(|(api, project, token)| {
                let config = ClientConfig::for_stage(
                    api,
                    (token, &DIALECT),
                    settings.timeout,
                    "--post-timeout",
                );
                (config, project)
            });
        let (config, project) = match config {
            Ok(c) => c,
            Err(e) => return Posted::Failed(ApiError::Config(e)),
        };
        let runtime = match super::http::runtime() {
            Ok(r) => r,
            Err(e) => return Posted::Failed(ApiError::Config(e)),
        };
        let result = runtime.block_on(async {
            let client = Client::new(config)?;
            let author = match settings.author.clone() {
                Some(a) => a,
                None => api::current_user(&client).await?,
            };
            let matcher = Matcher {
                key: key.as_str().to_owned(),
                author,
            };
            let notes = api::Notes {
                client: &client,
                project: &project,
                iid,
            };
            upsert::upsert(&notes, &matcher, body).await
        });
        match result {
            Ok(outcome) => {
                let url = outcome
                    .url()
                    .map(str::to_owned)
                    .or_else(|| self.note_url(iid, id_of(&outcome)));
                say!(
                    "nsys-gate: note `{key}` on merge request !{iid} {}: {}",
                    outcome.verb(),
                    url.as_deref().unwrap_or("(no URL)")
                );
                Posted::Done
            }
            Err(e) => Posted::Failed(e),
        }
    }

    fn history(&self, request: &HistoryRequest) -> BaseRuns {
        history::load(self, request)
    }

    /// The job log: what GitHub's annotations say, one line each (there is no job summary
    /// and no outputs file; the merge request widget shows the gate through `--junit`).
    fn publish_step(&self, step: &StepResults<'_>) -> anyhow::Result<()> {
        if !self.env.in_ci {
            return Ok(());
        }
        for Annotation {
            level,
            title,
            message,
        } in &step.annotations
        {
            let level = match level {
                Level::Error => "ERROR",
                Level::Warning => "WARNING",
            };
            say!("{level} {title}: {}", nsys_gate_core::text::shown(message));
        }
        Ok(())
    }
}

/// The note's id.
fn id_of(outcome: &Upserted) -> u64 {
    match outcome {
        Upserted::Created { id, .. }
        | Upserted::Updated { id, .. }
        | Upserted::Unchanged { id, .. } => *id,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn projects_are_ids_or_encoded_paths() {
        assert_eq!(project_path("42").as_deref(), Some("42"));
        assert_eq!(
            project_path("group/sub/gpu.rs").as_deref(),
            Some("group%2Fsub%2Fgpu.rs")
        );
        for bad in ["", "a//b", "a/../b", "a b", "a?x=1", "a%2Fb"] {
            assert_eq!(project_path(bad), None, "{bad}");
        }
    }

    #[test]
    fn gitlabs_variables_are_read_and_links_are_plain() {
        let vars = Vars::from_pairs(&[
            ("GITLAB_CI", "true"),
            ("CI_PIPELINE_ID", "77"),
            ("CI_RUNNER_DESCRIPTION", "gpu-runner-1"),
            ("CI_PROJECT_URL", "https://gitlab.example/g/gpu"),
            ("CI_JOB_URL", "javascript:alert(1)"),
            ("CI_MERGE_REQUEST_IID", "5"),
        ]);
        let g = GitLab::new(&vars);
        assert_eq!(
            g.ci(),
            CiFacts {
                run: Some(CiRun {
                    id: 77,
                    attempt: None
                }),
                runner: Some("gpu-runner-1".into()),
            }
        );
        let links = g.links();
        assert_eq!(links.run, None);
        assert_eq!(
            links.commit_prefix.as_deref(),
            Some("https://gitlab.example/g/gpu/-/commit/")
        );
        assert_eq!(g.merge_request(None), Some(5));
        assert_eq!(
            g.note_url(5, 9).as_deref(),
            Some("https://gitlab.example/g/gpu/-/merge_requests/5#note_9")
        );
        assert!(detected(&Vars::default(), Some("https://h/api/v4")));
        assert!(!detected(&Vars::default(), Some("https://h/api/v3")));
    }
}
