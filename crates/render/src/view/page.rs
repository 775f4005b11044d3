//! The top of the page: the overall gate, the headline under the title, the sparkline, the
//! overview table (one row per run directory) and the notice of what was left out to fit.

use std::path::Path;

use serde::Serialize;

use super::{code_list, path_text, run_title, warned_indexes};
use crate::chart;
use crate::format::{self, plural, ColumnUnit};
use crate::limit::{Budget, Caps};
use nsys_gate_core::artifact::{Analysis, GateResult, Verdict};
use nsys_gate_core::outcome::{overall_verdict, RunOutcome};

#[derive(Debug, Serialize)]
pub struct OverallGate {
    pub result: Verdict,
    pub icon: &'static str,
    /// `passed`, `failed` or `error`.
    pub word: &'static str,
    /// One sentence: the result and how many run directories it covers.
    pub headline: String,
    /// Why it failed: one line per failing run directory.
    pub reasons: Vec<String>,
    /// A gating warning or a failed analysis: say "resolve this first".
    pub resolve_first: bool,
}

#[derive(Debug, Serialize)]
pub struct OverviewRow {
    pub run: String,
    pub gate: String,
    pub iterations: String,
    /// `1.91 ms (p90 1.96 ms)`.
    pub host_median: String,
    pub gpu_median: String,
    pub warnings: String,
    /// The sparkline of the run's host inclusive times, in a code span; empty when none.
    pub trend: String,
}

pub(super) fn overall_gate(
    outcomes: &[RunOutcome],
    caps: &Caps,
    base: Option<&Path>,
) -> OverallGate {
    let total = outcomes.len();
    let result = overall_verdict(outcomes);
    let count = |v: Verdict| outcomes.iter().filter(|o| o.verdict() == v).count();
    let (failed, gating) = (count(Verdict::Error), count(Verdict::Fail));
    let mut reasons = Vec::new();
    for o in outcomes {
        match o {
            RunOutcome::Failed(f) => reasons.push(format!(
                "{}: could not be analysed ({})",
                path_text(&f.run_dir, base, caps),
                f.kind.label()
            )),
            RunOutcome::Analysed { analysis, .. } if analysis.gate.result != GateResult::Pass => {
                reasons.push(format!(
                    "{}: {}",
                    run_title(analysis, caps),
                    code_list(&analysis.gate.failing_codes)
                ));
            }
            RunOutcome::Analysed { .. } => {}
        }
    }
    let dirs = |n: usize| plural(n, "run directory", "run directories");
    let headline = match (result, total) {
        (Verdict::Error, 1) => "the run directory could not be analysed.".to_owned(),
        (Verdict::Error, _) => format!("{} of {} could not be analysed.", failed, dirs(total)),
        (Verdict::Fail, 1) => "a gating warning fails the job.".to_owned(),
        (Verdict::Fail, _) => format!("gating warnings in {} of {}.", gating, dirs(total)),
        (Verdict::Pass, 1) => "no gating warning.".to_owned(),
        (Verdict::Pass, _) => format!("{} analysed, no gating warning.", dirs(total)),
    };
    let (icon, word) = match result {
        Verdict::Error => ("⛔", "error"),
        Verdict::Fail => ("❌", "failed"),
        Verdict::Pass => ("✅", "passed"),
    };
    OverallGate {
        result,
        icon,
        word,
        headline,
        reasons,
        resolve_first: result != Verdict::Pass,
    }
}

/// The host inclusive times of the counted iterations as a sparkline in a code span, the top
/// of its scale, which starts at zero (a bar's height is the time, so 2 % of jitter is hardly a
/// step), and whether some iterations are off that scale. As in the chart, one slow iteration
/// (a cold first pass 15 times the others) does not size the scale: it stops above the slowest
/// iteration that is not an outlier, with room above it, and the outliers are the full bars,
/// cut at the top, named in the caption. Sized by the outlier, every other bar would be `▁`.
pub(super) fn sparkline(a: &Analysis) -> Option<(String, f64, bool)> {
    let values: Vec<f64> = a
        .counted_iterations()
        .map(|i| i.host.inclusive_ns as f64)
        .collect();
    if values.len() < 2 {
        return None;
    }
    let max = values.iter().copied().fold(0.0, f64::max);
    // Above the slowest iteration that is not an outlier, with room for the outliers; a
    // slow iteration that fits in that room is drawn as it is, and nothing is off the scale.
    let top = (chart::axis_top(&values) * super::iterations::OUTLIER_ROOM).min(max);
    let off_scale = max > top;
    Some((
        format!("`{}`", chart::sparkline(&values, 0.0, top)),
        top,
        off_scale,
    ))
}

/// The slow iterations (`slow_iterations`) the sparkline shows, named: `; iteration 0
/// (152 ms) is slow`, or nothing.
pub(super) fn slow_named(a: &Analysis) -> String {
    const SHOWN: usize = 3;
    let slow = warned_indexes(a, nsys_gate_core::artifact::WarningCode::SlowIterations);
    let over: Vec<String> = a
        .counted_iterations()
        .filter(|i| slow.contains(&i.index))
        .map(|i| format!("{} ({})", i.index, format::duration_i(i.host.inclusive_ns)))
        .collect();
    match over.len() {
        0 => String::new(),
        n => format!(
            "; {} {} {} slow",
            if n == 1 { "iteration" } else { "iterations" },
            format::first_and_more(over.into_iter(), SHOWN),
            if n == 1 { "is" } else { "are" }
        ),
    }
}

/// The units of the host and GPU-projected medians of these runs: one for each column of the
/// overview (and for one run, its headline).
pub(super) fn median_units<'a>(
    analyses: impl Iterator<Item = &'a Analysis> + Clone,
) -> MedianUnits {
    let summaries = analyses.map(|a| &a.iteration_summary);
    MedianUnits {
        host: ColumnUnit::of(
            summaries
                .clone()
                .filter_map(|s| s.host_inclusive.as_ref())
                .flat_map(|h| [h.median_ns, h.p90_ns]),
        ),
        gpu: ColumnUnit::of(
            summaries
                .filter_map(|s| s.gpu_projected.as_ref())
                .map(|g| g.median_ns),
        ),
    }
}

#[derive(Clone, Copy)]
pub(super) struct MedianUnits {
    host: ColumnUnit,
    gpu: ColumnUnit,
}

/// `host median 1.91 ms (p90 1.96 ms)`-style cells of a run.
pub(super) fn medians(a: &Analysis, units: MedianUnits) -> (String, String) {
    let s = &a.iteration_summary;
    let host = s.host_inclusive.as_ref().map_or("none".to_owned(), |h| {
        format!(
            "{} (p90 {})",
            units.host.show(h.median_ns),
            units.host.show(h.p90_ns)
        )
    });
    let gpu = if a.gpu_projection_available() {
        s.gpu_projected
            .as_ref()
            .map_or("no GPU work".to_owned(), |g| units.gpu.show(g.median_ns))
    } else {
        "unavailable".to_owned()
    };
    (host, gpu)
}

pub(super) fn warning_count(a: &Analysis) -> String {
    let gating = a.warnings.iter().filter(|w| w.gating).count();
    match (a.warnings.len(), gating) {
        (0, _) => "no warnings".to_owned(),
        (n, 0) => format!("{}, none gating", plural(n, "warning", "warnings")),
        (n, g) => format!("{}, {g} gating", plural(n, "warning", "warnings")),
    }
}

/// The line under the title.
pub(super) fn headline(outcomes: &[RunOutcome]) -> String {
    let nb = format::NBSP;
    match outcomes {
        [RunOutcome::Analysed { analysis: a, .. }] => {
            let s = &a.iteration_summary;
            let (host, gpu) = medians(a, median_units(std::iter::once(&**a)));
            let gate = if a.gate.result == GateResult::Pass {
                format!("✅{nb}**gate passed**")
            } else {
                format!("❌{nb}**gate failed**")
            };
            let busy = a
                .gpu_busy_per_iteration()
                .map(|b| format!(" · GPU busy **{}** per iteration", format::duration(b)))
                .unwrap_or_default();
            // A distributed run leads with its step.
            if let Some(step) = super::ranks::step_line(a) {
                return format!(
                    "{gate} · {step} · GPU projected step median **{gpu}**{busy} · **{}{nb}/{nb}{}** steps complete · {}",
                    s.complete,
                    s.expected,
                    warning_count(a)
                );
            }
            format!(
                "{gate} · host median **{host}** · GPU projected median **{gpu}**{busy} · **{}{nb}/{nb}{}** iterations complete · {}",
                s.complete,
                s.expected,
                warning_count(a)
            )
        }
        [RunOutcome::Failed(_)] => {
            format!("⛔{nb}**gate error**: the run directory could not be analysed")
        }
        _ => {
            let count = |v: Verdict| outcomes.iter().filter(|o| o.verdict() == v).count();
            let (passed, gating, failed) = (
                count(Verdict::Pass),
                count(Verdict::Fail),
                count(Verdict::Error),
            );
            let mut parts = vec![format!("{passed} passed")];
            if gating > 0 {
                parts.push(format!("{gating} with gating warnings"));
            }
            if failed > 0 {
                parts.push(format!("{failed} not analysed"));
            }
            format!(
                "**{}**: {}",
                plural(outcomes.len(), "run directory", "run directories"),
                parts.join(", ")
            )
        }
    }
}

pub(super) fn overview_row(
    o: &RunOutcome,
    units: MedianUnits,
    caps: &Caps,
    base: Option<&Path>,
) -> OverviewRow {
    match o {
        RunOutcome::Analysed { analysis: a, .. } => {
            let s = &a.iteration_summary;
            let gating = a.warnings.iter().filter(|w| w.gating).count();
            let (host_median, gpu_median) = medians(a, units);
            OverviewRow {
                run: run_title(a, caps),
                gate: if a.gate.result == GateResult::Pass {
                    "✅\u{a0}passed"
                } else {
                    "❌\u{a0}failed"
                }
                .to_owned(),
                iterations: format!("{}\u{a0}/\u{a0}{}", s.complete, s.expected),
                host_median,
                gpu_median,
                warnings: if a.warnings.is_empty() {
                    "none".to_owned()
                } else {
                    format!("{} ({gating} gating)", a.warnings.len())
                },
                trend: sparkline(a).map(|(line, ..)| line).unwrap_or_default(),
            }
        }
        RunOutcome::Failed(f) => OverviewRow {
            run: path_text(&f.run_dir, base, caps),
            gate: "⛔\u{a0}error".to_owned(),
            iterations: "not analysed".to_owned(),
            host_median: "none".to_owned(),
            gpu_median: "none".to_owned(),
            warnings: f.kind.label().to_owned(),
            trend: String::new(),
        },
    }
}

pub(super) fn shortened_notice(caps: &Caps, full: &Caps, budget: Budget) -> Option<String> {
    if caps == full {
        return None;
    }
    let mut left_out = Vec::new();
    if caps.iterations < full.iterations {
        left_out.push(match caps.iterations {
            0 => "the per-iteration tables".to_owned(),
            n => format!("per-iteration rows after the first {n}"),
        });
    }
    if caps.chart_points < full.chart_points {
        left_out.push(match caps.chart_points {
            0 => "the charts".to_owned(),
            n => format!("chart points after the first {n}"),
        });
    }
    if caps.top < full.top {
        left_out.push(match caps.top {
            0 => "the range tables".to_owned(),
            n => format!("range-table rows after the first {n}"),
        });
    }
    if caps.message_chars < full.message_chars || caps.name_chars < full.name_chars {
        left_out.push(format!(
            "the end of messages over {} and names over {} characters",
            caps.message_chars, caps.name_chars
        ));
    }
    if caps.warnings < full.warnings {
        left_out.push(format!(
            "warnings after the first {} of each run",
            caps.warnings
        ));
    }
    Some(format!(
        "This report was shortened to fit the limit of {}. Left out: {}. The full data of each run is in its analysis.json (path at the end of its section).",
        budget.describe(),
        left_out.join("; ")
    ))
}
