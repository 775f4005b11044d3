//! Range groups: scoped names that differ only in their decimal numbers, taken together.
//!
//! Real programs put indexes in range names (`layer_3_token_6.ensure_layer_3_weights`): a
//! trace of 64 tokens through 24 layers has 1,536 distinct names of one instance each, and a
//! top-ten table of them says nothing. A group replaces every run of ASCII digits with `#`
//! (`layer_#_token_#.ensure_layer_#_weights`) and adds its members up. Members of one group
//! have the same number of scope levels, so on one thread none contains another: their
//! inclusive totals add up without counting anything twice.
//!
//! The exact names stay in `host_ranges`/`gpu_projected_ranges`; the groups are extra fields
//! (`host_range_groups`, `gpu_projected_range_groups`) for the report's tables and for advice.

use std::collections::BTreeMap;

pub use nsys_gate_core::artifact::group_name;
use nsys_gate_core::artifact::{
    GpuProjectedRange, GpuProjectedRangeGroup, GroupStats, HostRange, HostRangeGroup,
};
use nsys_gate_core::stats::RangeStats;

/// Adds one member's statistics to a group's (the mean is set by [`finish`]).
fn add(into: &mut Option<GroupStats>, member: &RangeStats) {
    let g = into.get_or_insert(GroupStats {
        total_ns: 0,
        mean_ns: 0.0,
        minimum_ns: member.minimum_ns,
        maximum_ns: member.maximum_ns,
    });
    g.total_ns += member.total_ns;
    g.minimum_ns = g.minimum_ns.min(member.minimum_ns);
    g.maximum_ns = g.maximum_ns.max(member.maximum_ns);
}

/// A group's statistics with the mean over all its instances.
fn finish(stats: Option<GroupStats>, instances: u64) -> GroupStats {
    let mut s = stats.unwrap_or(GroupStats {
        total_ns: 0,
        mean_ns: 0.0,
        minimum_ns: 0,
        maximum_ns: 0,
    });
    if instances > 0 {
        s.mean_ns = s.total_ns as f64 / instances as f64;
    }
    s
}

/// The groups of `host_ranges`, by group name.
pub fn host_groups(ranges: &[HostRange]) -> Vec<HostRangeGroup> {
    #[derive(Default)]
    struct Acc {
        names: u64,
        instances: u64,
        inclusive: Option<GroupStats>,
        exclusive: Option<GroupStats>,
    }
    let mut groups: BTreeMap<String, Acc> = BTreeMap::new();
    for r in ranges {
        let acc = groups.entry(group_name(&r.name)).or_default();
        acc.names += 1;
        acc.instances += r.instances;
        add(&mut acc.inclusive, &r.inclusive);
        add(&mut acc.exclusive, &r.exclusive);
    }
    groups
        .into_iter()
        .map(|(group, acc)| HostRangeGroup {
            group,
            names: acc.names,
            instances: acc.instances,
            inclusive: finish(acc.inclusive, acc.instances),
            exclusive: finish(acc.exclusive, acc.instances),
        })
        .collect()
}

/// The groups of `gpu_projected_ranges`, by group name.
pub fn gpu_groups(ranges: &[GpuProjectedRange]) -> Vec<GpuProjectedRangeGroup> {
    #[derive(Default)]
    struct Acc {
        names: u64,
        instances: u64,
        projected: Option<GroupStats>,
        host_total_ns: i64,
        gpu_operation_count: u64,
    }
    let mut groups: BTreeMap<String, Acc> = BTreeMap::new();
    for r in ranges {
        let acc = groups.entry(group_name(&r.name)).or_default();
        acc.names += 1;
        acc.instances += r.instances;
        add(&mut acc.projected, &r.projected);
        acc.host_total_ns += r.host_total_ns;
        acc.gpu_operation_count += r.gpu_operation_count;
    }
    groups
        .into_iter()
        .map(|(group, acc)| GpuProjectedRangeGroup {
            group,
            names: acc.names,
            instances: acc.instances,
            projected: finish(acc.projected, acc.instances),
            host_total_ns: acc.host_total_ns,
            gpu_operation_count: acc.gpu_operation_count,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn digits_become_one_mark_per_run() {
        for (name, group) in [
            (
                "layer_3_token_6.ensure_layer_3_weights",
                "layer_#_token_#.ensure_layer_#_weights",
            ),
            ("layer_12_token_63", "layer_#_token_#"),
            ("inference", "inference"),
            ("step[10].v2.0", "step[#].v#.#"),
            ("٣ arabic digit", "٣ arabic digit"),
            ("", ""),
        ] {
            assert_eq!(group_name(name), group, "{name}");
        }
    }

    fn stats(total: i64, min: i64, max: i64, n: u64) -> RangeStats {
        RangeStats {
            total_ns: total,
            mean_ns: total as f64 / n as f64,
            median_ns: 0.0,
            minimum_ns: min,
            maximum_ns: max,
            stddev_ns: 0.0,
        }
    }

    fn host(name: &str, instances: u64, total: i64, min: i64, max: i64) -> HostRange {
        HostRange {
            name: name.into(),
            path: name.split('.').map(str::to_owned).collect(),
            instances,
            inclusive: stats(total, min, max, instances),
            exclusive: stats(total / 2, min / 2, max / 2, instances),
            child_total_ns: total - total / 2,
            slowest_rank: None,
        }
    }

    #[test]
    fn a_group_adds_its_members_up() {
        let groups = host_groups(&[
            host("layer_1.load", 2, 300, 100, 200),
            host("layer_2.load", 1, 50, 50, 50),
            host("sample", 3, 90, 20, 40),
        ]);
        assert_eq!(groups.len(), 2);
        let layer = &groups[0];
        assert_eq!(layer.group, "layer_#.load");
        assert_eq!((layer.names, layer.instances), (2, 3));
        assert_eq!(
            layer.inclusive,
            GroupStats {
                total_ns: 350,
                mean_ns: 350.0 / 3.0,
                minimum_ns: 50,
                maximum_ns: 200
            }
        );
        assert_eq!(layer.exclusive.total_ns, 150 + 25);
        assert_eq!(groups[1].group, "sample");
        assert_eq!(groups[1].names, 1);
    }

    proptest! {
        /// Every exact name is in exactly one group, and instances and totals are kept.
        #[test]
        fn groups_keep_every_instance_and_nanosecond(
            members in proptest::collection::vec(("[a-c_.]{0,3}[0-9]{0,3}[a-c_.]{0,3}", 1u64..50, 0i64..1_000_000), 0..40)
        ) {
            let mut seen = std::collections::BTreeSet::new();
            let ranges: Vec<HostRange> = members
                .iter()
                .filter(|(name, _, _)| seen.insert(name.clone()))
                .map(|(name, n, total)| host(name, *n, *total, 0, *total))
                .collect();
            let groups = host_groups(&ranges);
            prop_assert_eq!(groups.iter().map(|g| g.names).sum::<u64>(), ranges.len() as u64);
            prop_assert_eq!(
                groups.iter().map(|g| g.instances).sum::<u64>(),
                ranges.iter().map(|r| r.instances).sum::<u64>()
            );
            prop_assert_eq!(
                groups.iter().map(|g| g.inclusive.total_ns).sum::<i64>(),
                ranges.iter().map(|r| r.inclusive.total_ns).sum::<i64>()
            );
            for r in &ranges {
                prop_assert_eq!(groups.iter().filter(|g| g.group == group_name(&r.name)).count(), 1);
            }
        }
    }
}
