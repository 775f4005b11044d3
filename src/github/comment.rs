//! A pull-request comment as nsys-gate reads it ([`Comment`]), and which comments are ours
//! ([`Matcher`]): the marker of the key on the first line ([`marker::key_of_marker`]), and
//! the author.

use serde::Deserialize;

use super::marker;

/// The default author of the comment: the workflow token's bot.
pub const DEFAULT_AUTHOR: &str = "github-actions[bot]";

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

/// A comment's author.
#[derive(Debug, Clone, Deserialize)]
pub struct User {
    #[serde(default)]
    pub login: Option<String>,
}

impl Comment {
    /// The body, empty when there is none.
    pub(super) fn body(&self) -> &str {
        self.body.as_deref().unwrap_or("")
    }

    /// The author's login, empty when there is none.
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
    /// True for a comment of this key by this author.
    pub fn matches(&self, c: &Comment) -> bool {
        let key_ok = marker::key_of_marker(c.body()) == Some(self.key.as_str());
        let author_ok = self.author == "*" || c.login().eq_ignore_ascii_case(&self.author);
        key_ok && author_ok
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
