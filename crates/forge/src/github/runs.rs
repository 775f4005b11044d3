//! `--baseline auto` on GitHub: which runs hold the base branch's history, and where their
//! artifacts are; the downloading and reading is [`nsys_gate_compare::history`]'s.
//!
//! - Which branch: a pull request's base branch (for a fork's `workflow_run`, found from the
//!   pull request whose head is the run's commit); on a push, the branch pushed to (this run
//!   itself left out), so that the push run's job summary says where the branch stands.
//! - Which runs: the newest `--baseline-runs` successful runs of the workflow on `push` to
//!   that branch of this repository (never a pull request's run, never a fork's branch of the
//!   same name); when the pull request's base commit has a run, the newest up to and including
//!   it (the code the pull request is compared with), else the newest (said in a note).
//!   Each run's commit must be among the newest commits of the branch itself: a tag named like
//!   the branch gives push runs of that `head_branch` too (left out, and named in a note).
//! - Which runner: the forge's, from the run's jobs (`runner_name`); the artifact does not
//!   name the job that uploaded it, so when the jobs that got a runner all ran on one, that is
//!   every file's runner; when they ran on several, a file's own `provenance.runner` is taken
//!   if it is one of them, else the file's runner is unknown (a file can choose among the
//!   runners the forge names, never name another); a file naming another is a note
//!   ([`nsys_gate_compare::history::forge_runner`]).
//! - Calls: one page of runs, one page of the branch's commits, one page of the repository's
//!   artifacts of the name (a run whose artifact is not in it asks for its own: newer
//!   artifacts of the name, a fork's included, can fill any number of pages), then per run
//!   one page of its jobs and one download: 2N + 3 requests for N runs
//!   ([`super::artifacts`]).
//!
//! Every step that finds nothing (no pull request, no token, no run, an expired artifact, no
//! permission, a failed download) ends in a note for the report, never in an error.

use std::cell::RefCell;
use std::collections::BTreeMap;

use super::artifacts::{Artifact, WorkflowRun};
use super::env::Environment;
use super::repo::Repo;
use crate::archive;
use crate::http::{ApiError, Client, ClientConfig, Token};
use crate::{BaseRuns, HistoryNote, HistoryRequest};
use nsys_gate_compare::history::{self, Doing, ListedRun, Located, MAX_RUNS};
use nsys_gate_core::artifact::comparison::WorkflowRunRef;

/// How many newer runs are looked through for the base commit's run before the newest runs
/// are taken instead.
const ANCHOR_WINDOW: usize = 100;

/// Everything `auto` needs before the first request.
struct Plan {
    repo: Repo,
    token: Token,
    workflow: String,
    /// The branch whose history is read; `None`: found from `head_sha` (a fork's
    /// `workflow_run`).
    branch: Option<String>,
    /// The pull request's base commit.
    base_sha: Option<String>,
    head_sha: Option<String>,
    /// This workflow run (a push's), never its own base.
    this_run: Option<u64>,
}

/// The history `request` asks for.
pub fn load(request: &HistoryRequest, env: &Environment) -> BaseRuns {
    let found = RefCell::new(BaseRuns::none(request));
    let plan = match plan(request, env) {
        Ok(plan) => plan,
        Err(note) => {
            found.borrow_mut().notes.push(HistoryNote::NoBaseline(note));
            return found.into_inner();
        }
    };
    {
        let mut f = found.borrow_mut();
        f.source.workflow = Some(plan.workflow.clone());
        f.source.branch = plan.branch.clone();
    }
    let doing = Doing::default();
    history::run(
        crate::http::runtime(),
        &found,
        &doing,
        fetch(&plan, request, &found, &doing),
    );
    let mut found = found.into_inner();
    // GitHub's own words for the runs read, as before the neutral `ci_runs`.
    found.source.workflow_runs = found
        .source
        .ci_runs
        .iter()
        .map(|r| WorkflowRunRef {
            id: r.id,
            head_sha: r.commit.clone(),
            head_branch: r.branch.clone(),
            html_url: r.url.clone(),
            created_at: r.created_at.clone(),
            artifact_id: r.artifact_id,
        })
        .collect();
    found
}

/// The repository, token, workflow and branch, or the note saying which is missing.
fn plan(request: &HistoryRequest, env: &Environment) -> Result<Plan, String> {
    let event = super::event::base_of(env.event_name.as_deref(), env.event_path.as_deref())
        .map_err(|e| format!("no baseline: {e}"))?;
    let branch = event.base_ref.clone().or(event.pushed_branch.clone());
    if branch.is_none() && event.head_sha.is_none() {
        return Err(format!(
            "no baseline: `auto` compares a pull request with its base branch's history, or a push with its branch's, and this event ({}) is neither",
            env.event_name.as_deref().unwrap_or("none")
        ));
    }
    let workflow = request
        .workflow
        .clone()
        .filter(|w| !w.trim().is_empty())
        .or(event.triggering_workflow)
        .or_else(|| env.workflow_file())
        .ok_or_else(|| {
            "no baseline: which workflow's runs hold the baseline is not known (set baseline-workflow, or run where GITHUB_WORKFLOW_REF is set)".to_owned()
        })?;
    let repo = request
        .repo
        .as_deref()
        .map(str::trim)
        .filter(|r| !r.is_empty())
        .ok_or_else(|| "no baseline: no repository (GITHUB_REPOSITORY or --repo)".to_owned())
        .and_then(|r| Repo::parse(r).map_err(|e| format!("no baseline: {e}")))?;
    let token_env = request.token_env.as_deref().unwrap_or(super::TOKEN_ENV);
    let token = match Token::from_env(token_env) {
        Ok(Some(t)) => t,
        Ok(None) => {
            return Err(format!(
                "no baseline: no token in ${token_env}: `auto` reads the base branch's artifacts with a token that has `actions: read`"
            ))
        }
        Err(e) => return Err(format!("no baseline: {e}")),
    };
    Ok(Plan {
        repo,
        token,
        workflow,
        branch,
        base_sha: event.base_sha,
        head_sha: event.head_sha,
        this_run: event.pushed_branch.and(env.run_id),
    })
}

/// A failed request as a note; 403/404 say which permission is missing.
fn note_of(what: &str, e: &ApiError) -> String {
    match e {
        ApiError::NoAccess { status: 403, .. } => format!(
            "no baseline: {what}: {e} (the token may not read Actions: grant the job `permissions: actions: read`)"
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
    let config = ClientConfig::for_stage(
        request
            .api_url
            .as_deref()
            .map_or(super::DEFAULT_API_URL, str::trim)
            .to_owned(),
        (plan.token.clone(), &super::DIALECT),
        request.timeout,
        "--baseline-timeout",
    );
    let client = Client::new(config).map_err(|e| format!("no baseline: {e}"))?;
    let (branch, base_sha) = match (&plan.branch, &plan.head_sha) {
        (Some(b), _) => (b.clone(), plan.base_sha.clone()),
        (None, Some(head)) => super::api::open_pull_by_head(&client, &plan.repo, head)
            .await
            .map_err(|e| note_of("finding the pull request of the workflow run", &e))?
            .and_then(|p| p.base_ref.map(|b| (b, p.base_sha)))
            .ok_or_else(|| {
                format!(
                    "no baseline: no open pull request has the workflow run's head commit {head}"
                )
            })?,
        (None, None) => unreachable!("`plan` returns no plan without either"),
    };
    found.borrow_mut().source.branch = Some(branch.clone());
    let wanted = request.runs.clamp(1, MAX_RUNS);
    // Enough runs are listed when `wanted` of them (this run aside) are at or before the
    // base commit's run; with no base commit, or when its run is not among the newest
    // `wanted + ANCHOR_WINDOW`, the newest `wanted`.
    let enough = |found: &[WorkflowRun]| {
        let others: Vec<&WorkflowRun> = found
            .iter()
            .filter(|r| Some(r.id) != plan.this_run)
            .collect();
        let at_base = base_sha.as_deref().and_then(|sha| {
            others
                .iter()
                .position(|r| r.head_sha.eq_ignore_ascii_case(sha))
        });
        match (base_sha.as_deref(), at_base) {
            (Some(_), Some(at)) => others.len() - at >= wanted,
            (Some(_), None) => others.len() >= wanted + ANCHOR_WINDOW,
            (None, _) => others.len() >= wanted,
        }
    };
    let listed = client
        .push_runs(&plan.repo, &plan.workflow, &branch, enough)
        .await
        .map_err(|e| {
            note_of(
                &format!("listing the push runs of workflow `{}`", plan.workflow),
                &e,
            )
        })?;
    let choice = (base_sha.as_deref(), wanted);
    let runs = chosen_on_branch(&client, plan, &branch, listed, choice, found, doing).await;
    if runs.is_empty() {
        return Err(format!(
            "no baseline: no successful push run of workflow `{}` on branch `{branch}` (the base branch's workflow must run on push and upload its analysis.json files as `{}`)",
            plan.workflow, request.artifact
        ));
    }
    let ids: Vec<u64> = runs.iter().map(|r| r.id).collect();
    doing.set("listing the base runs' artifacts".to_owned());
    let artifacts = client
        .artifacts_of_runs(&plan.repo, &request.artifact, &ids)
        .await
        .map_err(|e| note_of("listing the artifacts", &e))?;
    let source = archive::Hosted {
        client: &client,
        locate: Artifacts {
            repo: &plan.repo,
            name: &request.artifact,
            listed: artifacts,
        },
    };
    let listed: Vec<ListedRun> = runs
        .iter()
        .map(|r| ListedRun {
            id: r.id,
            commit: r.head_sha.clone(),
            branch: r.head_branch.clone(),
            url: r.html_url.clone(),
            created_at: r.created_at.clone(),
            name: format!("workflow run {}", r.id),
        })
        .collect();
    history::fetch_runs(&source, (&listed, request.concurrency), found, doing).await;
    Ok(())
}

/// Where the base runs' artifacts are: the repository's list read once, and a run missing
/// from it asks for its own.
struct Artifacts<'a> {
    repo: &'a Repo,
    name: &'a str,
    listed: BTreeMap<u64, Artifact>,
}

impl archive::Locate for Artifacts<'_> {
    async fn locate(&self, client: &Client, run: &ListedRun, doing: &Doing) -> Located {
        let name = self.name;
        let which = run.which();
        let artifact = match self.listed.get(&run.id) {
            Some(a) => Some(a.clone()),
            None => match own_artifact(client, self.repo, name, run, doing).await {
                Ok(found) => found,
                Err(note) => return Located::Failed(note),
            },
        };
        let Some(artifact) = artifact else {
            if client.config().deadline.left().is_zero() {
                return Located::Late;
            }
            return Located::Missing {
                id: None,
                note: format!("{which} has no artifact named `{name}`: left out of the history"),
            };
        };
        if artifact.expired {
            return Located::Missing {
                id: Some(artifact.id),
                note: format!(
                    "the artifact `{name}` of {which} has expired: left out of the history (the artifacts' retention decides how much history there is)"
                ),
            };
        }
        // The runner is GitHub's word for the run's jobs, never its files'.
        doing.set(format!("listing the jobs of {which}"));
        let runners = match client.runners_of_run(self.repo, run.id).await {
            Ok(runners) => runners,
            Err(ApiError::OutOfTime(_)) => return Located::Late,
            Err(e) => {
                return Located::Failed(format!(
                "{which}: listing its jobs (the runners it ran on): {e}: left out of the history"
            ))
            }
        };
        Located::At {
            id: artifact.id,
            url: client.url(&format!(
                "/repos/{}/{}/actions/artifacts/{}/zip",
                self.repo.owner, self.repo.name, artifact.id
            )),
            size: artifact.size_in_bytes,
            runners,
        }
    }
}

/// The artifact named `name` of a run that the repository's list did not show (a flood of
/// newer artifacts of the name, a fork's among them, can push it out of any number of pages),
/// from the run's own list; `Err`: a note saying why the run is left out.
async fn own_artifact(
    client: &Client,
    repo: &Repo,
    name: &str,
    run: &ListedRun,
    doing: &Doing,
) -> Result<Option<Artifact>, String> {
    doing.set(format!("listing the artifacts of workflow run {}", run.id));
    match client.artifact_of_run(repo, name, run.id).await {
        Ok(found) => Ok(found),
        // The caller finds the deadline passed, and says so with the other late runs.
        Err(ApiError::OutOfTime(_)) => Ok(None),
        Err(e) => Err(format!(
            "workflow run {} ({}): listing its artifacts: {e}: left out of the history",
            run.id,
            short(&run.commit)
        )),
    }
}

/// The runs to read ([`choose`]), each at a commit of the branch itself. A push of a tag named
/// like the branch gives runs with `event: push` and that `head_branch`, which anyone who may
/// push a tag, but not to a protected branch, could fill with made-up numbers: a run whose
/// commit is not among the branch's newest commits ([`Client::on_branch`], one
/// listing within the deadline) is left out and named in a note, and the choice made again
/// without it. When the API cannot answer (an older GitHub Enterprise Server, a token without
/// `contents: read`), the runs are kept and a note says they could not be checked.
async fn chosen_on_branch(
    client: &Client,
    plan: &Plan,
    branch: &str,
    listed: Vec<WorkflowRun>,
    (base_sha, wanted): (Option<&str>, usize),
    found: &RefCell<BaseRuns>,
    doing: &Doing,
) -> Vec<WorkflowRun> {
    doing.set(format!(
        "checking the base runs' commits against branch `{branch}`"
    ));
    let candidates: Vec<WorkflowRun> = listed
        .into_iter()
        .filter(|r| Some(r.id) != plan.this_run)
        .collect();
    let (runs, note) = choose(&candidates, base_sha, wanted);
    if runs.is_empty() {
        return runs;
    }
    let shas: Vec<&str> = runs.iter().map(|r| r.head_sha.as_str()).collect();
    let on = match client.on_branch(&plan.repo, branch, &shas).await {
        Ok(on) => on,
        Err(e) => {
            let mut found = found.borrow_mut();
            found.notes.extend(note.map(HistoryNote::Partial));
            found.notes.push(HistoryNote::Partial(format!(
                "the base runs' commits could not be checked against branch `{branch}` ({e}): they are kept, though a run of a tag named `{branch}` would pass as the branch's (the check lists the branch's commits, which needs `permissions: contents: read`)"
            )));
            return runs;
        }
    };
    let on_branch = |r: &WorkflowRun| on.found.contains(&r.head_sha.to_ascii_lowercase());
    // Some commit not found: the list was read as far as it is read, so every run whose
    // commit is not in it is left out, and the choice is made again without them.
    let mut refused: Vec<WorkflowRun> = Vec::new();
    let (runs, note) = loop {
        let kept: Vec<WorkflowRun> = candidates
            .iter()
            .filter(|r| !refused.iter().any(|x| x.id == r.id))
            .cloned()
            .collect();
        let (runs, note) = choose(&kept, base_sha, wanted);
        let off: Vec<WorkflowRun> = runs.iter().filter(|r| !on_branch(r)).cloned().collect();
        if off.is_empty() {
            break (runs, note);
        }
        refused.extend(off);
    };
    if !refused.is_empty() {
        let named: Vec<String> = refused
            .iter()
            .map(|r| format!("{} ({})", r.id, short(&r.head_sha)))
            .collect();
        found.borrow_mut().notes.push(HistoryNote::Partial(format!(
            "left out of the history: workflow {} {} ran on `push` with `head_branch: {branch}`, but {} not among the newest commits of branch `{branch}` (a tag or another ref named like the branch?)",
            if refused.len() == 1 { "run" } else { "runs" },
            nsys_gate_core::text::shorten(&named.join(", "), 400),
            if refused.len() == 1 { "its commit is" } else { "their commits are" },
        )));
    }
    found
        .borrow_mut()
        .notes
        .extend(note.map(HistoryNote::Partial));
    runs
}

/// The runs to read ([`history::choose`]): from the base commit's run on, at most `wanted`.
fn choose(
    candidates: &[WorkflowRun],
    base_sha: Option<&str>,
    wanted: usize,
) -> (Vec<WorkflowRun>, Option<String>) {
    history::choose(
        candidates,
        |r| r.head_sha.as_str(),
        (base_sha, wanted),
        ("run", "the pull request's"),
    )
}

/// A commit as people read it (as the report shows it).
fn short(sha: &str) -> String {
    nsys_gate_core::text::short_sha(sha)
}
