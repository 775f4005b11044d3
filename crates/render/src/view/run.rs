//! One analysed run directory's section: its gate line, warnings with what they mean
//! (call-outs), the run facts and the iteration statistics.

use std::path::Path;

use serde::Serialize;

use super::advice::{advice, advice_note};
use super::callouts::{callouts, one_slow_iteration};
use super::gpu_work::{gpu_work_view, GpuWorkView};
use super::iterations::{chart, iteration_table, ChartView, IterationRow};
use super::ranges::{
    gpu_table, host_table, per_iteration_over, shown_ranges, steady_note, GpuRow, HostRow,
};
use super::{code_list, not_recorded, path_text, run_title, Table};
use crate::comparison::RunComparisonView;
use crate::escape::{self, inline_shortened as esc};
use crate::format::{self, duration, duration_i, plural};
use crate::limit::Caps;
use crate::RenderOptions;
use nsys_gate_core::artifact::{
    Analysis, Environment, GateResult, IterationStats, Warning, WarningCode,
};
use nsys_gate_core::units::thousands;

#[derive(Debug, Serialize)]
pub struct AnalysedView {
    /// `profile · run ID`.
    pub title: String,
    /// The GPUs (and how many), driver, CUDA version and clocks the trace recorded, on one
    /// line; `None` when it records neither a GPU nor a driver.
    pub environment: Option<String>,
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
    /// What the range tables and the advice leave out (the slow iterations: the steady
    /// state), in words; `None` when no counted iteration is slow.
    pub steady_note: Option<String>,
    /// What the host table's `per iteration` column is over (its iterations).
    pub per_iteration_over: String,
    /// Largest GPU-projected totals; no rows when the projection is unavailable.
    pub gpu_ranges: Table<GpuRow>,
    pub advice: Vec<String>,
    /// Which iterations the advice leaves out (the slow ones), when it leaves some out.
    pub advice_note: Option<String>,
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
    /// The tables show groups of names that differ only in decimal numbers.
    pub grouped: bool,
    /// This run against its baseline run, when it has one.
    pub comparison: Option<RunComparisonView>,
    /// The ranks of a distributed run (the step line, the rank table); `None` for one process.
    pub ranks: Option<super::ranks::RanksView>,
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
    /// The GPU's busy time per counted iteration (the kernels' durations), and what it means
    /// beside the projection; `None` without kernel data.
    pub gpu_busy_note: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct StatRow {
    pub name: &'static str,
    pub host: String,
    pub gpu: String,
}

pub(super) fn analysed(
    a: &Analysis,
    path: &Path,
    caps: &Caps,
    options: &RenderOptions,
) -> AnalysedView {
    let (hosts, gpus) = shown_ranges(a, options.exact_names);
    let counted = a.counted();
    let gpu_ok = a.gpu_projection_available();
    let path_text = path_text(path, options.links.base_dir.as_deref(), caps);

    let mut explained = callouts(a, counted, caps);
    // One slow iteration raises up to three warnings: said once.
    let merged = one_slow_iteration(a);
    // Warnings: gating first.
    let mut ordered: Vec<&Warning> = a.warnings.iter().filter(|w| w.gating).collect();
    ordered.extend(a.warnings.iter().filter(|w| !w.gating));
    let mut warnings: Vec<WarningView> = Vec::new();
    // Warnings said in the list: one of its bullets, or the bullet of the slow iterations
    // that explains it with the others.
    let mut said = 0;
    for w in ordered.iter().take(caps.warnings) {
        let together = merged.as_ref().filter(|m| m.codes.contains(&w.code));
        said += 1;
        match together {
            Some(m) if m.codes[0] == w.code => {
                explained.retain(|(code, _)| !code.is_some_and(|c| m.codes.contains(&c)));
                warnings.push(WarningView {
                    code: code_list(&m.codes),
                    gating: false,
                    icon: "⚠️",
                    message: m.text.clone(),
                    explanation: Some(m.text.clone()),
                });
            }
            Some(_) => {}
            None => warnings.push(WarningView {
                code: escape::code(w.code.as_str()),
                gating: w.gating,
                icon: if w.gating { "❌" } else { "⚠️" },
                message: escape::message(&w.message, caps.message_chars),
                // a rank's warning is said as its message, which names the rank
                explanation: if w.rank.is_some() {
                    None
                } else {
                    explained
                        .iter()
                        .position(|(code, _)| *code == Some(w.code))
                        .map(|i| explained.remove(i).1)
                },
            }),
        }
    }
    // A warning merged into a bullet that was cut is not said either.
    if let Some(m) = &merged {
        let cut = !ordered
            .iter()
            .take(caps.warnings)
            .any(|w| w.code == m.codes[0]);
        if cut {
            said -= ordered
                .iter()
                .take(caps.warnings)
                .filter(|w| m.codes.contains(&w.code))
                .count();
        }
    }
    let warnings_note = (ordered.len() > said).then(|| {
        let left_out = ordered.len() - said;
        format!(
            "{} left out to fit the size limit; all {} are in {path_text}.",
            plural(left_out, "more warning", "more warnings"),
            ordered.len()
        )
    });

    let gate_line = if a.gate.result == GateResult::Pass {
        "✅ passed: no gating warning".to_owned()
    } else {
        format!("❌ failed: {}", code_list(&a.gate.failing_codes))
    };

    AnalysedView {
        title: run_title(a, caps),
        environment: environment_line(a.environment.as_ref(), caps),
        gate: a.gate.result,
        gate_line,
        warnings,
        warnings_note,
        callouts: explained.into_iter().map(|(_, text)| text).collect(),
        facts: facts(a, counted, caps, options.links.commit_prefix.as_deref()),
        stats: stats(a, counted, gpu_ok),
        host_exclusive: host_table(a, &hosts, caps, true, &path_text, options.exact_names),
        host_inclusive: host_table(a, &hosts, caps, false, &path_text, options.exact_names),
        steady_note: steady_note(a, options.exact_names),
        per_iteration_over: per_iteration_over(a, options.exact_names),
        gpu_ranges: gpu_table(&gpus, caps, &path_text),
        advice: advice(a, caps),
        advice_note: advice_note(a),
        gpu_work: gpu_work_view(a, caps, path, options),
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
        ranks: super::ranks::ranks(a, caps.name_chars),
    }
}

/// The run header's environment line: `**GPU:** NVIDIA H100 80GB HBM3 x 8 · driver
/// 570.172.08 · CUDA 12.8 · SM clock 1,980 MHz (max 1,980)`, `clocks not recorded` without GPU
/// metrics. `None` when the trace records neither a GPU nor a driver (a trace recorded without
/// CUDA).
pub(super) fn environment_line(e: Option<&Environment>, caps: &Caps) -> Option<String> {
    let e = e?;
    let gpus = e.gpu_summary();
    if gpus.is_none() && e.driver_version.is_none() {
        return None;
    }
    let recorded = |what: &str, v: Option<&String>| match v {
        Some(v) => format!("{what} {}", esc(v, caps.name_chars)),
        None => format!("{what} not recorded"),
    };
    Some(format!(
        "**GPU:** {} · {} · {} · {}",
        gpus.map_or("not recorded".to_owned(), |g| esc(&g, caps.name_chars)),
        recorded("driver", e.driver_version.as_ref()),
        recorded("CUDA", e.cuda_driver_version.as_ref()),
        clocks(e),
    ))
}

/// `SM clock 1,980 MHz (max 1,980)`: the median SM clock over the counted iterations (the
/// lowest and highest GPU's, `1,950-1,980 MHz`, when they differ), and the highest maximum the
/// trace lists; `clocks not recorded` when no GPU has GPU metrics.
fn clocks(e: &Environment) -> String {
    let medians: Vec<u32> = e
        .gpus
        .iter()
        .filter_map(|g| g.clock_mhz.map(|c| c.median))
        .collect();
    let (Some(low), Some(high)) = (medians.iter().min(), medians.iter().max()) else {
        return "clocks not recorded".to_owned();
    };
    let mhz = |v: u32| thousands(v as usize);
    let ran = if low == high {
        mhz(*low)
    } else {
        format!("{}-{}", mhz(*low), mhz(*high))
    };
    match e.gpus.iter().filter_map(|g| g.max_clock_mhz).max() {
        Some(max) => format!("SM clock {ran} MHz (max {})", thousands(max as usize)),
        None => format!("SM clock {ran} MHz"),
    }
}

/// Where the reader finds analysis.json: a path on the runner is no use in a comment.
pub(super) fn full_data(path: &Path, links: &crate::Links, caps: &Caps) -> String {
    let shown = path_text(path, links.base_dir.as_deref(), caps);
    match &links.run_url {
        Some(url) => format!(
            "Full data: {shown} of this run, in the artifacts of [{}]({url}) {}.",
            links.run_label, links.words.full_data_when
        ),
        None => format!("Full data: {shown}."),
    }
}

pub(super) fn warmup(a: &Analysis) -> Option<u64> {
    a.run
        .workload
        .get("warmup")
        .and_then(serde_json::Value::as_u64)
}

pub(super) fn facts(a: &Analysis, counted: u64, caps: &Caps, commit_prefix: Option<&str>) -> Facts {
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
        git_commit: escape::commit(a.run.git_commit.as_deref(), commit_prefix),
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
        iteration_pattern: escape::code_span(&nsys_gate_core::text::shorten(
            &a.run.iteration_pattern,
            caps.name_chars,
        )),
        tool_version: esc(&p.tool_version, 40),
    }
}

/// The manifest's `cuda` mapping in words.
pub(super) fn synchronization(cuda: Option<&serde_json::Value>, caps: &Caps) -> String {
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

pub(super) fn stat_cells(s: Option<&IterationStats>, missing: &str) -> Vec<String> {
    match s {
        None => vec![missing.to_owned(); 8],
        Some(s) => {
            // The times in one unit (the count and cv are not durations); the standard
            // deviation, a spread often a thousandth of them, in its own (`7.73 µs`, as the
            // other tables show such a time, not `0.00773 ms`).
            let durations = format::column(&[
                s.mean_ns,
                s.median_ns,
                s.minimum_ns as f64,
                s.maximum_ns as f64,
                s.p90_ns,
            ]);
            let mut cells = vec![s.count.to_string()];
            cells.extend(durations);
            cells.push(duration(s.stddev_ns));
            cells.push(format::significant(s.cv, 3));
            cells
        }
    }
}

pub(super) fn stats(a: &Analysis, counted: u64, gpu_ok: bool) -> StatsView {
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
        let reason = a
            .warning(WarningCode::GpuProjectionUnavailable)
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
        gpu_busy_note: a.gpu_busy_per_iteration().map(|busy| {
            let k = a
                .gpu_work
                .as_ref()
                .and_then(|g| g.iteration_kernels.as_ref())
                .expect("busy time comes from the iterations' kernels");
            format!(
                "GPU busy: {} per counted iteration, the sum of the durations of the kernels launched inside the counted iterations ({} in {} over {}). It is busy time, not a span: the projected span also holds the GPU's idle time between kernels.",
                duration(busy),
                duration_i(k.total_ns),
                plural(k.launches as usize, "launch", "launches"),
                plural(k.iterations as usize, "iteration", "iterations")
            )
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nsys_gate_core::artifact::{ClockMhz, GpuInfo};

    fn gpu(id: u64, median: Option<u32>, max: Option<u64>) -> GpuInfo {
        GpuInfo {
            id,
            name: Some("NVIDIA H100 80GB HBM3".to_owned()),
            uuid: None,
            sm_count: Some(132),
            max_clock_mhz: max,
            memory_bytes: None,
            compute_capability: None,
            clock_mhz: median.map(|m| ClockMhz {
                median: m,
                minimum: m,
                maximum: m,
            }),
        }
    }

    #[test]
    fn the_clock_is_the_median_the_range_of_several_or_not_recorded() {
        let mut e = Environment {
            driver_version: Some("570.172.08".to_owned()),
            cuda_driver_version: Some("12.8".to_owned()),
            ..Environment::default()
        };
        e.gpus = vec![gpu(0, Some(1980), Some(1980))];
        assert_eq!(clocks(&e), "SM clock 1,980 MHz (max 1,980)");
        e.gpus.push(gpu(1, Some(1950), Some(1980)));
        assert_eq!(clocks(&e), "SM clock 1,950-1,980 MHz (max 1,980)");
        e.gpus = vec![gpu(0, Some(1410), None)];
        assert_eq!(clocks(&e), "SM clock 1,410 MHz");
        e.gpus = vec![gpu(0, None, Some(1980)), gpu(1, None, Some(1980))];
        assert_eq!(clocks(&e), "clocks not recorded");
        assert_eq!(
            environment_line(Some(&e), &Caps::full(10)).as_deref(),
            Some("**GPU:** NVIDIA H100 80GB HBM3 x 2 · driver 570.172.08 · CUDA 12.8 · clocks not recorded")
        );
    }
}
