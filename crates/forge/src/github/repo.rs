//! The repository to talk to ([`Repo`], `owner/name`), checked before its parts go into
//! request paths.

use std::fmt;

use crate::http::ApiError;

/// `owner/name`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repo {
    pub owner: String,
    pub name: String,
}

impl Repo {
    /// `OWNER/NAME`, each part one GitHub could have (see [`name_problem`]). The parts go into
    /// request paths, so `.`, `..`, an empty part or another `/` never pass.
    pub fn parse(text: &str) -> Result<Self, ApiError> {
        let text = text.trim();
        let refuse = |why: String| {
            ApiError::Config(format!(
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
