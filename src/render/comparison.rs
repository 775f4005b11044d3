//! The comparison with a baseline, as the report shows it: its own view model (this module)
//! and its own template partial (`templates/comparison.md.j2`, macros `headline` and
//! `run_section`), so that the report's layout can move it as a whole.
//!
//! Wording follows the harness's rule: one run against one run is a difference, never a
//! regression; "not like for like" comes first when any judged condition differs.

use serde::Serialize;

use super::escape::{self, inline_shortened as esc};
use super::format::NBSP;
use super::format::{column, duration};
use super::limit::Caps;
use crate::artifact::comparison::{
    BaselineKind, ChangeVerdict, Comparison, Condition, ConditionName, Measure, RangeChanges,
    RunComparison, RunRef, WorkChange,
};

/// The partial's template name and source.
pub const PARTIAL_NAME: &str = "comparison.md.j2";
pub const PARTIAL: &str = include_str!("../../templates/comparison.md.j2");

/// The comparison as a whole: where the baseline came from, one headline per compared run,
/// notes and unmatched runs.
#[derive(Debug, Serialize)]
pub struct ComparisonView {
    /// Where the baseline came from, in words (escaped).
    pub source: String,
    /// One line per compared run: the host-inclusive change in words, "not like for like"
    /// first when it is not.
    pub headline: Vec<String>,
    /// What kept a comparison from being made or complete (escaped).
    pub notes: Vec<String>,
    /// Runs of one side only.
    pub unmatched: Vec<String>,
}

/// The comparison of one run, shown at the top of its section.
#[derive(Debug, Serialize)]
pub struct RunComparisonView {
    pub like_for_like: bool,
    /// The judged conditions that differ, as `label` (for the "not like for like" line).
    pub differing: Vec<&'static str>,
    /// Rows of the conditions table: every judged condition that differs, then the ones shown
    /// but never judged.
    pub conditions: Vec<ConditionRow>,
    /// The judged conditions that are the same, in words.
    pub same: String,
    /// Base run, for the section's first line.
    pub base: String,
    pub measures: Vec<MeasureRow>,
    /// The host-inclusive change in the harness's words.
    pub sentence: String,
    pub host_ranges: RangeTable,
    pub gpu_ranges: Option<RangeTable>,
    pub gpu_work: Option<Vec<WorkRow>>,
}

#[derive(Debug, Serialize)]
pub struct ConditionRow {
    pub name: &'static str,
    pub base: String,
    pub head: String,
    /// `differs`, `same`, or `shown, not judged`.
    pub status: &'static str,
}

#[derive(Debug, Serialize)]
pub struct MeasureRow {
    pub name: &'static str,
    pub base: String,
    pub head: String,
    pub change: String,
    pub interval: String,
    pub verdict: String,
}

#[derive(Debug, Serialize)]
pub struct RangeTable {
    pub rows: Vec<RangeRow>,
    /// Rows left out, when the table was cut.
    pub note: Option<String>,
    /// `name (time per iteration)` of ranges only head has, and only base has.
    pub new: Option<String>,
    pub gone: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct RangeRow {
    pub name: String,
    pub base: String,
    pub head: String,
    pub change: String,
    pub change_pct: String,
}

#[derive(Debug, Serialize)]
pub struct WorkRow {
    pub kind: &'static str,
    pub name: String,
    pub base: String,
    pub head: String,
}

/// The whole comparison's view.
pub fn overall(c: &Comparison, caps: &Caps) -> ComparisonView {
    let mut unmatched: Vec<String> = c
        .unmatched_head
        .iter()
        .map(|r| {
            format!(
                "{}: no baseline run of this profile{}, so it is not compared.",
                run_name(r, caps),
                if c.runs.is_empty() && c.unmatched_base.is_empty() {
                    " (no baseline was read)"
                } else {
                    ""
                }
            )
        })
        .collect();
    unmatched.extend(c.unmatched_base.iter().map(|r| {
        format!(
            "{} (baseline {}): no current run of this profile.",
            run_name(r, caps),
            esc(&r.analysis_path, caps.name_chars)
        )
    }));
    ComparisonView {
        source: source(c, caps),
        headline: c.runs.iter().map(|r| headline(r, caps)).collect(),
        notes: c.notes.iter().map(|n| esc(n, caps.message_chars)).collect(),
        unmatched,
    }
}

fn run_name(r: &RunRef, caps: &Caps) -> String {
    let mut name = format!("**{}**", esc(&r.profile_name, caps.name_chars));
    if let Some(t) = r.target.as_deref().filter(|t| *t != r.profile_name) {
        name.push_str(&format!(" (target {})", esc(t, caps.name_chars)));
    }
    name
}

fn source(c: &Comparison, caps: &Caps) -> String {
    let b = &c.baseline;
    match b.kind {
        BaselineKind::Path => format!(
            "the analyses in {}",
            esc(b.path.as_deref().unwrap_or("?"), caps.name_chars.max(300))
        ),
        BaselineKind::Auto => match (&b.workflow_run, &b.artifact) {
            (Some(run), Some(artifact)) => format!(
                "artifact {} of workflow run {} on {} at {} ({})",
                escape::code(&artifact.name),
                run.id,
                run.head_branch
                    .as_deref()
                    .map_or("the base branch".to_owned(), escape::code),
                escape::code(&short_sha(&run.head_sha)),
                if run.chosen == "base_commit" {
                    "the pull request's base commit"
                } else {
                    "the newest successful run: none ran at the base commit"
                }
            ),
            _ => "the base branch's artifact (not found)".to_owned(),
        },
    }
}

fn short_sha(sha: &str) -> String {
    sha.chars().take(12).collect()
}

/// `12.3 %`, `0.4 %`: one decimal below 100 %, whole percent from 100 on.
/// ` %` with a no-break space, as after every number of the report.
const PERCENT: &str = "\u{a0}%";

fn pct(x: f64) -> String {
    let a = x.abs();
    if a >= 100.0 {
        format!("{a:.0}{NBSP}%")
    } else {
        format!("{a:.1}{NBSP}%")
    }
}

/// `+1.2 %`, `-0.4 %`.
fn signed_pct(x: f64) -> String {
    let sign = if x < 0.0 { "-" } else { "+" };
    format!("{sign}{}", pct(x))
}

/// The change of a measure in the harness's words.
pub fn sentence(m: &Measure) -> String {
    let (Some(change), Some(verdict)) = (m.change_pct, m.verdict) else {
        return format!(
            "not compared: {}",
            escape::inline(m.note.as_deref().unwrap_or("no data"))
        );
    };
    let direction = if change < 0.0 { "faster" } else { "slower" };
    match (verdict, m.interval_pct) {
        (ChangeVerdict::Slower, Some([lo, hi])) => format!(
            "head is {} slower than base (95 %: {}-{}), one run each: a difference, not yet a regression",
            pct(change),
            pct(lo).trim_end_matches(PERCENT),
            pct(hi)
        ),
        (ChangeVerdict::Faster, Some([lo, hi])) => format!(
            "head is {} faster than base (95 %: {}-{}), one run each: a difference, not yet an improvement",
            pct(change),
            pct(hi).trim_end_matches(PERCENT),
            pct(lo)
        ),
        (_, Some([lo, hi])) => format!(
            "within noise: head is {} {direction} than base, but the 95 % interval ({} to {}) includes no change",
            pct(change),
            signed_pct(lo),
            signed_pct(hi)
        ),
        (_, None) => format!(
            "within noise: head is {} {direction} than base, but {}",
            pct(change),
            escape::inline(m.note.as_deref().unwrap_or("there is no 95 % interval"))
        ),
    }
}

fn headline(r: &RunComparison, caps: &Caps) -> String {
    let mut line = run_name(&r.head, caps);
    line.push_str(": ");
    if !r.like_for_like {
        let names = differing(r);
        line.push_str(&format!(
            "⚠️ **not like for like** ({} {}); ",
            names.join(", "),
            if names.len() == 1 {
                "differs"
            } else {
                "differ"
            }
        ));
    }
    line.push_str("host inclusive: ");
    line.push_str(&sentence(&r.measures[0]));
    if let Some(gpu) = r.measures.get(1).filter(|m| m.verdict.is_some()) {
        line.push_str("; GPU projected: ");
        line.push_str(gpu.verdict.map_or("", ChangeVerdict::as_str));
        if let Some(c) = gpu.change_pct {
            line.push_str(&format!(" ({})", signed_pct(c)));
        }
    }
    line.push('.');
    line
}

fn differing(r: &RunComparison) -> Vec<&'static str> {
    r.conditions
        .iter()
        .filter(|c| c.judged && c.differs)
        .map(|c| c.name.label())
        .collect()
}

/// A recorded value for a table cell: a string as it is, anything else as compact JSON.
fn shown_value(v: &serde_json::Value, caps: &Caps) -> String {
    match v {
        serde_json::Value::Null => "not recorded".to_owned(),
        serde_json::Value::String(s) => esc(s, caps.name_chars),
        other => esc(&other.to_string(), caps.message_chars.min(400)),
    }
}

/// A condition's recorded value in words: the device with its GPU names, the data source
/// with its record count and the start of the record ids' digest, anything else as it is.
fn condition_text(name: ConditionName, v: &serde_json::Value, caps: &Caps) -> String {
    match name {
        ConditionName::Device => {
            let mut text = shown_value(&v["device"], caps);
            if let Some(gpus) = v["gpus"].as_array().filter(|g| !g.is_empty()) {
                let names: Vec<String> = gpus.iter().map(|g| shown_value(g, caps)).collect();
                text.push_str(&format!(" ({})", names.join(", ")));
            }
            text
        }
        ConditionName::DataSource => {
            let mut text = shown_value(&v["data_source"], caps);
            if let Some(n) = v["record_count"].as_u64() {
                text.push_str(&format!("; {n} records"));
            }
            if let Some(sha) = v["record_ids_sha256"].as_str() {
                text.push_str(&format!("; ids SHA-256 {}…", esc(&short_sha(sha), 12)));
            }
            text
        }
        _ => shown_value(v, caps),
    }
}

fn condition_row(c: &Condition, caps: &Caps) -> ConditionRow {
    ConditionRow {
        name: c.name.label(),
        base: condition_text(c.name, &c.base, caps),
        head: condition_text(c.name, &c.head, caps),
        status: if !c.judged {
            "shown, not judged"
        } else if c.differs {
            "differs"
        } else {
            "same"
        },
    }
}

/// One run's comparison.
pub fn run(r: &RunComparison, caps: &Caps) -> RunComparisonView {
    let mut conditions: Vec<ConditionRow> = r
        .conditions
        .iter()
        .filter(|c| c.judged && c.differs)
        .map(|c| condition_row(c, caps))
        .collect();
    conditions.extend(
        r.conditions
            .iter()
            .filter(|c| !c.judged)
            .map(|c| condition_row(c, caps)),
    );
    let same: Vec<&str> = r
        .conditions
        .iter()
        .filter(|c| c.judged && !c.differs)
        .map(|c| c.name.label())
        .collect();
    let judged = r.conditions.iter().filter(|c| c.judged).count();
    let same = match same.len() {
        0 => format!("None of the {judged} conditions is the same."),
        n if n == judged => format!("The same in all {judged} conditions: {}.", same.join(", ")),
        _ => format!("The same: {}.", same.join(", ")),
    };
    RunComparisonView {
        like_for_like: r.like_for_like,
        differing: differing(r),
        conditions,
        same,
        base: format!(
            "run {} ({})",
            esc(&r.base.run_id, caps.name_chars),
            esc(&r.base.analysis_path, caps.name_chars.max(300))
        ),
        measures: measure_rows(&r.measures),
        sentence: sentence(&r.measures[0]),
        host_ranges: range_table(&r.host_ranges, caps),
        gpu_ranges: r.gpu_ranges.as_ref().map(|g| range_table(g, caps)),
        gpu_work: r.gpu_work.as_ref().map(|w| work_rows(w, caps)),
    }
}

/// The measures' rows: base and head medians in one unit (the largest value's), so that the
/// two columns compare at a glance.
fn measure_rows(measures: &[Measure]) -> Vec<MeasureRow> {
    let medians: Vec<f64> = measures
        .iter()
        .flat_map(|m| [&m.base, &m.head])
        .map(|s| s.as_ref().map_or(f64::NAN, |s| s.median_ns))
        .collect();
    let shown = column(&medians);
    measures
        .iter()
        .zip(shown.chunks(2))
        .map(|(m, pair)| {
            let side = |s: &Option<crate::artifact::comparison::SideSummary>, text: &String| {
                s.as_ref()
                    .map_or("none".to_owned(), |s| format!("{text} ({} it.)", s.count))
            };
            MeasureRow {
                name: m.name.label(),
                base: side(&m.base, &pair[0]),
                head: side(&m.head, &pair[1]),
                change: m.change_pct.map_or("n/a".to_owned(), signed_pct),
                interval: match m.interval_pct {
                    Some([lo, hi]) => format!("{} to {}", signed_pct(lo), signed_pct(hi)),
                    None if m.change_pct.is_some() => "too few iterations".to_owned(),
                    None => "n/a".to_owned(),
                },
                verdict: match m.verdict {
                    Some(v) => v.as_str().to_owned(),
                    None => format!(
                        "not compared: {}",
                        escape::inline(m.note.as_deref().unwrap_or("no data"))
                    ),
                },
            }
        })
        .collect()
}

/// The GPU work's rows: kernels, then memory copies; base and head totals in one unit.
fn work_rows(w: &crate::artifact::comparison::GpuWorkChanges, caps: &Caps) -> Vec<WorkRow> {
    let shown: Vec<(&'static str, &WorkChange)> = w
        .kernels
        .iter()
        .take(caps.top)
        .map(|c| ("kernel", c))
        .chain(
            w.memory_copies
                .iter()
                .take(caps.top)
                .map(|c| ("memory copy", c)),
        )
        .collect();
    let totals: Vec<f64> = shown
        .iter()
        .flat_map(|(_, c)| [c.base_total_ns, c.head_total_ns])
        .map(|t| t.unwrap_or(f64::NAN))
        .collect();
    let totals = column(&totals);
    shown
        .iter()
        .zip(totals.chunks(2))
        .map(|((kind, c), pair)| {
            let side =
                |t: Option<f64>, text: &String| t.map_or("none".to_owned(), |_| text.clone());
            WorkRow {
                kind,
                name: esc(&c.name, caps.name_chars),
                base: side(c.base_total_ns, &pair[0]),
                head: side(c.head_total_ns, &pair[1]),
            }
        })
        .collect()
}

fn range_table(c: &RangeChanges, caps: &Caps) -> RangeTable {
    let shown = &c.changed[..c.changed.len().min(caps.top)];
    // Base and head in one unit, the change in its own: one unit per column.
    let sides: Vec<f64> = shown
        .iter()
        .flat_map(|r| [r.base_per_iteration_ns, r.head_per_iteration_ns])
        .collect();
    let sides = column(&sides);
    let changes: Vec<f64> = shown.iter().map(|r| r.change_ns).collect();
    let changes = column(&changes);
    let rows: Vec<RangeRow> = shown
        .iter()
        .zip(sides.chunks(2))
        .zip(changes)
        .map(|((r, pair), change)| RangeRow {
            name: esc(&r.name, caps.name_chars),
            base: pair[0].clone(),
            head: pair[1].clone(),
            change: if r.change_ns >= 0.0 {
                format!("+{change}")
            } else {
                change
            },
            change_pct: r.change_pct.map_or("n/a".to_owned(), signed_pct),
        })
        .collect();
    let note = (rows.len() < c.changed.len()).then(|| {
        format!(
            "The {} other ranges in both runs changed less; all are in comparison.json.",
            c.changed.len() - rows.len()
        )
    });
    let list = |items: &[crate::artifact::comparison::RangeOnly]| {
        (!items.is_empty()).then(|| {
            let mut shown: Vec<String> = items
                .iter()
                .take(caps.top.max(1))
                .map(|r| {
                    format!(
                        "{} ({})",
                        esc(&r.name, caps.name_chars),
                        duration(r.per_iteration_ns)
                    )
                })
                .collect();
            if items.len() > shown.len() {
                shown.push(format!("and {} more", items.len() - shown.len()));
            }
            shown.join(", ")
        })
    };
    RangeTable {
        rows,
        note,
        new: list(&c.new),
        gone: list(&c.gone),
    }
}

/// The comparison of the run whose analysis is at `path`, if it was compared.
pub fn find<'c>(c: &'c Comparison, path: &str) -> Option<&'c RunComparison> {
    c.runs.iter().find(|r| r.head.analysis_path == path)
}

/// The built-in template of `nsys-gate compare`: the comparison alone.
const ALONE: &str = include_str!("../../templates/compare.md.j2");

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
pub fn render_alone(c: &Comparison, top: usize) -> Result<String, super::RenderError> {
    let template = super::Template {
        name: "compare.md.j2 (built in)".to_owned(),
        source: ALONE.to_owned(),
    };
    let renderer = super::Renderer::new(&template)?;
    let caps = Caps::full(top);
    let view = AloneView {
        comparison: overall(c, &caps),
        runs: c
            .runs
            .iter()
            .map(|r| AloneRun {
                title: format!(
                    "{} · run {}",
                    esc(&r.head.profile_name, caps.name_chars),
                    esc(&r.head.run_id, caps.name_chars)
                ),
                comparison: run(r, &caps),
            })
            .collect(),
        tool_version: crate::artifact::TOOL_VERSION,
    };
    renderer.render_value(&view)
}
