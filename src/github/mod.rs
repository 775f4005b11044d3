//! The pull-request comment: the only code that talks to GitHub, and the only async code.
//!
//! One comment per key, found by the hidden marker `<!-- nsys-gate:KEY -->` on its first
//! line ([`marker::marker`]) and by its author, updated in place with `PATCH`,
//! created when missing, left alone when unchanged. [`client`] is the HTTP edge (octocrab's
//! generic request methods over a client built here, with our own retries); [`event`] finds
//! the pull request of a GitHub Actions event.
//!
//! The token is a [`Token`]: its `Debug` and `Display` print `***`, and no error holds it.
//! Server text that could echo it (bodies, messages, URLs from `link`, a comment's URL) goes
//! through [`Token::redact`] in [`client`] before anything shows or stores it.

pub mod artifacts;
pub mod client;
pub mod event;
pub mod marker;

use std::borrow::Cow;
use std::fmt;
use std::sync::LazyLock;

use regex::{Captures, Regex};
use serde::Deserialize;

use crate::say::say;

pub use client::{Client, ClientConfig};
pub use event::EventPr;

/// The default author of the comment: the workflow token's bot.
pub const DEFAULT_AUTHOR: &str = "github-actions[bot]";
/// The default API base.
pub const DEFAULT_API_URL: &str = "https://api.github.com";

/// An API token. Printed as `***` by `Debug` and `Display`; only [`client`] reads it.
#[derive(Clone, PartialEq, Eq)]
pub struct Token(String);

impl Token {
    #[cfg(test)]
    pub fn new(value: String) -> Self {
        Token(value)
    }

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

/// `owner/name`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repo {
    pub owner: String,
    pub name: String,
}

impl Repo {
    /// `OWNER/NAME`, each part one GitHub could have (see [`name_problem`]). The parts go into
    /// request paths, so `.`, `..`, an empty part or another `/` never pass.
    pub fn parse(text: &str) -> Result<Self, PostError> {
        let text = text.trim();
        let refuse = |why: String| {
            PostError::Config(format!(
                "`{}` is not a repository of the form OWNER/NAME: {why}",
                text.escape_debug()
            ))
        };
        let Some((owner, name)) = text.split_once('/') else {
            return Err(refuse("there is no `/`".into()));
        };
        if name.contains('/') {
            return Err(refuse("there is more than one `/`".into()));
        }
        for (what, part) in [("owner", owner), ("name", name)] {
            if let Some(why) = name_problem(part) {
                return Err(refuse(format!("the {what} {why}")));
            }
        }
        Ok(Repo {
            owner: owner.to_owned(),
            name: name.to_owned(),
        })
    }
}

/// Why `part` cannot be an owner or a repository name; `None` when it can.
///
/// GitHub's repository names are ASCII letters, digits, `-`, `_` and `.` (any other character
/// of a new name becomes `-`), at most 100 characters, and never `.` or `..`. Owners on
/// github.com are stricter (letters, digits and `-`, at most 39), but Gitea and Forgejo
/// owners may hold `_` and `.`, so owners follow the repository rule.
fn name_problem(part: &str) -> Option<String> {
    const MAX_CHARS: usize = 100;
    if part.is_empty() {
        return Some("is empty".into());
    }
    if part == "." || part == ".." {
        return Some(format!("is `{part}`"));
    }
    if let Some(c) = part
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || "-_.".contains(*c)))
    {
        return Some(format!(
            "holds `{}`: GitHub allows only ASCII letters, digits, `-`, `_` and `.`",
            c.escape_debug()
        ));
    }
    (part.len() > MAX_CHARS).then(|| format!("is longer than {MAX_CHARS} characters"))
}

impl fmt::Display for Repo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.owner, self.name)
    }
}

/// Why a post failed. None of these holds the token.
#[derive(Debug, thiserror::Error)]
pub enum PostError {
    #[error("{0}")]
    Config(String),
    /// 403/404 on a write (or on reading the comments): the token may not write here, as
    /// on a pull request from a fork.
    #[error("{method} {path}: HTTP {status}: {message}")]
    NoAccess {
        method: String,
        path: String,
        status: u16,
        message: String,
    },
    #[error("{method} {path}: HTTP {status}: {message}")]
    Status {
        method: String,
        path: String,
        status: u16,
        message: String,
    },
    /// 422 with "too long": the body must shrink.
    #[error("{method} {path}: HTTP 422: {message}")]
    TooLong {
        method: String,
        path: String,
        message: String,
    },
    /// `last` names the request.
    #[error("gave up after {tries} tries: {last}")]
    GaveUp { tries: u32, last: String },
    /// A wait the post time limit has no room for.
    #[error("{0}")]
    OutOfTime(String),
    #[error("{method} {path}: unexpected response: {message}")]
    Response {
        method: String,
        path: String,
        message: String,
    },
}

impl PostError {
    /// True for a token that cannot write here (a fork's pull request).
    pub fn is_no_access(&self) -> bool {
        matches!(self, PostError::NoAccess { .. })
    }
}

/// The explanation added to a 403/404 warning.
pub const FORK_HINT: &str = "the token cannot write comments here. On a pull request from a fork GITHUB_TOKEN is read-only: use the fork-safe pattern. The `pull_request` job runs `nsys-gate run --no-post` and uploads its analysis.json files (only those) as an artifact; a second workflow `on: workflow_run` (with `permissions: pull-requests: write`) downloads them and runs `nsys-gate post --analyses DIR`, which renders the comment itself and finds the pull request from the event (never post the artifact's report.md: the fork wrote it). Otherwise grant the job `permissions: pull-requests: write`.";

/// A comment as far as nsys-gate needs it (GitHub's and Gitea's JSON both fit).
#[derive(Debug, Clone, Deserialize)]
pub struct Comment {
    pub id: u64,
    #[serde(default)]
    pub body: Option<String>,
    #[serde(default)]
    pub user: Option<User>,
    #[serde(default)]
    pub html_url: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct User {
    #[serde(default)]
    pub login: Option<String>,
}

impl Comment {
    fn body(&self) -> &str {
        self.body.as_deref().unwrap_or("")
    }

    fn login(&self) -> &str {
        self.user
            .as_ref()
            .and_then(|u| u.login.as_deref())
            .unwrap_or("")
    }
}

/// Which comments are ours: the marker of the key on the first line, and the author.
#[derive(Debug, Clone)]
pub struct Matcher {
    pub key: String,
    /// A login, or `*` for any author.
    pub author: String,
}

impl Matcher {
    pub fn matches(&self, c: &Comment) -> bool {
        let key_ok = marker::key_of_marker(c.body()) == Some(self.key.as_str());
        let author_ok = self.author == "*" || c.login().eq_ignore_ascii_case(&self.author);
        key_ok && author_ok
    }
}

/// What [`upsert`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Created { id: u64, url: Option<String> },
    Updated { id: u64, url: Option<String> },
    Unchanged { id: u64, url: Option<String> },
}

impl Outcome {
    pub fn url(&self) -> Option<&str> {
        match self {
            Outcome::Created { url, .. }
            | Outcome::Updated { url, .. }
            | Outcome::Unchanged { url, .. } => url.as_deref(),
        }
    }

    pub fn verb(&self) -> &'static str {
        match self {
            Outcome::Created { .. } => "created",
            Outcome::Updated { .. } => "updated",
            Outcome::Unchanged { .. } => "unchanged",
        }
    }
}

/// The body to post, and how to shrink it when the server says it is too long.
pub struct Body<'a> {
    pub text: String,
    /// The body within this many characters (the marker kept first).
    pub shrink: &'a dyn Fn(usize) -> String,
}

/// Creates or updates the one comment of `matcher.key` on pull request `pr`.
pub async fn upsert(
    client: &Client,
    repo: &Repo,
    pr: u64,
    matcher: &Matcher,
    body: Body<'_>,
) -> Result<Outcome, PostError> {
    let mut text = body.text.clone();
    let mut shrunk = false;
    loop {
        match upsert_once(client, repo, pr, matcher, &text).await {
            Err(PostError::TooLong { message, .. }) if !shrunk => {
                shrunk = true;
                // Half, or under the limit the server names if that is smaller.
                let chars = text.chars().count();
                let named = stated_maximum(&message).map_or(usize::MAX, |m| m - m / 20);
                let smaller = (body.shrink)((chars / 2).min(named));
                say!(
                    "nsys-gate: the server refused the comment as too long ({message}); sending it shortened to {} characters",
                    smaller.chars().count()
                );
                text = smaller;
            }
            other => return other,
        }
    }
}

/// `N` of "… (maximum is N characters)".
fn stated_maximum(message: &str) -> Option<usize> {
    let at = message.find("maximum is ")? + "maximum is ".len();
    let digits: String = message[at..]
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == ',')
        .filter(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

async fn upsert_once(
    client: &Client,
    repo: &Repo,
    pr: u64,
    matcher: &Matcher,
    text: &str,
) -> Result<Outcome, PostError> {
    let ours = list_ours(client, repo, pr, matcher).await?;
    if let Some((first, rest)) = ours.split_first() {
        let outcome = update(client, repo, first, text).await?;
        for extra in rest {
            client.delete_comment(repo, extra.id).await?;
        }
        return Ok(outcome);
    }

    // None yet: create, without ever sending the same POST twice blindly.
    let mut tries = 0;
    let created = loop {
        tries += 1;
        match client.create_comment(repo, pr, text).await? {
            client::Created::Done(c) => break Some(c),
            client::Created::Unknown { wait, reason } => {
                if tries >= client.config().max_tries {
                    return Err(PostError::GaveUp {
                        tries,
                        last: reason,
                    });
                }
                client.sleep(wait, &reason).await?;
                // The failed POST may have been applied: look before posting again.
                let ours = list_ours(client, repo, pr, matcher).await?;
                if !ours.is_empty() {
                    break None;
                }
            }
        }
    };

    // Another job may have created the same comment at the same time: keep the oldest.
    let ours = list_ours(client, repo, pr, matcher).await?;
    let Some((first, rest)) = ours.split_first() else {
        // Listed without it (a replica lagging behind): trust the create.
        let c = created.ok_or_else(|| PostError::Response {
            method: "GET".into(),
            path: client.comments_path(repo, pr),
            message: "the comment just created is not listed".into(),
        })?;
        return Ok(Outcome::Created {
            id: c.id,
            url: c.html_url,
        });
    };
    for extra in rest {
        client.delete_comment(repo, extra.id).await?;
    }
    match created {
        Some(c) if c.id == first.id => Ok(Outcome::Created {
            id: c.id,
            url: c.html_url.or_else(|| first.html_url.clone()),
        }),
        _ => update(client, repo, first, text).await,
    }
}

async fn update(
    client: &Client,
    repo: &Repo,
    existing: &Comment,
    text: &str,
) -> Result<Outcome, PostError> {
    if same_text(existing.body(), text) {
        return Ok(Outcome::Unchanged {
            id: existing.id,
            url: existing.html_url.clone(),
        });
    }
    let c = client.update_comment(repo, existing.id, text).await?;
    Ok(Outcome::Updated {
        id: existing.id,
        url: c.html_url.or_else(|| existing.html_url.clone()),
    })
}

/// Equal but for line endings and trailing white space (which servers may normalise).
fn same_text(a: &str, b: &str) -> bool {
    a.replace("\r\n", "\n").trim_end() == b.replace("\r\n", "\n").trim_end()
}

/// Our comments, oldest (lowest id) first.
async fn list_ours(
    client: &Client,
    repo: &Repo,
    pr: u64,
    matcher: &Matcher,
) -> Result<Vec<Comment>, PostError> {
    let mut ours: Vec<Comment> = client
        .list_comments(repo, pr)
        .await?
        .into_iter()
        .filter(|c| matcher.matches(c))
        .collect();
    ours.sort_by_key(|c| c.id);
    Ok(ours)
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
    fn repositories_parse() {
        assert_eq!(
            Repo::parse("octo/hello.rs").unwrap(),
            Repo {
                owner: "octo".into(),
                name: "hello.rs".into()
            }
        );
        for bad in ["octo", "/x", "a/b/c", "a/", "a b/c", "a/b?x=1"] {
            assert!(Repo::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn repository_names_follow_githubs_rules() {
        for good in [
            "octo/gpu",
            "Octo-1/.github",
            "o/r.s_x-1",
            "gitea.user/repo",
            "o_o/..x",
            " octo/gpu ",
        ] {
            assert!(Repo::parse(good).is_ok(), "{good}");
        }
        let long = format!("o/{}", "r".repeat(101));
        for bad in [
            "octo/..",
            "octo/.",
            "../gpu",
            "./gpu",
            "octo//gpu",
            "octo/gpu/",
            "/gpu",
            "octo/",
            "/",
            "",
            "octo/g%2e",
            "octo/gpü",
            "octo/gp\nu",
            "octo/gpu\u{0}",
            "octo\\gpu",
            &long,
        ] {
            let err = Repo::parse(bad).unwrap_err().to_string();
            assert!(err.contains("OWNER/NAME"), "{bad}: {err}");
        }
        assert_eq!(
            Repo::parse("octo/..").unwrap_err().to_string(),
            "`octo/..` is not a repository of the form OWNER/NAME: the name is `..`"
        );
        assert_eq!(
            Repo::parse("o/a\nb").unwrap_err().to_string(),
            "`o/a\\nb` is not a repository of the form OWNER/NAME: the name holds `\\n`: GitHub allows only ASCII letters, digits, `-`, `_` and `.`"
        );
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

    #[test]
    fn the_stated_maximum_is_read() {
        assert_eq!(
            stated_maximum("Validation Failed: Body is too long (maximum is 65536 characters)"),
            Some(65536)
        );
        assert_eq!(stated_maximum("Body is too long"), None);
    }

    #[test]
    fn matching_needs_the_key_and_the_author() {
        let m = Matcher {
            key: "smoke".into(),
            author: DEFAULT_AUTHOR.into(),
        };
        let c = |body: &str, login: &str| Comment {
            id: 1,
            body: Some(body.into()),
            user: Some(User {
                login: Some(login.into()),
            }),
            html_url: None,
        };
        assert!(m.matches(&c("<!-- nsys-gate:smoke -->\n# x", "github-actions[bot]")));
        assert!(m.matches(&c("<!-- nsys-gate:smoke -->\r\n# x", "GitHub-Actions[bot]")));
        assert!(m.matches(&c("<!-- nsys-gate:smoke -->", "github-actions[bot]")));
        assert!(!m.matches(&c("<!-- nsys-gate:smoke -->\n", "someone")));
        assert!(!m.matches(&c(
            "<!-- nsys-gate:smoke,other -->\n",
            "github-actions[bot]"
        )));
        assert!(!m.matches(&c("x\n<!-- nsys-gate:smoke -->\n", "github-actions[bot]")));
        let any = Matcher {
            key: "smoke".into(),
            author: "*".into(),
        };
        assert!(any.matches(&c("<!-- nsys-gate:smoke -->\n", "someone")));
    }
}
