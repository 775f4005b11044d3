//! Range by range: host exclusive time (and GPU-projected time) per counted iteration of the
//! head runs against the history of each range, the largest changes first; ranges only the
//! head or the newest base run has are new or gone.
//!
//! analysis.json keeps each range's total over the counted iterations, so a run's value of a
//! range is that total over its counted iterations (a mean, not a median). Each range is then
//! judged as a measure is ([`super::noise`]), and with dozens of ranges some would fall
//! outside their interval by chance alone: the p-values of a run's ranges go through
//! Benjamini and Hochberg's procedure at [`FALSE_DISCOVERY_RATE`], and only the discoveries
//! (at least the noise floor too) are `slower` or `faster`.

use std::collections::{BTreeMap, BTreeSet};

use super::measures::verdict;
use super::noise::{self, benjamini_hochberg, geometric_mean};
use super::run_level::RunLevel;
use crate::artifact::comparison::{ChangeVerdict, RangeChange, RangeChanges, RangeOnly};

/// The false-discovery rate over one run's ranges.
pub const FALSE_DISCOVERY_RATE: f64 = 0.05;

/// Which of a run's range tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Clock {
    /// Host exclusive time (exclusive times add up, inclusive ones do not).
    HostExclusive,
    /// GPU-projected time.
    GpuProjected,
}

fn table(run: &RunLevel, clock: Clock) -> &BTreeMap<String, f64> {
    match clock {
        Clock::HostExclusive => &run.host_ranges,
        Clock::GpuProjected => &run.gpu_ranges,
    }
}

/// Every range of the head runs against the used base runs (oldest first).
pub fn changes(heads: &[&RunLevel], used: &[&RunLevel], clock: Clock, floor: f64) -> RangeChanges {
    let head_names: BTreeSet<&String> = heads.iter().flat_map(|r| table(r, clock).keys()).collect();
    let mut changed = Vec::new();
    let mut new = Vec::new();
    for name in &head_names {
        let head: Vec<f64> = heads
            .iter()
            .filter_map(|r| table(r, clock).get(*name).copied())
            .collect();
        let base: Vec<f64> = used
            .iter()
            .filter_map(|r| table(r, clock).get(*name).copied())
            .collect();
        let head_value = geometric_mean(&head);
        if base.is_empty() {
            new.push(RangeOnly {
                name: (*name).clone(),
                per_iteration_ns: head_value,
            });
            continue;
        }
        let judgement = noise::judge(&base, &head).expect("both sides have values");
        let base_value = geometric_mean(&base);
        let change_ns = head_value - base_value;
        changed.push(RangeChange {
            name: (*name).clone(),
            base_per_iteration_ns: base_value,
            head_per_iteration_ns: head_value,
            change_ns,
            change_pct: (base_value > 0.0).then(|| super::history::percent(judgement.ratio)),
            base_runs: base.len() as u64,
            p_value: judgement.p_value,
            verdict: ChangeVerdict::NoiseUnknown,
        });
    }
    // The false-discovery rate over the ranges with a p-value.
    let (known, ps): (Vec<usize>, Vec<f64>) = changed
        .iter()
        .enumerate()
        .filter_map(|(i, r)| r.p_value.map(|p| (i, p)))
        .unzip();
    let discoveries = benjamini_hochberg(&ps, FALSE_DISCOVERY_RATE);
    for (&i, &discovered) in known.iter().zip(&discoveries) {
        let r = &mut changed[i];
        let ratio = if r.base_per_iteration_ns > 0.0 {
            r.head_per_iteration_ns / r.base_per_iteration_ns
        } else {
            1.0
        };
        r.verdict = verdict(ratio, discovered, floor);
    }
    let mut gone: Vec<RangeOnly> = used
        .last()
        .map(|newest| {
            table(newest, clock)
                .iter()
                .filter(|(name, _)| !head_names.contains(name))
                .map(|(name, &v)| RangeOnly {
                    name: name.clone(),
                    per_iteration_ns: v,
                })
                .collect()
        })
        .unwrap_or_default();
    changed.sort_by(|x, y| {
        y.change_ns
            .abs()
            .total_cmp(&x.change_ns.abs())
            .then_with(|| x.name.cmp(&y.name))
    });
    let largest = |x: &RangeOnly, y: &RangeOnly| {
        y.per_iteration_ns
            .total_cmp(&x.per_iteration_ns)
            .then_with(|| x.name.cmp(&y.name))
    };
    new.sort_by(largest);
    gone.sort_by(largest);
    RangeChanges {
        changed,
        new,
        gone,
        changed_omitted: 0,
        new_omitted: 0,
        gone_omitted: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::artifact::fake::analysis;

    fn level(host: &[i64], ranges: &[(&str, i64)]) -> RunLevel {
        RunLevel::of(&analysis(host, ranges, false), "a.json")
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
        let c = changes(&[&head], &[&base], Clock::HostExclusive, 0.01);
        let names: Vec<&str> = c.changed.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["inference", "pre"]);
        // 4 ms over 4 iterations, 10 ms over 5: 1 ms to 2 ms per iteration.
        assert_eq!(c.changed[0].base_per_iteration_ns, 1_000_000.0);
        assert_eq!(c.changed[0].head_per_iteration_ns, 2_000_000.0);
        assert_eq!(c.changed[0].change_pct, Some(100.0));
        assert_eq!(c.changed[1].change_pct, Some(-20.0));
        // One base run: no noise known, so no verdict either way.
        assert!(c
            .changed
            .iter()
            .all(|r| r.verdict == ChangeVerdict::NoiseUnknown));
        assert_eq!(c.new[0].name, "new");
        assert_eq!(c.gone[0].name, "old");
        assert_eq!(c.gone[0].per_iteration_ns, 100_000.0);
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
        let used: Vec<&RunLevel> = history.iter().collect();
        let head = level(&[3_000_000; 4], &[("a", 4_800_000), ("b", 990_000)]);
        let c = changes(&[&head], &used, Clock::HostExclusive, 0.01);
        let verdict = |name: &str| c.changed.iter().find(|r| r.name == name).unwrap().verdict;
        assert_eq!(verdict("a"), ChangeVerdict::Slower);
        assert_eq!(verdict("b"), ChangeVerdict::WithinNoise);
        assert!(c.changed.iter().all(|r| r.base_runs == 8));
    }
}
