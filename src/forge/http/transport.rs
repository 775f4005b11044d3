//! The transport: one exchange with the API at a time, and the text of what came back.
//!
//! Octocrab sends every request with its raw `_get`/`_post`/`_put`/`_patch`/`_delete`, so the
//! status, headers (`retry-after`, `x-ratelimit-*`, `link`, `x-next-page`) and body of each
//! response are ours to read; its middleware adds our default headers (`Accept`,
//! `User-Agent`; octocrab itself adds `X-GitHub-Api-Version`), and our [`TokenLayer`] the
//! token, in the forge's header (`Authorization: Bearer`, GitLab's `PRIVATE-TOKEN`), only to
//! requests for the API's own scheme, host and port. Octocrab is built without its `retry`
//! and `follow-redirect` features: nothing retries a create behind our back, and a redirect
//! comes back as it is, never followed with the token. A second octocrab without the token
//! layer fetches a download's redirect target.
//!
//! Why the hyper client under octocrab is built here and not by `OctocrabBuilder::build`
//! (feature `default-client`): that one always sends `User-Agent: octocrab` besides ours (two
//! user agents on every request, as tried), needs the system's TLS roots even for an
//! `http://` API URL, lets an `https://` API's `link` lead to plain HTTP, and its `timeout`
//! feature bounds each read, not a whole request. So what is kept is the connector: TLS with
//! the system's roots (GHES private CAs), https only for an https API, the connect timeout.
//! The deadline of a whole request is ours (`tokio::time::timeout`).
//!
//! A response body is read as it comes, up to [`MAX_RESPONSE_BYTES`]; past that the request
//! fails, not retried. A caller that expects more (an artifact the API sends itself, a page of
//! GitLab notes) has a 200's body streamed into a file instead ([`Spill`]), up to its own cap. Server text that may be shown or stored (a transport error, a path from
//! `link`, an error body's message) is redacted with [`Token::redact`] where it enters, since a
//! server or a proxy may echo `Authorization`.

use std::sync::Arc;
use std::time::Duration;

use http::header::{HeaderMap, HeaderValue, ACCEPT, CONTENT_LENGTH, USER_AGENT};
use http::{Method, Uri};
use http_body_util::BodyExt;
use hyper_util::client::legacy::connect::{Connect, HttpConnector};
use octocrab::service::middleware::extra_headers::ExtraHeadersLayer;
use octocrab::{AuthState, Octocrab, OctocrabBuilder};
use serde_json::Value;

use super::config::{AuthHeader, ClientConfig, Deadline};
use super::error::PostError;
use super::token::Token;

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

/// What of an API URL's userinfo (`user:password@`) is redacted: the whole of it, and the
/// password alone when it is 6 characters or more (shorter ones are common words).
fn secrets_of_userinfo(uri: &Uri) -> Vec<String> {
    let Some((userinfo, _)) = uri.authority().and_then(|a| a.as_str().rsplit_once('@')) else {
        return Vec::new();
    };
    let mut secrets = vec![userinfo.to_owned()];
    if let Some((_, password)) = userinfo.split_once(':') {
        if password.len() >= 6 {
            secrets.push(password.to_owned());
        }
    }
    secrets.retain(|s| !s.is_empty());
    secrets
}

/// A response, read whole.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
}

/// Where the body of a 200 reply goes instead of memory ([`Transport::send_once`]): streamed
/// into `file` a frame at a time, at most `cap` bytes (a larger body is refused, not retried);
/// the reply's own `body` is then empty. Every other status is read into memory as always.
pub(crate) struct Spill<'a> {
    pub file: &'a mut std::fs::File,
    pub cap: u64,
    /// The body in messages: `the artifact`, `the page`.
    pub what: &'static str,
    /// Bounded by the stage's deadline alone, not by one request's limit (a large download).
    pub whole_stage: bool,
    /// Bytes written by the last try.
    pub written: u64,
}

/// Why one exchange gave no reply.
#[derive(Debug)]
pub(super) enum SendError {
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

/// The HTTP clients of one API base: with the token, and without it.
pub(super) struct Transport {
    crab: Octocrab,
    /// The same client without the token layer: for a download's redirect target (a storage
    /// host, which must never see the token, even on the API's own host).
    anon: Octocrab,
    /// The API base without a trailing slash.
    base: String,
    /// What server text is redacted of: the token, and the userinfo of the API's URL.
    token: Token,
    /// `user:password` and `password` (when 6 characters or more).
    userinfo: Vec<String>,
    /// One request, from sending it to the last byte of the response.
    request_timeout: Duration,
    /// No request goes past it.
    deadline: Deadline,
}

impl Transport {
    /// Builds both clients over one connector; must run inside a tokio runtime.
    pub(super) fn new(config: &ClientConfig) -> Result<Self, PostError> {
        let base = config.api_url.trim().trim_end_matches('/').to_owned();
        // For messages: never the URL's userinfo (`user:password@`).
        let shown = crate::text::without_userinfo(&base);
        let uri: Uri = base
            .parse()
            .map_err(|_| PostError::Config(format!("the API URL `{shown}` is not a URL")))?;
        let (Some(scheme), Some(_)) = (uri.scheme_str(), uri.authority()) else {
            return Err(PostError::Config(format!(
                "the API URL `{shown}` is not an absolute http(s) URL"
            )));
        };
        let headers = default_headers(config, &uri)?;
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
                    "the API URL `{shown}`: unsupported scheme {other}"
                )))
            }
        };
        Ok(Transport {
            crab,
            anon,
            base,
            token: config.token.clone(),
            userinfo: secrets_of_userinfo(&uri),
            request_timeout: config.request_timeout,
            deadline: config.deadline,
        })
    }

    /// The API base without a trailing slash.
    pub(super) fn base(&self) -> &str {
        &self.base
    }

    /// The client without the token layer.
    pub(super) fn anon(&self) -> &Octocrab {
        &self.anon
    }

    /// The URL of an API path.
    pub(super) fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// Server text as it may be shown or stored: without the token, and without the userinfo
    /// of the API's URL (`user:password@`), should anything quote it.
    pub(super) fn redact(&self, text: &str) -> String {
        let mut text = self.token.redact(text);
        for secret in &self.userinfo {
            if text.contains(secret.as_str()) {
                text = text.replace(secret.as_str(), "***");
            }
        }
        text
    }

    /// The message of an error body, redacted.
    pub(super) fn message(&self, body: &[u8]) -> String {
        message_with(body, &|text| self.redact(text))
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

    /// Sends once, and reads the reply up to [`MAX_RESPONSE_BYTES`]; a 200's body into
    /// `spill` instead when there is one.
    pub(super) async fn send_once(
        &self,
        method: &Method,
        url: &str,
        body: Option<&Value>,
        mut spill: Option<&mut Spill<'_>>,
    ) -> Result<Reply, SendError> {
        let again = SendError::Again;
        let uri: Uri = url.parse().map_err(|_| {
            again(format!(
                "bad URL {}",
                self.redact(&crate::text::without_userinfo(url))
            ))
        })?;
        let whole_stage = spill.as_ref().is_some_and(|s| s.whole_stage);
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
                Method::PUT => self.crab._put(uri, body).await,
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
            if let Some(spill) = spill.as_deref_mut().filter(|_| parts.status == 200) {
                if let Some(n) = declared.filter(|&n| n > spill.cap) {
                    return Err(too_large(format!(
                        "{} says it is {n} bytes (content-length), more than {} MiB, the most nsys-gate reads; it was not read",
                        spill.what,
                        spill.cap >> 20
                    )));
                }
                let what = spill.what;
                spill.written = spill_into(body, spill).await.map_err(|e| match e {
                    SpillError::TooLarge(what, cap) => too_large(format!(
                        "{what} is larger than {} MiB, the most nsys-gate reads; it was not read further",
                        cap >> 20
                    )),
                    SpillError::Write(e) => too_large(format!("cannot write {what} to disk: {e}")),
                    SpillError::Failed(text) => again(format!(
                        "reading the response failed: {}",
                        self.redact(&text)
                    )),
                })?;
                return Ok(Reply {
                    status: parts.status.as_u16(),
                    headers: parts.headers,
                    body: Vec::new(),
                });
            }
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
        // The request's own limit, or the stage's deadline when that comes first: then the
        // stage is over, and no other try is made. A large download has the stage's deadline.
        let limit = if whole_stage {
            self.deadline.left()
        } else {
            self.request_timeout
        };
        let stage_ends = self.deadline.left() <= limit;
        match tokio::time::timeout(limit.min(self.deadline.left()), exchange).await {
            Ok(r) => r,
            Err(_) if stage_ends => Err(SendError::Final(PostError::OutOfTime(format!(
                "{method} {}: no complete response before {}",
                self.display_path(url),
                self.deadline.describe()
            )))),
            Err(_) => Err(again(format!(
                "no response within {} s",
                self.request_timeout.as_secs()
            ))),
        }
    }
}

/// Why a URL given by the server (a redirect's location, a `link` to the next page) is not
/// followed from the API at `api`, or `None` when it is: only http(s), never from https down
/// to http, and from a plain `http://` API only to `http://` (the client of a plain-HTTP API
/// has no TLS, and would send a request meant for `https://`, or for any other scheme, as
/// plain HTTP). The words follow "the redirect" or "the next page".
pub(crate) fn scheme_not_followed(api: &str, to: &str) -> Option<String> {
    let scheme = |url: &str| {
        url.split_once("://")
            .map(|(s, _)| s.to_ascii_lowercase())
            .unwrap_or_default()
    };
    let (api, to) = (scheme(api), scheme(to));
    let shown: String = to
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .take(20)
        .collect();
    match (api.as_str(), to.as_str()) {
        ("https", "https") | ("http", "http") => None,
        ("https", "http") => Some(
            "leads to a http:// URL from an https:// API: nothing is fetched over plain HTTP when the API is reached over TLS".into(),
        ),
        ("http", "https") => Some(
            "leads to a https:// URL from a plain-http:// API: nsys-gate's client of a plain-HTTP API has no TLS and would send the request unencrypted (give an https:// API URL)".into(),
        ),
        _ => Some(format!(
            "leads to a {shown}:// URL: only http(s) is followed, on the API's own scheme"
        )),
    }
}

/// Octocrab's layers for every request: `Accept` and our `User-Agent`, and the token, which
/// [`TokenLayer`] adds only to requests for the API itself (a `link` could point elsewhere).
struct Headers {
    extra: ExtraHeadersLayer,
    token: TokenLayer,
}

/// The layers of [`Headers`] for `config`'s token and the API at `api`; a token no header can
/// hold is refused.
fn default_headers(config: &ClientConfig, api: &Uri) -> Result<Headers, PostError> {
    let refused = || PostError::Config("the token holds characters not allowed in a header".into());
    let (name, value) = match config.auth.header {
        AuthHeader::Bearer => (
            http::header::AUTHORIZATION,
            format!("Bearer {}", config.token.expose()),
        ),
        AuthHeader::Named(name) => (
            http::HeaderName::from_static(name),
            config.token.expose().to_owned(),
        ),
    };
    let mut value = HeaderValue::from_str(&value).map_err(|_| refused())?;
    value.set_sensitive(true);
    // `crate::TOOL_VERSION` is this same `CARGO_PKG_VERSION`.
    let agent = HeaderValue::from_static(concat!("nsys-gate/", env!("CARGO_PKG_VERSION")));
    let extra = vec![
        (ACCEPT, HeaderValue::from_static(config.auth.accept)),
        (USER_AGENT, agent),
    ];
    Ok(Headers {
        extra: ExtraHeadersLayer::new(Arc::new(extra)),
        token: TokenLayer {
            name,
            value,
            scheme: api.scheme_str().unwrap_or("").to_ascii_lowercase(),
            authority: api.authority().cloned(),
        },
    })
}

/// Adds the token's header to a request for the API's own scheme, host and port, and to no
/// other (a `link`, a redirect followed by hand, any URL a server names).
#[derive(Clone)]
struct TokenLayer {
    name: http::HeaderName,
    value: HeaderValue,
    scheme: String,
    authority: Option<http::uri::Authority>,
}

impl<S> tower_layer::Layer<S> for TokenLayer {
    type Service = WithToken<S>;

    fn layer(&self, inner: S) -> Self::Service {
        WithToken {
            inner,
            layer: self.clone(),
        }
    }
}

/// The service of [`TokenLayer`].
#[derive(Clone)]
struct WithToken<S> {
    inner: S,
    layer: TokenLayer,
}

impl<S, B> tower_service::Service<http::Request<B>> for WithToken<S>
where
    S: tower_service::Service<http::Request<B>>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: http::Request<B>) -> Self::Future {
        let uri = request.uri();
        let same_api = uri.scheme_str().map(str::to_ascii_lowercase).as_deref()
            == Some(self.layer.scheme.as_str())
            && uri.authority() == self.layer.authority.as_ref();
        if same_api {
            request
                .headers_mut()
                .insert(self.layer.name.clone(), self.layer.value.clone());
        }
        self.inner.call(request)
    }
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
            .with_layer(&headers.token)
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

/// Why a body was not streamed whole into a [`Spill`].
enum SpillError {
    /// More than the cap: what it is, and the cap.
    TooLarge(&'static str, u64),
    /// The file could not be written.
    Write(std::io::Error),
    /// The transport failed while reading.
    Failed(String),
}

/// The body streamed into `spill`'s file (emptied first: a try after a failed one starts
/// again), a frame at a time: its length.
async fn spill_into<B>(mut body: B, spill: &mut Spill<'_>) -> Result<u64, SpillError>
where
    B: BodyExt + Unpin,
    B::Data: AsRef<[u8]>,
    B::Error: std::error::Error,
{
    use std::io::{Seek, Write};
    spill.file.set_len(0).map_err(SpillError::Write)?;
    spill.file.rewind().map_err(SpillError::Write)?;
    let mut written: u64 = 0;
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| SpillError::Failed(error_text(&e)))?;
        let Ok(data) = frame.into_data() else {
            continue;
        };
        let data = data.as_ref();
        written += data.len() as u64;
        if written > spill.cap {
            return Err(SpillError::TooLarge(spill.what, spill.cap));
        }
        spill.file.write_all(data).map_err(SpillError::Write)?;
    }
    spill.file.flush().map_err(SpillError::Write)?;
    Ok(written)
}

/// GitHub's `message` (and its `errors[].message`), else the start of the body.
pub(super) fn message_of(body: &[u8]) -> String {
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
        match v.get("message") {
            Some(Value::String(m)) => parts.push(clean(m)),
            // GitLab's validation errors: `{"message": {"note": ["is too long …"]}}`.
            Some(Value::Object(fields)) => {
                for (field, problems) in fields {
                    let problems: Vec<&str> = match problems {
                        Value::Array(list) => list.iter().filter_map(Value::as_str).collect(),
                        Value::String(one) => vec![one.as_str()],
                        _ => Vec::new(),
                    };
                    for p in problems {
                        parts.push(clean(&format!("{field} {p}")));
                    }
                }
            }
            _ => {}
        }
        // GitLab's other errors: `{"error": "insufficient_scope", …}`.
        if let Some(e) = v.get("error").and_then(Value::as_str) {
            parts.push(clean(e));
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
pub(crate) fn error_text(e: &dyn std::error::Error) -> String {
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

/// Helpers for the tests of the GitHub modules, and the transport's own tests.
#[cfg(test)]
pub(super) mod tests {
    use std::io::{Read, Write};
    use std::net::TcpListener;
    use std::thread::JoinHandle;

    use super::*;

    /// A reply with `status`, `headers` and `body`.
    pub(in crate::forge) fn reply(status: u16, headers: &[(&str, &str)], body: &str) -> Reply {
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

    /// The settings of a client of `url`, with a token that must never be printed.
    pub(in crate::forge) fn config(url: &str) -> ClientConfig {
        ClientConfig::for_stage(
            url.into(),
            (
                Token::new("ghs_never_printed".into()),
                crate::forge::github::AUTH,
            ),
            Duration::from_secs(60),
            "--post-timeout",
        )
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
        assert_eq!(
            message_of(br#"{"message":{"note":["is too long (maximum is 1000000 characters)"]}}"#),
            "note is too long (maximum is 1000000 characters)"
        );
        assert_eq!(
            message_of(br#"{"error":"insufficient_scope","error_description":"x"}"#),
            "insufficient_scope"
        );
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

    #[test]
    fn only_the_apis_own_http_scheme_is_followed() {
        assert_eq!(
            scheme_not_followed("https://api", "https://storage/x"),
            None
        );
        assert_eq!(
            scheme_not_followed("http://127.0.0.1:1", "HTTP://h/x"),
            None
        );
        for (api, to) in [
            ("https://api", "http://storage/x"),
            ("http://api", "https://storage/x"),
            ("http://api", "ftp://storage/x"),
            ("https://api", "gopher://storage/x"),
            ("https://api", "file:///etc/passwd"),
            ("https://api", "/relative"),
        ] {
            assert!(scheme_not_followed(api, to).is_some(), "{api} -> {to}");
        }
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
        let t = Transport::new(&config(&api)).unwrap();
        let reply = t
            .send_once(&Method::GET, &t.url("/x"), None, None)
            .await
            .unwrap();
        assert_eq!(reply.status, 302, "returned, not followed");
        let head = seen.join().unwrap();
        assert!(
            head.contains("\r\nauthorization: bearer ghs_never_printed\r\n"),
            "{head}"
        );
        // Another host (here another port), as a `link` could name: no token.
        let (other, seen) =
            one_shot("HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\n[]");
        let reply = t
            .send_once(&Method::GET, &format!("{other}/y"), None, None)
            .await
            .unwrap();
        assert_eq!((reply.status, reply.body.as_slice()), (200, &b"[]"[..]));
        let head = seen.join().unwrap();
        assert!(!head.contains("authorization"), "{head}");
        assert_eq!(head.matches("\r\nuser-agent: ").count(), 1, "{head}");
    }
}
