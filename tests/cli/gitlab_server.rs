//! A local GitLab-like REST API v4 for the GitLab tests: `GET /user`, a merge request's notes
//! (paged with `x-next-page`, created, updated with `PUT`, deleted), a project's pipelines
//! (filtered by `ref`, `status`, `source`, `scope=branches`), a pipeline's jobs, and a job's
//! artifacts answering with a redirect to another port (the storage host) or a status
//! (401/403/404/410). Scripted faults answer the next matching request; every request is
//! recorded. Each connection is served on a thread of its own (requests may overlap, and the
//! most under way at once is counted); every answer can wait a fixed time first. Loopback only; it stops when dropped.

use std::collections::{HashMap, VecDeque};
use std::io::BufReader;
use std::net::TcpStream;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};

use crate::http_fake::{body_text, read_request, under, Loop, Response as Answer};

/// A request as the server saw it.
#[derive(Debug, Clone)]
pub struct Seen {
    pub method: String,
    pub path: String,
    /// Lower-cased names.
    pub headers: Vec<(String, String)>,
}

impl Seen {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

#[derive(Debug, Clone)]
pub struct Note {
    pub id: u64,
    pub iid: u64,
    pub author: String,
    pub body: String,
    pub system: bool,
}

/// How a job's artifacts download answers.
#[derive(Debug, Clone)]
pub enum Download {
    /// 302 to this URL.
    Redirect(String),
    /// A status and its message.
    Status(u16, String),
    /// 200 with the archive itself (a self-managed GitLab with local artifact storage).
    Body(Vec<u8>),
}

#[derive(Debug, Default)]
pub struct State {
    /// The token's user; `None`: `GET /user` answers 401.
    pub user: Option<String>,
    /// The token the API accepts (`PRIVATE-TOKEN`); anything else is a 401.
    pub token: String,
    pub notes: Vec<Note>,
    pub next_id: u64,
    /// Notes per page at most (GitLab: 100).
    pub page_cap: usize,
    /// Pipelines, newest first (`id`, `sha`, `ref`, `status`, `source`, `tag`, …).
    pub pipelines: Vec<Value>,
    /// Jobs by pipeline id.
    pub jobs: HashMap<u64, Vec<Value>>,
    /// Downloads by job id.
    pub downloads: HashMap<u64, Download>,
    /// Faults: (method, path part, status, body), each answering the next match once.
    pub faults: VecDeque<(&'static str, String, u16, String)>,
    /// Every answer waits this long first.
    pub delay_each: Duration,
    /// Answers to a path holding the text wait this long more.
    pub slow: Vec<(String, Duration)>,
    /// Files served without a token at `/blob/NAME` (a storage host on the same port).
    pub blobs: HashMap<String, Vec<u8>>,
    /// The first pages of every merge request's notes, before its own notes: this many pages,
    /// the first of the first body (a JSON array), the others of the second, each naming the
    /// next.
    pub filler_pages: Option<(usize, Vec<u8>, Vec<u8>)>,
    pub requests: Vec<Seen>,
    /// Requests read and not yet answered, and the most there were at once.
    pub in_flight: usize,
    pub most_in_flight: usize,
}

pub struct Server {
    pub port: u16,
    state: Arc<Mutex<State>>,
    _loop: Loop,
}

impl Server {
    /// A GitLab-like API at `http://127.0.0.1:PORT/api/v4`, accepting `token`, whose user is
    /// `nsys-bot`.
    pub fn start(token: &str) -> Server {
        let state = Arc::new(Mutex::new(State {
            user: Some("nsys-bot".into()),
            token: token.into(),
            next_id: 5000,
            page_cap: 100,
            ..State::default()
        }));
        let served = state.clone();
        let accept = Loop::spawn(Duration::from_secs(1500), move |stream, _| {
            let state = served.clone();
            std::thread::spawn(move || {
                let _ = serve(stream, &state);
            });
        });
        Server {
            port: accept.port,
            state,
            _loop: accept,
        }
    }

    pub fn api_url(&self) -> String {
        format!("http://127.0.0.1:{}/api/v4", self.port)
    }

    pub fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap()
    }

    pub fn requests(&self) -> Vec<Seen> {
        self.state().requests.clone()
    }

    /// Adds a note by `author`; returns its id.
    pub fn seed(&self, iid: u64, author: &str, body: &str) -> u64 {
        let mut s = self.state();
        s.next_id += 1;
        let id = s.next_id;
        s.notes.push(Note {
            id,
            iid,
            author: author.into(),
            body: body.into(),
            system: false,
        });
        id
    }

    pub fn notes(&self, iid: u64) -> Vec<Note> {
        self.state()
            .notes
            .iter()
            .filter(|n| n.iid == iid && !n.system)
            .cloned()
            .collect()
    }

    pub fn fault(&self, method: &'static str, path: &str, status: u16, message: &str) {
        self.state().faults.push_back((
            method,
            path.into(),
            status,
            json!({ "message": message }).to_string(),
        ));
    }
}

fn answer(status: u16, body: String) -> Answer {
    Answer::new(status, Vec::new(), body)
}

fn error(status: u16, message: &str) -> Answer {
    answer(status, json!({ "message": message }).to_string())
}

fn serve(stream: TcpStream, state: &Mutex<State>) -> std::io::Result<()> {
    let request = read_request(&mut BufReader::new(stream.try_clone()?))?;
    let (method, path, headers, raw) = (
        request.method,
        request.target,
        request.headers,
        request.body,
    );
    let body: Option<Value> = serde_json::from_slice(&raw).ok();
    let seen = Seen {
        method: method.clone(),
        path: path.clone(),
        headers,
    };
    let (delay, response) = {
        let mut s = state.lock().unwrap();
        s.requests.push(seen.clone());
        s.in_flight += 1;
        s.most_in_flight = s.most_in_flight.max(s.in_flight);
        let delay = s.delay_each
            + s.slow
                .iter()
                .filter(|(part, _)| path.contains(part.as_str()))
                .map(|(_, d)| *d)
                .sum::<Duration>();
        let blob = path
            .strip_prefix("/blob/")
            .map(|name| name.split('?').next().unwrap_or(name))
            .and_then(|name| s.blobs.get(name).cloned());
        let fault = s
            .faults
            .iter()
            .position(|(m, p, _, _)| *m == method && path.contains(p.as_str()))
            .and_then(|i| s.faults.remove(i));
        let response = match fault {
            Some((_, _, status, body)) => answer(status, body),
            None if blob.is_some() => Answer {
                status: 200,
                headers: Vec::new(),
                body: blob.unwrap_or_default(),
            },
            None if seen.header("private-token") != Some(s.token.as_str()) => {
                error(401, "401 Unauthorized")
            }
            None => route(&mut s, &method, &path, body.as_ref()),
        };
        (delay, response)
    };
    std::thread::sleep(delay);
    // Counted out before the answer is sent: a client that sends its next request as soon as
    // it has this answer is never seen with both under way.
    state.lock().unwrap().in_flight -= 1;
    let mut out = stream;
    response.write(&mut out, "application/json")
}

fn query(path: &str) -> HashMap<String, String> {
    crate::http_fake::query(path)
        .into_iter()
        .map(|(k, v)| (k, v.replace("%2F", "/")))
        .collect()
}

/// One page of `items` with GitLab's paging headers.
fn paged(items: Vec<Value>, path: &str, cap: usize) -> Answer {
    let q = query(path);
    let per_page = q
        .get("per_page")
        .and_then(|v| v.parse().ok())
        .unwrap_or(20usize)
        .clamp(1, 100)
        .min(cap);
    let page = q.get("page").and_then(|v| v.parse().ok()).unwrap_or(1usize);
    let pages = items.len().div_ceil(per_page).max(1);
    let shown: Vec<Value> = items
        .into_iter()
        .skip((page - 1) * per_page)
        .take(per_page)
        .collect();
    let next = if page < pages {
        (page + 1).to_string()
    } else {
        String::new()
    };
    Answer {
        status: 200,
        headers: vec![
            ("x-page".into(), page.to_string()),
            ("x-next-page".into(), next),
            ("x-per-page".into(), per_page.to_string()),
            ("x-total-pages".into(), pages.to_string()),
        ],
        body: Value::Array(shown).to_string().into_bytes(),
    }
}

fn note_json(n: &Note) -> Value {
    json!({"id": n.id, "type": null, "body": n.body, "system": n.system,
           "author": {"id": 7, "username": n.author, "name": n.author},
           "noteable_type": "MergeRequest", "noteable_iid": n.iid,
           "created_at": "2026-11-01T00:00:00.000Z"})
}

fn route(s: &mut State, method: &str, full: &str, body: Option<&Value>) -> Answer {
    let Some((rest, seg)) = under(full, "/api/v4") else {
        return error(404, "404 Not Found");
    };
    let text = || body_text(body);
    match (method, seg.as_slice()) {
        ("GET", ["user"]) => match &s.user {
            Some(u) => answer(200, json!({"id": 7, "username": u}).to_string()),
            None => error(401, "401 Unauthorized"),
        },
        ("GET", ["projects", _, "merge_requests", iid, "notes"]) => {
            let page: usize = query(rest)
                .get("page")
                .and_then(|p| p.parse().ok())
                .unwrap_or(1);
            let filler = s.filler_pages.as_ref().map_or(0, |(n, _, _)| *n);
            if let Some((_, first, others)) = s.filler_pages.as_ref().filter(|_| page <= filler) {
                return Answer {
                    status: 200,
                    headers: vec![("x-next-page".into(), (page + 1).to_string())],
                    body: if page == 1 { first } else { others }.clone(),
                };
            }
            let rest = &format!(
                "{}?per_page=100&page={}",
                rest.split('?').next().unwrap_or(""),
                page - filler
            );
            let iid: u64 = iid.parse().unwrap_or(0);
            let all = s
                .notes
                .iter()
                .filter(|n| n.iid == iid)
                .map(note_json)
                .collect();
            paged(all, rest, s.page_cap)
        }
        ("POST", ["projects", _, "merge_requests", iid, "notes"]) => {
            let body = text();
            if body.chars().count() > 1_000_000 {
                return answer(
                    400,
                    json!({"message": {"note": ["is too long (maximum is 1000000 characters)"]}})
                        .to_string(),
                );
            }
            s.next_id += 1;
            let n = Note {
                id: s.next_id,
                iid: iid.parse().unwrap_or(0),
                author: s.user.clone().unwrap_or_default(),
                body,
                system: false,
            };
            s.notes.push(n.clone());
            answer(201, note_json(&n).to_string())
        }
        ("PUT", ["projects", _, "merge_requests", _, "notes", id]) => {
            let id: u64 = id.parse().unwrap_or(0);
            let body = text();
            match s.notes.iter_mut().find(|n| n.id == id) {
                Some(n) => {
                    n.body = body;
                    let n = n.clone();
                    answer(200, note_json(&n).to_string())
                }
                None => error(404, "404 Not found"),
            }
        }
        ("DELETE", ["projects", _, "merge_requests", _, "notes", id]) => {
            let id: u64 = id.parse().unwrap_or(0);
            s.notes.retain(|n| n.id != id);
            answer(204, String::new())
        }
        ("GET", ["projects", _, "pipelines"]) => {
            let q = query(rest);
            let list = s
                .pipelines
                .iter()
                .filter(|p| q.get("ref").is_none_or(|r| p["ref"] == r.as_str()))
                .filter(|p| q.get("status").is_none_or(|v| p["status"] == v.as_str()))
                .filter(|p| q.get("source").is_none_or(|v| p["source"] == v.as_str()))
                .filter(|p| {
                    q.get("scope")
                        .is_none_or(|v| v != "branches" || p["tag"] != true)
                })
                .cloned()
                .collect();
            paged(list, rest, 100)
        }
        ("GET", ["projects", _, "pipelines", id, "jobs"]) => {
            let id: u64 = id.parse().unwrap_or(0);
            match s.jobs.get(&id) {
                Some(jobs) => paged(jobs.clone(), rest, 100),
                None => error(404, "404 Not found"),
            }
        }
        ("GET", ["projects", _, "jobs", id, "artifacts"]) => {
            let id: u64 = id.parse().unwrap_or(0);
            match s.downloads.get(&id) {
                Some(Download::Redirect(url)) => Answer {
                    status: 302,
                    headers: vec![("location".into(), url.clone())],
                    body: Vec::new(),
                },
                Some(Download::Status(status, message)) => error(*status, message),
                Some(Download::Body(bytes)) => Answer {
                    status: 200,
                    headers: Vec::new(),
                    body: bytes.clone(),
                },
                None => error(404, "404 Not found"),
            }
        }
        _ => error(404, "404 Not Found"),
    }
}
