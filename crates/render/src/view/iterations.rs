//! The per-iteration table and its chart.

use std::collections::BTreeSet;

use serde::Serialize;

use super::{warned_indexes, Table};
use crate::chart;
use crate::format::{self, duration, ColumnUnit};
use crate::limit::Caps;
use nsys_gate_core::artifact::{Analysis, Iteration, WarningCode};
use nsys_gate_core::stats::OUTLIER_MADS;

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
    /// The colours of the plots, in the order the template draws them: outlier bars (when
    /// there are: first, so that the host bars cover their empty bars' base), host bars, the
    /// GPU line.
    pub palette: &'static str,
    pub title: String,
    pub x_axis: String,
    pub y_axis: String,
    /// Host inclusive bars of the iterations on the scale (0 for those off it).
    pub host: String,
    /// Bars of the iterations off the scale (the slow ones), cut at the axis's top and drawn
    /// in a colour of their own; 0 for the others. `None` when every iteration is on it.
    pub outliers: Option<String>,
    pub gpu: Option<String>,
    pub note: String,
}

/// The chart's colours: blue bars, a red GPU line.
const PALETTE: &str = "#4e79a7, #e15759";
/// With outliers: orange outlier bars, blue bars, a red GPU line.
const PALETTE_WITH_OUTLIERS: &str = "#f28e2b, #4e79a7, #e15759";
/// Room above the steady iterations when some are off the scale: their cut bars stand this
/// much taller than the tallest steady one, so that an outlier never looks level with the rest.
pub(super) const OUTLIER_ROOM: f64 = 1.3;

pub(super) fn iteration_table(
    a: &Analysis,
    caps: &Caps,
    gpu_ok: bool,
    path: &str,
) -> Table<IterationRow> {
    let slow = warned_indexes(a, WarningCode::SlowIterations);
    let unexpected = warned_indexes(a, WarningCode::UnexpectedIterations);
    let first_slow = a
        .warning(WarningCode::FirstIterationSlow)
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
        let counted = it.is_counted();
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
    let missing: Vec<u64> = a
        .warning(WarningCode::MissingIterations)
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

/// Iterations above which the chart's x-axis is numeric.
pub(super) const NUMERIC_AXIS_FROM: usize = 20;

pub(super) fn chart(a: &Analysis, caps: &Caps, gpu_ok: bool) -> Option<ChartView> {
    let counted: Vec<&Iteration> = a.counted_iterations().collect();
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
    // The axis stops above the slowest iteration that is not an outlier, with room above it
    // when some are off the scale: those are drawn as bars of their own colour cut at the
    // axis's top (an outlier, not one more bar), and named with their real values.
    let top = chart::axis_top(&host_ns).max(gpu_ns.as_deref().map_or(0.0, chart::axis_top));
    let off_scale = host_ns.iter().any(|v| *v > top);
    let axis = if off_scale { top * OUTLIER_ROOM } else { top };
    let (scale, unit) = format::chart_unit(axis);
    let list = |values: &mut dyn Iterator<Item = f64>| {
        let cells: Vec<String> = values
            .map(|v| format::chart_value(v.min(axis), scale))
            .collect();
        format!("[{}]", cells.join(", "))
    };
    let host = list(&mut host_ns.iter().map(|v| if *v > top { 0.0 } else { *v }));
    let outliers =
        off_scale.then(|| list(&mut host_ns.iter().map(|v| if *v > top { axis } else { 0.0 })));
    let clipped: Vec<String> = shown
        .iter()
        .enumerate()
        .filter_map(|(n, i)| {
            let gpu = gpu_ns.as_ref().map_or(0.0, |g| g[n]);
            // Each line clipped at this iteration, with its real value.
            let mut parts = Vec::new();
            if host_ns[n] > top {
                parts.push(format!("host {}", duration(host_ns[n])));
            }
            if gpu > axis {
                parts.push(format!("GPU projected {}", duration(gpu)));
            }
            (!parts.is_empty())
                .then(|| format!("iteration\u{a0}{} ({})", i.index, parts.join(", ")))
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
            " The axis stops at {} so that the steady iterations can be read; {}: {}.",
            duration(axis),
            if off_scale {
                format!("off the scale, as orange bars cut at the top (slow: over median + {OUTLIER_MADS} × MAD)")
            } else {
                "above it, drawn at the top".to_owned()
            },
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
    let y_top = if off_scale {
        format::chart_value(axis, scale)
    } else {
        format::significant(top / scale * 1.1, 2)
    };
    Some(ChartView {
        palette: if off_scale {
            PALETTE_WITH_OUTLIERS
        } else {
            PALETTE
        },
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
        host,
        outliers,
        gpu: gpu_ns.as_deref().map(|g| list(&mut g.iter().copied())),
        note,
    })
}
