//! A client of one REST API, whatever the forge: its calls sent by [`super::transport`] and
//! retried by [`super::retry`] (an idempotent request), or tried once ([`Client::post_once`]: a
//! create, whose caller lists before trying again); lists read page by page, as the forge's
//! [`super::Dialect`] pages them (`link: rel="next"`, GitLab's `x-next-page`); a download that
//! redirects to a storage host followed once without the token ([`Client::download`]). Each
//! forge's calls are its own (`forge/github/api.rs`, `forge/gitlab/api.rs`) over this one.
//!
//! Server text that may be shown or stored (messages, a parser's quote of the body, a URL) is
//! redacted with [`Token::redact`] where it enters, since a server or a proxy may echo the
//! token's header.
//!
//! [`Token::redact`]: super::token::Token::redact

use std::io::Write;
use std::time::Duration;

use http::{Method, Uri};
use http_body_util::BodyExt;
use serde_json::Value;

use super::config::ClientConfig;
use super::error::ApiError;
use super::retry::{try_once, Retry, Try};
use super::transport::{error_text, scheme_not_followed, Reply, Spill, Transport};

/// A client of one API: its transport, its retry policy, and the settings both came from.
pub struct Client {
    transport: Transport,
    retry: Retry,
    config: ClientConfig,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("base", &self.transport.base())
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// The answer to a request tried once ([`Client::post_once`]).
#[derive(Debug)]
pub enum Once {
    Reply(Reply),
    /// It failed in a way that may or may not have carried it out (5xx, timeout) or was
    /// refused for a rate limit: look before trying again.
    Unknown {
        wait: Duration,
        reason: String,
    },
}

impl Client {
    /// Builds the client; must run inside a tokio runtime.
    pub fn new(config: ClientConfig) -> Result<Self, ApiError> {
        let transport = Transport::new(&config)?;
        Ok(Client {
            transport,
            retry: Retry::new(&config),
            config,
        })
    }

    /// The settings the client was built from.
    pub fn config(&self) -> &ClientConfig {
        &self.config
    }

    /// The URL of an API path.
    pub fn url(&self, path: &str) -> String {
        self.transport.url(path)
    }

    /// Server text as it may be shown or stored: without the token (nor the API URL's
    /// userinfo).
    pub fn redact(&self, text: &str) -> String {
        self.transport.redact(text)
    }

    /// Waits before another try, or refuses when that would pass the deadline.
    pub async fn sleep(&self, wait: Duration, reason: &str) -> Result<(), ApiError> {
        self.retry.sleep(wait, reason).await
    }

    /// Sends an idempotent request (GET, PATCH, DELETE), retrying 5xx, timeouts and rate
    /// limits within the tries and the deadline.
    pub async fn request(
        &self,
        method: Method,
        url: &str,
        body: Option<&Value>,
    ) -> Result<Reply, ApiError> {
        self.retry
            .request(&self.transport, (method, url), body, None)
            .await
    }

    /// A GET whose 200 body is streamed into `spill` ([`Spill`]), retried as
    /// [`Client::request`] is; any other reply read as always.
    async fn request_into(&self, url: &str, spill: &mut Spill<'_>) -> Result<Reply, ApiError> {
        self.retry
            .request(&self.transport, (Method::GET, url), None, Some(spill))
            .await
    }

    /// The URL without the host, for messages (redacted: it may come from a `link`).
    pub fn display_path(&self, url: &str) -> String {
        self.transport.display_path(url)
    }

    /// The error of a reply that is not the one expected.
    pub fn failure(&self, method: &str, url: &str, reply: &Reply) -> ApiError {
        let message = self.transport.message(&reply.body);
        let path = self.display_path(url);
        let method = method.to_owned();
        // 404 on a read is a wrong repository or number; on a write, as 403, a token that
        // may not write here.
        let no_access = reply.status == 403 || (reply.status == 404 && method != "GET");
        match reply.status {
            _ if no_access => ApiError::NoAccess {
                method,
                path,
                status: reply.status,
                message,
            },
            status if (self.config.dialect.too_long)(status, &message) => ApiError::TooLong {
                method,
                path,
                status: reply.status,
                message,
            },
            status => ApiError::Status {
                method,
                path,
                status,
                message,
            },
        }
    }

    /// The reply's body as JSON of type `T`.
    pub fn parse<T: serde::de::DeserializeOwned>(
        &self,
        method: &str,
        url: &str,
        reply: &Reply,
    ) -> Result<T, ApiError> {
        serde_json::from_slice(&reply.body).map_err(|e| ApiError::Response {
            method: method.to_owned(),
            path: self.display_path(url),
            // serde quotes the body's values ("invalid type: string …").
            message: self.redact(&format!(
                "HTTP {}, body is not the JSON expected ({e})",
                reply.status
            )),
        })
    }

    /// Pages of a list from `url` on, following the next page the forge's dialect names
    /// (`link: rel="next"` as given, GitLab's `x-next-page`), each parsed as `T` and
    /// handed to `page`, until it returns `false`, there is no next page (a server that sends
    /// neither, such as Gitea, returned everything at once), or `max_pages`
    /// were read (`Ok(false)`: there was more). A next page already read (a server whose
    /// pages loop) is an error; every request is within the client's deadline.
    pub async fn pages<T: serde::de::DeserializeOwned>(
        &self,
        url: String,
        max_pages: usize,
        page: impl FnMut(T) -> bool,
    ) -> Result<bool, ApiError> {
        self.pages_with(url, max_pages, None, page).await
    }

    /// [`Client::pages`], each page streamed into a temporary file (at most `page_cap` bytes,
    /// past the cap of a reply held in memory) and parsed from it as it is read: `T` decides
    /// what of a page is kept (others' notes of 4 MB each, 100 to a page, are dropped as they
    /// are read), so memory is that of one element, not of the page nor of the pages.
    pub async fn pages_streamed<T: serde::de::DeserializeOwned>(
        &self,
        url: String,
        (max_pages, page_cap): (usize, u64),
        page: impl FnMut(T) -> bool,
    ) -> Result<bool, ApiError> {
        self.pages_with(url, max_pages, Some(page_cap), page).await
    }

    async fn pages_with<T: serde::de::DeserializeOwned>(
        &self,
        mut url: String,
        max_pages: usize,
        streamed: Option<u64>,
        mut page: impl FnMut(T) -> bool,
    ) -> Result<bool, ApiError> {
        let mut seen = std::collections::HashSet::new();
        for _ in 0..max_pages {
            seen.insert(url.clone());
            let (reply, parsed) = match streamed {
                None => {
                    let reply = self.request(Method::GET, &url, None).await?;
                    if reply.status != 200 {
                        return Err(self.failure("GET", &url, &reply));
                    }
                    let parsed = self.parse("GET", &url, &reply)?;
                    (reply, parsed)
                }
                Some(cap) => self.page_from_file(&url, cap).await?,
            };
            if !page(parsed) {
                return Ok(true);
            }
            match (self.config.dialect.next_page)(&url, &reply.headers) {
                Some(next) if seen.contains(&next) => {
                    return Err(ApiError::Response {
                        method: "GET".into(),
                        path: self.display_path(&url),
                        message: format!(
                            "its next page is {}, a page already read: the pages loop",
                            self.display_path(&next)
                        ),
                    })
                }
                Some(next) => {
                    if let Some(why) = scheme_not_followed(&self.url(""), &next) {
                        return Err(ApiError::Response {
                            method: "GET".into(),
                            path: self.display_path(&url),
                            message: format!("its next page {why}; not followed"),
                        });
                    }
                    url = next;
                }
                None => return Ok(true),
            }
        }
        Ok(false)
    }

    /// One page streamed into a temporary file (removed when read), then parsed from it.
    async fn page_from_file<T: serde::de::DeserializeOwned>(
        &self,
        url: &str,
        cap: u64,
    ) -> Result<(Reply, T), ApiError> {
        use std::io::Seek;
        let fail = |message: String| ApiError::Response {
            method: "GET".into(),
            path: self.display_path(url),
            message,
        };
        let mut file = tempfile::tempfile()
            .map_err(|e| fail(format!("cannot make a temporary file for the page: {e}")))?;
        let mut spill = Spill {
            file: &mut file,
            cap,
            what: "the page",
            whole_stage: false,
            written: 0,
        };
        let reply = self.request_into(url, &mut spill).await?;
        if reply.status != 200 {
            return Err(self.failure("GET", url, &reply));
        }
        file.rewind()
            .map_err(|e| fail(format!("cannot read the page back: {e}")))?;
        let parsed = serde_json::from_reader(std::io::BufReader::new(file)).map_err(|e| {
            fail(self.redact(&format!("HTTP 200, body is not the JSON expected ({e})")))
        })?;
        Ok((reply, parsed))
    }

    /// Sends a request that must not be sent twice blindly (a create) once: a reply, or
    /// [`Once::Unknown`] when it may or may not have been carried out.
    pub async fn post_once(&self, url: &str, body: &Value) -> Result<Once, ApiError> {
        match try_once(&self.transport, (&Method::POST, url), Some(body), None, 1).await {
            Try::Again { wait, reason } => Ok(Once::Unknown { wait, reason }),
            Try::Fail(e) => Err(e),
            Try::Reply(reply) => Ok(Once::Reply(reply)),
        }
    }

    /// Downloads `url` (an artifact's zip) into `out`, at most `cap` bytes: asks the API with
    /// the token, then follows its redirect once without it (a storage host never sees the
    /// token, whatever host it is on); a server that sends the zip itself (a self-managed
    /// GitLab with local artifact storage) is streamed into `out` the same way, up to the cap
    /// and within the stage's deadline.
    pub async fn download(
        &self,
        url: &str,
        cap: u64,
        out: &mut std::fs::File,
    ) -> Result<u64, ApiError> {
        let mut spill = Spill {
            file: out,
            cap,
            what: "the artifact",
            whole_stage: true,
            written: 0,
        };
        let reply = self.request_into(url, &mut spill).await?;
        let out = spill.file;
        match reply.status {
            301 | 302 | 303 | 307 | 308 => {}
            200 => return Ok(spill.written),
            _ => return Err(self.failure("GET", url, &reply)),
        }
        let location = reply
            .headers
            .get(http::header::LOCATION)
            .and_then(|v| v.to_str().ok())
            .ok_or_else(|| ApiError::Response {
                method: "GET".into(),
                path: self.display_path(url),
                message: format!("HTTP {} without a location", reply.status),
            })?;
        self.fetch_without_token(location, cap, out).await
    }

    /// GET `location` with no token, the body streamed into `out` up to `cap` bytes.
    async fn fetch_without_token(
        &self,
        location: &str,
        cap: u64,
        out: &mut std::fs::File,
    ) -> Result<u64, ApiError> {
        // The storage URL carries a signature: never shown.
        let shown = "the artifact's storage URL (redirect target)".to_owned();
        let fail = |message: String| ApiError::Response {
            method: "GET".into(),
            path: shown.clone(),
            message,
        };
        let uri: Uri = location
            .parse()
            .map_err(|_| fail("the redirect's location is not a URL".into()))?;
        if let Some(why) = scheme_not_followed(&self.url(""), location) {
            return Err(fail(format!("the redirect {why}; not followed")));
        }
        let exchange = async {
            let response = self
                .transport
                .get_without_token(uri)
                .await
                .map_err(|e| fail(format!("request failed: {e}")))?;
            let (parts, mut body) = response.into_parts();
            if parts.status.as_u16() != 200 {
                return Err(ApiError::Status {
                    method: "GET".into(),
                    path: shown.clone(),
                    status: parts.status.as_u16(),
                    message: "the storage host refused the download".into(),
                });
            }
            // Streamed: a frame at a time into the file, never the whole zip in memory.
            let mut written: u64 = 0;
            while let Some(frame) = body.frame().await {
                let frame =
                    frame.map_err(|e| fail(format!("reading failed: {}", error_text(&e))))?;
                let Ok(data) = frame.into_data() else {
                    continue;
                };
                written += data.len() as u64;
                if written > cap {
                    return Err(fail(format!(
                        "the artifact is larger than {} MiB, the most nsys-gate downloads",
                        cap >> 20
                    )));
                }
                out.write_all(&data)
                    .map_err(|e| fail(format!("cannot write the download: {e}")))?;
            }
            Ok(written)
        };
        let deadline = self.config().deadline;
        match tokio::time::timeout(deadline.left(), exchange).await {
            Ok(r) => r,
            Err(_) => Err(ApiError::OutOfTime(format!(
                "the artifact's download did not end before {}",
                deadline.describe()
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::token::Token;
    use super::super::transport::tests::config;
    use super::*;

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
}
