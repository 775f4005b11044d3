//! action.yml end to end: a temporary git repository whose workflow uses the action by path
//! from this checkout, run by real `act` in host mode (`-P self-hosted=-self-hosted`) against
//! the local GitHub test server, with real nsys, from a clean environment (act in host mode
//! hands the caller's whole environment to the steps, so nothing real may leak in).
//!
//! The action installs its binary from a loopback release mirror that
//! `scripts/package-release.sh` fills once per test run from the current source (the
//! `release-url` input), the way a user's job downloads a release: one build for all the act
//! tests. Only the test of an edited action tree builds the source under act, in a target
//! folder it shares with that one package build.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::common::repo;
use crate::file_server::FileServer;
use crate::github_server::Server;
use crate::post::analyses::{
    analysis_json, assert_inert, HOSTILE_KEY, HOSTILE_PROFILE, HOSTILE_RANGE, HOSTILE_REPORT,
};

const ACT_VERSION: &str = "0.2.89";
const TOKEN: &str = "ghs_e2eSecretThatMustNotLeak0123456789";

/// The act tests (and the gitlab-ci-local ones, `gitlab_pipeline.rs`) run one at a time: they
/// share the release mirror's build and two cores.
static ACT_LOCK: Mutex<()> = Mutex::new(());

/// Where `scripts/package-release.sh` builds for these tests.
fn build_dir() -> PathBuf {
    repo().join("target/act-build")
}

/// Where a source build under act builds: a copy of [`build_dir`] made by the test that needs
/// it, so that the dependencies are already compiled, and apart from it, so that the mirror's
/// binary is never overwritten by a build of an edited tree.
fn source_build_dir() -> PathBuf {
    repo().join("target/act-source-build")
}

/// The release mirror: `scripts/package-release.sh` run once per test run on this checkout,
/// laid out as `vVERSION/FILE` (the shape of GitHub's `releases/download` URLs); the
/// gitlab-ci-local tests install from it too.
pub(crate) fn release_mirror() -> &'static Path {
    static MIRROR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    MIRROR.get_or_init(|| {
        let mirror = repo().join("target/act-mirror");
        let _ = std::fs::remove_dir_all(&mirror);
        let started = std::time::Instant::now();
        let out = Command::new(repo().join("scripts/package-release.sh"))
            .arg(&mirror)
            .env("CARGO_TARGET_DIR", build_dir())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "scripts/package-release.sh failed:\n{}",
            text(&out)
        );
        eprintln!("packaged the release mirror in {:?}", started.elapsed());
        mirror
    })
}

/// The version the action's Cargo.toml declares (the release the action looks for).
pub(crate) fn version() -> String {
    let manifest = std::fs::read_to_string(repo().join("Cargo.toml")).unwrap();
    manifest
        .lines()
        .find_map(|l| l.strip_prefix("version = \""))
        .and_then(|v| v.strip_suffix('"'))
        .unwrap()
        .to_owned()
}

/// The SHA-256 of the release mirror's archive for this runner (from its `.sha256`): the pin
/// a workflow gives as `release-sha256`, since the mirror is served over plain `http://`.
pub(crate) fn release_sha256() -> String {
    let asset = format!("nsys-gate-{}-linux-x86_64.tar.gz", version());
    let published =
        std::fs::read_to_string(release_mirror().join(format!("v{}/{asset}.sha256", version())))
            .unwrap();
    published[..64].to_owned()
}

pub(crate) fn act_lock() -> MutexGuard<'static, ()> {
    ACT_LOCK.lock().unwrap_or_else(PoisonError::into_inner)
}

fn act() -> Option<PathBuf> {
    let path = repo().join(format!(".tools/act-{ACT_VERSION}/bin/act"));
    let missing = format!(
        "act is not installed at {} (run `scripts/install-act.sh`)",
        path.display()
    );
    crate::common::installed_or_skip(Some(path).filter(|p| p.is_file()), &missing)
}

/// What every act test needs: nsys, act, its turn, the release mirror and the GitHub-like
/// server. `None` (skipped, loudly) when nsys or act is missing outside CI. A test keeps it
/// whole to its end (`let Some(s) = setup()`), so its turn lasts as long as the test.
struct Setup {
    nsys: PathBuf,
    act: PathBuf,
    _turn: MutexGuard<'static, ()>,
    mirror: FileServer,
    server: Server,
}

fn setup() -> Option<Setup> {
    let nsys = crate::common::nsys("2024.2")?;
    let act = act()?;
    let turn = act_lock();
    Some(Setup {
        nsys,
        act,
        _turn: turn,
        mirror: FileServer::serve(release_mirror()),
        server: Server::github_for(std::time::Duration::from_secs(1500)),
    })
}

/// Copies what the action needs to build itself (no target/, no .git, no fixtures) into `to`.
fn copy_action_source(to: &Path) {
    std::fs::create_dir_all(to.join("tests")).unwrap();
    for (item, dest) in [
        ("action.yml", "."),
        ("action", "."),
        ("Cargo.toml", "."),
        ("Cargo.lock", "."),
        ("src", "."),
        ("crates", "."),
        ("templates", "."),
        ("benches", "."),
        ("tests/cli", "tests"),
    ] {
        let from = repo().join(item);
        let status = Command::new("cp")
            .arg("-r")
            .arg(&from)
            .arg(to.join(dest))
            .status()
            .unwrap();
        assert!(status.success(), "copy {}", from.display());
    }
}

const WORKFLOW: &str = r#"name: profile
on: pull_request
permissions:
  contents: read
  pull-requests: write
jobs:
  gate:
    runs-on: self-hosted
    steps:
      - uses: actions/checkout@v4
      - name: No Rust toolchain on this runner
        run: "! command -v cargo"
      - id: gate
        uses: ./nsys-gate
        with:
          run-dir: ${{ env.RUN_DIR }}
          nsys: ${{ env.NSYS }}
          install: release
          release-url: ${{ env.RELEASE_URL }}
          release-sha256: ${{ env.RELEASE_SHA256 }}
          # Values that begin with `-` (issue item 8): passed as `--option=value`.
          comment-key: -smoke
          label: -gpu
          top: "3"
      - if: always()
        name: Record the outputs
        env:
          GATE: ${{ steps.gate.outputs.gate }}
          COMMENT: ${{ steps.gate.outputs.comment-url }}
          REPORT: ${{ steps.gate.outputs.report-path }}
          ANALYSES: ${{ steps.gate.outputs.analysis-paths }}
          WARNINGS: ${{ steps.gate.outputs.warnings }}
        run: |
          printf 'gate=%s\ncomment=%s\nreport=%s\nanalyses=%s\nwarnings=%s\n' "$GATE" "$COMMENT" "$REPORT" "$ANALYSES" "$WARNINGS" > "$RESULT_FILE"
          printf 'label=%s\n' "$(sed -n 's/^ *"label": *"\([^"]*\)".*/\1/p' "$ANALYSES" | head -n 1)" >> "$RESULT_FILE"
"#;

struct Act {
    _tmp: assert_fs::TempDir,
    /// The runner's home, and so act's tool cache, where the action caches its binary: new
    /// for each test, so that each one installs.
    home: PathBuf,
    root: PathBuf,
    repo: PathBuf,
    act: PathBuf,
    nsys: PathBuf,
}

/// One act invocation: the event, its payload, the workflow file, and what else the steps see.
struct Invocation<'a> {
    event: &'a str,
    event_file: &'a Path,
    workflow: &'a str,
    env: Vec<(&'a str, String)>,
    token: &'a str,
    /// Whether cargo is on the steps' PATH.
    cargo: bool,
}

impl Act {
    /// A temporary repository with the action's source in `nsys-gate/`, two fixtures in
    /// `runs/`, and `files` (path in the repository, text), committed.
    fn new(act: PathBuf, nsys: PathBuf, files: &[(&str, &str)]) -> Act {
        let tmp = assert_fs::TempDir::new().unwrap();
        let root = tmp.path().to_owned();
        let repo_dir = root.join("repo");
        std::fs::create_dir_all(repo_dir.join(".github/workflows")).unwrap();
        std::fs::create_dir_all(repo_dir.join("nsys-gate")).unwrap();
        std::fs::create_dir_all(repo_dir.join("runs")).unwrap();
        let home = root.join("home");
        std::fs::create_dir_all(&home).unwrap();
        copy_action_source(&repo_dir.join("nsys-gate"));
        for fixture in ["clean", "missing-iterations"] {
            let status = Command::new("cp")
                .arg("-r")
                .arg(repo().join("tests/fixtures").join(fixture))
                .arg(repo_dir.join("runs"))
                .status()
                .unwrap();
            assert!(status.success());
        }
        for (path, text) in files {
            let path = repo_dir.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        std::fs::write(
            root.join("event.json"),
            r#"{"action": "synchronize", "number": 7,
                "pull_request": {"number": 7, "head": {"sha": "0123abcd", "ref": "feature", "repo": {"fork": false, "full_name": "octo/gpu"}},
                                 "base": {"sha": "4567ef01", "ref": "main", "repo": {"full_name": "octo/gpu"}}},
                "repository": {"full_name": "octo/gpu"}}"#,
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
        Act {
            _tmp: tmp,
            home,
            root,
            repo: repo_dir,
            act,
            nsys,
        }
    }

    /// Runs profile.yml once on `run_dir` with the release mirror at `mirror`; returns act's
    /// output and the recorded outputs.
    fn run(&self, server: &Server, mirror: &str, run_dir: &str, cargo: bool) -> (Output, String) {
        self.run_pinned(server, (mirror, &release_sha256()), run_dir, cargo)
    }

    /// [`Act::run`] with the mirror's archive pinned to `pin` (`release-sha256`).
    fn run_pinned(
        &self,
        server: &Server,
        (mirror, pin): (&str, &str),
        run_dir: &str,
        cargo: bool,
    ) -> (Output, String) {
        let event_file = self.root.join("event.json");
        self.invoke(
            server,
            &Invocation {
                event: "pull_request",
                event_file: &event_file,
                workflow: ".github/workflows/profile.yml",
                env: vec![
                    ("RUN_DIR", format!("runs/{run_dir}")),
                    ("RELEASE_URL", mirror.to_owned()),
                    ("RELEASE_SHA256", pin.to_owned()),
                ],
                token: TOKEN,
                cargo,
            },
        )
    }

    /// Runs one workflow of the repository under act; returns act's output and what the
    /// workflow wrote to `$RESULT_FILE`.
    fn invoke(&self, server: &Server, how: &Invocation) -> (Output, String) {
        let result = self.root.join("result.txt");
        let _ = std::fs::remove_file(&result);
        let cargo_home = std::env::var("CARGO_HOME")
            .unwrap_or_else(|_| format!("{}/.cargo", std::env::var("HOME").unwrap()));
        let rustup_home = std::env::var("RUSTUP_HOME")
            .unwrap_or_else(|_| format!("{}/.rustup", std::env::var("HOME").unwrap()));
        let mut cmd = Command::new(&self.act);
        cmd.current_dir(&self.repo)
            // A clean environment: act in host mode passes the caller's environment to the
            // steps. Only a PATH (with cargo when asked) and where the Rust toolchain lives go
            // in, and the folder where a source build finds the dependencies compiled.
            .env_clear()
            .env("HOME", &self.home);
        if how.cargo {
            cmd.env(
                "PATH",
                format!("{cargo_home}/bin:/usr/local/bin:/usr/bin:/bin"),
            )
            .env("CARGO_HOME", &cargo_home)
            .env("RUSTUP_HOME", &rustup_home)
            .env("CARGO_TARGET_DIR", source_build_dir());
        } else {
            cmd.env("PATH", "/usr/local/bin:/usr/bin:/bin");
        }
        cmd.args([how.event, "-W", how.workflow, "-e"])
            .arg(how.event_file)
            .args(["-P", "self-hosted=-self-hosted"])
            .args(["--env", &format!("GITHUB_API_URL={}", server.api_url())])
            .args(["--env", "GITHUB_REPOSITORY=octo/gpu"])
            .args(["--env", &format!("NSYS={}", self.nsys.display())])
            .args(["--env", &format!("RESULT_FILE={}", result.display())])
            .args(["-s", &format!("GITHUB_TOKEN={}", how.token)]);
        if !how.env.iter().any(|(name, _)| *name == "RELEASE_SHA256") {
            cmd.args(["--env", &format!("RELEASE_SHA256={}", release_sha256())]);
        }
        for (name, value) in &how.env {
            cmd.args(["--env", &format!("{name}={value}")]);
        }
        let out = cmd.output().unwrap();
        let recorded = std::fs::read_to_string(&result).unwrap_or_default();
        (out, recorded)
    }
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn the_action_installs_the_release_posts_updates_and_gates_under_act() {
    let Some(s) = setup() else { return };
    let act = Act::new(
        s.act,
        s.nsys,
        &[(".github/workflows/profile.yml", WORKFLOW)],
    );
    let version = version();

    // First run: a clean run directory, on a runner without Rust. The release binary is
    // downloaded from the mirror and checked, the comment is created, the job passes.
    let started = std::time::Instant::now();
    let (out, recorded) = act.run(&s.server, &s.mirror.url(), "clean", false);
    let elapsed = started.elapsed();
    let log = text(&out);
    assert!(out.status.success(), "act failed:\n{log}");
    eprintln!("install: release, download to comment posted: act ran {elapsed:?}");
    let asset = format!("/v{version}/nsys-gate-{version}-linux-x86_64.tar.gz");
    assert!(
        log.contains(&format!(
            "installed release {version} (linux-x86_64) from {}{asset}",
            s.mirror.url()
        )),
        "{log}"
    );
    assert!(!log.contains("building nsys-gate"), "{log}");
    assert_eq!(
        s.mirror.requests(),
        [
            format!("/v{version}/nsys-gate-{version}-source-tree.txt"),
            format!("{asset}.sha256"),
            asset.clone(),
        ]
    );
    assert!(log.contains("Summary - "), "no step summary:\n{log}");
    assert!(recorded.contains("gate=pass"), "{recorded}\n{log}");
    assert!(recorded.contains("/runs/clean/analysis.json"), "{recorded}");
    assert!(recorded.contains("report.md"), "{recorded}");
    let warnings_of = |recorded: &str| -> usize {
        recorded
            .lines()
            .find_map(|l| l.strip_prefix("warnings="))
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no warnings output in {recorded}"))
    };
    let clean_warnings = warnings_of(&recorded);
    let comments = s.server.comments(7);
    assert_eq!(comments.len(), 1, "{comments:?}\n{log}");
    let id = comments[0].id;
    assert!(
        comments[0].body.starts_with("<!-- nsys-gate:-smoke -->"),
        "{}",
        comments[0].body
    );
    assert!(recorded.contains("label=-gpu\n"), "{recorded}");
    assert!(recorded.contains("comment=http"), "{recorded}");
    let posts: Vec<String> = s.server.requests().iter().map(|r| r.line()).collect();
    assert!(
        posts
            .iter()
            .any(|l| l.starts_with("POST /repos/octo/gpu/issues/7/comments")),
        "{posts:?}"
    );

    // Second run: missing iterations. The cached archive is used once its SHA-256 is checked
    // against the published one again (only the .sha256 is fetched), the same comment is
    // updated in place, and the job fails on the gate.
    let before = s.server.requests().len();
    let started = std::time::Instant::now();
    let (out, recorded) = act.run(&s.server, &s.mirror.url(), "missing-iterations", false);
    eprintln!(
        "install: release, cached, to comment updated: act ran {:?}",
        started.elapsed()
    );
    let log = text(&out);
    assert!(
        !out.status.success(),
        "the job passed on missing iterations:\n{log}"
    );
    assert!(
        log.contains(&format!(
            "installed release {version} (linux-x86_64) from the tool cache, its SHA-256 checked against {}{asset}.sha256 again",
            s.mirror.url()
        )),
        "{log}"
    );
    assert_eq!(
        s.mirror.requests()[3..],
        [format!("{asset}.sha256")],
        "{:?}",
        s.mirror.requests()
    );
    assert!(recorded.contains("gate=fail"), "{recorded}\n{log}");
    assert!(warnings_of(&recorded) > clean_warnings, "{recorded}");
    let comments = s.server.comments(7);
    assert_eq!(comments.len(), 1, "{comments:?}");
    assert_eq!(comments[0].id, id);
    assert!(
        comments[0].body.contains("missing_iterations"),
        "{}",
        comments[0].body
    );
    let requests = s.server.requests();
    let lines: Vec<String> = requests[before..].iter().map(|r| r.line()).collect();
    assert!(
        lines
            .iter()
            .any(|l| *l == format!("PATCH /repos/octo/gpu/issues/comments/{id}")),
        "{lines:?}"
    );
    assert!(!lines.iter().any(|l| l.starts_with("POST")), "{lines:?}");
    // The token reached the API and nothing else.
    for r in &requests {
        assert_eq!(
            r.header_values("authorization"),
            [format!("Bearer {TOKEN}").as_str()]
        );
    }
    assert!(!log.contains(TOKEN), "the token leaked into act's output");
}

/// The action with its default `install: auto`: no comment posted, only the install watched.
const AUTO_WORKFLOW: &str = r#"name: profile
on: pull_request
permissions:
  contents: read
jobs:
  gate:
    runs-on: self-hosted
    steps:
      - uses: actions/checkout@v4
      - id: gate
        uses: ./nsys-gate
        with:
          run-dir: runs/clean
          nsys: ${{ env.NSYS }}
          release-url: ${{ env.RELEASE_URL }}
          release-sha256: ${{ env.RELEASE_SHA256 }}
          nsys-processes: "1"
          post: "false"
      - if: always()
        name: Record the outputs
        env:
          GATE: ${{ steps.gate.outputs.gate }}
        run: printf 'gate=%s\n' "$GATE" > "$RESULT_FILE"
"#;

/// `install: auto` decides from the action's own tree, not from a ref: the mirror's release
/// was built from this very source, so its binary is downloaded (Rust on PATH or not); after
/// one file of the action's tree is edited, the published source-tree hash no longer matches
/// and the action's source is built instead. The workflow's `nsys-processes: "1"` reaches
/// nsys-gate: the real nsys, behind a script that logs its arguments, is asked for every
/// report in one `nsys stats` call.
#[test]
fn install_auto_downloads_the_release_of_this_tree_and_builds_an_edited_tree_under_act() {
    let Some(s) = setup() else { return };
    let shim_dir = assert_fs::TempDir::new().unwrap();
    let calls = shim_dir.path().join("calls.txt");
    let shim = shim_dir.path().join("nsys");
    std::fs::write(
        &shim,
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$*\" >> '{}'\nexec '{}' \"$@\"\n",
            calls.display(),
            s.nsys.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&shim, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let act = Act::new(
        s.act,
        shim,
        &[(".github/workflows/profile.yml", AUTO_WORKFLOW)],
    );
    let version = version();

    let (out, recorded) = act.run(&s.server, &s.mirror.url(), "clean", true);
    let log = text(&out);
    assert!(out.status.success(), "act failed:\n{log}");
    assert!(recorded.contains("gate=pass"), "{recorded}\n{log}");
    let calls = std::fs::read_to_string(&calls).unwrap();
    let stats: Vec<&str> = calls
        .lines()
        .filter(|l| l.starts_with("stats --report"))
        .collect();
    assert_eq!(stats.len(), 1, "nsys-processes: 1 is one call:\n{calls}");
    assert!(
        stats[0].contains("nvtx_pushpop_trace,nvtx_gpu_proj_trace"),
        "{calls}"
    );
    assert!(
        log.contains(&format!("installed release {version} (linux-x86_64)")),
        "{log}"
    );
    assert!(!log.contains("building nsys-gate"), "{log}");
    assert_eq!(s.mirror.requests().len(), 3, "{:?}", s.mirror.requests());

    // One file of the action's tree edited (as in a branch or a vendored, patched copy).
    let _ = std::fs::remove_dir_all(source_build_dir());
    let status = Command::new("cp")
        .arg("-a")
        .arg(build_dir())
        .arg(source_build_dir())
        .status()
        .unwrap();
    assert!(status.success());
    let main_rs = act.repo.join("nsys-gate/src/main.rs");
    let mut source = std::fs::read_to_string(&main_rs).unwrap();
    source.push_str("\n// edited in a branch\n");
    std::fs::write(&main_rs, source).unwrap();
    let started = std::time::Instant::now();
    let (out, recorded) = act.run(&s.server, &s.mirror.url(), "clean", true);
    let log = text(&out);
    assert!(out.status.success(), "act failed:\n{log}");
    eprintln!(
        "install: auto on an edited tree: act ran {:?}",
        started.elapsed()
    );
    assert!(recorded.contains("gate=pass"), "{recorded}\n{log}");
    assert!(
        log.contains(&format!("is not the one release {version} was built from")),
        "{log}"
    );
    assert!(
        log.contains(&format!("built nsys-gate {version} from source")),
        "{log}"
    );
    // The tree hash was fetched again; the archive was not.
    let requests = s.mirror.requests();
    assert_eq!(requests.len(), 4, "{requests:?}");
    assert!(requests[3].ends_with("-source-tree.txt"), "{requests:?}");
    assert!(s.server.requests().is_empty(), "{:?}", s.server.requests());
}

/// A downloaded archive whose SHA-256 is not the published one fails the step, saying so, and
/// is neither installed nor replaced by a source build (cargo is on PATH, and unused).
#[test]
fn a_wrong_checksum_fails_the_install_under_act() {
    let Some(s) = setup() else { return };
    let version = version();
    let altered = assert_fs::TempDir::new().unwrap();
    let status = Command::new("cp")
        .arg("-r")
        .arg(release_mirror().join(format!("v{version}")))
        .arg(altered.path())
        .status()
        .unwrap();
    assert!(status.success());
    let asset = format!("nsys-gate-{version}-linux-x86_64.tar.gz");
    let wrong = "0".repeat(64);
    std::fs::write(
        altered.path().join(format!("v{version}/{asset}.sha256")),
        format!("{wrong}  {asset}\n"),
    )
    .unwrap();
    let mirror = FileServer::serve(altered.path());
    let act = Act::new(
        s.act,
        s.nsys,
        &[(".github/workflows/profile.yml", AUTO_WORKFLOW)],
    );

    // Pinned to what the altered mirror publishes: the archive itself is what differs.
    let (out, recorded) = act.run_pinned(&s.server, (&mirror.url(), &wrong), "clean", true);
    let log = text(&out);
    assert!(!out.status.success(), "the job passed:\n{log}");
    assert!(
        log.contains(&format!(
            "::error title=nsys-gate::the SHA-256 of {}/v{version}/{asset} is ",
            mirror.url()
        )),
        "{log}"
    );
    assert!(
        log.contains(&format!(
            "the published checksum ({}/v{version}/{asset}.sha256) says '{wrong}'",
            mirror.url()
        )),
        "{log}"
    );
    assert!(log.contains("nothing was built instead"), "{log}");
    assert!(!log.contains("building nsys-gate"), "{log}");
    assert!(!log.contains("installed release"), "{log}");
    // The run step never ran: no gate output.
    assert_eq!(recorded, "gate=\n", "{log}");
}

/// The fork's half of the fork-safe pair (examples/workflows/profile-untrusted.yml, cut
/// down): analyse without posting, then upload. Its middle step is what the fork's own code
/// can do: on a fork's pull request the fork controls this job and this very file, so the
/// artifact holds whatever it likes.
const UNTRUSTED_WORKFLOW: &str = r#"name: profile-untrusted
on: pull_request
permissions:
  contents: read
jobs:
  profile:
    runs-on: self-hosted
    steps:
      - uses: actions/checkout@v4
      - id: gate
        uses: ./nsys-gate
        with:
          run-dir: runs/clean
          nsys: ${{ env.NSYS }}
          release-url: ${{ env.RELEASE_URL }}
          release-sha256: ${{ env.RELEASE_SHA256 }}
          post: "false"
      - name: What the fork's code can do
        run: |
          mkdir -p runs/evil
          cp hostile/analysis.json runs/evil/analysis.json
          cp hostile/report.md runs/clean/report.md
      - name: Upload (stand-in for actions/upload-artifact)
        uses: ./.github/actions/artifact
        with:
          mode: upload
          files: |
            runs/*/analysis.json
            runs/*/report.md
"#;

/// The privileged half (examples/workflows/post-comment.yml, with the stand-in download).
const POST_WORKFLOW: &str = r#"name: post-comment
on:
  workflow_run:
    workflows: [profile-untrusted]
    types: [completed]
permissions:
  contents: read
jobs:
  post:
    if: github.event.workflow_run.event == 'pull_request'
    runs-on: self-hosted
    permissions:
      actions: read
      pull-requests: write
    steps:
      - uses: actions/checkout@v4
      - name: Download (stand-in for actions/download-artifact)
        uses: ./.github/actions/artifact
        with:
          mode: download
          files: results
      - id: post
        uses: ./nsys-gate
        with:
          post-analyses: results
          release-url: ${{ env.RELEASE_URL }}
          release-sha256: ${{ env.RELEASE_SHA256 }}
      - if: always()
        name: Record the outputs
        env:
          COMMENT: ${{ steps.post.outputs.comment-url }}
        run: printf 'comment=%s\n' "$COMMENT" > "$RESULT_FILE"
"#;

/// act cannot fetch actions/upload-artifact and actions/download-artifact here (only
/// actions/checkout is handled locally), so the test's repository carries this stand-in:
/// `upload` copies the files matching `files` (globs, one per line, paths kept) into
/// `$ARTIFACT_DIR`; `download` copies them from there into the folder `files`.
const ARTIFACT_STAND_IN: &str = r#"name: artifact (test stand-in)
description: Copies files through $ARTIFACT_DIR in place of upload-artifact and download-artifact.
inputs:
  mode:
    required: true
  files:
    required: true
runs:
  using: composite
  steps:
    - shell: bash
      env:
        MODE: ${{ inputs.mode }}
        FILES: ${{ inputs.files }}
      run: |
        set -euo pipefail
        store="$ARTIFACT_DIR/nsys-gate-pr-analyses"
        if [ "$MODE" = upload ]; then
          shopt -s nullglob
          mkdir -p "$store"
          while IFS= read -r pattern; do
            [ -n "$pattern" ] || continue
            for f in $pattern; do cp --parents "$f" "$store/"; done
          done <<< "$FILES"
        else
          mkdir -p "$FILES"
          cp -R "$store/." "$FILES/"
        fi
"#;

/// The fork-safe pair end to end under act, with a fork's hostile artifact: an analysis.json
/// of its own full of mentions, images, links, HTML and another comment's marker, and a
/// report.md of its own. The comment posted is the one the privileged job rendered from the
/// analyses, inert, under the key derived from their profile names.
#[test]
fn the_fork_safe_pair_posts_what_the_privileged_job_rendered_under_act() {
    let Some(s) = setup() else { return };
    s.server.state().pulls = vec![(7, "0123abcd".into())];
    let other = s.server.seed(
        7,
        "github-actions[bot]",
        "<!-- nsys-gate:other -->\nkeep me",
    );
    let hostile = analysis_json(HOSTILE_PROFILE, HOSTILE_RANGE);
    let act = Act::new(
        s.act,
        s.nsys,
        &[
            (
                ".github/workflows/profile-untrusted.yml",
                UNTRUSTED_WORKFLOW,
            ),
            (".github/workflows/post-comment.yml", POST_WORKFLOW),
            (".github/actions/artifact/action.yml", ARTIFACT_STAND_IN),
            ("hostile/analysis.json", &hostile),
            ("hostile/report.md", HOSTILE_REPORT),
        ],
    );
    let store = act.root.join("artifacts");
    let artifact_dir = ("ARTIFACT_DIR", store.display().to_string());
    let release_url = ("RELEASE_URL", s.mirror.url());

    // The fork's half: its token is read-only (and unused: nothing is posted).
    let started = std::time::Instant::now();
    let (out, _) = act.invoke(
        &s.server,
        &Invocation {
            event: "pull_request",
            event_file: &act.root.join("event.json"),
            workflow: ".github/workflows/profile-untrusted.yml",
            env: vec![artifact_dir.clone(), release_url.clone()],
            token: "ghs_forkReadOnlyToken",
            cargo: false,
        },
    );
    let log = text(&out);
    assert!(out.status.success(), "the fork's half failed:\n{log}");
    eprintln!("the fork's half took {:?}", started.elapsed());
    assert!(s.server.requests().is_empty(), "{:?}", s.server.requests());
    let uploaded = store.join("nsys-gate-pr-analyses/runs");
    for file in [
        "clean/analysis.json",
        "evil/analysis.json",
        "clean/report.md",
    ] {
        assert!(
            uploaded.join(file).is_file(),
            "{file} was not uploaded:\n{log}"
        );
    }

    // The privileged half, on the workflow_run event of the fork's run (whose pull_requests
    // list is empty: the pull request is found by its head commit).
    let event_file = act.root.join("workflow_run.json");
    std::fs::write(
        &event_file,
        r#"{"action": "completed",
            "workflow_run": {"id": 4242, "name": "profile-untrusted", "event": "pull_request",
                             "conclusion": "success", "head_sha": "0123abcd", "head_branch": "feature",
                             "pull_requests": [], "head_repository": {"full_name": "fork/gpu"}},
            "repository": {"full_name": "octo/gpu"}}"#,
    )
    .unwrap();
    let started = std::time::Instant::now();
    let (out, recorded) = act.invoke(
        &s.server,
        &Invocation {
            event: "workflow_run",
            event_file: &event_file,
            workflow: ".github/workflows/post-comment.yml",
            env: vec![artifact_dir, release_url],
            token: TOKEN,
            cargo: false,
        },
    );
    let log = text(&out);
    assert!(out.status.success(), "the privileged half failed:\n{log}");
    eprintln!("the privileged half took {:?}", started.elapsed());
    // Each job gets the release archive through its runner's tool cache (here, one cache for
    // both: the second job finds it there, and checks it against the published .sha256 again).
    assert!(
        log.contains("from the tool cache, its SHA-256 checked against"),
        "{log}"
    );
    let lines: Vec<String> = s.server.requests().iter().map(|r| r.line()).collect();
    assert_eq!(
        lines,
        [
            "GET /repos/octo/gpu/pulls?state=open&per_page=100",
            "GET /repos/octo/gpu/issues/7/comments?per_page=100",
            "POST /repos/octo/gpu/issues/7/comments",
            "GET /repos/octo/gpu/issues/7/comments?per_page=100",
        ],
        "{log}"
    );
    let comments = s.server.comments(7);
    assert_eq!(comments.len(), 2, "{comments:?}");
    assert_eq!(
        (comments[0].id, comments[0].body.as_str()),
        (other, "<!-- nsys-gate:other -->\nkeep me")
    );
    let body = &comments[1].body;
    assert!(
        body.starts_with(&format!(
            "<!-- nsys-gate:{HOSTILE_KEY},smoke-tensor -->\n# "
        )),
        "{body}"
    );
    assert_inert(body);
    // Both analyses are in it, named by their paths in the artifact.
    for path in ["runs/clean/analysis.json", "runs/evil/analysis.json"] {
        assert!(body.contains(path), "{path} not in:\n{body}");
    }
    assert!(
        recorded.contains(&format!(
            "comment=https://github.example/octo/gpu/pull/7#issuecomment-{}",
            comments[1].id
        )),
        "{recorded}\n{log}"
    );
    for r in &s.server.requests() {
        assert_eq!(
            r.header_values("authorization"),
            [format!("Bearer {TOKEN}").as_str()]
        );
    }
    assert!(!log.contains(TOKEN), "the token leaked into act's output");
}

/// action/run.sh puts input text into `::error` commands escaped as the runner reads them
/// (`%`, CR, LF), so an input cannot end the command or start one of its own; the removed
/// `post-report` input fails, naming its replacement. (run.sh alone, with a stand-in binary.)
#[test]
fn run_sh_escapes_inputs_in_workflow_commands() {
    let tmp = assert_fs::TempDir::new().unwrap();
    let fake = tmp.path().join("nsys-gate");
    std::fs::write(&fake, "#!/bin/sh\necho \"called: $*\"\n").unwrap();
    std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let run = |env: &[(&str, &str)]| {
        let out = Command::new("bash")
            .arg(repo().join("action/run.sh"))
            .current_dir(tmp.path())
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("NSYS_GATE", &fake)
            .envs(env.iter().copied())
            .output()
            .unwrap();
        (out.status.code(), text(&out))
    };
    let commands = |log: &str| -> Vec<String> {
        log.split(['\n', '\r'])
            .filter(|l| l.trim_start().starts_with("::"))
            .map(str::to_owned)
            .collect()
    };

    let (code, log) = run(&[("INPUT_RUN_DIR", "none-*%\r::warning::injected")]);
    assert_eq!(code, Some(2), "{log}");
    assert_eq!(
        commands(&log),
        ["::error title=nsys-gate::run-dir 'none-*%25%0D::warning::injected' matches no directory"],
        "{log:?}"
    );

    let (code, log) = run(&[("INPUT_POST_ANALYSES", "missing\n::add-mask::x%")]);
    assert_eq!(code, Some(2), "{log}");
    let found = commands(&log);
    assert_eq!(found.len(), 1, "{log:?}");
    assert!(
        found[0].starts_with(
            "::error title=nsys-gate::post-analyses 'missing%0A::add-mask::x%25' is not a folder"
        ),
        "{log:?}"
    );

    let (code, log) = run(&[("INPUT_POST_REPORT", "results")]);
    assert_eq!(code, Some(2), "{log}");
    assert!(
        log.contains("the post-report input was removed") && log.contains("post-analyses"),
        "{log}"
    );
    assert!(!log.contains("called:"), "{log}");

    // A folder: `post --analyses` with the comment key, nothing else.
    std::fs::create_dir_all(tmp.path().join("results")).unwrap();
    let (code, log) = run(&[
        ("INPUT_POST_ANALYSES", "results"),
        ("INPUT_COMMENT_KEY", "leg 1"),
    ]);
    assert_eq!(code, Some(0), "{log}");
    assert!(
        log.contains("called: post --analyses=results --comment-key=leg 1"),
        "{log}"
    );
    // Values that begin with `-` (issue item 8: `comment-key: -key` was read as an option,
    // "unexpected argument"): every value goes as `--option=value`, which no value can turn
    // into an option of its own.
    std::fs::create_dir_all(tmp.path().join("-results")).unwrap();
    let (code, log) = run(&[
        ("INPUT_POST_ANALYSES", "-results"),
        ("INPUT_COMMENT_KEY", "-key"),
        ("INPUT_COMMENT_AUTHOR", "-bot"),
        ("INPUT_BASELINE", "-base"),
    ]);
    assert_eq!(code, Some(0), "{log}");
    assert!(
        log.contains("called: post --analyses=-results --comment-key=-key --comment-author=-bot --baseline=-base"),
        "{log}"
    );
    // Issue "trust boundary, round 4", item 8: the gate settings reach `post --analyses`,
    // which recomputes the artifact's gate with them.
    let (code, log) = run(&[
        ("INPUT_POST_ANALYSES", "results"),
        ("INPUT_GATE_ON", "high_variance"),
        (
            "INPUT_NO_GATE_ON",
            "missing_iterations, capture_range_missing",
        ),
        ("INPUT_JUNIT", "gate.xml"),
    ]);
    assert_eq!(code, Some(0), "{log}");
    assert!(
        log.contains("called: post --analyses=results --gate-on=high_variance --no-gate-on=missing_iterations --no-gate-on=capture_range_missing --junit=gate.xml"),
        "{log}"
    );
    let (code, log) = run(&[
        ("INPUT_POST_ANALYSES", "results"),
        ("INPUT_RUN_DIR", "runs/*"),
    ]);
    assert_eq!(code, Some(2), "{log}");
    assert!(log.contains("not both"), "{log}");

    // The progress lines of action/lib.sh's `say` (install.sh's, with URLs and paths in
    // them): one line, no command at its start, the legacy `##[` broken.
    let out = Command::new("bash")
        .args(["-c", "source \"$0\"; say \"$1\""])
        .arg(repo().join("action/lib.sh"))
        .arg("url\n::warning::injected\r##[error]x")
        .env_clear()
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "nsys-gate action: url ::warning::injected #\u{200b}#[error]x\n"
    );

    // The new inputs reach the binary as options; gate codes split on commas and spaces and
    // are never glob-expanded.
    std::fs::create_dir_all(tmp.path().join("runs/a")).unwrap();
    let (code, log) = run(&[
        ("INPUT_RUN_DIR", "runs/*"),
        ("INPUT_TOP", "3"),
        ("INPUT_COMMENT_AUTHOR", "profile-bot[bot]"),
        ("INPUT_GATE_ON", "unclosed_ranges, *\ncross_thread_ranges"),
        ("INPUT_NO_GATE_ON", "missing_iterations"),
        ("INPUT_FAIL_ON_POST_ERROR", "true"),
        ("INPUT_JUNIT", "-gate.xml"),
    ]);
    assert_eq!(code, Some(0), "{log}");
    assert!(
        log.contains("called: run --run-dir=runs/a --top=3 --comment-author=profile-bot[bot] --gate-on=unclosed_ranges --gate-on=* --gate-on=cross_thread_ranges --no-gate-on=missing_iterations --junit=-gate.xml --fail-on-post-error"),
        "{log}"
    );
    std::fs::create_dir_all(tmp.path().join("-runs/-a")).unwrap();
    let (code, log) = run(&[
        ("INPUT_RUN_DIR", "-runs/*"),
        ("INPUT_LABEL", "-gpu"),
        ("INPUT_COMMENT_KEY", "-key"),
        ("INPUT_NSYS", "-nsys"),
        ("INPUT_TEMPLATE", "-t.j2"),
        ("INPUT_GATE_ON", "-x"),
    ]);
    assert_eq!(code, Some(0), "{log}");
    assert!(
        log.contains("called: run --run-dir=-runs/-a --nsys=-nsys --template=-t.j2 --label=-gpu --comment-key=-key --gate-on=-x"),
        "{log}"
    );
}

/// Issue item 6: `release-url: -K…` made curl read a config file (here one that fetches
/// /etc/os-release into a path of the attacker's choosing). Only `https://`, `http://` and
/// `file://` URLs are accepted, and curl gets `--` before its URL. (install.sh alone.)
#[test]
fn install_sh_takes_only_http_https_and_file_release_urls() {
    let tmp = assert_fs::TempDir::new().unwrap();
    let version = version();
    let stolen = tmp.path().join("stolen");
    // What curl would read as its config with `-K{tmp}/cfg`: the path the script appends.
    let config = tmp.path().join(format!(
        "cfg/v{version}/nsys-gate-{version}-source-tree.txt"
    ));
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::fs::write(
        &config,
        format!(
            "url = \"file:///etc/os-release\"\noutput = \"{}\"\n",
            stolen.display()
        ),
    )
    .unwrap();
    let install = |release_url: &str| {
        let out = Command::new("bash")
            .arg(repo().join("action/install.sh"))
            .current_dir(tmp.path())
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("GITHUB_ACTION_PATH", repo())
            .env("RUNNER_TOOL_CACHE", tmp.path().join("cache"))
            .env("RUNNER_TEMP", tmp.path())
            .env("INPUT_INSTALL", "release")
            .env("INPUT_RELEASE_URL", release_url)
            .output()
            .unwrap();
        (out.status.code(), text(&out))
    };
    for url in [
        format!("-K{}/cfg", tmp.path().display()),
        "--config=/etc/passwd".to_owned(),
        "ftp://mirror.example/releases".to_owned(),
        "gopher://mirror.example/releases".to_owned(),
        "mirror.example/releases".to_owned(),
    ] {
        let (code, log) = install(&url);
        assert_eq!(code, Some(2), "{url}: {log}");
        assert!(
            log.contains("release-url must be an https://, http:// or file:// URL"),
            "{url}: {log}"
        );
        assert!(!stolen.exists(), "{url}: curl read the attacker's config");
    }
    // A file:// mirror with nothing in it: the usual "could not download", curl having been
    // asked for the URL (after `--`), not for an option.
    let (code, log) = install(&format!("file://{}/empty", tmp.path().display()));
    assert_eq!(code, Some(1), "{log}");
    assert!(log.contains("could not download"), "{log}");
}

/// Issue 37 item 10: a `release-url` on plain `http://` serves both the archive and its
/// `.sha256`, so a network attacker can serve a binary with a matching checksum. It is refused
/// before anything is fetched unless `release-sha256` pins the archive; a pin must be a SHA-256
/// and the published one, and the archive must have it. (install.sh alone, a stand-in release
/// served over loopback HTTP.)
#[test]
fn install_sh_refuses_plain_http_unless_the_archive_is_pinned() {
    let tmp = assert_fs::TempDir::new().unwrap();
    let version = version();
    let asset = format!(
        "nsys-gate-{version}-linux-{}.tar.gz",
        std::env::consts::ARCH
    );
    let mirror = tmp.path().join("mirror");
    let release = mirror.join(format!("v{version}"));
    script(&tmp.path().join("genuine/nsys-gate"), "echo genuine");
    let genuine = archive_of(&tmp.path().join("genuine/nsys-gate"), &release.join(&asset));
    std::fs::write(
        release.join(format!("{asset}.sha256")),
        format!("{genuine}  {asset}\n"),
    )
    .unwrap();
    let server = FileServer::serve(&mirror);
    // install.sh with these inputs; `ca`: curl's CA bundle (the test CA of the TLS front).
    let install_trusting = |mode: &str, url: &str, pin: Option<&str>, ca: Option<PathBuf>| {
        let mut cmd = Command::new("bash");
        cmd.arg(repo().join("action/install.sh"))
            .current_dir(tmp.path())
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("GITHUB_ACTION_PATH", repo())
            .env("RUNNER_TOOL_CACHE", tmp.path().join("cache"))
            .env("RUNNER_TEMP", tmp.path())
            .env("INPUT_INSTALL", mode)
            .env("INPUT_RELEASE_URL", url);
        if let Some(pin) = pin {
            cmd.env("INPUT_RELEASE_SHA256", pin);
        }
        if let Some(ca) = ca {
            cmd.env("CURL_CA_BUNDLE", ca);
        }
        let out = cmd.output().unwrap();
        let path = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        (out.status.code(), path, text(&out))
    };
    let install = |mode: &str, url: &str, pin: Option<&str>| install_trusting(mode, url, pin, None);
    let http = server.url();
    assert!(http.starts_with("http://"), "{http}");

    // No pin (or an empty one): refused before any request, in `release` and `auto` alike.
    for (mode, pin) in [("release", None), ("auto", None), ("release", Some(""))] {
        let (code, _, log) = install(mode, &http, pin);
        assert_eq!(code, Some(2), "{mode}: {log}");
        assert!(
            log.contains(&format!("release-url '{http}' is plain http://")),
            "{mode}: {log}"
        );
        assert!(log.contains("release-sha256"), "{log}");
        assert!(server.requests().is_empty(), "{:?}", server.requests());
    }
    // A pin that is no SHA-256: refused, nothing fetched.
    let (code, _, log) = install("release", &http, Some("abc"));
    assert_eq!(code, Some(2), "{log}");
    assert!(log.contains("release-sha256 must be a SHA-256"), "{log}");
    assert!(server.requests().is_empty(), "{:?}", server.requests());
    // Another archive's digest: the published one is not it; nothing installed.
    let other = "1".repeat(64);
    let (code, path, log) = install("release", &http, Some(&other));
    assert_eq!(code, Some(1), "{log}");
    assert!(
        log.contains(&format!("but release-sha256 pins {other}")),
        "{log}"
    );
    assert!(path.is_empty(), "{path}");
    // The genuine archive's digest (in capitals too): installed over http and run.
    for pin in [genuine.clone(), genuine.to_uppercase()] {
        let (code, path, log) = install("release", &http, Some(&pin));
        assert_eq!(code, Some(0), "{log}");
        let out = Command::new(&path).output().unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "genuine");
    }
    // An https:// release-url whose server redirects to plain http:// (the same files): curl
    // does not follow it, so no pin is bypassed and nothing is installed.
    let redirector = crate::http_fake::Loop::spawn(std::time::Duration::from_secs(60), {
        let http = http.clone();
        move |stream, _| {
            let mut reader = std::io::BufReader::new(stream.try_clone().unwrap());
            let request = crate::http_fake::read_request(&mut reader).unwrap();
            let to = format!("{http}{}", request.target);
            let mut out = stream;
            let _ = crate::http_fake::Response::new(302, vec![("location".into(), to)], Vec::new())
                .write(&mut out, "text/plain");
        }
    });
    let tls = crate::http_fake::TlsFront::before(redirector.port);
    let before = server.requests().len();
    let (code, path, log) = install_trusting(
        "release",
        &tls.url(),
        None,
        Some(crate::http_fake::test_ca()),
    );
    assert_ne!(code, Some(0), "{log}");
    assert!(path.is_empty(), "{path}");
    assert!(tls.connections() >= 1, "the https:// URL was asked: {log}");
    assert_eq!(
        server.requests().len(),
        before,
        "the http:// redirect was followed: {log}"
    );
    // https:// and file:// need no pin, as before; a source build never fetches anything.
    let (code, _, log) = install("release", &format!("file://{}", mirror.display()), None);
    assert_eq!(code, Some(0), "{log}");
    let before = server.requests().len();
    let (code, _, log) = install("source", &http, None);
    assert_eq!(code, Some(1), "{log}");
    assert!(log.contains("needs a Rust toolchain"), "{log}");
    assert_eq!(server.requests().len(), before);
}

/// An executable script at `path` (its folders made).
fn script(path: &Path, body: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
}

/// A release archive at `archive` holding `binary` as `nsys-gate`; returns its SHA-256.
fn archive_of(binary: &Path, archive: &Path) -> String {
    std::fs::create_dir_all(archive.parent().unwrap()).unwrap();
    let status = Command::new("tar")
        .arg("-czf")
        .arg(archive)
        .arg("-C")
        .arg(binary.parent().unwrap())
        .arg("nsys-gate")
        .status()
        .unwrap();
    assert!(status.success());
    let out = Command::new("sha256sum").arg(archive).output().unwrap();
    String::from_utf8_lossy(&out.stdout)[..64].to_owned()
}

/// Issue "trust boundary, round 4", item 7: a binary planted at the computable tool-cache path
/// (`RUNNER_TOOL_CACHE/nsys-gate/VERSION-…`) was run with the token and no check, and a record
/// kept in the same writable cache proves nothing. Planted here: the binaries where the cache
/// kept them (release and source builds), and a release archive with a matching `.sha256`
/// beside it. None of them is run: the cached archive is checked against the published
/// `.sha256`, fetched again, so the genuine one is downloaded, checked, unpacked into the
/// job's own folder and kept (the next job checks it again); a cached source build is never
/// used (without cargo, the install fails saying so). (install.sh alone, a `file://` mirror
/// of a stand-in release.)
#[test]
fn a_binary_planted_in_the_tool_cache_is_never_run() {
    let tmp = assert_fs::TempDir::new().unwrap();
    let version = version();
    let tree = String::from_utf8(
        Command::new(repo().join("action/tree-hash.sh"))
            .arg(repo())
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap()
    .trim()
    .to_owned();
    let asset = format!(
        "nsys-gate-{version}-linux-{}.tar.gz",
        std::env::consts::ARCH
    );
    let mirror = tmp.path().join("mirror");
    let release = mirror.join(format!("v{version}"));
    script(&tmp.path().join("genuine/nsys-gate"), "echo genuine");
    let genuine = archive_of(&tmp.path().join("genuine/nsys-gate"), &release.join(&asset));
    std::fs::write(
        release.join(format!("{asset}.sha256")),
        format!("{genuine}  {asset}\n"),
    )
    .unwrap();
    let published_tree = release.join(format!("nsys-gate-{version}-source-tree.txt"));
    std::fs::write(&published_tree, format!("{tree}\n")).unwrap();

    let ran = tmp.path().join("planted-ran");
    let planted = format!("touch '{}'; echo planted", ran.display());
    let cache = tmp.path().join("cache/nsys-gate");
    let tree_dir = cache.join(format!("{version}-{}", &tree[..16]));
    for at in [
        cache.join(format!("{version}-release/nsys-gate")),
        tree_dir.join("release/nsys-gate"),
        tree_dir.join("source/nsys-gate"),
    ] {
        script(&at, &planted);
    }
    script(&tmp.path().join("planted/nsys-gate"), &planted);
    let cached = cache.join(format!("{version}-release/{asset}"));
    let planted_sum = archive_of(&tmp.path().join("planted/nsys-gate"), &cached);
    std::fs::write(
        cache.join(format!("{version}-release/{asset}.sha256")),
        format!("{planted_sum}  {asset}\n"),
    )
    .unwrap();

    let runner_temp = tmp.path().join("runner-temp");
    std::fs::create_dir_all(&runner_temp).unwrap();
    let install = |mode: &str| {
        let out = Command::new("bash")
            .arg(repo().join("action/install.sh"))
            .current_dir(tmp.path())
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("GITHUB_ACTION_PATH", repo())
            .env("RUNNER_TOOL_CACHE", tmp.path().join("cache"))
            .env("RUNNER_TEMP", &runner_temp)
            .env("INPUT_INSTALL", mode)
            .env("INPUT_RELEASE_URL", format!("file://{}", mirror.display()))
            .output()
            .unwrap();
        let path = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        (out.status.code(), path, text(&out))
    };
    let ran_genuine = |path: &str| {
        assert!(path.starts_with(runner_temp.to_str().unwrap()), "{path}");
        let out = Command::new(path).output().unwrap();
        String::from_utf8_lossy(&out.stdout).trim() == "genuine"
    };
    for (mode, says) in [
        ("release", "is not the published one"),
        ("auto", "from the tool cache, its SHA-256 checked against"),
        (
            "release",
            "from the tool cache, its SHA-256 checked against",
        ),
    ] {
        let (code, path, log) = install(mode);
        assert_eq!(code, Some(0), "{mode}: {log}");
        assert!(log.contains(says), "{mode}: {log}");
        assert!(ran_genuine(&path), "{mode}: {path}\n{log}");
        assert!(!ran.exists(), "{mode}: a planted binary ran\n{log}");
    }
    // The cache now keeps the genuine archive.
    assert_eq!(archive_of_sum(&cached), genuine);
    // A tree that is not the release's, and no cargo: the planted source build is not used.
    std::fs::write(&published_tree, format!("{}\n", "0".repeat(64))).unwrap();
    let (code, _, log) = install("auto");
    assert_eq!(code, Some(1), "{log}");
    assert!(log.contains("needs a Rust toolchain"), "{log}");
    assert!(!ran.exists(), "a planted binary ran\n{log}");
}

/// The SHA-256 of a file.
fn archive_of_sum(path: &Path) -> String {
    let out = Command::new("sha256sum").arg(path).output().unwrap();
    String::from_utf8_lossy(&out.stdout)[..64].to_owned()
}

/// Every input of action.yml is passed to a step and documented in docs/github-action.md's
/// table, and so is every output; nothing is documented that action.yml does not have.
#[test]
fn action_inputs_and_outputs_are_used_and_documented() {
    let action = std::fs::read_to_string(repo().join("action.yml")).unwrap();
    let doc = std::fs::read_to_string(repo().join("docs/github-action.md")).unwrap();
    let section = |name: &str| -> Vec<String> {
        let mut names = Vec::new();
        let mut inside = false;
        for line in action.lines() {
            if !line.starts_with(' ') && !line.is_empty() {
                inside = line == format!("{name}:");
                continue;
            }
            if let Some(key) = line.strip_prefix("  ").and_then(|l| l.strip_suffix(':')) {
                if inside && !key.starts_with(' ') {
                    names.push(key.to_owned());
                }
            }
        }
        names
    };
    let table = |heading: &str| -> Vec<String> {
        let start = doc.find(heading).unwrap();
        doc[start..]
            .lines()
            .skip_while(|l| !l.starts_with("| "))
            .take_while(|l| l.starts_with('|'))
            .filter_map(|l| {
                l.strip_prefix("| `")?
                    .split_once('`')
                    .map(|(n, _)| n.to_owned())
            })
            .collect()
    };
    // The runner refuses an expression anywhere but a value (a description holding one fails
    // every workflow that uses the action): each `${{` is in a `key: value` line.
    for line in action.lines().filter(|l| l.contains("${{")) {
        let key = line.trim_start().split_once(':').map(|(k, _)| k);
        assert!(
            key.is_some_and(|k| !k.is_empty()
                && k.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')),
            "an expression outside a value: {line:?}"
        );
    }
    let inputs = section("inputs");
    assert!(inputs.len() > 15, "{inputs:?}");
    for input in &inputs {
        assert!(
            action.contains(&format!("${{{{ inputs.{input} }}}}")),
            "input {input} is passed to no step"
        );
    }
    let mut documented = table("\n## Inputs\n");
    let mut declared = inputs.clone();
    documented.sort();
    declared.sort();
    assert_eq!(
        documented, declared,
        "docs/github-action.md's inputs table vs action.yml"
    );

    let outputs = section("outputs");
    for output in &outputs {
        assert!(
            action.contains(&format!("steps.run.outputs.{output} }}}}")),
            "output {output} is not the run step's"
        );
    }
    let mut documented = table("\n## Outputs\n");
    let mut declared = outputs;
    documented.sort();
    declared.sort();
    assert_eq!(
        documented, declared,
        "docs/github-action.md's outputs table vs action.yml"
    );
}

/// `baseline: auto` under act (issue 14): the pull request's job finds the base branch's run
/// of this workflow at the base commit through the loopback API, downloads its artifact by the
/// redirect to a second loopback server (the storage host, which must not see the token), and
/// the comment it posts holds the comparison. act cannot run upload-artifact, so the base
/// branch's artifact is made here, as the push run of profile.yml would have uploaded it.
const BASELINE_WORKFLOW: &str = r#"name: profile
on: pull_request
permissions:
  contents: read
  actions: read
  pull-requests: write
jobs:
  gate:
    runs-on: self-hosted
    steps:
      - uses: actions/checkout@v4
      - id: gate
        uses: ./nsys-gate
        with:
          run-dir: ${{ env.RUN_DIR }}
          nsys: ${{ env.NSYS }}
          install: release
          release-url: ${{ env.RELEASE_URL }}
          release-sha256: ${{ env.RELEASE_SHA256 }}
          baseline: auto
      - if: always()
        name: Record the outputs
        env:
          GATE: ${{ steps.gate.outputs.gate }}
          COMPARISON: ${{ steps.gate.outputs.comparison-path }}
        run: printf 'gate=%s\ncomparison=%s\n' "$GATE" "$COMPARISON" > "$RESULT_FILE"
"#;

#[test]
fn baseline_auto_judges_against_the_base_branchs_push_runs_under_act() {
    use std::io::Write as _;
    let Some(s) = setup() else { return };
    // The base branch's history: ten push runs (501 oldest, 510 newest, at the event's base
    // commit 4567ef01), each with its own artifact holding `clean`'s analysis as that run
    // would give it (its durations moved by its own offset, about 0.4 % run to run), zipped
    // as upload-artifact does; the artifact of run 505 has expired.
    let base = crate::common::fixture("clean");
    let out = crate::common::analyze(&base.dir, &s.nsys, &[]);
    assert_eq!(out.status.code(), Some(0));
    let analysis = std::fs::read(base.path("analysis.json")).unwrap();
    let storage_root = assert_fs::TempDir::new().unwrap();
    std::fs::create_dir_all(storage_root.path().join("blob")).unwrap();
    let offsets = [
        1.003, 0.996, 1.005, 0.998, 1.001, 0.994, 1.002, 0.997, 1.004, 0.999,
    ];
    for (k, factor) in offsets.iter().enumerate() {
        let file =
            std::fs::File::create(storage_root.path().join(format!("blob/run-{k}.zip"))).unwrap();
        let mut zip = zip::ZipWriter::new(file);
        zip.start_file(
            "clean/analysis.json",
            zip::write::SimpleFileOptions::default(),
        )
        .unwrap();
        let commit = if k == 9 {
            "4567ef01".to_owned()
        } else {
            format!("{k}0a0b0c0")
        };
        zip.write_all(&crate::common::rerun_of(
            &analysis,
            *factor,
            &format!("base-{k}"),
            &commit,
        ))
        .unwrap();
        zip.finish().unwrap();
    }
    let storage = FileServer::serve(storage_root.path());
    {
        use crate::github_server::Download;
        let mut state = s.server.state();
        state.list_page_cap = 5;
        for k in (0..10u64).rev() {
            let id = 501 + k;
            let sha = if k == 9 {
                "4567ef01".to_owned()
            } else {
                format!("{k}0a0b0c0")
            };
            state.workflow_runs.push((
                "profile.yml".into(),
                serde_json::json!({"id": id, "head_sha": sha, "head_branch": "main",
                                   "event": "push", "conclusion": "success",
                                   "created_at": format!("2026-11-{:02}T08:00:00Z", 10 + k),
                                   "head_repository": {"full_name": "octo/gpu"}}),
            ));
            state.artifacts.push((
                id,
                serde_json::json!({"id": 600 + id, "name": "nsys-gate-analysis",
                                   "expired": id == 505}),
            ));
            state.downloads.insert(
                600 + id,
                Download::Redirect(format!("{}/blob/run-{k}.zip?sig=x", storage.url())),
            );
        }
    }
    let act = Act::new(
        s.act,
        s.nsys,
        &[(".github/workflows/profile.yml", BASELINE_WORKFLOW)],
    );
    let event_file = act.root.join("event.json");
    let (out, recorded) = act.invoke(
        &s.server,
        &Invocation {
            event: "pull_request",
            event_file: &event_file,
            workflow: ".github/workflows/profile.yml",
            env: vec![
                ("RUN_DIR", "runs/clean".to_owned()),
                ("RELEASE_URL", s.mirror.url()),
                (
                    "GITHUB_WORKFLOW_REF",
                    "octo/gpu/.github/workflows/profile.yml@refs/pull/7/merge".to_owned(),
                ),
            ],
            token: TOKEN,
            cargo: false,
        },
    );
    let log = text(&out);
    assert!(out.status.success(), "act failed:\n{log}");
    assert!(recorded.contains("gate=pass"), "{recorded}\n{log}");
    assert!(recorded.contains("comparison.json"), "{recorded}\n{log}");
    let comments = s.server.comments(7);
    assert_eq!(comments.len(), 1, "{log}");
    let body = &comments[0].body;
    // The history and a verdict: the head is the same trace, so within its noise.
    assert!(body.contains("### Compared with the base branch"), "{body}");
    assert!(
        body.contains(
            "the base branch `main`: its 10 newest successful push runs of `profile.yml`"
        ),
        "{body}"
    );
    assert!(
        body.contains("within noise (the last 9 base runs, which see changes of about"),
        "{body}"
    );
    assert!(
        body.contains("<summary>The base runs, oldest first (9)</summary>"),
        "{body}"
    );
    assert!(body.contains("run-to-run sd"), "{body}");
    // The expired artifact is a note.
    assert!(
        body.contains("the artifact `nsys-gate-analysis` of workflow run 505"),
        "{body}"
    );
    assert!(!body.contains("not like for like"), "{body}");
    // The runs were listed five a page; the storage host got nine downloads and no token.
    let listed = s
        .server
        .requests()
        .iter()
        .filter(|r| r.path.contains("/actions/workflows/profile.yml/runs"))
        .count();
    assert_eq!(listed, 2, "{log}");
    let stored = storage.requests_with_headers();
    assert_eq!(stored.len(), 9, "{log}");
    for (_, headers) in &stored {
        assert!(headers
            .iter()
            .all(|(n, v)| n != "authorization" && !v.contains(TOKEN)));
    }
    assert!(!log.contains(TOKEN), "the token leaked into act's output");
}
