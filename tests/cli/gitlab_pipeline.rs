//! examples/gitlab/ end to end: the example pipeline (`.gitlab-ci.yml`, including
//! `nsys-gate.gitlab-ci.yml`) in a temporary git repository, run by real gitlab-ci-local
//! (shell executor) against the local GitLab-like API (`gitlab_server.rs`), with real nsys,
//! from a clean environment, as `action.rs` runs the GitHub workflows under act.
//!
//! What the test changes in the example, each line checked to be there first: the include is
//! the local copy of the template instead of its URL, `release-url` is the loopback release
//! mirror that `scripts/package-release.sh` fills once per test run (shared with the act
//! tests: the template downloads the binary and checks its SHA-256 as a user's job does), and
//! the harness's line copies fixtures into the run directories instead of profiling. GitLab's
//! own variables (`GITLAB_CI`, the API, the project, the merge request) are given to
//! gitlab-ci-local as GitLab would set them; the token as the masked variable would be.

use std::path::PathBuf;
use std::process::{Command, Output};

use crate::action::{act_lock, release_mirror, release_sha256, version};
use crate::common::{installed_or_skip, repo};
use crate::file_server::FileServer;
use crate::gitlab::{assert_private_token, history, sha, TOKEN};
use crate::gitlab_server::Server;
use crate::require_nsys;

const GITLAB_CI_LOCAL_VERSION: &str = "4.73.0";

const INCLUDE: &str = "  - remote: https://raw.githubusercontent.com/OWNER/nsys-gate/v";
const RELEASE_URL: &str = "      release-url: https://github.com/OWNER/nsys-gate/releases/download";
const HARNESS: &str = r#"    - mkdir -p "$RUN_DIR" && nsys profile "#;

fn gitlab_ci_local() -> Option<PathBuf> {
    let path = repo().join(format!(
        ".tools/gitlab-ci-local-{GITLAB_CI_LOCAL_VERSION}/gitlab-ci-local"
    ));
    let missing = format!(
        "gitlab-ci-local is not installed at {} (run `scripts/install-gitlab-ci-local.sh`)",
        path.display()
    );
    installed_or_skip(Some(path).filter(|p| p.is_file()), &missing)
}

/// The example pipeline in a temporary repository, ready for gitlab-ci-local.
struct Pipeline {
    _tmp: assert_fs::TempDir,
    home: PathBuf,
    repo: PathBuf,
    tool: PathBuf,
    nsys: PathBuf,
}

/// The example's text with `from` (a whole line, or a line's start) replaced by `to`.
fn replace_line(text: &str, from: &str, to: &str) -> String {
    let line = text
        .lines()
        .find(|l| l.starts_with(from))
        .unwrap_or_else(|| panic!("examples/gitlab/.gitlab-ci.yml has no line {from:?}"));
    text.replacen(line, to, 1)
}

impl Pipeline {
    fn new(tool: PathBuf, nsys: PathBuf, mirror: &str) -> Pipeline {
        let tmp = assert_fs::TempDir::new().unwrap();
        let repo_dir = tmp.path().join("repo");
        let home = tmp.path().join("home");
        std::fs::create_dir_all(&repo_dir).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        let examples = repo().join("examples/gitlab");
        let mut ci = std::fs::read_to_string(examples.join(".gitlab-ci.yml")).unwrap();
        ci = replace_line(&ci, INCLUDE, "  - local: nsys-gate.gitlab-ci.yml");
        // The loopback mirror is plain http://: the archive is pinned.
        ci = replace_line(
            &ci,
            RELEASE_URL,
            &format!(
                "      release-url: {mirror}\n      release-sha256: {}",
                release_sha256()
            ),
        );
        ci = replace_line(
            &ci,
            HARNESS,
            r#"    - rm -rf profiles && mkdir -p profiles/smoke-tensor/runs && for f in $FIXTURES; do cp -r "$f" profiles/smoke-tensor/runs/; done"#,
        );
        std::fs::write(repo_dir.join(".gitlab-ci.yml"), ci).unwrap();
        std::fs::copy(
            examples.join("nsys-gate.gitlab-ci.yml"),
            repo_dir.join("nsys-gate.gitlab-ci.yml"),
        )
        .unwrap();
        let git = |args: &[&str]| {
            let out = Command::new("git")
                .args(args)
                .current_dir(&repo_dir)
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .env("HOME", &home)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "git {args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        };
        git(&["init", "-q", "-b", "main"]);
        git(&[
            "remote",
            "add",
            "origin",
            "https://gitlab.example/g/gpu.git",
        ]);
        git(&["add", "-A"]);
        git(&[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.com",
            "commit",
            "-qm",
            "profile",
        ]);
        Pipeline {
            _tmp: tmp,
            home,
            repo: repo_dir,
            tool,
            nsys,
        }
    }

    /// Runs the pipeline with GitLab's variables of a pipeline (and `more`), the run
    /// directories copied from `fixtures`.
    fn run(&self, server: &Server, fixtures: &[&str], more: &[(&str, String)]) -> Output {
        let fixtures: Vec<String> = fixtures
            .iter()
            .map(|f| repo().join("tests/fixtures").join(f).display().to_string())
            .collect();
        let mut vars: Vec<(&str, String)> = vec![
            ("GITLAB_CI", "true".into()),
            ("CI_API_V4_URL", server.api_url()),
            ("CI_PROJECT_ID", "42".into()),
            ("CI_PROJECT_PATH", "g/gpu".into()),
            ("CI_PROJECT_URL", "https://gitlab.example/g/gpu".into()),
            ("CI_PIPELINE_ID", "900".into()),
            (
                "CI_JOB_URL",
                "https://gitlab.example/g/gpu/-/jobs/901".into(),
            ),
            ("CI_RUNNER_DESCRIPTION", "gpu-runner-h100".into()),
            ("GITLAB_TOKEN", TOKEN.into()),
            ("NSYS", self.nsys.display().to_string()),
            ("FIXTURES", fixtures.join(" ")),
        ];
        vars.extend(more.iter().cloned());
        let names: Vec<&str> = vars.iter().map(|(n, _)| *n).collect();
        let mut cmd = Command::new(&self.tool);
        // A clean environment: the shell executor hands the caller's environment to the job.
        cmd.current_dir(&self.repo)
            .env_clear()
            .env("HOME", &self.home)
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .args(["--no-color", "--home"])
            .arg(&self.home)
            .args(["--ignore-predefined-vars", &names.join(",")]);
        for (name, value) in &vars {
            cmd.args(["--variable", &format!("{name}={value}")]);
        }
        // The whole pipeline, not `profile` by name: gitlab-ci-local runs a job named on its
        // command line whatever its rules say.
        cmd.output().unwrap()
    }

    /// The files the job's artifacts kept, relative to the artifacts' folder.
    fn artifacts(&self) -> Vec<String> {
        let root = self.repo.join(".gitlab-ci-local/artifacts/profile");
        let mut found = Vec::new();
        let mut stack = vec![root.clone()];
        while let Some(dir) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for e in entries {
                let path = e.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                } else {
                    found.push(path.strip_prefix(&root).unwrap().display().to_string());
                }
            }
        }
        found.sort();
        found
    }
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn merge_request(project_path: &str) -> Vec<(&'static str, String)> {
    vec![
        ("CI_PIPELINE_SOURCE", "merge_request_event".into()),
        ("CI_MERGE_REQUEST_IID", "7".into()),
        ("CI_MERGE_REQUEST_PROJECT_ID", "42".into()),
        ("CI_MERGE_REQUEST_PROJECT_PATH", project_path.into()),
        (
            "CI_MERGE_REQUEST_PROJECT_URL",
            "https://gitlab.example/g/gpu".into(),
        ),
        ("CI_MERGE_REQUEST_TARGET_BRANCH_NAME", "main".into()),
        ("CI_MERGE_REQUEST_DIFF_BASE_SHA", sha(305)),
        ("CI_COMMIT_BRANCH", String::new()),
    ]
}

/// The example pipeline as GitLab would run it: on a push to the default branch the job
/// analyses, gates and keeps the analyses as artifacts; on a merge request it also notes the
/// merge request, compared with the history of push pipelines, the failing gate in the JUnit
/// report; in a fork's own project it does not run.
#[test]
fn the_example_pipeline_runs_under_gitlab_ci_local() {
    let Some(nsys) = crate::common::nsys("2024.2") else {
        return;
    };
    let Some(tool) = gitlab_ci_local() else {
        return;
    };
    let _turn = act_lock();
    let mirror = FileServer::serve(release_mirror());
    let pipeline = Pipeline::new(tool, nsys.clone(), &mirror.url());
    let base = crate::common::analysed("compare-base", &nsys);
    let root = base.dir.parent().unwrap().join("blobs/blob");
    std::fs::create_dir_all(&root).unwrap();
    let storage = FileServer::serve(root.parent().unwrap());
    let server = Server::start(TOKEN);
    history(&server, &base.dir, &root, &storage);

    // A push to main: analysed, gated, compared with the branch's own history; no note.
    let started = std::time::Instant::now();
    let out = pipeline.run(
        &server,
        &["compare-head"],
        &[
            ("CI_PIPELINE_SOURCE", "push".into()),
            ("CI_COMMIT_BRANCH", "main".into()),
        ],
    );
    let log = text(&out);
    eprintln!(
        "push pipeline under gitlab-ci-local: {:?}",
        started.elapsed()
    );
    assert!(out.status.success(), "{log}");
    assert!(!log.contains("command not found"), "{log}");
    let asset = format!("nsys-gate-{}-linux-x86_64.tar.gz", version());
    assert!(
        log.contains(&format!("nsys-gate: installed release {}", version())),
        "{log}"
    );
    assert!(
        mirror
            .requests()
            .iter()
            .any(|p| p.ends_with(&format!("{asset}.sha256"))),
        "{:?}",
        mirror.requests()
    );
    assert!(log.contains("no merge request to comment on"), "{log}");
    assert!(server.notes(7).is_empty());
    let kept = pipeline.artifacts();
    assert!(
        kept.contains(&"profiles/smoke-tensor/runs/compare-head/analysis.json".to_owned()),
        "{kept:?}"
    );
    assert!(
        kept.iter()
            .all(|f| f.ends_with("analysis.json") || f == "nsys-gate-junit.xml"),
        "only the analyses and the JUnit report are kept: {kept:?}"
    );

    // The merge request: one note by the token's user, compared with 4 of the 5 push
    // pipelines; a second run directory fails the gate, and the job with it, its failing
    // warning in the JUnit report the merge request's widget shows.
    let out = pipeline.run(
        &server,
        &["compare-head", "missing-iterations"],
        &merge_request("g/gpu"),
    );
    let log = text(&out);
    assert!(
        !out.status.success(),
        "the gate failed, so must the job:\n{log}"
    );
    let notes = server.notes(7);
    assert_eq!(notes.len(), 1, "{log}");
    assert_eq!(notes[0].author, "nsys-bot");
    assert!(notes[0].body.contains("slower"), "{}", notes[0].body);
    assert!(
        log.contains("note `") && log.contains("on merge request !7 created"),
        "{log}"
    );
    assert!(
        log.contains("ERROR nsys-gate: missing_iterations (fails the job)"),
        "{log}"
    );
    // gitlab-ci-local keeps `artifacts: paths` (also of a failed job: `when: always`) but not
    // the reports: the JUnit report is read where the job wrote it, the path the expanded
    // configuration hands GitLab.
    let expanded = std::fs::read_to_string(
        pipeline
            .repo
            .join(".gitlab-ci-local/expanded-gitlab-ci.yml"),
    )
    .unwrap();
    assert!(
        expanded.contains("junit: nsys-gate-junit.xml"),
        "{expanded}"
    );
    let junit = std::fs::read_to_string(pipeline.repo.join("nsys-gate-junit.xml")).unwrap();
    assert!(
        junit.contains("<testsuites name=\"nsys-gate\" tests=\"10\" failures=\"1\" errors=\"0\">"),
        "{junit}"
    );
    assert!(
        junit.contains("<failure type=\"missing_iterations\""),
        "{junit}"
    );
    let paths: Vec<String> = server.requests().iter().map(|r| r.path.clone()).collect();
    assert!(
        paths.iter().any(|p| p.contains("/pipelines/305/jobs")),
        "{paths:?}"
    );
    assert_private_token(&server);
    for (_, headers) in storage.requests_with_headers() {
        assert!(
            headers.iter().all(|(_, v)| !v.contains(TOKEN)),
            "{headers:?}"
        );
    }
    assert!(!log.contains(TOKEN), "the token reached the job log");

    // A fork's merge request pipeline, in the fork's project: the job does not run.
    let before = server.requests().len();
    let out = pipeline.run(
        &server,
        &["compare-head"],
        &merge_request("someone/gpu-fork"),
    );
    let log = text(&out);
    assert!(!log.contains("profile starting"), "{log}");
    assert_eq!(server.requests().len(), before, "{log}");
}

/// The template installs its own release: its default version and the example's include are
/// this crate's version (a release that forgets one would install the previous binary).
#[test]
fn the_gitlab_template_installs_this_release() {
    let examples = repo().join("examples/gitlab");
    let template = std::fs::read_to_string(examples.join("nsys-gate.gitlab-ci.yml")).unwrap();
    let v = version();
    assert!(
        template.contains(&format!("      default: \"{v}\"\n")),
        "examples/gitlab/nsys-gate.gitlab-ci.yml's `version` input is not {v}"
    );
    assert!(
        template.contains(&format!(
            "OWNER/nsys-gate/v{v}/examples/gitlab/nsys-gate.gitlab-ci.yml"
        )),
        "the template's own include example does not name v{v}"
    );
    let ci = std::fs::read_to_string(examples.join(".gitlab-ci.yml")).unwrap();
    assert!(
        ci.contains(&format!(
            "{INCLUDE}{v}/examples/gitlab/nsys-gate.gitlab-ci.yml\n"
        )),
        "examples/gitlab/.gitlab-ci.yml does not include the template of v{v}"
    );
    for line in [RELEASE_URL, HARNESS] {
        assert!(ci.lines().any(|l| l.starts_with(line)), "no line {line:?}");
    }
}

/// The template's script, as the runner's shell gets it (the `- |` block under `.nsys-gate`).
fn template_script() -> String {
    let template =
        std::fs::read_to_string(repo().join("examples/gitlab/nsys-gate.gitlab-ci.yml")).unwrap();
    let start = template
        .find("  script:\n    - |\n")
        .expect("the template's script block");
    template[start..]
        .lines()
        .skip(2)
        .take_while(|l| l.is_empty() || l.starts_with("      "))
        .map(|l| l.strip_prefix("      ").unwrap_or(l))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The template's install (its script alone, under `sh`, with a stand-in release): the binary
/// runs only when its SHA-256 is the published one; a release URL that is not http(s) or file
/// is refused before anything is fetched; the options reach `nsys-gate run`.
#[test]
fn the_gitlab_templates_install_checks_the_sha256_before_running_anything() {
    let arch = match std::env::consts::ARCH {
        "x86_64" => "x86_64",
        "aarch64" => "aarch64",
        other => {
            crate::skips::skipped(&format!("no nsys-gate release for {other}"));
            return;
        }
    };
    let tmp = assert_fs::TempDir::new().unwrap();
    let v = version();
    let release = tmp.path().join(format!("mirror/v{v}"));
    let stage = tmp.path().join("stage");
    std::fs::create_dir_all(&release).unwrap();
    std::fs::create_dir_all(&stage).unwrap();
    std::fs::write(stage.join("nsys-gate"), "#!/bin/sh\necho \"called: $*\"\n").unwrap();
    std::fs::set_permissions(
        stage.join("nsys-gate"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let asset = format!("nsys-gate-{v}-linux-{arch}.tar.gz");
    let status = Command::new("tar")
        .arg("-czf")
        .arg(release.join(&asset))
        .arg("-C")
        .arg(&stage)
        .arg("nsys-gate")
        .status()
        .unwrap();
    assert!(status.success());
    let sum = Command::new("sha256sum")
        .arg(&asset)
        .current_dir(&release)
        .output()
        .unwrap();
    let published = release.join(format!("{asset}.sha256"));
    std::fs::write(&published, &sum.stdout).unwrap();
    let work = tmp.path().join("work");
    std::fs::create_dir_all(work.join("runs/a")).unwrap();
    let script = template_script();
    let run_pinned = |url: &str, pin: &str| {
        let out = Command::new("sh")
            .args(["-c", &script])
            .current_dir(&work)
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("TMPDIR", tmp.path())
            .env("NSYS_GATE_VERSION", &v)
            .env("NSYS_GATE_RELEASE_URL", url)
            .env("NSYS_GATE_RELEASE_SHA256", pin)
            .env("NSYS_GATE_RUN_DIR", "runs/*")
            .env("NSYS_GATE_BASELINE", "auto")
            .env("NSYS_GATE_ARGS", "--gate-on high_variance")
            .output()
            .unwrap();
        (out.status.code(), text(&out))
    };
    let run = |url: &str| run_pinned(url, "");
    let mirror = format!("file://{}", tmp.path().join("mirror").display());

    let (code, log) = run(&mirror);
    assert_eq!(code, Some(0), "{log}");
    assert!(
        log.contains(
            "called: run --run-dir=runs/a --baseline=auto --junit=nsys-gate-junit.xml --gate-on high_variance"
        ),
        "{log}"
    );

    // Another archive under the published name: refused, never run.
    std::fs::write(release.join(&asset), b"not the release").unwrap();
    let (code, log) = run(&mirror);
    assert_eq!(code, Some(2), "{log}");
    assert!(log.contains("but the published checksum says"), "{log}");
    assert!(!log.contains("called:"), "{log}");

    // A value curl would read as an option.
    let (code, log) = run("-K/etc/passwd");
    assert_eq!(code, Some(2), "{log}");
    assert!(
        log.contains("must be an https://, http:// or file:// URL"),
        "{log}"
    );

    // Issue 37 item 10: plain http:// serves the archive and its checksum alike, so a network
    // attacker could serve both. Refused before anything is fetched unless release-sha256
    // pins the archive; then the archive must have the pinned digest.
    // The release again (the archive was replaced above), served over loopback HTTP.
    let status = Command::new("tar")
        .arg("-czf")
        .arg(release.join(&asset))
        .arg("-C")
        .arg(&stage)
        .arg("nsys-gate")
        .status()
        .unwrap();
    assert!(status.success());
    let genuine_now = Command::new("sha256sum")
        .arg(release.join(&asset))
        .output()
        .unwrap();
    let genuine_now = String::from_utf8_lossy(&genuine_now.stdout)[..64].to_owned();
    std::fs::write(&published, format!("{genuine_now}  {asset}\n")).unwrap();
    let server = FileServer::serve(&tmp.path().join("mirror"));
    let http = server.url();
    let (code, log) = run(&http);
    assert_eq!(code, Some(2), "{log}");
    assert!(
        log.contains(&format!("the release-url '{http}' is plain http://")),
        "{log}"
    );
    assert!(server.requests().is_empty(), "{:?}", server.requests());
    assert!(!log.contains("called:"), "{log}");
    let (code, log) = run_pinned(&http, "xyz");
    assert_eq!(code, Some(2), "{log}");
    assert!(log.contains("must be a SHA-256"), "{log}");
    assert!(server.requests().is_empty(), "{:?}", server.requests());
    let other = "1".repeat(64);
    let (code, log) = run_pinned(&http, &other);
    assert_eq!(code, Some(2), "{log}");
    assert!(
        log.contains(&format!("but release-sha256 pins {other}")),
        "{log}"
    );
    assert!(!log.contains("called:"), "{log}");
    let (code, log) = run_pinned(&http, &genuine_now.to_uppercase());
    assert_eq!(code, Some(0), "{log}");
    assert!(log.contains("called: run --run-dir=runs/a"), "{log}");
}

/// `scripts/try-gitlab.sh`, as docs/gitlab.md runs it: the example pipeline under
/// gitlab-ci-local with a built binary in the release mirror, on the bundled run with GPU work
/// (its trace a `.sqlite` export): the job passes and keeps the run's analysis.json.
#[test]
fn try_gitlab_runs_the_example_pipeline_on_the_bundled_gpu_run() {
    let Some(tool) = gitlab_ci_local() else {
        return;
    };
    let nsys = require_nsys!("2024.2");
    let tmp = assert_fs::TempDir::new().unwrap();
    let out = Command::new(repo().join("scripts/try-gitlab.sh"))
        .arg("--binary")
        .arg(assert_cmd::cargo::cargo_bin("nsys-gate"))
        .arg(repo().join("examples/llama-gpu/runs/llama-gpu"))
        .env("GITLAB_CI_LOCAL", &tool)
        .env("NSYS", &nsys)
        .env("TMPDIR", tmp.path())
        .output()
        .unwrap();
    let log = text(&out);
    assert!(out.status.success(), "{log}");
    assert!(log.contains("try-gitlab: artifacts the job kept:"), "{log}");
    // The artifacts' list is the script's standard output (its own words go to standard error).
    let kept: Vec<&str> = std::str::from_utf8(&out.stdout)
        .unwrap()
        .lines()
        .filter(|l| l.starts_with("./profile/"))
        .collect();
    assert_eq!(
        kept,
        ["./profile/profiles/example/runs/llama-gpu/analysis.json"],
        "{log}"
    );
    assert!(log.contains(" PASS  profile"), "{log}");
}
