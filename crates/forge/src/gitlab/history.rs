//! `--baseline auto` on GitLab: which pipelines hold the target branch's history, and where
//! their job's artifacts are; the downloading and reading is [`nsys_gate_compare::history`]'s.
//!
//! - Which branch: a merge request's target branch (`CI_MERGE_REQUEST_TARGET_BRANCH_NAME`);
//!   on a push, the branch pushed to (`CI_COMMIT_BRANCH`, this pipeline left out).
//! - Which pipelines: the newest `--baseline-runs` successful `push` pipelines of that branch
//!   of the target project (`scope=branches`: never a tag's pipeline, never a merge request's),
//!   from the merge request's base commit (`CI_MERGE_REQUEST_DIFF_BASE_SHA`) on when it has
//!   one, else the newest (said in a note).
//! - In each, the successful job named `--baseline-job` (default: this job's name), and its
//!   artifacts archive (`GET /projects/:id/jobs/:job_id/artifacts`, a redirect to object
//!   storage followed without the token). A job whose artifacts have expired
//!   (`artifacts_expire_at` in the past: GitLab's default keeps them 30 days) or that kept
//!   none is a note.
//! - Calls: one page of pipelines, then per pipeline its jobs and one download (and its
//!   redirect), several pipelines at a time: 2N + 1 API requests for N pipelines.

use std::cell::RefCell;

use super::api::{self, Pipeline};
use super::{GitLab, DIALECT};
use crate::archive;
use crate::http::{ApiError, Client, ClientConfig};
use crate::{BaseRuns, HistoryNote, HistoryRequest};
use nsys_gate_compare::history::{self, Doing, ListedRun, Located, MAX_RUNS};

/// How many newer pipelines are looked through for the base commit's pipeline before the
/// newest are taken instead.
const ANCHOR_WINDOW: usize = 100;

/// Everything `auto` needs before the first request.
struct Plan {
    config: ClientConfig,
    project: String,
    job: String,
    branch: String,
    base_sha: Option<String>,
    this_pipeline: Option<u64>,
}

/// The history `request` asks for.
pub fn load(gitlab: &GitLab, request: &HistoryRequest) -> BaseRuns {
    let mut none = BaseRuns::none(request);
    none.source.artifact = None;
    let found = RefCell::new(none);
    let plan = match plan(gitlab, request) {
        Ok(plan) => plan,
        Err(note) => {
            found.borrow_mut().notes.push(HistoryNote::NoBaseline(note));
            return found.into_inner();
        }
    };
    {
        let mut f = found.borrow_mut();
        f.source.job = Some(plan.job.clone());
        f.source.branch = Some(plan.branch.clone());
    }
    let doing = Doing::default();
    history::run(
        crate::http::runtime(),
        &found,
        &doing,
        fetch(&plan, request, &found, &doing),
    );
    found.into_inner()
}

/// The project, token, job and branch, or the note saying which is missing.
fn plan(gitlab: &GitLab, request: &HistoryRequest) -> Result<Plan, String> {
    let env = &gitlab.env;
    let no = |e: String| format!("no baseline: {e}");
    let (branch, this_pipeline) = match (&env.target_branch, &env.commit_branch) {
        (Some(target), _) => (target.clone(), None),
        (None, Some(pushed)) => (pushed.clone(), env.pipeline_id),
        (None, None) => {
            return Err(format!(
                "no baseline: `auto` compares a merge request with its target branch's history, or a branch pipeline with its branch's, and this pipeline ({}) is neither",
                nsys_gate_core::text::shown(env.pipeline_source.as_deref().unwrap_or("not in GitLab CI"))
            ))
        }
    };
    let job = request
        .job
        .clone()
        .filter(|j| !j.trim().is_empty())
        .or_else(|| env.job_name.clone())
        .ok_or_else(|| {
            "no baseline: which job's artifacts hold the baseline is not known (pass --baseline-job NAME, or run in GitLab CI, where CI_JOB_NAME is set)".to_owned()
        })?;
    let project = gitlab.project(request.repo.as_deref()).map_err(no)?;
    let api = gitlab.api_url(request.api_url.as_deref()).map_err(no)?;
    let token = gitlab
        .token(
            request.token_env.as_deref(),
            "list the pipelines and download their job artifacts",
        )
        .map_err(no)?;
    Ok(Plan {
        config: ClientConfig::for_stage(
            api,
            (token, &DIALECT),
            request.timeout,
            "--baseline-timeout",
        ),
        project,
        job,
        branch,
        base_sha: env.diff_base_sha.clone(),
        this_pipeline,
    })
}

/// A failed request as a note; 401/403 say what the token needs.
fn note_of(what: &str, e: &ApiError) -> String {
    match e {
        ApiError::NoAccess { status: 403, .. }
        | ApiError::Status {
            status: 401 | 403, ..
        } => format!(
            "no baseline: {what}: {e} (the token must be a project access token with the `api` scope, or `read_api`, and at least the Reporter role)"
        ),
        _ => format!("no baseline: {what}: {e}"),
    }
}

async fn fetch(
    plan: &Plan,
    request: &HistoryRequest,
    found: &RefCell<BaseRuns>,
    doing: &Doing,
) -> Result<(), String> {
    let client = Client::new(plan.config.clone()).map_err(|e| format!("no baseline: {e}"))?;
    let wanted = request.runs.clamp(1, MAX_RUNS);
    let base_sha = plan.base_sha.as_deref();
    let others = |found: &[Pipeline]| -> Vec<Pipeline> {
        found
            .iter()
            .filter(|p| Some(p.id) != plan.this_pipeline)
            .cloned()
            .collect()
    };
    // Enough pipelines are listed when `wanted` of them (this one aside) are at or before the
    // base commit's; with no base commit, or when its pipeline is not among the newest
    // `wanted + ANCHOR_WINDOW`, the newest `wanted`.
    let enough = |found: &[Pipeline]| {
        let others = others(found);
        let at_base =
            base_sha.and_then(|sha| others.iter().position(|p| p.sha.eq_ignore_ascii_case(sha)));
        match (base_sha, at_base) {
            (Some(_), Some(at)) => others.len() - at >= wanted,
            (Some(_), None) => others.len() >= wanted + ANCHOR_WINDOW,
            (None, _) => others.len() >= wanted,
        }
    };
    doing.set(format!(
        "listing the push pipelines of branch `{}`",
        plan.branch
    ));
    let listed = api::push_pipelines(&client, &plan.project, &plan.branch, enough)
        .await
        .map_err(|e| {
            note_of(
                &format!("listing the push pipelines of branch `{}`", plan.branch),
                &e,
            )
        })?;
    let (pipelines, note) = history::choose(
        &others(&listed),
        |p| p.sha.as_str(),
        (base_sha, wanted),
        ("pipeline", "the merge request's"),
    );
    found
        .borrow_mut()
        .notes
        .extend(note.map(HistoryNote::Partial));
    if pipelines.is_empty() {
        return Err(format!(
            "no baseline: no successful push pipeline on branch `{}` (the target branch's pipelines must run job `{}` on push and keep its analysis.json files as artifacts)",
            plan.branch, plan.job
        ));
    }
    let runs: Vec<ListedRun> = pipelines
        .iter()
        .map(|p| ListedRun {
            id: p.id,
            commit: p.sha.clone(),
            branch: p.branch.clone(),
            url: p.web_url.clone(),
            created_at: p.created_at.clone(),
            name: format!("pipeline {}", p.id),
        })
        .collect();
    let source = archive::Hosted {
        client: &client,
        locate: JobArtifacts {
            project: &plan.project,
            job: &plan.job,
        },
    };
    history::fetch_runs(&source, (&runs, request.concurrency), found, doing).await;
    Ok(())
}

/// Where a pipeline's job's artifacts are: its jobs listed, the job of the name found.
struct JobArtifacts<'a> {
    project: &'a str,
    job: &'a str,
}

impl archive::Locate for JobArtifacts<'_> {
    async fn locate(&self, client: &Client, run: &ListedRun, doing: &Doing) -> Located {
        let which = run.which();
        let name = self.job;
        doing.set(format!("listing the jobs of {which}"));
        let jobs = match api::jobs_named(client, self.project, run.id, name).await {
            Ok(jobs) => jobs,
            Err(ApiError::OutOfTime(_)) => return Located::Late,
            Err(e) => {
                return Located::Failed(format!(
                    "{which}: listing its jobs: {e}: left out of the history"
                ))
            }
        };
        let Some(job) = jobs
            .iter()
            .filter(|j| j.status.as_deref() == Some("success"))
            .max_by_key(|j| j.id)
        else {
            return Located::Missing {
                id: None,
                note: format!(
                    "{which} has no successful job named `{name}`: left out of the history"
                ),
            };
        };
        let archive = job.artifacts.iter().find(|a| a.file_type == "archive");
        let expired = job
            .artifacts_expire_at
            .as_deref()
            .and_then(history::unix_seconds)
            .is_some_and(|at| at <= now());
        match archive {
            Some(a) if !expired => Located::At {
                id: job.id,
                url: api::artifacts_url(client, self.project, job.id),
                size: a.size,
                // The runner is GitLab's word for the job, never its files'.
                runners: job
                    .runner
                    .as_ref()
                    .and_then(|r| r.description.clone())
                    .filter(|d| !d.trim().is_empty())
                    .into_iter()
                    .collect(),
            },
            _ if expired => Located::Missing {
                id: Some(job.id),
                note: format!(
                    "the artifacts of job `{name}` ({}) of {which} expired at {}: left out of the history (the artifacts' `expire_in` decides how much history there is; GitLab's default is 30 days)",
                    job.id,
                    nsys_gate_core::text::shown(job.artifacts_expire_at.as_deref().unwrap_or("?"))
                ),
            },
            _ => Located::Missing {
                id: Some(job.id),
                note: format!(
                    "job `{name}` ({}) of {which} kept no artifacts: left out of the history (the job must keep its analysis.json files with `artifacts: paths`)",
                    job.id
                ),
            },
        }
    }
}

/// Seconds since 1970, now.
fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}
