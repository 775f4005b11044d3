//! The GPU work of the capture, from NVIDIA's GPU-work reports.
//!
//! Owns the rules of `gpu_work`:
//! - **kernels** (`cuda_gpu_kern_sum`): one entry per kernel name (nsys 2022.4 splits a name
//!   by grid and block: those rows are merged; their median is then unknown), the share of all
//!   kernel time computed from the totals;
//! - **memory copies and memsets** (`cuda_gpu_trace`, read in one pass into a
//!   [`GpuTraceSummary`]: copies grouped by copy kind, source and destination memory kind as
//!   they stream by, memsets counted apart, kernels kept as 24-byte launches for the join);
//!   `pageable_memory_copies` when host-to-device or device-to-host copies use pageable host
//!   memory;
//! - **devices**: the `Device` column's distinct values (`NAME (ID)`);
//! - **kernels per range**: each kernel is attributed to the innermost push/pop range on its
//!   launching thread that contains its CUDA API call (`cuda_api_trace`, joined on
//!   `CorrId`; contained as nsys's projection has it: the range starts at or before the call
//!   and ends at or after it), with the range tables' scoped names and counted iterations. A
//!   range's mix holds the kernels of the ranges nested in it, as its projection does. A
//!   correlation id seen on calls of more than one process cannot be joined (nsys's GPU trace
//!   has no process column): those kernels are counted as ambiguous and left out.

use rustc_hash::FxHashMap;

use super::iterations::Measured;
use super::ranges::{clamp, Scopes};
use super::tree::{Tree, NONE};
use super::wording::plural;
use crate::artifact::{
    GpuDevice, GpuProjectedRange, HostRange, IterationKernels, KernelAttribution, KernelStats,
    MemoryCopies, Memsets, OtherKernels, RangeKernel, RangeKernels, Warning, WarningCode,
};
use crate::reports::{ApiCall, GpuOpRow, Interner, KernelSummaryRow, NameId, PushPopRow};

/// Kernels named in a range's mix; the others are summed in `other_kernels`.
pub const TOP_KERNELS: usize = 5;
/// Ranges in `per_range_kernels`.
pub const TOP_RANGES: usize = 10;

/// `cuda_gpu_kern_sum`'s rows as `gpu_work.kernels`: merged by name, largest total first.
pub fn kernel_table(rows: &[KernelSummaryRow], names: &Interner) -> Vec<KernelStats> {
    let mut by_name: FxHashMap<NameId, Vec<&KernelSummaryRow>> = FxHashMap::default();
    for r in rows {
        by_name.entry(r.name).or_default().push(r);
    }
    let all: i128 = rows.iter().map(|r| i128::from(r.total_ns)).sum();
    let mut out: Vec<KernelStats> = by_name
        .into_iter()
        .map(|(name, parts)| {
            let instances: u64 = parts.iter().map(|r| r.instances).sum();
            let total: i64 = parts.iter().map(|r| r.total_ns).sum();
            let (mean, median, stddev) = match parts.as_slice() {
                [one] => (one.mean_ns, Some(one.median_ns), one.stddev_ns),
                _ => {
                    let mean = if instances > 0 {
                        total as f64 / instances as f64
                    } else {
                        0.0
                    };
                    (mean, None, pooled_stddev(&parts, mean))
                }
            };
            KernelStats {
                name: names.resolve(name).to_owned(),
                instances,
                total_ns: total,
                mean_ns: mean,
                median_ns: median,
                minimum_ns: parts.iter().map(|r| r.minimum_ns).min().unwrap_or(0),
                maximum_ns: parts.iter().map(|r| r.maximum_ns).max().unwrap_or(0),
                stddev_ns: stddev,
                share: share(i128::from(total), all),
            }
        })
        .collect();
    out.sort_by(|a, b| {
        b.total_ns
            .cmp(&a.total_ns)
            .then_with(|| a.name.cmp(&b.name))
    });
    out
}

/// The sample standard deviation of rows merged into one (n - 1), from their own.
fn pooled_stddev(parts: &[&KernelSummaryRow], mean: f64) -> Option<f64> {
    let n: u64 = parts.iter().map(|r| r.instances).sum();
    if n < 2 {
        return Some(0.0);
    }
    let mut sum = 0.0;
    for r in parts {
        let k = r.instances as f64;
        let s = r.stddev_ns?;
        let m = r.total_ns as f64 / k;
        sum += (k - 1.0) * s * s + k * (m - mean) * (m - mean);
    }
    Some((sum / (n as f64 - 1.0)).sqrt())
}

fn share(part: i128, all: i128) -> f64 {
    if all > 0 {
        part as f64 / all as f64
    } else {
        0.0
    }
}

/// A kernel as the join needs it: its correlation id, duration and name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelLaunch {
    pub corr_id: u64,
    pub duration_ns: i64,
    pub name: NameId,
}

#[derive(Debug, Default, Clone, Copy)]
struct Totals {
    count: u64,
    bytes: u64,
    total_ns: i128,
}

impl Totals {
    #[inline]
    fn add(&mut self, other: Totals) {
        self.count += other.count;
        self.bytes = self.bytes.saturating_add(other.bytes);
        self.total_ns += other.total_ns;
    }
}

#[derive(Debug, Default, Clone, Copy)]
struct DeviceCounts {
    kernels: u64,
    memory: u64,
}

/// `cuda_gpu_trace` as it streams by: memory operations grouped by (name, source, destination),
/// devices counted, kernels kept as [`KernelLaunch`]es. Names are resolved in
/// [`GpuTraceSummary::finish`] (the interner is the reader's while it reads).
#[derive(Debug, Default)]
pub struct GpuTraceSummary {
    launches: Vec<KernelLaunch>,
    memory: FxHashMap<(NameId, Option<NameId>, Option<NameId>), Totals>,
    devices: FxHashMap<Option<NameId>, DeviceCounts>,
}

impl Extend<GpuOpRow> for GpuTraceSummary {
    fn extend<I: IntoIterator<Item = GpuOpRow>>(&mut self, rows: I) {
        for row in rows {
            let device = self.devices.entry(row.device).or_default();
            match row.bytes {
                None => {
                    device.kernels += 1;
                    if let Some(corr_id) = row.corr_id {
                        self.launches.push(KernelLaunch {
                            corr_id,
                            duration_ns: row.duration_ns,
                            name: row.name,
                        });
                    }
                }
                Some(bytes) => {
                    device.memory += 1;
                    self.memory
                        .entry((row.name, row.src, row.dst))
                        .or_default()
                        .add(Totals {
                            count: 1,
                            bytes,
                            total_ns: i128::from(row.duration_ns),
                        });
                }
            }
        }
    }
}

/// What `cuda_gpu_trace` gives `gpu_work`.
#[derive(Debug, Clone, PartialEq)]
pub struct GpuTraceParts {
    pub devices: Vec<GpuDevice>,
    pub memory_copies: Vec<MemoryCopies>,
    pub memsets: Memsets,
    /// Every kernel row's launch (those with a correlation id).
    pub launches: Vec<KernelLaunch>,
    /// Kernel rows, with a correlation id or not.
    pub kernels: u64,
}

const MEMSET: &str = "[CUDA memset]";

impl GpuTraceSummary {
    pub fn finish(self, names: &Interner) -> GpuTraceParts {
        let text = |id: Option<NameId>| id.map(|n| names.resolve(n).to_owned());
        let mut memsets = Totals::default();
        let mut copies: FxHashMap<(String, Option<String>, Option<String>), Totals> =
            FxHashMap::default();
        for ((name, src, dst), t) in self.memory {
            let name = names.resolve(name);
            if name == MEMSET {
                memsets.add(t);
            } else {
                copies
                    .entry((copy_kind(name), text(src), text(dst)))
                    .or_default()
                    .add(t);
            }
        }
        let mut memory_copies: Vec<MemoryCopies> = copies
            .into_iter()
            .map(|((copy_kind, source, destination), t)| {
                let total_ns = clamp(t.total_ns);
                let pageable_host =
                    is_pageable_host(&copy_kind, source.as_deref(), destination.as_deref());
                MemoryCopies {
                    copy_kind,
                    source,
                    destination,
                    count: t.count,
                    bytes: t.bytes,
                    total_ns,
                    bandwidth_bytes_per_s: (total_ns > 0)
                        .then(|| t.bytes as f64 * 1e9 / total_ns as f64),
                    pageable_host,
                }
            })
            .collect();
        memory_copies.sort_by(|a, b| {
            b.total_ns
                .cmp(&a.total_ns)
                .then_with(|| a.copy_kind.cmp(&b.copy_kind))
                .then_with(|| a.source.cmp(&b.source))
                .then_with(|| a.destination.cmp(&b.destination))
        });
        let kernels = self.devices.values().map(|c| c.kernels).sum();
        let mut devices: Vec<GpuDevice> = self
            .devices
            .into_iter()
            .map(|(device, counts)| {
                let device = text(device).unwrap_or_default();
                let (name, id) = split_device(&device);
                GpuDevice {
                    name,
                    id,
                    device,
                    kernels: counts.kernels,
                    memory_operations: counts.memory,
                }
            })
            .collect();
        devices.sort_by(|a, b| a.device.cmp(&b.device));
        GpuTraceParts {
            devices,
            memory_copies,
            memsets: Memsets {
                count: memsets.count,
                bytes: memsets.bytes,
                total_ns: clamp(memsets.total_ns),
            },
            launches: self.launches,
            kernels,
        }
    }
}

/// `[CUDA memcpy Host-to-Device]` -> `Host-to-Device`; nsys 2022.4's `[CUDA memcpy HtoD]` and
/// `[CUDA Unified Memory memcpy HtoD]` -> the newer labels (`Host-to-Device`, `Unified
/// Host-to-Device`), so that one kind has one name whichever nsys wrote it. Anything else is
/// kept as it is.
fn copy_kind(name: &str) -> String {
    const SHORT: &[(&str, &str)] = &[
        ("HtoD", "Host-to-Device"),
        ("DtoH", "Device-to-Host"),
        ("HtoA", "Host-to-Array"),
        ("AtoH", "Array-to-Host"),
        ("AtoA", "Array-to-Array"),
        ("AtoD", "Array-to-Device"),
        ("DtoA", "Device-to-Array"),
        ("DtoD", "Device-to-Device"),
        ("HtoH", "Host-to-Host"),
        ("PtoP", "Peer-to-Peer"),
    ];
    let inner = name
        .strip_prefix('[')
        .and_then(|n| n.strip_suffix(']'))
        .unwrap_or(name);
    let (unified, label) = if let Some(rest) = inner.strip_prefix("CUDA Unified Memory memcpy ") {
        (true, rest)
    } else if let Some(rest) = inner.strip_prefix("CUDA memcpy ") {
        (false, rest)
    } else {
        return name.to_owned();
    };
    let label = SHORT
        .iter()
        .find(|(short, _)| *short == label)
        .map_or(label, |(_, long)| long);
    if unified && !label.starts_with("Unified ") {
        format!("Unified {label}")
    } else {
        label.to_owned()
    }
}

/// A host-to-device copy from pageable memory, or a device-to-host copy into it.
fn is_pageable_host(kind: &str, source: Option<&str>, destination: Option<&str>) -> bool {
    match kind {
        "Host-to-Device" => source == Some("Pageable"),
        "Device-to-Host" => destination == Some("Pageable"),
        _ => false,
    }
}

/// `NVIDIA A100-SXM4-80GB (0)` -> (`NVIDIA A100-SXM4-80GB`, 0). nsys writes `printf('%s
/// (%d)')` of the device's name and id: a missing name leaves ` (0)`.
fn split_device(device: &str) -> (Option<String>, Option<u64>) {
    let Some((name, id)) = device
        .strip_suffix(')')
        .and_then(|d| d.rsplit_once(" ("))
        .or_else(|| {
            device
                .strip_suffix(')')
                .and_then(|d| d.strip_prefix('(').map(|i| ("", i)))
        })
    else {
        return ((!device.is_empty()).then(|| device.to_owned()), None);
    };
    match id.parse::<u64>() {
        Ok(id) => ((!name.trim().is_empty()).then(|| name.to_owned()), Some(id)),
        Err(_) => ((!device.is_empty()).then(|| device.to_owned()), None),
    }
}

/// `pageable_memory_copies`: host-to-device or device-to-host copies with pageable host memory.
pub fn pageable_warning(copies: &[MemoryCopies]) -> Option<Warning> {
    let pageable: Vec<&MemoryCopies> = copies.iter().filter(|c| c.pageable_host).collect();
    if pageable.is_empty() {
        return None;
    }
    let count: u64 = pageable.iter().map(|c| c.count).sum();
    let bytes: u64 = pageable.iter().fold(0, |b, c| b.saturating_add(c.bytes));
    let kinds: Vec<&str> = {
        let mut k: Vec<&str> = pageable.iter().map(|c| c.copy_kind.as_str()).collect();
        k.sort_unstable();
        k.dedup();
        k
    };
    Some(
        Warning::new(
            WarningCode::PageableMemoryCopies,
            format!(
                "{count} {} ({}, {} bytes) {} pageable host memory: each is staged through a pinned buffer and synchronous with the host; pinned host memory (`pin_memory=True`, `cudaHostAlloc`) lets copies overlap with other work",
                plural(count, "memory copy", "memory copies"),
                kinds.join(", "),
                bytes,
                if count == 1 { "uses" } else { "use" },
            ),
        )
        .with_count(count)
        .with_bytes(bytes),
    )
}

/// The CUDA API calls and the kernels they launched, with the kernels' names.
pub struct Launches<'a> {
    pub api: &'a [ApiCall],
    pub kernels: &'a [KernelLaunch],
    /// Kernel rows of `cuda_gpu_trace`, with a correlation id or not.
    pub kernel_rows: u64,
    pub names: &'a Interner,
}

/// The kernels of the counted iterations and of the ranges below them.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelMix {
    pub iteration: IterationKernels,
    pub ranges: Vec<RangeKernels>,
    pub attribution: KernelAttribution,
}

const AMBIGUOUS: u32 = u32::MAX - 1;

/// Attributes every kernel to the innermost range containing its launch, and sums the mixes.
pub(super) fn kernel_mix(
    tree: &Tree,
    rows: &[PushPopRow],
    counted: &[&Measured],
    scopes: &Scopes,
    launches: &Launches<'_>,
    host: &[HostRange],
    gpu: &[GpuProjectedRange],
) -> KernelMix {
    // The API calls that launched a kernel, by correlation id.
    let mut by_corr: FxHashMap<u64, u32> = FxHashMap::default();
    by_corr.reserve(launches.kernels.len());
    for k in launches.kernels {
        by_corr.insert(k.corr_id, NONE);
    }
    for (i, call) in launches.api.iter().enumerate() {
        if let Some(slot) = by_corr.get_mut(&call.corr_id) {
            *slot = match *slot {
                NONE => i as u32,
                AMBIGUOUS => AMBIGUOUS,
                j if launches.api[j as usize].pid == call.pid
                    && launches.api[j as usize].tid == call.tid =>
                {
                    j
                }
                _ => AMBIGUOUS,
            };
        }
    }
    let mut calls: Vec<u32> = by_corr
        .values()
        .copied()
        .filter(|&i| i != NONE && i != AMBIGUOUS)
        .collect();
    let place = place_calls(tree, rows, counted, scopes, launches.api, &mut calls);

    let mut attribution = KernelAttribution {
        kernels: launches.kernel_rows,
        in_counted_iterations: 0,
        elsewhere: 0,
        without_api_call: launches.kernel_rows - launches.kernels.len() as u64,
        ambiguous: 0,
    };
    let mut iteration = Mix::default();
    let mut by_scope: Vec<Mix> = (0..scopes.parent.len()).map(|_| Mix::default()).collect();
    for k in launches.kernels {
        let call = by_corr.get(&k.corr_id).copied().unwrap_or(NONE);
        if call == NONE {
            attribution.without_api_call += 1;
            continue;
        }
        if call == AMBIGUOUS {
            attribution.ambiguous += 1;
            continue;
        }
        match place.get(&call).copied() {
            None => attribution.elsewhere += 1,
            Some(scope) => {
                attribution.in_counted_iterations += 1;
                iteration.add(k);
                let mut s = scope;
                while s != NONE {
                    by_scope[s as usize].add(k);
                    s = scopes.parent[s as usize];
                }
            }
        }
    }

    let (kernels, other_kernels) = iteration.top(launches.names);
    let iteration = IterationKernels {
        iterations: counted.len() as u64,
        launches: iteration.launches,
        total_ns: clamp(iteration.total_ns),
        kernels,
        other_kernels,
    };
    KernelMix {
        iteration,
        ranges: top_ranges(by_scope, scopes, launches.names, host, gpu),
        attribution,
    }
}

/// The ranges with the largest GPU-projected totals that launched kernels (by kernel time
/// when there is no projection), with their mixes.
fn top_ranges(
    by_scope: Vec<Mix>,
    scopes: &Scopes,
    names: &Interner,
    host: &[HostRange],
    gpu: &[GpuProjectedRange],
) -> Vec<RangeKernels> {
    let projected: FxHashMap<&str, i64> = gpu
        .iter()
        .map(|g| (g.name.as_str(), g.projected.total_ns))
        .collect();
    let instances: FxHashMap<&str, u64> = host
        .iter()
        .map(|h| (h.name.as_str(), h.instances))
        .collect();
    let mut ranked: Vec<(u32, Option<i64>, &Mix)> = by_scope
        .iter()
        .enumerate()
        .filter(|(_, m)| m.launches > 0)
        .map(|(id, m)| {
            let name = scopes.name[id].as_str();
            (id as u32, projected.get(name).copied(), m)
        })
        .collect();
    ranked.sort_by(|a, b| {
        b.1.cmp(&a.1)
            .then_with(|| b.2.total_ns.cmp(&a.2.total_ns))
            .then_with(|| scopes.name[a.0 as usize].cmp(&scopes.name[b.0 as usize]))
    });
    ranked
        .into_iter()
        .take(TOP_RANGES)
        .map(|(id, projected_total_ns, mix)| {
            let name = scopes.name[id as usize].clone();
            let (kernels, other_kernels) = mix.top(names);
            RangeKernels {
                instances: instances.get(name.as_str()).copied().unwrap_or(0),
                path: scopes.path[id as usize].clone(),
                name,
                projected_total_ns,
                launches: mix.launches,
                total_ns: clamp(mix.total_ns),
                kernels,
                other_kernels,
            }
        })
        .collect()
}

/// The kernels of one range (or of the iterations): launches and time per kernel name.
#[derive(Default)]
struct Mix {
    launches: u64,
    total_ns: i128,
    by_name: FxHashMap<NameId, (u64, i128)>,
}

impl Mix {
    fn add(&mut self, k: &KernelLaunch) {
        self.launches += 1;
        self.total_ns += i128::from(k.duration_ns);
        let e = self.by_name.entry(k.name).or_default();
        e.0 += 1;
        e.1 += i128::from(k.duration_ns);
    }

    /// The first [`TOP_KERNELS`] kernels by time (then name), and the rest together.
    fn top(&self, names: &Interner) -> (Vec<RangeKernel>, Option<OtherKernels>) {
        let mut all: Vec<RangeKernel> = self
            .by_name
            .iter()
            .map(|(&name, &(launches, total))| RangeKernel {
                name: names.resolve(name).to_owned(),
                launches,
                total_ns: clamp(total),
                share: share(total, self.total_ns),
            })
            .collect();
        all.sort_by(|a, b| {
            b.total_ns
                .cmp(&a.total_ns)
                .then_with(|| a.name.cmp(&b.name))
        });
        let rest = all.split_off(all.len().min(TOP_KERNELS));
        let other = (!rest.is_empty()).then(|| {
            let total: i128 = rest.iter().map(|k| i128::from(k.total_ns)).sum();
            OtherKernels {
                kernels: rest.len() as u64,
                launches: rest.iter().map(|k| k.launches).sum(),
                total_ns: clamp(total),
                share: share(total, self.total_ns),
            }
        });
        (all, other)
    }
}

/// Where each of `calls` (indexes into `api`) was made: for a call inside a counted iteration
/// on the iteration's thread, the scoped id of the innermost range containing it (NONE for
/// the iteration itself). Calls elsewhere (outside every counted iteration) are left out of
/// the map.
fn place_calls(
    tree: &Tree,
    rows: &[PushPopRow],
    counted: &[&Measured],
    scopes: &Scopes,
    api: &[ApiCall],
    calls: &mut [u32],
) -> FxHashMap<u32, u32> {
    let key = |i: &u32| {
        let c = &api[*i as usize];
        (c.pid, c.tid, c.start_ns, c.end_ns, *i)
    };
    calls.sort_unstable_by_key(key);
    let mut place = FxHashMap::default();
    let mut subtree: Vec<u32> = Vec::new();
    let mut walk: Vec<u32> = Vec::new();
    let mut open: Vec<u32> = Vec::new();
    for m in counted {
        let it = &rows[m.row as usize];
        // This iteration's calls: same thread, starting inside it.
        let from = calls.partition_point(|i| {
            let c = &api[*i as usize];
            (c.pid, c.tid, c.start_ns) < (it.pid, it.tid, it.start_ns)
        });
        let to = calls.partition_point(|i| {
            let c = &api[*i as usize];
            (c.pid, c.tid, c.start_ns) <= (it.pid, it.tid, it.end_ns)
        });
        if from >= to {
            continue;
        }
        // Its ranges in start order (the longer first on a tie: the parent).
        subtree.clear();
        walk.clear();
        walk.extend_from_slice(tree.children(m.row));
        while let Some(j) = walk.pop() {
            subtree.push(j);
            walk.extend_from_slice(tree.children(j));
        }
        subtree.sort_unstable_by_key(|&j| {
            let r = &rows[j as usize];
            (r.start_ns, std::cmp::Reverse(r.end_ns), j)
        });
        open.clear();
        let mut next = 0;
        for &i in &calls[from..to] {
            let c = &api[i as usize];
            if c.end_ns > it.end_ns {
                continue;
            }
            while let Some(&j) = subtree.get(next) {
                let r = &rows[j as usize];
                if r.start_ns > c.start_ns {
                    break;
                }
                while open
                    .last()
                    .is_some_and(|&o| rows[o as usize].end_ns < r.start_ns)
                {
                    open.pop();
                }
                open.push(j);
                next += 1;
            }
            while open
                .last()
                .is_some_and(|&o| rows[o as usize].end_ns < c.start_ns)
            {
                open.pop();
            }
            let innermost = open
                .iter()
                .rev()
                .find(|&&o| rows[o as usize].end_ns >= c.end_ns)
                .map_or(NONE, |&o| scopes.of_row[o as usize]);
            place.insert(i, innermost);
        }
    }
    place
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_kinds_have_one_name_whichever_nsys_wrote_them() {
        assert_eq!(copy_kind("[CUDA memcpy Host-to-Device]"), "Host-to-Device");
        assert_eq!(copy_kind("[CUDA memcpy HtoD]"), "Host-to-Device");
        assert_eq!(copy_kind("[CUDA memcpy DtoH]"), "Device-to-Host");
        assert_eq!(
            copy_kind("[CUDA Unified Memory memcpy HtoD]"),
            "Unified Host-to-Device"
        );
        assert_eq!(
            copy_kind("[CUDA memcpy Unified Host-to-Device]"),
            "Unified Host-to-Device"
        );
        assert_eq!(copy_kind("something else"), "something else");
    }

    #[test]
    fn only_host_side_pageable_memory_counts() {
        assert!(is_pageable_host(
            "Host-to-Device",
            Some("Pageable"),
            Some("Device")
        ));
        assert!(is_pageable_host(
            "Device-to-Host",
            Some("Device"),
            Some("Pageable")
        ));
        assert!(!is_pageable_host(
            "Host-to-Device",
            Some("Pinned"),
            Some("Device")
        ));
        assert!(!is_pageable_host(
            "Device-to-Host",
            Some("Pageable"),
            Some("Pinned")
        ));
        assert!(!is_pageable_host(
            "Host-to-Host",
            Some("Pageable"),
            Some("Pageable")
        ));
    }

    #[test]
    fn devices_split_into_name_and_id() {
        assert_eq!(
            split_device("NVIDIA A100-SXM4-80GB (0)"),
            (Some("NVIDIA A100-SXM4-80GB".to_owned()), Some(0))
        );
        assert_eq!(
            split_device("GPU (x) (12)"),
            (Some("GPU (x)".to_owned()), Some(12))
        );
        assert_eq!(split_device(" (3)"), (None, Some(3)));
        assert_eq!(split_device("(3)"), (None, Some(3)));
        assert_eq!(split_device("odd"), (Some("odd".to_owned()), None));
        assert_eq!(split_device(""), (None, None));
    }

    /// `cap > iteration 0 > (a > b), c` and `iteration 1 > a`; calls on the iterations' thread
    /// (1) at the edges of ranges, on another thread, outside the iterations, and with an
    /// id two processes share.
    fn mix_of_the_example() -> KernelMix {
        use crate::analysis::iterations::Measured;
        use crate::analysis::tests::build_rows;
        use crate::analysis::tree::Tree;
        use crate::stats::Sample;
        use std::path::Path;

        let mut names = Interner::new();
        let spec: &[(Option<usize>, &str, i64, i64)] = &[
            (None, "cap", 0, 10_000),
            (Some(0), "iteration 0", 100, 1_000),
            (Some(1), "a", 200, 500),
            (Some(2), "b", 300, 100),
            (Some(1), "c", 800, 200),
            (Some(0), "iteration 1", 2_000, 1_000),
            (Some(5), "a", 2_100, 500),
        ];
        let rows = build_rows(spec, &mut names);
        let tree = Tree::build(&rows, Path::new("p.csv")).unwrap();
        let measured = [
            Measured {
                row: 1,
                index: 0,
                complete: true,
                duplicate: false,
            },
            Measured {
                row: 5,
                index: 1,
                complete: true,
                duplicate: false,
            },
        ];
        let counted: Vec<&Measured> = measured.iter().collect();
        let tables =
            crate::analysis::ranges::range_tables(&tree, &rows, &names, &counted, None, true);
        let scopes = tables.scopes.unwrap();

        let call = |corr_id, start, end, pid, tid| ApiCall {
            start_ns: start,
            end_ns: end,
            corr_id,
            pid,
            tid,
        };
        let api = [
            call(1, 300, 310, 1, 1),     // b (starts with it)
            call(2, 390, 400, 1, 1),     // b (ends with it)
            call(3, 395, 405, 1, 1),     // runs past b: a
            call(4, 150, 160, 1, 1),     // iteration 0 itself
            call(5, 850, 860, 1, 1),     // c
            call(6, 2_200, 2_210, 1, 1), // iteration 1's a
            call(7, 300, 310, 1, 2),     // another thread: elsewhere
            call(8, 5_000, 5_010, 1, 1), // outside the iterations: elsewhere
            call(9, 310, 320, 1, 1),     // id 9 also in process 2: ambiguous
            call(9, 310, 320, 2, 1),
        ];
        let mut kernel_names = Interner::new();
        let gemm = kernel_names
            .intern_bytes(b"void gemm<float, 2>(float*, int)")
            .unwrap();
        let relu = kernel_names.intern_bytes(b"relu").unwrap();
        let launch = |corr_id, duration_ns, name| KernelLaunch {
            corr_id,
            duration_ns,
            name,
        };
        let kernels = [
            launch(1, 10, gemm),
            launch(2, 10, gemm),
            launch(3, 5, relu),
            launch(4, 7, relu),
            launch(5, 3, relu),
            launch(6, 20, gemm),
            launch(7, 1, gemm),
            launch(8, 1, gemm),
            launch(9, 1, gemm),
            launch(10, 1, gemm), // no API call has its id
        ];
        let launches = Launches {
            api: &api,
            kernels: &kernels,
            kernel_rows: 11,
            names: &kernel_names,
        };
        let gpu: Vec<GpuProjectedRange> = ["a", "a.b", "c"]
            .iter()
            .zip([300, 100, 50])
            .map(|(name, total)| GpuProjectedRange {
                name: (*name).to_owned(),
                path: name.split('.').map(str::to_owned).collect(),
                style: "PushPop".to_owned(),
                instances: 1,
                projected: Sample::new(vec![total]).range_stats(),
                host_total_ns: 0,
                gpu_operation_count: 1,
            })
            .collect();
        kernel_mix(
            &tree,
            &rows,
            &counted,
            &scopes,
            &launches,
            &tables.host,
            &gpu,
        )
    }

    /// A range, its instances, kernel total and (kernel, launches, total) mix.
    type Mixed<'a> = (&'a str, u64, i64, Vec<(&'a str, u64, i64)>);

    #[test]
    fn kernels_go_to_the_innermost_range_around_their_launch() {
        let mix = mix_of_the_example();

        assert_eq!(
            mix.attribution,
            KernelAttribution {
                kernels: 11,
                in_counted_iterations: 6,
                elsewhere: 2,
                without_api_call: 2,
                ambiguous: 1
            }
        );
        assert_eq!((mix.iteration.launches, mix.iteration.total_ns), (6, 55));
        let got: Vec<Mixed> = mix
            .ranges
            .iter()
            .map(|r| {
                let k = r
                    .kernels
                    .iter()
                    .map(|k| (k.name.as_str(), k.launches, k.total_ns))
                    .collect();
                (r.name.as_str(), r.instances, r.total_ns, k)
            })
            .collect();
        let gemm = "void gemm<float, 2>(float*, int)";
        assert_eq!(
            got,
            [
                // Largest projected total first; a holds b's kernels and iteration 1's.
                ("a", 2, 45, vec![(gemm, 3, 40), ("relu", 1, 5)]),
                ("a.b", 1, 20, vec![(gemm, 2, 20)]),
                ("c", 1, 3, vec![("relu", 1, 3)]),
            ]
        );
        assert!((mix.ranges[0].kernels[0].share - 40.0 / 45.0).abs() < 1e-12);
    }

    fn row(
        name: NameId,
        total: i64,
        instances: u64,
        min: i64,
        max: i64,
        sd: f64,
    ) -> KernelSummaryRow {
        KernelSummaryRow {
            name,
            total_ns: total,
            instances,
            mean_ns: total as f64 / instances as f64,
            median_ns: total as f64 / instances as f64,
            minimum_ns: min,
            maximum_ns: max,
            stddev_ns: Some(sd),
        }
    }

    #[test]
    fn rows_of_one_kernel_name_merge_without_a_median() {
        let mut names = Interner::new();
        let a = names.intern_bytes(b"a<int, 2>(int)").unwrap();
        let b = names.intern_bytes(b"b").unwrap();
        // `a` ran as 10, 10 (one grid) and 20, 20 (another): mean 15, sample stddev 5.77.
        let rows = [
            row(a, 20, 2, 10, 10, 0.0),
            row(a, 40, 2, 20, 20, 0.0),
            row(b, 40, 1, 40, 40, 0.0),
        ];
        let table = kernel_table(&rows, &names);
        assert_eq!(table.len(), 2);
        let k = &table[0];
        assert_eq!(
            (k.name.as_str(), k.instances, k.total_ns),
            ("a<int, 2>(int)", 4, 60)
        );
        assert_eq!((k.minimum_ns, k.maximum_ns, k.median_ns), (10, 20, None));
        assert!((k.stddev_ns.unwrap() - (100.0f64 / 3.0).sqrt()).abs() < 1e-9);
        assert!((k.share - 0.6).abs() < 1e-12);
        assert_eq!(table[1].median_ns, Some(40.0));
    }
}
