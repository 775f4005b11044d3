//! A run directory that could not be analysed: what failed, nsys's words, what to check.

use std::path::Path;

use serde::Serialize;

use super::path_text;
use crate::escape::{self, inline_shortened as esc};
use crate::limit::Caps;
use nsys_gate_core::outcome::Failure;

#[derive(Debug, Serialize)]
pub struct FailedView {
    /// The section's title: `profile · run ID` when the manifest was read (as an analysed
    /// run's), else the run directory.
    pub title: String,
    pub run_dir: String,
    /// What failed, in a few words.
    pub what: &'static str,
    /// The first line of the error (without nsys's words, shown apart).
    pub summary: String,
    /// The whole error as an indented code block, when it says more than the lines above
    /// (`None` for nsys's failures, whose words and command are shown on their own).
    pub error_block: Option<String>,
    pub nsys_version: String,
    /// What nsys printed, as an indented code block, when nsys ran.
    pub nsys_words: Option<String>,
    /// The command that was tried, as a code span, when the failure is nsys's.
    pub command: Option<String>,
    pub checks: Vec<String>,
}

pub(super) fn failed(f: &Failure, caps: &Caps, base: Option<&Path>) -> FailedView {
    let error = nsys_gate_core::text::shorten(&f.error, caps.message_chars.max(1000));
    let first = f.error.lines().next().unwrap_or("");
    // nsys's words are shown once, on their own.
    let summary = match &f.nsys_words {
        Some(_) => first.split("; nsys said:").next().unwrap_or(first),
        None => first,
    };
    let folder = f
        .run_dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let run_dir = path_text(&f.run_dir, base, caps);
    FailedView {
        // As an analysed run's section is titled (`profile · run ID`), so that the reader
        // finds the run the manifest names; the folder when the manifest gave no run ID.
        title: match (&f.facts.profile_name, &f.facts.run_id) {
            (Some(profile), Some(run_id)) => format!(
                "{} · run {}",
                esc(profile, caps.name_chars),
                esc(run_id, caps.name_chars)
            ),
            (Some(profile), None) => format!(
                "{} · {}",
                esc(profile, caps.name_chars),
                esc(&folder, caps.name_chars)
            ),
            (None, _) => run_dir.clone(),
        },
        run_dir,
        what: f.kind.label(),
        summary: esc(summary, caps.message_chars),
        error_block: (f.nsys_words.is_none() && f.error.lines().count() > 1)
            .then(|| escape::code_block(&error)),
        nsys_version: match &f.nsys_version {
            Some(v) => esc(v, 100),
            None => "not known (nsys did not run or did not say)".to_owned(),
        },
        nsys_words: f.nsys_words.as_deref().map(escape::code_block),
        command: f
            .command
            .as_deref()
            .map(|c| escape::code_span(&nsys_gate_core::text::shorten(c, 1000))),
        checks: f.checks(),
    }
}
