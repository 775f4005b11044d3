//! The API token ([`Token`]) and its redaction from server text ([`Token::redact`]).
//!
//! The token's `Debug` and `Display` print `***`, and only the transport
//! ([`super::transport`]) reads it, to put it in the `Authorization` header.

use std::fmt;
use std::sync::LazyLock;

use regex::{Captures, Regex};

use super::error::ApiError;

/// An API token. Printed as `***` by `Debug` and `Display`; only [`super::transport`] reads
/// it.
#[derive(Clone, PartialEq, Eq)]
pub struct Token(String);

impl Token {
    /// The token in the environment variable `name`; `None` when unset or empty. It is sent
    /// exactly as set, so a token that a header cannot carry as it is (a line break, white
    /// space at either end, which would be trimmed, a control or non-ASCII character) is a
    /// configuration error that says what and where, never the token.
    pub fn from_env(name: &str) -> Result<Option<Self>, ApiError> {
        let Some(value) = std::env::var_os(name).filter(|v| !v.is_empty()) else {
            return Ok(None);
        };
        let refuse = |what: String| {
            ApiError::Config(format!(
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

    pub fn expose(&self) -> &str {
        &self.0
    }

    /// `text` without the token: every run of [`FRAGMENT_CHARS`] or more of its consecutive
    /// characters (the whole token, its start or end cut off, a middle slice), the credential
    /// after `Bearer ` (any credential), and one after `token ` that begins as this token does
    /// (an echo cut shorter still) become [`REDACTED`].
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

/// The shortest run of the token's characters that is redacted wherever it appears: a
/// server may echo any slice of the token (its start cut short, its last characters, a middle
/// part), and six characters of a random token are already a clue. Shorter runs stay, since
/// ordinary words share them with any token (`token`, `test-`).
pub const FRAGMENT_CHARS: usize = 6;

fn redact(text: &str, secret: &str) -> String {
    // A scheme, then its credential: the run of characters up to white space, a quote, a
    // backslash (JSON's escapes) or punctuation that closes a header, a URL or an element.
    static SCHEME: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r#"(?i)\b(bearer|token)([ \t]+)([^\s"'\\,;<>()\[\]{}]+)"#)
            .expect("a valid pattern")
    });
    let text = redact_fragments(text, secret);
    // After `token `: the token's start cut shorter than a fragment (3 characters or more of
    // it), or its first 8 characters followed by anything.
    let start = &secret.as_bytes()[..secret.len().min(8)];
    SCHEME
        .replace_all(&text, |c: &Captures| {
            let credential = c[3].as_bytes();
            let done = credential.starts_with(REDACTED.as_bytes());
            let cut_short = !start.is_empty()
                && (credential.starts_with(start)
                    || (credential.len() >= 3 && secret.as_bytes().starts_with(credential)));
            if !done && (c[1].eq_ignore_ascii_case("bearer") || cut_short) {
                format!("{}{}{REDACTED}", &c[1], &c[2])
            } else {
                c[0].to_owned()
            }
        })
        .into_owned()
}

/// `text` with every run of [`FRAGMENT_CHARS`] or more of the token's consecutive characters
/// (the whole token included) replaced by one [`REDACTED`]: each window of that many bytes of
/// the text that is also one of the token's is covered, and covered runs merge. The token is
/// visible ASCII ([`Token::from_env`]), so a matching window never splits a character.
fn redact_fragments(text: &str, secret: &str) -> String {
    let n = FRAGMENT_CHARS;
    let bytes = text.as_bytes();
    if secret.is_empty() || bytes.len() < n.min(secret.len()) {
        return text.to_owned();
    }
    if secret.len() < n {
        // A token shorter than a fragment: only the whole of it.
        return text.replace(secret, REDACTED);
    }
    let windows: std::collections::HashSet<&[u8]> = secret.as_bytes().windows(n).collect();
    let mut covered = vec![false; bytes.len()];
    for (at, window) in bytes.windows(n).enumerate() {
        if windows.contains(window) {
            covered[at..at + n].fill(true);
        }
    }
    if !covered.contains(&true) {
        return text.to_owned();
    }
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        if covered[at] {
            out.extend_from_slice(REDACTED.as_bytes());
            while at < bytes.len() && covered[at] {
                at += 1;
            }
        } else {
            out.push(bytes[at]);
            at += 1;
        }
    }
    // Only whole ASCII runs were replaced, so the rest is the text's own UTF-8.
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
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

    /// Issue item 7: fragments of the token shorter than 8 characters after `token `, its last
    /// 12 characters and a middle slice came out. Any run of 6 or more of the token's
    /// characters is redacted; shorter runs, which ordinary words share with any token, stay.
    #[test]
    fn any_six_characters_of_the_token_are_redacted() {
        let t = Token::new("test-token-9f8e7d".into());
        assert_eq!(t.redact("token test-t"), "token ***");
        assert_eq!(t.redact("sig=token-9f8e7d;"), "sig=***;");
        assert_eq!(t.redact("x en-9f8 y"), "x *** y");
        assert_eq!(t.redact("abc9f8e7dxyz"), "abc***xyz");
        // Five characters are not a fragment: `test-` or `token` are words.
        assert_eq!(t.redact("the test-suite"), "the test-suite");
        assert_eq!(t.redact("a token is needed"), "a token is needed");
        assert_eq!(t.redact("token tes"), "token ***");
        assert_eq!(t.redact("token test-suite"), "token test-suite");
        let t = Token::new("ghs_nsysGateTestSecret_7Qx2Lp9Vw4".into());
        for (start, len) in [(0, 6), (5, 7), (21, 12), (27, 6)] {
            let fragment = &t.expose()[start..start + len];
            let text = format!("<p>{fragment}</p>");
            assert_eq!(t.redact(&text), "<p>***</p>", "{fragment}");
        }
        assert_eq!(t.redact("Bad credentials"), "Bad credentials");
    }

    proptest::proptest! {
        /// No 6 consecutive characters of the token survive, wherever they are.
        #[test]
        fn no_run_of_six_survives(
            token in "[A-Za-z0-9_]{8,40}",
            before in ".{0,20}",
            after in ".{0,20}",
            start in 0usize..40,
            len in 6usize..40,
        ) {
            let start = start % (token.len() - 5);
            let end = (start + len).min(token.len());
            let text = format!("{before}{}{after}", &token[start..end]);
            let t = Token::new(token.clone());
            let out = t.redact(&text);
            for w in token.as_bytes().windows(6) {
                let w = std::str::from_utf8(w).unwrap();
                proptest::prop_assert!(!out.contains(w), "{w:?} in {out:?}");
            }
        }
    }
}
