//! Item by item: a table of "name -> time per counted iteration" of the head against the
//! history of each item, the largest changes first; items only the head or the newest used
//! point has are new or gone. The items are range groups (host exclusive and GPU-projected
//! time), kernels and memory copies ([`super::items`] makes their tables); this module judges
//! any of them the same way.
//!
//! analysis.json keeps each range's total over the counted iterations, so a run's value of a
//! range is that total over its counted iterations (a mean, not a median).
//!
//! **The run moves every range.** A slower runner, a hotter GPU, a busier machine: one run's
//! offset moves all its ranges alike, and judged one by one, dozens of ranges would be flagged
//! at once for what is one fact about the run (said once, by the measures and by
//! [`RunWide`]). So with [`RUN_EFFECT_MIN_RANGES`] ranges or more, each run's own offset is
//! taken out first: the median, over the ranges, of how far each is from its usual level
//! (Tukey's median polish, two rounds), for every history point and for the head. A range is
//! then judged by how far it moved beyond its run's offset, against how far it usually does
//! (Student's t over the history's points, as a measure is, [`super::noise`]). Its
//! `change_pct` stays its raw change, and a range is `slower` or `faster` only when both its
//! change beyond the run and its raw change go that way.
//!
//! **Small tables follow the shape too.** With fewer ranges the median would be one range's
//! own move, so each run's offset is taken from its measure instead ([`Shape::measure`]: the
//! host inclusive time's logarithm at each point and at the head, the GPU projection's for
//! GPU tables): a runner, a level shift or a drift moves the measure as it moves the items,
//! and an item is judged by how far it moved beyond it. Without it (a point with no value of
//! the measure) a small table is judged against the plain mean of its history.
//!
//! **Many items, one error budget.** With dozens of ranges and kernels some would fall outside
//! their interval by chance alone: the p-values of every item of a run (host and GPU range
//! tables, kernels and memory copies together) go through Benjamini and Hochberg's procedure
//! at [`FALSE_DISCOVERY_RATE`] (its share when the legs of a profile share it), and only the
//! discoveries (at least the noise floor too) are `slower` or `faster`. Each table also says
//! what one of its items alone could be found from ([`decide`]), each with its own noise.

use std::collections::{BTreeMap, BTreeSet};

use super::history::change_pct_of;
use super::measures::verdict;
use super::noise::{self, benjamini_hochberg, Prediction, MIN_BASE_RUNS};
use super::points::geometric;
use nsys_gate_core::artifact::comparison::{
    ChangeVerdict, RangeChange, RangeChanges, RangeOnly, RunWide,
};
use nsys_gate_core::stats::median;

/// The false-discovery rate over one run's items (range tables, kernels and memory copies
/// together): the part of the comment's error budget they have, beside the measures' 5 %.
pub const FALSE_DISCOVERY_RATE: f64 = 0.03;

/// Ranges (with a history) needed before each run's own offset is taken out: with fewer, one
/// range that changed would move the median as much as the run did.
pub const RUN_EFFECT_MIN_RANGES: usize = 5;

/// One analysis's table: item name -> time per counted iteration (a range's host exclusive
/// or GPU-projected time, a range group's, a kernel's, a copy kind's).
pub type Times = BTreeMap<String, f64>;

/// An item's value at a point (the tables of its analyses that have one): the geometric mean
/// of their positive values; `None` when none has it.
pub fn value(tables: &[&Times], name: &str) -> Option<f64> {
    geometric(
        tables
            .iter()
            .filter_map(|t| t.get(name).copied())
            .filter(|&v| v > 0.0 && v.is_finite()),
    )
}

/// Where the history's shape puts a run of unchanged code, as the items of a table read it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Shape {
    /// Where the history puts a run of unchanged code against its points' mean (a
    /// logarithm: the newest level's distance after a shift, the trend's end with a drift,
    /// the head's runner's offset; 0 for a history of one level): an item's base time is its
    /// mean moved by it, so that a branch's drift or a slower runner is not read as the
    /// head's change.
    pub expected: f64,
    /// The measure's logarithm at each used point and at the head, when every one has it:
    /// each run's own offset for a table of fewer than [`RUN_EFFECT_MIN_RANGES`] items.
    pub measure: Option<MeasureLogs>,
}

/// A measure's logarithm at each used point (oldest first) and at the head.
#[derive(Debug, Clone, PartialEq)]
pub struct MeasureLogs {
    pub points: Vec<f64>,
    pub head: f64,
}

/// A run's items of one table, judged but not yet decided (the false-discovery step runs
/// over every table of the run, [`decide`]).
#[derive(Debug, Clone)]
pub struct Table {
    pub changes: RangeChanges,
    /// Per `changes.changed`: how far the range moved beyond its run's offset (logarithm).
    beyond: Vec<f64>,
    /// Per `changes.changed`: what the history predicts for it (judged items only).
    predictions: Vec<Option<Prediction>>,
    /// Most ranges moving alike, when they did.
    pub run_wide: Option<RunWide>,
}

/// Every item of the head's tables (its runs, one point) against the used points' (oldest
/// first; each point's tables are those of its analyses that have the table), following the
/// history's `shape` ([`Shape`]).
pub fn table(head: &[&Times], used: &[Vec<&Times>], floor: f64, shape: &Shape) -> Table {
    let expected = shape.expected;
    let head_names: BTreeSet<&String> = head.iter().flat_map(|t| t.keys()).collect();
    let names: Vec<&String> = head_names.iter().copied().collect();
    // logs[g][p]: item g at point p.
    let logs: Vec<Vec<Option<f64>>> = names
        .iter()
        .map(|name| used.iter().map(|p| value(p, name).map(f64::ln)).collect())
        .collect();
    let head_logs: Vec<Option<f64>> = names.iter().map(|n| value(head, n).map(f64::ln)).collect();
    let judged: Vec<usize> = (0..names.len())
        .filter(|&g| head_logs[g].is_some() && logs[g].iter().flatten().count() >= MIN_BASE_RUNS)
        .collect();
    let measure = shape
        .measure
        .as_ref()
        .filter(|m| m.points.len() == used.len());
    let effects = RunEffects::of(&logs, &head_logs, &judged, used.len(), measure);
    let mut changed = Vec::new();
    let mut beyond = Vec::new();
    let mut predictions = Vec::new();
    let mut new = Vec::new();
    let mut raw_changes = Vec::new();
    for (g, name) in names.iter().enumerate() {
        let base: Vec<f64> = logs[g].iter().flatten().copied().collect();
        let Some(h) = head_logs[g] else {
            continue;
        };
        if base.is_empty() {
            new.push(RangeOnly {
                name: (*name).clone(),
                per_iteration_ns: h.exp(),
            });
            continue;
        }
        let base_log = base.iter().sum::<f64>() / base.len() as f64 + expected;
        let base_value = base_log.exp();
        let head_value = h.exp();
        let mut change = RangeChange {
            name: (*name).clone(),
            base_per_iteration_ns: base_value,
            head_per_iteration_ns: head_value,
            change_ns: head_value - base_value,
            change_pct: Some(change_pct_of(head_value / base_value)),
            base_runs: base.len() as u64,
            p_value: None,
            verdict: ChangeVerdict::NoiseUnknown,
            members: None,
            largest_members: Vec::new(),
            share: None,
            launched_by: Vec::new(),
        };
        let mut moved = 0.0;
        let mut predicted = None;
        if base.len() >= MIN_BASE_RUNS {
            let prediction = effects.prediction(g, &logs[g]);
            let j = noise::judge(&prediction, h, 0.0, 1.0 - noise::VERDICT_CONFIDENCE, floor);
            change.p_value = Some(j.p_value);
            moved = h - prediction.level;
            raw_changes.push(h - base_log);
            predicted = Some(prediction);
        }
        changed.push(change);
        beyond.push(moved);
        predictions.push(predicted);
    }
    let mut gone: Vec<RangeOnly> = used
        .last()
        .map(|newest| {
            newest
                .iter()
                .flat_map(|t| t.keys())
                .collect::<BTreeSet<_>>()
                .into_iter()
                .filter(|name| !head_names.contains(name))
                .filter_map(|name| {
                    Some(RangeOnly {
                        name: name.clone(),
                        per_iteration_ns: value(newest, name)?,
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    // The largest absolute change first (then by name), `beyond` in the same order.
    let mut order: Vec<usize> = (0..changed.len()).collect();
    order.sort_by(|&x, &y| {
        changed[y]
            .change_ns
            .abs()
            .total_cmp(&changed[x].change_ns.abs())
            .then_with(|| changed[x].name.cmp(&changed[y].name))
    });
    let beyond = order.iter().map(|&i| beyond[i]).collect();
    let predictions = order.iter().map(|&i| predictions[i]).collect();
    let changed = order.into_iter().map(|i| changed[i].clone()).collect();
    let largest = |x: &RangeOnly, y: &RangeOnly| {
        y.per_iteration_ns
            .total_cmp(&x.per_iteration_ns)
            .then_with(|| x.name.cmp(&y.name))
    };
    new.sort_by(largest);
    gone.sort_by(largest);
    Table {
        changes: RangeChanges {
            changed,
            new,
            gone,
            changed_omitted: 0,
            new_omitted: 0,
            gone_omitted: 0,
            detectable_pct: None,
            iterations: None,
            iterations_note: None,
        },
        beyond,
        predictions,
        run_wide: run_wide(&raw_changes, effects.active, floor),
    }
}

/// The verdicts of every range of a run's tables: Benjamini-Hochberg over all their
/// p-values at `rate` ([`FALSE_DISCOVERY_RATE`], or its share when the legs of a profile
/// share it); a discovery at least the noise floor, moving the same way beyond its run as in
/// all, is `slower` or `faster`, the others `within_noise`. Each table is also given what one
/// of its items alone could be found from ([`detectable`]).
pub fn decide(tables: &mut [&mut Table], floor: f64, rate: f64) {
    let mut at = Vec::new();
    let mut ps = Vec::new();
    for (t, table) in tables.iter().enumerate() {
        for (i, r) in table.changes.changed.iter().enumerate() {
            if let Some(p) = r.p_value {
                at.push((t, i));
                ps.push(p);
            }
        }
    }
    let discoveries = benjamini_hochberg(&ps, rate);
    for (&(t, i), &discovered) in at.iter().zip(&discoveries) {
        let moved = tables[t].beyond[i];
        let r = &mut tables[t].changes.changed[i];
        let ratio = r.head_per_iteration_ns / r.base_per_iteration_ns;
        let same_way = (ratio - 1.0).signum() == moved.signum();
        r.verdict = verdict(ratio, discovered && same_way, floor);
    }
    // One item that moved alone is the first of the step-up: found when its p-value is under
    // rate / m, m the run's judged items.
    let alpha = rate / ps.len().max(1) as f64;
    let mut scales: Vec<(f64, f64)> = Vec::new();
    for table in tables.iter_mut() {
        table.changes.detectable_pct = detectable(&table.predictions, alpha, floor, &mut scales);
    }
}

/// What one item of a table alone would be called `slower` from, 4 times in 5, at `alpha`
/// (in %): the median over its judged items (`predictions`) of each one's detectable change
/// ([`noise::detectable`], the head as thin as the history's runs); `None` when none is
/// judged. `scales` keeps the noncentral t's figure per degrees of freedom (items mostly
/// share them).
fn detectable(
    predictions: &[Option<Prediction>],
    alpha: f64,
    floor: f64,
    scales: &mut Vec<(f64, f64)>,
) -> Option<f64> {
    let logs: Vec<f64> = predictions
        .iter()
        .flatten()
        .map(|p| {
            let found = scales.iter().find(|(df, _)| *df == p.df).map(|s| s.1);
            let k = found.unwrap_or_else(|| {
                let k = noise::detectable_scales(p.df, alpha);
                scales.push((p.df, k));
                k
            });
            noise::detectable_at(k, p, 0.0, floor).ln()
        })
        .collect();
    median(&logs).map(|m| change_pct_of(m.exp()))
}

/// Most ranges moving alike: the median raw change (logarithms) of the judged ranges, and
/// how many moved at least the floor that way; `None` unless run effects are taken out and
/// more than half of the ranges moved.
fn run_wide(raw: &[f64], active: bool, floor: f64) -> Option<RunWide> {
    let middle = median(raw).filter(|_| active)?;
    let min = (1.0 + floor).ln();
    let moved = raw
        .iter()
        .filter(|&&c| c.abs() >= min && c.signum() == middle.signum())
        .count();
    (middle.abs() >= min && 2 * moved > raw.len()).then(|| RunWide {
        change_pct: change_pct_of(middle.exp()),
        groups_moved: moved as u64,
        groups: raw.len() as u64,
    })
}

/// Each run's own offset across its ranges (Tukey's median polish), and each range's level.
struct RunEffects {
    /// Whether offsets are taken out (enough ranges).
    active: bool,
    /// Per point, and the head's.
    point: Vec<f64>,
    head: f64,
    /// Per range (all names; judged ones only are meaningful).
    level: Vec<f64>,
}

impl RunEffects {
    fn of(
        logs: &[Vec<Option<f64>>],
        head: &[Option<f64>],
        judged: &[usize],
        points: usize,
        measure: Option<&MeasureLogs>,
    ) -> RunEffects {
        let mean_of = |values: &[Option<f64>], offsets: &[f64]| {
            let v: Vec<f64> = values
                .iter()
                .zip(offsets)
                .filter_map(|(x, o)| x.map(|x| x - o))
                .collect();
            v.iter().sum::<f64>() / v.len().max(1) as f64
        };
        let mut effects = RunEffects {
            active: judged.len() >= RUN_EFFECT_MIN_RANGES,
            point: vec![0.0; points],
            head: 0.0,
            level: logs
                .iter()
                .map(|row| {
                    median(&row.iter().flatten().copied().collect::<Vec<_>>()).unwrap_or(0.0)
                })
                .collect(),
        };
        if !effects.active {
            // Too few items for a median: each run's offset is its measure's (centred).
            if let Some(m) = measure {
                let centre = m.points.iter().sum::<f64>() / m.points.len().max(1) as f64;
                effects.point = m.points.iter().map(|v| v - centre).collect();
                effects.head = m.head - centre;
            }
            for &g in judged {
                effects.level[g] = mean_of(&logs[g], &effects.point);
            }
            return effects;
        }
        let offset = |at: &dyn Fn(usize) -> Option<f64>, level: &[f64]| {
            let d: Vec<f64> = judged
                .iter()
                .filter_map(|&g| at(g).map(|v| v - level[g]))
                .collect();
            median(&d).unwrap_or(0.0)
        };
        let offsets = |level: &[f64]| -> Vec<f64> {
            (0..points)
                .map(|p| offset(&|g| logs[g][p], level))
                .collect()
        };
        for _ in 0..2 {
            effects.point = offsets(&effects.level);
            for &g in judged {
                effects.level[g] = mean_of(&logs[g], &effects.point);
            }
        }
        effects.point = offsets(&effects.level);
        effects.head = offset(&|g| head[g], &effects.level);
        effects
    }

    /// What a head of unchanged code gives range `g` (with its history `values`, per point):
    /// its level moved by the head's offset, with the spread of its residuals.
    fn prediction(&self, g: usize, values: &[Option<f64>]) -> Prediction {
        let residuals: Vec<f64> = values
            .iter()
            .zip(&self.point)
            .filter_map(|(v, o)| v.map(|v| v - self.level[g] - o))
            .collect();
        let n = residuals.len() as f64;
        let mean = residuals.iter().sum::<f64>() / n;
        let squares: f64 = residuals.iter().map(|r| (r - mean).powi(2)).sum();
        Prediction {
            level: self.level[g] + mean + self.head,
            spread: (squares / (n - 1.0)).sqrt(),
            df: n - 1.0,
            leverage: 1.0 / n,
            within: 0.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::run_level::RunLevel;
    use nsys_gate_core::artifact::fake::analysis;

    fn level(host: &[i64], ranges: &[(&str, i64)]) -> RunLevel {
        RunLevel::of(&analysis(host, ranges, false), "a.json")
    }

    /// Each run a point of its own, host exclusive times by exact name.
    fn judged(head: &RunLevel, history: &[RunLevel]) -> Table {
        let used: Vec<Vec<&Times>> = history.iter().map(|r| vec![&r.host_ranges]).collect();
        let mut t = table(&[&head.host_ranges], &used, 0.01, &Shape::default());
        decide(&mut [&mut t], 0.01, FALSE_DISCOVERY_RATE);
        t
    }

    /// Three ranges on a run moved by `factor` (its runner, a step, its noise), each with a
    /// small noise of its own (a pattern by `seed`), range `a` times `change`.
    fn three(factor: f64, change: f64, seed: usize) -> RunLevel {
        const PATTERN: [f64; 7] = [0.3, -0.9, 0.6, -0.1, 1.0, -0.5, -0.4];
        let own = |g: usize| 1.0 + 0.002 * PATTERN[(g * 3 + seed) % 7];
        let total = |level: f64, g: usize| (4.0 * level * factor * own(g)) as i64;
        level(
            &[(3_000_000.0 * factor) as i64; 4],
            &[
                ("a", (total(400_000.0, 0) as f64 * change) as i64),
                ("b", total(300_000.0, 1)),
                ("c", total(200_000.0, 2)),
            ],
        )
    }

    /// The table of `head` against `history` with the runs' offsets taken from the host
    /// measure.
    fn judged_with_measure(head: &RunLevel, history: &[RunLevel]) -> Table {
        let used: Vec<Vec<&Times>> = history.iter().map(|r| vec![&r.host_ranges]).collect();
        let shape = Shape {
            expected: 0.0,
            measure: Some(MeasureLogs {
                points: history
                    .iter()
                    .map(|r| r.host_inclusive_ns.unwrap().ln())
                    .collect(),
                head: head.host_inclusive_ns.unwrap().ln(),
            }),
        };
        let mut t = table(&[&head.host_ranges], &used, 0.01, &shape);
        decide(&mut [&mut t], 0.01, FALSE_DISCOVERY_RATE);
        t
    }

    fn flagged(t: &Table) -> Vec<&str> {
        t.changes
            .changed
            .iter()
            .filter(|r| r.verdict != ChangeVerdict::WithinNoise)
            .map(|r| r.name.as_str())
            .collect()
    }

    #[test]
    fn a_small_table_follows_its_measure_through_a_step_and_a_runner() {
        const OFFSETS: [f64; 8] = [0.01, -0.012, 0.004, -0.003, 0.015, -0.008, 0.0, 0.006];
        // 20 runs, the last 3 on a new level 10 % slower; the head at that level.
        let history: Vec<RunLevel> = (0..20)
            .map(|k| {
                let step = if k >= 17 { 1.10 } else { 1.0 };
                three(step * (1.0 + OFFSETS[k % 8]), 1.0, k)
            })
            .collect();
        let head = three(1.10 * 1.003, 1.0, 9);
        // Beyond the run's own offset (the measure's), nothing moved; each range keeps its
        // raw change against its history's mean.
        let t = judged_with_measure(&head, &history);
        assert!(flagged(&t).is_empty());
        assert!(t
            .changes
            .changed
            .iter()
            .all(|r| r.change_pct.unwrap() > 5.0));
        assert!(t.changes.changed.iter().all(|r| r.p_value.unwrap() > 0.1));
        // A head on a runner 6 % slower: nothing either.
        assert!(flagged(&judged_with_measure(&three(1.16, 1.0, 9), &history)).is_empty());
        // One range 10 % slower beyond it is found, alone.
        assert_eq!(
            flagged(&judged_with_measure(&three(1.10, 1.10, 9), &history)),
            ["a"]
        );
    }

    #[test]
    fn largest_change_first_then_new_and_gone() {
        let base = level(
            &[3_000_000; 4],
            &[
                ("inference", 4_000_000),
                ("pre", 1_000_000),
                ("old", 400_000),
            ],
        );
        let head = level(
            &[3_000_000; 5],
            &[
                ("inference", 10_000_000),
                ("pre", 1_000_000),
                ("new", 50_000),
            ],
        );
        let c = judged(&head, &[base]).changes;
        let names: Vec<&str> = c.changed.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["inference", "pre"]);
        // 4 ms over 4 iterations, 10 ms over 5: 1 ms to 2 ms per iteration.
        assert!((c.changed[0].base_per_iteration_ns - 1_000_000.0).abs() < 1e-3);
        assert!((c.changed[0].head_per_iteration_ns - 2_000_000.0).abs() < 1e-3);
        assert_eq!(c.changed[0].change_pct, Some(100.0));
        assert_eq!(c.changed[1].change_pct, Some(-20.0));
        // One base run: no noise known, so no verdict either way.
        assert!(c
            .changed
            .iter()
            .all(|r| r.verdict == ChangeVerdict::NoiseUnknown));
        assert_eq!(c.new[0].name, "new");
        assert_eq!(c.gone[0].name, "old");
        assert!((c.gone[0].per_iteration_ns - 100_000.0).abs() < 1e-6);
    }

    #[test]
    fn a_history_gives_each_range_a_verdict_under_the_false_discovery_rate() {
        let noisy = |k: i64| {
            level(
                &[3_000_000; 4],
                &[("a", 4_000_000 + k * 20_000), ("b", 1_000_000 - k * 5_000)],
            )
        };
        let history: Vec<RunLevel> = (0..8).map(|k| noisy(k % 4)).collect();
        let head = level(&[3_000_000; 4], &[("a", 4_800_000), ("b", 990_000)]);
        let c = judged(&head, &history).changes;
        let verdict = |name: &str| c.changed.iter().find(|r| r.name == name).unwrap().verdict;
        assert_eq!(verdict("a"), ChangeVerdict::Slower);
        assert_eq!(verdict("b"), ChangeVerdict::WithinNoise);
        assert!(c.changed.iter().all(|r| r.base_runs == 8));
    }

    /// Twenty ranges over `points` runs, each run moved by its own offset (a pattern), with a
    /// small noise of each range's own.
    fn twenty(run_offset: f64, changed: Option<(usize, f64)>, seed: usize) -> RunLevel {
        let ranges: Vec<(String, i64)> = (0..20)
            .map(|g| {
                let own = 1.0 + 0.002 * (((g * 7 + seed * 3) % 5) as f64 - 2.0);
                let change = changed.filter(|c| c.0 == g).map_or(1.0, |c| c.1);
                let total =
                    4.0 * (100_000.0 + 20_000.0 * g as f64) * (1.0 + run_offset) * own * change;
                (format!("stage{g:02}"), total as i64)
            })
            .collect();
        let named: Vec<(&str, i64)> = ranges.iter().map(|(n, t)| (n.as_str(), *t)).collect();
        level(&[3_000_000; 4], &named)
    }

    #[test]
    fn a_run_that_moved_as_a_whole_is_said_once_and_flags_no_range() {
        const OFFSETS: [f64; 8] = [0.01, -0.012, 0.004, -0.003, 0.015, -0.008, 0.0, 0.006];
        let history: Vec<RunLevel> = (0..8).map(|k| twenty(OFFSETS[k], None, k)).collect();
        // The head on a runner 5 % slower: every range 5 % up.
        let t = judged(&twenty(0.05, None, 9), &history);
        let wide = t.run_wide.expect("a run-wide shift");
        assert!((4.0..6.0).contains(&wide.change_pct), "{}", wide.change_pct);
        assert_eq!((wide.groups_moved, wide.groups), (20, 20));
        assert!(t
            .changes
            .changed
            .iter()
            .all(|r| r.verdict == ChangeVerdict::WithinNoise));
        // Each range keeps its raw change.
        assert!(t
            .changes
            .changed
            .iter()
            .all(|r| r.change_pct.unwrap() > 3.0));
        // One range 10 % slower on a run 5 % slower: that one is flagged, alone.
        let t = judged(&twenty(0.05, Some((3, 1.10)), 9), &history);
        let flagged: Vec<&str> = t
            .changes
            .changed
            .iter()
            .filter(|r| r.verdict != ChangeVerdict::WithinNoise)
            .map(|r| r.name.as_str())
            .collect();
        assert_eq!(flagged, ["stage03"]);
        // An unchanged head: nothing flagged, no run-wide shift.
        let t = judged(&twenty(0.002, None, 9), &history);
        assert!(t.run_wide.is_none());
        assert!(t
            .changes
            .changed
            .iter()
            .all(|r| r.verdict == ChangeVerdict::WithinNoise));
    }

    /// `count` ranges whose own noise is `own` (relative, in a fixed pattern by seed) on a
    /// run moved by `run_offset`.
    fn noisy(count: usize, own: f64, run_offset: f64, seed: usize) -> RunLevel {
        const PATTERN: [f64; 7] = [0.3, -0.9, 0.6, -0.1, 1.0, -0.5, -0.4];
        let ranges: Vec<(String, i64)> = (0..count)
            .map(|g| {
                let mine = 1.0 + own * PATTERN[(g * 3 + seed) % 7];
                let total = 4.0 * (100_000.0 + 20_000.0 * g as f64) * (1.0 + run_offset) * mine;
                (format!("stage{g:02}"), total as i64)
            })
            .collect();
        let named: Vec<(&str, i64)> = ranges.iter().map(|(n, t)| (n.as_str(), *t)).collect();
        level(&[3_000_000; 4], &named)
    }

    #[test]
    fn a_table_says_what_one_item_alone_could_be_found_from() {
        const OFFSETS: [f64; 8] = [0.01, -0.012, 0.004, -0.003, 0.015, -0.008, 0.0, 0.006];
        let seen = |count: usize, own: f64| {
            let history: Vec<RunLevel> = (0..8).map(|k| noisy(count, own, OFFSETS[k], k)).collect();
            judged(&noisy(count, own, 0.0, 9), &history)
                .changes
                .detectable_pct
                .expect("judged items")
        };
        // Items that agree closely are seen from a few % (their spread is the spread floor's,
        // 0.8 %, over an alpha of 3 % / 20).
        let quiet = seen(20, 0.002);
        assert!((3.0..10.0).contains(&quiet), "{quiet}");
        // Items with 2 % noise of their own need more; so does a table of more items (each
        // one's share of the false-discovery rate is smaller).
        let loud = seen(20, 0.02);
        assert!(loud > 1.5 * quiet, "{loud} against {quiet}");
        assert!(seen(60, 0.02) > loud);
        // Nothing judged, nothing said: one base run.
        let one = judged(&noisy(20, 0.02, 0.0, 9), &[noisy(20, 0.02, 0.0, 1)]);
        assert_eq!(one.changes.detectable_pct, None);
    }
}
