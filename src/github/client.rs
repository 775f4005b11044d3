//! The HTTP edge. Octocrab sends every request with its raw `_get`/`_post`/`_patch`/`_delete`,
//! so the status, headers (`retry-after`, `x-ratelimit-*`, `link`) and body of each response
//! are ours to read; its middleware adds our default headers (`Accept`, `User-Agent`; octocrab
//! itself adds `X-GitHub-Api-Version`) and the token, which goes only to the API's own host.
//! Octocrab is built without its `retry` and `follow-redirect` features: nothing retries a
//! create behind our back, and a redirect comes back as it is, never followed with the token.
//!
//! Why the hyper client under octocrab is built here and not by `OctocrabBuilder::build`
//! (feature `default-client`): that one always sends `User-Agent: octocrab` besides ours (two
//! user agents on every request, as tried), needs the system's TLS roots even for an
//! `http://` API URL, lets an `https://` API's `link` lead to plain HTTP, and its `timeout`
//! feature bounds each read, not a whole request. So what is kept is the connector: TLS with
//! the system's roots (GHES private CAs), https only for an https API, the connect timeout.
//! The deadline of a whole request is ours (`tokio::time::timeout`). Responses are parsed into
//! the few fields needed ([`Comment`]), so Gitea's and Forgejo's JSON fit too.
//!
//! A response body is read as it comes, up to [`MAX_RESPONSE_BYTES`]; past that the request
//! fails, not retried. Server text that may be shown or stored (messages, a body's start, a
//! path from `link`, a parser's quote of the body, a comment's URL) is redacted with
//! [`Token::redact`] where it enters, since a server or a proxy may echo `Authorization`.

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use http::header::{HeaderMap, HeaderValue, ACCEPT, CONTENT_LENGTH, USER_AGENT};
use http::{Method, Uri};
use http_body_util::BodyExt;
use hyper_util::client::legacy::connect::{Connect, HttpConnector};
use octocrab::service::middleware::auth_header::AuthHeaderLayer;
use octocrab::service::middleware::extra_headers::ExtraHeadersLayer;
use octocrab::{AuthState, Octocrab, OctocrabBuilder};
use serde::Deserialize;
use serde_json::{json, Value};

use super::comment::Comment;
use super::error::PostError;
use super::repo::Repo;
use super::token::Token;
use crate::say::say;

/// Pages of comments read at most (100 comments each).
const MAX_PAGES: usize = 200;
/// The wait before retrying a rate limit that names no time.
const RATE_LIMIT_WAIT: Duration = Duration::from_secs(10);
/// The most of one response body read: 64 MiB (a 1.5 GB reply once took 3 GB of memory).
///
/// It must stay above the largest reply GitHub can legitimately send: a page of 100 comments
/// (or 100 pull requests). A body is at most 65,536 characters as GitHub's 422 says, but up
/// to 262,144 bytes were measured accepted (dead-claudia/github-limits#13,
/// objectstack-ai/objectstack#18826). JSON writes `"`, `\` and a line break in two bytes,
/// so such a body takes up to 524,288 bytes, and 100 of them with their other fields (a few
/// KB for a comment, some 30 KB for a pull request) about 53 to 56 MB. (Control characters,
/// six bytes each, are left out: no one's comment is made of them.) 8 MiB would refuse real
/// pages: 100 comments of 65,536 characters in a 3-byte script (CJK) make about 20 MB.
pub const MAX_RESPONSE_BYTES: usize = 64 << 20;

/// The default API base.
pub const DEFAULT_API_URL: &str = "https://api.github.com";

#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// `GITHUB_API_URL`: `https://api.github.com`, `https://HOST/api/v3`, `https://HOST/api/v1`.
    pub api_url: String,
    pub token: Token,
    /// Tries of one request (1 = no retry).
    pub max_tries: u32,
    /// All waiting between tries together stays under this.
    pub budget: Duration,
    pub connect_timeout: Duration,
    /// One request, from sending it to the last byte of the response.
    pub request_timeout: Duration,
}

/// The answer to a create.
#[derive(Debug)]
pub enum Created {
    Done(Comment),
    /// It failed in a way that may or may not have created the comment (5xx, timeout) or
    /// was refused for a rate limit: list before trying again.
    Unknown {
        wait: Duration,
        reason: String,
    },
}

pub(super) struct Reply {
    pub(super) status: u16,
    pub(super) headers: HeaderMap,
    pub(super) body: Vec<u8>,
}

/// One try's verdict.
enum Try {
    Reply(Reply),
    /// Worth another try after `wait`.
    Again {
        wait: Duration,
        reason: String,
    },
    /// Failed in a way another try would repeat (a reply over the cap).
    Fail(PostError),
}

/// Why one exchange gave no reply.
#[derive(Debug)]
enum SendError {
    /// A transport failure or a timeout: worth another try. The text holds no header.
    Again(String),
    /// Final: a reply larger than [`MAX_RESPONSE_BYTES`].
    Final(PostError),
}

/// Why a body was not read whole.
#[derive(Debug, PartialEq, Eq)]
enum BodyError {
    /// More than the cap.
    TooLarge,
    /// The transport failed while reading.
    Failed(String),
}

pub struct Client {
    crab: Octocrab,
    /// The same client without the token layer: for a download's redirect target (a storage
    /// host, which must never see the token, even on the API's own host).
    pub(super) anon: Octocrab,
    config: ClientConfig,
    /// The API base without a trailing slash.
    base: String,
    started: Instant,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("base", &self.base)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl Client {
    /// Builds the client; must run inside a tokio runtime.
    pub fn new(config: ClientConfig) -> Result<Self, PostError> {
        let base = config.api_url.trim().trim_end_matches('/').to_owned();
        let uri: Uri = base
            .parse()
            .map_err(|_| PostError::Config(format!("GITHUB_API_URL `{base}` is not a URL")))?;
        let (Some(scheme), Some(_)) = (uri.scheme_str(), uri.authority()) else {
            return Err(PostError::Config(format!(
                "GITHUB_API_URL `{base}` is not an absolute http(s) URL"
            )));
        };
        let headers = default_headers(&config.token, &uri)?;
        let mut http = HttpConnector::new();
        http.enforce_http(false);
        http.set_connect_timeout(Some(config.connect_timeout));
        let (crab, anon) = match scheme {
            "https" => {
                let provider = Arc::new(rustls::crypto::ring::default_provider());
                let https = hyper_rustls::HttpsConnectorBuilder::new()
                    .with_provider_and_native_roots(provider)
                    .map_err(|e| {
                        PostError::Config(format!("cannot load the system's TLS roots: {e}"))
                    })?
                    .https_only()
                    .enable_http1()
                    .wrap_connector(http);
                (
                    octocrab_over(https.clone(), &headers, true),
                    octocrab_over(https, &headers, false),
                )
            }
            "http" => (
                octocrab_over(http.clone(), &headers, true),
                octocrab_over(http, &headers, false),
            ),
            other => {
                return Err(PostError::Config(format!(
                    "GITHUB_API_URL `{base}`: unsupported scheme {other}"
                )))
            }
        };
        Ok(Client {
            crab,
            anon,
            base,
            config,
            started: Instant::now(),
        })
    }

    pub fn config(&self) -> &ClientConfig {
        &self.config
    }

    /// `/repos/O/R/issues/N/comments` (for messages).
    pub fn comments_path(&self, repo: &Repo, pr: u64) -> String {
        format!("/repos/{}/{}/issues/{pr}/comments", repo.owner, repo.name)
    }

    pub(super) fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// Server text as it may be shown or stored: without the token.
    pub(super) fn redact(&self, text: &str) -> String {
        self.config.token.redact(text)
    }

    /// The message of an error body, redacted.
    fn message(&self, body: &[u8]) -> String {
        message_with(body, &|text| self.redact(text))
    }

    /// A comment whose URL (shown, and stored as the step output `comment-url`) holds no token.
    fn redacted(&self, mut comment: Comment) -> Comment {
        comment.html_url = comment.html_url.map(|url| self.redact(&url));
        comment
    }

    /// Waits before another try, or refuses when that would pass the budget.
    pub async fn sleep(&self, wait: Duration, reason: &str) -> Result<(), PostError> {
        let left = self.config.budget.saturating_sub(self.started.elapsed());
        if wait > left {
            return Err(PostError::OutOfTime(format!(
                "{reason}; waiting {} s more would pass the post time limit of {} s (--post-timeout)",
                wait.as_secs_f64().ceil(),
                self.config.budget.as_secs()
            )));
        }
        say!(
            "nsys-gate: {reason}; trying again in {:.0} s",
            wait.as_secs_f64().ceil()
        );
        tokio::time::sleep(wait).await;
        Ok(())
    }

    /// Sends once, and reads the reply up to [`MAX_RESPONSE_BYTES`].
    async fn send_once(
        &self,
        method: &Method,
        url: &str,
        body: Option<&Value>,
    ) -> Result<Reply, SendError> {
        let again = SendError::Again;
        let uri: Uri = url
            .parse()
            .map_err(|_| again(format!("bad URL {}", self.redact(url))))?;
        let too_large = |message: String| {
            SendError::Final(PostError::Response {
                method: method.to_string(),
                path: self.display_path(url),
                message,
            })
        };
        let exchange = async {
            let response = match *method {
                Method::GET => self.crab._get(uri).await,
                Method::POST => self.crab._post(uri, body).await,
                Method::PATCH => self.crab._patch(uri, body).await,
                Method::DELETE => self.crab._delete(uri, body).await,
                ref other => {
                    return Err(again(format!("{other} is not a request this client sends")))
                }
            }
            .map_err(|e| again(format!("request failed: {}", self.redact(&error_text(&e)))))?;
            let (parts, body) = response.into_parts();
            let declared = parts
                .headers
                .get(CONTENT_LENGTH)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse::<u64>().ok());
            if let Some(n) = declared.filter(|&n| n > MAX_RESPONSE_BYTES as u64) {
                return Err(too_large(format!(
                    "the response says it is {n} bytes (content-length), more than {} MiB, the most nsys-gate reads of one response; it was not read",
                    MAX_RESPONSE_BYTES >> 20
                )));
            }
            let bytes = read_capped(body, declared, MAX_RESPONSE_BYTES)
                .await
                .map_err(|e| match e {
                    BodyError::TooLarge => too_large(format!(
                        "the response is larger than {} MiB, the most nsys-gate reads of one response; it was not read further",
                        MAX_RESPONSE_BYTES >> 20
                    )),
                    BodyError::Failed(text) => again(format!(
                        "reading the response failed: {}",
                        self.redact(&text)
                    )),
                })?;
            Ok(Reply {
                status: parts.status.as_u16(),
                headers: parts.headers,
                body: bytes,
            })
        };
        match tokio::time::timeout(self.config.request_timeout, exchange).await {
            Ok(r) => r,
            Err(_) => Err(again(format!(
                "no response within {} s",
                self.config.request_timeout.as_secs()
            ))),
        }
    }

    /// One try and its verdict: a reply to hand back, or a reason to try again.
    async fn try_once(&self, method: &Method, url: &str, body: Option<&Value>, tries: u32) -> Try {
        let backoff = Duration::from_secs(1u64 << tries.saturating_sub(1).min(5));
        match self.send_once(method, url, body).await {
            Err(SendError::Again(message)) => Try::Again {
                wait: backoff,
                reason: format!("{method} {}: {message}", self.display_path(url)),
            },
            Err(SendError::Final(e)) => Try::Fail(e),
            Ok(reply) => match retry_wait(&reply, backoff) {
                Some(wait) => Try::Again {
                    wait,
                    reason: format!(
                        "{method} {}: HTTP {}: {}",
                        self.display_path(url),
                        reply.status,
                        self.message(&reply.body)
                    ),
                },
                None => Try::Reply(reply),
            },
        }
    }

    /// Sends an idempotent request (GET, PATCH, DELETE), retrying 5xx, timeouts and rate
    /// limits within the tries and the budget.
    pub(super) async fn request(
        &self,
        method: Method,
        url: &str,
        body: Option<&Value>,
    ) -> Result<Reply, PostError> {
        let mut tries = 0;
        loop {
            tries += 1;
            match self.try_once(&method, url, body, tries).await {
                Try::Reply(r) => return Ok(r),
                Try::Fail(e) => return Err(e),
                Try::Again { wait, reason } => {
                    if tries >= self.config.max_tries {
                        return Err(PostError::GaveUp {
                            tries,
                            last: reason,
                        });
                    }
                    self.sleep(wait, &reason).await?;
                }
            }
        }
    }

    /// The URL without the host, for messages (redacted: it may come from a `link`).
    pub(super) fn display_path(&self, url: &str) -> String {
        let path = url
            .parse::<Uri>()
            .ok()
            .and_then(|u| u.path_and_query().map(|p| p.as_str().to_owned()))
            .unwrap_or_else(|| url.to_owned());
        self.redact(&path)
    }

    pub(super) fn failure(&self, method: &str, url: &str, reply: &Reply) -> PostError {
        let message = self.message(&reply.body);
        let path = self.display_path(url);
        let method = method.to_owned();
        // 404 on a read is a wrong repository or number; on a write, as 403, a token that
        // may not write here.
        let no_access = reply.status == 403 || (reply.status == 404 && method != "GET");
        match reply.status {
            _ if no_access => PostError::NoAccess {
                method,
                path,
                status: reply.status,
                message,
            },
            422 if message.to_ascii_lowercase().contains("too long") => PostError::TooLong {
                method,
                path,
                message,
            },
            status => PostError::Status {
                method,
                path,
                status,
                message,
            },
        }
    }

    pub(super) fn parse<T: serde::de::DeserializeOwned>(
        &self,
        method: &str,
        url: &str,
        reply: &Reply,
    ) -> Result<T, PostError> {
        serde_json::from_slice(&reply.body).map_err(|e| PostError::Response {
            method: method.to_owned(),
            path: self.display_path(url),
            // serde quotes the body's values ("invalid type: string …").
            message: self.redact(&format!(
                "HTTP {}, body is not the JSON expected ({e})",
                reply.status
            )),
        })
    }

    /// Every comment of the pull request, following `link: rel="next"` as given; a server
    /// that sends no `link` (Gitea, Forgejo) returned them all at once.
    pub async fn list_comments(&self, repo: &Repo, pr: u64) -> Result<Vec<Comment>, PostError> {
        let mut url = self.url(&format!("{}?per_page=100", self.comments_path(repo, pr)));
        let mut all = Vec::new();
        for _ in 0..MAX_PAGES {
            let reply = self.request(Method::GET, &url, None).await?;
            if reply.status != 200 {
                return Err(self.failure("GET", &url, &reply));
            }
            let page: Vec<Comment> = self.parse("GET", &url, &reply)?;
            all.extend(page.into_iter().map(|c| self.redacted(c)));
            match next_link(&reply.headers) {
                Some(next) => url = next,
                None => return Ok(all),
            }
        }
        Err(PostError::Response {
            method: "GET".into(),
            path: self.display_path(&url),
            message: format!("more than {MAX_PAGES} pages of comments"),
        })
    }

    /// One POST: a create is never sent twice by this function.
    pub async fn create_comment(
        &self,
        repo: &Repo,
        pr: u64,
        body: &str,
    ) -> Result<Created, PostError> {
        let url = self.url(&self.comments_path(repo, pr));
        match self
            .try_once(&Method::POST, &url, Some(&json!({ "body": body })), 1)
            .await
        {
            Try::Again { wait, reason } => Ok(Created::Unknown { wait, reason }),
            Try::Fail(e) => Err(e),
            Try::Reply(reply) if reply.status == 201 || reply.status == 200 => Ok(Created::Done(
                self.redacted(self.parse("POST", &url, &reply)?),
            )),
            Try::Reply(reply) => Err(self.failure("POST", &url, &reply)),
        }
    }

    pub async fn update_comment(
        &self,
        repo: &Repo,
        id: u64,
        body: &str,
    ) -> Result<Comment, PostError> {
        let url = self.url(&format!(
            "/repos/{}/{}/issues/comments/{id}",
            repo.owner, repo.name
        ));
        let reply = self
            .request(Method::PATCH, &url, Some(&json!({ "body": body })))
            .await?;
        match reply.status {
            200 | 201 => self.parse("PATCH", &url, &reply).map(|c| self.redacted(c)),
            // Gitea answers 204 for a comment without content.
            204 => Ok(Comment {
                id,
                body: None,
                user: None,
                html_url: None,
            }),
            _ => Err(self.failure("PATCH", &url, &reply)),
        }
    }

    pub async fn delete_comment(&self, repo: &Repo, id: u64) -> Result<(), PostError> {
        let url = self.url(&format!(
            "/repos/{}/{}/issues/comments/{id}",
            repo.owner, repo.name
        ));
        let reply = self.request(Method::DELETE, &url, None).await?;
        match reply.status {
            // 404: someone else deleted it first.
            200 | 204 | 404 => Ok(()),
            _ => Err(self.failure("DELETE", &url, &reply)),
        }
    }

    /// The number of the open pull request whose head is `sha` (the lowest if several).
    pub async fn pull_by_head(&self, repo: &Repo, sha: &str) -> Result<Option<u64>, PostError> {
        Ok(self.open_pull_by_head(repo, sha).await?.map(|p| p.number))
    }

    /// The open pull request whose head is `sha` (the lowest number if several), with its
    /// base; every page of open pull requests is looked at.
    pub async fn open_pull_by_head(
        &self,
        repo: &Repo,
        sha: &str,
    ) -> Result<Option<OpenPull>, PostError> {
        #[derive(Deserialize)]
        struct Pull {
            number: u64,
            head: Side,
            #[serde(default)]
            base: Option<Side>,
        }
        #[derive(Deserialize)]
        struct Side {
            #[serde(default)]
            sha: Option<String>,
            #[serde(rename = "ref", default)]
            branch: Option<String>,
        }
        let mut url = self.url(&format!(
            "/repos/{}/{}/pulls?state=open&per_page=100",
            repo.owner, repo.name
        ));
        let mut found: Option<OpenPull> = None;
        for _ in 0..MAX_PAGES {
            let reply = self.request(Method::GET, &url, None).await?;
            if reply.status != 200 {
                return Err(self.failure("GET", &url, &reply));
            }
            let pulls: Vec<Pull> = self.parse("GET", &url, &reply)?;
            for p in pulls {
                let matches = p
                    .head
                    .sha
                    .as_deref()
                    .is_some_and(|s| s.eq_ignore_ascii_case(sha));
                if matches && found.as_ref().is_none_or(|f| p.number < f.number) {
                    let base = p.base.unwrap_or(Side {
                        sha: None,
                        branch: None,
                    });
                    found = Some(OpenPull {
                        number: p.number,
                        base_ref: base.branch,
                        base_sha: base.sha,
                    });
                }
            }
            match next_link(&reply.headers) {
                Some(next) => url = next,
                None => break,
            }
        }
        Ok(found)
    }
}

/// An open pull request as [`Client::open_pull_by_head`] finds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenPull {
    pub number: u64,
    /// The base branch's name, and the commit it pointed at when the pull request was last
    /// updated.
    pub base_ref: Option<String>,
    pub base_sha: Option<String>,
}

/// Octocrab's layers for every request: `Accept` and our `User-Agent`, and the token, which
/// octocrab adds only to requests for the API's host (a `link` could point elsewhere).
struct Headers {
    extra: ExtraHeadersLayer,
    auth: AuthHeaderLayer,
}

fn default_headers(token: &Token, api: &Uri) -> Result<Headers, PostError> {
    let mut bearer =
        HeaderValue::from_str(&format!("Bearer {}", token.expose())).map_err(|_| {
            PostError::Config("the token holds characters not allowed in a header".into())
        })?;
    bearer.set_sensitive(true);
    // `crate::TOOL_VERSION` is this same `CARGO_PKG_VERSION`.
    let agent = HeaderValue::from_static(concat!("nsys-gate/", env!("CARGO_PKG_VERSION")));
    let extra = vec![
        (
            ACCEPT,
            HeaderValue::from_static("application/vnd.github+json"),
        ),
        (USER_AGENT, agent),
    ];
    Ok(Headers {
        extra: ExtraHeadersLayer::new(Arc::new(extra)),
        auth: AuthHeaderLayer::new(Some(bearer), api.clone(), api.clone()),
    })
}

/// Octocrab over a hyper client on `connector` (HTTP/1), with no retry layer; with the token
/// layer only when `token`.
fn octocrab_over<C>(connector: C, headers: &Headers, token: bool) -> Octocrab
where
    C: Connect + Clone + Send + Sync + 'static,
{
    let executor = hyper_util::rt::TokioExecutor::new();
    let client = hyper_util::client::legacy::Client::builder(executor).build(connector);
    let with_headers = OctocrabBuilder::new_empty()
        .with_service(client)
        .with_layer(&headers.extra);
    if token {
        with_headers
            .with_layer(&headers.auth)
            .with_auth(AuthState::None)
            .build()
            .unwrap_or_else(|never| match never {})
    } else {
        with_headers
            .with_auth(AuthState::None)
            .build()
            .unwrap_or_else(|never| match never {})
    }
}

/// How long to wait before another try, or `None` when the reply is final: 5xx and 429,
/// and 403 for a rate limit (`x-ratelimit-remaining: 0` or a message saying so), wait for
/// `retry-after`, else `x-ratelimit-reset`, else `backoff` (or longer for a rate limit).
fn retry_wait(reply: &Reply, backoff: Duration) -> Option<Duration> {
    let header = |name: &str| {
        reply
            .headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    let remaining_zero = header("x-ratelimit-remaining") == Some("0");
    let rate_limited = reply.status == 429
        || (reply.status == 403
            && (remaining_zero
                || message_of(&reply.body)
                    .to_ascii_lowercase()
                    .contains("rate limit")));
    if !rate_limited && reply.status < 500 {
        return None;
    }
    if let Some(secs) = header("retry-after").and_then(|v| v.parse::<u64>().ok()) {
        return Some(Duration::from_secs(secs));
    }
    if remaining_zero {
        if let Some(reset) = header("x-ratelimit-reset").and_then(|v| v.parse::<u64>().ok()) {
            let now = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap_or_default()
                .as_secs();
            return Some(Duration::from_secs(reset.saturating_sub(now).max(1)));
        }
    }
    Some(if rate_limited {
        backoff.max(RATE_LIMIT_WAIT)
    } else {
        backoff
    })
}

/// The `rel="next"` URL of a `link` header.
pub fn next_link(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(http::header::LINK)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .find_map(|part| {
            let (target, params) = part.split_once(';')?;
            let target = target.trim().strip_prefix('<')?.strip_suffix('>')?;
            let is_next = params.split(';').any(|p| {
                p.trim()
                    .strip_prefix("rel=")
                    .map(|r| r.trim_matches('"').split_whitespace().any(|r| r == "next"))
                    .unwrap_or(false)
            });
            is_next.then(|| target.to_owned())
        })
}

/// The body read as it comes, refused once it passes `cap` bytes: never more than `cap`
/// bytes are held (the buffer grows by doubling, clamped to the cap). `declared` is the
/// `content-length`, if any, at most `cap`: the buffer's first size.
async fn read_capped<B>(
    mut body: B,
    declared: Option<u64>,
    cap: usize,
) -> Result<Vec<u8>, BodyError>
where
    B: BodyExt + Unpin,
    B::Data: AsRef<[u8]>,
    B::Error: std::error::Error,
{
    let first = declared.map_or(0, |n| usize::try_from(n).unwrap_or(cap).min(cap));
    let mut bytes = Vec::with_capacity(first);
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| BodyError::Failed(error_text(&e)))?;
        // Anything but data (trailers) is not part of the body.
        let Ok(data) = frame.into_data() else {
            continue;
        };
        let data = data.as_ref();
        if data.len() > cap - bytes.len() {
            return Err(BodyError::TooLarge);
        }
        let needed = bytes.len() + data.len();
        if needed > bytes.capacity() {
            let grown = (bytes.capacity() * 2).clamp(needed, cap);
            bytes.reserve_exact(grown - bytes.len());
        }
        bytes.extend_from_slice(data);
    }
    Ok(bytes)
}

/// GitHub's `message` (and its `errors[].message`), else the start of the body.
fn message_of(body: &[u8]) -> String {
    message_with(body, &|text| text.to_owned())
}

/// [`message_of`], each text passed through `clean` (the redaction) before it is cut, so that
/// nothing `clean` hides can straddle the cut.
fn message_with(body: &[u8], clean: &dyn Fn(&str) -> String) -> String {
    /// The start of a body that is not JSON, cleaned before the first 200 characters are kept:
    /// room for a token (or a credential) that begins before the cut.
    const WINDOW: usize = 64 << 10;
    if let Ok(v) = serde_json::from_slice::<Value>(body) {
        let mut parts: Vec<String> = Vec::new();
        if let Some(m) = v.get("message").and_then(Value::as_str) {
            parts.push(clean(m));
        }
        if let Some(errors) = v.get("errors").and_then(Value::as_array) {
            for e in errors {
                if let Some(m) = e.get("message").and_then(Value::as_str) {
                    parts.push(clean(m));
                }
            }
        }
        if !parts.is_empty() {
            return parts.join(": ");
        }
    }
    let text = String::from_utf8_lossy(&body[..body.len().min(WINDOW)]);
    let text = clean(text.trim());
    if text.is_empty() {
        "(empty body)".to_owned()
    } else {
        text.chars().take(200).collect()
    }
}

/// An octocrab error's text with its sources (no headers are in any of them).
pub(super) fn error_text(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let part = s.to_string();
        if !text.contains(&part) {
            text.push_str(&format!(": {part}"));
        }
        source = s.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(status: u16, headers: &[(&str, &str)], body: &str) -> Reply {
        let mut map = HeaderMap::new();
        for (k, v) in headers {
            map.insert(
                http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                HeaderValue::from_str(v).unwrap(),
            );
        }
        Reply {
            status,
            headers: map,
            body: body.as_bytes().to_vec(),
        }
    }

    #[test]
    fn links_are_followed_as_given() {
        let r = reply(
            200,
            &[(
                "link",
                r#"<https://api.github.com/repositories/1/issues/2/comments?page=3>; rel="next", <https://api.github.com/repositories/1/issues/2/comments?page=9>; rel="last""#,
            )],
            "[]",
        );
        assert_eq!(
            next_link(&r.headers).as_deref(),
            Some("https://api.github.com/repositories/1/issues/2/comments?page=3")
        );
        let last = reply(
            200,
            &[("link", r#"<https://x/y?page=1>; rel="first""#)],
            "[]",
        );
        assert_eq!(next_link(&last.headers), None);
        assert_eq!(next_link(&HeaderMap::new()), None);
    }

    #[test]
    fn what_is_retried_and_for_how_long() {
        let b = Duration::from_secs(2);
        assert_eq!(retry_wait(&reply(200, &[], "[]"), b), None);
        assert_eq!(retry_wait(&reply(404, &[], "{}"), b), None);
        assert_eq!(
            retry_wait(
                &reply(
                    403,
                    &[],
                    r#"{"message":"Resource not accessible by integration"}"#
                ),
                b
            ),
            None
        );
        assert_eq!(retry_wait(&reply(502, &[], ""), b), Some(b));
        assert_eq!(
            retry_wait(&reply(429, &[("retry-after", "7")], ""), b),
            Some(Duration::from_secs(7))
        );
        let secondary = r#"{"message":"You have exceeded a secondary rate limit and have been temporarily blocked from content creation."}"#;
        assert_eq!(
            retry_wait(&reply(403, &[("retry-after", "3")], secondary), b),
            Some(Duration::from_secs(3))
        );
        assert_eq!(
            retry_wait(&reply(403, &[], secondary), b),
            Some(RATE_LIMIT_WAIT)
        );
        let reset = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs()
            + 30;
        let w = retry_wait(
            &reply(
                403,
                &[
                    ("x-ratelimit-remaining", "0"),
                    ("x-ratelimit-reset", &reset.to_string()),
                ],
                r#"{"message":"API rate limit exceeded"}"#,
            ),
            b,
        )
        .unwrap();
        assert!(
            (Duration::from_secs(28)..=Duration::from_secs(30)).contains(&w),
            "{w:?}"
        );
    }

    #[test]
    fn messages_come_from_the_json() {
        assert_eq!(
            message_of(br#"{"message":"Validation Failed","errors":[{"message":"Body is too long (maximum is 65536 characters)"}]}"#),
            "Validation Failed: Body is too long (maximum is 65536 characters)"
        );
        assert_eq!(
            message_of(b"<html>bad gateway</html>"),
            "<html>bad gateway</html>"
        );
        assert_eq!(message_of(b""), "(empty body)");
    }
}

#[cfg(test)]
mod build_tests {
    use std::io::{Read, Write};
    use std::net::TcpListener;
    use std::thread::JoinHandle;

    use super::*;

    fn config(url: &str) -> ClientConfig {
        ClientConfig {
            api_url: url.into(),
            token: Token::new("ghs_never_printed".into()),
            max_tries: 3,
            budget: Duration::from_secs(60),
            connect_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(30),
        }
    }

    #[tokio::test(flavor = "current_thread")]
    async fn clients_build_for_github_ghes_and_gitea() {
        let c = Client::new(config("https://ghe.example.com/api/v3/")).unwrap();
        assert_eq!(
            c.url("/repos/o/r"),
            "https://ghe.example.com/api/v3/repos/o/r"
        );
        assert!(!format!("{c:?}").contains("never_printed"));
        let c = Client::new(config("http://127.0.0.1:3000/api/v1")).unwrap();
        assert_eq!(
            c.url("/repos/o/r"),
            "http://127.0.0.1:3000/api/v1/repos/o/r"
        );
        for bad in ["api.github.com", "ftp://x/", "not a url"] {
            let err = Client::new(config(bad)).unwrap_err();
            assert!(!format!("{err:?}").contains("never_printed"), "{bad}");
        }
        // A token no header can hold is refused at once, and not shown.
        let err = Client::new(ClientConfig {
            token: Token::new("ghs_never\nprinted".into()),
            ..config("https://api.github.com")
        })
        .unwrap_err();
        let text = format!("{err:?}");
        assert!(text.contains("not allowed in a header") && !text.contains("never"));
    }

    /// A loopback server that answers one request with `response`; gives its URL and, once
    /// joined, the request's head (lower-cased).
    fn one_shot(response: &'static str) -> (String, JoinHandle<String>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let seen = std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).unwrap() == 1 {
                head.push(byte[0]);
            }
            stream.write_all(response.as_bytes()).unwrap();
            String::from_utf8_lossy(&head).to_ascii_lowercase()
        });
        (url, seen)
    }

    #[tokio::test(flavor = "current_thread")]
    async fn reading_stops_at_the_cap() {
        let body = || http_body_util::Full::new(&b"0123456789"[..]);
        assert_eq!(read_capped(body(), None, 10).await.unwrap(), b"0123456789");
        assert_eq!(
            read_capped(body(), Some(10), 9).await,
            Err(BodyError::TooLarge)
        );
        // A content-length that lies (or is larger than the cap) only sizes the first buffer.
        let read = read_capped(body(), Some(u64::MAX), 64).await.unwrap();
        assert_eq!((read.len(), read.capacity()), (10, 64));
        let read = read_capped(body(), Some(3), 64).await.unwrap();
        assert!(read.capacity() <= 64, "{}", read.capacity());
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_redirect_comes_back_and_the_token_goes_only_to_the_api() {
        let (api, seen) = one_shot(
            "HTTP/1.1 302 Found\r\nlocation: http://127.0.0.1:9/elsewhere\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
        );
        let c = Client::new(config(&api)).unwrap();
        let reply = c.send_once(&Method::GET, &c.url("/x"), None).await.unwrap();
        assert_eq!(reply.status, 302, "returned, not followed");
        let head = seen.join().unwrap();
        assert!(
            head.contains("\r\nauthorization: bearer ghs_never_printed\r\n"),
            "{head}"
        );
        // Another host (here another port), as a `link` could name: no token.
        let (other, seen) =
            one_shot("HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\n[]");
        let reply = c
            .send_once(&Method::GET, &format!("{other}/y"), None)
            .await
            .unwrap();
        assert_eq!((reply.status, reply.body.as_slice()), (200, &b"[]"[..]));
        let head = seen.join().unwrap();
        assert!(!head.contains("authorization"), "{head}");
        assert_eq!(head.matches("\r\nuser-agent: ").count(), 1, "{head}");
    }
}
