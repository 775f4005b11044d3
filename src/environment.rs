//! The GitHub Actions environment, read once when the command starts, into one value that
//! the commands pass on. Variables that act as options (`NSYS`, `GITHUB_API_URL`,
//! `GITHUB_REPOSITORY`) are declared on the command line instead (clap's `env`), so `--help`
//! shows them.

use std::path::{Path, PathBuf};

use crate::github::{self, EventPr, PostError};

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
    /// `GITHUB_WORKFLOW_REF`: `OWNER/REPO/.github/workflows/FILE@REF`, this run's workflow.
    pub workflow_ref: Option<String>,
    /// `GITEA_ACTIONS=true`: a Gitea (or Forgejo) runner.
    pub gitea: bool,
}

impl Environment {
    /// Reads the process environment.
    pub fn from_process() -> Self {
        Environment::from_lookup(|name| std::env::var_os(name))
    }

    /// Reads the variables through `lookup` (a test passes its own).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<std::ffi::OsString>) -> Self {
        let text = |name: &str| {
            lookup(name)
                .and_then(|v| v.into_string().ok())
                .map(|v| v.trim().to_owned())
                .filter(|v| !v.is_empty())
        };
        let path = |name: &str| lookup(name).filter(|v| !v.is_empty()).map(PathBuf::from);
        Environment {
            in_actions: lookup("GITHUB_ACTIONS").is_some_and(|v| v == "true"),
            event_name: text("GITHUB_EVENT_NAME"),
            event_path: path("GITHUB_EVENT_PATH"),
            step_summary: path("GITHUB_STEP_SUMMARY"),
            output: path("GITHUB_OUTPUT"),
            workflow_ref: text("GITHUB_WORKFLOW_REF"),
            gitea: lookup("GITEA_ACTIONS").is_some_and(|v| v == "true")
                || lookup("FORGEJO_ACTIONS").is_some_and(|v| v == "true"),
        }
    }

    /// The pull request the event is about (reads the event file).
    pub fn pull_request(&self) -> Result<EventPr, PostError> {
        github::event::read(self.event_name.as_deref(), self.event_path.as_deref())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_and_blank_values_are_absent() {
        let env = Environment::from_lookup(|name| match name {
            "GITHUB_ACTIONS" => Some("true".into()),
            "GITHUB_EVENT_NAME" => Some("  ".into()),
            "GITHUB_EVENT_PATH" => Some("".into()),
            "GITHUB_OUTPUT" => Some("/o".into()),
            _ => None,
        });
        assert!(env.in_actions);
        assert_eq!(env.event_name, None);
        assert_eq!(env.event_path, None);
        assert_eq!(env.output_file(), Some(Path::new("/o")));
        let outside =
            Environment::from_lookup(|name| (name == "GITHUB_OUTPUT").then(|| "/o".into()));
        assert_eq!(outside.output_file(), None);
    }
}
