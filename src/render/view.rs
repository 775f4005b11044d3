//! The view model: everything the template shows, computed, sorted, formatted and escaped
//! here. The template only lays it out.
//!
//! Every string field that holds text from outside (range names, manifest strings, paths,
//! messages) is already escaped with [`escape::inline`] or [`escape::code_block`]; every
//! duration is already formatted. A custom template receives exactly these fields.

use std::collections::BTreeSet;
use std::path::Path;

use serde::Serialize;

use super::comparison::{self, ComparisonView, RunComparisonView};
use super::escape::{self, inline_shortened as esc};
use super::format::{self, duration, duration_i};
use super::limit::{Budget, Caps};
use super::RenderOptions;
use crate::artifact::comparison::Comparison;
use crate::artifact::{
    Analysis, GateResult, GpuProjectedRange, HostRange, Iteration, IterationStats, ReportName,
    Verdict, Warning, WarningCode,
};
use crate::outcome::{Failure, RunOutcome};

#[derive(Debug, Serialize)]
pub struct ReportView {
    /// An HTML comment for the first line: `<!-- nsys-gate:KEY -->`, KEY the profile names
    /// (the caller's [`super::RenderOptions::marker`]).
    pub marker: String,
    pub tool_version: &'static str,
    pub gate: OverallGate,
    /// One row per run directory when there are several; empty for one.
    pub overview: Vec<OverviewRow>,
    pub runs: Vec<RunView>,
    /// Set when tables were shortened to fit the size limit: what was left out.
    pub shortened: Option<String>,
    /// The comparison with a baseline (`--baseline`), when there is one.
    pub comparison: Option<ComparisonView>,
}

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
    pub host_median: String,
    pub gpu_median: String,
    pub warnings: String,
}

#[derive(Debug, Serialize)]
pub struct RunView {
    /// `analysed` or `failed`.
    pub kind: &'static str,
    pub analysed: Option<Box<AnalysedView>>,
    pub failed: Option<FailedView>,
}

#[derive(Debug, Serialize)]
pub struct AnalysedView {
    /// `profile · run ID`.
    pub title: String,
    pub gate: GateResult,
    /// `✅ passed` or `❌ failed: …`.
    pub gate_line: String,
    /// Gating warnings first, then the others, each group sorted by code then message.
    pub warnings: Vec<WarningView>,
    pub warnings_note: Option<String>,
    /// Missing data, first-iteration effect and large variance, in words.
    pub callouts: Vec<String>,
    pub facts: Facts,
    pub stats: StatsView,
    /// Largest host exclusive totals (they add up).
    pub host_exclusive: Table<HostRow>,
    /// Largest host inclusive totals (they do not add up).
    pub host_inclusive: Table<HostRow>,
    /// Largest GPU-projected totals; no rows when the projection is unavailable.
    pub gpu_ranges: Table<GpuRow>,
    pub advice: Vec<String>,
    pub iterations: Table<IterationRow>,
    /// The warm-up line of the per-iteration table, when the manifest records warm-up passes.
    pub warmup_row: Option<IterationRow>,
    pub chart: Option<ChartView>,
    /// The exact path of analysis.json (escaped).
    pub analysis_path: String,
    /// This run against its baseline run, when it has one.
    pub comparison: Option<RunComparisonView>,
}

#[derive(Debug, Serialize)]
pub struct WarningView {
    pub code: String,
    pub gating: bool,
    pub icon: &'static str,
    pub message: String,
}

#[derive(Debug, Serialize)]
pub struct Facts {
    pub profile: String,
    pub run_id: String,
    pub git_commit: String,
    pub device: String,
    pub nsys_version: String,
    pub warmup: String,
    pub iterations: String,
    pub records: String,
    pub synchronization: String,
    pub capture_range: String,
    pub iteration_pattern: String,
    pub tool_version: String,
}

#[derive(Debug, Serialize)]
pub struct StatsView {
    /// False when nsys made no GPU projection: the GPU column then says `unavailable`.
    pub gpu_available: bool,
    pub rows: Vec<StatRow>,
    pub host_note: String,
    pub gpu_note: String,
}

#[derive(Debug, Serialize)]
pub struct StatRow {
    pub name: &'static str,
    pub host: String,
    pub gpu: String,
}

/// Rows of a table and, when some were left out, a line saying which and where they are.
#[derive(Debug, Serialize)]
pub struct Table<T> {
    pub rows: Vec<T>,
    pub total: usize,
    pub note: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct HostRow {
    pub name: String,
    pub instances: u64,
    pub exclusive_total: String,
    pub exclusive_mean: String,
    /// Exclusive total as a share of the counted iterations' host inclusive total.
    pub exclusive_share: String,
    pub inclusive_total: String,
    pub inclusive_mean: String,
    pub inclusive_max: String,
}

#[derive(Debug, Serialize)]
pub struct GpuRow {
    pub name: String,
    pub instances: u64,
    pub projected_total: String,
    pub projected_mean: String,
    pub projected_max: String,
    pub gpu_operations: u64,
    pub host_inclusive_total: String,
}

#[derive(Debug, Serialize)]
pub struct IterationRow {
    pub index: String,
    pub host_inclusive: String,
    pub host_exclusive: String,
    pub gpu_projected: String,
    pub gpu_operations: String,
    pub notes: String,
}

/// A mermaid xychart of the counted iterations: bars for host inclusive, a line for GPU
/// projected. Holds numbers and fixed words only.
#[derive(Debug, Serialize)]
pub struct ChartView {
    pub title: String,
    pub x_axis: String,
    pub y_axis: String,
    pub host: String,
    pub gpu: Option<String>,
    pub note: String,
}

#[derive(Debug, Serialize)]
pub struct FailedView {
    pub run_dir: String,
    /// What failed, in a few words.
    pub what: &'static str,
    /// The first line of the error.
    pub summary: String,
    /// The whole error as an indented code block.
    pub error_block: String,
    pub nsys_version: String,
    /// What nsys printed, as an indented code block, when nsys ran.
    pub nsys_words: Option<String>,
    /// The command that was tried, as a code span, when the failure is nsys's.
    pub command: Option<String>,
    pub checks: Vec<&'static str>,
}

/// Builds the view of `outcomes` (and their comparison with a baseline) with the given caps.
pub fn build(
    outcomes: &[RunOutcome],
    compared: Option<&Comparison>,
    caps: &Caps,
    options: &RenderOptions,
) -> ReportView {
    let runs: Vec<RunView> = outcomes
        .iter()
        .map(|o| match o {
            RunOutcome::Analysed { analysis, path } => RunView {
                kind: "analysed",
                analysed: Some(Box::new({
                    let mut view = analysed(analysis, path, caps);
                    view.comparison = compared
                        .and_then(|c| comparison::find(c, &path.display().to_string()))
                        .map(|r| comparison::run(r, caps));
                    view
                })),
                failed: None,
            },
            RunOutcome::Failed(f) => RunView {
                kind: "failed",
                analysed: None,
                failed: Some(failed(f, caps)),
            },
        })
        .collect();
    ReportView {
        marker: options.marker.clone(),
        tool_version: crate::artifact::TOOL_VERSION,
        gate: overall_gate(outcomes, caps),
        overview: if outcomes.len() > 1 {
            outcomes.iter().map(|o| overview_row(o, caps)).collect()
        } else {
            Vec::new()
        },
        runs,
        shortened: shortened_notice(caps, &Caps::full(options.top), options.budget),
        comparison: compared.map(|c| comparison::overall(c, caps)),
    }
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn run_title(a: &Analysis, caps: &Caps) -> String {
    format!(
        "{} · run {}",
        esc(&a.run.profile_name, caps.name_chars),
        esc(&a.run.run_id, caps.name_chars)
    )
}

fn path_text(path: &Path, caps: &Caps) -> String {
    esc(&path.to_string_lossy(), caps.name_chars.max(300))
}

fn overall_gate(outcomes: &[RunOutcome], caps: &Caps) -> OverallGate {
    let total = outcomes.len();
    let failed = outcomes
        .iter()
        .filter(|o| matches!(o, RunOutcome::Failed(_)))
        .count();
    let gating = outcomes
        .iter()
        .filter(|o| {
            matches!(o, RunOutcome::Analysed { analysis, .. } if analysis.gate.result == GateResult::Fail)
        })
        .count();
    let mut reasons = Vec::new();
    for o in outcomes {
        match o {
            RunOutcome::Failed(f) => reasons.push(format!(
                "{}: could not be analysed ({})",
                path_text(&f.run_dir, caps),
                f.kind.label()
            )),
            RunOutcome::Analysed { analysis, .. } if analysis.gate.result != GateResult::Pass => {
                let codes: Vec<String> = analysis
                    .gate
                    .failing_codes
                    .iter()
                    .map(|c| escape::code(c.as_str()))
                    .collect();
                reasons.push(format!(
                    "{}: {}",
                    run_title(analysis, caps),
                    codes.join(", ")
                ));
            }
            RunOutcome::Analysed { .. } => {}
        }
    }
    let dirs = |n: usize| plural(n, "run directory", "run directories");
    let (result, icon, word, headline) = if failed > 0 && total == 1 {
        (
            Verdict::Error,
            "⛔",
            "error",
            "the run directory could not be analysed.".to_owned(),
        )
    } else if failed > 0 {
        (
            Verdict::Error,
            "⛔",
            "error",
            format!("{} of {} could not be analysed.", failed, dirs(total)),
        )
    } else if gating > 0 && total == 1 {
        (
            Verdict::Fail,
            "❌",
            "failed",
            "a gating warning fails the job.".to_owned(),
        )
    } else if gating > 0 {
        (
            Verdict::Fail,
            "❌",
            "failed",
            format!("gating warnings in {} of {}.", gating, dirs(total)),
        )
    } else if total == 1 {
        (
            Verdict::Pass,
            "✅",
            "passed",
            "no gating warning.".to_owned(),
        )
    } else {
        (
            Verdict::Pass,
            "✅",
            "passed",
            format!("{} analysed, no gating warning.", dirs(total)),
        )
    };
    OverallGate {
        result,
        icon,
        word,
        headline,
        reasons,
        resolve_first: failed > 0 || gating > 0,
    }
}

fn overview_row(o: &RunOutcome, caps: &Caps) -> OverviewRow {
    match o {
        RunOutcome::Analysed { analysis: a, .. } => {
            let s = &a.iteration_summary;
            let gating = a.warnings.iter().filter(|w| w.gating).count();
            OverviewRow {
                run: run_title(a, caps),
                gate: if a.gate.result == GateResult::Pass {
                    "✅ passed"
                } else {
                    "❌ failed"
                }
                .to_owned(),
                iterations: format!("{} / {}", s.complete, s.expected),
                host_median: s
                    .host_inclusive
                    .as_ref()
                    .map_or("none".to_owned(), |h| duration(h.median_ns)),
                gpu_median: if gpu_available(a) {
                    s.gpu_projected
                        .as_ref()
                        .map_or("no GPU work".to_owned(), |g| duration(g.median_ns))
                } else {
                    "unavailable".to_owned()
                },
                warnings: if a.warnings.is_empty() {
                    "none".to_owned()
                } else {
                    format!("{} ({gating} gating)", a.warnings.len())
                },
            }
        }
        RunOutcome::Failed(f) => OverviewRow {
            run: path_text(&f.run_dir, caps),
            gate: "⛔ error".to_owned(),
            iterations: "not analysed".to_owned(),
            host_median: "none".to_owned(),
            gpu_median: "none".to_owned(),
            warnings: f.kind.label().to_owned(),
        },
    }
}

fn shortened_notice(caps: &Caps, full: &Caps, budget: Budget) -> Option<String> {
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
        "This report was shortened to fit GitHub's limit of {}. Left out: {}. The full data of each run is in its analysis.json (path at the end of its section).",
        budget.describe(),
        left_out.join("; ")
    ))
}

fn gpu_available(a: &Analysis) -> bool {
    let written = a
        .provenance
        .report_status
        .get(ReportName::GpuProjection.as_str())
        .is_none_or(|s| s.is_written());
    written
        && !a
            .warnings
            .iter()
            .any(|w| w.code == WarningCode::GpuProjectionUnavailable)
}

fn warning(a: &Analysis, code: WarningCode) -> Option<&Warning> {
    a.warnings.iter().find(|w| w.code == code)
}

fn not_recorded<T: AsRef<str>>(value: Option<T>, caps: &Caps) -> String {
    match value {
        Some(v) => esc(v.as_ref(), caps.name_chars),
        None => "not recorded".to_owned(),
    }
}

fn analysed(a: &Analysis, path: &Path, caps: &Caps) -> AnalysedView {
    let s = &a.iteration_summary;
    let counted = s.host_inclusive.as_ref().map_or(0, |h| h.count);
    let gpu_ok = gpu_available(a);
    let path_text = path_text(path, caps);

    // Warnings: gating first.
    let mut ordered: Vec<&Warning> = a.warnings.iter().filter(|w| w.gating).collect();
    ordered.extend(a.warnings.iter().filter(|w| !w.gating));
    let warnings: Vec<WarningView> = ordered
        .iter()
        .take(caps.warnings)
        .map(|w| WarningView {
            code: escape::code(w.code.as_str()),
            gating: w.gating,
            icon: if w.gating { "❌" } else { "⚠️" },
            message: esc(&w.message, caps.message_chars),
        })
        .collect();
    let warnings_note = (ordered.len() > warnings.len()).then(|| {
        format!(
            "{} more warnings left out to fit the size limit; all {} are in {path_text}.",
            ordered.len() - warnings.len(),
            ordered.len()
        )
    });

    let gate_line = if a.gate.result == GateResult::Pass {
        "✅ passed: no gating warning".to_owned()
    } else {
        let codes: Vec<String> = a
            .gate
            .failing_codes
            .iter()
            .map(|c| escape::code(c.as_str()))
            .collect();
        format!("❌ failed: {}", codes.join(", "))
    };

    AnalysedView {
        title: run_title(a, caps),
        gate: a.gate.result,
        gate_line,
        warnings,
        warnings_note,
        callouts: callouts(a, counted, caps),
        facts: facts(a, counted, caps),
        stats: stats(a, counted, gpu_ok),
        host_exclusive: host_table(a, caps, true, &path_text),
        host_inclusive: host_table(a, caps, false, &path_text),
        gpu_ranges: gpu_table(a, caps, &path_text),
        advice: advice(a, gpu_ok, caps),
        iterations: iteration_table(a, caps, gpu_ok, &path_text),
        warmup_row: warmup(a).filter(|n| *n > 0).map(|n| IterationRow {
            index: format!("warm-up ×{n}"),
            host_inclusive: "not measured".to_owned(),
            host_exclusive: String::new(),
            gpu_projected: String::new(),
            gpu_operations: String::new(),
            notes: if a.run.capture_range.is_some() {
                "ran before the capture range: not in the trace".to_owned()
            } else {
                "not counted as iterations".to_owned()
            },
        }),
        chart: chart(a, caps, gpu_ok),
        analysis_path: path_text,
        comparison: None,
    }
}

fn warmup(a: &Analysis) -> Option<u64> {
    a.run
        .workload
        .get("warmup")
        .and_then(serde_json::Value::as_u64)
}

fn facts(a: &Analysis, counted: u64, caps: &Caps) -> Facts {
    let s = &a.iteration_summary;
    let p = &a.provenance;
    let mut nsys_version = esc(&p.nsys_version, caps.name_chars);
    if p.legacy_reports {
        nsys_version.push_str(" (legacy report names)");
    }
    if p.stats_reused {
        nsys_version.push_str(" (CSVs of an earlier run reused)");
    }
    let mut iterations = format!(
        "{} expected / {} found / {} complete",
        s.expected, s.found, s.complete
    );
    if counted != s.complete {
        iterations.push_str(&format!(" ({counted} counted in the statistics)"));
    }
    Facts {
        profile: esc(&a.run.profile_name, caps.name_chars),
        run_id: esc(&a.run.run_id, caps.name_chars),
        git_commit: not_recorded(a.run.git_commit.as_deref(), caps),
        device: not_recorded(a.run.device.as_deref(), caps),
        nsys_version,
        warmup: match warmup(a) {
            Some(n) if a.run.capture_range.is_some() => format!(
                "{} (before the capture range: not in the trace)",
                plural(n as usize, "pass", "passes")
            ),
            Some(n) => plural(n as usize, "pass", "passes"),
            None => "not recorded".to_owned(),
        },
        iterations,
        records: a
            .run
            .record_count
            .map_or("not recorded".to_owned(), |n| n.to_string()),
        synchronization: synchronization(a.run.cuda.as_ref(), caps),
        capture_range: match &a.run.capture_range {
            Some(c) => esc(c, caps.name_chars),
            None => "none (the whole trace was captured)".to_owned(),
        },
        iteration_pattern: esc(&a.run.iteration_pattern, caps.name_chars),
        tool_version: esc(&p.tool_version, 40),
    }
}

/// The manifest's `cuda` mapping in words.
fn synchronization(cuda: Option<&serde_json::Value>, caps: &Caps) -> String {
    const KNOWN: &[(&str, &str)] = &[
        ("synchronize_before_warmup", "before warm-up"),
        ("synchronize_after_warmup", "after warm-up"),
        ("synchronize_before_capture", "before the capture"),
        ("synchronize_after_capture", "after the capture"),
        ("synchronize_each_iteration", "after each iteration"),
    ];
    let Some(cuda) = cuda else {
        return "not recorded".to_owned();
    };
    let Some(map) = cuda.as_object() else {
        return esc(&cuda.to_string(), caps.name_chars);
    };
    let (mut yes, mut no, mut other) = (Vec::new(), Vec::new(), Vec::new());
    for (key, words) in KNOWN {
        match map.get(*key) {
            Some(serde_json::Value::Bool(true)) => yes.push(*words),
            Some(serde_json::Value::Bool(false)) => no.push(*words),
            Some(v) => other.push(format!("{key}: {v}")),
            None => {}
        }
    }
    for (key, value) in map {
        if !KNOWN.iter().any(|(k, _)| k == key) {
            other.push(format!("{key}: {value}"));
        }
    }
    let mut parts = Vec::new();
    if !yes.is_empty() {
        parts.push(format!("synchronized {}", yes.join(", ")));
    }
    if !no.is_empty() {
        parts.push(format!("not {}", no.join(", ")));
    }
    let mut text = parts.join("; ");
    if !other.is_empty() {
        if !text.is_empty() {
            text.push_str("; ");
        }
        text.push_str(&other.join(", "));
    }
    if text.is_empty() {
        return "not recorded".to_owned();
    }
    esc(&text, caps.message_chars)
}

fn callouts(a: &Analysis, counted: u64, caps: &Caps) -> Vec<String> {
    let s = &a.iteration_summary;
    let mut out = Vec::new();
    if s.found == 0 {
        out.push(format!(
            "**Missing data:** no iteration was measured, so there are no statistics. Check that the program pushes ranges matching {}{}.",
            esc(&a.run.iteration_pattern, caps.name_chars),
            match &a.run.capture_range {
                Some(c) => format!(" inside the capture range {}", esc(c, caps.name_chars)),
                None => String::new(),
            }
        ));
    } else if let Some(w) = warning(a, WarningCode::MissingIterations) {
        let missing = w.iterations.as_deref().unwrap_or(&[]);
        out.push(format!(
            "**Missing data:** {} of {} expected iterations {} no complete measurement ({}); the statistics cover {} {}.",
            missing.len(),
            s.expected,
            if missing.len() == 1 { "has" } else { "have" },
            format::index_list(missing, 20),
            counted,
            if counted == 1 { "iteration" } else { "iterations" }
        ));
    } else if counted < s.expected {
        out.push(format!(
            "**Missing data:** the statistics cover {counted} of {} expected iterations.",
            s.expected
        ));
    }
    if let (Some(_), Some(first)) = (
        warning(a, WarningCode::FirstIterationSlow),
        &s.first_iteration,
    ) {
        out.push(format!(
            "**First-iteration effect:** iteration {} took {} ({} the median host inclusive time). It is counted in the statistics; {}.",
            first.index,
            duration_i(first.host_inclusive_ns),
            format::ratio(first.ratio_to_median),
            match warmup(a) {
                Some(0) | None => "the run had no warm-up pass: consider one".to_owned(),
                Some(n) => format!(
                    "{} before it did not absorb the start-up cost",
                    plural(n as usize, "warm-up pass", "warm-up passes")
                ),
            }
        ));
    }
    if let (Some(_), Some(h)) = (warning(a, WarningCode::HighVariance), &s.host_inclusive) {
        let slow = warning(a, WarningCode::SlowIterations)
            .and_then(|w| w.iterations.as_deref())
            .map(|i| format!(" Slow iterations: {}.", format::index_list(i, 20)))
            .unwrap_or_default();
        out.push(format!(
            "**Large variance:** the host inclusive time varies a lot between iterations (cv {}, over 0.10; from {} to {}): the mean and median hide that spread, see the per-iteration timings.{slow}",
            format::significant(h.cv, 3),
            duration_i(h.minimum_ns),
            duration_i(h.maximum_ns),
        ));
    } else if let Some(w) = warning(a, WarningCode::SlowIterations) {
        if let Some(i) = w.iterations.as_deref() {
            out.push(format!(
                "**Slow iterations:** {} took much longer than the median (over median + 5 × MAD); see the per-iteration timings.",
                format::index_list(i, 20)
            ));
        }
    }
    out
}

fn stat_cells(s: Option<&IterationStats>, missing: &str) -> Vec<String> {
    match s {
        None => vec![missing.to_owned(); 8],
        Some(s) => vec![
            s.count.to_string(),
            duration(s.mean_ns),
            duration(s.median_ns),
            duration_i(s.minimum_ns),
            duration_i(s.maximum_ns),
            duration(s.p90_ns),
            duration(s.stddev_ns),
            format::significant(s.cv, 3),
        ],
    }
}

fn stats(a: &Analysis, counted: u64, gpu_ok: bool) -> StatsView {
    const NAMES: [&str; 8] = [
        "count", "mean", "median", "min", "max", "p90", "stddev", "cv",
    ];
    let s = &a.iteration_summary;
    let host = stat_cells(s.host_inclusive.as_ref(), "none");
    let gpu = if gpu_ok {
        stat_cells(s.gpu_projected.as_ref(), "no GPU work")
    } else {
        vec!["unavailable".to_owned(); 8]
    };
    let rows = NAMES
        .iter()
        .zip(host.into_iter().zip(gpu))
        .map(|(name, (host, gpu))| StatRow { name, host, gpu })
        .collect();
    let gpu_note = if gpu_ok {
        let with = s.gpu_projected.as_ref().map_or(0, |g| g.count);
        format!(
            "GPU projected: from the start of the first to the end of the last GPU operation launched inside the iteration ({with} of {counted} counted iterations launched GPU work). It is a span on the GPU, not a sum of kernel times, and another clock than host time: the two columns are never added."
        )
    } else {
        let reason = warning(a, WarningCode::GpuProjectionUnavailable)
            .map(|w| esc(w.message.trim_end_matches('.'), 300))
            .unwrap_or_else(|| "nsys made no GPU projection".to_owned());
        format!(
            "GPU projection unavailable (not zero): {reason}. Without it, host time cannot be told apart from time spent waiting for the GPU."
        )
    };
    StatsView {
        gpu_available: gpu_ok,
        rows,
        host_note: "Host inclusive: CPU time from each iteration's NVTX push to its pop, nested ranges included. It is not GPU latency.".to_owned(),
        gpu_note,
    }
}

fn left_out_note(shown: usize, total: usize, what: &str, path: &str) -> Option<String> {
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

fn host_table(a: &Analysis, caps: &Caps, exclusive: bool, path: &str) -> Table<HostRow> {
    let mut ranges: Vec<&HostRange> = a.host_ranges.iter().collect();
    let key = |r: &HostRange| {
        if exclusive {
            r.exclusive.total_ns
        } else {
            r.inclusive.total_ns
        }
    };
    ranges.sort_by(|x, y| key(y).cmp(&key(x)).then_with(|| x.name.cmp(&y.name)));
    let iteration_total = a
        .iteration_summary
        .host_inclusive
        .as_ref()
        .map_or(0, |h| h.total_ns);
    let rows: Vec<HostRow> = ranges
        .iter()
        .take(caps.top)
        .map(|r| HostRow {
            name: esc(&r.name, caps.name_chars),
            instances: r.instances,
            exclusive_total: duration_i(r.exclusive.total_ns),
            exclusive_mean: duration(r.exclusive.mean_ns),
            exclusive_share: format::percent(r.exclusive.total_ns as f64, iteration_total as f64),
            inclusive_total: duration_i(r.inclusive.total_ns),
            inclusive_mean: duration(r.inclusive.mean_ns),
            inclusive_max: duration_i(r.inclusive.maximum_ns),
        })
        .collect();
    Table {
        note: left_out_note(rows.len(), ranges.len(), "ranges", path),
        total: ranges.len(),
        rows,
    }
}

fn gpu_table(a: &Analysis, caps: &Caps, path: &str) -> Table<GpuRow> {
    let mut ranges: Vec<&GpuProjectedRange> = a.gpu_projected_ranges.iter().collect();
    ranges.sort_by(|x, y| {
        y.projected
            .total_ns
            .cmp(&x.projected.total_ns)
            .then_with(|| x.name.cmp(&y.name))
    });
    let rows: Vec<GpuRow> = ranges
        .iter()
        .take(caps.top)
        .map(|r| GpuRow {
            name: esc(&r.name, caps.name_chars),
            instances: r.instances,
            projected_total: duration_i(r.projected.total_ns),
            projected_mean: duration(r.projected.mean_ns),
            projected_max: duration_i(r.projected.maximum_ns),
            gpu_operations: r.gpu_operation_count,
            host_inclusive_total: duration_i(r.host_total_ns),
        })
        .collect();
    Table {
        note: left_out_note(rows.len(), ranges.len(), "ranges", path),
        total: ranges.len(),
        rows,
    }
}

/// Advice after the measurements, in the contract's terms: time on the host only points at
/// preparation, orchestration, synchronization and I/O; a large GPU projection points at the
/// kernels launched in that range.
fn advice(a: &Analysis, gpu_ok: bool, caps: &Caps) -> Vec<String> {
    let counted = a
        .iteration_summary
        .host_inclusive
        .as_ref()
        .map_or(0, |h| h.count);
    if counted == 0 || a.host_ranges.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut by_exclusive: Vec<&HostRange> = a.host_ranges.iter().collect();
    by_exclusive.sort_by(|x, y| {
        y.exclusive
            .total_ns
            .cmp(&x.exclusive.total_ns)
            .then_with(|| x.name.cmp(&y.name))
    });
    if !gpu_ok {
        if let Some(top) = by_exclusive.first() {
            out.push(format!(
                "**{}** has the largest host exclusive time ({} per instance on average). Without a GPU projection it cannot be told whether that is host work (preparation, orchestration, synchronization, I/O) or waiting for the GPU: record with CUDA tracing on (`nsys profile --trace cuda,nvtx`) to find out.",
                esc(&top.name, caps.name_chars),
                duration(top.exclusive.mean_ns)
            ));
        }
        return out;
    }
    let mut named = BTreeSet::new();
    for r in by_exclusive.iter().take(3) {
        if r.exclusive.total_ns <= 0 {
            continue;
        }
        let gpu = a.gpu_projected_ranges.iter().find(|g| g.name == r.name);
        let host_only = match gpu {
            None => true,
            Some(g) => (g.projected.total_ns as f64) < 0.5 * r.inclusive.total_ns as f64,
        };
        if host_only && named.insert(r.name.as_str()) {
            out.push(format!(
                "**{}**: {} of host exclusive time per instance, {}. That time is spent on the host: look at preparation, orchestration, synchronization and I/O in this range.",
                esc(&r.name, caps.name_chars),
                duration(r.exclusive.mean_ns),
                match gpu {
                    None => "and it launched no GPU work".to_owned(),
                    Some(g) => format!(
                        "while the GPU work it launched spans only {} per instance",
                        duration(g.projected.mean_ns)
                    ),
                }
            ));
        }
    }
    let mut by_projected: Vec<&GpuProjectedRange> = a.gpu_projected_ranges.iter().collect();
    by_projected.sort_by(|x, y| {
        y.projected
            .total_ns
            .cmp(&x.projected.total_ns)
            .then_with(|| x.name.cmp(&y.name))
    });
    for g in by_projected.iter().take(2) {
        if g.projected.total_ns <= 0 || (g.projected.total_ns as f64) < 0.5 * g.host_total_ns as f64
        {
            continue;
        }
        if named.insert(g.name.as_str()) {
            out.push(format!(
                "**{}**: the GPU work it launched spans {} per instance (projected, {} GPU operations in all). Look at the kernels launched in this range.",
                esc(&g.name, caps.name_chars),
                duration(g.projected.mean_ns),
                g.gpu_operation_count
            ));
        }
    }
    out
}

fn iteration_table(a: &Analysis, caps: &Caps, gpu_ok: bool, path: &str) -> Table<IterationRow> {
    let slow: BTreeSet<u64> = warning(a, WarningCode::SlowIterations)
        .and_then(|w| w.iterations.clone())
        .unwrap_or_default()
        .into_iter()
        .collect();
    let unexpected: BTreeSet<u64> = warning(a, WarningCode::UnexpectedIterations)
        .and_then(|w| w.iterations.clone())
        .unwrap_or_default()
        .into_iter()
        .collect();
    let first_slow = warning(a, WarningCode::FirstIterationSlow)
        .and(a.iteration_summary.first_iteration.as_ref())
        .map(|f| (f.index, f.ratio_to_median));
    let measured_row = |it: &Iteration| {
        let mut notes = Vec::new();
        if !it.complete {
            notes.push(
                "incomplete: never ended (nsys closed it at the end of the capture); not counted"
                    .to_owned(),
            );
        }
        if it.duplicate {
            notes.push("duplicate index: not counted".to_owned());
        }
        if unexpected.contains(&it.index) {
            notes.push(format!(
                "unexpected index (the manifest expects 0-{})",
                a.iteration_summary.expected.saturating_sub(1)
            ));
        }
        let counted = it.complete && !it.duplicate;
        if counted && slow.contains(&it.index) {
            notes.push("slow (over median + 5 × MAD)".to_owned());
        }
        if let Some((index, ratio)) = first_slow {
            if counted && index == it.index {
                notes.push(format!("first: {} the median", format::ratio(ratio)));
            }
        }
        IterationRow {
            index: it.index.to_string(),
            host_inclusive: duration_i(it.host.inclusive_ns),
            host_exclusive: duration_i(it.host.exclusive_ns),
            gpu_projected: match (&it.gpu_projection, gpu_ok) {
                (_, false) => "unavailable".to_owned(),
                (Some(g), true) => duration_i(g.projected_ns),
                (None, true) => "no GPU work".to_owned(),
            },
            gpu_operations: match (&it.gpu_projection, gpu_ok) {
                (Some(g), true) => g.gpu_operation_count.to_string(),
                (None, true) => "0".to_owned(),
                (_, false) => "unavailable".to_owned(),
            },
            notes: notes.join("; "),
        }
    };
    // Expected indexes with no measured pass at all get a row of their own, in index order.
    let measured: BTreeSet<u64> = a.iterations.iter().map(|i| i.index).collect();
    let missing: Vec<u64> = warning(a, WarningCode::MissingIterations)
        .and_then(|w| w.iterations.clone())
        .unwrap_or_default()
        .into_iter()
        .filter(|i| !measured.contains(i))
        .collect();
    let missing_row = |index: u64| IterationRow {
        index: index.to_string(),
        host_inclusive: "missing".to_owned(),
        host_exclusive: String::new(),
        gpu_projected: String::new(),
        gpu_operations: String::new(),
        notes: "missing: no pass with this index was measured".to_owned(),
    };
    let mut missing = missing.into_iter().peekable();
    let mut rows: Vec<IterationRow> = Vec::new();
    for it in &a.iterations {
        while let Some(m) = missing.next_if(|m| *m < it.index) {
            rows.push(missing_row(m));
        }
        rows.push(measured_row(it));
    }
    rows.extend(missing.map(missing_row));
    let total = rows.len();
    rows.truncate(caps.iterations);
    let note = (rows.len() < total).then(|| {
        format!(
            "{} of {} rows left out to fit the size limit; every iteration is in {path}.",
            total - rows.len(),
            total
        )
    });
    Table { rows, total, note }
}

fn chart(a: &Analysis, caps: &Caps, gpu_ok: bool) -> Option<ChartView> {
    let counted: Vec<_> = a
        .iterations
        .iter()
        .filter(|i| i.complete && !i.duplicate)
        .collect();
    if counted.is_empty() || caps.chart_points == 0 {
        return None;
    }
    let shown = &counted[..counted.len().min(caps.chart_points)];
    let max = shown
        .iter()
        .map(|i| {
            let gpu = i.gpu_projection.as_ref().map_or(0, |g| g.projected_ns);
            i.host.inclusive_ns.max(gpu)
        })
        .max()
        .unwrap_or(0) as f64;
    let (scale, unit) = format::chart_unit(max);
    let list = |values: Vec<String>| format!("[{}]", values.join(", "));
    let host = list(
        shown
            .iter()
            .map(|i| format::chart_value(i.host.inclusive_ns as f64, scale))
            .collect(),
    );
    let all_gpu = shown.iter().all(|i| i.gpu_projection.is_some());
    let gpu = (gpu_ok && all_gpu).then(|| {
        list(
            shown
                .iter()
                .map(|i| {
                    let ns = i.gpu_projection.as_ref().map_or(0, |g| g.projected_ns);
                    format::chart_value(ns as f64, scale)
                })
                .collect(),
        )
    });
    let mut note = String::from("Bars: host inclusive time of each counted iteration");
    note.push_str(match (&gpu, gpu_ok) {
        (Some(_), _) => "; line: GPU projected time (another clock, shown beside it, never added).",
        (None, true) => "; no GPU-projected line: some counted iterations launched no GPU work.",
        (None, false) => "; no GPU-projected line: the projection is unavailable.",
    });
    if shown.len() < counted.len() {
        note.push_str(&format!(
            " The first {} of {} counted iterations are shown.",
            shown.len(),
            counted.len()
        ));
    }
    let top = format::significant(max / scale * 1.1, 2);
    Some(ChartView {
        title: format!("\"Per-iteration duration ({unit})\""),
        x_axis: format!(
            "\"iteration\" [{}]",
            shown
                .iter()
                .map(|i| format!("\"{}\"", i.index))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        y_axis: format!("\"{unit}\" 0 --> {top}"),
        host,
        gpu,
        note,
    })
}

fn failed(f: &Failure, caps: &Caps) -> FailedView {
    let error = escape::shorten(&f.error, caps.message_chars.max(1000));
    FailedView {
        run_dir: path_text(&f.run_dir, caps),
        what: f.kind.label(),
        summary: esc(f.error.lines().next().unwrap_or(""), caps.message_chars),
        error_block: escape::code_block(&error),
        nsys_version: match &f.nsys_version {
            Some(v) => esc(v, 100),
            None => "not known (nsys did not run or did not say)".to_owned(),
        },
        nsys_words: f.nsys_words.as_deref().map(escape::code_block),
        command: f
            .command
            .as_deref()
            .map(|c| escape::code(&escape::shorten(c, 1000))),
        checks: f.checks().to_vec(),
    }
}
