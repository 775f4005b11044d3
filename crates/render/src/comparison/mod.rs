//! The comparison with the base branch's history, as the report shows it: its own view model
//! (this module, [`headline`], [`notes`], [`items`], [`tables`] and [`words`]) and its own
//! template partial (`templates/comparison.md.j2`, macros `headline` and `run_section`), so that
//! the report's layout can move it as a whole.
//!
//! The wording follows the contract: `slower` and `faster` only beyond the run-to-run noise
//! learned from the base runs; with too few base runs, the noise is said to be unknown; the
//! change within one pair of runs is named as such, never a verdict; "not like for like"
//! comes first when a judged condition differs.

mod headline;
mod items;
mod notes;
mod tables;
mod words;

use serde::Serialize;

use self::headline::{differing, drift_words, headline, history_name, run_name, source, title};
use self::items::{table as item_table, where_line, work_what, ItemTable, Items};
use self::notes::{history_line, left_out, segments, within_pair};
use self::tables::{
    base_run_rows, condition_rows, measure_rows, BaseRunRow, ConditionRow, MeasureRow,
};
use self::words::{paragraph, pct, signed_pct};
use crate::escape::{self, inline_shortened as esc};
use crate::format::plural;
use crate::limit::Caps;
use crate::CiWords;
use nsys_gate_core::artifact::comparison::{
    ChangeVerdict, Comparison, Condition, ConditionName, Method, RunComparison,
};

pub use self::words::commit;

/// The partial's template name and source.
pub const PARTIAL_NAME: &str = "comparison.md.j2";
pub const PARTIAL: &str = include_str!("../../../../templates/comparison.md.j2");

/// The comparison as a whole: where the base runs came from, the method in one line, one
/// headline per compared key, notes and unmatched runs.
#[derive(Debug, Serialize)]
pub struct ComparisonView {
    /// Where the base runs came from, in words (escaped).
    pub source: String,
    /// How a verdict is reached, in one sentence.
    pub method: String,
    /// One line per compared key: its change and verdict, "not like for like" first.
    pub headline: Vec<String>,
    /// What kept a comparison from being made or complete (escaped).
    pub notes: Vec<String>,
    /// Runs of one side only.
    pub unmatched: Vec<String>,
    /// How to get a history, when some verdict lacks one.
    pub how_to_history: Option<String>,
    /// For the report's title: ` · 🔺 1 slower`, ` · within noise`, ` · noise unknown`, ` · no
    /// baseline`.
    pub title: String,
}

/// The comparison of one key, shown at the top of its first run's section.
#[derive(Debug, Serialize)]
pub struct RunComparisonView {
    pub like_for_like: bool,
    /// The judged conditions that differ, as `label` (for the "not like for like" line).
    pub differing: Vec<String>,
    /// The history in one line: its runs as a sparkline with the head against them, the
    /// level and the run-to-run spread.
    pub history: String,
    /// The history's level shift, in words, when it has one.
    pub change_point: Option<String>,
    /// The base branch's drift, in words, when it has one.
    pub drift: Option<String>,
    /// Most ranges moving alike (the whole run), in words.
    pub run_wide: Option<String>,
    /// The base runs left out, in words.
    pub left_out: Option<String>,
    /// The head runs combined (repeats of one key), in words.
    pub repeats: Option<String>,
    /// The host-inclusive verdict in words.
    pub sentence: String,
    pub measures: Vec<MeasureRow>,
    /// The change within the pair of the (first) head run and the newest base run.
    pub within_pair: Option<String>,
    /// Rows of the conditions table: every judged condition that differs, then the ones shown
    /// but never judged.
    pub conditions: Vec<ConditionRow>,
    /// The judged conditions that are the same, in words.
    pub same: String,
    /// The base run the conditions are against.
    pub base: String,
    /// Where the change is: every table's `slower` and `faster` items in one line.
    pub where_line: Option<String>,
    /// A distributed run's ranks, each against its history, in one line (`rank 1 +8.1 %,
    /// slower`); `None` for a run of one process.
    pub ranks: Option<String>,
    pub host_ranges: ItemTable,
    pub gpu_ranges: Option<ItemTable>,
    /// Kernels and memory copies, each with what its numbers are.
    pub kernels: Option<ItemTable>,
    pub kernels_what: &'static str,
    pub copies: Option<ItemTable>,
    pub copies_what: &'static str,
    /// Each device's exposed communication.
    pub exposed: Option<ItemTable>,
    pub exposed_what: &'static str,
    /// The history's runs, oldest first (collapsed).
    pub base_runs: Vec<BaseRunRow>,
}

/// The whole comparison's view.
pub fn overall(c: &Comparison, caps: &Caps, words: &CiWords) -> ComparisonView {
    let mut unmatched: Vec<String> = c
        .unmatched_head
        .iter()
        .map(|r| {
            format!(
                "{}: no base run of this profile{}, so it is not compared.",
                run_name(r, caps),
                if c.runs.is_empty() && c.unmatched_base.is_empty() {
                    " (no base run was read)"
                } else {
                    " and leg"
                }
            )
        })
        .collect();
    unmatched.extend(c.unmatched_base.iter().map(|r| {
        format!(
            "{} (base {}): no current run of this profile and leg.",
            run_name(r, caps),
            esc(&r.analysis_path, caps.name_chars)
        )
    }));
    let unmatched = at_most_lines(
        unmatched,
        c.unmatched_head_omitted + c.unmatched_base_omitted,
    );
    let lacks_history = c.runs.is_empty()
        || c.runs.iter().any(|r| {
            r.measures
                .iter()
                .any(|m| m.verdict == Some(ChangeVerdict::NoiseUnknown))
        });
    ComparisonView {
        source: source(c, caps, words),
        method: format!(
            "`slower` or `faster` only when the head lies outside where a run of unchanged code lands (a 95 % prediction interval from the base runs, one point per CI run: Student t over the logarithms of each run's median, outliers left out, level shifts, drift and runners accounted for), and by {} or more; the measures share that 5 %, the ranges, kernels and copies their own {} (a false-discovery rate){}; with fewer than {} base runs of the head's conditions the run-to-run noise is unknown.",
            pct(c.method.noise_floor_pct),
            pct(c.method.ranges_false_discovery_rate * 100.0),
            if c.runs.iter().any(|r| r.budget_legs > 1) {
                ", the legs of one profile (its GPUs or labels) sharing both, each judged at its part"
            } else {
                ""
            },
            c.method.min_base_runs
        ),
        headline: c
            .runs
            .iter()
            .map(|r| headline(r, c, caps))
            .collect(),
        title: title(c),
        notes: c
            .notes
            .iter()
            .map(|n| escape::message(n, caps.message_chars))
            .collect(),
        unmatched,
        how_to_history: lacks_history.then(|| words.how_to_history.to_owned()),
    }
}

/// Lines of runs of one side only shown at most: a base artifact can hold any number of
/// made-up profiles, each a line of its names in every comment.
const MAX_UNMATCHED_LINES: usize = 10;

/// The first [`MAX_UNMATCHED_LINES`] lines, the last of them saying how many more there are
/// (`omitted`: those comparison.json itself leaves out).
fn at_most_lines(mut lines: Vec<String>, omitted: u64) -> Vec<String> {
    let all = lines.len() + omitted as usize;
    if all <= MAX_UNMATCHED_LINES {
        return lines;
    }
    lines.truncate(MAX_UNMATCHED_LINES - 1);
    lines.push(format!(
        "And {} more runs of one side only, not listed here (comparison.json lists them, up to {} of each side).",
        all - lines.len(),
        nsys_gate_core::artifact::comparison::MAX_UNMATCHED
    ));
    lines
}

/// One key's comparison (`method`: the comparison's); `commit_prefix` links commits when the forge
/// is known.
pub fn run(
    r: &RunComparison,
    method: &Method,
    caps: &Caps,
    commit_prefix: Option<&str>,
) -> RunComparisonView {
    let floor_pct = method.noise_floor_pct;
    // What the host measure could see: an item table that needs more says so.
    let seen = r.measures.first().and_then(|m| m.detectable_pct);
    let ranges = Items::Ranges {
        grouped: method.ranges_grouped == Some(true),
    };
    // The environment's conditions count where a run records them (a trace without CUDA
    // records no GPU, driver or CUDA version).
    let counted = |c: &&Condition| {
        c.judged
            && !(matches!(
                c.name,
                ConditionName::Gpu
                    | ConditionName::Driver
                    | ConditionName::Cuda
                    | ConditionName::Clock
                    | ConditionName::Cpu
                    | ConditionName::Os
            ) && c.base.is_null()
                && c.head.is_null())
    };
    let same: Vec<String> = r
        .conditions
        .iter()
        .filter(counted)
        .filter(|c| !c.differs)
        .map(|c| words::condition(&c.name))
        .collect();
    let judged = r.conditions.iter().filter(counted).count();
    let same = match same.len() {
        0 => format!("None of the {judged} conditions is the same."),
        n if n == judged => format!("The same in all {judged} conditions: {}.", same.join(", ")),
        _ => format!("The same: {}.", same.join(", ")),
    };
    RunComparisonView {
        like_for_like: r.like_for_like,
        differing: differing(r),
        history: history_line(r, method.spread_floor_pct),
        change_point: r.history.change_point.as_ref().map(|p| {
            let older = r.history.used.iter().filter(|u| u.segment + 1 < segments(r)).count();
            format!(
                "The base branch changed speed: its {} time is {} {} since {} ({}); the head is judged against the new level, and the {} before it still teach the run-to-run noise.",
                p.measure.label(),
                pct(p.change_pct),
                if p.change_pct < 0.0 { "lower" } else { "higher" },
                commit(p.git_commit.as_deref(), commit_prefix),
                plural(p.runs as usize, "run", "runs"),
                plural(older, "run", "runs"),
            )
        }),
        drift: r.history.drift.as_ref().map(|d| {
            format!(
                "The base branch drifts: {}. The head is judged against the trend's level at the newest base run, so this change is not blamed for the drift.",
                drift_words(d, "its level", commit_prefix)
            )
        }),
        run_wide: r.run_wide.as_ref().map(|w| {
            format!(
                "The whole run moved: {} of {} range groups changed {} or more the same way (median {}), as on a slower or faster runner; each range group below is judged by how far it moved beyond that.",
                w.groups_moved,
                w.groups,
                pct(floor_pct),
                signed_pct(w.change_pct)
            )
        }),
        left_out: left_out(r),
        repeats: (r.heads.len() > 1).then(|| {
            format!(
                "The {} head runs of this profile are repeats of one job: their values are combined (geometric mean) and judged as one run.",
                r.heads.len()
            )
        }),
        sentence: format!(
            "{}{}",
            paragraph(&r.measures[0], &history_name(r), floor_pct),
            match r.measures[0].verdict {
                Some(ChangeVerdict::WithinNoise) => r.measures[0]
                    .detectable_pct
                    .map(|d| format!(
                        ". This history sees changes of about {} or more; more base runs narrow it",
                        pct(d)
                    ))
                    .unwrap_or_default(),
                _ => String::new(),
            }
        ),
        measures: measure_rows(&r.measures),
        within_pair: within_pair(r),
        conditions: condition_rows(&r.conditions, caps, commit_prefix),
        same,
        base: format!(
            "run {} ({})",
            esc(&r.base.run_id, caps.name_chars),
            esc(&r.base.analysis_path, caps.name_chars.max(300))
        ),
        where_line: where_line(r, caps),
        ranks: r.ranks.as_ref().map(rank_line),
        host_ranges: item_table(&r.host_ranges, ranges, None, seen, caps),
        gpu_ranges: r
            .gpu_ranges
            .as_ref()
            .map(|g| item_table(g, ranges, None, seen, caps)),
        kernels: r
            .kernels
            .as_ref()
            .map(|w| item_table(&w.items, Items::Kernels, Some(w), seen, caps)),
        kernels_what: r.kernels.as_ref().map_or("", |w| work_what(w, true)),
        copies: r
            .memory_copies
            .as_ref()
            .map(|w| item_table(&w.items, Items::Copies, Some(w), seen, caps)),
        copies_what: r.memory_copies.as_ref().map_or("", |w| work_what(w, false)),
        exposed: r
            .exposed_communication
            .as_ref()
            .map(|w| item_table(&w.items, Items::ExposedCommunication, Some(w), seen, caps)),
        exposed_what: items::EXPOSED_WHAT,
        base_runs: base_run_rows(&r.history, commit_prefix),
    }
}

/// The comparison of the key whose head runs include the analysis at `path`, if compared.
pub fn find<'c>(c: &'c Comparison, path: &str) -> Option<&'c RunComparison> {
    c.runs
        .iter()
        .find(|r| r.heads.first().is_some_and(|h| h.analysis_path == path))
}

/// The built-in template of `nsys-gate compare`: the comparison alone.
const ALONE: &str = include_str!("../../../../templates/compare.md.j2");

#[derive(Debug, Serialize)]
struct AloneView {
    comparison: ComparisonView,
    runs: Vec<AloneRun>,
    tool_version: &'static str,
}

#[derive(Debug, Serialize)]
struct AloneRun {
    title: String,
    comparison: RunComparisonView,
}

/// The comparison alone as markdown (`nsys-gate compare`), `top` rows per range table.
pub fn render_alone(
    c: &Comparison,
    top: usize,
    words: &CiWords,
) -> Result<String, super::RenderError> {
    let template = super::Template {
        name: "compare.md.j2 (built in)".to_owned(),
        source: ALONE.to_owned(),
    };
    let renderer = super::Renderer::new(&template)?;
    let caps = Caps::full(top);
    let view = AloneView {
        comparison: overall(c, &caps, words),
        runs: c
            .runs
            .iter()
            .map(|r| AloneRun {
                title: format!(
                    "{} · run {}",
                    esc(&r.heads[0].profile_name, caps.name_chars),
                    esc(&r.heads[0].run_id, caps.name_chars)
                ),
                comparison: run(r, &c.method, &caps, None),
            })
            .collect(),
        tool_version: nsys_gate_core::artifact::TOOL_VERSION,
    };
    renderer.render_value(&view)
}

/// Each rank's median against its history, by rank: `rank 1 +8.1 %, slower`, the slower and
/// faster ranks first; then the ranks new or gone.
fn rank_line(r: &nsys_gate_core::artifact::comparison::RankChanges) -> String {
    let mut changed: Vec<_> = r.changed.iter().collect();
    changed.sort_by_key(|c| (!flagged_verdict(c.verdict), c.rank));
    let mut parts: Vec<String> = changed
        .iter()
        .map(|c| {
            let change = c.change_pct.map_or("n/a".to_owned(), words::signed_pct);
            let verdict = c.verdict.as_str();
            if flagged_verdict(c.verdict) {
                format!("rank {} {change}, **{verdict}**", c.rank)
            } else {
                format!("rank {} {change}, {verdict}", c.rank)
            }
        })
        .collect();
    parts.extend(r.new.iter().map(|o| format!("rank {} new", o.rank)));
    parts.extend(r.gone.iter().map(|o| format!("rank {} gone", o.rank)));
    format!("**Ranks** (each rank's median): {}.", parts.join("; "))
}

fn flagged_verdict(v: ChangeVerdict) -> bool {
    matches!(v, ChangeVerdict::Slower | ChangeVerdict::Faster)
}
