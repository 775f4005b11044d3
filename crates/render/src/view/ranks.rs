//! The ranks of a distributed run: the step line the report and the comment lead with, and
//! the rank table (each rank's median, p90, steps it was the slowest in, GPU projection).

use serde::Serialize;

use super::escape::inline_shortened as esc;
use crate::format::{self, NBSP};
use nsys_gate_core::artifact::{rank_identity, Analysis, Rank};

#[derive(Debug, Serialize)]
pub struct RanksView {
    /// `2 ranks · step median 3.07 ms · rank 1 slowest in 9 of 10 steps`.
    pub line: String,
    /// How the ranks were numbered, one sentence.
    pub numbered: String,
    pub rows: Vec<RankRow>,
    /// Some rank ran on a GPU projection: the table has its column.
    pub gpu: bool,
}

#[derive(Debug, Serialize)]
pub struct RankRow {
    pub rank: String,
    pub pid: String,
    pub device: String,
    pub trace: String,
    /// `counted / expected`.
    pub iterations: String,
    pub median: String,
    pub p90: String,
    /// `9 of 10`.
    pub slowest: String,
    pub gpu_median: String,
}

/// The rank slowest in the most steps (ties: the lowest rank).
fn slowest(ranks: &[Rank]) -> Option<&Rank> {
    ranks.iter().max_by(|a, b| {
        a.slowest_steps
            .cmp(&b.slowest_steps)
            .then(b.rank.cmp(&a.rank))
    })
}

/// The step line (bold figures), for a run of several ranks.
pub(super) fn step_line(a: &Analysis) -> Option<String> {
    let ranks = a.ranks.as_deref().filter(|r| !r.is_empty())?;
    let steps = a.iteration_summary.complete;
    let median = a
        .iteration_summary
        .host_inclusive
        .as_ref()
        .map_or_else(|| "n/a".to_owned(), |h| format::duration(h.median_ns));
    let mut line = format!("**{}** ranks · step median **{median}**", ranks.len());
    if let Some(s) = slowest(ranks).filter(|s| s.slowest_steps > 0) {
        line.push_str(&format!(
            " · rank{NBSP}**{}** slowest in **{}{NBSP}of{NBSP}{steps}** steps",
            s.rank, s.slowest_steps
        ));
    }
    Some(line)
}

pub(super) fn ranks(a: &Analysis, name_chars: usize) -> Option<RanksView> {
    let ranks = a.ranks.as_deref().filter(|r| !r.is_empty())?;
    let steps = a.iteration_summary.complete;
    let gpu = ranks
        .iter()
        .any(|r| r.iteration_summary.gpu_projected.is_some());
    let rows = ranks
        .iter()
        .map(|r| {
            let host = r.iteration_summary.host_inclusive.as_ref();
            RankRow {
                rank: r.rank.to_string(),
                pid: r.pid.to_string(),
                device: r
                    .device
                    .map_or_else(|| "n/a".to_owned(), |d| format!("cuda:{d}")),
                trace: format!("`{}`", esc(&r.trace, name_chars).replace('`', "'")),
                iterations: format!(
                    "{}{NBSP}/{NBSP}{}",
                    r.iterations, r.iteration_summary.expected
                ),
                median: host.map_or_else(|| "n/a".to_owned(), |h| format::duration(h.median_ns)),
                p90: host.map_or_else(|| "n/a".to_owned(), |h| format::duration(h.p90_ns)),
                slowest: format!("{}{NBSP}of{NBSP}{steps}", r.slowest_steps),
                gpu_median: r
                    .iteration_summary
                    .gpu_projected
                    .as_ref()
                    .map_or_else(|| "n/a".to_owned(), |g| format::duration(g.median_ns)),
            }
        })
        .collect();
    Some(RanksView {
        line: step_line(a)?,
        numbered: format!(
            "A step is one iteration index across the ranks, timed by its slowest rank (the iteration statistics above are the steps'). Ranks are numbered by {}.",
            rank_identity(ranks)
        ),
        rows,
        gpu,
    })
}
