//! The transport: one exchange with the API at a time, and the text of what came back.
//!
//! One hyper client (HTTP/1, hyper-util's pool) over [`Connector`], which reaches a host
//! directly or through the proxy the environment names ([`super::proxy`]), TLS by rustls with
//! the system's roots and those of `NSYS_GATE_CA_CERTS` ([`tls_config`]); https only for an
//! https API. Every request carries `Accept` and our `User-Agent`, and nothing else of ours but
//! what is said here: the token, in the forge's header (`Authorization: Bearer`, GitLab's
//! `PRIVATE-TOKEN`), and the forge's own API headers (GitHub's `X-GitHub-Api-Version`) go only
//! to requests for the API's own scheme, host and port ([`Transport::build`]); a proxy's
//! `Proxy-Authorization` only to that proxy. Nothing retries or follows a redirect behind our
//! back: a redirect comes back as it is, and a download's is followed by hand without the
//! token ([`Transport::get_without_token`]). The deadline of a whole request is ours
//! (`tokio::time::timeout`).
//!
//! A response body is read as it comes, up to [`MAX_RESPONSE_BYTES`]; past that the request
//! fails, not retried. A caller that expects more (an artifact the API sends itself, a page of
//! GitLab notes) has a 200's body streamed into a file instead ([`Spill`]), up to its own cap.
//! Server text that may be shown or stored (a transport error, a path from `link`, an error
//! body's message) is redacted with [`Token::redact`] where it enters, since a server or a
//! proxy may echo `Authorization`, and so are the userinfo of the API's and the proxies' URLs.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::header::{
    HeaderMap, HeaderName, HeaderValue, ACCEPT, CONTENT_LENGTH, CONTENT_TYPE, PROXY_AUTHORIZATION,
    USER_AGENT,
};
use http::{Method, Request, Response, Uri};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client as Pool;
use serde_json::Value;

use super::config::{ClientConfig, Deadline, ProxyVars};
use super::dialect::{AuthHeader, Dialect};
use super::error::ApiError;
use super::proxy::{Connector, Proxies};
use super::token::Token;

/// The variable naming a PEM file of TLS roots trusted besides the system's (a company's
/// CA, a proxy that inspects TLS, a GitHub Enterprise Server's private CA).
pub const CA_CERTS_ENV: &str = "NSYS_GATE_CA_CERTS";

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
pub struct Spill<'a> {
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
    Final(ApiError),
}

/// Why a body was not read whole.
#[derive(Debug, PartialEq, Eq)]
enum BodyError {
    /// More than the cap.
    TooLarge,
    /// The transport failed while reading.
    Failed(String),
}

/// The hyper client of one API base: plain HTTP for an `http://` API, TLS only for an
/// `https://` one.
enum Http {
    Plain(Pool<Connector, Full<Bytes>>),
    Tls(Pool<HttpsConnector<Connector>, Full<Bytes>>),
}

impl Http {
    fn send(&self, request: Request<Full<Bytes>>) -> hyper_util::client::legacy::ResponseFuture {
        match self {
            Http::Plain(c) => c.request(request),
            Http::Tls(c) => c.request(request),
        }
    }
}

/// The client of one API base, and what it must know to send and to redact.
pub(super) struct Transport {
    http: Http,
    /// The API base without a trailing slash.
    base: String,
    /// The API's scheme (lower-case) and authority: the only place the token goes.
    api_scheme: String,
    api_authority: Option<http::uri::Authority>,
    /// The token's header, and the forge's own API headers.
    token_header: (HeaderName, HeaderValue),
    api_headers: Vec<(HeaderName, HeaderValue)>,
    accept: HeaderValue,
    proxies: Arc<Proxies>,
    /// What server text is redacted of: the token, and the userinfo of the API's URL and of
    /// the proxies'.
    token: Token,
    secrets: Vec<String>,
    /// One request, from sending it to the last byte of the response.
    request_timeout: Duration,
    /// No request goes past it.
    deadline: Deadline,
    pub(super) dialect: &'static Dialect,
}

impl Transport {
    /// Builds the client; must run inside a tokio runtime.
    pub(super) fn new(config: &ClientConfig) -> Result<Self, ApiError> {
        let base = config.api_url.trim().trim_end_matches('/').to_owned();
        // For messages: never the URL's userinfo (`user:password@`).
        let shown = nsys_gate_core::text::without_userinfo(&base);
        let uri: Uri = base
            .parse()
            .map_err(|_| ApiError::Config(format!("the API URL `{shown}` is not a URL")))?;
        let (Some(scheme), Some(authority)) = (uri.scheme_str(), uri.authority()) else {
            return Err(ApiError::Config(format!(
                "the API URL `{shown}` is not an absolute http(s) URL"
            )));
        };
        let scheme = scheme.to_ascii_lowercase();
        let proxies = match &config.proxy_vars {
            ProxyVars::Process => Proxies::from_env(),
            ProxyVars::Given(vars) => Proxies::from_vars(&|name| {
                vars.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone())
            }),
        };
        let proxies = Arc::new(proxies.map_err(ApiError::Config)?);
        let token_header = token_header(config)?;
        let mut tcp = HttpConnector::new();
        tcp.enforce_http(false);
        tcp.set_connect_timeout(Some(config.connect_timeout));
        let connector = Connector::new(tcp, proxies.clone());
        let executor = hyper_util::rt::TokioExecutor::new();
        let http = match scheme.as_str() {
            "https" => {
                let https = hyper_rustls::HttpsConnectorBuilder::new()
                    .with_tls_config(tls_config()?)
                    .https_only()
                    .enable_http1()
                    .wrap_connector(connector);
                Http::Tls(Pool::builder(executor).build(https))
            }
            "http" => Http::Plain(Pool::builder(executor).build(connector)),
            other => {
                return Err(ApiError::Config(format!(
                    "the API URL `{shown}`: unsupported scheme {other}"
                )))
            }
        };
        let api_headers = config
            .dialect
            .api_headers
            .iter()
            .map(|(n, v)| (HeaderName::from_static(n), HeaderValue::from_static(v)))
            .collect();
        let mut secrets = secrets_of_userinfo(&uri);
        secrets.extend(proxies.secrets().iter().cloned());
        Ok(Transport {
            http,
            api_scheme: scheme,
            api_authority: Some(authority.clone()),
            base,
            token_header,
            api_headers,
            accept: HeaderValue::from_static(config.dialect.accept),
            proxies,
            token: config.token.clone(),
            secrets,
            request_timeout: config.request_timeout,
            deadline: config.deadline,
            dialect: config.dialect,
        })
    }

    /// The API base without a trailing slash.
    pub(super) fn base(&self) -> &str {
        &self.base
    }

    /// The URL of an API path.
    pub(super) fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// Whether `uri` is on the API's own scheme, host and port.
    fn is_api(&self, uri: &Uri) -> bool {
        uri.scheme_str().map(str::to_ascii_lowercase).as_deref() == Some(self.api_scheme.as_str())
            && uri.authority() == self.api_authority.as_ref()
    }

    /// The request: `User-Agent` always, the forge's `Accept` to its API and `*/*` elsewhere;
    /// the token and the forge's API headers only when `with_token` and `uri` is the API's; a proxy's credentials only to a proxy
    /// that takes the request itself (plain HTTP; an `https://` URL's go in the `CONNECT`).
    fn build(
        &self,
        method: &Method,
        uri: Uri,
        body: Option<&Value>,
        with_token: bool,
    ) -> Request<Full<Bytes>> {
        let mut headers = HeaderMap::new();
        // The forge's media type only to its API; any other host (artifact storage) is asked
        // for anything, as curl asks.
        let to_api = self.is_api(&uri);
        headers.insert(
            ACCEPT,
            if to_api {
                self.accept.clone()
            } else {
                HeaderValue::from_static("*/*")
            },
        );
        // `crate::TOOL_VERSION` is this same `CARGO_PKG_VERSION`.
        headers.insert(
            USER_AGENT,
            HeaderValue::from_static(concat!("nsys-gate/", env!("CARGO_PKG_VERSION"))),
        );
        if body.is_some() {
            headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        }
        if with_token && to_api {
            let (name, value) = &self.token_header;
            headers.insert(name.clone(), value.clone());
            for (name, value) in &self.api_headers {
                headers.insert(name.clone(), value.clone());
            }
        }
        if uri
            .scheme_str()
            .is_some_and(|s| s.eq_ignore_ascii_case("http"))
        {
            if let Some(auth) = self.proxies.for_uri(&uri).and_then(|p| p.auth.clone()) {
                headers.insert(PROXY_AUTHORIZATION, auth);
            }
        }
        let bytes = body.map(|b| b.to_string().into_bytes()).unwrap_or_default();
        let mut request = Request::new(Full::new(Bytes::from(bytes)));
        *request.method_mut() = method.clone();
        *request.uri_mut() = uri;
        *request.headers_mut() = headers;
        request
    }

    /// A GET of `uri` with no token nor API header (a download's redirect target, a storage
    /// host that must never see them, even on the API's own host): the response, its body
    /// unread, or the transport's error, redacted.
    pub(super) async fn get_without_token(&self, uri: Uri) -> Result<Response<Incoming>, String> {
        self.http
            .send(self.build(&Method::GET, uri, None, false))
            .await
            .map_err(|e| self.redact(&error_text(&e)))
    }

    /// Server text as it may be shown or stored: without the token, and without the userinfo
    /// of the API's URL (`user:password@`) or of a proxy's, should anything quote it.
    pub(super) fn redact(&self, text: &str) -> String {
        let mut text = self.token.redact(text);
        for secret in &self.secrets {
            if text.contains(secret.as_str()) {
                text = text.replace(secret.as_str(), "***");
            }
        }
        text
    }

    /// The message of an error body, in the forge's words, redacted.
    pub(super) fn message(&self, body: &[u8]) -> String {
        message_with(self.dialect, body, &|text| self.redact(text))
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
                self.redact(&nsys_gate_core::text::without_userinfo(url))
            ))
        })?;
        let whole_stage = spill.as_ref().is_some_and(|s| s.whole_stage);
        let too_large = |message: String| {
            SendError::Final(ApiError::Response {
                method: method.to_string(),
                path: self.display_path(url),
                message,
            })
        };
        let exchange = async {
            if !matches!(
                *method,
                Method::GET | Method::POST | Method::PATCH | Method::PUT | Method::DELETE
            ) {
                return Err(again(format!(
                    "{method} is not a request this client sends"
                )));
            }
            let response = self
                .http
                .send(self.build(method, uri, body, true))
                .await
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
            Err(_) if stage_ends => Err(SendError::Final(ApiError::OutOfTime(format!(
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
pub fn scheme_not_followed(api: &str, to: &str) -> Option<String> {
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

/// The token's header for `config`'s token and forge; a token no header can hold is refused.
fn token_header(config: &ClientConfig) -> Result<(HeaderName, HeaderValue), ApiError> {
    let refused = || ApiError::Config("the token holds characters not allowed in a header".into());
    let (name, value) = match config.dialect.auth {
        AuthHeader::Bearer => (
            http::header::AUTHORIZATION,
            format!("Bearer {}", config.token.expose()),
        ),
        AuthHeader::Named(name) => (
            HeaderName::from_static(name),
            config.token.expose().to_owned(),
        ),
    };
    let mut value = HeaderValue::from_str(&value).map_err(|_| refused())?;
    value.set_sensitive(true);
    Ok((name, value))
}

/// TLS with the system's roots and those of the PEM file `$NSYS_GATE_CA_CERTS`, if set.
fn tls_config() -> Result<rustls::ClientConfig, ApiError> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::CertificateDer;
    let mut roots = rustls::RootCertStore::empty();
    let native = rustls_native_certs::load_native_certs();
    roots.add_parsable_certificates(native.certs);
    if let Some(path) = std::env::var_os(CA_CERTS_ENV).filter(|p| !p.is_empty()) {
        let shown = std::path::Path::new(&path).display().to_string();
        let bad = |why: String| ApiError::Config(format!("${CA_CERTS_ENV} ({shown}): {why}"));
        let mut added = 0;
        for cert in
            CertificateDer::pem_file_iter(&path).map_err(|e| bad(format!("cannot read it: {e}")))?
        {
            let cert = cert.map_err(|e| bad(format!("not a PEM certificate: {e}")))?;
            roots
                .add(cert)
                .map_err(|e| bad(format!("a certificate cannot be a root: {e}")))?;
            added += 1;
        }
        if added == 0 {
            return Err(bad("holds no PEM certificate".into()));
        }
    }
    if roots.is_empty() {
        return Err(ApiError::Config(format!(
            "cannot load the system's TLS roots ({}); name a PEM file of roots in ${CA_CERTS_ENV}",
            native
                .errors
                .first()
                .map_or_else(|| "none found".to_owned(), ToString::to_string)
        )));
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map(|b| b.with_root_certificates(roots).with_no_client_auth())
        .map_err(|e| ApiError::Config(format!("cannot set up TLS: {e}")))
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

/// The forge's words of an error body (unredacted), else the start of the body.
pub(super) fn message_of(dialect: &Dialect, body: &[u8]) -> String {
    message_with(dialect, body, &|text| text.to_owned())
}

/// [`message_of`], each text passed through `clean` (the redaction) before it is cut, so that
/// nothing `clean` hides can straddle the cut.
fn message_with(dialect: &Dialect, body: &[u8], clean: &dyn Fn(&str) -> String) -> String {
    /// The start of a body that is not JSON, cleaned before the first 200 characters are kept:
    /// room for a token (or a credential) that begins before the cut.
    const WINDOW: usize = 64 << 10;
    if let Ok(v) = serde_json::from_slice::<Value>(body) {
        let parts: Vec<String> = (dialect.messages)(&v).iter().map(|m| clean(m)).collect();
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

/// An error's text with its sources (no headers are in any of them).
pub fn error_text(e: &dyn std::error::Error) -> String {
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
    pub(crate) fn reply(status: u16, headers: &[(&str, &str)], body: &str) -> Reply {
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
    /// A client of `url` that reads no proxy variable: a proxy of the machine's must not
    /// stand between it and the test's loopback server.
    pub(crate) fn config(url: &str) -> ClientConfig {
        let mut config = ClientConfig::for_stage(
            url.into(),
            (
                Token::new("ghs_never_printed".into()),
                &crate::github::DIALECT,
            ),
            Duration::from_secs(60),
            "--post-timeout",
        );
        config.proxy_vars = ProxyVars::Given(Vec::new());
        config
    }

    #[test]
    fn a_body_that_is_not_json_is_quoted_from_its_start() {
        let gh = &crate::github::DIALECT;
        assert_eq!(
            message_of(gh, b"<html>bad gateway</html>"),
            "<html>bad gateway</html>"
        );
        assert_eq!(message_of(gh, b""), "(empty body)");
        // GitLab's validation errors are GitLab's words, not GitHub's.
        let gl = &crate::gitlab::DIALECT;
        let body = br#"{"message":{"note":["is too long"]}}"#;
        assert_eq!(message_of(gl, body), "note is too long");
        assert_eq!(
            message_of(gh, body),
            r#"{"message":{"note":["is too long"]}}"#
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
        // GitHub's own headers, with the token, to GitHub's API only.
        assert!(
            head.contains("\r\nx-github-api-version: 2022-11-28\r\n"),
            "{head}"
        );
        assert!(
            head.contains("\r\naccept: application/vnd.github+json\r\n"),
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
        assert!(!head.contains("x-github-api-version"), "{head}");
        assert!(!head.contains("vnd.github"), "{head}");
        assert!(head.contains("\r\naccept: */*\r\n"), "{head}");
        assert_eq!(head.matches("\r\nuser-agent: ").count(), 1, "{head}");
    }
}
