//! The workflows a reader copies (the README's and examples/workflows/): a job that runs on a
//! self-hosted runner for `pull_request` with a write permission or a secret runs only for
//! pull requests from the repository itself, never a fork's code (issue "trust boundary,
//! round 3", item 10: the quick start lacked the guard that profile.yml had).
//!
//! The untrusted half of the fork-safe pair runs a fork's code by design: it is the one
//! exception, with no write permission, no secret, and the warning in its own comments and
//! the README's.

use crate::common::repo;

/// The guard: the pull request's head is this repository.
const GUARD: &str = "github.event.pull_request.head.repo.full_name == github.repository";

/// A job as far as the rule needs it.
#[derive(Debug)]
struct Job {
    name: String,
    self_hosted: bool,
    /// The job's `if:`, folded onto one line.
    condition: String,
    /// The job's own `permissions:` text, if it has one.
    permissions: Option<String>,
    /// The job's whole text.
    text: String,
}

/// Lines of `text` from `start` on that are indented deeper than `indent` (blank lines
/// included), as one string.
fn block(lines: &[&str], start: usize, indent: usize) -> (String, usize) {
    let mut end = start;
    while end < lines.len() {
        let line = lines[end];
        if !line.trim().is_empty() && indent_of(line) <= indent {
            break;
        }
        end += 1;
    }
    (lines[start..end].join("\n"), end)
}

fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// The value of `key:` at `indent` in `lines`, folded onto one line: its inline text and the
/// lines of its block.
fn value_of(lines: &[&str], indent: usize, key: &str) -> Option<String> {
    let at = lines
        .iter()
        .position(|l| indent_of(l) == indent && l.trim_start().starts_with(&format!("{key}:")))?;
    let inline = lines[at].trim_start()[key.len() + 1..].trim().to_owned();
    let (rest, _) = block(lines, at + 1, indent);
    Some(
        format!("{inline} {rest}")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" "),
    )
}

/// The workflow's triggers (top-level `on:`), its top-level permissions and its jobs.
fn parse(text: &str) -> (String, String, Vec<Job>) {
    let lines: Vec<&str> = text.lines().collect();
    let on = value_of(&lines, 0, "on").unwrap_or_default();
    let permissions = value_of(&lines, 0, "permissions").unwrap_or_default();
    let mut jobs = Vec::new();
    if let Some(at) = lines.iter().position(|l| *l == "jobs:") {
        let (body, _) = block(&lines, at + 1, 0);
        let body: Vec<&str> = body.lines().collect();
        let mut i = 0;
        while i < body.len() {
            let line = body[i];
            if indent_of(line) == 2 && line.trim_end().ends_with(':') && !line.trim().is_empty() {
                let (job, end) = block(&body, i + 1, 2);
                let job_lines: Vec<&str> = job.lines().collect();
                let runs_on = value_of(&job_lines, 4, "runs-on").unwrap_or_default();
                jobs.push(Job {
                    name: line.trim().trim_end_matches(':').to_owned(),
                    self_hosted: runs_on.contains("self-hosted"),
                    condition: value_of(&job_lines, 4, "if").unwrap_or_default(),
                    permissions: value_of(&job_lines, 4, "permissions"),
                    text: job,
                });
                i = end;
            } else {
                i += 1;
            }
        }
    }
    (on, permissions, jobs)
}

/// Whether a workflow is triggered by `pull_request` (or `pull_request_target`).
fn on_pull_requests(on: &str) -> bool {
    on.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .any(|w| w == "pull_request" || w == "pull_request_target")
}

fn writes(permissions: &str) -> bool {
    permissions.contains(": write") || permissions.contains("write-all")
}

/// The jobs of `workflow` that break the rule: self-hosted, on pull requests, with a write
/// permission (its own or the workflow's) or a secret, and no guard.
fn unguarded(workflow: &str) -> Vec<String> {
    let (on, top_permissions, jobs) = parse(workflow);
    if !on_pull_requests(&on) {
        return Vec::new();
    }
    jobs.into_iter()
        .filter(|job| job.self_hosted)
        .filter(|job| {
            let permissions = job.permissions.as_deref().unwrap_or(&top_permissions);
            writes(permissions) || job.text.contains("secrets.")
        })
        .filter(|job| !job.condition.contains(GUARD))
        .map(|job| job.name)
        .collect()
}

/// The YAML blocks that are workflows in the README and in docs/*.md (pages a reader copies
/// from as well).
fn readme_workflows() -> Vec<String> {
    let mut pages = vec![repo().join("README.md")];
    let mut docs: Vec<_> = std::fs::read_dir(repo().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    pages.extend(docs);
    let text: String = pages
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    text.split("```yaml\n")
        .skip(1)
        .filter_map(|rest| rest.split_once("\n```").map(|(yaml, _)| yaml.to_owned()))
        .filter(|yaml| yaml.contains("\njobs:"))
        .collect()
}

fn example_workflows() -> Vec<(String, String)> {
    let dir = repo().join("examples/workflows");
    let mut found: Vec<(String, String)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yml" || e == "yaml"))
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read_to_string(&p).unwrap(),
            )
        })
        .collect();
    found.sort();
    found
}

#[test]
fn the_rule_finds_an_unguarded_job_however_the_workflow_is_written() {
    let job = |on: &str, permissions: &str, condition: &str, runs_on: &str| {
        format!("on: {on}\njobs:\n  gate:\n{condition}    runs-on: {runs_on}\n{permissions}    steps:\n      - run: echo\n")
    };
    let write = "    permissions:\n      pull-requests: write\n";
    let guard = format!("    if: {GUARD}\n");
    assert_eq!(
        unguarded(&job("pull_request", write, "", "[self-hosted, gpu]")),
        ["gate"]
    );
    assert_eq!(
        unguarded(&job("[push, pull_request]", write, "", "self-hosted")),
        ["gate"]
    );
    assert_eq!(
        unguarded(&job(
            "\n  pull_request:\n    paths: [src]",
            write,
            "",
            "self-hosted"
        )),
        ["gate"]
    );
    // A secret is as good as a write token to whoever runs code in the job.
    let secret = "    env:\n      KEY: ${{ secrets.KEY }}\n";
    assert_eq!(
        unguarded(&job("pull_request", secret, "", "self-hosted")),
        ["gate"]
    );
    // Guarded, GitHub-hosted, not on pull requests, or read-only: nothing to say.
    assert!(unguarded(&job("pull_request", write, &guard, "self-hosted")).is_empty());
    assert!(unguarded(&job("pull_request", write, "", "ubuntu-latest")).is_empty());
    assert!(unguarded(&job("push", write, "", "self-hosted")).is_empty());
    let read = "    permissions:\n      contents: read\n";
    assert!(unguarded(&job("pull_request", read, "", "self-hosted")).is_empty());
    // A folded `if:` holding the guard among other conditions.
    let folded = format!("    if: >-\n      github.event_name == 'push' ||\n      {GUARD}\n");
    assert!(unguarded(&job("pull_request", write, &folded, "self-hosted")).is_empty());
}

/// Every workflow in the README and examples/workflows/ that runs on `self-hosted` for
/// `pull_request` with a write permission or a secret has the guard.
#[test]
fn no_copied_workflow_runs_a_forks_code_on_a_self_hosted_runner_with_a_write_token() {
    let readme = readme_workflows();
    assert!(!readme.is_empty(), "no workflow found in the README");
    for (i, workflow) in readme.iter().enumerate() {
        assert_eq!(
            unguarded(workflow),
            Vec::<String>::new(),
            "the README's workflow #{} runs a fork's pull request on a self-hosted runner with a write token or a secret, without `if: {GUARD}`:\n{workflow}",
            i + 1
        );
    }
    let examples = example_workflows();
    assert!(examples.len() >= 4, "{examples:?}");
    for (name, workflow) in &examples {
        assert_eq!(
            unguarded(workflow),
            Vec::<String>::new(),
            "examples/workflows/{name}: a self-hosted job on pull requests with a write token or a secret and no `if: {GUARD}`"
        );
    }
}

/// The exception: a self-hosted job on pull requests without the guard (it runs a fork's code
/// by design) has no write permission and no secret, says so in its file, and the README
/// warns about it.
#[test]
fn the_untrusted_half_is_the_documented_exception() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let mut exceptions = Vec::new();
    for (name, workflow) in example_workflows() {
        let (on, top, jobs) = parse(&workflow);
        if !on_pull_requests(&on) {
            continue;
        }
        for job in jobs
            .iter()
            .filter(|j| j.self_hosted && !j.condition.contains(GUARD))
        {
            let permissions = job.permissions.as_deref().unwrap_or(&top);
            assert!(
                !writes(permissions) && !job.text.contains("secrets."),
                "{name}: {}",
                job.name
            );
            assert!(
                workflow.contains("runs a fork's code on a self-hosted"),
                "{name} does not warn that it runs a fork's code"
            );
            exceptions.push(name.clone());
        }
    }
    assert_eq!(exceptions, ["profile-untrusted.yml"]);
    let forks = std::fs::read_to_string(repo().join("docs/forks.md")).unwrap();
    assert!(forks.contains("\n## Self-hosted runners and forks\n"));
    assert!(
        forks.contains(
            "`profile-untrusted.yml` runs a fork's pull request on a self-hosted GPU runner"
        ),
        "docs/forks.md's warning"
    );
    assert!(
        readme.contains("](docs/forks.md)") && readme.contains("\"Self-hosted runners and forks\""),
        "the README points to it"
    );
}

/// Issue 30, item 8: the README's quick start checked out without `persist-credentials: false`,
/// which `profile.yml` has: the token would stay in `.git/config` for the harness (and the
/// profiled program) to read. Every checkout in a copied workflow leaves it out.
#[test]
fn no_copied_workflow_leaves_the_token_in_the_checkout() {
    let mut workflows: Vec<(String, String)> = readme_workflows()
        .into_iter()
        .enumerate()
        .map(|(i, w)| (format!("README.md workflow {}", i + 1), w))
        .collect();
    workflows.extend(example_workflows());
    let mut checkouts = 0;
    for (name, text) in &workflows {
        let lines: Vec<&str> = text.lines().collect();
        for (at, line) in lines.iter().enumerate() {
            if !line
                .trim_start()
                .trim_start_matches("- ")
                .starts_with("uses: actions/checkout@")
            {
                continue;
            }
            checkouts += 1;
            let (step, _) = block(&lines, at + 1, indent_of(line));
            assert!(
                step.contains("persist-credentials: false"),
                "{name}: a checkout without `persist-credentials: false`:\n{line}\n{step}"
            );
        }
    }
    assert!(checkouts >= 4, "only {checkouts} checkouts found");
}

/// Issue 30, item 8: when the fork's run uploaded nothing, `post-comment.yml` failed at
/// `download-artifact`. The download may fail without failing the job, and every step after
/// it runs only when it found the artifact.
#[test]
fn the_posting_half_tolerates_a_run_that_uploaded_nothing() {
    let text = std::fs::read_to_string(repo().join("examples/workflows/post-comment.yml")).unwrap();
    let steps: Vec<&str> = text.split("\n      - ").skip(1).collect();
    let download = steps
        .iter()
        .position(|s| s.contains("actions/download-artifact@"))
        .expect("a download step");
    assert!(
        steps[download].contains("id: download"),
        "{}",
        steps[download]
    );
    assert!(
        steps[download].contains("continue-on-error: true"),
        "{}",
        steps[download]
    );
    let after = &steps[download + 1..];
    assert!(after.len() >= 2);
    for step in after {
        assert!(
            step.contains("if: steps.download.outcome == 'success'")
                || step.contains("if: steps.download.outcome != 'success'"),
            "a step that does not look at the download's outcome:\n{step}"
        );
    }
    assert!(after.iter().any(|s| s.contains("uses: OWNER/nsys-gate@")
        && s.contains("if: steps.download.outcome == 'success'")));
}

/// Issue 30, item 7: the README never said what the profiled program must do. Its "Your
/// harness" section has a Python harness that pushes the capture range and `iteration N`
/// ranges and writes the manifest (valid Python), the `nsys profile` command with that capture
/// range, and the run directory's shape; `profile.yml` points to it.
#[test]
fn the_readme_says_what_the_harness_must_do() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let section = readme
        .split("\n## Your harness\n")
        .nth(1)
        .expect("a \"Your harness\" section")
        .split("\n## ")
        .next()
        .unwrap();
    let python = section
        .split("```python\n")
        .nth(1)
        .and_then(|rest| rest.split("\n```").next())
        .expect("a Python example");
    for needle in [
        "nvtx.push_range(\"profile-target\")",
        "nvtx.push_range(f\"iteration {i}\")",
        "nvtx.pop_range()",
        "\"capture_range\": \"profile-target\"",
        "\"workload\": {\"iterations\": iterations",
        "\"profile_name\"",
        "\"run_id\"",
        "manifest.yaml",
    ] {
        assert!(python.contains(needle), "{needle} not in:\n{python}");
    }
    assert_eq!(
        python.matches("push_range(").count(),
        python.matches("pop_range()").count(),
        "every push popped:\n{python}"
    );
    // Valid Python (compiled, not run: it needs a GPU).
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("harness.py");
    std::fs::write(&file, python).unwrap();
    let compiled = std::process::Command::new("python3")
        .args(["-m", "py_compile"])
        .arg(&file)
        .output()
        .expect("python3");
    assert!(
        compiled.status.success(),
        "{}",
        String::from_utf8_lossy(&compiled.stderr)
    );
    let shell = section
        .split("```sh\n")
        .nth(1)
        .and_then(|rest| rest.split("\n```").next())
        .expect("the nsys profile command");
    for needle in [
        "nsys profile --trace=cuda,nvtx",
        "--capture-range=nvtx --nvtx-capture='profile-target@*' --capture-range-end=stop",
        "--output \"$RUN_DIR/trace\"",
        "NSYS_NVTX_PROFILER_REGISTER_ONLY=0",
        "nsys-gate run --no-post --run-dir \"$RUN_DIR\"",
    ] {
        assert!(shell.contains(needle), "{needle} not in:\n{shell}");
    }
    for needle in ["manifest.yaml", "trace.nsys-rep", "analysis.json"] {
        assert!(
            section.contains(&format!("  {needle} ")),
            "the run directory's {needle}"
        );
    }
    let profile = std::fs::read_to_string(repo().join("examples/workflows/profile.yml")).unwrap();
    assert!(
        profile.contains("the README's \"Your harness\""),
        "{profile}"
    );
    assert!(readme.contains("see \"Your harness\")"));
}

/// What a reader copies speaks of their harness, not of another project: no
/// `development/profiling/main.py`, no `inference_profiling/snippets/` (the contract's example
/// manifest, shown as the harness writes it in docs/manifest.md, aside); every self-hosted job
/// that profiles runs on a runner labelled for its GPU (`gpu`, or a matrix's GPU label), and the
/// GitLab example's job is tagged `gpu`; the README says how to give a runner that label.
#[test]
fn what_a_reader_copies_names_their_harness_and_a_gpu_runner() {
    let root = repo();
    let mut texts: Vec<(String, String)> = example_workflows();
    for name in [
        "README.md",
        "action.yml",
        "examples/gitlab/.gitlab-ci.yml",
        "examples/gitlab/nsys-gate.gitlab-ci.yml",
        "scripts/try-gitlab.sh",
    ] {
        texts.push((
            name.to_owned(),
            std::fs::read_to_string(root.join(name)).unwrap(),
        ));
    }
    for entry in std::fs::read_dir(root.join("docs")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.ends_with(".md") && name != "manifest.md" {
            texts.push((
                format!("docs/{name}"),
                std::fs::read_to_string(&path).unwrap(),
            ));
        }
    }
    assert!(texts.len() > 10, "{}", texts.len());
    for (name, text) in &texts {
        for foreign in ["development/profiling", "inference_profiling/snippets"] {
            assert!(!text.contains(foreign), "{name} names {foreign}");
        }
    }
    let profiling_jobs: Vec<Job> = example_workflows()
        .iter()
        .map(|(_, text)| text.clone())
        .chain(readme_workflows())
        .flat_map(|text| parse(&text).2)
        .filter(|job| job.self_hosted && job.text.contains("nsys profile"))
        .collect();
    assert!(profiling_jobs.len() >= 4, "{profiling_jobs:?}");
    for job in &profiling_jobs {
        let runs_on = job
            .text
            .lines()
            .find(|l| l.trim_start().starts_with("runs-on:"))
            .unwrap_or_default();
        assert!(
            runs_on.contains(", gpu]") || runs_on.contains("matrix.gpu"),
            "{}: {runs_on}",
            job.name
        );
    }
    let gitlab = std::fs::read_to_string(root.join("examples/gitlab/.gitlab-ci.yml")).unwrap();
    assert!(gitlab.contains("  tags: [gpu]\n"), "{gitlab}");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    assert!(readme.contains("`./config.sh --labels gpu`"));
}
