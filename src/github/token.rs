//! The API token ([`Token`]) and its redaction from server text ([`Token::redact`]).
//!
//! The token's `Debug` and `Display` print `***`, and only the transport
//! ([`super::transport`]) reads it, to put it in the `Authorization` header.

use std::borrow::Cow;
use std::fmt;
use std::sync::LazyLock;

use regex::{Captures, Regex};

use super::error::PostError;

/// An API token. Printed as `***` by `Debug` and `Display`; only [`super::transport`] reads
/// it.
#[derive(Clone, PartialEq, Eq)]
pub struct Token(String);

impl Token {
    /// The token in the environment variable `name`; `None` when unset or empty. It is sent
    /// exactly as set, so a token that a header cannot carry as it is (a line break, white
    /// space at either end, which would be trimmed, a control or non-ASCII character) is a
    /// configuration error that says what and where, never the token.
    pub fn from_env(name: &str) -> Result<Option<Self>, PostError> {
        let Some(value) = std::env::var_os(name).filter(|v| !v.is_empty()) else {
            return Ok(None);
        };
        let refuse = |what: String| {
            PostError::Config(format!(
                "the token in ${name} {what}: it is sent as it is, and an HTTP header cannot carry it. Store the secret as one line of visible ASCII characters, with no white space at either end"
            ))
        };
        let value = value
            .into_string()
            .map_err(|_| refuse("holds a non-ASCII character (it is not even UTF-8)".into()))?;
        match token_problem(&value) {
            Some(what) => Err(refuse(what)),
            None => Ok(Some(Token(value))),
        }
    }

    pub(crate) fn expose(&self) -> &str {
        &self.0
    }

    /// `text` without the token: each appearance of it, the credential after `Bearer ` (any
    /// credential), and one after `token ` that begins as this token does (an echo cut short)
    /// become [`REDACTED`].
    pub fn redact(&self, text: &str) -> String {
        redact(text, &self.0)
    }
}

/// What replaces a token in server text.
pub const REDACTED: &str = "***";

/// Why `token` cannot be sent as it is, and where: `None` when it is one run of visible ASCII.
fn token_problem(token: &str) -> Option<String> {
    let chars: Vec<char> = token.chars().collect();
    let at = chars.iter().position(|c| !c.is_ascii_graphic())?;
    let c = chars[at];
    let what = match c {
        '\n' | '\r' => "a line break",
        c if c.is_whitespace() => "white space",
        c if c.is_control() => "a control character",
        _ => "a non-ASCII character",
    };
    // White space at either end is what a trim would silently drop.
    let verb = if !c.is_whitespace() {
        "holds"
    } else if at == 0 {
        "begins with"
    } else if chars[at..].iter().all(|c| c.is_whitespace()) {
        "ends with"
    } else {
        "holds"
    };
    Some(format!(
        "{verb} {what} (character {} of {})",
        at + 1,
        chars.len()
    ))
}

fn redact(text: &str, secret: &str) -> String {
    // A scheme, then its credential: the run of characters up to white space, a quote, a
    // backslash (JSON's escapes) or punctuation that closes a header, a URL or an element.
    static SCHEME: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r#"(?i)\b(bearer|token)([ \t]+)([^\s"'\\,;<>()\[\]{}]+)"#)
            .expect("a valid pattern")
    });
    let text = if secret.is_empty() {
        Cow::Borrowed(text)
    } else {
        Cow::Owned(text.replace(secret, REDACTED))
    };
    // The first 8 characters of the token (all of a shorter one).
    let start = &secret.as_bytes()[..secret.len().min(8)];
    SCHEME
        .replace_all(&text, |c: &Captures| {
            let credential = c[3].as_bytes();
            let done = credential.starts_with(REDACTED.as_bytes());
            let cut_short = !start.is_empty() && credential.starts_with(start);
            if !done && (c[1].eq_ignore_ascii_case("bearer") || cut_short) {
                format!("{}{}{REDACTED}", &c[1], &c[2])
            } else {
                c[0].to_owned()
            }
        })
        .into_owned()
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Token(***)")
    }
}

impl fmt::Display for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

#[cfg(test)]
impl Token {
    /// A token for tests: the crate itself reads one only from the environment.
    pub fn new(value: String) -> Self {
        Token(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_never_prints() {
        let t = Token::new("ghs_secret123".into());
        assert_eq!(format!("{t}"), "***");
        assert_eq!(format!("{t:?}"), "Token(***)");
        assert!(!format!("{:?}", Some(&t)).contains("secret"));
    }

    #[test]
    fn tokens_that_a_header_cannot_carry_as_they_are() {
        assert_eq!(token_problem("ghs_abc123"), None);
        assert_eq!(
            token_problem("ghs_abc\n").as_deref(),
            Some("ends with a line break (character 8 of 8)")
        );
        assert_eq!(
            token_problem("ghs_abc\r\n").as_deref(),
            Some("ends with a line break (character 8 of 9)")
        );
        assert_eq!(
            token_problem(" ghs").as_deref(),
            Some("begins with white space (character 1 of 4)")
        );
        assert_eq!(
            token_problem("gh s").as_deref(),
            Some("holds white space (character 3 of 4)")
        );
        assert_eq!(
            token_problem("ghs\nX: y").as_deref(),
            Some("holds a line break (character 4 of 8)")
        );
        assert_eq!(
            token_problem("ghs\u{0}").as_deref(),
            Some("holds a control character (character 4 of 4)")
        );
        assert_eq!(
            token_problem("ghsé").as_deref(),
            Some("holds a non-ASCII character (character 4 of 4)")
        );
    }

    #[test]
    fn the_token_is_redacted_from_server_text() {
        let t = Token::new("ghs_secret123XYZ".into());
        assert_eq!(
            t.redact("echo: Authorization: Bearer ghs_secret123XYZ!"),
            "echo: Authorization: Bearer ***!"
        );
        assert_eq!(
            t.redact("a=ghs_secret123XYZ&b=ghs_secret123XYZ"),
            "a=***&b=***"
        );
        // Cut short, after `token ` or `Bearer `; any credential after `Bearer `.
        assert_eq!(
            t.redact("authorization: token ghs_secre"),
            "authorization: token ***"
        );
        assert_eq!(
            t.redact("{\"h\":\"BEARER ghs_se\"}"),
            "{\"h\":\"BEARER ***\"}"
        );
        assert_eq!(t.redact("Bearer someone-elses"), "Bearer ***");
        // Words after `token` that are not the token stay.
        assert_eq!(
            t.redact("the token is not valid for this resource"),
            "the token is not valid for this resource"
        );
        assert_eq!(t.redact("Bad credentials"), "Bad credentials");
    }
}
