//! action.yml end to end: a temporary git repository whose workflow uses the action by path
//! from this checkout, run twice by real `act` in host mode (`-P self-hosted=-self-hosted`)
//! against the local GitHub test server, with real nsys, from a clean environment (act in host
//! mode hands the caller's whole environment to the steps, so nothing real may leak in).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::repo;
use crate::github_server::Server;
use crate::require_nsys;

const ACT_VERSION: &str = "0.2.89";
const TOKEN: &str = "ghs_e2eSecretThatMustNotLeak0123456789";

fn act() -> Option<PathBuf> {
    let path = repo().join(format!(".tools/act-{ACT_VERSION}/bin/act"));
    if path.is_file() {
        return Some(path);
    }
    let hint = format!(
        "act is not installed at {} (run `scripts/install-act.sh`)",
        path.display()
    );
    if std::env::var_os("CI").is_some() {
        panic!("{hint}; CI is set, so this is a failure, not a skip");
    }
    eprintln!("SKIPPED: {hint}; set CI=1 to make this a failure");
    None
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
      - id: gate
        uses: ./nsys-gate
        with:
          run-dir: ${{ env.RUN_DIR }}
          nsys: ${{ env.NSYS }}
          comment-key: smoke
      - if: always()
        name: Record the outputs
        env:
          GATE: ${{ steps.gate.outputs.gate }}
          COMMENT: ${{ steps.gate.outputs.comment-url }}
          REPORT: ${{ steps.gate.outputs.report-path }}
          ANALYSES: ${{ steps.gate.outputs.analysis-paths }}
        run: printf 'gate=%s\ncomment=%s\nreport=%s\nanalyses=%s\n' "$GATE" "$COMMENT" "$REPORT" "$ANALYSES" > "$RESULT_FILE"
"#;

struct Act {
    _tmp: assert_fs::TempDir,
    home: PathBuf,
    root: PathBuf,
    repo: PathBuf,
    act: PathBuf,
    nsys: PathBuf,
}

impl Act {
    fn new(act: PathBuf, nsys: PathBuf) -> Act {
        let tmp = assert_fs::TempDir::new().unwrap();
        let root = tmp.path().to_owned();
        let repo_dir = root.join("repo");
        std::fs::create_dir_all(repo_dir.join(".github/workflows")).unwrap();
        std::fs::create_dir_all(repo_dir.join("nsys-gate")).unwrap();
        std::fs::create_dir_all(repo_dir.join("runs")).unwrap();
        // The runner's home (and so act's tool cache, where the action caches its build) is
        // kept under target/, so that local reruns reuse the build; CI starts without it.
        let home = repo().join("target/act-e2e-home");
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
        std::fs::write(repo_dir.join(".github/workflows/profile.yml"), WORKFLOW).unwrap();
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

    /// Runs the workflow once on `run_dir`; returns act's output and the recorded outputs.
    fn run(&self, server: &Server, run_dir: &str) -> (Output, String) {
        let result = self.root.join("result.txt");
        let _ = std::fs::remove_file(&result);
        let cargo_home = std::env::var("CARGO_HOME")
            .unwrap_or_else(|_| format!("{}/.cargo", std::env::var("HOME").unwrap()));
        let rustup_home = std::env::var("RUSTUP_HOME")
            .unwrap_or_else(|_| format!("{}/.rustup", std::env::var("HOME").unwrap()));
        let out = Command::new(&self.act)
            .current_dir(&self.repo)
            // A clean environment: act in host mode passes the caller's environment to the
            // steps. Only a PATH with cargo, and where the Rust toolchain lives, go in.
            .env_clear()
            .env(
                "PATH",
                format!("{cargo_home}/bin:/usr/local/bin:/usr/bin:/bin"),
            )
            .env("HOME", &self.home)
            .env("CARGO_HOME", &cargo_home)
            .env("RUSTUP_HOME", &rustup_home)
            .args(["pull_request", "-e"])
            .arg(self.root.join("event.json"))
            .args(["-P", "self-hosted=-self-hosted"])
            .args(["--env", &format!("GITHUB_API_URL={}", server.api_url())])
            .args(["--env", "GITHUB_REPOSITORY=octo/gpu"])
            .args(["--env", &format!("RUN_DIR=runs/{run_dir}")])
            .args(["--env", &format!("NSYS={}", self.nsys.display())])
            .args(["--env", &format!("RESULT_FILE={}", result.display())])
            .args(["-s", &format!("GITHUB_TOKEN={TOKEN}")])
            .output()
            .unwrap();
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
fn the_action_builds_posts_updates_and_gates_under_act() {
    let nsys = require_nsys!("2024.2");
    let Some(act) = act() else { return };
    let server = Server::github_for(std::time::Duration::from_secs(1500));
    let act = Act::new(act, nsys);

    // First run: a clean run directory. The binary is built from the action's source, the
    // comment is created, the job passes.
    let (out, recorded) = act.run(&server, "clean");
    let log = text(&out);
    assert!(out.status.success(), "act failed:\n{log}");
    // Built from the action's source (or, on a local rerun with the same source, the build
    // cached by an earlier run).
    assert!(
        log.contains("building nsys-gate") || log.contains("using cached build"),
        "{log}"
    );
    assert!(log.contains("Summary - "), "no step summary:\n{log}");
    assert!(recorded.contains("gate=pass"), "{recorded}\n{log}");
    assert!(recorded.contains("/runs/clean/analysis.json"), "{recorded}");
    assert!(recorded.contains("report.md"), "{recorded}");
    let comments = server.comments(7);
    assert_eq!(comments.len(), 1, "{comments:?}\n{log}");
    let id = comments[0].id;
    assert!(
        comments[0].body.starts_with("<!-- nsys-gate:smoke -->"),
        "{}",
        comments[0].body
    );
    assert!(recorded.contains("comment=http"), "{recorded}");
    let posts: Vec<String> = server.requests().iter().map(|r| r.line()).collect();
    assert!(
        posts
            .iter()
            .any(|l| l.starts_with("POST /repos/octo/gpu/issues/7/comments")),
        "{posts:?}"
    );

    // Second run: missing iterations. The cached binary is used, the same comment is
    // updated in place, and the job fails on the gate.
    let before = server.requests().len();
    let (out, recorded) = act.run(&server, "missing-iterations");
    let log = text(&out);
    assert!(
        !out.status.success(),
        "the job passed on missing iterations:\n{log}"
    );
    assert!(log.contains("using cached build"), "{log}");
    assert!(recorded.contains("gate=fail"), "{recorded}\n{log}");
    let comments = server.comments(7);
    assert_eq!(comments.len(), 1, "{comments:?}");
    assert_eq!(comments[0].id, id);
    assert!(
        comments[0].body.contains("missing_iterations"),
        "{}",
        comments[0].body
    );
    let requests = server.requests();
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
