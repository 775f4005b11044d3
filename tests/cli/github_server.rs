//! A local GitHub-like REST server for the `post` tests: issue comments with `Link`
//! pagination and rate-limit headers as GitHub documents them, the Actions lists of
//! `--baseline auto` (workflow runs, artifacts, a run's jobs, a branch's commits), a Gitea mode (`/api/v1`, no
//! `Link`), scripted faults, and a record of every request. Loopback only; it stops when
//! dropped.

use std::collections::{HashMap, VecDeque};
use std::io::{BufReader, Write};
use std::net::TcpStream;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::http_fake::{body_text, query, read_request, under, Loop, Response};

#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    /// Path and query, as sent.
    pub path: String,
    /// Lower-cased names; repeated headers appear repeatedly.
    pub headers: Vec<(String, String)>,
    pub body: Option<Value>,
    pub at: Instant,
}

impl Recorded {
    pub fn header_values(&self, name: &str) -> Vec<&str> {
        self.headers
            .iter()
            .filter(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
            .collect()
    }

    /// `METHOD path`.
    pub fn line(&self) -> String {
        format!("{} {}", self.method, self.path)
    }
}

#[derive(Debug, Clone)]
pub struct StoredComment {
    pub id: u64,
    pub pr: u64,
    pub login: String,
    pub body: String,
}

/// In a fault's body or header values: the request's `Authorization` header, as a server or
/// proxy that echoes it in an error would send it back.
pub const ECHO_AUTHORIZATION: &str = "{{authorization}}";
/// In a fault's body or header values: the credential of the request's `Authorization` header
/// (after its scheme).
pub const ECHO_CREDENTIAL: &str = "{{credential}}";

/// A body written as it is made, never held whole: a JSON array of comments of at least
/// `bytes` bytes.
#[derive(Debug, Clone, Copy)]
pub struct Streamed {
    pub bytes: usize,
    /// `transfer-encoding: chunked`; otherwise a `content-length` gives the size first.
    pub chunked: bool,
}

/// A scripted answer for the next request matching `method` and `path_contains`.
#[derive(Debug, Clone)]
pub struct Fault {
    pub method: &'static str,
    pub path_contains: String,
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
    /// Carry the request out before answering with the fault (a 502 after the write).
    pub apply: bool,
    /// Wait this long before answering (a timeout).
    pub delay: Duration,
    /// Answer with this streamed body instead of `body`.
    pub streamed: Option<Streamed>,
}

impl Fault {
    /// Answer the next `method` request whose path contains `path_contains` with `status`
    /// and `body`, without carrying it out and without delay.
    pub fn new(method: &'static str, path_contains: &str, status: u16, body: String) -> Self {
        Fault {
            method,
            path_contains: path_contains.to_owned(),
            status,
            headers: Vec::new(),
            body,
            apply: false,
            delay: Duration::ZERO,
            streamed: None,
        }
    }

    pub fn headers(mut self, headers: Vec<(String, String)>) -> Self {
        self.headers = headers;
        self
    }

    /// Carry the request out before answering with the fault.
    pub fn applied(mut self) -> Self {
        self.apply = true;
        self
    }

    pub fn delayed(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }

    /// Answer with a streamed JSON array of comments of at least `bytes` bytes.
    pub fn streamed(mut self, bytes: usize, chunked: bool) -> Self {
        self.streamed = Some(Streamed { bytes, chunked });
        self
    }
}

#[derive(Debug, Default)]
pub struct State {
    pub comments: Vec<StoredComment>,
    pub next_id: u64,
    pub requests: Vec<Recorded>,
    pub faults: VecDeque<Fault>,
    /// Comments per page at most (GitHub: 100).
    pub page_cap: usize,
    /// Gitea/Forgejo: everything at once, no `Link`.
    pub gitea: bool,
    /// 422 "Body is too long" above this many characters.
    pub max_body_chars: Option<usize>,
    /// The login that comments created through the API get.
    pub login: String,
    /// Open pull requests: number and head SHA.
    pub pulls: Vec<(u64, String)>,
    /// On the next create, first create this login's comment with the same body.
    pub rival: Option<String>,
    /// Workflow runs, as `GET …/actions/workflows/FILE/runs` lists them: the workflow's file
    /// name and the run's JSON (`id`, `head_sha`, `head_branch`, `event`, `status`, …), newest
    /// first.
    pub workflow_runs: Vec<(String, Value)>,
    /// Artifacts, newest first, with the id of the run that uploaded each (`id`, `name`,
    /// `expired`, `size_in_bytes`; listed with `workflow_run.id` added).
    pub artifacts: Vec<(u64, Value)>,
    /// Runs and artifacts per page at most (GitHub: 100).
    pub list_page_cap: usize,
    /// How `GET …/actions/artifacts/ID/zip` answers, by artifact id.
    pub downloads: HashMap<u64, Download>,
    /// Every request waits this long before its answer (a slow server).
    pub delay_each: Duration,
    /// The comments' pages never end: each (empty) page links to a new one as `next`.
    pub endless_pages: bool,
    /// The commits of each branch, newest first, as `GET …/commits?sha=refs/heads/BRANCH`
    /// lists them; a branch not here has the commits of its push runs (`head_sha` of the
    /// runs whose `event` is `push` and `head_branch` is the branch, in the order listed).
    pub branch_commits: HashMap<String, Vec<String>>,
    /// `GET …/commits` answers 404, as an API without the endpoint would.
    pub no_commits_api: bool,
    /// The jobs of each run, as `GET …/actions/runs/ID/jobs` lists them (`id`, `name`,
    /// `status`, `conclusion`, `runner_name`, …; `run_id` added). A run not here has one job,
    /// `profile`, whose `runner_name` is `default_runner` (`null`: as GitHub lists a job
    /// that got no runner, so that tests of other things see no runner at all).
    pub jobs: HashMap<u64, Vec<Value>>,
    pub default_runner: Option<String>,
}

/// The answer to an artifact's zip download.
#[derive(Debug, Clone)]
pub enum Download {
    /// 302 to this URL (a storage host).
    Redirect(String),
    /// An error status and its message (410 expired, 403 no permission).
    Status(u16, String),
}

pub struct Server {
    pub port: u16,
    pub prefix: String,
    state: Arc<Mutex<State>>,
    _loop: Loop,
}

impl Server {
    /// A GitHub-like server (API base `http://127.0.0.1:PORT`).
    pub fn github() -> Self {
        Self::start(false, "", Duration::from_secs(120))
    }

    /// A GitHub-like server that stays up for `lifetime` at most (for long end-to-end runs).
    pub fn github_for(lifetime: Duration) -> Self {
        Self::start(false, "", lifetime)
    }

    /// A Gitea-like server (API base `http://127.0.0.1:PORT/api/v1`).
    pub fn gitea() -> Self {
        Self::start(true, "/api/v1", Duration::from_secs(120))
    }

    fn start(gitea: bool, prefix: &str, lifetime: Duration) -> Self {
        let state = Arc::new(Mutex::new(State {
            next_id: 1000,
            page_cap: 100,
            list_page_cap: 100,
            gitea,
            login: "github-actions[bot]".into(),
            ..State::default()
        }));
        let served = state.clone();
        let prefix_served = prefix.to_owned();
        let accept = Loop::spawn(lifetime, move |stream, _| {
            let port = stream.local_addr().map_or(0, |a| a.port());
            let _ = serve(stream, &served, port, &prefix_served);
        });
        Server {
            port: accept.port,
            prefix: prefix.to_owned(),
            state,
            _loop: accept,
        }
    }

    pub fn api_url(&self) -> String {
        format!("http://127.0.0.1:{}{}", self.port, self.prefix)
    }

    pub fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap()
    }

    /// Adds an existing comment; returns its id.
    pub fn seed(&self, pr: u64, login: &str, body: &str) -> u64 {
        let mut s = self.state();
        s.next_id += 1;
        let id = s.next_id;
        s.comments.push(StoredComment {
            id,
            pr,
            login: login.into(),
            body: body.into(),
        });
        id
    }

    pub fn fault(&self, fault: Fault) {
        self.state().faults.push_back(fault);
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.state().requests.clone()
    }

    pub fn comments(&self, pr: u64) -> Vec<StoredComment> {
        self.state()
            .comments
            .iter()
            .filter(|c| c.pr == pr)
            .cloned()
            .collect()
    }
}

/// `text` with the echo placeholders replaced from the request's `authorization` header.
fn echo(text: &str, headers: &[(String, String)]) -> String {
    let auth = headers
        .iter()
        .find(|(n, _)| n == "authorization")
        .map_or("", |(_, v)| v.as_str());
    let credential = auth.split_once(' ').map_or(auth, |(_, c)| c);
    text.replace(ECHO_AUTHORIZATION, auth)
        .replace(ECHO_CREDENTIAL, credential)
}

fn serve(stream: TcpStream, state: &Mutex<State>, port: u16, prefix: &str) -> std::io::Result<()> {
    let request = read_request(&mut BufReader::new(stream.try_clone()?))?;
    let (method, path, headers, raw) = (
        request.method,
        request.target,
        request.headers,
        request.body,
    );
    let body: Option<Value> = if raw.is_empty() {
        None
    } else {
        Some(
            serde_json::from_slice(&raw)
                .unwrap_or(Value::String(String::from_utf8_lossy(&raw).into_owned())),
        )
    };
    let mut delay = Duration::ZERO;
    let mut streamed = None;
    let response = {
        let mut s = state.lock().unwrap();
        delay += s.delay_each;
        s.requests.push(Recorded {
            method: method.clone(),
            path: path.clone(),
            headers,
            body: body.clone(),
            at: Instant::now(),
        });
        let fault = s
            .faults
            .iter()
            .position(|f| f.method == method && path.contains(&f.path_contains))
            .map(|i| s.faults.remove(i).unwrap());
        match fault {
            Some(f) => {
                delay += f.delay;
                streamed = f.streamed;
                if f.apply {
                    route(&mut s, &method, &path, body.as_ref(), port, prefix);
                }
                let seen = &s.requests.last().expect("just recorded").headers;
                Response {
                    status: f.status,
                    headers: f
                        .headers
                        .iter()
                        .map(|(n, v)| (n.clone(), echo(v, seen)))
                        .collect(),
                    body: echo(&f.body, seen).into(),
                }
            }
            None => route(&mut s, &method, &path, body.as_ref(), port, prefix),
        }
    };
    std::thread::sleep(delay);
    let mut out = stream;
    let content_type = "application/json; charset=utf-8";
    if let Some(streamed) = streamed {
        return write_streamed(out, response.head(content_type), streamed);
    }
    response.write(&mut out, content_type)
}

/// Writes `head` and then a JSON array of comments of at least `streamed.bytes` bytes, made
/// 64 KiB at a time; stops at the first failed write (the client hung up).
fn write_streamed(mut out: TcpStream, mut head: String, streamed: Streamed) -> std::io::Result<()> {
    // Every item has the same length: `{"id":ID,"body":"xxx…"}` with a ten-digit ID.
    let filler = "x".repeat(60_000);
    let item = |i: usize| format!(r#"{{"id":{},"body":"{filler}"}}"#, 1_000_000_000 + i);
    let item_len = item(0).len();
    let count = streamed.bytes.div_ceil(item_len + 1).max(1);
    // `[`, the items, a comma between two, `]`.
    let total = 2 + count * item_len + (count - 1);
    if streamed.chunked {
        head.push_str("transfer-encoding: chunked\r\nconnection: close\r\n\r\n");
    } else {
        head.push_str(&format!(
            "content-length: {total}\r\nconnection: close\r\n\r\n"
        ));
    }
    out.write_all(head.as_bytes())?;
    let send = |out: &mut TcpStream, part: &[u8]| -> std::io::Result<()> {
        if streamed.chunked {
            out.write_all(format!("{:x}\r\n", part.len()).as_bytes())?;
            out.write_all(part)?;
            out.write_all(b"\r\n")
        } else {
            out.write_all(part)
        }
    };
    let mut buffer = String::from("[");
    for i in 0..count {
        if i > 0 {
            buffer.push(',');
        }
        buffer.push_str(&item(i));
        if buffer.len() >= 64 << 10 {
            send(&mut out, buffer.as_bytes())?;
            buffer.clear();
        }
    }
    buffer.push(']');
    send(&mut out, buffer.as_bytes())?;
    if streamed.chunked {
        out.write_all(b"0\r\n\r\n")?;
    }
    out.flush()
}

fn rate_headers() -> Vec<(String, String)> {
    let reset = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        + 3600;
    vec![
        ("x-ratelimit-limit".into(), "1000".into()),
        ("x-ratelimit-remaining".into(), "990".into()),
        ("x-ratelimit-reset".into(), reset.to_string()),
        ("x-ratelimit-used".into(), "10".into()),
        ("x-ratelimit-resource".into(), "core".into()),
        ("x-github-api-version-selected".into(), "2022-11-28".into()),
    ]
}

fn comment_json(s: &State, c: &StoredComment, port: u16) -> Value {
    let html_url = format!(
        "https://github.example/octo/gpu/pull/{}#issuecomment-{}",
        c.pr, c.id
    );
    if s.gitea {
        json!({
            "id": c.id,
            "html_url": html_url,
            "pull_request_url": format!("https://gitea.example/octo/gpu/pulls/{}", c.pr),
            "issue_url": "",
            "user": {"id": 7, "login": c.login, "login_name": "", "full_name": "", "email": "bot@noreply", "avatar_url": "", "is_admin": false},
            "original_author": "",
            "original_author_id": 0,
            "body": c.body,
            "assets": [],
            "created_at": "2026-01-01T00:00:00Z",
            "updated_at": "2026-01-01T00:00:00Z"
        })
    } else {
        json!({
            "id": c.id,
            "node_id": format!("IC_kwDO{}", c.id),
            "url": format!("http://127.0.0.1:{port}/repos/octo/gpu/issues/comments/{}", c.id),
            "html_url": html_url,
            "body": c.body,
            "user": {"login": c.login, "id": 41898282, "node_id": "MDM6Qm90NDE4OTgyODI=", "type": "Bot", "site_admin": false},
            "created_at": "2026-01-01T00:00:00Z",
            "updated_at": "2026-01-01T00:00:00Z",
            "issue_url": format!("http://127.0.0.1:{port}/repos/octo/gpu/issues/{}", c.pr),
            "author_association": "NONE"
        })
    }
}

/// A completed job as GitHub lists it, on `runner` (`null`: none).
pub fn job_json(id: u64, name: &str, runner: Option<&str>) -> Value {
    json!({
        "id": id,
        "name": name,
        "status": "completed",
        "conclusion": "success",
        "head_branch": "main",
        "started_at": "2026-11-01T12:00:00Z",
        "completed_at": "2026-11-01T12:05:00Z",
        "labels": ["self-hosted", "gpu"],
        "runner_id": runner.map(|_| 7),
        "runner_name": runner,
        "runner_group_id": runner.map(|_| 1),
        "runner_group_name": runner.map(|_| "Default"),
        "steps": []
    })
}

fn error(status: u16, message: &str) -> Response {
    Response {
        status,
        headers: rate_headers(),
        body: json!({"message": message, "documentation_url": "https://docs.github.com/rest", "status": status.to_string()}).to_string().into(),
    }
}

fn too_long(s: &State, body: &str) -> Option<Response> {
    let max = s.max_body_chars?;
    (body.chars().count() > max).then(|| Response {
        status: 422,
        headers: rate_headers(),
        body: json!({
            "message": "Validation Failed",
            "errors": [{"resource": "IssueComment", "code": "unprocessable", "field": "data",
                        "message": format!("Body is too long (maximum is {max} characters)")}],
            "documentation_url": "https://docs.github.com/rest/issues/comments#create-an-issue-comment",
            "status": "422"
        })
        .to_string()
        .into(),
    })
}

/// One page of `items` as `{"total_count": N, FIELD: [...]}` (a bare array when FIELD is
/// empty), `per_page` and `page` from the query (at most `list_page_cap` a page), with
/// GitHub's `Link` header to the other pages.
fn paged(
    s: &State,
    rest: &str,
    port: u16,
    prefix: &str,
    field: &str,
    items: Vec<Value>,
) -> Response {
    let q = query(rest);
    let per_page = q
        .get("per_page")
        .and_then(|v| v.parse().ok())
        .unwrap_or(30usize)
        .clamp(1, 100)
        .min(s.list_page_cap);
    let page = q.get("page").and_then(|v| v.parse().ok()).unwrap_or(1usize);
    let pages = items.len().div_ceil(per_page).max(1);
    let total = items.len();
    let shown: Vec<Value> = items
        .into_iter()
        .skip((page - 1) * per_page)
        .take(per_page)
        .collect();
    let mut headers = rate_headers();
    let path = rest.split('?').next().unwrap_or("");
    let others: Vec<String> = rest
        .split_once('?')
        .map(|(_, q)| q)
        .unwrap_or("")
        .split('&')
        .filter(|kv| !kv.is_empty() && !kv.starts_with("page=") && !kv.starts_with("per_page="))
        .map(str::to_owned)
        .collect();
    let link_to = |p: usize, rel: &str| {
        let mut query = others.clone();
        query.push(format!("per_page={per_page}"));
        query.push(format!("page={p}"));
        format!(
            "<http://127.0.0.1:{port}{prefix}{path}?{}>; rel=\"{rel}\"",
            query.join("&")
        )
    };
    let mut links = Vec::new();
    if page < pages {
        links.push(link_to(page + 1, "next"));
        links.push(link_to(pages, "last"));
    }
    if page > 1 {
        links.push(link_to(page - 1, "prev"));
        links.push(link_to(1, "first"));
    }
    if !links.is_empty() {
        headers.push(("link".into(), links.join(", ")));
    }
    Response {
        status: 200,
        headers,
        body: if field.is_empty() {
            Value::Array(shown).to_string()
        } else {
            json!({"total_count": total, field: shown}).to_string()
        }
        .into(),
    }
}

fn route(
    s: &mut State,
    method: &str,
    full: &str,
    body: Option<&Value>,
    port: u16,
    prefix: &str,
) -> Response {
    let Some((rest, seg)) = under(full, prefix) else {
        return error(404, "Not Found");
    };
    let text = || body_text(body);
    match (method, seg.as_slice()) {
        ("GET", ["repos", "octo", "gpu", "issues", n, "comments"])
        | ("GET", ["repositories", "42", "issues", n, "comments"]) => {
            let pr: u64 = n.parse().unwrap_or(0);
            let all: Vec<Value> = s
                .comments
                .iter()
                .filter(|c| c.pr == pr)
                .map(|c| comment_json(s, c, port))
                .collect();
            if s.gitea {
                let mut headers = vec![("x-total-count".to_owned(), all.len().to_string())];
                headers.push((
                    "access-control-expose-headers".into(),
                    "X-Total-Count".into(),
                ));
                return Response {
                    status: 200,
                    headers,
                    body: Value::Array(all).to_string().into(),
                };
            }
            let q = query(rest);
            let per_page = q
                .get("per_page")
                .and_then(|v| v.parse().ok())
                .unwrap_or(30usize)
                .min(100)
                .min(s.page_cap);
            let page = q.get("page").and_then(|v| v.parse().ok()).unwrap_or(1usize);
            let pages = if s.endless_pages {
                page + 1
            } else {
                all.len().div_ceil(per_page).max(1)
            };
            let items: Vec<Value> = all
                .into_iter()
                .skip((page - 1) * per_page)
                .take(per_page)
                .collect();
            let mut headers = rate_headers();
            // As GitHub does: absolute URLs of the `/repositories/ID/…` form.
            let link_to = |p: usize, rel: &str| {
                format!(
                    "<http://127.0.0.1:{port}{prefix}/repositories/42/issues/{pr}/comments?per_page={per_page}&page={p}>; rel=\"{rel}\""
                )
            };
            let mut links = Vec::new();
            if page > 1 {
                links.push(link_to(page - 1, "prev"));
            }
            if page < pages {
                links.push(link_to(page + 1, "next"));
                links.push(link_to(pages, "last"));
            }
            if page > 1 {
                links.push(link_to(1, "first"));
            }
            if !links.is_empty() {
                headers.push(("link".into(), links.join(", ")));
            }
            Response {
                status: 200,
                headers,
                body: Value::Array(items).to_string().into(),
            }
        }
        ("POST", ["repos", "octo", "gpu", "issues", n, "comments"]) => {
            let pr: u64 = n.parse().unwrap_or(0);
            let body = text();
            if let Some(r) = too_long(s, &body) {
                return r;
            }
            if let Some(rival) = s.rival.take() {
                s.next_id += 1;
                let id = s.next_id;
                s.comments.push(StoredComment {
                    id,
                    pr,
                    login: rival,
                    body: body.clone(),
                });
            }
            s.next_id += 1;
            let c = StoredComment {
                id: s.next_id,
                pr,
                login: s.login.clone(),
                body,
            };
            s.comments.push(c.clone());
            Response {
                status: 201,
                headers: rate_headers(),
                body: comment_json(s, &c, port).to_string().into(),
            }
        }
        ("PATCH", ["repos", "octo", "gpu", "issues", "comments", id]) => {
            let id: u64 = id.parse().unwrap_or(0);
            let body = text();
            if let Some(r) = too_long(s, &body) {
                return r;
            }
            match s.comments.iter_mut().find(|c| c.id == id) {
                Some(c) => {
                    c.body = body;
                    let c = c.clone();
                    Response {
                        status: 200,
                        headers: rate_headers(),
                        body: comment_json(s, &c, port).to_string().into(),
                    }
                }
                None => error(404, "Not Found"),
            }
        }
        ("DELETE", ["repos", "octo", "gpu", "issues", "comments", id]) => {
            let id: u64 = id.parse().unwrap_or(0);
            let before = s.comments.len();
            s.comments.retain(|c| c.id != id);
            if s.comments.len() == before {
                error(404, "Not Found")
            } else {
                Response {
                    status: 204,
                    headers: rate_headers(),
                    body: Vec::new(),
                }
            }
        }
        ("GET", ["repos", "octo", "gpu", "actions", "workflows", workflow, "runs"]) => {
            let q = query(rest);
            let runs: Vec<Value> = s
                .workflow_runs
                .iter()
                .filter(|(w, _)| w == workflow)
                .map(|(_, r)| r)
                .filter(|r| {
                    q.get("branch")
                        .is_none_or(|b| r["head_branch"] == b.as_str())
                })
                .filter(|r| {
                    q.get("head_sha")
                        .is_none_or(|h| r["head_sha"] == h.as_str())
                })
                .filter(|r| q.get("event").is_none_or(|e| r["event"] == e.as_str()))
                .filter(|r| {
                    q.get("status")
                        .is_none_or(|st| r["conclusion"] == st.as_str())
                })
                .cloned()
                .collect();
            paged(s, rest, port, prefix, "workflow_runs", runs)
        }
        ("GET", ["repos", "octo", "gpu", "actions", "artifacts"]) => {
            let q = query(rest);
            let list: Vec<Value> = s
                .artifacts
                .iter()
                .filter(|(_, a)| q.get("name").is_none_or(|n| a["name"] == n.as_str()))
                .map(|(run, a)| {
                    let mut a = a.clone();
                    a["workflow_run"] = json!({"id": run, "head_branch": "main"});
                    a
                })
                .collect();
            paged(s, rest, port, prefix, "artifacts", list)
        }
        ("GET", ["repos", "octo", "gpu", "actions", "runs", run, "artifacts"]) => {
            let run: u64 = run.parse().unwrap_or(0);
            let q = query(rest);
            let list: Vec<Value> = s
                .artifacts
                .iter()
                .filter(|(r, a)| *r == run && q.get("name").is_none_or(|n| a["name"] == n.as_str()))
                .map(|(run, a)| {
                    let mut a = a.clone();
                    a["workflow_run"] = json!({"id": run, "head_branch": "main"});
                    a
                })
                .collect();
            paged(s, rest, port, prefix, "artifacts", list)
        }
        ("GET", ["repos", "octo", "gpu", "actions", "runs", run, "jobs"]) => {
            // GitHub's `GET /repos/{owner}/{repo}/actions/runs/{run_id}/jobs`:
            // `{"total_count": N, "jobs": [...]}`, `per_page` up to 100, `link` to the other
            // pages.
            let run: u64 = run.parse().unwrap_or(0);
            let jobs: Vec<Value> = match s.jobs.get(&run) {
                Some(jobs) => jobs.clone(),
                None => vec![job_json(
                    run * 10 + 1,
                    "profile",
                    s.default_runner.as_deref(),
                )],
            };
            let jobs = jobs
                .into_iter()
                .map(|mut j| {
                    j["run_id"] = json!(run);
                    j
                })
                .collect();
            paged(s, rest, port, prefix, "jobs", jobs)
        }
        ("GET", ["repos", "octo", "gpu", "commits"]) => {
            if s.no_commits_api {
                return error(404, "Not Found");
            }
            let q = query(rest);
            let sha = q
                .get("sha")
                .map(|v| v.replace("%2F", "/"))
                .unwrap_or_default();
            // Only a branch's full ref is answered: a bare name could be a tag's.
            let Some(branch) = sha.strip_prefix("refs/heads/") else {
                return error(
                    422,
                    "the test server lists commits of refs/heads/BRANCH only",
                );
            };
            let commits: Vec<String> = match s.branch_commits.get(branch) {
                Some(list) => list.clone(),
                None => {
                    let mut list: Vec<String> = Vec::new();
                    for (_, r) in &s.workflow_runs {
                        let sha = r["head_sha"].as_str().unwrap_or_default().to_owned();
                        if r["event"] == "push"
                            && r["head_branch"] == branch
                            && !list.contains(&sha)
                        {
                            list.push(sha);
                        }
                    }
                    list
                }
            };
            let items = commits
                .into_iter()
                .map(|sha| json!({"sha": sha, "commit": {"message": "a commit"}}))
                .collect();
            paged(s, rest, port, prefix, "", items)
        }
        ("GET", ["repos", "octo", "gpu", "actions", "artifacts", id, "zip"]) => {
            let id: u64 = id.parse().unwrap_or(0);
            match s.downloads.get(&id) {
                Some(Download::Redirect(url)) => Response {
                    status: 302,
                    headers: vec![("location".into(), url.clone())],
                    body: Vec::new(),
                },
                Some(Download::Status(status, message)) => error(*status, message),
                None => error(404, "Not Found"),
            }
        }
        ("GET", ["repos", "octo", "gpu", "pulls"]) => {
            let pulls: Vec<Value> = s
                .pulls
                .iter()
                .map(|(n, sha)| json!({"number": n, "state": "open", "head": {"sha": sha, "ref": "feature", "repo": {"full_name": "fork/gpu", "fork": true}}, "base": {"sha": "0000", "ref": "main"}}))
                .collect();
            Response {
                status: 200,
                headers: rate_headers(),
                body: Value::Array(pulls).to_string().into(),
            }
        }
        _ => error(404, "Not Found"),
    }
}
