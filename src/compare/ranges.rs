//! Range by range: host exclusive time (and GPU-projected time) per counted iteration, base
//! against head, the largest changes first; ranges only one run has are new or gone.
//!
//! analysis.json keeps each range's totals over the counted iterations, not its per-iteration
//! samples, so these changes have no interval: they point at where a change of the measures
//! above comes from, they do not establish one.

use std::collections::BTreeMap;

use crate::artifact::comparison::{RangeChange, RangeChanges, RangeOnly};
use crate::artifact::Analysis;

/// Host exclusive time per counted iteration (exclusive times add up, inclusive ones do not).
pub fn host(base: &Analysis, head: &Analysis) -> RangeChanges {
    let totals = |a: &Analysis| -> BTreeMap<String, i64> {
        a.host_ranges
            .iter()
            .map(|r| (r.name.clone(), r.exclusive.total_ns))
            .collect()
    };
    changes(&totals(base), base.counted(), &totals(head), head.counted())
}

/// GPU-projected time per counted iteration.
pub fn gpu(base: &Analysis, head: &Analysis) -> RangeChanges {
    let totals = |a: &Analysis| -> BTreeMap<String, i64> {
        a.gpu_projected_ranges
            .iter()
            .map(|r| (r.name.clone(), r.projected.total_ns))
            .collect()
    };
    changes(&totals(base), base.counted(), &totals(head), head.counted())
}

fn per_iteration(total: i64, iterations: u64) -> f64 {
    if iterations == 0 {
        0.0
    } else {
        total as f64 / iterations as f64
    }
}

fn changes(
    base: &BTreeMap<String, i64>,
    base_iterations: u64,
    head: &BTreeMap<String, i64>,
    head_iterations: u64,
) -> RangeChanges {
    let mut changed = Vec::new();
    let mut new = Vec::new();
    let mut gone = Vec::new();
    for (name, &h) in head {
        let h = per_iteration(h, head_iterations);
        match base.get(name) {
            Some(&b) => {
                let b = per_iteration(b, base_iterations);
                changed.push(RangeChange {
                    name: name.clone(),
                    base_per_iteration_ns: b,
                    head_per_iteration_ns: h,
                    change_ns: h - b,
                    change_pct: (b > 0.0).then(|| ((h / b - 1.0) * 10_000.0).round() / 100.0),
                });
            }
            None => new.push(RangeOnly {
                name: name.clone(),
                per_iteration_ns: h,
            }),
        }
    }
    for (name, &b) in base {
        if !head.contains_key(name) {
            gone.push(RangeOnly {
                name: name.clone(),
                per_iteration_ns: per_iteration(b, base_iterations),
            });
        }
    }
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
        base_iterations,
        head_iterations,
        changed,
        new,
        gone,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::fake::analysis;

    #[test]
    fn largest_change_first_then_new_and_gone() {
        let base = analysis(
            &[3_000_000; 4],
            &[
                ("inference", 4_000_000),
                ("pre", 1_000_000),
                ("old", 400_000),
            ],
            false,
        );
        let head = analysis(
            &[3_000_000; 5],
            &[
                ("inference", 10_000_000),
                ("pre", 1_000_000),
                ("new", 50_000),
            ],
            false,
        );
        let c = host(&base, &head);
        assert_eq!((c.base_iterations, c.head_iterations), (4, 5));
        let names: Vec<&str> = c.changed.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["inference", "pre"]);
        // 4 ms over 4 iterations, 10 ms over 5: 1 ms to 2 ms per iteration.
        assert_eq!(c.changed[0].base_per_iteration_ns, 1_000_000.0);
        assert_eq!(c.changed[0].head_per_iteration_ns, 2_000_000.0);
        assert_eq!(c.changed[0].change_pct, Some(100.0));
        assert_eq!(c.changed[1].change_pct, Some(-20.0));
        assert_eq!(c.new[0].name, "new");
        assert_eq!(c.gone[0].name, "old");
        assert_eq!(c.gone[0].per_iteration_ns, 100_000.0);
    }
}
