//! Advice after the measurements, in the contract's terms.

use std::collections::BTreeSet;

use super::gpu_work::kernel_mix_text;
use crate::artifact::{Analysis, GpuProjectedRange, HostRange};
use crate::render::escape::inline_shortened as esc;
use crate::render::format::duration;
use crate::render::limit::Caps;

/// Advice after the measurements, in the contract's terms: time on the host only points at
/// preparation, orchestration, synchronization and I/O; a large GPU projection points at the
/// kernels launched in that range.
pub(super) fn advice(
    a: &Analysis,
    (hosts, gpus): (&[HostRange], &[GpuProjectedRange]),
    gpu_ok: bool,
    caps: &Caps,
) -> Vec<String> {
    let counted = a.counted();
    if counted == 0 || hosts.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut by_exclusive: Vec<&HostRange> = hosts.iter().collect();
    by_exclusive.sort_by(|x, y| {
        y.exclusive
            .total_ns
            .cmp(&x.exclusive.total_ns)
            .then_with(|| x.name.cmp(&y.name))
    });
    if !gpu_ok {
        if let Some(top) = by_exclusive.first() {
            out.push(format!(
                "**{}** has the largest host exclusive time ({} per instance on average). Without a GPU projection it cannot be told whether that is host work (preparation, orchestration, synchronization, I/O) or waiting for the GPU: record with CUDA tracing on (`nsys profile --trace cuda,nvtx`) to find out.",
                esc(&top.name, caps.name_chars),
                duration(top.exclusive.mean_ns)
            ));
        }
        return out;
    }
    let mut named = BTreeSet::new();
    for r in by_exclusive.iter().take(3) {
        if r.exclusive.total_ns <= 0 {
            continue;
        }
        let gpu = gpus.iter().find(|g| g.path == r.path);
        let host_only = match gpu {
            None => true,
            Some(g) => (g.projected.total_ns as f64) < 0.5 * r.inclusive.total_ns as f64,
        };
        if host_only && named.insert(r.name.as_str()) {
            out.push(format!(
                "**{}**: {} of host exclusive time per instance, {}. That time is spent on the host: look at preparation, orchestration, synchronization and I/O in this range.",
                esc(&r.name, caps.name_chars),
                duration(r.exclusive.mean_ns),
                match gpu {
                    None => "and it launched no GPU work".to_owned(),
                    Some(g) => format!(
                        "while the GPU work it launched spans only {} per instance",
                        duration(g.projected.mean_ns)
                    ),
                }
            ));
        }
    }
    let mut by_projected: Vec<&GpuProjectedRange> = gpus.iter().collect();
    by_projected.sort_by(|x, y| {
        y.projected
            .total_ns
            .cmp(&x.projected.total_ns)
            .then_with(|| x.name.cmp(&y.name))
    });
    for g in by_projected.iter().take(2) {
        if g.projected.total_ns <= 0 || (g.projected.total_ns as f64) < 0.5 * g.host_total_ns as f64
        {
            continue;
        }
        if named.insert(g.name.as_str()) {
            let kernels = a
                .gpu_work
                .as_ref()
                .and_then(|w| w.per_range_kernels.as_ref())
                .and_then(|r| r.iter().find(|r| r.name == g.name))
                .filter(|r| !r.kernels.is_empty())
                .map(|r| {
                    let top = &r.kernels[..r.kernels.len().min(3)];
                    format!(": {} of its kernel time", kernel_mix_text(top, None, caps))
                })
                .unwrap_or_default();
            out.push(format!(
                "**{}**: the GPU work it launched spans {} per instance (projected, {} GPU operations in all). Look at the kernels launched in this range{kernels}.",
                esc(&g.name, caps.name_chars),
                duration(g.projected.mean_ns),
                g.gpu_operation_count
            ));
        }
    }
    out
}
