//! `--baseline auto`: the base branch's analysis.json files, from the artifact of a successful
//! run of the profiling workflow on the pull request's base branch (the run at the base commit
//! when there is one, else the newest), through the REST API.
//!
//! Every step that finds nothing (no pull request, no token, no run, no artifact, an expired
//! artifact, no permission, a forge without artifacts) ends in a note for the report, never in
//! an error. The artifact is data: it is downloaded with a bound, unpacked safely
//! ([`crate::unpack`]) into a temporary folder, and only its analysis.json files are read.

use std::time::Duration;

use super::Request;
use crate::artifact::comparison::{ArtifactRef, BaselineKind, BaselineSource, WorkflowRunRef};
use crate::environment::Environment;
use crate::github::artifacts::WorkflowRun;
use crate::github::{self, PostError, Repo, Token};
use crate::load::{self, Loaded};
use crate::unpack::{self, Limits};

/// The most of an artifact downloaded.
const MAX_ZIP_BYTES: u64 = 1 << 30;

/// What `auto` found: the analyses (if any), where they came from, and notes.
pub struct Auto {
    pub loaded: Option<Loaded>,
    pub source: BaselineSource,
    pub notes: Vec<String>,
}

/// Everything `auto` needs before the first request.
struct Plan {
    repo: Repo,
    token: Token,
    workflow: String,
    /// `None`: found from `head_sha` (a fork's `workflow_run`).
    base_ref: Option<String>,
    base_sha: Option<String>,
    head_sha: Option<String>,
}

pub fn load(request: &Request, env: &Environment) -> Auto {
    let mut auto = Auto {
        loaded: None,
        source: BaselineSource {
            kind: BaselineKind::Auto,
            path: None,
            workflow_run: None,
            artifact: None,
            analyses: Vec::new(),
        },
        notes: Vec::new(),
    };
    let plan = match plan(request, env) {
        Ok(plan) => plan,
        Err(note) => {
            auto.notes.push(note);
            return auto;
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            auto.notes
                .push(format!("no baseline: cannot start the async runtime: {e}"));
            return auto;
        }
    };
    if let Err(note) = runtime.block_on(fetch(&plan, request, &mut auto)) {
        auto.notes.push(note);
    }
    auto
}

/// The repository, token, workflow and base branch, or the note saying which is missing.
fn plan(request: &Request, env: &Environment) -> Result<Plan, String> {
    let api = &request.api;
    if env.gitea || api.api_url.trim_end_matches('/').ends_with("/api/v1") {
        return Err(format!(
            "no baseline: the API at {} is Gitea's or Forgejo's, which has no GitHub Actions artifacts endpoint; pass --baseline PATH with the base branch's analysis.json files instead",
            api.api_url
        ));
    }
    let base = github::event::base_of(env.event_name.as_deref(), env.event_path.as_deref())
        .map_err(|e| format!("no baseline: {e}"))?;
    if base.base_ref.is_none() && base.head_sha.is_none() {
        return Err(format!(
            "no baseline: `auto` compares a pull request with its base branch, and this event ({}) names none",
            env.event_name.as_deref().unwrap_or("none")
        ));
    }
    let workflow = request
        .workflow
        .clone()
        .filter(|w| !w.trim().is_empty())
        .or(base.triggering_workflow)
        .or_else(|| env.workflow_file())
        .ok_or_else(|| {
            "no baseline: which workflow's runs hold the baseline is not known (set baseline-workflow, or run where GITHUB_WORKFLOW_REF is set)".to_owned()
        })?;
    let repo = api
        .repo
        .as_deref()
        .map(str::trim)
        .filter(|r| !r.is_empty())
        .ok_or_else(|| "no baseline: no repository (GITHUB_REPOSITORY or --repo)".to_owned())
        .and_then(|r| Repo::parse(r).map_err(|e| format!("no baseline: {e}")))?;
    let token = match Token::from_env(&api.token_env) {
        Ok(Some(t)) => t,
        Ok(None) => {
            return Err(format!(
                "no baseline: no token in ${}: `auto` reads the base branch's artifact with a token that has `actions: read`",
                api.token_env
            ))
        }
        Err(e) => return Err(format!("no baseline: {e}")),
    };
    Ok(Plan {
        repo,
        token,
        workflow,
        base_ref: base.base_ref,
        base_sha: base.base_sha,
        head_sha: base.head_sha,
    })
}

/// A failed request as a note; 403/404 say which permission is missing.
fn note_of(what: &str, e: &PostError) -> String {
    match e {
        PostError::NoAccess { status: 403, .. } => format!(
            "no baseline: {what}: {e} (the token may not read Actions: grant the job `permissions: actions: read`)"
        ),
        PostError::Status { status: 410, .. } => {
            format!("no baseline: {what}: {e} (the artifact has expired)")
        }
        _ => format!("no baseline: {what}: {e}"),
    }
}

async fn fetch(plan: &Plan, request: &Request, auto: &mut Auto) -> Result<(), String> {
    let api = &request.api;
    let config = github::ClientConfig {
        api_url: api.api_url.trim().to_owned(),
        token: plan.token.clone(),
        max_tries: 3,
        budget: api.timeout,
        connect_timeout: (api.timeout / 2).min(Duration::from_secs(10)),
        request_timeout: (api.timeout / 2).min(Duration::from_secs(30)),
    };
    let client = github::Client::new(config).map_err(|e| format!("no baseline: {e}"))?;
    let (base_ref, base_sha) = match (&plan.base_ref, &plan.head_sha) {
        (Some(r), _) => (r.clone(), plan.base_sha.clone()),
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
    let (run, chosen) = choose_run(&client, plan, &base_ref, base_sha.as_deref()).await?;
    auto.source.workflow_run = Some(WorkflowRunRef {
        id: run.id,
        head_sha: run.head_sha.clone(),
        head_branch: run.head_branch.clone(),
        html_url: run.html_url.clone(),
        chosen: chosen.to_owned(),
    });
    let artifacts = client
        .run_artifacts(&plan.repo, run.id, &request.artifact)
        .await
        .map_err(|e| note_of("listing the run's artifacts", &e))?;
    let Some(artifact) = artifacts.iter().find(|a| !a.expired).or(artifacts.first()) else {
        return Err(format!(
            "no baseline: workflow run {} has no artifact named `{}` (does the base branch's workflow upload its analysis.json files under that name?)",
            run.id, request.artifact
        ));
    };
    auto.source.artifact = Some(ArtifactRef {
        id: artifact.id,
        name: artifact.name.clone(),
    });
    if artifact.size_in_bytes.is_some_and(|n| n > MAX_ZIP_BYTES) {
        return Err(format!(
            "no baseline: artifact `{}` of workflow run {} is larger than {} MiB, the most nsys-gate downloads",
            artifact.name,
            run.id,
            MAX_ZIP_BYTES >> 20
        ));
    }
    if artifact.expired {
        return Err(format!(
            "no baseline: artifact `{}` of workflow run {} has expired",
            artifact.name, run.id
        ));
    }
    let dir = tempfile::Builder::new()
        .prefix("nsys-gate-baseline-")
        .tempdir()
        .map_err(|e| format!("no baseline: cannot make a temporary folder: {e}"))?;
    let zip_path = dir.path().join("artifact.zip");
    let mut zip = std::fs::File::create_new(&zip_path)
        .map_err(|e| format!("no baseline: cannot write {}: {e}", zip_path.display()))?;
    client
        .download_artifact(&plan.repo, artifact.id, MAX_ZIP_BYTES, &mut zip)
        .await
        .map_err(|e| note_of("downloading the artifact", &e))?;
    drop(zip);
    let unpacked = dir.path().join("analyses");
    std::fs::create_dir(&unpacked).map_err(|e| format!("no baseline: {e}"))?;
    unpack::analyses(&zip_path, &unpacked, Limits::ARTIFACT)
        .map_err(|e| format!("no baseline: {e}"))?;
    auto.loaded = Some(load::path(&unpacked).map_err(|e| {
        format!(
            "no baseline: artifact `{}` of workflow run {}: {e}",
            artifact.name, run.id
        )
    })?);
    Ok(())
}

/// The run at the base commit, else the newest successful run of the base branch.
async fn choose_run(
    client: &github::Client,
    plan: &Plan,
    base_ref: &str,
    base_sha: Option<&str>,
) -> Result<(WorkflowRun, &'static str), String> {
    let listing =
        |e: PostError| note_of(&format!("listing runs of workflow `{}`", plan.workflow), &e);
    if let Some(sha) = base_sha {
        let at_base = client
            .successful_runs(&plan.repo, &plan.workflow, base_ref, Some(sha))
            .await
            .map_err(listing)?;
        if let Some(run) = at_base.into_iter().next() {
            return Ok((run, "base_commit"));
        }
    }
    let newest = client
        .successful_runs(&plan.repo, &plan.workflow, base_ref, None)
        .await
        .map_err(listing)?;
    newest.into_iter().next().map(|r| (r, "newest")).ok_or_else(|| {
        format!(
            "no baseline: no successful run of workflow `{}` on branch `{base_ref}` (the base branch's workflow must run on push and upload its analysis.json files)",
            plan.workflow
        )
    })
}
