//! GitLab's REST API v4 dialect: the token in `PRIVATE-TOKEN`, no header of GitHub's, lists
//! paged by `x-next-page` (the number of the next page of the same URL; `link: rel="next"`
//! when GitLab sends one, as for keyset pages), errors as `message` (a text, or validation
//! errors by field), `error`, a rate limit as 429 with `ratelimit-reset`, and a body refused
//! as too long with 400.

use http::header::HeaderMap;
use serde_json::Value;

use crate::http::dialect::{header, next_link, until_epoch};
use crate::http::{AuthHeader, Dialect, RateLimit};

/// GitLab's API, as the client speaks it.
pub static DIALECT: Dialect = Dialect {
    auth: AuthHeader::Named("private-token"),
    accept: "application/json",
    api_headers: &[],
    next_page,
    messages,
    rate_limit,
    too_long: |status, message| status == 400 && message.to_ascii_lowercase().contains("too long"),
};

/// The next page after `url`: the `rel="next"` URL of a `link` header, else `url` with the
/// `page` of an `x-next-page` header (empty on the last page).
fn next_page(url: &str, headers: &HeaderMap) -> Option<String> {
    if let Some(next) = next_link(headers) {
        return Some(next);
    }
    let number = header(headers, "x-next-page")
        .filter(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))?;
    let (path, query) = url.split_once('?').unwrap_or((url, ""));
    let mut parts: Vec<String> = query
        .split('&')
        .filter(|kv| !kv.is_empty() && !kv.starts_with("page="))
        .map(str::to_owned)
        .collect();
    parts.push(format!("page={number}"));
    Some(format!("{path}?{}", parts.join("&")))
}

/// `message` (a text, or `{"note": ["is too long …"]}`: each field's problems), then `error`.
fn messages(body: &Value) -> Vec<String> {
    let mut parts: Vec<String> = Vec::new();
    match body.get("message") {
        Some(Value::String(m)) => parts.push(m.clone()),
        Some(Value::Object(fields)) => {
            for (field, problems) in fields {
                let problems: Vec<&str> = match problems {
                    Value::Array(list) => list.iter().filter_map(Value::as_str).collect(),
                    Value::String(one) => vec![one.as_str()],
                    _ => Vec::new(),
                };
                parts.extend(problems.iter().map(|p| format!("{field} {p}")));
            }
        }
        _ => {}
    }
    // `{"error": "insufficient_scope", …}`.
    if let Some(e) = body.get("error").and_then(Value::as_str) {
        parts.push(e.to_owned());
    }
    parts
}

/// GitLab's rate limit: 429 (retried as any), reset at `ratelimit-reset`.
fn rate_limit(status: u16, headers: &HeaderMap, _message: &str) -> Option<RateLimit> {
    (status == 429).then(|| RateLimit {
        reset: header(headers, "ratelimit-reset").and_then(until_epoch),
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
            message(br#"{"message":{"note":["is too long (maximum is 1000000 characters)"]}}"#),
            "note is too long (maximum is 1000000 characters)"
        );
        assert_eq!(
            message(br#"{"error":"insufficient_scope","error_description":"x"}"#),
            "insufficient_scope"
        );
        assert!((DIALECT.too_long)(400, "note is too long"));
        assert!(!(DIALECT.too_long)(422, "note is too long"));
    }

    #[test]
    fn pages_follow_x_next_page() {
        let mut h = HeaderMap::new();
        h.insert("x-next-page", "3".parse().unwrap());
        assert_eq!(
            next_page("https://g/api/v4/projects/1/notes?per_page=100&page=2", &h).as_deref(),
            Some("https://g/api/v4/projects/1/notes?per_page=100&page=3")
        );
        assert_eq!(
            next_page("https://g/x", &h).as_deref(),
            Some("https://g/x?page=3")
        );
        h.insert("x-next-page", "".parse().unwrap());
        assert_eq!(next_page("https://g/x?page=4", &h), None);
    }
}
