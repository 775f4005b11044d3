//! `gpu_work.kernels_by_base_name`: the kernel table summed by base name, with each base
//! name's time inside the counted iterations and the range groups that launched it; and the
//! memory copies' time inside the counted iterations, when their launching calls are known.

use std::collections::BTreeMap;

use super::super::ranges::clamp;
use super::mix::BaseNameLaunches;
use super::trace::{CopyKey, Totals};
use nsys_gate_core::artifact::{
    kernel_base_name, KernelBaseName, KernelStats, LaunchingGroup, MemoryCopies, LAUNCHING_GROUPS,
};

/// What the counted iterations launched, by base name ([`super::KernelMix::by_base_name`]),
/// and how many iterations were counted.
pub struct IterationLaunches<'a> {
    pub iterations: u64,
    pub by_base_name: &'a BTreeMap<String, BaseNameLaunches>,
}

/// `kernels` summed by base name (`base_name`, derived when absent), largest total first
/// (then by base name), each with its launches and time inside the counted iterations when
/// `iterations` gives them (a base name they lack: 0). A base name only the iterations have
/// (a kernel `kernels` lacks) is listed with its iteration numbers and no capture total.
pub fn kernels_by_base_name(
    kernels: &[KernelStats],
    iterations: Option<&IterationLaunches<'_>>,
) -> Vec<KernelBaseName> {
    let mut sums: BTreeMap<&str, (u64, u64, i128)> = BTreeMap::new();
    for k in kernels {
        let base = k
            .base_name
            .as_deref()
            .unwrap_or_else(|| kernel_base_name(&k.name));
        let e = sums.entry(base).or_default();
        e.0 += 1;
        e.1 += k.instances;
        e.2 += i128::from(k.total_ns);
    }
    for base in iterations.iter().flat_map(|i| i.by_base_name.keys()) {
        sums.entry(base.as_str()).or_default();
    }
    let empty = BaseNameLaunches::default();
    let mut out: Vec<KernelBaseName> = sums
        .into_iter()
        .map(|(base, (names, instances, total))| {
            let (iteration_launches, iteration_total_ns, per_iteration_ns, launched_by) =
                match iterations {
                    None => (None, None, None, None),
                    Some(it) => {
                        let l = it.by_base_name.get(base).unwrap_or(&empty);
                        let per_iteration =
                            (it.iterations > 0).then(|| l.total_ns as f64 / it.iterations as f64);
                        (
                            Some(l.launches),
                            Some(clamp(l.total_ns)),
                            per_iteration,
                            Some(launching_groups(l)),
                        )
                    }
                };
            KernelBaseName {
                base_name: base.to_owned(),
                names,
                instances,
                total_ns: clamp(total),
                iteration_launches,
                iteration_total_ns,
                per_iteration_ns,
                launched_by,
            }
        })
        .collect();
    out.sort_by(|a, b| {
        b.total_ns
            .cmp(&a.total_ns)
            .then_with(|| a.base_name.cmp(&b.base_name))
    });
    out
}

/// The groups that launched most of `l`'s time: largest first (then by name), until they hold
/// more than half of it, at most [`LAUNCHING_GROUPS`].
fn launching_groups(l: &BaseNameLaunches) -> Vec<LaunchingGroup> {
    let mut groups: Vec<(&String, i128)> = l.by_group.iter().map(|(g, &t)| (g, t)).collect();
    groups.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    let mut listed = Vec::new();
    let mut held = 0i128;
    for (group, total) in groups {
        if listed.len() == LAUNCHING_GROUPS || 2 * held > l.total_ns {
            break;
        }
        held += total;
        listed.push(LaunchingGroup {
            group: group.clone(),
            total_ns: clamp(total),
        });
    }
    listed
}

/// Sets the copies' `iteration_*` fields and `per_iteration_ns` from what the counted
/// iterations launched (`by_group`, over `iterations` iterations): a group they did not
/// launch has 0. Without it the fields stay `null`.
pub fn attach_iteration_copies(
    copies: &mut [MemoryCopies],
    launched: Option<(&BTreeMap<CopyKey, Totals>, u64)>,
) {
    let Some((by_group, iterations)) = launched else {
        return;
    };
    for c in copies {
        let key = (c.copy_kind.clone(), c.source.clone(), c.destination.clone());
        let t = by_group.get(&key).copied().unwrap_or_default();
        c.iteration_count = Some(t.count);
        c.iteration_bytes = Some(t.bytes);
        c.iteration_total_ns = Some(clamp(t.total_ns));
        c.per_iteration_ns = (iterations > 0).then(|| t.total_ns as f64 / iterations as f64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kernel(name: &str, base: Option<&str>, instances: u64, total_ns: i64) -> KernelStats {
        KernelStats {
            name: name.to_owned(),
            base_name: base.map(str::to_owned),
            instances,
            total_ns,
            mean_ns: total_ns as f64 / instances as f64,
            median_ns: None,
            minimum_ns: 0,
            maximum_ns: 0,
            stddev_ns: None,
            share: 0.0,
        }
    }

    fn launched(launches: u64, groups: &[(&str, i128)], outside: i128) -> BaseNameLaunches {
        BaseNameLaunches {
            launches,
            total_ns: groups.iter().map(|g| g.1).sum::<i128>() + outside,
            by_group: groups.iter().map(|(g, t)| ((*g).to_owned(), *t)).collect(),
        }
    }

    /// Base name, names, instances, total, and the iterations' launches, total, per iteration.
    type Row<'a> = (
        &'a str,
        u64,
        u64,
        i64,
        Option<u64>,
        Option<i64>,
        Option<f64>,
    );

    /// Kernels sharing a base name are summed (the report's `gemm [1]`, `gemm [2]`); a kernel
    /// without a base name (an older file) gets the derived one.
    #[test]
    fn kernels_are_summed_by_base_name_with_their_iterations() {
        let kernels = [
            kernel("void gemm<float>(float*)", Some("gemm"), 10, 500),
            kernel("relu", Some("relu"), 4, 300),
            kernel("void gemm<half>(half*)", None, 6, 200),
            kernel("copy_kernel", Some("copy_kernel"), 1, 7),
        ];
        let by_base: BTreeMap<String, BaseNameLaunches> = [
            ("gemm".to_owned(), launched(8, &[("layer_#.fwd", 600)], 0)),
            ("relu".to_owned(), launched(4, &[("layer_#.fwd", 100)], 180)),
            // Attributed but missing from the kernel table (never seen from real nsys).
            ("stray".to_owned(), launched(1, &[], 3)),
        ]
        .into_iter()
        .collect();
        let it = IterationLaunches {
            iterations: 4,
            by_base_name: &by_base,
        };
        let table = kernels_by_base_name(&kernels, Some(&it));
        let got: Vec<Row> = table
            .iter()
            .map(|k| {
                (
                    k.base_name.as_str(),
                    k.names,
                    k.instances,
                    k.total_ns,
                    k.iteration_launches,
                    k.iteration_total_ns,
                    k.per_iteration_ns,
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("gemm", 2, 16, 700, Some(8), Some(600), Some(150.0)),
                ("relu", 1, 4, 300, Some(4), Some(280), Some(70.0)),
                // Launched only outside the counted iterations: 0, not null.
                ("copy_kernel", 1, 1, 7, Some(0), Some(0), Some(0.0)),
                ("stray", 0, 0, 0, Some(1), Some(3), Some(0.75)),
            ]
        );
        let groups = |i: usize| -> Vec<(&str, i64)> {
            let l = table[i].launched_by.as_ref().unwrap();
            l.iter().map(|g| (g.group.as_str(), g.total_ns)).collect()
        };
        assert_eq!(groups(0), [("layer_#.fwd", 600)]);
        // Most of relu's time was launched outside every range: its one group, all the same.
        assert_eq!(groups(1), [("layer_#.fwd", 100)]);
        assert_eq!(groups(2), []);

        // No attribution: the capture's totals, the rest null.
        let table = kernels_by_base_name(&kernels, None);
        assert_eq!(table.len(), 3);
        assert!(table.iter().all(|k| k.iteration_launches.is_none()
            && k.iteration_total_ns.is_none()
            && k.per_iteration_ns.is_none()
            && k.launched_by.is_none()));
        // No counted iteration: nothing per iteration.
        let none = IterationLaunches {
            iterations: 0,
            by_base_name: &by_base,
        };
        let table = kernels_by_base_name(&kernels, Some(&none));
        assert_eq!(table[0].iteration_total_ns, Some(600));
        assert_eq!(table[0].per_iteration_ns, None);
    }

    /// Largest first until more than half is held, at most three.
    #[test]
    fn the_launching_groups_hold_most_of_the_time() {
        let names = |l: &BaseNameLaunches| -> Vec<String> {
            launching_groups(l).into_iter().map(|g| g.group).collect()
        };
        assert_eq!(
            names(&launched(3, &[("a", 60), ("b", 30), ("c", 10)], 0)),
            ["a"]
        );
        // 50 is not more than half of 100: the next one too.
        assert_eq!(
            names(&launched(3, &[("b", 50), ("a", 50), ("c", 0)], 0)),
            ["a", "b"]
        );
        assert_eq!(
            names(&launched(
                5,
                &[("a", 20), ("b", 20), ("c", 20), ("d", 20), ("e", 20)],
                0
            )),
            ["a", "b", "c"]
        );
        assert_eq!(names(&launched(1, &[("a", 10)], 90)), ["a"]);
        assert!(names(&launched(0, &[], 0)).is_empty());
    }

    #[test]
    fn copies_get_their_iterations_when_they_were_placed() {
        let copy = |kind: &str, source: &str| MemoryCopies {
            copy_kind: kind.to_owned(),
            source: Some(source.to_owned()),
            destination: Some("Device".to_owned()),
            count: 10,
            bytes: 1_000,
            total_ns: 900,
            bandwidth_bytes_per_s: None,
            pageable_host: false,
            iteration_count: None,
            iteration_bytes: None,
            iteration_total_ns: None,
            per_iteration_ns: None,
        };
        let mut copies = vec![
            copy("Host-to-Device", "Pageable"),
            copy("Host-to-Device", "Pinned"),
        ];
        attach_iteration_copies(&mut copies, None);
        assert!(copies[0].iteration_total_ns.is_none());
        let key = (
            "Host-to-Device".to_owned(),
            Some("Pageable".to_owned()),
            Some("Device".to_owned()),
        );
        let t = Totals {
            count: 4,
            bytes: 400,
            total_ns: 300,
        };
        let launched: BTreeMap<CopyKey, Totals> = [(key, t)].into_iter().collect();
        attach_iteration_copies(&mut copies, Some((&launched, 4)));
        let got: Vec<_> = copies
            .iter()
            .map(|c| {
                (
                    c.iteration_count,
                    c.iteration_bytes,
                    c.iteration_total_ns,
                    c.per_iteration_ns,
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                (Some(4), Some(400), Some(300), Some(75.0)),
                (Some(0), Some(0), Some(0), Some(0.0)),
            ]
        );
    }

    /// The bytes analysis.json spends on `kernels_by_base_name` against `kernels`, with
    /// 100,000 distinct kernel names (Triton's, each its own base name: the most entries
    /// there can be), each launched 16 times inside one range group of the public llama3
    /// trace's shape: at most what `kernels` costs (28.3 MB against 29.9 MB).
    #[test]
    fn the_base_names_cost_no_more_than_the_kernel_table() {
        use nsys_gate_core::artifact::{fake, GpuWork};
        const NAMES: usize = 100_000;
        let kernels: Vec<KernelStats> = (0..NAMES)
            .map(|i| {
                let name = format!("triton_poi_fused__to_copy_add_mul_{i}");
                let total = 123_456 + i as i64;
                KernelStats {
                    base_name: Some(name.clone()),
                    name,
                    instances: 16,
                    total_ns: total,
                    mean_ns: total as f64 / 16.0,
                    median_ns: Some(7_700.5),
                    minimum_ns: 7_000,
                    maximum_ns: 9_000,
                    stddev_ns: Some(512.345_678_901_234_5),
                    share: total as f64 / 1.3e10,
                }
            })
            .collect();
        let by_base: BTreeMap<String, BaseNameLaunches> = kernels
            .iter()
            .map(|k| {
                let group = [("layer_#_token_#.forward_layer_#", i128::from(k.total_ns))];
                (k.name.clone(), launched(16, &group, 0))
            })
            .collect();
        let it = IterationLaunches {
            iterations: 16,
            by_base_name: &by_base,
        };
        let bytes = |work: GpuWork| {
            let mut a = fake::analysis(&[1_000_000], &[], true);
            a.gpu_work = Some(work);
            a.to_json().len()
        };
        let empty = bytes(GpuWork::default());
        let table = bytes(GpuWork {
            kernels: Some(kernels.clone()),
            ..GpuWork::default()
        }) - empty;
        let by_base_name = bytes(GpuWork {
            kernels_by_base_name: Some(kernels_by_base_name(&kernels, Some(&it))),
            ..GpuWork::default()
        }) - empty;
        assert!(
            by_base_name <= table,
            "{NAMES} kernel names: kernels_by_base_name {by_base_name} bytes, kernels {table}"
        );
    }
}
