//! A change request's comment as nsys-gate reads it, whatever the forge ([`Comment`]: a pull
//! request's comment, a merge request's note), and which comments are ours ([`Matcher`]): the
//! marker of the key on the first line ([`marker::key_of_marker`]), and the author.

use std::fmt;

use serde::de::{Deserialize, Deserializer, Visitor};

use nsys_gate_render::marker;

/// A comment as far as nsys-gate needs it; each forge's API turns its own JSON into this.
#[derive(Debug, Clone, Default)]
pub struct Comment {
    pub id: u64,
    pub body: Option<String>,
    /// The author's login (GitHub) or username (GitLab).
    pub author: Option<String>,
    /// Where a reader sees it (redacted: it may be shown and stored).
    pub url: Option<String>,
}

impl Comment {
    /// The body, empty when there is none.
    pub fn body(&self) -> &str {
        self.body.as_deref().unwrap_or("")
    }

    /// The author's login, empty when there is none.
    fn login(&self) -> &str {
        self.author.as_deref().unwrap_or("")
    }
}

/// A comment's body as a list of comments is read: kept only when it starts with the marker
/// ([`marker::MARKER_PREFIX`]), the only bodies the search for ours looks at ([`Matcher`]);
/// any other is dropped as it is read (`None`), so others' comments, however large, take no
/// memory beyond the one being read.
#[derive(Debug, Default)]
pub struct MarkedBody(pub Option<String>);

impl<'de> Deserialize<'de> for MarkedBody {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Marked;
        impl Visitor<'_> for Marked {
            type Value = MarkedBody;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string or null")
            }

            fn visit_str<E>(self, v: &str) -> Result<MarkedBody, E> {
                Ok(MarkedBody(
                    v.starts_with(marker::MARKER_PREFIX).then(|| v.to_owned()),
                ))
            }

            fn visit_string<E>(self, v: String) -> Result<MarkedBody, E> {
                Ok(MarkedBody(
                    v.starts_with(marker::MARKER_PREFIX).then_some(v),
                ))
            }

            fn visit_unit<E>(self) -> Result<MarkedBody, E> {
                Ok(MarkedBody(None))
            }

            fn visit_none<E>(self) -> Result<MarkedBody, E> {
                Ok(MarkedBody(None))
            }
        }
        deserializer.deserialize_any(Marked)
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
    fn only_marked_bodies_are_kept_while_reading() {
        let read = |json: &str| serde_json::from_str::<MarkedBody>(json).unwrap().0;
        assert_eq!(
            read(r#""<!-- nsys-gate:smoke -->\n# x""#).as_deref(),
            Some("<!-- nsys-gate:smoke -->\n# x")
        );
        assert_eq!(read(r#""review note""#), None);
        assert_eq!(read(r#"" <!-- nsys-gate:smoke -->""#), None);
        assert_eq!(read("null"), None);
        assert!(serde_json::from_str::<MarkedBody>("12").is_err());
    }

    #[test]
    fn matching_needs_the_key_and_the_author() {
        let m = Matcher {
            key: "smoke".into(),
            author: "github-actions[bot]".into(),
        };
        let c = |body: &str, login: &str| Comment {
            id: 1,
            body: Some(body.into()),
            author: Some(login.into()),
            url: None,
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
