//! The GPU work of several traces as one (a distributed run recorded one trace per rank): the
//! kernel tables summed by name, the GPU traces' devices, copies and memsets summed, their
//! launches and copies kept with names interned anew and correlation ids made distinct.

use std::collections::BTreeMap;

use super::share;
use super::trace::{CopyLaunch, GpuTraceParts, KernelLaunch};
use crate::reports::{Interner, NameId};
use nsys_gate_core::artifact::{DeviceCopies, GpuDevice, KernelStats, MemoryCopies, Memsets};

/// `gpu_work.kernels` of several traces as one: rows of one name summed (a name of one trace
/// keeps its median; of several, its median is unknown and its standard deviation pooled),
/// shares of the whole, largest total first.
pub fn merge_kernel_tables(tables: Vec<Vec<KernelStats>>) -> Vec<KernelStats> {
    let mut by_name: BTreeMap<String, Vec<KernelStats>> = BTreeMap::new();
    for k in tables.into_iter().flatten() {
        by_name.entry(k.name.clone()).or_default().push(k);
    }
    let all: i128 = by_name
        .values()
        .flatten()
        .map(|k| i128::from(k.total_ns))
        .sum();
    let mut out: Vec<KernelStats> = by_name
        .into_values()
        .map(|parts| {
            let mut merged = if parts.len() == 1 {
                parts[0].clone()
            } else {
                let instances: u64 = parts.iter().map(|k| k.instances).sum();
                let total: i64 = parts.iter().map(|k| k.total_ns).sum();
                let mean = if instances > 0 {
                    total as f64 / instances as f64
                } else {
                    0.0
                };
                KernelStats {
                    name: parts[0].name.clone(),
                    base_name: parts.iter().find_map(|k| k.base_name.clone()),
                    instances,
                    total_ns: total,
                    mean_ns: mean,
                    median_ns: None,
                    minimum_ns: parts.iter().map(|k| k.minimum_ns).min().unwrap_or(0),
                    maximum_ns: parts.iter().map(|k| k.maximum_ns).max().unwrap_or(0),
                    stddev_ns: pooled_stddev(&parts, mean),
                    share: 0.0,
                }
            };
            merged.share = share(i128::from(merged.total_ns), all);
            merged
        })
        .collect();
    out.sort_by(|a, b| {
        b.total_ns
            .cmp(&a.total_ns)
            .then_with(|| a.name.cmp(&b.name))
    });
    out
}

/// The sample standard deviation of kernels of one name merged (n - 1), from their own.
fn pooled_stddev(parts: &[KernelStats], mean: f64) -> Option<f64> {
    let n: u64 = parts.iter().map(|k| k.instances).sum();
    if n < 2 {
        return Some(0.0);
    }
    let mut sum = 0.0;
    for k in parts.iter().filter(|k| k.instances > 0) {
        let count = k.instances as f64;
        let s = k.stddev_ns?;
        sum += (count - 1.0) * s * s + count * (k.mean_ns - mean) * (k.mean_ns - mean);
    }
    Some((sum / (n as f64 - 1.0)).sqrt())
}

/// One trace's GPU-trace parts, with the interner of its names and what its correlation ids
/// are moved by.
pub struct TraceParts<'a> {
    pub parts: GpuTraceParts,
    pub names: &'a Interner,
    pub corr_offset: u64,
}

/// The GPU traces of several traces as one: devices summed by `NAME (ID)`, copy groups by
/// kind and memory kinds, memsets; launches and copies with their names in the returned
/// interner and their correlation ids moved by their trace's offset.
pub fn merge_trace_parts(traces: Vec<TraceParts<'_>>) -> (GpuTraceParts, Interner) {
    let mut names = Interner::new();
    let mut devices: BTreeMap<String, GpuDevice> = BTreeMap::new();
    let mut copies: BTreeMap<(String, Option<String>, Option<String>), MemoryCopies> =
        BTreeMap::new();
    let mut memsets = Memsets {
        count: 0,
        bytes: 0,
        total_ns: 0,
    };
    let mut launches = Vec::new();
    let mut copy_launches = Vec::new();
    let mut kernels = 0;
    for t in traces {
        let mut move_name = |id: NameId| names.intern(t.names.resolve(id));
        for d in t.parts.devices {
            match devices.get_mut(&d.device) {
                None => {
                    devices.insert(d.device.clone(), d);
                }
                Some(e) => add_device(e, d),
            }
        }
        for c in t.parts.memory_copies {
            let key = (c.copy_kind.clone(), c.source.clone(), c.destination.clone());
            match copies.get_mut(&key) {
                None => {
                    copies.insert(key, c);
                }
                Some(e) => {
                    e.count += c.count;
                    e.bytes = e.bytes.saturating_add(c.bytes);
                    e.total_ns = e.total_ns.saturating_add(c.total_ns);
                    e.bandwidth_bytes_per_s =
                        (e.total_ns > 0).then(|| e.bytes as f64 * 1e9 / e.total_ns as f64);
                }
            }
        }
        memsets.count += t.parts.memsets.count;
        memsets.bytes = memsets.bytes.saturating_add(t.parts.memsets.bytes);
        memsets.total_ns = memsets.total_ns.saturating_add(t.parts.memsets.total_ns);
        launches.extend(t.parts.launches.into_iter().map(|k| KernelLaunch {
            corr_id: k.corr_id + t.corr_offset,
            name: move_name(k.name),
            ..k
        }));
        copy_launches.extend(t.parts.copies.into_iter().map(|c| {
            let (name, src, dst) = c.kind;
            CopyLaunch {
                corr_id: c.corr_id + t.corr_offset,
                kind: (
                    move_name(name),
                    src.map(&mut move_name),
                    dst.map(&mut move_name),
                ),
                ..c
            }
        }));
        kernels += t.parts.kernels;
    }
    let mut memory_copies: Vec<MemoryCopies> = copies.into_values().collect();
    memory_copies.sort_by(|a, b| {
        b.total_ns
            .cmp(&a.total_ns)
            .then_with(|| a.copy_kind.cmp(&b.copy_kind))
            .then_with(|| a.source.cmp(&b.source))
            .then_with(|| a.destination.cmp(&b.destination))
    });
    let parts = GpuTraceParts {
        devices: devices.into_values().collect(),
        memory_copies,
        memsets,
        launches,
        copies: copy_launches,
        kernels,
    };
    (parts, names)
}

/// Adds a device's counts (of another trace) to the same device's.
fn add_device(into: &mut GpuDevice, d: GpuDevice) {
    let sum = |a: Option<i64>, b: Option<i64>| Some(a?.saturating_add(b?));
    into.kernels += d.kernels;
    into.memory_operations += d.memory_operations;
    into.kernel_total_ns = sum(into.kernel_total_ns, d.kernel_total_ns);
    into.memory_total_ns = sum(into.memory_total_ns, d.memory_total_ns);
    into.memory_copies = match (into.memory_copies.take(), d.memory_copies) {
        (Some(a), Some(b)) => {
            let mut by_kind: BTreeMap<String, DeviceCopies> = BTreeMap::new();
            for c in a.into_iter().chain(b) {
                match by_kind.get_mut(&c.copy_kind) {
                    None => {
                        by_kind.insert(c.copy_kind.clone(), c);
                    }
                    Some(e) => {
                        e.count += c.count;
                        e.bytes = e.bytes.saturating_add(c.bytes);
                        e.total_ns = e.total_ns.saturating_add(c.total_ns);
                    }
                }
            }
            let mut list: Vec<DeviceCopies> = by_kind.into_values().collect();
            list.sort_by(|a, b| {
                b.total_ns
                    .cmp(&a.total_ns)
                    .then_with(|| a.copy_kind.cmp(&b.copy_kind))
            });
            Some(list)
        }
        _ => None,
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kernel(name: &str, instances: u64, total: i64, min: i64, max: i64, sd: f64) -> KernelStats {
        KernelStats {
            name: name.to_owned(),
            base_name: Some(name.to_owned()),
            instances,
            total_ns: total,
            mean_ns: total as f64 / instances as f64,
            median_ns: Some(total as f64 / instances as f64),
            minimum_ns: min,
            maximum_ns: max,
            stddev_ns: Some(sd),
            share: 1.0,
        }
    }

    /// A kernel of two traces is summed without a median; one of a single trace keeps its
    /// own; shares are of the whole.
    #[test]
    fn kernel_tables_merge_by_name() {
        let merged = merge_kernel_tables(vec![
            vec![
                kernel("a", 2, 20, 10, 10, 0.0),
                kernel("b", 1, 40, 40, 40, 0.0),
            ],
            vec![kernel("a", 2, 40, 20, 20, 0.0)],
        ]);
        assert_eq!(merged.len(), 2);
        let a = &merged[0];
        assert_eq!((a.name.as_str(), a.instances, a.total_ns), ("a", 4, 60));
        assert_eq!((a.minimum_ns, a.maximum_ns, a.median_ns), (10, 20, None));
        assert!((a.stddev_ns.unwrap() - (100.0f64 / 3.0).sqrt()).abs() < 1e-9);
        assert!((a.share - 0.6).abs() < 1e-12);
        assert_eq!(merged[1].median_ns, Some(40.0));
        assert!((merged[1].share - 0.4).abs() < 1e-12);
    }

    fn device(name: &str, id: u64, kernels: u64) -> GpuDevice {
        GpuDevice {
            device: format!("{name} ({id})"),
            name: Some(name.to_owned()),
            id: Some(id),
            kernels,
            kernel_total_ns: Some(kernels as i64 * 10),
            memory_total_ns: Some(0),
            memory_copies: Some(vec![DeviceCopies {
                copy_kind: "Peer-to-Peer".to_owned(),
                count: 1,
                bytes: 8,
                total_ns: 3,
            }]),
            ..GpuDevice::default()
        }
    }

    /// Devices of two traces: each its own, one device seen in both summed; launches keep
    /// their names and get distinct correlation ids.
    #[test]
    fn trace_parts_merge_devices_and_keep_launches_apart() {
        let mut first_names = Interner::new();
        let gemm = first_names.intern("gemm");
        let mut second_names = Interner::new();
        second_names.intern("other");
        let nccl = second_names.intern("nccl");
        let launch = |corr_id, name, device| KernelLaunch {
            corr_id,
            start_ns: 0,
            duration_ns: 1,
            name,
            device,
        };
        let parts = |devices, launches| GpuTraceParts {
            devices,
            memory_copies: Vec::new(),
            memsets: Memsets {
                count: 1,
                bytes: 4,
                total_ns: 2,
            },
            launches,
            copies: Vec::new(),
            kernels: 3,
        };
        let (merged, names) = merge_trace_parts(vec![
            TraceParts {
                parts: parts(vec![device("A", 0, 3)], vec![launch(5, gemm, 0)]),
                names: &first_names,
                corr_offset: 0,
            },
            TraceParts {
                parts: parts(
                    vec![device("A", 0, 1), device("A", 1, 2)],
                    vec![launch(5, nccl, 1)],
                ),
                names: &second_names,
                corr_offset: 6,
            },
        ]);
        let ids: Vec<(Option<u64>, u64)> =
            merged.devices.iter().map(|d| (d.id, d.kernels)).collect();
        assert_eq!(ids, [(Some(0), 4), (Some(1), 2)]);
        assert_eq!(merged.devices[0].kernel_total_ns, Some(40));
        assert_eq!(
            merged.devices[0].memory_copies.as_ref().unwrap()[0].count,
            2
        );
        assert_eq!((merged.memsets.count, merged.kernels), (2, 6));
        let launches: Vec<(u64, &str, u32)> = merged
            .launches
            .iter()
            .map(|k| (k.corr_id, names.resolve(k.name), k.device))
            .collect();
        assert_eq!(launches, [(5, "gemm", 0), (11, "nccl", 1)]);
    }
}
