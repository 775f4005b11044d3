//! The view model: everything the template shows, computed, sorted, formatted and escaped
//! here. The template only lays it out.
//!
//! Every string field that holds text from outside (range names, manifest strings, paths,
//! messages) is already escaped with [`crate::escape::inline`] or
//! [`crate::escape::code_block`]; every duration is already formatted. A custom
//! template receives exactly these fields.
//!
//! - [`page`]: the overall gate, the headline, the slow_named, sparkline, the overview table;
//! - [`run`]: one analysed run's section (warnings, call-outs, facts, statistics), built from
//!   [`callouts`] (what its warnings mean, in words), [`ranges`] (the range tables),
//!   [`advice`], [`gpu_work`] and [`iterations`] (the per-iteration table and chart);
//! - [`failed`]: a run directory that could not be analysed.

mod advice;
mod callouts;
mod devices;
mod failed;
mod gpu_work;
mod iterations;
mod page;
mod ranges;
mod ranks;
mod run;

use std::path::Path;

use serde::Serialize;

use self::failed::{failed, FailedView};
use self::page::{
    headline, median_units, overall_gate, overview_row, shortened_notice, slow_named, sparkline,
    OverallGate, OverviewRow,
};
use self::run::{analysed, AnalysedView};
use crate::comparison::{self, ComparisonView};
use crate::escape::{self, inline_shortened as esc};
use crate::format::duration;
use crate::limit::Caps;
use crate::marker::CommentKey;
use crate::RenderOptions;
use nsys_gate_core::artifact::comparison::Comparison;
use nsys_gate_core::artifact::{Analysis, WarningCode};
use nsys_gate_core::outcome::RunOutcome;

#[derive(Debug, Serialize)]
pub struct ReportView {
    /// An HTML comment for the first line: `<!-- nsys-gate:KEY -->`, KEY the profile names
    /// (of the outcomes' key, [`CommentKey::of_outcomes`]).
    pub marker: String,
    pub tool_version: &'static str,
    pub gate: OverallGate,
    /// One line under the title: the gate, then for one run its medians, iterations and
    /// warnings (for several, how many passed; the overview table has their numbers).
    pub headline: String,
    /// The host inclusive time of each counted iteration as a Unicode sparkline in a code span
    /// (one run only), on a scale from zero; with what it shows.
    pub sparkline: Option<String>,
    /// One row per run directory (also for one).
    pub overview: Vec<OverviewRow>,
    pub runs: Vec<RunView>,
    /// Set when tables were shortened to fit the size limit: what was left out.
    pub shortened: Option<String>,
    /// The comparison with a baseline (`--baseline`), when there is one.
    pub comparison: Option<ComparisonView>,
    /// Whose numbers these are, when they come from another job's artifact
    /// ([`RenderOptions::from_artifact`]).
    pub provenance: Option<String>,
}

/// [`ReportView::provenance`] of a report rendered from a change request's own job's artifact,
/// in the forge's words.
pub fn from_artifact(words: &crate::CiWords) -> String {
    let (request, config) = (words.change_request, words.this_config);
    format!("The numbers in this comment come from the {request}'s own job: {config} read that job's artifact (which the {request}'s code wrote) as data and rendered it here, its gate recomputed from the artifact's warnings with {config}'s gate settings.")
}

#[derive(Debug, Serialize)]
pub struct RunView {
    /// `analysed` or `failed`.
    pub kind: &'static str,
    pub analysed: Option<Box<AnalysedView>>,
    pub failed: Option<FailedView>,
}

/// Rows of a table and, when some were left out, a line saying which and where they are.
#[derive(Debug, Serialize)]
pub struct Table<T> {
    pub rows: Vec<T>,
    pub total: usize,
    pub note: Option<String>,
}

/// Builds the view of `outcomes` (and their comparison with a baseline) with the given caps.
pub fn build(
    outcomes: &[RunOutcome],
    compared: Option<&Comparison>,
    caps: &Caps,
    options: &RenderOptions,
) -> ReportView {
    let base = options.links.base_dir.as_deref();
    let runs: Vec<RunView> = outcomes
        .iter()
        .map(|o| match o {
            RunOutcome::Analysed { analysis, path } => RunView {
                kind: "analysed",
                analysed: Some(Box::new({
                    let mut view = analysed(analysis, path, caps, options);
                    view.comparison = compared.and_then(|c| {
                        comparison::find(c, &path.display().to_string()).map(|r| {
                            comparison::run(
                                r,
                                &c.method,
                                caps,
                                options.links.commit_prefix.as_deref(),
                            )
                        })
                    });
                    view
                })),
                failed: None,
            },
            RunOutcome::Failed(f) => RunView {
                kind: "failed",
                analysed: None,
                failed: Some(failed(f, caps, base)),
            },
        })
        .collect();
    let mut runs = runs;
    let units = median_units(outcomes.iter().filter_map(|o| match o {
        RunOutcome::Analysed { analysis, .. } => Some(&**analysis),
        RunOutcome::Failed(_) => None,
    }));
    let mut overview: Vec<OverviewRow> = outcomes
        .iter()
        .map(|o| overview_row(o, units, caps, base))
        .collect();
    distinguish_titles(outcomes, &mut runs, &mut overview, caps);
    ReportView {
        provenance: options
            .from_artifact
            .then(|| from_artifact(&options.links.words)),
        marker: CommentKey::of_outcomes(outcomes, options.from_artifact).marker(),
        tool_version: nsys_gate_core::artifact::TOOL_VERSION,
        gate: overall_gate(outcomes, caps, base),
        headline: headline(outcomes),
        sparkline: match outcomes {
            [RunOutcome::Analysed { analysis, .. }] => {
                sparkline(analysis).map(|(line, top, off_scale)| {
                    let named = slow_named(analysis);
                    let off = match (off_scale, named.is_empty()) {
                        (true, false) => format!("{named}, off the scale"),
                        (true, true) => "; the full bars are off the scale".to_owned(),
                        (false, _) => named,
                    };
                    format!(
                        "Host inclusive time per iteration: {line} (bars from 0 to {}{off})",
                        duration(top)
                    )
                })
            }
            _ => None,
        },
        overview,
        runs,
        shortened: shortened_notice(caps, &Caps::full(options.top), options.budget),
        comparison: compared.map(|c| comparison::overall(c, caps, &options.links.words)),
    }
}

/// Run directories of one profile and run id (the legs of a matrix across GPUs: the manifest's
/// `device` is `cuda:0` on every runner) get their GPU's name in their title, from
/// `gpu_work.devices`, else their `--label`, else their run directory's name.
pub(super) fn distinguish_titles(
    outcomes: &[RunOutcome],
    runs: &mut [RunView],
    overview: &mut [OverviewRow],
    caps: &Caps,
) {
    let titles: Vec<Option<String>> = runs
        .iter()
        .map(|r| r.analysed.as_ref().map(|a| a.title.clone()))
        .collect();
    for (n, outcome) in outcomes.iter().enumerate() {
        let RunOutcome::Analysed { analysis, path } = outcome else {
            continue;
        };
        let shared = titles.iter().filter(|t| **t == titles[n]).count() > 1;
        if !shared {
            continue;
        }
        let gpu = analysis
            .gpu_work
            .as_ref()
            .map(|w| w.gpu_names().join(", "))
            .filter(|n| !n.is_empty());
        let label = gpu.or_else(|| analysis.label.clone()).unwrap_or_else(|| {
            path.parent()
                .and_then(Path::file_name)
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        });
        let suffix = format!(" · {}", esc(&label, caps.name_chars));
        if let Some(view) = runs[n].analysed.as_mut() {
            view.title.push_str(&suffix);
        }
        overview[n].run.push_str(&suffix);
    }
}

/// Warning codes in a line: each as [`escape::code`] shows one, separated by commas.
/// The indexes warning `code` names (none when the run has no such warning), as a set: a
/// slow run may name thousands, each looked up once per pass.
pub(super) fn warned_indexes(a: &Analysis, code: WarningCode) -> std::collections::BTreeSet<u64> {
    a.warning(code)
        .and_then(|w| w.iterations.as_deref())
        .unwrap_or_default()
        .iter()
        .copied()
        .collect()
}

pub(super) fn code_list<'c>(codes: impl IntoIterator<Item = &'c WarningCode>) -> String {
    let codes: Vec<String> = codes
        .into_iter()
        .map(|c| escape::code(c.as_str()))
        .collect();
    codes.join(", ")
}

pub(super) fn run_title(a: &Analysis, caps: &Caps) -> String {
    format!(
        "{} · run {}",
        esc(&a.run.profile_name, caps.name_chars),
        esc(&a.run.run_id, caps.name_chars)
    )
}

/// A path on the runner as the comment shows it, everywhere (titles, notes, "Full data"):
/// relative to `base` (the working folder) when inside it, as a code span.
pub(super) fn path_text(path: &Path, base: Option<&Path>, caps: &Caps) -> String {
    escape::code_span(&nsys_gate_core::text::shorten(
        &relative(path, base).to_string_lossy(),
        caps.name_chars.max(300),
    ))
}

pub(super) fn not_recorded<T: AsRef<str>>(value: Option<T>, caps: &Caps) -> String {
    match value {
        Some(v) => esc(v.as_ref(), caps.name_chars),
        None => "not recorded".to_owned(),
    }
}

/// `path` relative to `base` when inside it.
pub(super) fn relative<'p>(path: &'p Path, base: Option<&Path>) -> &'p Path {
    base.and_then(|b| path.strip_prefix(b).ok())
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(path)
}

pub(super) fn left_out_note(shown: usize, total: usize, what: &str, path: &str) -> Option<String> {
    (shown < total).then(|| {
        if shown == 0 {
            format!("Table left out to fit the size limit: all {total} {what} are in {path}.")
        } else {
            format!(
                "Top {shown} of {total} {what}; the other {} are in {path}.",
                total - shown
            )
        }
    })
}
