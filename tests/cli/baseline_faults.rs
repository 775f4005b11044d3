//! `--baseline auto` under attack (issue "trust boundary, round 3"): where a redirect may lead,
//! a storage host that trickles, a signal in the middle of a download or an unpacking, and
//! what a 410 is called. No nsys: the head's analysis.json and the base runs' artifacts are
//! made by `analyze --reuse-stats` from CSVs ([`analysis_json`]).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use rustix::process::Signal;
use serde_json::json;
use zip::write::SimpleFileOptions;

use crate::baseline_auto::{notes, report_auto_cmd, zip_into, BASE_SHA};
use crate::common::{assert_status, fixture, send, stderr, wait_for, Run};
use crate::file_server::FileServer;
use crate::github_server::{Download, Fault, Server};
use crate::post::analyses::analysis_json;

/// The head: a run directory holding an analysis.json of the profile `smoke`.
pub fn head() -> Run {
    let run = fixture("clean");
    std::fs::write(run.path("analysis.json"), analysis_json("smoke", "work")).unwrap();
    run
}

/// A server whose base branch `main` has the push runs `ids` (newest first; the first at the
/// base commit), each with an artifact (`id + 100`) whose download answers as `download`
/// says for that run.
pub fn server_with(ids: &[u64], download: impl Fn(u64) -> Download) -> Server {
    let server = Server::github();
    let mut s = server.state();
    for (k, &id) in ids.iter().enumerate() {
        let sha = if k == 0 {
            BASE_SHA.to_owned()
        } else {
            format!("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa{id:04}")
        };
        s.workflow_runs.push((
            "profile.yml".to_owned(),
            json!({"id": id, "head_sha": sha, "head_branch": "main", "event": "push",
                   "status": "completed", "conclusion": "success",
                   "created_at": "2026-11-01T12:00:00Z",
                   "head_repository": {"full_name": "octo/gpu"}}),
        ));
        s.artifacts.push((
            id,
            json!({"id": id + 100, "name": "nsys-gate-analysis", "expired": false, "size_in_bytes": 1000}),
        ));
        s.downloads.insert(id + 100, download(id));
    }
    drop(s);
    server
}

/// A storage host's folder, next to the head's, holding `run.zip`: an artifact of the
/// profile `smoke`.
pub fn run_zip(head: &Run) -> PathBuf {
    let storage_root = head.dir.parent().unwrap().join("blobs");
    let artifact = analysis_json("smoke", "work");
    zip_into(
        &storage_root,
        "run.zip",
        &[("smoke/analysis.json", artifact.as_bytes())],
    );
    storage_root
}

/// `report --baseline auto` (see [`report_auto_cmd`]) against `server`, its temporary folder
/// (`TMPDIR`) at `tmp`.
pub fn report_in(head: &Run, server: &Server, tmp: &Path, extra: &[&str]) -> Command {
    let mut cmd = report_auto_cmd(head, &server.api_url(), extra);
    cmd.env("TMPDIR", tmp);
    cmd
}

/// What is left in a temporary folder.
pub fn left_in(tmp: &Path) -> Vec<PathBuf> {
    let mut left = Vec::new();
    let mut stack = vec![tmp.to_owned()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p.clone());
            }
            left.push(p);
        }
    }
    left
}

/// Issue item 5: with a plain-`http://` API, a zip redirect to `https://`, `ftp://` or
/// `gopher://` was fetched as plain HTTP. A redirect is followed only to http(s), never from
/// https to http, and from an http API only to http: anything else is a note saying why, and
/// the storage host gets no request.
#[test]
fn a_redirect_is_followed_only_to_the_apis_own_scheme() {
    let head = head();
    let storage_root = run_zip(&head);
    let storage = FileServer::serve(&storage_root);
    let port = storage.url().rsplit(':').next().unwrap().to_owned();
    let tmp = assert_fs::TempDir::new().unwrap();
    for scheme in ["https", "ftp", "gopher"] {
        let location = format!("{scheme}://127.0.0.1:{port}/run.zip");
        let server = server_with(&[501], |_| Download::Redirect(location.clone()));
        let out = report_in(&head, &server, tmp.path(), &[]).output().unwrap();
        assert_status(&out, 0);
        assert!(
            storage.requests().is_empty(),
            "{scheme}: the storage host was asked for {:?}\n{}",
            storage.requests(),
            stderr(&out)
        );
        let notes = notes(&head);
        assert!(
            notes.contains(&format!("the redirect leads to a {scheme}:// URL"))
                && notes.contains("not followed"),
            "{scheme}: {notes}"
        );
    }
    // The API's own scheme is followed.
    let location = format!("{}/run.zip", storage.url());
    let server = server_with(&[501], |_| Download::Redirect(location.clone()));
    let out = report_in(&head, &server, tmp.path(), &[]).output().unwrap();
    assert_status(&out, 0);
    assert_eq!(storage.requests(), ["/run.zip"], "{}", stderr(&out));
}

/// Issue item 2: a storage host sending 1 byte a second made `--baseline auto` take 119 s on a
/// 60 s budget. One deadline covers every request, redirect and byte of the stage: here 3 s,
/// the first download trickling, a second run never started.
#[test]
fn a_storage_host_that_trickles_cannot_stretch_the_baseline_deadline() {
    let head = head();
    let storage_root = run_zip(&head);
    let storage = FileServer::dripping(&storage_root, Duration::from_secs(1));
    let location = format!("{}/run.zip", storage.url());
    let server = server_with(&[502, 501], |_| Download::Redirect(location.clone()));
    let tmp = assert_fs::TempDir::new().unwrap();
    let started = Instant::now();
    let out = report_in(&head, &server, tmp.path(), &["--baseline-timeout", "3"])
        .output()
        .unwrap();
    let took = started.elapsed();
    eprintln!("--baseline-timeout 3 against a storage host sending 1 byte/s: {took:?}");
    assert_status(&out, 0);
    assert!(took < Duration::from_millis(4500), "took {took:?}");
    let notes = notes(&head);
    assert!(
        notes.contains(
            "2 of 2 base runs were not fetched before the time limit of 3 s (--baseline-timeout)"
        ),
        "{notes}"
    );
    assert!(left_in(tmp.path()).is_empty(), "{:?}", left_in(tmp.path()));
}

/// The first `nsys-gate-baseline-*` folder in `tmp` holding `name`, if any.
fn started(tmp: &Path, name: &str) -> bool {
    std::fs::read_dir(tmp)
        .into_iter()
        .flatten()
        .flatten()
        .any(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("nsys-gate-baseline-")
                && e.path().join(name).exists()
        })
}

/// `report --baseline auto` against one base run (501) whose zip is at `zip_url`, its
/// temporary folder at `tmp`, sent `signal` once `ready` returns: its output, and how long it
/// took to stop after the signal.
fn signalled(
    head: &Run,
    zip_url: &str,
    tmp: &Path,
    signal: Signal,
    ready: impl FnOnce(),
) -> (Output, Duration) {
    let server = server_with(&[501], |_| Download::Redirect(zip_url.to_owned()));
    let child: Child = report_in(head, &server, tmp, &["--baseline-timeout", "60"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    ready();
    let sent = Instant::now();
    send(&child, signal);
    let out = child.wait_with_output().unwrap();
    (out, sent.elapsed())
}

fn a_signal_during_the_download_removes_it(signal: Signal, name: &str, status: i32) {
    let head = head();
    let storage_root = run_zip(&head);
    let storage = FileServer::dripping(&storage_root, Duration::from_millis(200));
    let tmp = assert_fs::TempDir::new().unwrap();
    let (out, stopping) = signalled(
        &head,
        &format!("{}/run.zip", storage.url()),
        tmp.path(),
        signal,
        || {
            wait_for("the download to start", || {
                started(tmp.path(), "artifact.zip")
            });
            std::thread::sleep(Duration::from_millis(600));
        },
    );
    assert!(stopping < Duration::from_secs(5), "{stopping:?}");
    assert_status(&out, status);
    let err = stderr(&out);
    assert!(
        err.contains(&format!(
            "stopped by {name} while downloading the baseline artifact of workflow run 501"
        )),
        "{err}"
    );
    assert!(err.contains("its temporary folder was removed"), "{err}");
    assert!(left_in(tmp.path()).is_empty(), "{:?}", left_in(tmp.path()));
    // Nothing of the report was written: the command stopped.
    assert!(!head.path("report.md").exists());
}

/// Issue item 3: SIGTERM during a slow artifact download left
/// `nsys-gate-baseline-*/artifact.zip` behind and said nothing.
#[test]
fn sigterm_during_a_download_removes_it_and_says_so() {
    a_signal_during_the_download_removes_it(Signal::TERM, "SIGTERM", 143);
}

#[test]
fn sigint_during_a_download_removes_it_and_says_so() {
    a_signal_during_the_download_removes_it(Signal::INT, "SIGINT", 130);
}

/// Issue item 3: killed while unpacking 250 entries of 4 MiB, 416 MB were left behind.
#[test]
fn a_signal_while_unpacking_removes_what_was_unpacked() {
    let head = head();
    let storage_root = head.dir.parent().unwrap().join("blobs");
    std::fs::create_dir_all(&storage_root).unwrap();
    // 250 entries of 4 MiB each (1000 MiB unpacked, under the 1 GiB bound), all copies of one
    // compressed entry: a zip of about a megabyte.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(storage_root.join("big.zip"))
        .unwrap();
    let mut w = zip::ZipWriter::new(file);
    w.start_file("r0/analysis.json", SimpleFileOptions::default())
        .unwrap();
    let chunk = vec![b' '; 1 << 20];
    for _ in 0..4 {
        w.write_all(&chunk).unwrap();
    }
    for i in 1..250 {
        w.deep_copy_file("r0/analysis.json", &format!("r{i}/analysis.json"))
            .unwrap();
    }
    w.finish().unwrap();
    let storage = FileServer::serve(&storage_root);
    let tmp = assert_fs::TempDir::new().unwrap();
    let (out, _) = signalled(
        &head,
        &format!("{}/big.zip", storage.url()),
        tmp.path(),
        Signal::TERM,
        || {
            wait_for("the unpacking to start", || {
                started(tmp.path(), "analyses/r0/analysis.json")
            })
        },
    );
    assert_status(&out, 143);
    let err = stderr(&out);
    assert!(
        err.contains("stopped by SIGTERM while") && err.contains("workflow run 501"),
        "{err}"
    );
    assert!(left_in(tmp.path()).is_empty(), "{:?}", left_in(tmp.path()));
}

/// Also seen: a 410 on the runs list was explained as an expired artifact. A 410 is named for
/// the request it answered: the list of runs is gone (an old API, a workflow removed), the
/// artifact's zip has expired.
#[test]
fn a_410_is_named_for_the_request_it_answered() {
    let head = head();
    let tmp = assert_fs::TempDir::new().unwrap();
    let server = server_with(&[501], |_| {
        Download::Status(410, "Artifact has expired".into())
    });
    server.fault(Fault::new(
        "GET",
        "/actions/workflows/",
        410,
        json!({"message": "Gone"}).to_string(),
    ));
    let out = report_in(&head, &server, tmp.path(), &[]).output().unwrap();
    assert_status(&out, 0);
    let first = notes(&head);
    assert!(
        first.contains("listing the push runs of workflow `profile.yml`")
            && first.contains("HTTP 410")
            && !first.contains("expired"),
        "{first}"
    );
    let out = report_in(&head, &server, tmp.path(), &[]).output().unwrap();
    assert_status(&out, 0);
    let second = notes(&head);
    assert!(
        second.contains("workflow run 501")
            && second.contains("the artifact has expired (HTTP 410: Artifact has expired)"),
        "{second}"
    );
}
