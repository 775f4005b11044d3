//! What of HTTP one forge's API speaks its own way ([`Dialect`]): how it takes the token,
//! the headers it alone is sent, how its lists are paged, how its errors say what went wrong,
//! how it says a rate limit and when it resets, and how it refuses a body as too long. Each
//! forge defines its own (`forge::github::DIALECT`, `forge::gitlab::DIALECT`); the client is
//! the same for all. What is HTTP's own stays in the client: a 5xx or a 429 is tried again,
//! after `retry-after` when there is one; a `link: rel="next"` is RFC 8288's ([`next_link`]).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use http::header::HeaderMap;
use serde_json::Value;

/// The header that carries the token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthHeader {
    /// `Authorization: Bearer TOKEN`.
    Bearer,
    /// The token alone in a header of its own (a lower-case name: GitLab's `private-token`).
    Named(&'static str),
}

/// A rate limit, as the forge says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimit {
    /// The time until the limit resets, when the forge says it.
    pub reset: Option<Duration>,
}

/// One forge's API, where it differs from another's.
#[derive(Debug)]
pub struct Dialect {
    pub auth: AuthHeader,
    /// The `Accept` header (sent to every host: it names no forge's version).
    pub accept: &'static str,
    /// Headers sent only with the token, to the API's own host (GitHub's API version): never
    /// to another forge, a storage host or any URL a server names.
    pub api_headers: &'static [(&'static str, &'static str)],
    /// The URL of the page after `url`, from the reply's headers.
    pub next_page: fn(url: &str, headers: &HeaderMap) -> Option<String>,
    /// The texts of an error body that say what went wrong (not yet redacted).
    pub messages: fn(body: &Value) -> Vec<String>,
    /// A refusal for a rate limit (besides HTTP's 429), and when it resets.
    pub rate_limit: fn(status: u16, headers: &HeaderMap, message: &str) -> Option<RateLimit>,
    /// A refusal of a body as too long (which a shorter body may pass).
    pub too_long: fn(status: u16, message: &str) -> bool,
}

/// The `rel="next"` URL of a `link` header (RFC 8288).
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

/// A header's value, trimmed.
pub fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
}

/// The time from now until `epoch_secs` (a reset time in Unix seconds), at least a second.
pub fn until_epoch(epoch_secs: &str) -> Option<Duration> {
    let reset = epoch_secs.parse::<u64>().ok()?;
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs();
    Some(Duration::from_secs(reset.saturating_sub(now).max(1)))
}

#[cfg(test)]
mod tests {
    use super::super::transport::tests::reply;
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
}
