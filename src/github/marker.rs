//! The comment's key and its marker: the hidden first line `<!-- nsys-gate:KEY -->` by which
//! the pull-request comment of a key is found and updated in place.

use std::collections::BTreeSet;

use crate::outcome::RunOutcome;

/// The start of the marker line.
pub const MARKER_PREFIX: &str = "<!-- nsys-gate:";
const MARKER_SUFFIX: &str = " -->";
/// The key when no profile name is known.
pub const DEFAULT_KEY: &str = "report";
/// Characters of a key at most.
const KEY_CHARS: usize = 200;

/// The marker line (without its line break) of `key`, sanitised.
pub fn marker(key: &str) -> String {
    format!("{MARKER_PREFIX}{}{MARKER_SUFFIX}", sanitize_key(key))
}

/// A key that cannot end or break the HTML comment, mention anyone or link anything: letters,
/// digits, spaces and `._,+=()-` kept, anything else `_`; no `--`, no blank ends, at most
/// 200 characters; empty becomes [`DEFAULT_KEY`].
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
    let key = key.trim().trim_end_matches('-').to_owned();
    if key.is_empty() {
        DEFAULT_KEY.to_owned()
    } else {
        key
    }
}

/// The key of a body whose first line is a marker.
pub fn key_of_marker(body: &str) -> Option<&str> {
    let line = body.lines().next()?;
    line.strip_prefix(MARKER_PREFIX)?
        .strip_suffix(MARKER_SUFFIX)
}

/// The report's key: its profile names, sorted, without repeats, joined with `,`. A run
/// directory without an analysis counts with its manifest's profile name when the manifest
/// was read, else with the directory's name.
pub fn report_key(outcomes: &[RunOutcome]) -> String {
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
    key_of_names(names)
}

/// The key of a comment rendered from analysis.json files that another job wrote (`post
/// --analyses`, the fork-safe pattern): the profile names the analyses carry, as
/// [`report_key`] joins and sanitises them. A file that could not be read adds nothing: the
/// only name it has is its path, which whoever made the artifact chose. No analysis read:
/// [`DEFAULT_KEY`].
pub fn analyses_key(outcomes: &[RunOutcome]) -> String {
    let names: BTreeSet<String> = outcomes
        .iter()
        .filter_map(|o| match o {
            RunOutcome::Analysed { analysis, .. } => Some(analysis.run.profile_name.clone()),
            RunOutcome::Failed(_) => None,
        })
        .collect();
    key_of_names(names)
}

fn key_of_names(names: BTreeSet<String>) -> String {
    sanitize_key(&names.into_iter().collect::<Vec<_>>().join(","))
}

/// `text` with the marker of `key` as its first line (replacing a marker already there).
pub fn with_marker(text: &str, key: &str) -> String {
    let marker = marker(key);
    if key_of_marker(text).is_some() {
        let rest = text.split_once('\n').map_or("", |(_, rest)| rest);
        format!("{marker}\n{rest}")
    } else {
        format!("{marker}\n{text}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_sanitised_and_read_back() {
        assert_eq!(marker("smoke-tensor"), "<!-- nsys-gate:smoke-tensor -->");
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
    fn a_marker_already_there_is_replaced() {
        assert_eq!(with_marker("# R\n", "k"), "<!-- nsys-gate:k -->\n# R\n");
        assert_eq!(
            with_marker("<!-- nsys-gate:old -->\n# R\n", "new"),
            "<!-- nsys-gate:new -->\n# R\n"
        );
    }
}
