//! The GitHub Actions variables GitHub's forge reads (Gitea's and Forgejo's runners set the
//! same). Variables that act as options (`GITHUB_API_URL`, `GITHUB_REPOSITORY`) are declared
//! on the command line too (clap's `env`), so `--help` shows them, but only this forge reads
//! them ([`Environment::repository`], [`Environment::api_url`]): another forge's job that
//! happens to carry them keeps its own defaults.

use std::path::{Path, PathBuf};

use super::event::EventPr;
use crate::http::ApiError;
use crate::Vars;
use nsys_gate_core::artifact::CiRun;

/// What the runner told this step.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Environment {
    /// `GITHUB_ACTIONS=true`: a step of GitHub Actions (or a runner that says it is one).
    pub in_actions: bool,
    /// `GITHUB_EVENT_NAME`.
    pub event_name: Option<String>,
    /// `GITHUB_EVENT_PATH`: the event's JSON.
    pub event_path: Option<PathBuf>,
    /// `GITHUB_STEP_SUMMARY`.
    pub step_summary: Option<PathBuf>,
    /// `GITHUB_OUTPUT`.
    pub output: Option<PathBuf>,
    /// The workflow run's page, `GITHUB_SERVER_URL/GITHUB_REPOSITORY/actions/runs/GITHUB_RUN_ID`
    /// (in Actions, when all three are set): where a reader finds the job's artifacts.
    pub run_url: Option<String>,
    /// The repository's page, `GITHUB_SERVER_URL/GITHUB_REPOSITORY` (when the run's page is
    /// known), where commits are linked.
    pub repo_url: Option<String>,
    /// `GITHUB_WORKFLOW_REF`: `OWNER/REPO/.github/workflows/FILE@REF`, this run's workflow.
    pub workflow_ref: Option<String>,
    /// `GITHUB_RUN_ID`: this workflow run (never a base run of its own comparison).
    pub run_id: Option<u64>,
    /// `GITHUB_RUN_ATTEMPT`: which attempt of the workflow run this is.
    pub run_attempt: Option<u64>,
    /// `RUNNER_NAME`: the runner machine (in Actions only).
    pub runner_name: Option<String>,
    /// `GITEA_ACTIONS=true`: a Gitea (or Forgejo) runner.
    pub gitea: bool,
    /// `GITHUB_REPOSITORY`: the default of `--repo`.
    pub repository: Option<String>,
    /// `GITHUB_API_URL`: the default of `--api-url`.
    pub api_url: Option<String>,
}

impl Environment {
    /// Reads GitHub's variables.
    pub fn from_vars(vars: &Vars) -> Self {
        let text = |name: &str| vars.text(name);
        let in_actions = super::in_actions(vars);
        let run_url = run_url(&text);
        Environment {
            in_actions,
            event_name: text("GITHUB_EVENT_NAME"),
            event_path: vars.path("GITHUB_EVENT_PATH"),
            step_summary: vars.path("GITHUB_STEP_SUMMARY"),
            output: vars.path("GITHUB_OUTPUT"),
            repo_url: run_url
                .as_deref()
                .and_then(|u| u.split("/actions/runs/").next())
                .map(str::to_owned),
            run_url,
            workflow_ref: text("GITHUB_WORKFLOW_REF"),
            run_id: text("GITHUB_RUN_ID").and_then(|v| v.parse().ok()),
            run_attempt: text("GITHUB_RUN_ATTEMPT").and_then(|v| v.parse().ok()),
            runner_name: text("RUNNER_NAME").filter(|_| in_actions),
            gitea: vars.is_true("GITEA_ACTIONS") || vars.is_true("FORGEJO_ACTIONS"),
            repository: text("GITHUB_REPOSITORY"),
            api_url: text("GITHUB_API_URL"),
        }
    }

    /// The CI run an analysis made now belongs to: in Actions, `GITHUB_RUN_ID` and
    /// `GITHUB_RUN_ATTEMPT`.
    pub fn ci_run(&self) -> Option<CiRun> {
        let id = self.run_id.filter(|_| self.in_actions)?;
        Some(CiRun {
            id,
            attempt: self.run_attempt,
        })
    }

    /// The pull request the event is about (reads the event file).
    pub fn pull_request(&self) -> Result<EventPr, ApiError> {
        super::event::read(self.event_name.as_deref(), self.event_path.as_deref())
    }

    /// The file name of this run's workflow (`profile.yml`), from `GITHUB_WORKFLOW_REF`.
    pub fn workflow_file(&self) -> Option<String> {
        let path = self.workflow_ref.as_deref()?.split('@').next()?;
        path.rsplit('/')
            .next()
            .filter(|f| !f.is_empty())
            .map(str::to_owned)
    }

    /// `$GITHUB_OUTPUT` when running in Actions.
    pub fn output_file(&self) -> Option<&Path> {
        self.output.as_deref().filter(|_| self.in_actions)
    }
}

/// The workflow run's page from the runner's variables; `None` unless each is a plain value
/// (an `http(s)` server, `OWNER/NAME`, a number), so that nothing else reaches a link.
fn run_url(text: &impl Fn(&str) -> Option<String>) -> Option<String> {
    if text("GITHUB_ACTIONS").as_deref() != Some("true") {
        return None;
    }
    let server = text("GITHUB_SERVER_URL")?;
    let repository = text("GITHUB_REPOSITORY")?;
    let id = text("GITHUB_RUN_ID")?;
    let plain_server = (server.starts_with("https://") || server.starts_with("http://"))
        && server
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, ':' | '/' | '.' | '-' | '_'));
    let plain_repository = repository.split('/').count() == 2
        && repository
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | '.' | '-' | '_'));
    let plain_id = id.chars().all(|c| c.is_ascii_digit());
    (plain_server && plain_repository && plain_id).then(|| {
        format!(
            "{}/{repository}/actions/runs/{id}",
            server.trim_end_matches('/')
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_run_url_is_built_from_plain_values_only() {
        let env =
            |vars: &[(&'static str, &'static str)]| Environment::from_vars(&Vars::from_pairs(vars));
        let base = [
            ("GITHUB_ACTIONS", "true"),
            ("GITHUB_SERVER_URL", "https://github.com/"),
            ("GITHUB_REPOSITORY", "octo/gpu"),
            ("GITHUB_RUN_ID", "4242"),
        ];
        assert_eq!(
            env(&base).run_url.as_deref(),
            Some("https://github.com/octo/gpu/actions/runs/4242")
        );
        assert_eq!(
            env(&base).repo_url.as_deref(),
            Some("https://github.com/octo/gpu")
        );
        assert_eq!(env(&base[1..]).run_url, None);
        assert_eq!(
            env(&[
                ("GITHUB_ACTIONS", "true"),
                ("GITHUB_SERVER_URL", "javascript:alert(1)"),
                ("GITHUB_REPOSITORY", "octo/gpu"),
                ("GITHUB_RUN_ID", "4242"),
            ])
            .run_url,
            None
        );
    }

    #[test]
    fn empty_and_blank_values_are_absent() {
        let env = Environment::from_vars(&Vars::from_pairs(&[
            ("GITHUB_ACTIONS", "true"),
            ("GITHUB_EVENT_NAME", "  "),
            ("GITHUB_EVENT_PATH", ""),
            ("GITHUB_OUTPUT", "/o"),
        ]));
        assert!(env.in_actions);
        assert_eq!(env.event_name, None);
        assert_eq!(env.event_path, None);
        assert_eq!(env.output_file(), Some(Path::new("/o")));
        let outside = Environment::from_vars(&Vars::from_pairs(&[("GITHUB_OUTPUT", "/o")]));
        assert_eq!(outside.output_file(), None);
    }
}
