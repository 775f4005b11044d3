//! `post` (and `run`'s posting) against a local GitHub-like server: the exact requests
//! (method, path, headers, JSON body), pagination, faults, Gitea, and the token never shown.

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use assert_fs::TempDir;
use serde_json::{json, Value};

use crate::common::{assert_status, bin, fixture, stderr};
use crate::github_server::{Fault, Recorded, Server, ECHO_AUTHORIZATION, ECHO_CREDENTIAL};
use crate::require_nsys;

pub mod analyses;

const SECRET: &str = "ghs_nsysGateTestSecret_7Qx2Lp9Vw4";
const BOT: &str = "github-actions[bot]";

/// A report the way `report`/`run` write it: the keyed marker first.
fn report_text(key: &str, extra: &str) -> String {
    format!("<!-- nsys-gate:{key} -->\n# ✅ nsys-gate: gate passed\n\n**Gate passed:** 1 run directory.\n{extra}")
}

struct Case {
    tmp: TempDir,
    report: PathBuf,
}

impl Case {
    fn new(report: &str) -> Self {
        let tmp = TempDir::new().unwrap();
        let path = tmp.path().join("report.md");
        std::fs::write(&path, report).unwrap();
        Case { tmp, report: path }
    }

    fn event(&self, name: &str, payload: Value) -> (String, PathBuf) {
        let path = self.tmp.path().join(format!("{name}.json"));
        std::fs::write(&path, payload.to_string()).unwrap();
        (name.to_owned(), path)
    }

    fn pr_event(&self, n: u64) -> (String, PathBuf) {
        self.event(
            "pull_request",
            json!({"action": "synchronize", "number": n, "pull_request": {"number": n, "head": {"sha": "abc123", "repo": {"fork": false, "full_name": "octo/gpu"}}}}),
        )
    }

    /// `nsys-gate post --report FILE ARGS…` with the server's URL, the secret token and the
    /// event.
    fn post(&self, server: &Server, event: Option<(String, PathBuf)>, args: &[&str]) -> Output {
        self.post_with(server, event, args, &[])
    }

    /// As [`Case::post`], with more environment variables (they win over `github_env`'s).
    fn post_with(
        &self,
        server: &Server,
        event: Option<(String, PathBuf)>,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> Output {
        let mut cmd = bin();
        cmd.arg("post").arg("--report").arg(&self.report).args(args);
        github_env(&mut cmd, server, event);
        cmd.envs(env.iter().copied());
        let out = cmd.output().expect("run nsys-gate");
        assert_no_secret(&out, self.tmp.path());
        out
    }

    /// As [`Case::post`] in GitHub Actions: the step outputs go to a file in the case's folder
    /// (which [`assert_no_secret`] reads).
    fn post_in_actions(
        &self,
        server: &Server,
        event: Option<(String, PathBuf)>,
        args: &[&str],
    ) -> Output {
        let outputs = self.tmp.path().join("github-output.txt");
        let summary = self.tmp.path().join("summary.md");
        self.post_with(
            server,
            event,
            args,
            &[
                ("GITHUB_ACTIONS", "true"),
                ("GITHUB_OUTPUT", outputs.to_str().unwrap()),
                ("GITHUB_STEP_SUMMARY", summary.to_str().unwrap()),
            ],
        )
    }
}

/// The variables [`github_env`] removes (`None`) or sets.
fn github_vars(server: &Server) -> Vec<(&'static str, Option<String>)> {
    let mut vars: Vec<(&str, Option<String>)> = [
        "GITHUB_ACTIONS",
        "GITHUB_OUTPUT",
        "GITHUB_STEP_SUMMARY",
        "GITHUB_EVENT_NAME",
        "GITHUB_EVENT_PATH",
        "NSYS",
    ]
    .into_iter()
    .map(|var| (var, None))
    .collect();
    vars.extend([
        ("GITHUB_API_URL", Some(server.api_url())),
        ("GITHUB_TOKEN", Some(SECRET.to_owned())),
        ("GITHUB_REPOSITORY", Some("octo/gpu".to_owned())),
        ("RUST_BACKTRACE", Some("1".to_owned())),
        ("RUST_LOG", Some("trace".to_owned())),
    ]);
    vars
}

fn github_env(cmd: &mut assert_cmd::Command, server: &Server, event: Option<(String, PathBuf)>) {
    for (var, value) in github_vars(server) {
        match value {
            Some(value) => cmd.env(var, value),
            None => cmd.env_remove(var),
        };
    }
    if let Some((name, path)) = event {
        cmd.env("GITHUB_EVENT_NAME", name)
            .env("GITHUB_EVENT_PATH", path);
    }
}

/// The token is in no output and no file written.
#[track_caller]
fn assert_no_secret(out: &Output, dir: &Path) {
    for (what, bytes) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
        assert!(
            !String::from_utf8_lossy(bytes).contains(SECRET),
            "the token appears in {what}"
        );
    }
    assert_no_secret_in_files(dir);
}

/// Not even the start of the token (an echo cut short) is in the output or the files.
#[track_caller]
fn assert_no_part_of_the_secret(out: &Output, dir: &Path) {
    let start = &SECRET[..12];
    for (what, bytes) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
        let text = String::from_utf8_lossy(bytes);
        assert!(
            !text.contains(start),
            "the token's start appears in {what}: {text}"
        );
    }
    for entry in crate::common::files_in(dir) {
        let text = std::fs::read(&entry).unwrap_or_default();
        assert!(
            !String::from_utf8_lossy(&text).contains(start),
            "the token's start appears in {}",
            entry.display()
        );
    }
}

#[track_caller]
fn assert_no_secret_in_files(dir: &Path) {
    for entry in crate::common::files_in(dir) {
        let text = std::fs::read(&entry).unwrap_or_default();
        assert!(
            !String::from_utf8_lossy(&text).contains(SECRET),
            "the token appears in {}",
            entry.display()
        );
    }
}

/// Every request carries exactly these headers: the token only in `authorization`.
#[track_caller]
fn assert_headers(requests: &[Recorded]) {
    let agent = format!("nsys-gate/{}", env!("CARGO_PKG_VERSION"));
    for r in requests {
        assert_eq!(
            r.header_values("authorization"),
            [format!("Bearer {SECRET}")],
            "{}",
            r.line()
        );
        assert_eq!(
            r.header_values("accept"),
            ["application/vnd.github+json"],
            "{}",
            r.line()
        );
        assert_eq!(
            r.header_values("x-github-api-version"),
            ["2022-11-28"],
            "{}",
            r.line()
        );
        assert_eq!(
            r.header_values("user-agent"),
            [agent.as_str()],
            "{}",
            r.line()
        );
        if r.body.is_some() {
            assert_eq!(
                r.header_values("content-type"),
                ["application/json"],
                "{}",
                r.line()
            );
        }
        for (name, value) in &r.headers {
            assert!(name == "authorization" || !value.contains(SECRET), "{name}");
        }
    }
}

fn lines(requests: &[Recorded]) -> Vec<String> {
    requests.iter().map(Recorded::line).collect()
}

const LIST7: &str = "GET /repos/octo/gpu/issues/7/comments?per_page=100";
const CREATE7: &str = "POST /repos/octo/gpu/issues/7/comments";

fn body_of(r: &Recorded) -> &str {
    r.body
        .as_ref()
        .and_then(|b| b["body"].as_str())
        .expect("JSON body")
}

#[test]
fn creates_the_comment() {
    let server = Server::github();
    let report = report_text("smoke-tensor", "");
    let case = Case::new(&report);
    let out = case.post(&server, Some(case.pr_event(7)), &[]);
    assert_status(&out, 0);
    let reqs = server.requests();
    assert_eq!(lines(&reqs), [LIST7, CREATE7, LIST7]);
    assert_headers(&reqs);
    assert_eq!(reqs[1].body, Some(json!({ "body": report })));
    let comments = server.comments(7);
    assert_eq!(comments.len(), 1);
    assert_eq!(comments[0].body, report);
    let err = stderr(&out);
    assert!(
        err.contains("comment `smoke-tensor` on octo/gpu#7 created"),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "https://github.example/octo/gpu/pull/7#issuecomment-{}",
            comments[0].id
        )),
        "{err}"
    );
}

#[test]
fn updates_the_comment_found_on_page_3() {
    let server = Server::github();
    server.state().page_cap = 2;
    let old = report_text("smoke-tensor", "old numbers\n");
    server.seed(7, "alice", "LGTM");
    // Our marker, but a person's comment (quoted): not ours.
    server.seed(7, "alice", &old);
    // Our bot, another key.
    server.seed(7, BOT, &report_text("other-profile", ""));
    server.seed(7, "bob", "<!-- nsys-gate:smoke-tensor -->");
    let ours = server.seed(7, BOT, &old);
    server.seed(8, BOT, &old);
    let new = report_text("smoke-tensor", "new numbers\n");
    let case = Case::new(&new);
    let out = case.post(&server, None, &["--pr", "7"]);
    assert_status(&out, 0);
    let reqs = server.requests();
    let port = server.port;
    assert_eq!(
        lines(&reqs),
        [
            LIST7.to_owned(),
            "GET /repositories/42/issues/7/comments?per_page=2&page=2".to_owned(),
            "GET /repositories/42/issues/7/comments?per_page=2&page=3".to_owned(),
            format!("PATCH /repos/octo/gpu/issues/comments/{ours}"),
        ],
        "port {port}"
    );
    assert_headers(&reqs);
    assert_eq!(reqs[3].body, Some(json!({ "body": new })));
    let bodies: Vec<(String, String)> = server
        .comments(7)
        .into_iter()
        .map(|c| (c.login, c.body))
        .collect();
    assert_eq!(bodies.len(), 5);
    assert_eq!(
        bodies[1],
        ("alice".to_owned(), old.clone()),
        "a person's comment is left alone"
    );
    assert_eq!(bodies[4], (BOT.to_owned(), new));
    assert_eq!(
        server.comments(8)[0].body,
        old,
        "another pull request is left alone"
    );
    assert!(stderr(&out).contains("updated"), "{}", stderr(&out));
}

#[test]
fn two_keys_make_two_comments() {
    let server = Server::github();
    let case = Case::new(&report_text("smoke-tensor", ""));
    for key in ["a100", "h100"] {
        let out = case.post(&server, Some(case.pr_event(7)), &["--comment-key", key]);
        assert_status(&out, 0);
    }
    let reqs = server.requests();
    assert_eq!(lines(&reqs), [LIST7, CREATE7, LIST7, LIST7, CREATE7, LIST7]);
    assert_eq!(
        reqs[1].body,
        Some(json!({ "body": report_text("a100", "") }))
    );
    assert_eq!(
        reqs[4].body,
        Some(json!({ "body": report_text("h100", "") }))
    );
    let comments = server.comments(7);
    assert_eq!(comments.len(), 2);
    assert!(comments[0].body.starts_with("<!-- nsys-gate:a100 -->\n"));
    assert!(comments[1].body.starts_with("<!-- nsys-gate:h100 -->\n"));
}

#[test]
fn an_unchanged_body_is_not_sent() {
    let server = Server::github();
    let report = report_text("smoke-tensor", "");
    let id = server.seed(7, BOT, &report);
    let case = Case::new(&report);
    let out = case.post(&server, Some(case.pr_event(7)), &[]);
    assert_status(&out, 0);
    assert_eq!(lines(&server.requests()), [LIST7]);
    assert!(stderr(&out).contains("unchanged"), "{}", stderr(&out));
    assert_eq!(server.comments(7)[0].id, id);
}

#[test]
fn duplicates_heal_to_the_oldest() {
    let server = Server::github();
    let old = report_text("smoke-tensor", "old\n");
    let first = server.seed(7, BOT, &old);
    let second = server.seed(7, BOT, &old);
    let case = Case::new(&report_text("smoke-tensor", "new\n"));
    let out = case.post(&server, Some(case.pr_event(7)), &[]);
    assert_status(&out, 0);
    assert_eq!(
        lines(&server.requests()),
        [
            LIST7.to_owned(),
            format!("PATCH /repos/octo/gpu/issues/comments/{first}"),
            format!("DELETE /repos/octo/gpu/issues/comments/{second}"),
        ]
    );
    assert_eq!(server.comments(7).len(), 1);
}

#[test]
fn no_pull_request_posts_nothing() {
    let server = Server::github();
    let case = Case::new(&report_text("smoke-tensor", ""));
    for (name, payload) in [
        ("push", json!({"ref": "refs/heads/main"})),
        ("schedule", json!({"schedule": "0 0 * * *"})),
        ("workflow_dispatch", json!({"inputs": {}})),
    ] {
        let out = case.post(&server, Some(case.event(name, payload)), &[]);
        assert_status(&out, 0);
        assert!(
            stderr(&out).contains(&format!("no pull request to comment on (event: {name})")),
            "{}",
            stderr(&out)
        );
        // The token is there: nothing more is said.
        assert!(!stderr(&out).contains("no token"), "{}", stderr(&out));
    }
    // Without a token, that is said now rather than on the first pull request's run.
    let out = case.post(
        &server,
        Some(case.event("push", json!({"ref": "refs/heads/main"}))),
        &["--token-env", "NSYS_GATE_NO_SUCH_TOKEN"],
    );
    assert_status(&out, 0);
    assert!(
        stderr(&out).contains("note: there is no token in $NSYS_GATE_NO_SUCH_TOKEN either, so posting would fail on a pull request too"),
        "{}",
        stderr(&out)
    );
    assert!(server.requests().is_empty());
}

#[test]
fn a_fork_token_gets_the_fork_safe_pattern() {
    let server = Server::github();
    server.fault(Fault::new("POST", "/issues/7/comments", 403, json!({"message": "Resource not accessible by integration", "documentation_url": "https://docs.github.com/rest/issues/comments#create-an-issue-comment", "status": "403"}).to_string()).headers(vec![("x-ratelimit-remaining".into(), "999".into())]));
    let case = Case::new(&report_text("smoke-tensor", ""));
    let out = case.post(&server, Some(case.pr_event(7)), &[]);
    assert_status(&out, 2);
    // A 403 that is not a rate limit is not retried.
    assert_eq!(lines(&server.requests()), [LIST7, CREATE7]);
    let err = stderr(&out);
    assert!(err.contains("POST /repos/octo/gpu/issues/7/comments: HTTP 403: Resource not accessible by integration"), "{err}");
    assert!(
        err.contains("fork-safe pattern")
            && err.contains("on: workflow_run")
            && err.contains("nsys-gate post --analyses DIR")
            && !err.contains("post --report"),
        "{err}"
    );
    assert!(server.comments(7).is_empty());
}

#[test]
fn a_502_is_retried_without_a_duplicate() {
    // The failed create did not happen: list, then create again.
    let server = Server::github();
    server.fault(Fault::new(
        "POST",
        "/comments",
        502,
        "<html><body><h1>502 Bad Gateway</h1></body></html>".into(),
    ));
    let case = Case::new(&report_text("smoke-tensor", ""));
    let out = case.post(&server, Some(case.pr_event(7)), &[]);
    assert_status(&out, 0);
    let reqs = server.requests();
    assert_eq!(lines(&reqs), [LIST7, CREATE7, LIST7, CREATE7, LIST7]);
    assert_headers(&reqs);
    assert_eq!(reqs[1].body, reqs[3].body);
    assert!(reqs[2].at.duration_since(reqs[1].at) >= Duration::from_millis(900));
    assert_eq!(server.comments(7).len(), 1);
    assert!(stderr(&out).contains("HTTP 502"), "{}", stderr(&out));

    // The failed create did happen: the list finds it, and nothing is posted twice.
    let server = Server::github();
    server.fault(Fault::new("POST", "/comments", 502, String::new()).applied());
    let out = case.post(&server, Some(case.pr_event(7)), &[]);
    assert_status(&out, 0);
    assert_eq!(lines(&server.requests()), [LIST7, CREATE7, LIST7, LIST7]);
    assert_eq!(server.comments(7).len(), 1);
}

#[test]
fn a_create_that_times_out_is_listed_before_posting_again() {
    // The create goes through but the answer comes too late: the list finds it.
    let server = Server::github();
    server.fault(
        Fault::new("POST", "/comments", 201, "{}".into())
            .applied()
            .delayed(Duration::from_secs(4)),
    );
    let case = Case::new(&report_text("smoke-tensor", ""));
    // Requests time out after half the post timeout: 3 s.
    let out = case.post(&server, Some(case.pr_event(7)), &["--post-timeout", "6"]);
    assert_status(&out, 0);
    assert_eq!(lines(&server.requests()), [LIST7, CREATE7, LIST7, LIST7]);
    assert_eq!(server.comments(7).len(), 1);
    assert!(
        stderr(&out).contains("no response within 3 s"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_429_waits_for_retry_after() {
    let server = Server::github();
    server.fault(
        Fault::new(
            "GET",
            "/comments",
            429,
            json!({"message": "Too many requests"}).to_string(),
        )
        .headers(vec![("retry-after".into(), "2".into())]),
    );
    let case = Case::new(&report_text("smoke-tensor", ""));
    let out = case.post(&server, Some(case.pr_event(7)), &[]);
    assert_status(&out, 0);
    let reqs = server.requests();
    assert_eq!(lines(&reqs), [LIST7, LIST7, CREATE7, LIST7]);
    let waited = reqs[1].at.duration_since(reqs[0].at);
    assert!(waited >= Duration::from_millis(1900), "{waited:?}");
    assert!(
        stderr(&out).contains("trying again in 2 s"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_secondary_rate_limit_on_create_lists_before_posting_again() {
    let server = Server::github();
    server.fault(Fault::new("POST", "/comments", 403, json!({"message": "You have exceeded a secondary rate limit and have been temporarily blocked from content creation. Please retry your request again later.", "documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"}).to_string()).headers(vec![("retry-after".into(), "1".into())]));
    let case = Case::new(&report_text("smoke-tensor", ""));
    let out = case.post(&server, Some(case.pr_event(7)), &[]);
    assert_status(&out, 0);
    assert_eq!(
        lines(&server.requests()),
        [LIST7, CREATE7, LIST7, CREATE7, LIST7]
    );
    assert_eq!(server.comments(7).len(), 1);
}

#[test]
fn a_wait_beyond_the_post_timeout_gives_up() {
    let server = Server::github();
    server.fault(
        Fault::new(
            "GET",
            "/comments",
            429,
            json!({"message": "Too many requests"}).to_string(),
        )
        .headers(vec![("retry-after".into(), "3600".into())]),
    );
    let case = Case::new(&report_text("smoke-tensor", ""));
    let out = case.post(&server, Some(case.pr_event(7)), &["--post-timeout", "5"]);
    assert_status(&out, 2);
    assert_eq!(lines(&server.requests()), [LIST7]);
    assert!(
        stderr(&out).contains("the time limit of 5 s (--post-timeout)"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn server_errors_stop_after_three_tries() {
    let server = Server::github();
    for _ in 0..3 {
        server.fault(Fault::new(
            "GET",
            "/comments",
            500,
            json!({"message": "Server Error"}).to_string(),
        ));
    }
    let case = Case::new(&report_text("smoke-tensor", ""));
    let out = case.post(&server, Some(case.pr_event(7)), &[]);
    assert_status(&out, 2);
    assert_eq!(lines(&server.requests()), [LIST7, LIST7, LIST7]);
    let err = stderr(&out);
    assert!(err.contains("gave up after 3 tries"), "{err}");
    assert!(!err.contains("hint:"), "{err}");
}

#[test]
fn malformed_json_is_a_clear_error_not_a_crash() {
    // A proxy or a broken server answering 200 with something that is not the JSON asked for.
    let server = Server::github();
    server.fault(
        Fault::new("GET", "/comments", 200, "<html>upstream says hello".into())
            .headers(vec![("content-type".into(), "application/json".into())]),
    );
    let case = Case::new(&report_text("smoke-tensor", ""));
    let out = case.post(&server, Some(case.pr_event(7)), &[]);
    assert_status(&out, 2);
    assert_eq!(lines(&server.requests()), [LIST7]);
    let err = stderr(&out);
    assert!(err.contains(LIST7), "{err}");
    assert!(err.to_lowercase().contains("json"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(server.comments(7).is_empty());
}

#[test]
fn a_body_too_long_is_shrunk_and_sent_again() {
    let server = Server::github();
    server.state().max_body_chars = Some(600);
    let mut extra = String::from("<details>\n\n```\n");
    for i in 0..100 {
        extra.push_str(&format!("row {i:03} of a long table\n"));
    }
    extra.push_str("```\n\n</details>\n");
    let report = report_text("smoke-tensor", &extra);
    let case = Case::new(&report);
    let out = case.post(&server, Some(case.pr_event(7)), &[]);
    assert_status(&out, 0);
    let reqs = server.requests();
    assert_eq!(lines(&reqs), [LIST7, CREATE7, LIST7, CREATE7, LIST7]);
    assert_eq!(body_of(&reqs[1]), report);
    let shrunk = body_of(&reqs[3]);
    let limit = report.chars().count() / 2;
    assert!(
        shrunk.chars().count() <= limit,
        "{}",
        shrunk.chars().count()
    );
    assert!(shrunk.starts_with("<!-- nsys-gate:smoke-tensor -->\n# ✅ nsys-gate: gate passed\n"));
    assert!(shrunk.contains("```\n\n</details>\n"), "{shrunk}");
    assert!(
        shrunk
            .trim_end()
            .ends_with("The full report is in the job's report.md."),
        "{shrunk}"
    );
    assert_eq!(server.comments(7)[0].body, shrunk);
    assert!(
        stderr(&out).contains("Body is too long"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_concurrent_create_ends_with_one_comment() {
    let server = Server::github();
    // Another job creates the same comment just before ours.
    server.state().rival = Some(BOT.to_owned());
    let case = Case::new(&report_text("smoke-tensor", ""));
    let out = case.post(&server, Some(case.pr_event(7)), &[]);
    assert_status(&out, 0);
    let comments = server.comments(7);
    assert_eq!(comments.len(), 1);
    let kept = comments[0].id;
    assert_eq!(
        lines(&server.requests()),
        [
            LIST7.to_owned(),
            CREATE7.to_owned(),
            LIST7.to_owned(),
            format!("DELETE /repos/octo/gpu/issues/comments/{}", kept + 1),
        ]
    );
    assert!(
        stderr(&out).contains(&format!("issuecomment-{kept}")),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_fork_workflow_run_finds_the_pull_request_by_head_sha() {
    let server = Server::github();
    server.state().pulls = vec![(5, "0123abcd".into()), (9, "feedbeef".into())];
    let case = Case::new(&report_text("smoke-tensor", ""));
    let event = case.event(
        "workflow_run",
        json!({"action": "completed", "workflow_run": {"event": "pull_request", "head_sha": "feedbeef", "pull_requests": [], "head_repository": {"full_name": "fork/gpu"}}}),
    );
    let out = case.post(&server, Some(event), &[]);
    assert_status(&out, 0);
    assert_eq!(
        lines(&server.requests()),
        [
            "GET /repos/octo/gpu/pulls?state=open&per_page=100",
            "GET /repos/octo/gpu/issues/9/comments?per_page=100",
            "POST /repos/octo/gpu/issues/9/comments",
            "GET /repos/octo/gpu/issues/9/comments?per_page=100",
        ]
    );
    assert!(
        stderr(&out).contains("pull request #9 has head commit feedbeef"),
        "{}",
        stderr(&out)
    );

    // No open pull request has that head: nothing is posted, and the status is 0.
    let server = Server::github();
    let event = case.event(
        "workflow_run",
        json!({"workflow_run": {"event": "pull_request", "head_sha": "0badc0de", "pull_requests": []}}),
    );
    let out = case.post(&server, Some(event), &[]);
    assert_status(&out, 0);
    assert_eq!(
        lines(&server.requests()),
        ["GET /repos/octo/gpu/pulls?state=open&per_page=100"]
    );
    assert!(
        stderr(&out)
            .contains("no open pull request of octo/gpu has the workflow run's head commit"),
        "{}",
        stderr(&out)
    );

    // A listed pull request is taken as it is.
    let server = Server::github();
    let event = case.event(
        "workflow_run",
        json!({"workflow_run": {"event": "pull_request", "head_sha": "feedbeef", "pull_requests": [{"number": 3, "head": {"sha": "feedbeef"}}]}}),
    );
    let out = case.post(&server, Some(event), &[]);
    assert_status(&out, 0);
    assert_eq!(
        server.requests()[0].line(),
        "GET /repos/octo/gpu/issues/3/comments?per_page=100"
    );
}

#[test]
fn gitea_takes_the_same_paths_without_link_headers() {
    let server = Server::gitea();
    server.state().login = "gitea-actions".into();
    for i in 0..150 {
        server.seed(7, "someone", &format!("comment {i}"));
    }
    let old = report_text("smoke-tensor", "old\n");
    let ours = server.seed(7, "gitea-actions", &old);
    let new = report_text("smoke-tensor", "new\n");
    let case = Case::new(&new);
    let out = case.post(
        &server,
        Some(case.pr_event(7)),
        &["--comment-author", "gitea-actions"],
    );
    assert_status(&out, 0);
    let reqs = server.requests();
    assert_eq!(
        lines(&reqs),
        [
            "GET /api/v1/repos/octo/gpu/issues/7/comments?per_page=100".to_owned(),
            format!("PATCH /api/v1/repos/octo/gpu/issues/comments/{ours}"),
        ]
    );
    assert_headers(&reqs);
    assert_eq!(reqs[1].body, Some(json!({ "body": new })));
}

#[test]
fn the_key_and_the_marker() {
    let server = Server::github();
    // No marker in the file: the default key, and the marker put first.
    let case = Case::new("# A hand-written report\n");
    let out = case.post(&server, None, &["--pr", "7"]);
    assert_status(&out, 0);
    assert_eq!(
        server.requests()[1].body,
        Some(json!({"body": "<!-- nsys-gate:report -->\n# A hand-written report\n"}))
    );
    // --comment-key replaces the file's marker; a key cannot close the HTML comment.
    let case = Case::new(&report_text("smoke-tensor", ""));
    let out = case.post(&server, None, &["--pr", "8", "--comment-key", "a-->b\n<c>"]);
    assert_status(&out, 0);
    let body = server.comments(8)[0].body.clone();
    assert!(
        body.starts_with("<!-- nsys-gate:a-_b _c_ -->\n# ✅"),
        "{body}"
    );
}

#[test]
fn configuration_errors_exit_2_and_never_show_the_token() {
    let server = Server::github();
    let case = Case::new(&report_text("smoke-tensor", ""));
    let out = case.post(
        &server,
        None,
        &["--pr", "7", "--token-env", "NSYS_GATE_NO_SUCH_TOKEN"],
    );
    assert_status(&out, 2);
    assert!(
        stderr(&out).contains("no token in $NSYS_GATE_NO_SUCH_TOKEN"),
        "{}",
        stderr(&out)
    );
    let out = case.post(&server, None, &["--pr", "7", "--repo", "not-a-repo"]);
    assert_status(&out, 2);
    assert!(stderr(&out).contains("OWNER/NAME"), "{}", stderr(&out));
    let (name, path) = case.event("pull_request", json!({"action": "opened"}));
    let out = case.post(&server, Some((name, path)), &[]);
    assert_status(&out, 2);
    assert!(server.requests().is_empty());
    // A server that refuses connections: a transport error, no token in it.
    drop(server);
    let dead = Server::github();
    let url = dead.api_url();
    drop(dead);
    let mut cmd = bin();
    cmd.arg("post")
        .arg("--report")
        .arg(&case.report)
        .args(["--pr", "7", "--post-timeout", "3"]);
    let placeholder = Server::github();
    github_env(&mut cmd, &placeholder, None);
    cmd.env("GITHUB_API_URL", &url);
    let out = cmd.output().unwrap();
    assert_no_secret(&out, case.tmp.path());
    assert_status(&out, 2);
}

#[test]
fn run_posts_the_report_it_wrote() {
    let nsys = require_nsys!("2024.2");
    let server = Server::github();
    let run = fixture("clean");
    let tmp = run.dir.parent().unwrap().to_owned();
    let output = tmp.join("github-output.txt");
    let mut cmd = bin();
    cmd.arg("run")
        .arg("--run-dir")
        .arg(&run.dir)
        .arg("--nsys")
        .arg(&nsys)
        .args(["--pr", "7"]);
    github_env(&mut cmd, &server, None);
    cmd.env("GITHUB_ACTIONS", "true")
        .env("GITHUB_OUTPUT", &output)
        .env("GITHUB_STEP_SUMMARY", tmp.join("summary.md"));
    let out = cmd.output().unwrap();
    assert_status(&out, 0);
    assert_no_secret(&out, &tmp);
    let report = std::fs::read_to_string(run.path("report.md")).unwrap();
    assert!(
        report.starts_with("<!-- nsys-gate:smoke-tensor -->\n"),
        "{report}"
    );
    let reqs = server.requests();
    assert_eq!(lines(&reqs), [LIST7, CREATE7, LIST7]);
    assert_headers(&reqs);
    assert_eq!(reqs[1].body, Some(json!({ "body": report })));
    let outputs = std::fs::read_to_string(&output).unwrap();
    assert!(outputs.contains("comment-url<<ghadelimiter_"), "{outputs}");
    assert!(
        outputs.contains("https://github.example/octo/gpu/pull/7#issuecomment-"),
        "{outputs}"
    );

    // A token that cannot write: a warning, and the gate's status.
    server.fault(Fault::new(
        "PATCH",
        "/issues/comments/",
        403,
        json!({"message": "Resource not accessible by integration"}).to_string(),
    ));
    let run_again = |extra: &[&str]| {
        let mut cmd = bin();
        cmd.arg("run")
            .arg("--run-dir")
            .arg(&run.dir)
            .arg("--reuse-stats")
            .args(["--pr", "7", "--comment-key", "another"])
            .args(extra);
        github_env(&mut cmd, &server, None);
        let out = cmd.output().unwrap();
        assert_no_secret(&out, &tmp);
        out
    };
    server.seed(7, BOT, "<!-- nsys-gate:another -->\nold");
    let out = run_again(&[]);
    assert_status(&out, 0);
    assert!(
        stderr(&out).contains("nsys-gate: warning: cannot post the pull-request comment"),
        "{}",
        stderr(&out)
    );
    assert!(
        stderr(&out).contains("fork-safe pattern"),
        "{}",
        stderr(&out)
    );
    server.fault(Fault::new(
        "PATCH",
        "/issues/comments/",
        403,
        json!({"message": "Resource not accessible by integration"}).to_string(),
    ));
    let out = run_again(&["--fail-on-post-error"]);
    assert_status(&out, 2);

    // --no-post: no request.
    let before = server.requests().len();
    let out = run_again(&["--no-post"]);
    assert_status(&out, 0);
    assert_eq!(server.requests().len(), before);
}

/// A server (or a proxy) that echoes the request's `Authorization` header: the token is shown
/// nowhere, not in a retry line, a final error or a step output, not even cut short.
#[test]
fn an_echoed_token_is_never_shown() {
    let case = Case::new(&report_text("smoke-tensor", ""));
    // 500 three times: in GitHub's JSON `message`; in a proxy's page, where the message shown
    // is cut at 200 characters, inside the token; in `errors[].message`, after `token `.
    let server = Server::github();
    let padding = "p".repeat(173);
    for body in [
        json!({"message": format!("Server Error for Authorization: {ECHO_AUTHORIZATION}")})
            .to_string(),
        format!("<html><body>{padding}{ECHO_CREDENTIAL}</body></html>"),
        json!({"message": "Server Error", "errors": [{"message": format!("token {ECHO_CREDENTIAL} was used")}]})
            .to_string(),
    ] {
        server.fault(Fault::new("GET", "/comments", 500, body));
    }
    let out = case.post_in_actions(&server, Some(case.pr_event(7)), &[]);
    assert_status(&out, 2);
    assert_no_part_of_the_secret(&out, case.tmp.path());
    assert_eq!(lines(&server.requests()), [LIST7, LIST7, LIST7]);
    let err = stderr(&out);
    assert!(
        err.contains("HTTP 500: Server Error for Authorization: Bearer ***; trying again"),
        "{err}"
    );
    assert!(err.contains(&format!("{padding}***")), "{err}");
    assert!(
        err.contains("gave up after 3 tries") && err.contains("token *** was used"),
        "{err}"
    );

    // 422 (not retried), the echo in `errors[].message`.
    let server = Server::github();
    server.fault(Fault::new(
        "POST",
        "/comments",
        422,
        json!({"message": "Validation Failed", "errors": [{"resource": "IssueComment", "code": "custom",
               "message": format!("request header Authorization: {ECHO_AUTHORIZATION}")}]})
        .to_string(),
    ));
    let out = case.post_in_actions(&server, Some(case.pr_event(7)), &[]);
    assert_status(&out, 2);
    assert_no_part_of_the_secret(&out, case.tmp.path());
    assert_eq!(lines(&server.requests()), [LIST7, CREATE7]);
    let err = stderr(&out);
    assert!(
        err.contains("HTTP 422: Validation Failed: request header Authorization: Bearer ***"),
        "{err}"
    );

    // In a `link` header (a path quoted in errors), and in a JSON value quoted by the parser.
    let server = Server::github();
    let next = format!(
        "<{}/repositories/42/issues/7/comments?page=2&access_token={ECHO_CREDENTIAL}>; rel=\"next\"",
        server.api_url()
    );
    server.fault(
        Fault::new("GET", "/issues/7/comments", 200, "[]".into())
            .headers(vec![("link".into(), next)]),
    );
    server.fault(Fault::new(
        "GET",
        "page=2",
        200,
        json!([{ "id": ECHO_AUTHORIZATION }]).to_string(),
    ));
    let out = case.post_in_actions(&server, Some(case.pr_event(7)), &[]);
    assert_status(&out, 2);
    assert_no_part_of_the_secret(&out, case.tmp.path());
    let err = stderr(&out);
    assert!(
        err.contains("GET /repositories/42/issues/7/comments?page=2&access_token=***:"),
        "{err}"
    );
    assert!(err.contains("Bearer ***"), "{err}");

    // In the created comment's URL, which becomes the step output `comment-url`.
    let server = Server::github();
    server.fault(Fault::new(
        "POST",
        "/comments",
        201,
        json!({"id": 1, "body": "", "user": {"login": BOT},
               "html_url": format!("https://github.example/octo/gpu/pull/7?t={ECHO_CREDENTIAL}#issuecomment-1")})
        .to_string(),
    ));
    let out = case.post_in_actions(&server, Some(case.pr_event(7)), &[]);
    assert_status(&out, 0);
    assert_no_part_of_the_secret(&out, case.tmp.path());
    let outputs = std::fs::read_to_string(case.tmp.path().join("github-output.txt")).unwrap();
    assert!(
        outputs.contains("https://github.example/octo/gpu/pull/7?t=***#issuecomment-1"),
        "{outputs}"
    );
}

/// `run` posts with the same client: an echoed token is not shown, and a token that is not
/// one line is refused before any request.
#[test]
fn run_never_shows_an_echoed_token() {
    let nsys = require_nsys!("2024.2");
    let server = Server::github();
    let run = fixture("clean");
    let tmp = run.dir.parent().unwrap().to_owned();
    let run_once = |extra: &[&str], token: &str| {
        let mut cmd = bin();
        cmd.arg("run")
            .arg("--run-dir")
            .arg(&run.dir)
            .args(["--pr", "7"])
            .args(extra);
        github_env(&mut cmd, &server, None);
        cmd.env("GITHUB_ACTIONS", "true")
            .env("GITHUB_OUTPUT", tmp.join("github-output.txt"))
            .env("GITHUB_STEP_SUMMARY", tmp.join("summary.md"))
            .env("GITHUB_TOKEN", token);
        let out = cmd.output().unwrap();
        assert_no_part_of_the_secret(&out, &tmp);
        out
    };
    for _ in 0..3 {
        server.fault(Fault::new(
            "GET",
            "/comments",
            500,
            json!({"message": format!("Server Error for Authorization: {ECHO_AUTHORIZATION}")})
                .to_string(),
        ));
    }
    let out = run_once(&["--nsys", nsys.to_str().unwrap()], SECRET);
    // A failed post is a warning; the status stays the gate's.
    assert_status(&out, 0);
    let err = stderr(&out);
    assert!(
        err.contains("nsys-gate: warning: cannot post the pull-request comment")
            && err.contains("Authorization: Bearer ***"),
        "{err}"
    );

    server.fault(Fault::new(
        "POST",
        "/comments",
        422,
        json!({"message": "Validation Failed", "errors": [{"message": format!("you sent {ECHO_CREDENTIAL}")}]})
            .to_string(),
    ));
    let out = run_once(&["--reuse-stats", "--fail-on-post-error"], SECRET);
    assert_status(&out, 2);
    assert!(stderr(&out).contains("you sent ***"), "{}", stderr(&out));

    let before = server.requests().len();
    let out = run_once(
        &["--reuse-stats", "--fail-on-post-error"],
        &format!("{SECRET}\n"),
    );
    assert_status(&out, 2);
    assert_eq!(server.requests().len(), before, "no request");
    assert!(
        stderr(&out).contains("the token in $GITHUB_TOKEN ends with a line break"),
        "{}",
        stderr(&out)
    );
}

/// A token a header cannot hold as it is (a line break, white space that would be trimmed, a
/// control or non-ASCII character) is a configuration error: no request, no retry, and the
/// message says what is wrong without showing the token.
#[test]
fn a_token_that_is_not_one_line_is_refused_before_any_request() {
    let server = Server::github();
    let case = Case::new(&report_text("smoke-tensor", ""));
    for (token, says) in [
        (format!("{SECRET}\n"), "ends with a line break"),
        (format!("{SECRET}\r\n"), "ends with a line break"),
        (format!("{SECRET}\nX-Injected: 1"), "holds a line break"),
        (format!(" {SECRET}"), "begins with white space"),
        (format!("{SECRET}\t"), "ends with white space"),
        (format!("{SECRET}\u{7f}x"), "holds a control character"),
        (format!("{SECRET}é"), "holds a non-ASCII character"),
    ] {
        let out = case.post_with(
            &server,
            Some(case.pr_event(7)),
            &[],
            &[("GITHUB_TOKEN", &token)],
        );
        assert_status(&out, 2);
        let err = stderr(&out);
        assert!(
            err.contains(&format!("the token in $GITHUB_TOKEN {says}")),
            "{says}: {err}"
        );
        assert!(!err.contains("trying again"), "{err}");
    }
    assert!(server.requests().is_empty());
}

/// A reply larger than the cap on one response (64 MiB) is not read to its end: exit 2
/// naming the request and the cap, no retry, and the memory stays bounded.
#[test]
fn a_response_larger_than_the_cap_is_refused_in_bounded_memory() {
    const HUGE: usize = 192 << 20;
    let case = Case::new(&report_text("smoke-tensor", ""));
    let post = |server: &Server| {
        let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("nsys-gate"));
        cmd.arg("post").arg("--report").arg(&case.report);
        let (name, path) = case.pr_event(7);
        for (var, value) in github_vars(server) {
            match value {
                Some(value) => cmd.env(var, value),
                None => cmd.env_remove(var),
            };
        }
        cmd.env("GITHUB_EVENT_NAME", name)
            .env("GITHUB_EVENT_PATH", path);
        let (out, peak) = crate::common::output_and_peak_kib(cmd, u64::MAX);
        assert_no_secret(&out, case.tmp.path());
        (out, peak)
    };

    // Chunked: no size is said first, so the reading stops at the cap.
    let server = Server::github();
    server.fault(Fault::new("GET", "/comments", 200, String::new()).streamed(HUGE, true));
    let (out, peak) = post(&server);
    assert_status(&out, 2);
    assert_eq!(lines(&server.requests()), [LIST7], "not retried");
    let err = stderr(&out);
    assert!(
        err.contains(&format!(
            "{LIST7}: unexpected response: the response is larger than 64 MiB"
        )),
        "{err}"
    );
    assert!(
        peak < 112 << 10,
        "peak resident memory {peak} KiB for a reply of {HUGE} bytes"
    );

    // With a `content-length` over the cap: refused before reading.
    let server = Server::github();
    server.fault(Fault::new("GET", "/comments", 200, String::new()).streamed(HUGE, false));
    let (out, peak) = post(&server);
    assert_status(&out, 2);
    assert_eq!(lines(&server.requests()), [LIST7], "not retried");
    let err = stderr(&out);
    assert!(
        err.contains(&format!(
            "{LIST7}: unexpected response: the response says it is "
        )) && err.contains("more than 64 MiB"),
        "{err}"
    );
    assert!(peak < 48 << 10, "peak resident memory {peak} KiB");
}

/// `--repo` (or `$GITHUB_REPOSITORY`) must be one OWNER/NAME GitHub could have: no `.` or
/// `..`, no empty part, one `/`, only ASCII letters, digits, `-`, `_` and `.`.
#[test]
fn a_repository_github_cannot_name_is_refused() {
    let server = Server::github();
    let case = Case::new(&report_text("smoke-tensor", ""));
    for bad in [
        "octo/..",
        "octo/.",
        "../gpu",
        "./gpu",
        "octo//gpu",
        "octo/gpu/",
        "octo/gpu/x",
        "/gpu",
        "octo/",
        "octo/gpu?x=1",
        "octo/gpu#1",
        "octo/gp%75",
        "octo/g pu",
        "octo\\gpu",
        "octo/gpü",
        "octo/..%2F..",
    ] {
        let out = case.post(&server, None, &["--pr", "7", "--repo", bad]);
        assert_status(&out, 2);
        let err = stderr(&out);
        assert!(
            err.contains("is not a repository of the form OWNER/NAME"),
            "{bad}: {err}"
        );
    }
    let out = case.post_with(
        &server,
        None,
        &["--pr", "7"],
        &[("GITHUB_REPOSITORY", "octo/..")],
    );
    assert_status(&out, 2);
    assert!(server.requests().is_empty());
}

/// An event whose pull-request number is not a whole number from 1 is refused, naming the
/// event file, before any request.
#[test]
fn a_pull_request_number_that_is_not_one_is_refused() {
    let server = Server::github();
    let case = Case::new(&report_text("smoke-tensor", ""));
    for (name, payload, says) in [
        (
            "pull_request",
            json!({"number": 0, "pull_request": {"number": 0}}),
            "pull_request.number is 0",
        ),
        (
            "pull_request",
            json!({"number": -3, "pull_request": {"number": -3}}),
            "pull_request.number is -3",
        ),
        (
            "pull_request",
            json!({"pull_request": {"number": 1.5}}),
            "pull_request.number is 1.5",
        ),
        (
            "pull_request",
            json!({"pull_request": {"number": "7"}}),
            "pull_request.number is \"7\"",
        ),
        ("pull_request_target", json!({"number": 0}), "number is 0"),
        (
            "pull_request",
            json!({"number": 7, "pull_request": {"number": 0}}),
            "pull_request.number is 0",
        ),
        (
            "pull_request",
            json!({"number": 7, "pull_request": {"number": 8}}),
            "number is 7 but pull_request.number is 8",
        ),
        (
            "workflow_run",
            json!({"workflow_run": {"event": "pull_request", "head_sha": "feedbeef", "pull_requests": [{"number": 0}]}}),
            "workflow_run.pull_requests[0].number is 0",
        ),
    ] {
        let event = case.event(name, payload);
        let path = event.1.display().to_string();
        let out = case.post(&server, Some(event), &[]);
        assert_status(&out, 2);
        let err = stderr(&out);
        assert!(
            err.contains(&format!("the {name} event in {path}: {says}")),
            "{says}: {err}"
        );
    }
    assert!(server.requests().is_empty());
}

/// Issue item 2: `--post-timeout 20` against a server taking 9 s per call took 27 s: each
/// request had a limit, the post had none. Here 1.5 s per call and `--post-timeout 4`: every
/// request fits its own limit, and the post still ends at 4 s.
#[test]
fn a_server_slow_on_every_call_cannot_stretch_the_post_past_its_deadline() {
    let server = Server::github();
    server.state().delay_each = Duration::from_millis(1500);
    let case = Case::new(&report_text("smoke-tensor", ""));
    let started = std::time::Instant::now();
    let out = case.post(&server, Some(case.pr_event(7)), &["--post-timeout", "4"]);
    let took = started.elapsed();
    eprintln!("--post-timeout 4 against 1.5 s per call: {took:?}");
    assert!(took < Duration::from_millis(4600), "took {took:?}");
    assert_status(&out, 2);
    assert!(
        stderr(&out).contains("the time limit of 4 s (--post-timeout)"),
        "{}",
        stderr(&out)
    );
}

/// Issue item 2: comments paging with `link: rel="next"` and 1.5 s a page ran past 100 s with
/// `--post-timeout 4` (67 pages). Pages that never end, each a new URL: the post ends at its
/// deadline.
#[test]
fn endless_pages_end_at_the_post_deadline() {
    let server = Server::github();
    {
        let mut s = server.state();
        s.delay_each = Duration::from_millis(1500);
        s.endless_pages = true;
    }
    let case = Case::new(&report_text("smoke-tensor", ""));
    let started = std::time::Instant::now();
    let out = case.post(&server, Some(case.pr_event(7)), &["--post-timeout", "4"]);
    let took = started.elapsed();
    eprintln!("--post-timeout 4 against endless pages of 1.5 s: {took:?}");
    assert!(took < Duration::from_millis(4600), "took {took:?}");
    assert_status(&out, 2);
    assert!(
        server.requests().len() <= 3,
        "{:?}",
        lines(&server.requests())
    );
    assert!(
        stderr(&out).contains("the time limit of 4 s (--post-timeout)"),
        "{}",
        stderr(&out)
    );
}

/// Issue item 2: the deadlines are stated in `--help`: one per stage, covering every request,
/// page, redirect and byte of the body.
#[test]
fn help_states_one_deadline_per_stage() {
    for (command, option) in [
        ("post", "--post-timeout"),
        ("run", "--post-timeout"),
        ("report", "--baseline-timeout"),
        ("run", "--baseline-timeout"),
    ] {
        let out = crate::common::bin()
            .args([command, "--help"])
            .output()
            .unwrap();
        let help = String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        let at = help
            .find(&format!("{option} <SECONDS>"))
            .unwrap_or_else(|| panic!("{command} --help has no {option}:\n{help}"));
        let text = &help[at..help.len().min(at + 600)];
        assert!(
            text.contains(
                "One deadline for the whole stage, covering every request, page, redirect and byte of the body"
            ),
            "{command} {option}: {text}"
        );
    }
}

/// Issue item 7: redaction replaced the whole token and `Bearer …`, but echoed fragments came
/// out: one shorter than 8 characters after `token `, the token's last 12 characters, a middle
/// slice. Any run of 6 or more of the token's characters is redacted.
#[test]
fn echoed_fragments_of_the_token_are_never_shown() {
    let case = Case::new(&report_text("smoke-tensor", ""));
    let server = Server::github();
    let last12 = &SECRET[SECRET.len() - 12..];
    let middle = &SECRET[8..17];
    for body in [
        json!({"message": format!("bad token {}", &SECRET[..6])}).to_string(),
        json!({"message": format!("signature {last12} does not match")}).to_string(),
        format!("<html>credential …{middle}… refused</html>"),
    ] {
        server.fault(Fault::new("GET", "/comments", 500, body));
    }
    let out = case.post_in_actions(&server, Some(case.pr_event(7)), &[]);
    assert_status(&out, 2);
    let err = stderr(&out);
    for fragment in [&SECRET[..6], last12, middle] {
        assert!(!err.contains(fragment), "{fragment:?} in:\n{err}");
    }
    assert!(err.contains("bad token ***"), "{err}");
    assert!(err.contains("signature *** does not match"), "{err}");
    assert!(err.contains("credential …***… refused"), "{err}");
}

/// Issue "trust boundary, round 4", item 4: `--post-timeout 9223372036854775807` panicked
/// (exit 101, "overflow when adding duration to instant"). A limit past what the clock holds is
/// a deadline a century away; a number past 64 bits is a command-line error.
#[test]
fn no_post_timeout_panics() {
    for timeout in ["9223372036854775807", "18446744073709551615"] {
        let server = Server::github();
        let case = Case::new(&report_text("perf", ""));
        let out = case.post(&server, None, &["--pr", "7", "--post-timeout", timeout]);
        assert_status(&out, 0);
        assert_eq!(server.comments(7).len(), 1, "{timeout}: {}", stderr(&out));
    }
    let server = Server::github();
    let case = Case::new(&report_text("perf", ""));
    let out = case.post(
        &server,
        None,
        &["--pr", "7", "--post-timeout", "18446744073709551616"],
    );
    assert_status(&out, 2);
    assert!(server.requests().is_empty());
}
