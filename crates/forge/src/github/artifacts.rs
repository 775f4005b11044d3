//! The base branch's history (`--baseline auto`): the newest successful push runs of a
//! workflow on a branch, the artifacts of those runs, and an artifact's zip.
//!
//! Few calls: one page of runs (100, newest first), one page of the branch's commits (that each
//! run's commit is on the branch: a tag of the branch's name gives runs of the same
//! `head_branch`), and one page of the repository's artifacts of the name (100, newest first)
//! find the runs and their artifacts, then per run one page of its jobs (the runners it ran
//! on, [`Client::runners_of_run`]) and one download: about 2N + 3 API requests for N runs. The repository's list holds every run's artifacts, a fork's pull requests'
//! too, which can upload any number of that name: a run whose artifact is not in its first
//! pages is asked for its own ([`Client::artifact_of_run`]), one request more.
//!
//! `GET /repos/O/R/actions/artifacts/ID/zip` answers with a redirect to a storage host (the
//! URL is good for a minute). It is followed here, once, with a client that has no token
//! layer at all: the storage host never sees the token, whatever host it is on. The zip is
//! streamed to a file, up to a bound.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::repo::Repo;
use crate::http::{query_value, ApiError, Client};

/// Pages of runs read at most.
const MAX_LIST_PAGES: usize = 10;

/// Pages of the repository's artifacts read at most before each run still without one is
/// asked for its own: the list is newest first, and a flood of newer artifacts of the name
/// (a fork's pull requests upload them too) would hide the base runs' in any number of pages.
const MAX_ARTIFACT_PAGES: usize = 3;

/// Pages of a branch's commits read at most (100 each).
const MAX_COMMIT_PAGES: usize = 10;

/// Pages of a run's jobs read at most (100 each; GitHub allows 256 jobs in a matrix).
const MAX_JOB_PAGES: usize = 10;

/// A workflow run as far as the baseline needs it.
#[derive(Debug, Clone, Deserialize)]
pub struct WorkflowRun {
    pub id: u64,
    pub head_sha: String,
    #[serde(default)]
    pub head_branch: Option<String>,
    #[serde(default)]
    pub html_url: Option<String>,
    #[serde(default)]
    pub event: Option<String>,
    #[serde(default)]
    pub conclusion: Option<String>,
    #[serde(default)]
    pub created_at: Option<String>,
    #[serde(default)]
    pub head_repository: Option<NamedRepo>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct NamedRepo {
    #[serde(default)]
    pub full_name: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Artifact {
    pub id: u64,
    pub name: String,
    #[serde(default)]
    pub expired: bool,
    #[serde(default)]
    pub size_in_bytes: Option<u64>,
    /// The run that uploaded it.
    #[serde(default)]
    pub workflow_run: Option<ArtifactRun>,
}

/// `artifacts[].workflow_run`: the run that uploaded an artifact.
#[derive(Debug, Clone, Deserialize)]
pub struct ArtifactRun {
    pub id: u64,
}

#[derive(Deserialize)]
struct Runs {
    workflow_runs: Vec<WorkflowRun>,
}

#[derive(Deserialize)]
struct Artifacts {
    artifacts: Vec<Artifact>,
}

#[derive(Deserialize)]
struct Commit {
    sha: String,
}

/// A page of a run's jobs: `{"total_count": N, "jobs": [...]}`.
#[derive(Deserialize)]
struct Jobs {
    #[serde(default)]
    total_count: Option<usize>,
    jobs: Vec<Job>,
}

/// A job of a run as far as its runner goes: `runner_name` is `null` for a job that never got
/// one (skipped, queued).
#[derive(Deserialize)]
struct Job {
    #[serde(default)]
    runner_name: Option<String>,
}

/// Which of the runs' commits are on the branch, as [`Client::on_branch`] found them.
#[derive(Debug, Default)]
pub struct OnBranch {
    /// The branch's commits read, lower-case: every one asked about that is on the branch.
    pub found: std::collections::BTreeSet<String>,
    /// Whether the list was read to its end, or as far as it is read (it stops early once
    /// every commit asked about is found): any commit not found is then not on the branch, as
    /// far as nsys-gate looks.
    pub complete: bool,
}

impl Client {
    /// The newest successful runs of `workflow` (a file name or an ID) that ran on `push` to
    /// `branch` of `repo` itself, newest first: a pull request's run (whose branch may have
    /// the base branch's name, in a fork) or another repository's is never one of them. Pages
    /// are read until `enough` says the runs found so far are, or the list ends.
    pub async fn push_runs(
        &self,
        repo: &Repo,
        workflow: &str,
        branch: &str,
        enough: impl Fn(&[WorkflowRun]) -> bool,
    ) -> Result<Vec<WorkflowRun>, ApiError> {
        let url = self.url(&format!(
            "/repos/{}/{}/actions/workflows/{}/runs?branch={}&event=push&status=success&per_page=100",
            repo.owner,
            repo.name,
            query_value(workflow),
            query_value(branch)
        ));
        let full_name = repo.to_string();
        let mut found = Vec::new();
        self.pages(url, MAX_LIST_PAGES, |page: Runs| {
            let runs = page.workflow_runs.into_iter().map(|r| self.redacted_run(r));
            found.extend(runs.filter(|r| {
                r.event.as_deref() == Some("push")
                    && r.conclusion.as_deref().is_none_or(|c| c == "success")
                    && r.head_branch.as_deref() == Some(branch)
                    && r.head_repository
                        .as_ref()
                        .and_then(|h| h.full_name.as_deref())
                        .is_none_or(|n| n.eq_ignore_ascii_case(&full_name))
            }));
            !enough(&found)
        })
        .await?;
        Ok(found)
    }

    /// A run whose text, stored in comparison.json and shown in the report (its URL, its
    /// time, its commit and branch), holds no token: a server or proxy may echo it anywhere.
    fn redacted_run(&self, mut run: WorkflowRun) -> WorkflowRun {
        let redact = |text: Option<String>| text.map(|t| self.redact(&t));
        run.head_sha = self.redact(&run.head_sha);
        run.head_branch = redact(run.head_branch);
        run.html_url = redact(run.html_url);
        run.created_at = redact(run.created_at);
        run
    }

    /// The repository's artifacts named `name` uploaded by the runs `run_ids`, by run: the
    /// unexpired one when a run has several. Pages of artifacts (newest first) are read
    /// until every run has one or the list ends.
    pub async fn artifacts_of_runs(
        &self,
        repo: &Repo,
        name: &str,
        run_ids: &[u64],
    ) -> Result<BTreeMap<u64, Artifact>, ApiError> {
        let url = self.url(&format!(
            "/repos/{}/{}/actions/artifacts?name={}&per_page=100",
            repo.owner,
            repo.name,
            query_value(name)
        ));
        let mut by_run: BTreeMap<u64, Artifact> = BTreeMap::new();
        self.pages(url, MAX_ARTIFACT_PAGES, |page: Artifacts| {
            for a in page.artifacts.into_iter().filter(|a| a.name == name) {
                let Some(run) = a.workflow_run.as_ref().map(|r| r.id) else {
                    continue;
                };
                if !run_ids.contains(&run) {
                    continue;
                }
                let better = by_run
                    .get(&run)
                    .is_none_or(|kept| kept.expired && !a.expired);
                if better {
                    by_run.insert(run, a);
                }
            }
            run_ids.iter().any(|id| !by_run.contains_key(id))
        })
        .await?;
        Ok(by_run)
    }

    /// The artifact named `name` of the run `run_id`, from the run's own list (the unexpired one
    /// when it has several): for a run whose artifact the repository's list did not show.
    pub async fn artifact_of_run(
        &self,
        repo: &Repo,
        name: &str,
        run_id: u64,
    ) -> Result<Option<Artifact>, ApiError> {
        let url = self.url(&format!(
            "/repos/{}/{}/actions/runs/{run_id}/artifacts?name={}&per_page=100",
            repo.owner,
            repo.name,
            query_value(name)
        ));
        let mut kept: Option<Artifact> = None;
        self.pages(url, MAX_ARTIFACT_PAGES, |page: Artifacts| {
            for a in page.artifacts.into_iter().filter(|a| a.name == name) {
                // Listed for this run; one that says it is another run's is not this run's.
                if a.workflow_run.as_ref().is_some_and(|r| r.id != run_id) {
                    continue;
                }
                if kept.as_ref().is_none_or(|k| k.expired && !a.expired) {
                    kept = Some(a);
                }
            }
            kept.as_ref().is_none_or(|k| k.expired)
        })
        .await?;
        Ok(kept)
    }

    /// The runners the jobs of run `run_id` ran on (`runner_name`, every attempt's jobs:
    /// `filter=all`), each once, in the order listed, redacted (stored in comparison.json);
    /// a job without a runner (skipped, never started) names none. The artifact does not say
    /// which job uploaded it: these are the runners it may come from. One request per 100
    /// jobs, the pages followed by `link` until `total_count` jobs are read.
    pub async fn runners_of_run(&self, repo: &Repo, run_id: u64) -> Result<Vec<String>, ApiError> {
        let url = self.url(&format!(
            "/repos/{}/{}/actions/runs/{run_id}/jobs?filter=all&per_page=100",
            repo.owner, repo.name
        ));
        let mut runners: Vec<String> = Vec::new();
        let mut read = 0usize;
        self.pages(url, MAX_JOB_PAGES, |page: Jobs| {
            read += page.jobs.len();
            for name in page.jobs.into_iter().filter_map(|j| j.runner_name) {
                let name = self.redact(&name);
                if !name.trim().is_empty() && !runners.contains(&name) {
                    runners.push(name);
                }
            }
            page.total_count.is_none_or(|total| read < total)
        })
        .await?;
        Ok(runners)
    }

    /// Which of `shas` are commits of the branch `branch` itself (`refs/heads/BRANCH`: never a
    /// tag of the same name), from its newest commits: pages are read until every one is
    /// found, the list ends, or [`MAX_COMMIT_PAGES`] were read.
    pub async fn on_branch(
        &self,
        repo: &Repo,
        branch: &str,
        shas: &[&str],
    ) -> Result<OnBranch, ApiError> {
        let url = self.url(&format!(
            "/repos/{}/{}/commits?sha=refs/heads/{}&per_page=100",
            repo.owner,
            repo.name,
            query_value(branch)
        ));
        let wanted: std::collections::BTreeSet<String> =
            shas.iter().map(|s| s.to_ascii_lowercase()).collect();
        let mut on = OnBranch::default();
        let all_found = |found: &std::collections::BTreeSet<String>| wanted.is_subset(found);
        self.pages(url, MAX_COMMIT_PAGES, |page: Vec<Commit>| {
            on.found
                .extend(page.into_iter().map(|c| c.sha.to_ascii_lowercase()));
            !all_found(&on.found)
        })
        .await?;
        // The pages stop early only when every one was found; otherwise the list was read as
        // far as it is read.
        on.complete = !all_found(&on.found);
        Ok(on)
    }
}
