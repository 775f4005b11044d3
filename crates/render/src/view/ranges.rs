//! The range tables: host exclusive and inclusive totals, GPU-projected totals; names that
//! differ only in decimal numbers shown as one group unless `--exact-names`.

use std::borrow::Cow;
use std::collections::HashMap;

use serde::Serialize;

use super::{left_out_note, Table};
use crate::escape::inline_shortened as esc;
use crate::format::{self};
use crate::limit::Caps;
use nsys_gate_core::artifact::{Analysis, GpuProjectedRange, HostRange, SteadyState};
use nsys_gate_core::artifact::{GroupStats, RangeStats};
use nsys_gate_core::stats::OUTLIER_MADS;

#[derive(Debug, Serialize)]
pub struct HostRow {
    pub name: String,
    pub instances: u64,
    pub exclusive_total: String,
    pub exclusive_mean: String,
    /// Exclusive total over the iterations the table holds (the steady state's, else every
    /// counted one): the comparison's number of the range group.
    pub exclusive_per_iteration: String,
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

/// The ranges the tables show: groups of names that differ only in decimal numbers (a group
/// of one shows its exact name), over the steady state when the analysis has one (the slow
/// iterations left out, as the advice leaves them out), or the exact names (every counted
/// iteration) with `--exact-names` or when the analysis has no groups (written before they
/// existed).
pub(super) fn shown_ranges(
    a: &Analysis,
    exact: bool,
) -> (Cow<'_, [HostRange]>, Cow<'_, [GpuProjectedRange]>) {
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
    let (host_groups, gpu_groups) = match steady(a, exact) {
        Some(s) => (&s.host_range_groups, &s.gpu_projected_range_groups),
        None => (&a.host_range_groups, &a.gpu_projected_range_groups),
    };
    let hosts = host_groups
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
            // a group of one range: that range's slowest rank (a distributed run)
            slowest_rank: (g.names == 1)
                .then(|| a.host_ranges.iter().find(|r| r.name == g.group))
                .flatten()
                .and_then(|r| r.slowest_rank),
        })
        .collect();
    let gpus = gpu_groups
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

/// The steady state the tables show, when they show groups and the analysis has one.
pub(super) fn steady(a: &Analysis, exact: bool) -> Option<&SteadyState> {
    a.steady_state
        .as_ref()
        .filter(|_| !exact && !a.host_range_groups.is_empty())
}

/// How many iterations the range tables hold: the steady state's, else every counted one.
pub(super) fn iterations_held(a: &Analysis, exact: bool) -> u64 {
    steady(a, exact).map_or(a.counted(), |s| s.host_inclusive.count)
}

/// What the host table's `per iteration` column is over, in words (its basis, as the
/// comparison's range groups say theirs).
pub(super) fn per_iteration_over(a: &Analysis, exact: bool) -> String {
    let n = iterations_held(a, exact);
    let iterations = if n == 1 { "iteration" } else { "iterations" };
    let (which, item) = match (steady(a, exact).is_some(), exact) {
        (true, _) => ("steady", "range group"),
        (false, true) => ("counted", "range"),
        (false, false) => ("counted", "range group"),
    };
    let state = if which == "steady" {
        " (the steady state)"
    } else if a.ranks.is_some() {
        " (every rank's time added)"
    } else {
        ""
    };
    format!("`per iteration` is the exclusive total over the {n} {which} {iterations}{state}: the number the comparison judges a {item} by.")
}

/// What the range tables and the advice leave out, in words; `None` when nothing is.
pub(super) fn steady_note(a: &Analysis, exact: bool) -> Option<String> {
    let s = a.steady_state.as_ref()?;
    // A set: a slow run may leave out thousands of passes (a scan of them for each pass
    // took 0.06 s of a 23,334-pass report).
    let left_out: std::collections::BTreeSet<u64> = s.left_out.iter().copied().collect();
    let slow: Vec<String> = a
        .iterations
        .iter()
        .filter(|i| i.is_counted() && left_out.contains(&i.index))
        .map(|i| format!("{} ({})", i.index, format::duration_i(i.host.inclusive_ns)))
        .collect();
    let named = format!(
        "{}\u{a0}{}",
        if slow.len() == 1 {
            "iteration"
        } else {
            "iterations"
        },
        format::index_list_words(&slow, 10)
    );
    Some(if steady(a, exact).is_some() {
        format!(
            "The steady state: {named}, slow (over median + {OUTLIER_MADS} × MAD), {} left out of these tables and of the advice; the shares are of the other {} counted iterations' host inclusive time ({}). analysis.json's `host_ranges` and `host_range_groups` hold every counted iteration, its `steady_state` these figures.",
            if slow.len() == 1 { "is" } else { "are" },
            s.host_inclusive.count,
            format::duration_i(s.host_inclusive.total_ns),
        )
    } else {
        format!(
            "These tables hold every counted iteration, the slow {named} included; the advice leaves {} out (the steady state).",
            if slow.len() == 1 { "it" } else { "them" }
        )
    })
}

/// Each group's exact name, for the groups of one name.
pub(super) fn names_by_group<'a>(
    names: impl Iterator<Item = &'a String>,
) -> HashMap<String, &'a str> {
    let mut map = HashMap::new();
    for name in names {
        map.entry(nsys_gate_core::artifact::group_name(name))
            .or_insert(name.as_str());
    }
    map
}

/// How a group is named in a table: its one exact name, or the group with how many names.
pub(super) fn group_display(group: &str, names: u64, exact: &HashMap<String, &str>) -> String {
    match exact.get(group) {
        Some(name) if names == 1 => (*name).to_owned(),
        _ => format!("{group} ({names} names)"),
    }
}

/// The host table of `shown` ([`shown_ranges`] of `exact_names`), by exclusive or inclusive
/// total.
pub(super) fn host_table(
    a: &Analysis,
    shown: &[HostRange],
    caps: &Caps,
    exclusive: bool,
    path: &str,
    exact_names: bool,
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
    // The share is of the iterations the rows cover: the steady state's when they are its.
    let iteration_total = match steady(a, exact_names) {
        Some(s) => s.host_inclusive.total_ns,
        // A distributed run's tables cover every rank's iterations: the share is of them all.
        None => match a.ranks.as_deref() {
            Some(ranks) => ranks
                .iter()
                .filter_map(|r| r.iteration_summary.host_inclusive.as_ref())
                .map(|h| h.total_ns)
                .sum(),
            None => a
                .iteration_summary
                .host_inclusive
                .as_ref()
                .map_or(0, |h| h.total_ns),
        },
    };
    let top: Vec<&HostRange> = ranges.iter().take(caps.top).copied().collect();
    // One unit per column.
    let column = |value: fn(&HostRange) -> f64| {
        format::column(&top.iter().map(|r| value(r)).collect::<Vec<_>>())
    };
    let mut exclusive_total = column(|r| r.exclusive.total_ns as f64).into_iter();
    let mut exclusive_mean = column(|r| r.exclusive.mean_ns).into_iter();
    let per_iteration = iterations_held(a, exact_names).max(1) as f64;
    let mut exclusive_per_iteration = format::column(
        &top.iter()
            .map(|r| r.exclusive.total_ns as f64 / per_iteration)
            .collect::<Vec<_>>(),
    )
    .into_iter();
    let mut inclusive_total = column(|r| r.inclusive.total_ns as f64).into_iter();
    let mut inclusive_mean = column(|r| r.inclusive.mean_ns).into_iter();
    let mut inclusive_max = column(|r| r.inclusive.maximum_ns as f64).into_iter();
    let next = |c: &mut std::vec::IntoIter<String>| c.next().unwrap_or_default();
    let rows: Vec<HostRow> = top
        .iter()
        .map(|r| HostRow {
            name: match r.slowest_rank {
                Some(rank) => format!(
                    "{} (slowest on rank{}{rank})",
                    esc(&r.name, caps.name_chars),
                    format::NBSP
                ),
                None => esc(&r.name, caps.name_chars),
            },
            instances: r.instances,
            exclusive_total: next(&mut exclusive_total),
            exclusive_mean: next(&mut exclusive_mean),
            exclusive_per_iteration: next(&mut exclusive_per_iteration),
            exclusive_share: format::share_pct(r.exclusive.total_ns as f64, iteration_total as f64),
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

pub(super) fn gpu_table(shown: &[GpuProjectedRange], caps: &Caps, path: &str) -> Table<GpuRow> {
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
