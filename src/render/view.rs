//! The view model: everything the template shows, computed, sorted, formatted and escaped
//! here. The template only lays it out.
//!
//! Every string field that holds text from outside (range names, manifest strings, paths,
//! messages) is already escaped with [`escape::inline`] or [`escape::code_block`]; every
//! duration is already formatted. A custom template receives exactly these fields.

use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap};
use std::path::Path;

use serde::Serialize;

use super::chart;
use super::comparison::{self, ComparisonView, RunComparisonView};
use super::escape::{self, inline_shortened as esc};
use super::format::{self, duration, duration_i, ColumnUnit};
use super::limit::{Budget, Caps};
use super::RenderOptions;
use crate::artifact::comparison::Comparison;
use crate::artifact::{
    Analysis, GateResult, GpuProjectedRange, GpuWork, HostRange, Iteration, IterationStats,
    MemoryCopies, OtherKernels, RangeKernel, ReportName, Verdict, Warning, WarningCode,
};
use crate::artifact::{GroupStats, RangeStats};
use crate::outcome::{Failure, RunOutcome};
use crate::stats::OUTLIER_MADS;

#[derive(Debug, Serialize)]
pub struct ReportView {
    /// An HTML comment for the first line: `<!-- nsys-gate:KEY -->`, KEY the profile names
    /// (the caller's [`super::RenderOptions::marker`]).
    pub marker: String,
    pub tool_version: &'static str,
    pub gate: OverallGate,
    /// One line under the title: the gate, then for one run its medians, iterations and
    /// warnings (for several, how many passed; the overview table has their numbers).
    pub headline: String,
    /// The host inclusive time of each counted iteration as a Unicode sparkline in a code span
    /// (one run only), axis clipped as the chart's; with what it shows.
    pub sparkline: Option<String>,
    /// One row per run directory (also for one).
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
    /// `1.91 ms (p90 1.96 ms)`.
    pub host_median: String,
    pub gpu_median: String,
    pub warnings: String,
    /// The sparkline of the run's host inclusive times, in a code span; empty when none.
    pub trend: String,
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
    /// The GPU work: none when the trace holds no CUDA data.
    pub gpu_work: Option<GpuWorkView>,
    pub iterations: Table<IterationRow>,
    /// The warm-up line of the per-iteration table, when the manifest records warm-up passes.
    pub warmup_row: Option<IterationRow>,
    pub chart: Option<ChartView>,
    /// The exact path of analysis.json (escaped).
    pub analysis_path: String,
    /// Where the reader finds analysis.json: a link to the workflow run in GitHub Actions,
    /// else the path relative to the working folder; one sentence.
    pub full_data: String,
    /// The tables and advice show groups of names that differ only in decimal numbers.
    pub grouped: bool,
    /// This run against its baseline run, when it has one.
    pub comparison: Option<RunComparisonView>,
}

#[derive(Debug, Serialize)]
pub struct WarningView {
    pub code: String,
    pub gating: bool,
    pub icon: &'static str,
    pub message: String,
    /// What the warning means for this run, in words (missing data, a first-iteration
    /// effect, large variance, slow iterations), said here instead of a call-out of its own.
    pub explanation: Option<String>,
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

/// `gpu_work` for people: top kernels, the kernel mix of the iterations and of the largest
/// GPU-projected ranges, copies by kind.
#[derive(Debug, Serialize)]
pub struct GpuWorkView {
    /// One line: the GPUs, kernel time and launches, copies, memsets.
    pub summary: String,
    /// The parts of gpu_work that are unavailable (the `gpu_work_unavailable` warnings say
    /// why), in one line.
    pub unavailable: Option<String>,
    pub kernels: Table<KernelRow>,
    /// The kernel mix of the counted iterations, in one line.
    pub iteration_mix: Option<String>,
    pub ranges: Table<RangeMixRow>,
    pub copies: Table<CopyRow>,
}

#[derive(Debug, Serialize)]
pub struct KernelRow {
    /// Escaped; shortened to the kernel's name and template arguments (return type and
    /// parameter list left out: analysis.json has the whole signature).
    pub name: String,
    pub instances: u64,
    pub total: String,
    pub mean: String,
    pub share: String,
}

#[derive(Debug, Serialize)]
pub struct RangeMixRow {
    pub name: String,
    pub projected_total: String,
    pub launches: u64,
    pub kernel_total: String,
    /// `kernel 61 %, kernel 22 %, 3 others 17 %`.
    pub mix: String,
}

#[derive(Debug, Serialize)]
pub struct CopyRow {
    pub kind: String,
    /// `Pageable → Device`.
    pub memory: String,
    pub count: u64,
    pub bytes: String,
    pub total: String,
    pub bandwidth: String,
    /// `⚠️ pageable host memory` for a host-side pageable copy.
    pub note: String,
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
                    let mut view = analysed(analysis, path, caps, options);
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
    let mut runs = runs;
    let units = median_units(outcomes.iter().filter_map(|o| match o {
        RunOutcome::Analysed { analysis, .. } => Some(&**analysis),
        RunOutcome::Failed(_) => None,
    }));
    let mut overview: Vec<OverviewRow> = outcomes
        .iter()
        .map(|o| overview_row(o, units, caps))
        .collect();
    distinguish_titles(outcomes, &mut runs, &mut overview, caps);
    ReportView {
        marker: options.marker.clone(),
        tool_version: crate::artifact::TOOL_VERSION,
        gate: overall_gate(outcomes, caps),
        headline: headline(outcomes),
        sparkline: match outcomes {
            [RunOutcome::Analysed { analysis, .. }] => {
                sparkline(analysis).map(|(line, low, top)| {
                    format!(
                        "Host inclusive time per iteration: {line} (scale {} to {}{})",
                        duration(low),
                        duration(top),
                        if chart_clips(analysis, top) {
                            " or more"
                        } else {
                            ""
                        }
                    )
                })
            }
            _ => None,
        },
        overview,
        runs,
        shortened: shortened_notice(caps, &Caps::full(options.top), options.budget),
        comparison: compared.map(|c| comparison::overall(c, caps)),
    }
}

/// Run directories of one profile and run id (the legs of a matrix across GPUs: the manifest's
/// `device` is `cuda:0` on every runner) get their GPU's name in their title, from
/// `gpu_work.devices`, else their `--label`, else their run directory's name.
fn distinguish_titles(
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

/// The host inclusive times of the counted iterations as a sparkline in a code span, and the
/// ends of its scale: the lowest time and the chart's clipped axis top.
fn sparkline(a: &Analysis) -> Option<(String, f64, f64)> {
    let values: Vec<f64> = counted_iterations(a)
        .iter()
        .map(|i| i.host.inclusive_ns as f64)
        .collect();
    if values.len() < 2 {
        return None;
    }
    let top = chart::axis_top(&values);
    // The scale spans at least a tenth of the top, so that a few microseconds of jitter do
    // not look like a trend.
    let low = values
        .iter()
        .copied()
        .fold(f64::INFINITY, f64::min)
        .min(top * 0.9);
    Some((
        format!("`{}`", chart::sparkline(&values, low, top)),
        low,
        top,
    ))
}

fn chart_clips(a: &Analysis, top: f64) -> bool {
    counted_iterations(a)
        .iter()
        .any(|i| i.host.inclusive_ns as f64 > top)
}

/// The units of the host and GPU-projected medians of these runs: one for each column of the
/// overview (and for one run, its headline).
fn median_units<'a>(analyses: impl Iterator<Item = &'a Analysis> + Clone) -> MedianUnits {
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
struct MedianUnits {
    host: ColumnUnit,
    gpu: ColumnUnit,
}

/// `host median 1.91 ms (p90 1.96 ms)`-style cells of a run.
fn medians(a: &Analysis, units: MedianUnits) -> (String, String) {
    let s = &a.iteration_summary;
    let host = s.host_inclusive.as_ref().map_or("none".to_owned(), |h| {
        format!(
            "{} (p90 {})",
            units.host.show(h.median_ns),
            units.host.show(h.p90_ns)
        )
    });
    let gpu = if gpu_available(a) {
        s.gpu_projected
            .as_ref()
            .map_or("no GPU work".to_owned(), |g| units.gpu.show(g.median_ns))
    } else {
        "unavailable".to_owned()
    };
    (host, gpu)
}

fn warning_count(a: &Analysis) -> String {
    let gating = a.warnings.iter().filter(|w| w.gating).count();
    match (a.warnings.len(), gating) {
        (0, _) => "no warnings".to_owned(),
        (n, 0) => format!("{}, none gating", plural(n, "warning", "warnings")),
        (n, g) => format!("{}, {g} gating", plural(n, "warning", "warnings")),
    }
}

/// The line under the title.
fn headline(outcomes: &[RunOutcome]) -> String {
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
            format!(
                "{gate} · host median **{host}** · GPU projected median **{gpu}** · **{}{nb}/{nb}{}** iterations complete · {}",
                s.complete,
                s.expected,
                warning_count(a)
            )
        }
        [RunOutcome::Failed(_)] => {
            format!("⛔{nb}**gate error**: the run directory could not be analysed")
        }
        _ => {
            let count = |f: &dyn Fn(&RunOutcome) -> bool| outcomes.iter().filter(|o| f(o)).count();
            let passed = count(
                &|o| matches!(o, RunOutcome::Analysed { analysis, .. } if analysis.gate.result == GateResult::Pass),
            );
            let failed = count(&|o| matches!(o, RunOutcome::Failed(_)));
            let gating = outcomes.len() - passed - failed;
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

fn overview_row(o: &RunOutcome, units: MedianUnits, caps: &Caps) -> OverviewRow {
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
            run: path_text(&f.run_dir, caps),
            gate: "⛔\u{a0}error".to_owned(),
            iterations: "not analysed".to_owned(),
            host_median: "none".to_owned(),
            gpu_median: "none".to_owned(),
            warnings: f.kind.label().to_owned(),
            trend: String::new(),
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

fn analysed(a: &Analysis, path: &Path, caps: &Caps, options: &RenderOptions) -> AnalysedView {
    let s = &a.iteration_summary;
    let (hosts, gpus) = shown_ranges(a, options.exact_names);
    let counted = s.host_inclusive.as_ref().map_or(0, |h| h.count);
    let gpu_ok = gpu_available(a);
    let path_text = path_text(path, caps);

    let mut explained = callouts(a, counted, caps);
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
            message: escape::message(&w.message, caps.message_chars),
            explanation: explained
                .iter()
                .position(|(code, _)| *code == Some(w.code))
                .map(|i| explained.remove(i).1),
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
        callouts: explained.into_iter().map(|(_, text)| text).collect(),
        facts: facts(a, counted, caps),
        stats: stats(a, counted, gpu_ok),
        host_exclusive: host_table(a, &hosts, caps, true, &path_text),
        host_inclusive: host_table(a, &hosts, caps, false, &path_text),
        gpu_ranges: gpu_table(&gpus, caps, &path_text),
        advice: advice(a, (&*hosts, &*gpus), gpu_ok, caps),
        gpu_work: a
            .gpu_work
            .as_ref()
            .map(|g| gpu_work_view(g, caps, &path_text)),
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
        full_data: full_data(path, &options.links, caps),
        grouped: !options.exact_names && hosts.len() < a.host_ranges.len(),
        analysis_path: path_text,
        comparison: None,
    }
}

/// `path` relative to `base` when inside it.
fn relative<'p>(path: &'p Path, base: Option<&Path>) -> &'p Path {
    base.and_then(|b| path.strip_prefix(b).ok())
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(path)
}

/// Where the reader finds analysis.json: a path on the runner is no use in a comment.
fn full_data(path: &Path, links: &super::Links, caps: &Caps) -> String {
    let shown = escape::code_span(&crate::text::shorten(
        &relative(path, links.base_dir.as_deref()).to_string_lossy(),
        caps.name_chars.max(300),
    ));
    match &links.run_url {
        Some(url) => format!(
            "Full data: {shown} of this run, in the artifacts of [the workflow run]({url}) when the workflow uploads it (the examples upload it as `nsys-gate-analysis`)."
        ),
        None => format!("Full data: {shown}."),
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
        iteration_pattern: escape::code_span(&crate::text::shorten(
            &a.run.iteration_pattern,
            caps.name_chars,
        )),
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

/// What the timing and completeness warnings mean for this run, in words; each with the
/// warning it explains (`None`: no warning says it, such as no iteration found).
fn callouts(a: &Analysis, counted: u64, caps: &Caps) -> Vec<(Option<WarningCode>, String)> {
    let s = &a.iteration_summary;
    let mut out = Vec::new();
    if s.found == 0 {
        out.push((None, format!(
            "**Missing data:** no iteration was measured, so there are no statistics. Check that the program pushes ranges matching {}{}.",
            esc(&a.run.iteration_pattern, caps.name_chars),
            match &a.run.capture_range {
                Some(c) => format!(" inside the capture range {}", esc(c, caps.name_chars)),
                None => String::new(),
            }
        )));
    } else if let Some(w) = warning(a, WarningCode::MissingIterations) {
        let missing = w.iterations.as_deref().unwrap_or(&[]);
        out.push((Some(WarningCode::MissingIterations), format!(
            "**Missing data:** {} of {} expected iterations {} no complete measurement ({}); the statistics cover {} {}.",
            missing.len(),
            s.expected,
            if missing.len() == 1 { "has" } else { "have" },
            format::index_list(missing, 20),
            counted,
            if counted == 1 { "iteration" } else { "iterations" }
        )));
    } else if counted < s.expected {
        out.push((
            None,
            format!(
                "**Missing data:** the statistics cover {counted} of {} expected iterations.",
                s.expected
            ),
        ));
    }
    if let (Some(_), Some(first)) = (
        warning(a, WarningCode::FirstIterationSlow),
        &s.first_iteration,
    ) {
        out.push((Some(WarningCode::FirstIterationSlow), format!(
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
        )));
    }
    if let (Some(w), Some(h)) = (warning(a, WarningCode::HighVariance), &s.host_inclusive) {
        let slow = warning(a, WarningCode::SlowIterations)
            .and_then(|w| w.iterations.as_deref())
            .map(|_| " The slow ones are named below.")
            .unwrap_or_default();
        out.push((Some(WarningCode::HighVariance), format!(
            "**Large variance:** the host inclusive time varies a lot between iterations (cv {}{}; from {} to {}): the mean and median hide that spread, see the per-iteration timings.{slow}",
            format::significant(h.cv, 3),
            w.threshold.map(|t| format!(", over {t:.2}")).unwrap_or_default(),
            duration_i(h.minimum_ns),
            duration_i(h.maximum_ns),
        )));
    } else if let Some(w) = warning(a, WarningCode::SlowIterations) {
        if let Some(i) = w.iterations.as_deref() {
            out.push((Some(WarningCode::SlowIterations), format!(
                "**Slow iterations:** {} took much longer than the median (over median + {OUTLIER_MADS} × MAD); see the per-iteration timings.",
                iterations_named(i)
            )));
        }
    }
    out
}

/// `iteration 0` or `iterations 3, 5-9`.
fn iterations_named(indexes: &[u64]) -> String {
    format!(
        "{}\u{a0}{}",
        if indexes.len() == 1 {
            "iteration"
        } else {
            "iterations"
        },
        format::index_list(indexes, 20)
    )
}

fn stat_cells(s: Option<&IterationStats>, missing: &str) -> Vec<String> {
    match s {
        None => vec![missing.to_owned(); 8],
        Some(s) => {
            // The durations in one unit (the count and cv are not durations).
            let durations = format::column(&[
                s.mean_ns,
                s.median_ns,
                s.minimum_ns as f64,
                s.maximum_ns as f64,
                s.p90_ns,
                s.stddev_ns,
            ]);
            let mut cells = vec![s.count.to_string()];
            cells.extend(durations);
            cells.push(format::significant(s.cv, 3));
            cells
        }
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

/// The ranges the tables and advice show: groups of names that differ only in decimal
/// numbers (a group of one shows its exact name), or the exact names with `--exact-names` or
/// when the analysis has no groups (written before they existed).
fn shown_ranges(a: &Analysis, exact: bool) -> (Cow<'_, [HostRange]>, Cow<'_, [GpuProjectedRange]>) {
    if exact || (a.host_range_groups.is_empty() && !a.host_ranges.is_empty()) {
        // Borrowed: a report is rendered again to shrink it, and an analysis may hold
        // hundreds of thousands of names.
        return (
            Cow::Borrowed(&a.host_ranges),
            Cow::Borrowed(&a.gpu_projected_ranges),
        );
    }
    let stats = |g: &GroupStats| RangeStats {
        total_ns: g.total_ns,
        mean_ns: g.mean_ns,
        median_ns: f64::NAN,
        minimum_ns: g.minimum_ns,
        maximum_ns: g.maximum_ns,
        stddev_ns: f64::NAN,
    };
    let host_names = names_by_group(a.host_ranges.iter().map(|r| &r.name));
    let gpu_names = names_by_group(a.gpu_projected_ranges.iter().map(|r| &r.name));
    let hosts = a
        .host_range_groups
        .iter()
        .map(|g| HostRange {
            name: group_display(&g.group, g.names, &host_names),
            // The group's key, so that a group's host and GPU rows are matched as exact
            // ranges are by their path (their shown names may differ in how many names).
            path: vec![g.group.clone()],
            instances: g.instances,
            inclusive: stats(&g.inclusive),
            exclusive: stats(&g.exclusive),
            child_total_ns: g.inclusive.total_ns - g.exclusive.total_ns,
        })
        .collect();
    let gpus = a
        .gpu_projected_range_groups
        .iter()
        .map(|g| GpuProjectedRange {
            name: group_display(&g.group, g.names, &gpu_names),
            path: vec![g.group.clone()],
            style: "PushPop".to_owned(),
            instances: g.instances,
            projected: stats(&g.projected),
            host_total_ns: g.host_total_ns,
            gpu_operation_count: g.gpu_operation_count,
        })
        .collect();
    (Cow::Owned(hosts), Cow::Owned(gpus))
}

/// Each group's exact name, for the groups of one name.
fn names_by_group<'a>(names: impl Iterator<Item = &'a String>) -> HashMap<String, &'a str> {
    let mut map = HashMap::new();
    for name in names {
        map.entry(crate::artifact::group_name(name))
            .or_insert(name.as_str());
    }
    map
}

/// How a group is named in a table: its one exact name, or the group with how many names.
fn group_display(group: &str, names: u64, exact: &HashMap<String, &str>) -> String {
    match exact.get(group) {
        Some(name) if names == 1 => (*name).to_owned(),
        _ => format!("{group} ({names} names)"),
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

fn host_table(
    a: &Analysis,
    shown: &[HostRange],
    caps: &Caps,
    exclusive: bool,
    path: &str,
) -> Table<HostRow> {
    let mut ranges: Vec<&HostRange> = shown.iter().collect();
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
    let top: Vec<&HostRange> = ranges.iter().take(caps.top).copied().collect();
    // One unit per column.
    let column = |value: fn(&HostRange) -> f64| {
        format::column(&top.iter().map(|r| value(r)).collect::<Vec<_>>())
    };
    let mut exclusive_total = column(|r| r.exclusive.total_ns as f64).into_iter();
    let mut exclusive_mean = column(|r| r.exclusive.mean_ns).into_iter();
    let mut inclusive_total = column(|r| r.inclusive.total_ns as f64).into_iter();
    let mut inclusive_mean = column(|r| r.inclusive.mean_ns).into_iter();
    let mut inclusive_max = column(|r| r.inclusive.maximum_ns as f64).into_iter();
    let next = |c: &mut std::vec::IntoIter<String>| c.next().unwrap_or_default();
    let rows: Vec<HostRow> = top
        .iter()
        .map(|r| HostRow {
            name: esc(&r.name, caps.name_chars),
            instances: r.instances,
            exclusive_total: next(&mut exclusive_total),
            exclusive_mean: next(&mut exclusive_mean),
            exclusive_share: format::percent(r.exclusive.total_ns as f64, iteration_total as f64),
            inclusive_total: next(&mut inclusive_total),
            inclusive_mean: next(&mut inclusive_mean),
            inclusive_max: next(&mut inclusive_max),
        })
        .collect();
    Table {
        note: left_out_note(rows.len(), ranges.len(), "ranges", path),
        total: ranges.len(),
        rows,
    }
}

fn gpu_table(shown: &[GpuProjectedRange], caps: &Caps, path: &str) -> Table<GpuRow> {
    let mut ranges: Vec<&GpuProjectedRange> = shown.iter().collect();
    ranges.sort_by(|x, y| {
        y.projected
            .total_ns
            .cmp(&x.projected.total_ns)
            .then_with(|| x.name.cmp(&y.name))
    });
    let top: Vec<&GpuProjectedRange> = ranges.iter().take(caps.top).copied().collect();
    // One unit per column.
    let column = |value: fn(&GpuProjectedRange) -> f64| {
        format::column(&top.iter().map(|r| value(r)).collect::<Vec<_>>())
    };
    let mut projected_total = column(|r| r.projected.total_ns as f64).into_iter();
    let mut projected_mean = column(|r| r.projected.mean_ns).into_iter();
    let mut projected_max = column(|r| r.projected.maximum_ns as f64).into_iter();
    let mut host_total = column(|r| r.host_total_ns as f64).into_iter();
    let next = |c: &mut std::vec::IntoIter<String>| c.next().unwrap_or_default();
    let rows: Vec<GpuRow> = top
        .iter()
        .map(|r| GpuRow {
            name: esc(&r.name, caps.name_chars),
            instances: r.instances,
            projected_total: next(&mut projected_total),
            projected_mean: next(&mut projected_mean),
            projected_max: next(&mut projected_max),
            gpu_operations: r.gpu_operation_count,
            host_inclusive_total: next(&mut host_total),
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
fn advice(
    a: &Analysis,
    (hosts, gpus): (&[HostRange], &[GpuProjectedRange]),
    gpu_ok: bool,
    caps: &Caps,
) -> Vec<String> {
    let counted = a
        .iteration_summary
        .host_inclusive
        .as_ref()
        .map_or(0, |h| h.count);
    if counted == 0 || hosts.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut by_exclusive: Vec<&HostRange> = hosts.iter().collect();
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
        let gpu = gpus.iter().find(|g| g.path == r.path);
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
    let mut by_projected: Vec<&GpuProjectedRange> = gpus.iter().collect();
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
            let kernels = a
                .gpu_work
                .as_ref()
                .and_then(|w| w.per_range_kernels.as_ref())
                .and_then(|r| r.iter().find(|r| r.name == g.name))
                .filter(|r| !r.kernels.is_empty())
                .map(|r| {
                    let top = &r.kernels[..r.kernels.len().min(3)];
                    format!(": {} of its kernel time", kernel_mix_text(top, None, caps))
                })
                .unwrap_or_default();
            out.push(format!(
                "**{}**: the GPU work it launched spans {} per instance (projected, {} GPU operations in all). Look at the kernels launched in this range{kernels}.",
                esc(&g.name, caps.name_chars),
                duration(g.projected.mean_ns),
                g.gpu_operation_count
            ));
        }
    }
    out
}

/// Rows of the GPU-work tables: the range tables' cap, at most five.
const GPU_WORK_ROWS: usize = 5;

fn gpu_work_view(g: &GpuWork, caps: &Caps, path: &str) -> GpuWorkView {
    let rows = caps.top.min(GPU_WORK_ROWS);
    let unavailable = (!g.unavailable.is_empty()).then(|| {
        let parts: Vec<String> = g.unavailable.keys().map(|p| escape::code(p)).collect();
        format!(
            "Unavailable (a GPU-work report failed; the `gpu_work_unavailable` warning says why): {}.",
            parts.join(", ")
        )
    });
    let all = g.kernels.as_deref().unwrap_or(&[]);
    let shown = &all[..all.len().min(rows)];
    let total_unit = ColumnUnit::of(shown.iter().map(|k| k.total_ns as f64));
    let mean_unit = ColumnUnit::of(shown.iter().map(|k| k.mean_ns));
    let kernels: Vec<KernelRow> = shown
        .iter()
        .map(|k| KernelRow {
            name: esc(kernel_display(&k.name), caps.name_chars),
            instances: k.instances,
            total: total_unit.show(k.total_ns as f64),
            mean: mean_unit.show(k.mean_ns),
            share: format::percent(k.share, 1.0),
        })
        .collect();
    let iteration_mix = g
        .iteration_kernels
        .as_ref()
        .filter(|i| i.launches > 0)
        .map(|i| {
            format!(
                "{} in {} over {}: {}",
                duration_i(i.total_ns),
                plural(i.launches as usize, "kernel launch", "kernel launches"),
                plural(
                    i.iterations as usize,
                    "counted iteration",
                    "counted iterations"
                ),
                kernel_mix_text(&i.kernels, i.other_kernels.as_ref(), caps)
            )
        });
    let ranges_all = g.per_range_kernels.as_deref().unwrap_or(&[]);
    let shown = &ranges_all[..ranges_all.len().min(rows)];
    let projected_unit = ColumnUnit::of(
        shown
            .iter()
            .filter_map(|r| r.projected_total_ns.map(|ns| ns as f64)),
    );
    let kernel_unit = ColumnUnit::of(shown.iter().map(|r| r.total_ns as f64));
    let ranges: Vec<RangeMixRow> = shown
        .iter()
        .map(|r| RangeMixRow {
            name: esc(&r.name, caps.name_chars),
            projected_total: r
                .projected_total_ns
                .map_or("no projection".to_owned(), |ns| {
                    projected_unit.show(ns as f64)
                }),
            launches: r.launches,
            kernel_total: kernel_unit.show(r.total_ns as f64),
            mix: kernel_mix_text(&r.kernels, r.other_kernels.as_ref(), caps),
        })
        .collect();
    let copies_all = g.memory_copies.as_deref().unwrap_or(&[]);
    let shown = &copies_all[..copies_all.len().min(rows)];
    let copy_unit = ColumnUnit::of(shown.iter().map(|c| c.total_ns as f64));
    let copies: Vec<CopyRow> = shown.iter().map(|c| copy_row(c, copy_unit, caps)).collect();
    GpuWorkView {
        summary: gpu_work_summary(g, caps),
        unavailable,
        kernels: Table {
            note: left_out_note(kernels.len(), all.len(), "kernels", path),
            total: all.len(),
            rows: kernels,
        },
        iteration_mix,
        ranges: Table {
            note: left_out_note(ranges.len(), ranges_all.len(), "ranges", path),
            total: ranges_all.len(),
            rows: ranges,
        },
        copies: Table {
            note: left_out_note(copies.len(), copies_all.len(), "copy kinds", path),
            total: copies_all.len(),
            rows: copies,
        },
    }
}

/// One line: the GPUs, kernel time and launches, copies, memsets.
fn gpu_work_summary(g: &GpuWork, caps: &Caps) -> String {
    let mut summary = Vec::new();
    if let Some(devices) = &g.devices {
        let names: Vec<String> = devices
            .iter()
            .map(|d| esc(&d.device, caps.name_chars))
            .collect();
        summary.push(match names.len() {
            0 => "no GPU operation".to_owned(),
            1 => format!("GPU: {}", names[0]),
            _ => format!("GPUs: {}", names.join(", ")),
        });
    }
    if let Some(kernels) = &g.kernels {
        let total: i64 = kernels.iter().map(|k| k.total_ns).sum();
        let launches: u64 = kernels.iter().map(|k| k.instances).sum();
        summary.push(format!(
            "kernels: {} in {} of {} (sum of kernel durations over the whole capture)",
            duration_i(total),
            plural(launches as usize, "launch", "launches"),
            plural(kernels.len(), "kernel", "kernels"),
        ));
    }
    if let Some(copies) = &g.memory_copies {
        let count: u64 = copies.iter().map(|c| c.count).sum();
        let bytes: u64 = copies.iter().map(|c| c.bytes).sum();
        let total: i64 = copies.iter().map(|c| c.total_ns).sum();
        summary.push(format!(
            "memory copies: {count} ({}, {})",
            format::bytes(bytes),
            duration_i(total)
        ));
    }
    if let Some(m) = &g.memsets {
        summary.push(format!(
            "memsets: {} ({}, {})",
            m.count,
            format::bytes(m.bytes),
            duration_i(m.total_ns)
        ));
    }
    format!("{}.", summary.join("; "))
}

/// `kernel 61.0 %, kernel 22.0 %, 3 others 17.0 %`.
fn kernel_mix_text(kernels: &[RangeKernel], other: Option<&OtherKernels>, caps: &Caps) -> String {
    let mut parts: Vec<String> = kernels
        .iter()
        .map(|k| {
            format!(
                "{} {}",
                esc(kernel_display(&k.name), caps.name_chars),
                format::percent(k.share, 1.0)
            )
        })
        .collect();
    if let Some(o) = other {
        parts.push(format!(
            "{} {}",
            plural(o.kernels as usize, "other", "others"),
            format::percent(o.share, 1.0)
        ));
    }
    parts.join(", ")
}

fn copy_row(c: &MemoryCopies, unit: ColumnUnit, caps: &Caps) -> CopyRow {
    CopyRow {
        kind: esc(&c.copy_kind, caps.name_chars),
        memory: format!(
            "{} → {}",
            esc(c.source.as_deref().unwrap_or("unknown"), caps.name_chars),
            esc(
                c.destination.as_deref().unwrap_or("unknown"),
                caps.name_chars
            )
        ),
        count: c.count,
        bytes: format::bytes(c.bytes),
        total: unit.show(c.total_ns as f64),
        bandwidth: c.bandwidth_bytes_per_s.map_or("n/a".to_owned(), |b| {
            format!("{}{}GB/s", format::significant(b / 1e9, 3), format::NBSP)
        }),
        note: if c.pageable_host {
            "⚠️ pageable host memory".to_owned()
        } else {
            String::new()
        },
    }
}

/// A kernel's name for the report: its demangled signature without the return type `void `
/// and the parameter list (`void gemm<float, 64>(float const*, int)` -> `gemm<float, 64>`).
/// Anything that does not end in a balanced parameter list is shown whole.
fn kernel_display(name: &str) -> &str {
    let name = name.strip_prefix("void ").unwrap_or(name);
    if !name.ends_with(')') {
        return name;
    }
    let mut depth = 0usize;
    for (i, c) in name.char_indices().rev() {
        match c {
            ')' => depth += 1,
            '(' => {
                depth -= 1;
                if depth == 0 {
                    let head = name[..i].trim_end();
                    return if head.is_empty() { name } else { head };
                }
            }
            _ => {}
        }
    }
    name
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
    // One unit per column, over every measured pass.
    let inclusive_unit = ColumnUnit::of(a.iterations.iter().map(|i| i.host.inclusive_ns as f64));
    let exclusive_unit = ColumnUnit::of(a.iterations.iter().map(|i| i.host.exclusive_ns as f64));
    let gpu_unit = ColumnUnit::of(
        a.iterations
            .iter()
            .filter_map(|i| i.gpu_projection.as_ref().map(|g| g.projected_ns as f64)),
    );
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
            notes.push(format!("slow (over median + {OUTLIER_MADS} × MAD)"));
        }
        if let Some((index, ratio)) = first_slow {
            if counted && index == it.index {
                notes.push(format!("first: {} the median", format::ratio(ratio)));
            }
        }
        IterationRow {
            index: it.index.to_string(),
            host_inclusive: inclusive_unit.show(it.host.inclusive_ns as f64),
            host_exclusive: exclusive_unit.show(it.host.exclusive_ns as f64),
            gpu_projected: match (&it.gpu_projection, gpu_ok) {
                (_, false) => "unavailable".to_owned(),
                (Some(g), true) => gpu_unit.show(g.projected_ns as f64),
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

/// The counted iterations: complete and not duplicates, in index order.
fn counted_iterations(a: &Analysis) -> Vec<&Iteration> {
    a.iterations
        .iter()
        .filter(|i| i.complete && !i.duplicate)
        .collect()
}

/// Iterations above which the chart's x-axis is numeric.
const NUMERIC_AXIS_FROM: usize = 20;

fn chart(a: &Analysis, caps: &Caps, gpu_ok: bool) -> Option<ChartView> {
    let counted = counted_iterations(a);
    if counted.is_empty() || caps.chart_points == 0 {
        return None;
    }
    let shown = &counted[..counted.len().min(caps.chart_points)];
    let host_ns: Vec<f64> = shown.iter().map(|i| i.host.inclusive_ns as f64).collect();
    let all_gpu = shown.iter().all(|i| i.gpu_projection.is_some());
    let gpu_ns: Option<Vec<f64>> = (gpu_ok && all_gpu).then(|| {
        shown
            .iter()
            .map(|i| i.gpu_projection.as_ref().map_or(0, |g| g.projected_ns) as f64)
            .collect()
    });
    // The axis stops above the slowest iteration that is not an outlier; the outliers are
    // drawn at the top and named with their real values.
    let top = chart::axis_top(&host_ns).max(gpu_ns.as_deref().map_or(0.0, chart::axis_top));
    let (scale, unit) = format::chart_unit(top);
    let list = |values: &[f64]| {
        let cells: Vec<String> = values
            .iter()
            .map(|v| format::chart_value(v.min(top), scale))
            .collect();
        format!("[{}]", cells.join(", "))
    };
    let clipped: Vec<String> = shown
        .iter()
        .enumerate()
        .filter_map(|(n, i)| {
            let gpu = gpu_ns.as_ref().map_or(0.0, |g| g[n]);
            (host_ns[n] > top || gpu > top).then(|| {
                format!(
                    "iteration\u{a0}{} ({})",
                    i.index,
                    duration(host_ns[n].max(gpu))
                )
            })
        })
        .collect();
    let mut note = String::from("Bars: host inclusive time of each counted iteration");
    note.push_str(match (&gpu_ns, gpu_ok) {
        (Some(_), _) => "; line: GPU projected time (another clock, shown beside it, never added).",
        (None, true) => "; no GPU-projected line: some counted iterations launched no GPU work.",
        (None, false) => "; no GPU-projected line: the projection is unavailable.",
    });
    if !clipped.is_empty() {
        note.push_str(&format!(
            " The axis stops at {} so that the steady iterations can be read; above it, drawn at the top: {}.",
            duration(top),
            format::index_list_words(&clipped, 10)
        ));
    }
    if shown.len() < counted.len() {
        note.push_str(&format!(
            " The first {} of {} counted iterations are shown.",
            shown.len(),
            counted.len()
        ));
    }
    // A numeric axis for many iterations whose indexes run without a gap (64 labels do not fit
    // side by side); for a few, or with gaps, a label per bar (a numeric axis over five
    // iterations would mark half iterations).
    let (first, last) = (shown[0].index, shown[shown.len() - 1].index);
    let contiguous = last - first + 1 == shown.len() as u64;
    let x_axis = if contiguous && shown.len() > NUMERIC_AXIS_FROM {
        format!("\"iteration\" {first} --> {last}")
    } else {
        let labels: Vec<String> = shown.iter().map(|i| format!("\"{}\"", i.index)).collect();
        format!("\"iteration\" [{}]", labels.join(", "))
    };
    let y_top = format::significant(top / scale * 1.1, 2);
    Some(ChartView {
        title: format!(
            "\"{} per iteration ({unit})\"",
            if gpu_ns.is_some() {
                "Host inclusive (bars) and GPU projected (line)"
            } else {
                "Host inclusive time"
            }
        ),
        x_axis,
        y_axis: format!("\"{unit}\" 0 --> {y_top}"),
        host: list(&host_ns),
        gpu: gpu_ns.as_deref().map(list),
        note,
    })
}

fn failed(f: &Failure, caps: &Caps) -> FailedView {
    let error = crate::text::shorten(&f.error, caps.message_chars.max(1000));
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
            .map(|c| escape::code(&crate::text::shorten(c, 1000))),
        checks: f.checks().to_vec(),
    }
}
