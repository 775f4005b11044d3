//! GitHub's REST dialect (GitHub Enterprise Server's, Gitea's and Forgejo's too): the token as
//! `Authorization: Bearer`, the API version pinned in `X-GitHub-Api-Version` (sent to the
//! API's own host only), lists paged by `link: rel="next"`, errors as `message` and
//! `errors[].message`, a rate limit as a 403 (or 429) with `x-ratelimit-remaining: 0` or a
//! message that says so, reset at `x-ratelimit-reset`, and a body refused as too long with 422
//! "Validation Failed" (Gitea, which knows no `link`, answers each list at once).

use http::header::HeaderMap;
use serde_json::Value;

use crate::http::dialect::{header, next_link, until_epoch};
use crate::http::{AuthHeader, Dialect, RateLimit};

/// GitHub's API, as the client speaks it.
pub static DIALECT: Dialect = Dialect {
    auth: AuthHeader::Bearer,
    accept: "application/vnd.github+json",
    api_headers: &[("x-github-api-version", "2022-11-28")],
    next_page: |_, headers| next_link(headers),
    messages,
    rate_limit,
    too_long: |status, message| status == 422 && message.to_ascii_lowercase().contains("too long"),
};

/// `message`, then each of `errors[].message`.
fn messages(body: &Value) -> Vec<String> {
    let mut parts: Vec<String> = Vec::new();
    if let Some(m) = body.get("message").and_then(Value::as_str) {
        parts.push(m.to_owned());
    }
    if let Some(errors) = body.get("errors").and_then(Value::as_array) {
        parts.extend(
            errors
                .iter()
                .filter_map(|e| e.get("message").and_then(Value::as_str))
                .map(str::to_owned),
        );
    }
    parts
}

/// A primary rate limit (`x-ratelimit-remaining: 0`, reset at `x-ratelimit-reset`) or a
/// secondary one (a 403 whose message says "rate limit").
fn rate_limit(status: u16, headers: &HeaderMap, message: &str) -> Option<RateLimit> {
    let remaining_zero = header(headers, "x-ratelimit-remaining") == Some("0");
    let limited = status == 429
        || (status == 403
            && (remaining_zero || message.to_ascii_lowercase().contains("rate limit")));
    limited.then(|| RateLimit {
        reset: remaining_zero
            .then(|| header(headers, "x-ratelimit-reset").and_then(until_epoch))
            .flatten(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(body: &[u8]) -> String {
        let v: Value = serde_json::from_slice(body).unwrap();
        messages(&v).join(": ")
    }

    #[test]
    fn messages_come_from_the_json() {
        assert_eq!(
            message(br#"{"message":"Validation Failed","errors":[{"message":"Body is too long (maximum is 65536 characters)"}]}"#),
            "Validation Failed: Body is too long (maximum is 65536 characters)"
        );
        assert!((DIALECT.too_long)(
            422,
            "Validation Failed: Body is too long"
        ));
        assert!(!(DIALECT.too_long)(400, "Body is too long"));
        assert!(!(DIALECT.too_long)(422, "Validation Failed"));
    }

    #[test]
    fn rate_limits_are_githubs() {
        let mut h = HeaderMap::new();
        assert_eq!(
            rate_limit(403, &h, "Resource not accessible by integration"),
            None
        );
        assert_eq!(
            rate_limit(403, &h, "You have exceeded a secondary rate limit"),
            Some(RateLimit { reset: None })
        );
        h.insert("x-ratelimit-remaining", "0".parse().unwrap());
        h.insert("x-ratelimit-reset", "1".parse().unwrap());
        assert_eq!(
            rate_limit(403, &h, ""),
            Some(RateLimit {
                reset: Some(std::time::Duration::from_secs(1))
            })
        );
    }
}
