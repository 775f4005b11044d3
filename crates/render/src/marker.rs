//! The comment's key, its marker and its size: the hidden first line `<!-- nsys-gate:KEY -->`
//! by which the pull-request comment of a key is found and updated in place, the one place
//! that puts it there ([`with_marker`]: the report's first line, [`comment_body`]: the
//! comment's) and cuts a comment to the forge's limit ([`comment_body`]).
//!
//! Keys live in two namespaces that never meet ([`CommentKey`]):
//!
//! - **given**: keys the trusted side chooses: `--comment-key` (the workflow file's), a report's
//!   own profile names (`run`, `report`, which analysed the run directories themselves), the
//!   marker of a report this job rendered (`post --report`). Cleaned by [`sanitize_key`], which
//!   never leaves a `:` in them;
//! - **from an artifact**: the key `post --analyses` derives from the profile names of another
//!   job's analysis.json files, which on a fork's pull request the fork wrote. It is
//!   [`ARTIFACT_NAMESPACE`] (`artifact:`) followed by the cleaned names, so no profile name a
//!   fork can write makes it equal a given key: a fork's run can create or update only comments
//!   whose key begins with `artifact:`.

use std::collections::BTreeSet;
use std::fmt;

use super::limit::{self, Budget};
use nsys_gate_core::outcome::RunOutcome;

/// The start of the marker line.
pub const MARKER_PREFIX: &str = "<!-- nsys-gate:";
const MARKER_SUFFIX: &str = " -->";
/// The key when no profile name is known.
pub const DEFAULT_KEY: &str = "report";
/// Characters of a key at most (the namespace aside).
const KEY_CHARS: usize = 200;
/// What every key derived from an artifact begins with; a given key never holds a `:`.
pub const ARTIFACT_NAMESPACE: &str = "artifact:";

/// A comment's key, clean, in its namespace (see the module's documentation). Made only by
/// its constructors, so the marker of a key is always the marker the comment is found by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommentKey(String);

impl CommentKey {
    /// A key the trusted side gives (`--comment-key`, a report's own marker), cleaned.
    pub fn given(raw: &str) -> Self {
        CommentKey(sanitize_key(raw))
    }

    /// The key of a report that this job rendered from its own analyses (`run`, `report`):
    /// its profile names, sorted, without repeats, joined with `,`. A run directory without
    /// an analysis counts with its manifest's profile name when the manifest was read, else
    /// with the directory's name.
    pub fn of_report(outcomes: &[RunOutcome]) -> Self {
        let names: BTreeSet<String> = outcomes
            .iter()
            .map(|o| match o {
                RunOutcome::Analysed { analysis, .. } => analysis.run.profile_name.clone(),
                RunOutcome::Failed(f) => f.facts.profile_name.clone().unwrap_or_else(|| {
                    f.run_dir
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_default()
                }),
            })
            .collect();
        CommentKey(key_of_names(names))
    }

    /// The key of a comment rendered from analysis.json files that another job wrote (`post
    /// --analyses`, the fork-safe pattern): [`ARTIFACT_NAMESPACE`] and the profile names the
    /// analyses carry, joined and cleaned as [`CommentKey::of_report`] does. A file that
    /// could not be read adds nothing: the only name it has is its path, which whoever made
    /// the artifact chose. No analysis read: the namespace and [`DEFAULT_KEY`].
    pub fn of_artifact(outcomes: &[RunOutcome]) -> Self {
        let names: BTreeSet<String> = outcomes
            .iter()
            .filter_map(|o| match o {
                RunOutcome::Analysed { analysis, .. } => Some(analysis.run.profile_name.clone()),
                RunOutcome::Failed(_) => None,
            })
            .collect();
        CommentKey(format!("{ARTIFACT_NAMESPACE}{}", key_of_names(names)))
    }

    /// The key of a report rendered from `outcomes`: [`CommentKey::of_artifact`] when they come
    /// from another job's artifact, else [`CommentKey::of_report`].
    pub fn of_outcomes(outcomes: &[RunOutcome], from_artifact: bool) -> Self {
        if from_artifact {
            CommentKey::of_artifact(outcomes)
        } else {
            CommentKey::of_report(outcomes)
        }
    }

    /// The key as its marker carries it.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The marker line (without its line break).
    pub fn marker(&self) -> String {
        format!("{MARKER_PREFIX}{}{MARKER_SUFFIX}", self.0)
    }
}

impl fmt::Display for CommentKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A key that cannot end or break the HTML comment, mention anyone or link anything: letters,
/// digits, spaces and `._,+=()-` kept, other white space a space, anything else (`:` too) `_`;
/// no `--`, no blank or `-` at its ends, at most 200 characters; empty becomes
/// [`DEFAULT_KEY`]. Idempotent: a cleaned key cleans to itself, so the marker made from it
/// is the marker it is found by.
pub fn sanitize_key(raw: &str) -> String {
    let mut key: String = raw
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || " ._,+=()-".contains(c) {
                c
            } else if c.is_whitespace() {
                ' '
            } else {
                '_'
            }
        })
        .collect();
    while key.contains("--") {
        key = key.replace("--", "-");
    }
    let key: String = key.trim().chars().take(KEY_CHARS).collect();
    // A cut (or the text itself) may end in ` -`: trim both, in any order, until neither is
    // left, so that cleaning again finds nothing to trim.
    let key = key
        .trim_end_matches(|c: char| c == '-' || c.is_whitespace())
        .to_owned();
    if key.is_empty() {
        DEFAULT_KEY.to_owned()
    } else {
        key
    }
}

/// The key of a body whose first line is a marker, as written there.
pub fn key_of_marker(body: &str) -> Option<&str> {
    let line = body.lines().next()?;
    line.strip_prefix(MARKER_PREFIX)?
        .strip_suffix(MARKER_SUFFIX)
}

fn key_of_names(names: BTreeSet<String>) -> String {
    sanitize_key(&names.into_iter().collect::<Vec<_>>().join(","))
}

/// `text` with the marker of `key` as its first line (replacing a marker already there).
pub fn with_marker(text: &str, key: &CommentKey) -> String {
    let marker = key.marker();
    if key_of_marker(text).is_some() {
        let rest = text.split_once('\n').map_or("", |(_, rest)| rest);
        format!("{marker}\n{rest}")
    } else {
        format!("{marker}\n{text}")
    }
}

/// The comment of `key`: `report` with the marker of `key` as its first line, cut to `chars`
/// characters at a line boundary (the marker kept, open blocks closed, a last line saying
/// so); whole when it fits.
pub fn comment_body(report: &str, key: &CommentKey, chars: usize) -> String {
    limit::cut(
        &with_marker(report, key),
        Budget::Chars(chars),
        &format!(
            "**This report was cut to fit the server's limit of {} characters.** The full report is in the job's report.md.",
            nsys_gate_core::units::thousands(chars)
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_sanitised_and_read_back() {
        assert_eq!(
            CommentKey::given("smoke-tensor").marker(),
            "<!-- nsys-gate:smoke-tensor -->"
        );
        assert_eq!(sanitize_key("a-->b"), "a-_b");
        assert_eq!(sanitize_key("x---"), "x");
        assert_eq!(sanitize_key(" @team #12 \n"), "_team _12");
        assert_eq!(sanitize_key(""), "report");
        assert_eq!(sanitize_key(&"k".repeat(500)).len(), 200);
        assert_eq!(key_of_marker("<!-- nsys-gate:k -->\r\nbody"), Some("k"));
        assert_eq!(key_of_marker("text\n<!-- nsys-gate:k -->"), None);
    }

    #[test]
    fn sanitising_twice_changes_nothing() {
        for raw in [
            "a-->b\n<c>",
            " @team #12 ",
            "x---",
            "",
            "k,l (m) +=",
            "--a--",
        ] {
            let once = sanitize_key(raw);
            assert_eq!(sanitize_key(&once), once, "{raw:?}");
        }
    }

    #[test]
    fn a_key_cut_or_ending_at_a_dash_is_clean_at_once() {
        // Issue item 9: `perf -` became `perf ` (a trailing space), then `perf`.
        assert_eq!(sanitize_key("perf -"), "perf");
        assert_eq!(sanitize_key("perf - "), "perf");
        assert_eq!(sanitize_key("perf -\n-"), "perf");
        let long = format!("{} -x", "k".repeat(198));
        assert_eq!(sanitize_key(&long), "k".repeat(198));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(4000))]

        /// Cleaning is idempotent: a cleaned key cleans to itself, so its marker, made
        /// again from it, is the same marker.
        #[test]
        fn cleaning_a_key_twice_changes_nothing(
            raw in proptest::prelude::prop_oneof![
                ".{0,40}",
                "[a-z -]{0,12}",
                "[a-z]{190,199}[ -]{1,4}[a-z]{0,3}",
                "[ \\-\t\n:_a]{0,20}",
            ]
        ) {
            let once = sanitize_key(&raw);
            proptest::prop_assert_eq!(sanitize_key(&once), once.clone(), "{:?}", raw);
            proptest::prop_assert!(!once.is_empty() && once.chars().count() <= KEY_CHARS);
            proptest::prop_assert!(!once.contains("--") && !once.ends_with('-'));
            proptest::prop_assert!(once.trim() == once, "{:?}", once);
            // Never in the artifact's namespace, and found by its own marker.
            proptest::prop_assert!(!once.contains(':'));
            let key = CommentKey::given(&raw);
            let marker = key.marker();
            proptest::prop_assert_eq!(key_of_marker(&marker), Some(key.as_str()));
        }
    }

    #[test]
    fn a_key_from_an_artifact_is_in_a_namespace_of_its_own() {
        // Issue item 1: an artifact naming a trusted key's profile gets another key.
        let artifact = CommentKey(format!(
            "{ARTIFACT_NAMESPACE}{}",
            sanitize_key("nightly-h100")
        ));
        assert_eq!(artifact.as_str(), "artifact:nightly-h100");
        assert_ne!(artifact, CommentKey::given("nightly-h100"));
        // The trusted side cannot even name it: the `:` is cleaned away.
        assert_eq!(
            CommentKey::given("artifact:nightly-h100").as_str(),
            "artifact_nightly-h100"
        );
        assert_eq!(
            key_of_marker(&artifact.marker()),
            Some("artifact:nightly-h100")
        );
    }

    /// Whatever the report (a custom template's, another key's marker, none), the comment
    /// starts with its key's marker and fits.
    #[test]
    fn a_comment_starts_with_its_marker_and_fits() {
        let key = CommentKey::given("k");
        for report in ["# R\n", "<!-- nsys-gate:other -->\n# R\n", ""] {
            let body = comment_body(report, &key, 1000);
            assert_eq!(key_of_marker(&body), Some("k"), "{body}");
        }
        let long = format!("<!-- nsys-gate:other -->\n{}", "line\n".repeat(1000));
        let body = comment_body(&long, &key, 300);
        assert!(body.starts_with("<!-- nsys-gate:k -->\nline\n"), "{body}");
        assert!(body.chars().count() <= 300);
        assert!(body.ends_with("The full report is in the job's report.md.\n"));
    }

    #[test]
    fn a_marker_already_there_is_replaced() {
        let key = |k: &str| CommentKey::given(k);
        assert_eq!(
            with_marker("# R\n", &key("k")),
            "<!-- nsys-gate:k -->\n# R\n"
        );
        assert_eq!(
            with_marker("<!-- nsys-gate:old -->\n# R\n", &key("new")),
            "<!-- nsys-gate:new -->\n# R\n"
        );
    }
}
