//! The runner model: which runners of a history's points get a level of their own, the rough
//! offsets and design columns that give them, the F test of the head's runner's spread against
//! the others' and the weights it gives, and whether the points come from a pool of runners.

use super::{Fitted, Shape};
use crate::compare::fit::Fit;
use crate::compare::points::Point;
use statrs::distribution::{ContinuousCDF, FisherSnedecor};

/// A runner has a level of its own only with this many points: with fewer, one planted file
/// would be its runner's whole level (or half of it), and no outlier test could see it.
pub const MIN_RUNNER_POINTS: usize = 3;

/// The level of the F test that gives the head's runner a spread of its own.
pub const SPREAD_TEST_ALPHA: f64 = 0.2;

/// The head's runner, as the history knows it.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct RunnerInfo {
    /// Used points on it.
    pub points: usize,
    /// Its points left out (outliers, a planted file's).
    pub left_out: usize,
    pub own_level: bool,
    pub own_spread: bool,
    pub barely_known: bool,
}

/// The head's runner's own spread, when an F test (before the outlier test, which would trim
/// the noisier runner's tail) says it differs from the others': the weights of the values
/// (the others weigh by its spread over theirs) and the test's figures. The test fits every
/// value but the other runners' gross outliers: one far off on the head's runner is its
/// runner's spread (it can only widen the head's interval), one on another runner could make
/// the head's runner look quiet.
pub(super) fn runner_weights(
    groups: &Runners,
    shape: &Shape,
    positions: &[f64],
    y: &[f64],
    gross: &[bool],
    least_spread: f64,
) -> Option<(Vec<f64>, OwnSpread)> {
    if groups.columns == 0 {
        return None;
    }
    let tested: Vec<usize> = (0..y.len())
        .filter(|&k| !gross[k] || groups.column[k].is_none())
        .collect();
    let rows: Vec<Vec<f64>> = tested
        .iter()
        .map(|&k| groups.row(shape.row(positions[k]), Some(k), true))
        .collect();
    let fit = Fit::new(&rows, &tested.iter().map(|&k| y[k]).collect::<Vec<_>>())?;
    let df = tested.len() as f64 - fit.rank as f64;
    let differ = spreads_differ(&fit.residuals, &tested, df, groups, least_spread)?;
    let weights = (0..y.len())
        .map(|k| {
            if groups.column[k].is_none() {
                1.0
            } else {
                differ.ratio
            }
        })
        .collect();
    Some((weights, differ))
}

/// The head's runner (`name`) as a fit knows it.
pub(super) fn runner_info(name: &str, fitted: &Fitted, groups: &Runners) -> RunnerInfo {
    let points = (0..fitted.keep.len())
        .filter(|&k| fitted.keep[k] && groups.names[k].as_deref() == Some(name))
        .count();
    let on_it = (0..fitted.keep.len())
        .filter(|&k| groups.names[k].as_deref() == Some(name))
        .count();
    let own_level = groups.count(name) >= MIN_RUNNER_POINTS;
    RunnerInfo {
        points,
        left_out: on_it - points,
        own_level,
        own_spread: false,
        barely_known: !own_level && groups.any_own,
    }
}

/// The spread between runners, in noise floors, added for a head on a runner the history
/// barely knows: 2.5 % with the default floor of 1 %.
pub const BARELY_KNOWN_RUNNER_SPREAD: f64 = 2.5;

/// How many runners a history's points must come from, none with more than half of them, to be
/// a pool whose spread holds the runners' differences ([`Runners::pooled`]).
pub const POOL_RUNNERS: usize = 3;

/// The head's runner's own spread, found to differ from the others'.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct OwnSpread {
    /// Its spread over the others'.
    pub(super) ratio: f64,
    /// Its spread and degrees of freedom, before the outlier test (taken when too few of its
    /// points are left after it to say it).
    pub(super) head: f64,
    pub(super) df: f64,
}

/// The share of the spread floor under which neither spread is taken in the F test: the
/// floor itself would hide a quiet runner's spread (0.5 % against a floor of 0.8 %) and with it
/// a noisy runner's difference; identical runs still give no infinite ratio.
pub const SPREAD_TEST_FLOOR: f64 = 0.25;

/// The F test of the head's runner's spread against the other points' (the `residuals` of a
/// fit of the values `used` with `df` degrees of freedom, each spread never under
/// [`SPREAD_TEST_FLOOR`] times `least`): `Some` when they differ at [`SPREAD_TEST_ALPHA`]
/// (two-sided).
pub(super) fn spreads_differ(
    residuals: &[f64],
    used: &[usize],
    df: f64,
    groups: &Runners,
    least: f64,
) -> Option<OwnSpread> {
    let (mut ss, mut n) = ([0.0; 2], [0usize; 2]);
    for (j, &k) in used.iter().enumerate() {
        let g = usize::from(groups.column[k].is_some());
        ss[g] += residuals[j].powi(2);
        n[g] += 1;
    }
    let df_head = n[0] as f64 - 1.0;
    let df_others = df - df_head;
    if df_head < 1.0 || df_others < 1.0 {
        return None;
    }
    let floor = (SPREAD_TEST_FLOOR * least).powi(2);
    let (vh, vo) = ((ss[0] / df_head).max(floor), (ss[1] / df_others).max(floor));
    let f = FisherSnedecor::new(df_head, df_others).ok()?;
    let c = f.cdf(vh / vo);
    let p = 2.0 * c.min(1.0 - c);
    (p < SPREAD_TEST_ALPHA).then(|| OwnSpread {
        ratio: (vh / vo).sqrt(),
        head: (ss[0] / df_head).sqrt(),
        df: df_head,
    })
}

/// The runners of a history's points, as the model sees them.
pub(super) struct Runners {
    /// Per value: its runner's column (`None`: the head's runner, the reference).
    pub(super) column: Vec<Option<usize>>,
    /// Columns (other runners with a level of their own, and one for the rest).
    pub(super) columns: usize,
    /// Rough offsets per value (its runner's median less the head's runner's median).
    pub(super) rough: Vec<f64>,
    /// Per value: its runner's name.
    pub(super) names: Vec<Option<String>>,
    /// Whether some runner has a level of its own ([`MIN_RUNNER_POINTS`] points or more).
    pub(super) any_own: bool,
}

impl Runners {
    /// Whether the values kept (`keep`) come from a pool of runners: at least
    /// [`POOL_RUNNERS`] of them named, none with more than half of the values. Their spread
    /// then holds the differences between the runners (the slots of a pool of machines that
    /// take turns), and a head on one the history barely knows needs no spread added for it.
    pub(super) fn pooled(&self, keep: &[bool]) -> bool {
        let mut counts: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
        let mut kept = 0;
        for (name, _) in self.names.iter().zip(keep).filter(|(_, &k)| k) {
            kept += 1;
            if let Some(name) = name {
                *counts.entry(name.as_str()).or_default() += 1;
            }
        }
        let named: usize = counts.values().sum();
        counts.len() >= POOL_RUNNERS && named == kept && counts.values().all(|&c| 2 * c <= kept)
    }

    /// The runners of the points `index` (into `alike`) for a head on `runner`: modelled
    /// when the head's runner ran at least [`MIN_RUNNER_POINTS`] of them and other runners
    /// ran others. A runner gets a level of its own only with that many points; the points
    /// of the others share one level (and are tested as outliers against it).
    pub(super) fn of(
        alike: &[Point<'_>],
        index: &[usize],
        values: &[f64],
        runner: Option<&str>,
    ) -> Runners {
        let names: Vec<Option<&str>> = index.iter().map(|&i| alike[i].runner()).collect();
        let count = |name: &str| names.iter().filter(|n| **n == Some(name)).count();
        let own = |name: &str| count(name) >= MIN_RUNNER_POINTS;
        // A label per value: the runner's name when it has a level of its own, else one
        // shared label for runners that tell too little.
        let labels: Vec<Option<&str>> = names.iter().map(|n| n.filter(|&m| own(m))).collect();
        let none = Runners {
            column: vec![None; index.len()],
            columns: 0,
            rough: vec![0.0; index.len()],
            names: names.iter().map(|n| n.map(str::to_owned)).collect(),
            any_own: labels.iter().any(Option::is_some),
        };
        let Some(head) = runner.filter(|&h| own(h)) else {
            return none;
        };
        let mut others: Vec<Option<&str>> = labels
            .iter()
            .copied()
            .filter(|l| *l != Some(head))
            .collect();
        others.sort();
        others.dedup();
        if others.is_empty() {
            return none;
        }
        let column: Vec<Option<usize>> = labels
            .iter()
            .map(|l| others.iter().position(|o| o == l))
            .collect();
        let median_of = |c: Option<usize>| {
            let v: Vec<f64> = (0..values.len())
                .filter(|&k| column[k] == c)
                .map(|k| values[k])
                .collect();
            nsys_gate_core::stats::median(&v).unwrap_or(0.0)
        };
        let reference = median_of(None);
        let offsets: Vec<f64> = (0..others.len())
            .map(|c| median_of(Some(c)) - reference)
            .collect();
        Runners {
            rough: column
                .iter()
                .map(|c| c.map_or(0.0, |c| offsets[c]))
                .collect(),
            column,
            columns: others.len(),
            ..none
        }
    }

    /// Points that ran on `name`.
    pub(super) fn count(&self, name: &str) -> usize {
        self.names
            .iter()
            .filter(|n| n.as_deref() == Some(name))
            .count()
    }

    /// Values with the rough offsets taken out.
    pub(super) fn adjust(&self, y: &[f64]) -> Vec<f64> {
        y.iter().zip(&self.rough).map(|(v, o)| v - o).collect()
    }

    /// A design row: the shape's, then the runner columns (`k`: the value; `None` for the
    /// head, on its own runner).
    pub(super) fn row(
        &self,
        mut shape: Vec<f64>,
        k: Option<usize>,
        with_runners: bool,
    ) -> Vec<f64> {
        if with_runners {
            let own = k.and_then(|k| self.column[k]);
            shape.extend((0..self.columns).map(|c| if own == Some(c) { 1.0 } else { 0.0 }));
        }
        shape
    }

    /// Whether a kept value is on the head's runner.
    pub(super) fn has_head_point(&self, keep: &[bool]) -> bool {
        (0..keep.len()).any(|k| keep[k] && self.column[k].is_none())
    }
}
