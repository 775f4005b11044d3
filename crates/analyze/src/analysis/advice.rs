//! `advice[]`: what to look at, decided once, here, from the analysis's own tables; the report
//! only words the items.
//!
//! **Per group.** Advice is about groups of ranges (`host_range_groups`: scoped names that
//! differ only in decimal numbers, a name without digits being a group of one), as the report
//! shows them by default: a trace of 64 tokens through 8 layers spreads `forward_layer_#` over
//! 512 names of one instance each, none of which alone is a large share of anything, while
//! together they are most of an iteration. `--exact-names` changes the report's tables, not
//! the advice.
//!
//! **The rule.** `T` is the counted iterations' host inclusive total
//! (`iteration_summary.host_inclusive.total_ns`); a group's shares are its host exclusive and
//! host inclusive totals over `T` (host time over host time); its ratio is its GPU-projected
//! total over its host inclusive total, the harness's comparison of the two clocks (a ratio
//! between them, never a sum).
//!
//! - **host-bound**: host exclusive share at least [`MIN_SHARE`], and the ratio under
//!   [`PROJECTED_RATIO`] or no GPU work launched at all: the range's own host time is large and
//!   the GPU is busy for well under its duration, so the time goes to preparation,
//!   orchestration, synchronization or I/O on the host.
//! - **GPU-bound**: host inclusive share at least [`MIN_SHARE`] and the ratio at least
//!   [`PROJECTED_RATIO`]: the GPU work it launched spans most of its time (a host exclusive time
//!   of such a range may be the host waiting for that work). When a range nested in it is
//!   GPU-bound too, the outer one gets no item: its projection covers the inner one's, and the
//!   kernels to look at are launched in the innermost. The item carries the group's kernels.
//! - Neither: a range under the share, or one whose host time is in its children (its
//!   exclusive share under [`MIN_SHARE`]) while its GPU work spans under half of it.
//! - **No GPU projection** (nsys made none): one item, on the group with the largest host
//!   exclusive total when it reaches [`MIN_SHARE`]: without CUDA tracing its time cannot be
//!   told to be host work or waiting for the GPU.
//!
//! The two thresholds split every range of at least 5 % of the host time one way or the
//! other, with no gap and no overlap: one ratio decides host-bound or GPU-bound. Items: the
//! host-bound ones by host exclusive total, then the GPU-bound ones by projected total (larger
//! first, then by group), at most [`MAX_PER_KIND`] of each.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use nsys_gate_core::artifact::{
    group_name, Advice, AdviceKernels, AdviceKind, GpuProjectedRangeGroup, HostRange,
    HostRangeGroup,
};

/// A range under this share of the counted iterations' host inclusive total gets no item:
/// 5 %, a range small enough that even removing it would hardly change an iteration (the real
/// trace the rule was checked on had its most numerous range, `layer_#_token_#`, at 0.5 %).
pub const MIN_SHARE: f64 = 0.05;
/// GPU-projected total over host inclusive total: under it a range with a large exclusive time
/// is host-bound, at or over it a large range is GPU-bound. Half: the GPU is busy for less
/// (more) than half of the range's duration.
pub const PROJECTED_RATIO: f64 = 0.5;
/// Items of each kind, at most: the report's advice is a short list of where to look first.
pub const MAX_PER_KIND: usize = 3;

/// What the rule reads: the analysis's range tables and groups.
pub(super) struct AdviceInput<'a> {
    /// `host_ranges` (exact names, for the groups' paths and shown names).
    pub host: &'a [HostRange],
    pub host_groups: &'a [HostRangeGroup],
    pub gpu_groups: &'a [GpuProjectedRangeGroup],
    /// The counted iterations' host inclusive total.
    pub iterations_host_inclusive_ns: i64,
    /// Whether nsys made a GPU projection.
    pub projection: bool,
}

/// The items, without their kernels ([`attach_kernels`] adds them).
pub(super) fn decide(t: &AdviceInput<'_>) -> Vec<Advice> {
    let total = t.iterations_host_inclusive_ns;
    if total <= 0 {
        return Vec::new();
    }
    let share = |ns: i64| ns as f64 / total as f64;
    if !t.projection {
        let top = t.host_groups.iter().max_by(|x, y| {
            x.exclusive
                .total_ns
                .cmp(&y.exclusive.total_ns)
                .then_with(|| y.group.cmp(&x.group))
        });
        let chosen: Vec<Candidate<'_>> = top
            .filter(|h| share(h.exclusive.total_ns) >= MIN_SHARE)
            .map(|h| (AdviceKind::NoGpuProjection, h, None))
            .into_iter()
            .collect();
        return items(t, &shapes(t.host, &chosen), chosen);
    }
    let gpu: BTreeMap<&str, &GpuProjectedRangeGroup> =
        t.gpu_groups.iter().map(|g| (g.group.as_str(), g)).collect();
    let mut host_bound = Vec::new();
    let mut gpu_bound = Vec::new();
    for h in t.host_groups {
        if h.inclusive.total_ns <= 0 {
            continue;
        }
        let g = gpu.get(h.group.as_str()).copied();
        let ratio = g.map(|g| g.projected.total_ns as f64 / h.inclusive.total_ns as f64);
        let under = ratio.is_none_or(|r| r < PROJECTED_RATIO);
        if under && share(h.exclusive.total_ns) >= MIN_SHARE {
            host_bound.push((AdviceKind::HostBound, h, g));
        } else if !under && share(h.inclusive.total_ns) >= MIN_SHARE {
            gpu_bound.push((AdviceKind::GpuBound, h, g));
        }
    }
    host_bound.sort_by(|(_, x, _), (_, y, _)| {
        y.exclusive
            .total_ns
            .cmp(&x.exclusive.total_ns)
            .then_with(|| x.group.cmp(&y.group))
    });
    host_bound.truncate(MAX_PER_KIND);
    let projected = |g: Option<&GpuProjectedRangeGroup>| g.map_or(0, |g| g.projected.total_ns);
    gpu_bound.sort_by(|(_, x, gx), (_, y, gy)| {
        projected(*gy)
            .cmp(&projected(*gx))
            .then_with(|| x.group.cmp(&y.group))
    });
    let shapes = shapes(t.host, host_bound.iter().chain(&gpu_bound));
    let mut chosen = host_bound;
    chosen.extend(innermost(&shapes, &gpu_bound).take(MAX_PER_KIND));
    items(t, &shapes, chosen)
}

type Candidate<'a> = (
    AdviceKind,
    &'a HostRangeGroup,
    Option<&'a GpuProjectedRangeGroup>,
);

/// The GPU-bound candidates without those that hold another candidate (in the same order).
fn innermost<'c, 'a>(
    shapes: &'c HashMap<String, GroupShape>,
    candidates: &'c [Candidate<'a>],
) -> impl Iterator<Item = Candidate<'a>> + 'c {
    let path = |h: &HostRangeGroup| shapes.get(&h.group).map_or(&[][..], |s| &s.path[..]);
    candidates.iter().copied().filter(move |(_, outer, _)| {
        let outer = path(outer);
        !candidates.iter().any(|(_, inner, _)| {
            let inner = path(inner);
            inner.len() > outer.len() && inner.starts_with(outer)
        })
    })
}

/// What an item needs of a group besides its statistics: its path of groups and, for a group
/// of one name, that name.
struct GroupShape {
    path: Vec<String>,
    exact: String,
}

/// The shapes of the chosen groups, from their first member in `host_ranges`.
fn shapes<'c, 'a: 'c>(
    host: &[HostRange],
    chosen: impl IntoIterator<Item = &'c Candidate<'a>>,
) -> HashMap<String, GroupShape> {
    let wanted: BTreeSet<&str> = chosen
        .into_iter()
        .map(|(_, h, _)| h.group.as_str())
        .collect();
    let mut out: HashMap<String, GroupShape> = HashMap::new();
    if wanted.is_empty() {
        return out;
    }
    for r in host {
        let group = group_name(&r.name);
        if wanted.contains(group.as_str()) && !out.contains_key(&group) {
            let path = r.path.iter().map(|p| group_name(p)).collect();
            out.insert(
                group,
                GroupShape {
                    path,
                    exact: r.name.clone(),
                },
            );
            if out.len() == wanted.len() {
                break;
            }
        }
    }
    out
}

fn items(
    t: &AdviceInput<'_>,
    shapes: &HashMap<String, GroupShape>,
    chosen: Vec<Candidate<'_>>,
) -> Vec<Advice> {
    let total = t.iterations_host_inclusive_ns;
    chosen
        .into_iter()
        .map(|(kind, h, g)| {
            let shape = shapes.get(&h.group);
            let range = match shape {
                Some(s) if h.names == 1 => s.exact.clone(),
                _ => h.group.clone(),
            };
            let inclusive = h.inclusive.total_ns;
            Advice {
                kind,
                range,
                group: h.group.clone(),
                path: shape.map_or_else(|| vec![h.group.clone()], |s| s.path.clone()),
                names: h.names,
                instances: h.instances,
                host_exclusive_ns: h.exclusive.total_ns,
                host_exclusive_mean_ns: h.exclusive.mean_ns,
                host_inclusive_ns: inclusive,
                host_inclusive_mean_ns: h.inclusive.mean_ns,
                iterations_host_inclusive_ns: total,
                host_exclusive_share: h.exclusive.total_ns as f64 / total as f64,
                host_inclusive_share: inclusive as f64 / total as f64,
                projected_ns: g.map(|g| g.projected.total_ns),
                projected_mean_ns: g.map(|g| g.projected.mean_ns),
                projected_instances: g.map(|g| g.instances),
                gpu_operation_count: g.map(|g| g.gpu_operation_count),
                projected_to_host_inclusive: g
                    .filter(|_| inclusive > 0)
                    .map(|g| g.projected.total_ns as f64 / inclusive as f64),
                threshold_share: MIN_SHARE,
                threshold_ratio: PROJECTED_RATIO,
                kernels: None,
            }
        })
        .collect()
}

/// The groups whose kernels the items need: the GPU-bound ones.
pub(super) fn kernel_groups(items: &[Advice]) -> Vec<String> {
    items
        .iter()
        .filter(|i| i.kind == AdviceKind::GpuBound)
        .map(|i| i.group.clone())
        .collect()
}

/// Gives each GPU-bound item its group's kernels (`by_group`: from the kernel attribution).
pub(super) fn attach_kernels(items: &mut [Advice], mut by_group: BTreeMap<String, AdviceKernels>) {
    for item in items.iter_mut() {
        if item.kind == AdviceKind::GpuBound {
            item.kernels = by_group.remove(&item.group);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::groups::{gpu_groups, host_groups};
    use nsys_gate_core::artifact::GpuProjectedRange;
    use nsys_gate_core::stats::Sample;

    /// A host range: scoped name, one instance per value of (inclusive, exclusive) pairs.
    fn host_range(name: &str, times: &[(i64, i64)]) -> HostRange {
        HostRange {
            name: name.to_owned(),
            path: name.split('.').map(str::to_owned).collect(),
            instances: times.len() as u64,
            inclusive: Sample::new(times.iter().map(|t| t.0).collect()).range_stats(),
            exclusive: Sample::new(times.iter().map(|t| t.1).collect()).range_stats(),
            child_total_ns: times.iter().map(|t| t.0 - t.1).sum(),
            slowest_rank: None,
        }
    }

    fn gpu_range(name: &str, projected: &[i64], host_total_ns: i64) -> GpuProjectedRange {
        GpuProjectedRange {
            name: name.to_owned(),
            path: name.split('.').map(str::to_owned).collect(),
            style: "PushPop".to_owned(),
            instances: projected.len() as u64,
            projected: Sample::new(projected.to_vec()).range_stats(),
            host_total_ns,
            gpu_operation_count: 2 * projected.len() as u64,
        }
    }

    /// The items of these tables, over counted iterations of `total` host inclusive time.
    fn advise(host: &[HostRange], gpu: Option<&[GpuProjectedRange]>, total: i64) -> Vec<Advice> {
        let host_groups = host_groups(host);
        let gpu_groups = gpu_groups(gpu.unwrap_or(&[]));
        decide(&AdviceInput {
            host,
            host_groups: &host_groups,
            gpu_groups: &gpu_groups,
            iterations_host_inclusive_ns: total,
            projection: gpu.is_some(),
        })
    }

    fn kinds(items: &[Advice]) -> Vec<(AdviceKind, &str)> {
        items.iter().map(|i| (i.kind, i.range.as_str())).collect()
    }

    /// The llama shape, 2 tokens x 2 layers, iterations of 1,000 each (2,000 in all):
    /// `layer_L_token_T` (tiny exclusive time) > `ensure_layer_L_weights` (host work, no GPU),
    /// `forward_layer_L` (a kernel over most of it); `embed` and `sample` under the share.
    fn llama() -> (Vec<HostRange>, Vec<GpuProjectedRange>) {
        let mut host = vec![host_range("embed", &[(30, 30), (30, 30)])];
        let mut gpu = vec![gpu_range("embed", &[20, 20], 60)];
        for t in 0..2 {
            for l in 0..2 {
                let layer = format!("layer_{l}_token_{t}");
                host.push(host_range(&layer, &[(460, 10)]));
                host.push(host_range(
                    &format!("{layer}.ensure_layer_{l}_weights"),
                    &[(160, 160)],
                ));
                host.push(host_range(
                    &format!("{layer}.forward_layer_{l}"),
                    &[(290, 290)],
                ));
                gpu.push(gpu_range(&layer, &[260], 460));
                gpu.push(gpu_range(
                    &format!("{layer}.forward_layer_{l}"),
                    &[260],
                    290,
                ));
            }
        }
        host.push(host_range("sample", &[(40, 40), (40, 40)]));
        gpu.push(gpu_range("sample", &[12, 12], 80));
        (host, gpu)
    }

    #[test]
    fn one_host_bound_and_one_gpu_bound_range_and_nothing_under_the_share() {
        let (host, gpu) = llama();
        let items = advise(&host, Some(&gpu), 2_000);
        assert_eq!(
            kinds(&items),
            [
                (
                    AdviceKind::HostBound,
                    "layer_#_token_#.ensure_layer_#_weights"
                ),
                (AdviceKind::GpuBound, "layer_#_token_#.forward_layer_#"),
            ]
        );
        let h = &items[0];
        assert_eq!((h.names, h.instances), (4, 4));
        assert_eq!((h.host_exclusive_ns, h.host_inclusive_ns), (640, 640));
        assert_eq!(h.host_exclusive_mean_ns, 160.0);
        assert!((h.host_exclusive_share - 0.32).abs() < 1e-12);
        assert_eq!(h.projected_ns, None, "launched no GPU work");
        assert_eq!(h.projected_to_host_inclusive, None);
        assert_eq!(
            h.path,
            ["layer_#_token_#", "ensure_layer_#_weights"].map(String::from)
        );
        let g = &items[1];
        assert_eq!(g.projected_ns, Some(1_040));
        assert_eq!(g.projected_instances, Some(4));
        assert_eq!(g.gpu_operation_count, Some(8));
        assert!((g.projected_to_host_inclusive.unwrap() - 1_040.0 / 1_160.0).abs() < 1e-12);
        assert!((g.host_inclusive_share - 0.58).abs() < 1e-12);
        for i in &items {
            assert_eq!((i.threshold_share, i.threshold_ratio), (0.05, 0.5));
            assert_eq!(i.iterations_host_inclusive_ns, 2_000);
            assert_eq!(i.kernels, None);
        }
    }

    /// The case of the issue: a range with a tiny exclusive time (0.5 % of the host time)
    /// whose GPU work spans under half of its inclusive time is not advised on.
    #[test]
    fn a_small_exclusive_time_is_no_host_bound_range() {
        let host = [
            host_range("layer_1", &[(1_000, 5)]),
            host_range("layer_1.work", &[(995, 995)]),
        ];
        let gpu = [
            gpu_range("layer_1", &[154], 1_000),
            gpu_range("layer_1.work", &[154], 995),
        ];
        let items = advise(&host, Some(&gpu), 1_000);
        assert_eq!(kinds(&items), [(AdviceKind::HostBound, "layer_1.work")]);
        assert!((items[0].projected_to_host_inclusive.unwrap() - 154.0 / 995.0).abs() < 1e-12);
    }

    #[test]
    fn the_share_and_the_ratio_are_limits_at_which_the_rule_applies() {
        // Exactly 5 % exclusive, projection exactly half of inclusive: GPU-bound, not host-bound.
        let host = [host_range("a", &[(50, 50)]), host_range("b", &[(50, 50)])];
        let gpu = [gpu_range("a", &[25], 50), gpu_range("b", &[24], 50)];
        let items = advise(&host, Some(&gpu), 1_000);
        assert_eq!(
            kinds(&items),
            [(AdviceKind::HostBound, "b"), (AdviceKind::GpuBound, "a")]
        );
        // Just under 5 %: nothing.
        let items = advise(&host, Some(&gpu), 1_001);
        assert!(items.is_empty(), "{items:?}");
    }

    #[test]
    fn a_gpu_bound_range_holding_a_gpu_bound_range_leaves_the_item_to_it() {
        let host = [
            host_range("outer", &[(900, 100)]),
            host_range("outer.inner", &[(800, 800)]),
            host_range("other", &[(100, 100)]),
        ];
        let gpu = [
            gpu_range("outer", &[700], 900),
            gpu_range("outer.inner", &[650], 800),
            gpu_range("other", &[90], 100),
        ];
        let items = advise(&host, Some(&gpu), 1_000);
        assert_eq!(
            kinds(&items),
            [
                (AdviceKind::GpuBound, "outer.inner"),
                (AdviceKind::GpuBound, "other")
            ]
        );
        // A range named with a dot is no child of the range named like its first part.
        let host = [
            host_range("a", &[(400, 400)]),
            host_range("a.b", &[(400, 400)]),
        ];
        let mut flat = gpu_range("a.b", &[300], 400);
        flat.path = vec!["a.b".to_owned()];
        let mut flat_host = host[1].clone();
        flat_host.path = vec!["a.b".to_owned()];
        let items = advise(
            &[host[0].clone(), flat_host],
            Some(&[gpu_range("a", &[300], 400), flat]),
            1_000,
        );
        assert_eq!(
            kinds(&items),
            [(AdviceKind::GpuBound, "a"), (AdviceKind::GpuBound, "a.b")]
        );
    }

    #[test]
    fn without_a_projection_the_largest_exclusive_time_is_the_one_item() {
        let (host, _) = llama();
        let items = advise(&host, None, 2_000);
        assert_eq!(
            kinds(&items),
            [(
                AdviceKind::NoGpuProjection,
                "layer_#_token_#.forward_layer_#"
            )]
        );
        assert_eq!(items[0].projected_ns, None);
        // Under the share: no item.
        let items = advise(&host, None, 1_000_000);
        assert!(items.is_empty());
        // No counted iteration: no item.
        assert!(advise(&host, None, 0).is_empty());
    }

    #[test]
    fn with_a_projection_a_range_that_launched_nothing_is_host_bound() {
        let host = [
            host_range("load", &[(300, 300)]),
            host_range("run", &[(700, 700)]),
        ];
        let gpu = [gpu_range("run", &[650], 700)];
        let items = advise(&host, Some(&gpu), 1_000);
        assert_eq!(
            kinds(&items),
            [
                (AdviceKind::HostBound, "load"),
                (AdviceKind::GpuBound, "run")
            ]
        );
        assert_eq!(items[0].projected_ns, None);
        // A projection with no GPU work in any range: host-bound by exclusive time alone.
        let items = advise(&host, Some(&[]), 1_000);
        assert_eq!(
            kinds(&items),
            [
                (AdviceKind::HostBound, "run"),
                (AdviceKind::HostBound, "load")
            ]
        );
    }

    #[test]
    fn ties_go_by_group_and_each_kind_is_capped() {
        let names = ["e", "d", "c", "b", "a"];
        let host: Vec<HostRange> = names.iter().map(|n| host_range(n, &[(100, 100)])).collect();
        let items = advise(&host, Some(&[]), 1_000);
        assert_eq!(
            kinds(&items),
            [
                (AdviceKind::HostBound, "a"),
                (AdviceKind::HostBound, "b"),
                (AdviceKind::HostBound, "c")
            ]
        );
        let gpu: Vec<GpuProjectedRange> = names.iter().map(|n| gpu_range(n, &[80], 100)).collect();
        let items = advise(&host, Some(&gpu), 1_000);
        assert_eq!(
            kinds(&items),
            [
                (AdviceKind::GpuBound, "a"),
                (AdviceKind::GpuBound, "b"),
                (AdviceKind::GpuBound, "c")
            ]
        );
        // Without a projection, the tie also goes to the first group.
        let items = advise(&host, None, 1_000);
        assert_eq!(kinds(&items), [(AdviceKind::NoGpuProjection, "a")]);
        // Larger totals first, whatever the names.
        let host = [
            host_range("a", &[(100, 100)]),
            host_range("z", &[(200, 200)]),
        ];
        let items = advise(&host, Some(&[]), 1_000);
        assert_eq!(
            kinds(&items),
            [(AdviceKind::HostBound, "z"), (AdviceKind::HostBound, "a")]
        );
    }

    #[test]
    fn a_group_of_one_name_is_shown_by_that_name() {
        let host = [host_range("step_3", &[(500, 500)])];
        let items = advise(&host, Some(&[]), 1_000);
        assert_eq!(
            (items[0].range.as_str(), items[0].group.as_str()),
            ("step_3", "step_#")
        );
        assert_eq!(items[0].path, ["step_#"]);
    }

    #[test]
    fn kernels_go_to_the_gpu_bound_items_only() {
        let (host, gpu) = llama();
        let mut items = advise(&host, Some(&gpu), 2_000);
        assert_eq!(
            kernel_groups(&items),
            ["layer_#_token_#.forward_layer_#".to_owned()]
        );
        let mix = |launches| AdviceKernels {
            launches,
            total_ns: 10,
            kernels: Vec::new(),
            other_kernels: None,
        };
        let by_group = [
            ("layer_#_token_#.forward_layer_#".to_owned(), mix(4)),
            ("layer_#_token_#.ensure_layer_#_weights".to_owned(), mix(9)),
        ]
        .into_iter()
        .collect();
        attach_kernels(&mut items, by_group);
        assert_eq!(items[0].kernels, None);
        assert_eq!(items[1].kernels, Some(mix(4)));
    }
}
