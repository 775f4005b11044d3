//! The API calls of the comment: a pull request's comments (list, create, update, delete) and
//! the open pull request whose head is a commit. The workflow runs and artifacts of
//! `--baseline auto` are [`super::artifacts`]'s calls on the same [`Client`].
//!
//! Each call is sent by [`super::transport`] and retried by [`super::retry`], except a create,
//! which is tried once: the caller ([`super::upsert()`]) lists the comments before trying again.
//! Pages follow `link: rel="next"` as given. Responses are parsed into the few fields needed
//! ([`Comment`]), so Gitea's and Forgejo's JSON fit too. Server text that may be shown or
//! stored (messages, a parser's quote of the body, a comment's URL) is redacted with
//! [`Token::redact`] where it enters, since a server or a proxy may echo `Authorization`.
//!
//! [`Token::redact`]: super::token::Token::redact

use std::time::Duration;

use http::header::HeaderMap;
use http::Method;
use octocrab::Octocrab;
use serde::Deserialize;
use serde_json::{json, Value};

use super::comment::Comment;
use super::config::ClientConfig;
use super::error::PostError;
use super::repo::Repo;
use super::retry::{try_once, Retry, Try};
use super::transport::{scheme_not_followed, Reply, Transport};

/// Pages of comments read at most (100 comments each).
const MAX_PAGES: usize = 200;

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

impl Client {
    /// Builds the client; must run inside a tokio runtime.
    pub fn new(config: ClientConfig) -> Result<Self, PostError> {
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

    /// `/repos/O/R/issues/N/comments` (for messages).
    pub fn comments_path(&self, repo: &Repo, pr: u64) -> String {
        format!("/repos/{}/{}/issues/{pr}/comments", repo.owner, repo.name)
    }

    /// The URL of an API path.
    pub(super) fn url(&self, path: &str) -> String {
        self.transport.url(path)
    }

    /// The client without the token layer: for a download's redirect target (a storage host,
    /// which must never see the token, even on the API's own host).
    pub(super) fn anon(&self) -> &Octocrab {
        self.transport.anon()
    }

    /// Server text as it may be shown or stored: without the token (nor the API URL's
    /// userinfo).
    pub(super) fn redact(&self, text: &str) -> String {
        self.transport.redact(text)
    }

    /// A comment whose URL (shown, and stored as the step output `comment-url`) holds no token.
    fn redacted(&self, mut comment: Comment) -> Comment {
        comment.html_url = comment.html_url.map(|url| self.redact(&url));
        comment
    }

    /// Waits before another try, or refuses when that would pass the deadline.
    pub async fn sleep(&self, wait: Duration, reason: &str) -> Result<(), PostError> {
        self.retry.sleep(wait, reason).await
    }

    /// Sends an idempotent request (GET, PATCH, DELETE), retrying 5xx, timeouts and rate
    /// limits within the tries and the deadline.
    pub(super) async fn request(
        &self,
        method: Method,
        url: &str,
        body: Option<&Value>,
    ) -> Result<Reply, PostError> {
        self.retry.request(&self.transport, method, url, body).await
    }

    /// The URL without the host, for messages (redacted: it may come from a `link`).
    pub(super) fn display_path(&self, url: &str) -> String {
        self.transport.display_path(url)
    }

    /// The error of a reply that is not the one expected.
    pub(super) fn failure(&self, method: &str, url: &str, reply: &Reply) -> PostError {
        let message = self.transport.message(&reply.body);
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

    /// The reply's body as JSON of type `T`.
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

    /// Pages of a list from `url` on, following `link: rel="next"` as given, each parsed as
    /// `T` and handed to `page`, until it returns `false`, there is no next page (a server
    /// that sends no `link`, such as Gitea, returned everything at once), or `max_pages`
    /// were read (`Ok(false)`: there was more). A next page already read (a server whose
    /// pages loop) is an error; every request is within the client's deadline.
    pub(super) async fn pages<T: serde::de::DeserializeOwned>(
        &self,
        mut url: String,
        max_pages: usize,
        mut page: impl FnMut(T) -> bool,
    ) -> Result<bool, PostError> {
        let mut seen = std::collections::HashSet::new();
        for _ in 0..max_pages {
            seen.insert(url.clone());
            let reply = self.request(Method::GET, &url, None).await?;
            if reply.status != 200 {
                return Err(self.failure("GET", &url, &reply));
            }
            if !page(self.parse("GET", &url, &reply)?) {
                return Ok(true);
            }
            match next_link(&reply.headers) {
                Some(next) if seen.contains(&next) => {
                    return Err(PostError::Response {
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
                        return Err(PostError::Response {
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

    /// Every comment of the pull request, every page.
    pub async fn list_comments(&self, repo: &Repo, pr: u64) -> Result<Vec<Comment>, PostError> {
        let url = self.url(&format!("{}?per_page=100", self.comments_path(repo, pr)));
        let mut all = Vec::new();
        let complete = self
            .pages(url.clone(), MAX_PAGES, |page: Vec<Comment>| {
                all.extend(page.into_iter().map(|c| self.redacted(c)));
                true
            })
            .await?;
        if !complete {
            return Err(PostError::Response {
                method: "GET".into(),
                path: self.display_path(&url),
                message: format!("more than {MAX_PAGES} pages of comments"),
            });
        }
        Ok(all)
    }

    /// One POST: a create is never sent twice by this function.
    pub async fn create_comment(
        &self,
        repo: &Repo,
        pr: u64,
        body: &str,
    ) -> Result<Created, PostError> {
        let url = self.url(&self.comments_path(repo, pr));
        match try_once(
            &self.transport,
            &Method::POST,
            &url,
            Some(&json!({ "body": body })),
            1,
        )
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
        let url = self.url(&format!(
            "/repos/{}/{}/pulls?state=open&per_page=100",
            repo.owner, repo.name
        ));
        let mut found: Option<OpenPull> = None;
        self.pages(url, MAX_PAGES, |pulls: Vec<Pull>| {
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
                    // Stored in comparison.json: server text, redacted.
                    found = Some(OpenPull {
                        number: p.number,
                        base_ref: base.branch.map(|b| self.redact(&b)),
                        base_sha: base.sha.map(|s| self.redact(&s)),
                    });
                }
            }
            true
        })
        .await?;
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

#[cfg(test)]
mod tests {
    use super::super::token::Token;
    use super::super::transport::tests::{config, reply};
    use super::*;

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
