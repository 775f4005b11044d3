//! `--baseline auto` on GitHub: the base branch's history, from the artifacts of its newest
//! successful push runs of the profiling workflow, through the REST API.
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
//! - Calls: one page of runs, one page of the branch's commits, one page of the repository's
//!   artifacts of the name (a run whose artifact is not in it asks for its own: newer
//!   artifacts of the name, a fork's included, can fill any number of pages), one download
//!   per run: N + 3 requests for N runs ([`crate::github::artifacts`]).
//! - Each artifact is downloaded with a bound, unpacked safely ([`crate::unpack`]) into a
//!   temporary folder, its analysis.json files read and reduced at once, the folder removed;
//!   the unpacking and the reading ask the deadline and the signal flag between pieces.
//!
//! Everything happens before the stage's deadline (`--baseline-timeout`): the runs fetched by
//! then are used, the others named in a note. Every step that finds nothing (no pull request,
//! no token, no run, an expired artifact, no permission, a failed download) ends in a note for
//! the report, never in an error.

use std::collections::BTreeMap;

use crate::artifact::comparison::WorkflowRunRef;
use crate::compare::RunLevel;
use crate::environment::Environment;
use crate::forge::{BaseRuns, HistoryRequest};
use crate::github::artifacts::{Artifact, WorkflowRun};
use crate::github::{self, PostError, Repo, Token};
use crate::interrupt;
use crate::load;
use crate::say::say;
use crate::unpack::{self, Limits};

/// The most of one artifact downloaded.
const MAX_ZIP_BYTES: u64 = 1 << 30;

/// The most base runs read (`--baseline-runs`).
pub const MAX_RUNS: usize = 100;

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
    let mut found = BaseRuns::none(request);
    let plan = match plan(request, env) {
        Ok(plan) => plan,
        Err(note) => {
            found.notes.push(note);
            return found;
        }
    };
    found.source.workflow = Some(plan.workflow.clone());
    found.source.branch = plan.branch.clone();
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            found
                .notes
                .push(format!("no baseline: cannot start the async runtime: {e}"));
            return found;
        }
    };
    // What is under way, for the words of an interruption.
    let doing = Doing::default();
    let fetched = runtime.block_on(async {
        tokio::select! {
            fetched = fetch(&plan, request, &mut found, &doing) => Some(fetched),
            _ = interrupt::wait() => None,
        }
    });
    // The fetch is over (or was dropped, with its download and its temporary folder):
    // nothing of it is left.
    match fetched {
        Some(Err(note)) if interrupt::received().is_none() => found.notes.push(note),
        _ => {}
    }
    if let Some(signal) = interrupt::received() {
        say!(
            "nsys-gate: stopped by {} while {}{}",
            signal.name(),
            doing.what(),
            if doing.temporary() {
                "; its temporary folder was removed"
            } else {
                ""
            }
        );
        return found;
    }
    found.runs.reverse();
    found.source.analyses = found
        .runs
        .iter()
        .map(|r| r.run.analysis_path.clone())
        .collect();
    found
}

/// The repository, token, workflow and branch, or the note saying which is missing.
fn plan(request: &HistoryRequest, env: &Environment) -> Result<Plan, String> {
    let event = github::event::base_of(env.event_name.as_deref(), env.event_path.as_deref())
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
    let token = match Token::from_env(&request.token_env) {
        Ok(Some(t)) => t,
        Ok(None) => {
            return Err(format!(
                "no baseline: no token in ${}: `auto` reads the base branch's artifacts with a token that has `actions: read`",
                request.token_env
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
fn note_of(what: &str, e: &PostError) -> String {
    match e {
        PostError::NoAccess { status: 403, .. } => format!(
            "no baseline: {what}: {e} (the token may not read Actions: grant the job `permissions: actions: read`)"
        ),
        _ => format!("no baseline: {what}: {e}"),
    }
}

/// What `--baseline auto` is doing, said when a signal stops it.
#[derive(Default)]
struct Doing {
    what: std::cell::RefCell<String>,
    /// Whether a temporary folder (a download, an unpacking) is under way.
    temporary: std::cell::Cell<bool>,
}

impl Doing {
    fn set(&self, what: String, temporary: bool) {
        *self.what.borrow_mut() = what;
        self.temporary.set(temporary);
    }

    fn what(&self) -> String {
        let what = self.what.borrow();
        if what.is_empty() {
            "finding the baseline's workflow runs".to_owned()
        } else {
            what.clone()
        }
    }

    fn temporary(&self) -> bool {
        self.temporary.get()
    }
}

async fn fetch(
    plan: &Plan,
    request: &HistoryRequest,
    found: &mut BaseRuns,
    doing: &Doing,
) -> Result<(), String> {
    let config = github::ClientConfig::for_stage(
        request.api_url.trim().to_owned(),
        plan.token.clone(),
        request.timeout,
        "--baseline-timeout",
    );
    let deadline = config.deadline;
    let client = github::Client::new(config).map_err(|e| format!("no baseline: {e}"))?;
    let (branch, base_sha) = match (&plan.branch, &plan.head_sha) {
        (Some(b), _) => (b.clone(), plan.base_sha.clone()),
        (None, Some(head)) => client
            .open_pull_by_head(&plan.repo, head)
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
    found.source.branch = Some(branch.clone());
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
    doing.set("listing the base runs' artifacts".to_owned(), false);
    let mut artifacts = client
        .artifacts_of_runs(&plan.repo, &request.artifact, &ids)
        .await
        .map_err(|e| note_of("listing the artifacts", &e))?;
    let mut late = Vec::new();
    for run in &runs {
        if !artifacts.contains_key(&run.id) && !deadline.left().is_zero() {
            match own_artifact(&client, plan, &request.artifact, run, doing).await {
                Ok(Some(a)) => {
                    artifacts.insert(run.id, a);
                }
                Ok(None) => {}
                Err(note) => {
                    found.notes.push(note);
                    continue;
                }
            }
        }
        found.source.workflow_runs.push(WorkflowRunRef {
            id: run.id,
            head_sha: run.head_sha.clone(),
            head_branch: run.head_branch.clone(),
            html_url: run.html_url.clone(),
            created_at: run.created_at.clone(),
            artifact_id: artifacts.get(&run.id).map(|a| a.id),
        });
        if deadline.left().is_zero() {
            late.push(run.id);
            continue;
        }
        match fetch_run(&client, plan, run, &artifacts, &request.artifact, doing).await {
            Ok(levels) => found.runs.extend(levels),
            Err(Fetch::Late) => late.push(run.id),
            Err(Fetch::Note(note)) => found.notes.push(note),
            // Its temporary folder is gone with it; the caller says what was stopped.
            Err(Fetch::Interrupted) => return Ok(()),
        }
        doing.set(String::new(), false);
    }
    if !late.is_empty() {
        found.notes.push(format!(
            "{} of {} base runs were not fetched before {} (runs {}): the history has the newer ones only",
            late.len(),
            runs.len(),
            deadline.describe(),
            late.iter().map(u64::to_string).collect::<Vec<_>>().join(", ")
        ));
    }
    Ok(())
}

/// The artifact named `name` of a run that the repository's list did not show (a flood of
/// newer artifacts of the name, a fork's among them, can push it out of any number of pages),
/// from the run's own list; `Err`: a note saying why the run is left out.
async fn own_artifact(
    client: &github::Client,
    plan: &Plan,
    name: &str,
    run: &WorkflowRun,
    doing: &Doing,
) -> Result<Option<Artifact>, String> {
    doing.set(
        format!("listing the artifacts of workflow run {}", run.id),
        false,
    );
    match client.artifact_of_run(&plan.repo, name, run.id).await {
        Ok(found) => Ok(found),
        // The caller finds the deadline passed, and says so with the other late runs.
        Err(PostError::OutOfTime(_)) => Ok(None),
        Err(e) => Err(format!(
            "workflow run {} ({}): listing its artifacts: {e}: left out of the history",
            run.id,
            short(&run.head_sha)
        )),
    }
}

/// The runs to read ([`choose`]), each at a commit of the branch itself. A push of a tag named
/// like the branch gives runs with `event: push` and that `head_branch`, which anyone who may
/// push a tag, but not to a protected branch, could fill with made-up numbers: a run whose
/// commit is not among the branch's newest commits ([`github::Client::on_branch`], one
/// listing within the deadline) is left out and named in a note, and the choice made again
/// without it. When the API cannot answer (an older GitHub Enterprise Server, a token without
/// `contents: read`), the runs are kept and a note says they could not be checked.
async fn chosen_on_branch(
    client: &github::Client,
    plan: &Plan,
    branch: &str,
    listed: Vec<WorkflowRun>,
    (base_sha, wanted): (Option<&str>, usize),
    found: &mut BaseRuns,
    doing: &Doing,
) -> Vec<WorkflowRun> {
    doing.set(
        format!("checking the base runs' commits against branch `{branch}`"),
        false,
    );
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
            found.notes.extend(note);
            found.notes.push(format!(
                "the base runs' commits could not be checked against branch `{branch}` ({e}): they are kept, though a run of a tag named `{branch}` would pass as the branch's (the check lists the branch's commits, which needs `permissions: contents: read`)"
            ));
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
        found.notes.push(format!(
            "left out of the history: workflow {} {} ran on `push` with `head_branch: {branch}`, but {} not among the newest commits of branch `{branch}` (a tag or another ref named like the branch?)",
            if refused.len() == 1 { "run" } else { "runs" },
            crate::text::shorten(&named.join(", "), 400),
            if refused.len() == 1 { "its commit is" } else { "their commits are" },
        ));
    }
    found.notes.extend(note);
    runs
}

/// The runs to read, newest first, from `candidates` (newest first, this run left out): from
/// the run at the base commit on when there is one (else the newest, which the note says); at
/// most `wanted`.
fn choose(
    candidates: &[WorkflowRun],
    base_sha: Option<&str>,
    wanted: usize,
) -> (Vec<WorkflowRun>, Option<String>) {
    let mut from = 0;
    let mut note = None;
    if let Some(sha) = base_sha {
        match candidates
            .iter()
            .position(|r| r.head_sha.eq_ignore_ascii_case(sha))
        {
            Some(at) => from = at,
            None if !candidates.is_empty() => {
                note = Some(format!(
                "no push run at the pull request's base commit {}: the newest runs of the base branch are the history",
                short(sha)
            ));
            }
            None => {}
        }
    }
    let runs = candidates.iter().skip(from).take(wanted).cloned().collect();
    (runs, note)
}

/// Why a run gave no base run.
enum Fetch {
    /// The deadline came first.
    Late,
    /// Anything else, in words.
    Note(String),
    /// A SIGINT/SIGTERM stopped it (its temporary folder removed).
    Interrupted,
}

/// One run's artifact downloaded, unpacked and read; its analyses reduced.
async fn fetch_run(
    client: &github::Client,
    plan: &Plan,
    run: &WorkflowRun,
    artifacts: &BTreeMap<u64, Artifact>,
    name: &str,
    doing: &Doing,
) -> Result<Vec<RunLevel>, Fetch> {
    let which = format!("workflow run {} ({})", run.id, short(&run.head_sha));
    let Some(artifact) = artifacts.get(&run.id) else {
        return Err(Fetch::Note(format!(
            "{which} has no artifact named `{name}`: left out of the history"
        )));
    };
    if artifact.expired {
        return Err(Fetch::Note(format!(
            "the artifact `{name}` of {which} has expired: left out of the history (the artifacts' retention decides how much history there is)"
        )));
    }
    if artifact.size_in_bytes.is_some_and(|n| n > MAX_ZIP_BYTES) {
        return Err(Fetch::Note(format!(
            "the artifact `{name}` of {which} is larger than {} MiB, the most nsys-gate downloads: left out",
            MAX_ZIP_BYTES >> 20
        )));
    }
    let note = |what: &str, e: String| Fetch::Note(format!("{which}: {what}: {e}: left out"));
    let dir = tempfile::Builder::new()
        .prefix("nsys-gate-baseline-")
        .tempdir()
        .map_err(|e| note("cannot make a temporary folder", e.to_string()))?;
    // Dropped on every way out (a note, the deadline, a signal: the download raced against
    // it is dropped with this function's future), and the folder with it.
    doing.set(
        format!("downloading the baseline artifact of {which}"),
        true,
    );
    let zip_path = dir.path().join("artifact.zip");
    let mut zip = std::fs::File::create_new(&zip_path)
        .map_err(|e| note("cannot write the download", e.to_string()))?;
    match client
        .download_artifact(&plan.repo, artifact.id, MAX_ZIP_BYTES, &mut zip)
        .await
    {
        Ok(_) => {}
        Err(PostError::OutOfTime(_)) => return Err(Fetch::Late),
        // Gone, on the zip itself: the artifact's retention ran out. (A 410 on any other
        // request, such as the list of runs, is named by that request, never as this.)
        Err(PostError::Status {
            status: 410,
            message,
            ..
        }) => {
            return Err(Fetch::Note(format!(
                "{which}: the artifact has expired (HTTP 410: {message}): left out of the history (the artifacts' retention decides how much history there is)"
            )))
        }
        Err(e) => return Err(note("downloading its artifact", e.to_string())),
    }
    drop(zip);
    let unpacked = dir.path().join("analyses");
    std::fs::create_dir(&unpacked).map_err(|e| note("unpacking its artifact", e.to_string()))?;
    doing.set(format!("unpacking the baseline artifact of {which}"), true);
    // Synchronous, and outside the requests' timeouts: the unpacking and the reading ask
    // between entries and pieces whether a signal came or the stage's deadline passed.
    let deadline = client.config().deadline;
    let stop = || interrupt::received().is_some() || deadline.left().is_zero();
    let stopped = || {
        if interrupt::received().is_some() {
            Fetch::Interrupted
        } else {
            Fetch::Late
        }
    };
    match unpack::analyses_until(&zip_path, &unpacked, Limits::ARTIFACT, &stop) {
        Ok(_) => {}
        Err(unpack::UnpackError::Interrupted) => return Err(stopped()),
        Err(e) => return Err(note("unpacking its artifact", e.to_string())),
    }
    doing.set(format!("reading the baseline artifact of {which}"), true);
    let mut levels = Vec::new();
    let unread = load::each(&unpacked, &stop, |recorded, path| {
        let mut level = RunLevel::read(recorded, &format!("run {}/{path}", run.id));
        level.workflow_run_id = Some(run.id);
        level.created_at = run.created_at.clone();
        levels.push(level);
    })
    .map_err(|e| note("reading its artifact", e))?;
    if stop() {
        // What was read of it is dropped: a run is in the history whole or not at all.
        return Err(stopped());
    }
    for n in unread {
        say!("nsys-gate: warning: baseline: {which}: {n}");
    }
    Ok(levels)
}

/// A commit as people read it (as the report shows it).
fn short(sha: &str) -> String {
    crate::text::short_sha(sha)
}
