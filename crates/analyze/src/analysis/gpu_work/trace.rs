//! `cuda_gpu_trace` in one pass: memory copies grouped by kind and memory kinds, memsets,
//! devices, and the kernels kept as launches for the join; `pageable_memory_copies`.

use rustc_hash::FxHashMap;

use super::super::ranges::clamp;
use super::super::wording::noun_for;
use crate::reports::{GpuOpRow, Interner, NameId};
use nsys_gate_core::artifact::{
    DeviceCopies, GpuDevice, MemoryCopies, Memsets, Warning, WarningCode,
};

/// A kernel as the join needs it: its correlation id, start, duration, device and name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelLaunch {
    pub corr_id: u64,
    pub start_ns: i64,
    pub duration_ns: i64,
    pub name: NameId,
    /// The CUDA device id that ran it; [`NO_DEVICE`] when unknown.
    pub device: u32,
}

/// [`KernelLaunch::device`] of a kernel whose device is unknown.
pub const NO_DEVICE: u32 = u32::MAX;

/// A memory operation as the join needs it: its correlation id, duration, bytes and its kind
/// as `cuda_gpu_trace` names it (operation, source and destination memory).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CopyLaunch {
    pub corr_id: u64,
    pub duration_ns: i64,
    pub bytes: u64,
    pub kind: MemoryKind,
}

/// `cuda_gpu_trace`'s name of a memory operation, its source and destination memory kind.
pub type MemoryKind = (NameId, Option<NameId>, Option<NameId>);

/// A copy group's key in `gpu_work.memory_copies`: copy kind, source and destination memory.
pub type CopyKey = (String, Option<String>, Option<String>);

/// The copy group of a memory operation; `None` for a memset.
pub fn copy_key(names: &Interner, (name, src, dst): MemoryKind) -> Option<CopyKey> {
    let text = |id: Option<NameId>| id.map(|n| names.resolve(n).to_owned());
    let name = names.resolve(name);
    (name != MEMSET).then(|| (copy_kind(name), text(src), text(dst)))
}

/// Copies of one group: how many, their bytes and summed durations.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Totals {
    pub count: u64,
    pub bytes: u64,
    pub total_ns: i128,
}

impl Totals {
    #[inline]
    pub fn add(&mut self, other: Totals) {
        self.count += other.count;
        self.bytes = self.bytes.saturating_add(other.bytes);
        self.total_ns += other.total_ns;
    }
}

#[derive(Debug, Default, Clone)]
struct DeviceCounts {
    kernels: u64,
    memory: u64,
    kernel_ns: i128,
    memory_ns: i128,
    /// Memory copies by `cuda_gpu_trace`'s name (memsets included, told apart at the end).
    copies: FxHashMap<NameId, Totals>,
}

/// `cuda_gpu_trace` as it streams by: memory operations grouped by (name, source, destination),
/// devices counted, kernels kept as [`KernelLaunch`]es. Names are resolved in
/// [`GpuTraceSummary::finish`] (the interner is the reader's while it reads).
#[derive(Debug, Default)]
pub struct GpuTraceSummary {
    launches: Vec<KernelLaunch>,
    copies: Vec<CopyLaunch>,
    memory: FxHashMap<MemoryKind, Totals>,
    devices: FxHashMap<Option<NameId>, DeviceCounts>,
}

impl Extend<GpuOpRow> for GpuTraceSummary {
    fn extend<I: IntoIterator<Item = GpuOpRow>>(&mut self, rows: I) {
        for row in rows {
            let device = self.devices.entry(row.device).or_default();
            match row.bytes {
                None => {
                    device.kernels += 1;
                    device.kernel_ns += i128::from(row.duration_ns);
                    if let Some(corr_id) = row.corr_id {
                        self.launches.push(KernelLaunch {
                            corr_id,
                            start_ns: row.start_ns,
                            duration_ns: row.duration_ns,
                            name: row.name,
                            // The device's name for now: its id in `finish`.
                            device: row.device.map_or(NO_DEVICE, |d| d.0),
                        });
                    }
                }
                Some(bytes) => {
                    device.memory += 1;
                    device.memory_ns += i128::from(row.duration_ns);
                    device.copies.entry(row.name).or_default().add(Totals {
                        count: 1,
                        bytes,
                        total_ns: i128::from(row.duration_ns),
                    });
                    if let Some(corr_id) = row.corr_id {
                        self.copies.push(CopyLaunch {
                            corr_id,
                            duration_ns: row.duration_ns,
                            bytes,
                            kind: (row.name, row.src, row.dst),
                        });
                    }
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
    /// Every memory operation with a correlation id (memsets included).
    pub copies: Vec<CopyLaunch>,
    /// Kernel rows, with a correlation id or not.
    pub kernels: u64,
}

const MEMSET: &str = "[CUDA memset]";

impl GpuTraceSummary {
    pub fn finish(self, names: &Interner) -> GpuTraceParts {
        let text = |id: Option<NameId>| id.map(|n| names.resolve(n).to_owned());
        let mut memsets = Totals::default();
        let mut copies: FxHashMap<CopyKey, Totals> = FxHashMap::default();
        for (kind, t) in self.memory {
            match copy_key(names, kind) {
                None => memsets.add(t),
                Some(key) => copies.entry(key).or_default().add(t),
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
                    iteration_count: None,
                    iteration_bytes: None,
                    iteration_total_ns: None,
                    per_iteration_ns: None,
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
        // Each launch's device: from its name (`NAME (ID)`) to its id.
        let ids: FxHashMap<u32, u32> = self
            .devices
            .keys()
            .flatten()
            .map(|&d| {
                let id = split_device(names.resolve(d)).1;
                (
                    d.0,
                    id.and_then(|i| u32::try_from(i).ok()).unwrap_or(NO_DEVICE),
                )
            })
            .collect();
        let mut launches = self.launches;
        for k in &mut launches {
            if k.device != NO_DEVICE {
                k.device = ids.get(&k.device).copied().unwrap_or(NO_DEVICE);
            }
        }
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
                    kernel_total_ns: Some(clamp(counts.kernel_ns)),
                    memory_total_ns: Some(clamp(counts.memory_ns)),
                    memory_copies: Some(device_copies(names, counts.copies)),
                    ..GpuDevice::default()
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
            launches,
            copies: self.copies,
            kernels,
        }
    }
}

/// A device's memory copies by copy kind (memsets left out), largest total first.
fn device_copies(names: &Interner, by_name: FxHashMap<NameId, Totals>) -> Vec<DeviceCopies> {
    let mut kinds: FxHashMap<String, Totals> = FxHashMap::default();
    for (name, t) in by_name {
        let name = names.resolve(name);
        if name != MEMSET {
            kinds.entry(copy_kind(name)).or_default().add(t);
        }
    }
    let mut out: Vec<DeviceCopies> = kinds
        .into_iter()
        .map(|(copy_kind, t)| DeviceCopies {
            copy_kind,
            count: t.count,
            bytes: t.bytes,
            total_ns: clamp(t.total_ns),
        })
        .collect();
    out.sort_by(|a, b| {
        b.total_ns
            .cmp(&a.total_ns)
            .then_with(|| a.copy_kind.cmp(&b.copy_kind))
    });
    out
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
                noun_for(count, "memory copy", "memory copies"),
                kinds.join(", "),
                bytes,
                if count == 1 { "uses" } else { "use" },
            ),
        )
        .with_count(count)
        .with_bytes(bytes),
    )
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
}
