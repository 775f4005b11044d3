//! The lists of comparison.json that a base file can grow, bounded: a base artifact is data
//! that another run made (a fork's pull request's run can upload one of the name), and a
//! base file of a million ranges gave a comparison.json of 132 MB, one of 256 made-up profiles
//! 256 unmatched keys. Each list keeps its first items in its own order (the largest first),
//! and a count of the rest (`*_omitted`, absent when 0); `runs` is bounded by what is read
//! (256 analyses in a folder or an artifact).

use nsys_gate_core::artifact::comparison::{
    ChangeVerdict, Comparison, RangeChanges, MAX_LISTED as MAX_ITEMS, MAX_UNMATCHED,
};

/// `c` with its lists bounded.
pub fn bounded(mut c: Comparison) -> Comparison {
    c.unmatched_head_omitted += cut(&mut c.unmatched_head, MAX_UNMATCHED);
    c.unmatched_base_omitted += cut(&mut c.unmatched_base, MAX_UNMATCHED);
    for run in &mut c.runs {
        bound_ranges(&mut run.host_ranges);
        if let Some(gpu) = run.gpu_ranges.as_mut() {
            bound_ranges(gpu);
        }
        for work in [
            run.kernels.as_mut(),
            run.memory_copies.as_mut(),
            run.exposed_communication.as_mut(),
        ]
        .into_iter()
        .flatten()
        {
            bound_ranges(&mut work.items);
        }
        if let Some(work) = run.gpu_work.as_mut() {
            work.kernels_omitted += cut(&mut work.kernels, MAX_ITEMS);
            work.memory_copies_omitted += cut(&mut work.memory_copies, MAX_ITEMS);
        }
    }
    c
}

/// The first `max` items kept; returns how many were dropped.
fn cut<T>(items: &mut Vec<T>, max: usize) -> u64 {
    let dropped = items.len().saturating_sub(max);
    items.truncate(max);
    dropped as u64
}

/// `changed` keeps every range judged `slower` or `faster` first (so the counts the report
/// gives of them stay exact), then the largest other changes, in its own order; `new` and
/// `gone` their largest.
fn bound_ranges(r: &mut RangeChanges) {
    let before = r.changed.len();
    if before > MAX_ITEMS {
        let flagged = |v: ChangeVerdict| matches!(v, ChangeVerdict::Slower | ChangeVerdict::Faster);
        let mut room =
            MAX_ITEMS.saturating_sub(r.changed.iter().filter(|c| flagged(c.verdict)).count());
        r.changed.retain(|c| {
            if flagged(c.verdict) {
                return true;
            }
            let keep = room > 0;
            room = room.saturating_sub(1);
            keep
        });
        r.changed.truncate(MAX_ITEMS);
        r.changed_omitted += (before - r.changed.len()) as u64;
    }
    r.new_omitted += cut(&mut r.new, MAX_ITEMS);
    r.gone_omitted += cut(&mut r.gone, MAX_ITEMS);
}

#[cfg(test)]
mod tests {
    use super::*;
    use nsys_gate_core::artifact::comparison::{RangeChange, RangeOnly};

    fn change(name: usize, verdict: ChangeVerdict) -> RangeChange {
        RangeChange {
            name: format!("r{name}"),
            base_per_iteration_ns: 1.0,
            head_per_iteration_ns: 2.0,
            change_ns: 1.0,
            change_pct: Some(100.0),
            base_runs: 3,
            p_value: None,
            verdict,
            members: None,
            largest_members: Vec::new(),
            share: None,
            launched_by: Vec::new(),
        }
    }

    fn only(n: usize) -> Vec<RangeOnly> {
        (0..n)
            .map(|i| RangeOnly {
                name: format!("g{i}"),
                per_iteration_ns: (n - i) as f64,
            })
            .collect()
    }

    #[test]
    fn range_lists_keep_the_flagged_and_the_largest_and_count_the_rest() {
        // 1,500 ranges in both, the three flagged ones among the smallest changes.
        let mut changed: Vec<RangeChange> = (0..1500)
            .map(|i| change(i, ChangeVerdict::WithinNoise))
            .collect();
        for i in [1200, 1300, 1499] {
            changed[i].verdict = ChangeVerdict::Slower;
        }
        let mut r = RangeChanges {
            changed,
            new: only(10),
            gone: only(1_000_000),
            changed_omitted: 0,
            new_omitted: 0,
            gone_omitted: 0,
            detectable_pct: None,
            iterations: None,
            iterations_note: None,
        };
        bound_ranges(&mut r);
        assert_eq!(r.changed.len(), MAX_ITEMS);
        assert_eq!(r.changed_omitted, 500);
        assert_eq!(r.changed[0].name, "r0");
        assert_eq!(r.changed[996].name, "r996");
        let kept: Vec<&str> = r.changed[997..].iter().map(|c| c.name.as_str()).collect();
        assert_eq!(kept, ["r1200", "r1300", "r1499"]);
        assert_eq!((r.new.len(), r.new_omitted), (10, 0));
        assert_eq!((r.gone.len(), r.gone_omitted), (MAX_ITEMS, 999_000));
        assert_eq!(r.gone[0].name, "g0");
    }
}
