//! The comparison with the base branch's history, as the report shows it: its own view model
//! (this module, [`tables`] and [`words`]) and its own template partial
//! (`templates/comparison.md.j2`, macros `headline` and `run_section`), so that the report's
//! layout can move it as a whole.
//!
//! The wording follows the contract: `slower` and `faster` only beyond the run-to-run noise
//! learned from the base runs; with too few base runs, the noise is said to be unknown; the
//! change within one pair of runs is named as such, never a verdict; "not like for like"
//! comes first when a judged condition differs.

mod items;
mod tables;
mod words;

use serde::Serialize;

use self::items::{table as item_table, where_line, where_short, work_what, ItemTable, Items};
use self::tables::{
    base_run_rows, condition_rows, measure_rows, BaseRunRow, ConditionRow, MeasureRow,
};
use self::words::{differ, paragraph, pct, range_pct, signed_pct, spread};
use crate::artifact::comparison::{
    BaselineKind, ChangeVerdict, Comparison, Condition, ConditionName, Drift, LeftOut,
    LeftOutReason, Measure, Method, NewestMoved, RangeChanges, RunComparison, RunRef,
};
use crate::render::chart;
use crate::render::escape::{self, inline_shortened as esc};
use crate::render::format::{duration, first_and_more, plural};
use crate::render::limit::Caps;
use crate::render::CiWords;

pub use self::words::commit;

/// The partial's template name and source.
pub const PARTIAL_NAME: &str = "comparison.md.j2";
pub const PARTIAL: &str = include_str!("../../../templates/comparison.md.j2");

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
        crate::artifact::comparison::MAX_UNMATCHED
    ));
    lines
}

/// The comparison in a few words for the title: how many keys are slower or faster than the
/// base branch's noise, else that all are within it, else that the noise is unknown.
fn title(c: &Comparison) -> String {
    let host = |v: ChangeVerdict| {
        c.runs
            .iter()
            .filter(|r| r.measures[0].verdict == Some(v))
            .count()
    };
    let (slower, faster) = (host(ChangeVerdict::Slower), host(ChangeVerdict::Faster));
    let mut parts = Vec::new();
    if slower > 0 {
        parts.push(format!("🔺 {slower} slower"));
    }
    if faster > 0 {
        parts.push(format!("🔻 {faster} faster"));
    }
    if parts.is_empty() {
        parts.push(
            if c.runs.is_empty() {
                "no baseline"
            } else if host(ChangeVerdict::WithinNoise) > 0 {
                "within noise"
            } else {
                "noise unknown"
            }
            .to_owned(),
        );
        // "within noise" while a table below says `slower` read as a contradiction: the
        // tables' verdicts follow (`within noise · 1 range group slower`).
        let mut title = format!(" · {}", parts.join(", "));
        for item in items_beyond_noise(c) {
            title.push_str(" · ");
            title.push_str(&item);
        }
        return title;
    }
    format!(" · {}", parts.join(", "))
}

/// The range groups (host or GPU-projected, each group once), kernels and memory copies whose
/// verdict is `slower` or `faster`, counted for the title: `1 range group slower`,
/// `2 kernels faster`.
fn items_beyond_noise(c: &Comparison) -> Vec<String> {
    let mut out = Vec::new();
    for verdict in [ChangeVerdict::Slower, ChangeVerdict::Faster] {
        let word = if verdict == ChangeVerdict::Slower {
            "slower"
        } else {
            "faster"
        };
        let count = |table: &dyn Fn(&RunComparison) -> Vec<&RangeChanges>| -> usize {
            c.runs
                .iter()
                .map(|r| {
                    table(r)
                        .iter()
                        .flat_map(|t| t.changed.iter())
                        .filter(|x| x.verdict == verdict)
                        .map(|x| x.name.as_str())
                        .collect::<std::collections::BTreeSet<_>>()
                        .len()
                })
                .sum()
        };
        let groups = count(&|r| {
            std::iter::once(&r.host_ranges)
                .chain(r.gpu_ranges.as_ref())
                .collect()
        });
        let kernels = count(&|r| r.kernels.as_ref().map(|k| &k.items).into_iter().collect());
        let copies = count(&|r| {
            r.memory_copies
                .as_ref()
                .map(|k| &k.items)
                .into_iter()
                .collect()
        });
        // With `--exact-names` the tables hold ranges, not groups.
        let (group, groups_word) = if c.method.ranges_grouped == Some(false) {
            ("range", "ranges")
        } else {
            ("range group", "range groups")
        };
        for (n, one, many) in [
            (groups, group, groups_word),
            (kernels, "kernel", "kernels"),
            (copies, "memory copy", "memory copies"),
        ] {
            if n > 0 {
                out.push(format!("{} {word}", plural(n, one, many)));
            }
        }
    }
    out
}

fn run_name(r: &RunRef, caps: &Caps) -> String {
    let mut name = format!("**{}**", esc(&r.profile_name, caps.name_chars));
    if let Some(t) = r.target.as_deref().filter(|t| *t != r.profile_name) {
        name.push_str(&format!(" (target {})", esc(t, caps.name_chars)));
    }
    name
}

fn source(c: &Comparison, caps: &Caps, words: &CiWords) -> String {
    let b = &c.baseline;
    match b.kind {
        BaselineKind::Path => format!(
            "the analyses in {}",
            first_and_more(b.paths.iter().map(|p| esc(p, caps.name_chars.max(300))), 5)
        ),
        BaselineKind::Auto => {
            let runs = b.ci_runs.len();
            // The workflow on GitHub, the job on GitLab: whichever the history was read from.
            match (&b.branch, b.workflow.as_ref().or(b.job.as_ref())) {
                (Some(branch), Some(place)) => format!(
                    "the base branch {}: its {} newest successful push {}{}",
                    escape::code(branch),
                    runs,
                    if runs == 1 { words.run } else { words.runs },
                    words
                        .runs_place
                        .replace("{place}", &escape::code(place))
                        .replace(
                            "{artifact}",
                            &escape::code(b.artifact.as_deref().unwrap_or("?"))
                        )
                ),
                _ => "the base branch's artifacts (not found)".to_owned(),
            }
        }
    }
}

/// `the last 10 base runs` (or `the one base run`), for sentences.
fn history_name(r: &RunComparison) -> String {
    match r.history.used.len() {
        0 => "the newest base run (other conditions)".to_owned(),
        1 => "the one base run".to_owned(),
        n => format!("the last {n} base runs"),
    }
}

/// `, which see changes of about 3.4 % or more`: what a history could have seen, beside
/// `within noise`.
fn could_see(m: &Measure) -> String {
    m.detectable_pct
        .map(|d| format!(", which see changes of about {} or more", pct(d)))
        .unwrap_or_default()
}

/// The branch's name in sentences: `` `main` `` or `the base branch`.
fn branch_name(c: &Comparison) -> String {
    c.baseline
        .branch
        .as_deref()
        .map(escape::code)
        .unwrap_or_else(|| "the base branch".to_owned())
}

/// The history's drift in words, for the headline: `` `main` has drifted +9.8 % over its last
/// 12 runs, since `abc1234` ``.
fn drift_words(d: &Drift, branch: &str, commit_prefix: Option<&str>) -> String {
    format!(
        "{branch} has drifted {} over its last {}, since {} ({})",
        signed_pct(d.change_pct),
        plural(d.runs as usize, "run", "runs"),
        commit(d.since.git_commit.as_deref(), commit_prefix),
        d.measure.label()
    )
}

fn headline(r: &RunComparison, c: &Comparison, caps: &Caps) -> String {
    let min_runs = c.method.min_base_runs;
    let mut line = match r.measures[0].verdict {
        Some(ChangeVerdict::Slower) => "🔺 ",
        Some(ChangeVerdict::Faster) => "🔻 ",
        _ => "",
    }
    .to_owned();
    line.push_str(&run_name(&r.heads[0], caps));
    if let Some(leg) = &r.key.leg {
        line.push_str(&format!(" · {}", esc(leg, caps.name_chars)));
    }
    line.push_str(": ");
    if !r.like_for_like {
        line.push_str(&format!(
            "⚠️ **not like for like** ({}); ",
            differ(&differing(r))
        ));
    }
    let host = &r.measures[0];
    line.push_str(&match (host.change_pct, host.verdict) {
        (Some(change), Some(verdict)) => format!(
            "host inclusive {} {}",
            signed_pct(change),
            verdict_words(verdict, host, r, min_runs)
        ),
        _ => format!(
            "host inclusive not compared ({})",
            escape::inline(host.note.as_deref().unwrap_or("no data"))
        ),
    });
    if let Some(gpu) = r.measures.get(1).filter(|m| m.verdict.is_some()) {
        line.push_str(&format!(
            "; GPU projected {} {}",
            gpu.change_pct.map(signed_pct).unwrap_or_default(),
            verdict_words(gpu.verdict.expect("filtered"), gpu, r, min_runs)
        ));
    }
    if let Some(place) = where_short(r, caps) {
        line.push_str(&format!("; where: {place}"));
    }
    if let Some(point) = &r.history.change_point {
        line.push_str(&format!(
            "; {} is {} {} since {} ({})",
            branch_name(c),
            pct(point.change_pct),
            if point.change_pct < 0.0 {
                "faster"
            } else {
                "slower"
            },
            commit(point.git_commit.as_deref(), None),
            point.measure.label()
        ));
    }
    if let Some(drift) = &r.history.drift {
        line.push_str(&format!(
            "; {}: not this change's doing",
            drift_words(drift, &branch_name(c), None)
        ));
    }
    if let Some(moved) = &r.history.newest_moved {
        line.push_str(&format!("; {}", newest_words(moved, &branch_name(c))));
    }
    if let Some(runner) = r.history.head_runner.as_ref().filter(|h| h.barely_known) {
        line.push_str(&format!(
            "; the head's runner {} ran {} of the base runs: judged against every runner's level and spread",
            escape::code(&runner.name),
            runner.points
        ));
    }
    line.push('.');
    line
}

/// `` `main`'s newest run was also 5.1 % slower: this change may already be on `main` ``.
fn newest_words(moved: &NewestMoved, branch: &str) -> String {
    let way = if moved.change_pct < 0.0 {
        "faster"
    } else {
        "slower"
    };
    let runs = if moved.runs == 1 {
        "newest run was".to_owned()
    } else {
        format!("newest {} runs were", moved.runs)
    };
    format!(
        "{branch}'s {runs} also {} {way}: this change may already be on {branch}{}",
        pct(moved.change_pct),
        if moved.provisional_level {
            " (the head is judged against them)"
        } else {
            ""
        }
    )
}

/// `**slower** (beyond the noise of the last 10 base runs)`, `within noise`, `noise unknown (1
/// base run)`.
fn verdict_words(verdict: ChangeVerdict, m: &Measure, r: &RunComparison, min_runs: u64) -> String {
    let usable = r
        .history
        .used
        .len()
        .min(m.base.as_ref().map_or(0, |b| b.runs) as usize);
    match verdict {
        ChangeVerdict::Slower | ChangeVerdict::Faster => format!(
            "**{}** (beyond the run-to-run noise of {})",
            verdict.as_str(),
            history_name(r)
        ),
        ChangeVerdict::WithinNoise => {
            format!("within noise ({}{})", history_name(r), could_see(m))
        }
        ChangeVerdict::NoiseUnknown => format!(
            "— **noise unknown** ({usable} usable base {}; {min_runs} needed)",
            if usable == 1 { "run" } else { "runs" },
        ),
    }
}

fn differing(r: &RunComparison) -> Vec<String> {
    r.conditions
        .iter()
        .filter(|c| c.judged && c.differs)
        .map(|c| words::condition(&c.name))
        .collect()
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

/// `Base branch, 10 runs (oldest to newest) ▃▄▃▅▄▃▄▄▃▄, head ▇: 9.80 ms to 10.02 ms,
/// run-to-run sd 0.8 %; head 10.4 ms.`
fn history_line(r: &RunComparison, spread_floor_pct: Option<f64>) -> String {
    let host = &r.measures[0];
    let values: Vec<f64> = r
        .history
        .used
        .iter()
        .filter_map(|b| b.host_inclusive_ns)
        .collect();
    let head = host.head.as_ref().map(|h| h.value_ns);
    let spread = spread(host, spread_floor_pct).filter(|_| !values.is_empty());
    let Some(spread) = spread else {
        return "No base run has the head's conditions: there is no history to compare with."
            .to_owned();
    };
    let mut all = values.clone();
    all.extend(head);
    let low = all.iter().copied().fold(f64::INFINITY, f64::min);
    let top = all.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let line = chart::sparkline(&values, low, top);
    let head_bar = head
        .map(|h| chart::sparkline(&[h], low, top))
        .unwrap_or_default();
    format!(
        "Host inclusive, base branch, {} (oldest to newest) `{line}`, head `{head_bar}`: {spread}; head {}.",
        plural(values.len(), "run", "runs"),
        head.map_or("none".to_owned(), duration)
    )
}

fn left_out(r: &RunComparison) -> Option<String> {
    let mut parts = Vec::new();
    let by_conditions: Vec<String> = r
        .history
        .left_out
        .iter()
        .filter(|l| l.reason == LeftOutReason::Conditions)
        .map(|l| {
            l.differs
                .iter()
                .map(words::condition)
                .collect::<Vec<_>>()
                .join(", ")
        })
        .collect();
    if !by_conditions.is_empty() {
        let mut kinds = by_conditions.clone();
        kinds.sort();
        kinds.dedup();
        parts.push(format!(
            "{} left out of the history: {} {} from the head's.",
            is_are(by_conditions.len()),
            kinds.join("; "),
            if kinds.len() == 1 && !kinds[0].contains(',') {
                "differs"
            } else {
                "differ"
            }
        ));
    }
    parts.extend(driver_change(r));
    parts.extend(clock_change(r));
    let outliers: Vec<&LeftOut> = r
        .history
        .left_out
        .iter()
        .filter(|l| l.reason == LeftOutReason::Outlier)
        .collect();
    if !outliers.is_empty() {
        let each: Vec<String> = outliers
            .iter()
            .map(|l| {
                format!(
                    "{} ({} {})",
                    commit(l.run.git_commit.as_deref(), None),
                    l.measure.map_or("time", |m| m.label()),
                    l.change_pct.map(signed_pct).unwrap_or_default()
                )
            })
            .collect();
        parts.push(format!(
            "{} left out as far from the rest of the history (a hiccup, not a level): {}.",
            is_are(outliers.len()),
            first_and_more(each.into_iter(), 5)
        ));
    }
    let invalid: Vec<&LeftOut> = r
        .history
        .left_out
        .iter()
        .filter(|l| l.reason == LeftOutReason::Invalid)
        .collect();
    if !invalid.is_empty() {
        let each: Vec<String> = invalid
            .iter()
            .map(|l| {
                format!(
                    "{} ({})",
                    commit(l.run.git_commit.as_deref(), None),
                    escape::inline(l.why.as_deref().unwrap_or("impossible numbers"))
                )
            })
            .collect();
        parts.push(format!(
            "{} left out because {} numbers cannot be true: {}.",
            is_are(invalid.len()),
            if invalid.len() == 1 { "its" } else { "their" },
            first_and_more(each.into_iter(), 5)
        ));
    }
    (!parts.is_empty()).then(|| parts.join(" "))
}

/// When base runs were left out because their driver differs from the head's: `The runner's
/// driver changed (550.54 -> 570.172) 4 runs ago; 4 base runs have this driver.`, the runs
/// counted from the newest base run with another driver.
fn driver_change(r: &RunComparison) -> Option<String> {
    let head = r
        .conditions
        .iter()
        .find(|c| c.name == ConditionName::Driver)?
        .head
        .as_str()?;
    let before = r
        .history
        .left_out
        .iter()
        .filter(|l| {
            l.reason == LeftOutReason::Conditions && l.differs.contains(&ConditionName::Driver)
        })
        .max_by_key(|l| l.run.position)?;
    let old = before.run.driver_version.as_deref()?;
    let all = r
        .history
        .used
        .iter()
        .chain(r.history.left_out.iter().map(|l| &l.run));
    let newer = all
        .clone()
        .filter(|b| b.position > before.run.position)
        .count();
    let same = all
        .filter(|b| b.driver_version.as_deref() == Some(head))
        .count();
    let when = match newer {
        0 => "with this run".to_owned(),
        1 => "1 run ago".to_owned(),
        n => format!("{n} runs ago"),
    };
    Some(format!(
        "The runner's driver changed ({} -> {}) {when}; {} this driver.",
        esc(old, 40),
        esc(head, 40),
        match same {
            0 => "no base run has".to_owned(),
            1 => "1 base run has".to_owned(),
            n => format!("{n} base runs have"),
        }
    ))
}

/// When base runs were left out because their SM clock differs from the head's: `2 base runs
/// ran at 1,410 MHz, this one at 1,980 MHz.` (their lowest and highest clocks when they
/// differ: `1,120-1,140 MHz`).
fn clock_change(r: &RunComparison) -> Option<String> {
    let head = r
        .conditions
        .iter()
        .find(|c| c.name == ConditionName::Clock)?
        .head
        .as_u64()?;
    let clocks: Vec<u64> = r
        .history
        .left_out
        .iter()
        .filter(|l| {
            l.reason == LeftOutReason::Conditions && l.differs.contains(&ConditionName::Clock)
        })
        .filter_map(|l| l.run.clock_mhz)
        .collect();
    let (low, high) = (clocks.iter().min()?, clocks.iter().max()?);
    let mhz = |v: u64| crate::units::thousands(v as usize);
    let ran = if low == high {
        mhz(*low)
    } else {
        format!("{}-{}", mhz(*low), mhz(*high))
    };
    Some(format!(
        "{} at {ran} MHz, this one at {} MHz.",
        match clocks.len() {
            1 => "1 base run ran".to_owned(),
            n => format!("{n} base runs ran"),
        },
        mhz(head)
    ))
}

/// `1 base run is`, `3 base runs are`.
fn is_are(n: usize) -> String {
    if n == 1 {
        "1 base run is".to_owned()
    } else {
        format!("{n} base runs are")
    }
}

/// The levels of a history: its used points' highest segment, plus one.
fn segments(r: &RunComparison) -> u64 {
    r.history
        .used
        .iter()
        .map(|u| u.segment)
        .max()
        .map_or(1, |s| s + 1)
}

/// The change within the pair of the head run and the newest base run, named for what it is.
fn within_pair(r: &RunComparison) -> Option<String> {
    let parts: Vec<String> = r
        .measures
        .iter()
        .filter_map(|m| {
            let p = m.within_pair.as_ref()?;
            Some(match p.interval_pct {
                Some(i) => format!(
                    "{} {} (95 % within this pair: {})",
                    m.name.label(),
                    signed_pct(p.change_pct),
                    range_pct(i)
                ),
                None => format!("{} {}", m.name.label(), signed_pct(p.change_pct)),
            })
        })
        .collect();
    (!parts.is_empty()).then(|| {
        format!(
            "Within this pair of runs (the head and the newest base run, iteration by iteration): {}. That interval holds the noise inside the two runs only, not the noise between runs: it is not a verdict.",
            parts.join("; ")
        )
    })
}

/// The comparison of the key whose head runs include the analysis at `path`, if compared.
pub fn find<'c>(c: &'c Comparison, path: &str) -> Option<&'c RunComparison> {
    c.runs
        .iter()
        .find(|r| r.heads.first().is_some_and(|h| h.analysis_path == path))
}

/// The built-in template of `nsys-gate compare`: the comparison alone.
const ALONE: &str = include_str!("../../../templates/compare.md.j2");

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
        tool_version: crate::artifact::TOOL_VERSION,
    };
    renderer.render_value(&view)
}

/// Each rank's median against its history, by rank: `rank 1 +8.1 %, slower`, the slower and
/// faster ranks first; then the ranks new or gone.
fn rank_line(r: &crate::artifact::comparison::RankChanges) -> String {
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
