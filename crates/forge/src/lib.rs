//! The forge: the code host and CI system nsys-gate runs on and reports to. Everything that
//! depends on one lives here, and the rest of the crate gets it through [`Forge`], in the
//! crate's own words and as plain data:
//!
//! - where the run is and what it is (its CI run and runner, for analysis.json's
//!   `provenance`: [`Forge::ci`]); the URLs a report links to (the CI run's page, a commit's:
//!   [`Forge::links`]) and the comment's size limit ([`Forge::comment_limit`]), handed to the
//!   renderer as data;
//! - the change request's comment, found by its key's marker ([`nsys_gate_render::marker`]) and
//!   updated in place ([`Forge::post_comment`], the shared [`upsert`] over each forge's calls);
//! - the base branch's history for `--baseline auto` ([`Forge::history`]): each forge lists
//!   its runs, locates their artifacts and downloads them with its client (`archive.rs`), and
//!   [`nsys_gate_compare::history`] runs the loop, unpacks, reads and reduces them for every forge;
//! - what the CI step shows besides the report ([`Forge::publish_step`]): GitHub's job
//!   summary, annotations and step outputs; GitLab's job log.
//!
//! [`detect`] picks the forge of a run from the environment ([`Vars`], read once): [`github`]
//! (github.com and GitHub Enterprise Server, in GitHub Actions), [`gitlab`] (GitLab CI, its
//! merge request notes and its pipelines' job artifacts) or [`gitea`] (Gitea and Forgejo,
//! whose API and runner are GitHub's for comments and step files, without the artifacts the
//! history needs). One HTTP client ([`http`]: transport, retries, deadlines, the
//! token and its redaction) serves them all. Another CI platform is another module here
//! implementing [`Forge`] and reading its own variables, and a line in [`detect`].

mod archive;
pub mod comment;
pub mod gitea;
pub mod github;
pub mod gitlab;
pub mod http;
pub mod upsert;
pub mod words;

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::path::PathBuf;
use std::time::Duration;

pub use http::ApiError;
pub use nsys_gate_compare::history::{BaseRuns, HistoryNote, HistoryRequest};
use nsys_gate_core::artifact::CiRun;
pub use nsys_gate_render::marker::CommentKey;
pub use upsert::CommentBody;
pub use words::CiWords;

/// What a forge does for nsys-gate.
pub trait Forge {
    /// The CI run this command runs in, and its runner, for analysis.json's `provenance`;
    /// nothing outside CI.
    fn ci(&self) -> CiFacts;

    /// What a report links to.
    fn links(&self) -> Links;

    /// How a report names the CI's runs and inputs ([`words`]).
    fn words(&self) -> CiWords;

    /// The most characters a comment may hold.
    fn comment_limit(&self) -> usize;

    /// What to do when the token may not write comments (a fork's change request), for the
    /// words of a failed post.
    fn access_hint(&self) -> &'static str;

    /// Posts `body` as the change request's comment of `key` (the one starting with its
    /// marker, by its author), created or updated in place; says what it did on standard
    /// error. [`Posted::Skipped`] when there is no change request to comment on.
    fn post_comment(
        &self,
        settings: &CommentSettings,
        key: &CommentKey,
        body: CommentBody<'_>,
    ) -> Posted;

    /// `--baseline auto`: the base branch's newest runs, reduced; whatever is missing is a
    /// note, never an error.
    fn history(&self, request: &HistoryRequest) -> BaseRuns;

    /// In a CI step: what it shows besides the report (GitHub: the job summary, the
    /// annotations and the step outputs). Nothing outside one. Every part is attempted; the
    /// first error is returned.
    fn publish_step(&self, step: &StepResults<'_>) -> anyhow::Result<()>;
}

/// The forge of this run: GitLab in GitLab CI (`GITLAB_CI=true`) or when `--api-url` is its
/// API (`…/api/v4`); Gitea or Forgejo when their runner says so, or when the API
/// (`--api-url`, else `GITHUB_API_URL`) is theirs (`…/api/v1`); else GitHub. `api_url` is
/// `--api-url` when the command has it and it was given: each forge's own variables, and
/// only those, tell it and fill its defaults.
pub fn detect(vars: &Vars, api_url: Option<&str>) -> Box<dyn Forge> {
    let api = api_url.map(|u| u.trim().trim_end_matches('/'));
    if gitlab::detected(vars, api) {
        return Box::new(gitlab::GitLab::new(vars));
    }
    let github = github::GitHub::new(vars);
    let github_api = vars.text("GITHUB_API_URL");
    let api = api.or_else(|| {
        github_api
            .as_deref()
            .map(|u| u.trim().trim_end_matches('/'))
    });
    if github.is_gitea() || api.is_some_and(|u| u.ends_with("/api/v1")) {
        Box::new(gitea::Gitea::new(github))
    } else {
        Box::new(github)
    }
}

/// Whether the CI's log reader acts on workflow commands (`::error::`, `##[`), so that
/// everything printed must be made inert: GitHub Actions' runner and those that copy it.
pub fn log_reads_commands(vars: &Vars) -> bool {
    github::in_actions(vars)
}

/// The process's environment, read once when the command starts (a test gives its own);
/// only the forges read it.
#[derive(Debug, Clone, Default)]
pub struct Vars(BTreeMap<OsString, OsString>);

impl Vars {
    /// The process environment.
    pub fn from_process() -> Self {
        Vars(std::env::vars_os().collect())
    }

    /// Given variables.
    pub fn from_pairs<K: AsRef<OsStr>, V: AsRef<OsStr>>(pairs: &[(K, V)]) -> Self {
        Vars(
            pairs
                .iter()
                .map(|(k, v)| (k.as_ref().to_owned(), v.as_ref().to_owned()))
                .collect(),
        )
    }

    /// The raw value.
    pub fn get(&self, name: &str) -> Option<&OsStr> {
        self.0.get(OsStr::new(name)).map(OsString::as_os_str)
    }

    /// The value as text, trimmed; `None` when unset, blank or not UTF-8.
    pub fn text(&self, name: &str) -> Option<String> {
        self.get(name)
            .and_then(OsStr::to_str)
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(str::to_owned)
    }

    /// The value as a path; `None` when unset or empty.
    pub fn path(&self, name: &str) -> Option<PathBuf> {
        self.get(name).filter(|v| !v.is_empty()).map(PathBuf::from)
    }

    /// Whether the value is exactly `true`.
    pub fn is_true(&self, name: &str) -> bool {
        self.get(name).is_some_and(|v| v == "true")
    }
}

/// The CI run this command runs in, as analysis.json's `provenance` records it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CiFacts {
    /// GitHub: `GITHUB_RUN_ID` and `GITHUB_RUN_ATTEMPT`.
    pub run: Option<CiRun>,
    /// The runner's name.
    pub runner: Option<String>,
}

/// What a report links to, as plain data for the renderer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Links {
    /// The CI run's page, where its artifacts are, and how a sentence names it (`the
    /// workflow run`).
    pub run: Option<(String, String)>,
    /// A commit's page is this followed by its full SHA
    /// (`https://github.com/OWNER/REPO/commit/`).
    pub commit_prefix: Option<String>,
}

/// Where and as whom the comment is posted: `--repo`, `--api-url`, `--pr`, `--token-env`,
/// `--comment-author` and `--post-timeout`, as plain data; `None`: the forge's default.
#[derive(Debug, Clone)]
pub struct CommentSettings {
    /// The repository or project (`None` or empty: not given).
    pub repo: Option<String>,
    pub api_url: Option<String>,
    /// The change request (`None`: from the CI's event).
    pub pr: Option<u64>,
    /// The environment variable holding the token.
    pub token_env: Option<String>,
    /// The login of the comment's author to update (`*`: any).
    pub author: Option<String>,
    /// The deadline of posting, every request and wait included.
    pub timeout: Duration,
}

/// What became of a comment.
pub enum Posted {
    Done,
    Skipped,
    Failed(ApiError),
}

/// Whether an annotation fails the job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Error,
    Warning,
}

/// A finding the CI step shows on its own (GitHub: an annotation; GitLab: a line of the job
/// log).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Annotation {
    pub level: Level,
    pub title: String,
    pub message: String,
}

/// What the CI step shows besides the report on standard output.
pub struct StepResults<'a> {
    /// The report for the job summary, rendered within so many bytes.
    pub summary: &'a dyn Fn(usize) -> anyhow::Result<String>,
    /// Gating warnings and failed analyses as errors, the other warnings as warnings.
    pub annotations: Vec<Annotation>,
    /// Step outputs, by name.
    pub outputs: Vec<(&'static str, String)>,
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    /// What names one CI platform: its variables and its API's paths.
    const DIALECT: &[&str] = &[
        "GITHUB_",
        "GITLAB_",
        "CI_",
        "GITEA_",
        "FORGEJO_",
        "/actions/",
        "/merge_requests",
        "/api/v4",
    ];

    /// Files outside `forge/` that may name them: the command line's help text (which names
    /// the variables an option defaults to) and the list of credential names kept out of
    /// analysis.json.
    const ALLOWED: &[&str] = &["cli.rs", "trace_env.rs"];

    /// The lines of code of `text` (numbered from 1, trimmed) that name a CI platform's
    /// variable or API path; comments and a module of tests (which comes last) aside.
    fn dialect_lines(text: &str) -> Vec<(usize, &str)> {
        let mut found = Vec::new();
        let mut lines = text.lines().enumerate().peekable();
        while let Some((n, line)) = lines.next() {
            let code = line.trim_start();
            if code == "#[cfg(test)]"
                && lines
                    .peek()
                    .is_some_and(|(_, next)| next.trim_start().starts_with("mod "))
            {
                break;
            }
            if !code.starts_with("//") && DIALECT.iter().any(|d| code.contains(d)) {
                found.push((n + 1, code));
            }
        }
        found
    }

    #[test]
    fn the_scan_finds_code_not_comments_or_tests() {
        let text = "//! Reads GITHUB_RUN_ID.\nlet a = vars.text(\"CI_JOB_URL\");\n    /// `/api/v4`\nlet url = format!(\"{api}/projects/{id}/merge_requests\");\n#[cfg(test)]\nmod tests {\n    const X: &str = \"GITLAB_CI\";\n}\n";
        let found: Vec<usize> = dialect_lines(text).into_iter().map(|(n, _)| n).collect();
        assert_eq!(found, [2, 4]);
    }

    /// Every CI platform's dialect is in this crate: no code elsewhere in the workspace names a
    /// CI variable or an API path (tests and comments aside), so that another platform touches
    /// this crate and one line of [`super::detect`].
    #[test]
    fn no_ci_dialect_outside_the_forge() {
        let here = Path::new(env!("CARGO_MANIFEST_DIR"));
        let workspace = here.join("../..").canonicalize().unwrap();
        let mut files = vec![workspace.join("src")];
        for krate in std::fs::read_dir(workspace.join("crates")).unwrap() {
            let krate = krate.unwrap().path();
            if !krate.ends_with("forge") {
                files.push(krate.join("src"));
            }
        }
        let mut stray = Vec::new();
        while let Some(path) = files.pop() {
            if path.is_dir() {
                for entry in std::fs::read_dir(&path).unwrap() {
                    files.push(entry.unwrap().path());
                }
                continue;
            }
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            let top = path.parent().is_some_and(|p| p.ends_with("src"));
            let allowed = top && ALLOWED.contains(&name);
            if !name.ends_with(".rs") || name == "tests.rs" || allowed {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            for (n, code) in dialect_lines(&text) {
                stray.push(format!("{}:{n}: {code}", path.display()));
            }
        }
        assert!(
            stray.is_empty(),
            "a CI platform's variables and API paths belong in crates/forge/:\n{}",
            stray.join("\n")
        );
    }
}
