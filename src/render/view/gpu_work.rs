//! `gpu_work` for people: the GPUs, the top kernels, the kernel mix of the iterations and of
//! the largest GPU-projected ranges, memory copies by kind.

use serde::Serialize;

use super::{left_out_note, plural, Table};
use crate::artifact::{GpuWork, MemoryCopies, OtherKernels, RangeKernel};
use crate::render::escape::{self, inline_shortened as esc};
use crate::render::format::{self, duration_i, ColumnUnit};
use crate::render::limit::Caps;

/// `gpu_work` for people: top kernels, the kernel mix of the iterations and of the largest
/// GPU-projected ranges, copies by kind.
#[derive(Debug, Serialize)]
pub struct GpuWorkView {
    /// One line: the GPUs, kernel time and launches, copies, memsets.
    pub summary: String,
    /// The parts of gpu_work that are unavailable (the `gpu_work_unavailable` warnings say
    /// why), in one line.
    pub unavailable: Option<String>,
    pub kernels: Table<KernelRow>,
    /// The kernel mix of the counted iterations, in one line.
    pub iteration_mix: Option<String>,
    pub ranges: Table<RangeMixRow>,
    pub copies: Table<CopyRow>,
}

#[derive(Debug, Serialize)]
pub struct KernelRow {
    /// Escaped; shortened to the kernel's name and template arguments (return type and
    /// parameter list left out: analysis.json has the whole signature).
    pub name: String,
    pub instances: u64,
    pub total: String,
    pub mean: String,
    pub share: String,
}

#[derive(Debug, Serialize)]
pub struct RangeMixRow {
    pub name: String,
    pub projected_total: String,
    pub launches: u64,
    pub kernel_total: String,
    /// `kernel 61 %, kernel 22 %, 3 others 17 %`.
    pub mix: String,
}

#[derive(Debug, Serialize)]
pub struct CopyRow {
    pub kind: String,
    /// `Pageable → Device`.
    pub memory: String,
    pub count: u64,
    pub bytes: String,
    pub total: String,
    pub bandwidth: String,
    /// `⚠️ pageable host memory` for a host-side pageable copy.
    pub note: String,
}

/// Rows of the GPU-work tables: the range tables' cap, at most five.
pub(super) const GPU_WORK_ROWS: usize = 5;

pub(super) fn gpu_work_view(g: &GpuWork, caps: &Caps, path: &str) -> GpuWorkView {
    let rows = caps.top.min(GPU_WORK_ROWS);
    let unavailable = (!g.unavailable.is_empty()).then(|| {
        let parts: Vec<String> = g.unavailable.keys().map(|p| escape::code(p)).collect();
        format!(
            "Unavailable (a GPU-work report failed; the `gpu_work_unavailable` warning says why): {}.",
            parts.join(", ")
        )
    });
    let all = g.kernels.as_deref().unwrap_or(&[]);
    let shown = &all[..all.len().min(rows)];
    let total_unit = ColumnUnit::of(shown.iter().map(|k| k.total_ns as f64));
    let mean_unit = ColumnUnit::of(shown.iter().map(|k| k.mean_ns));
    let kernels: Vec<KernelRow> = shown
        .iter()
        .map(|k| KernelRow {
            name: esc(kernel_display(&k.name), caps.name_chars),
            instances: k.instances,
            total: total_unit.show(k.total_ns as f64),
            mean: mean_unit.show(k.mean_ns),
            share: format::percent(k.share, 1.0),
        })
        .collect();
    let iteration_mix = g
        .iteration_kernels
        .as_ref()
        .filter(|i| i.launches > 0)
        .map(|i| {
            format!(
                "{} in {} over {}: {}",
                duration_i(i.total_ns),
                plural(i.launches as usize, "kernel launch", "kernel launches"),
                plural(
                    i.iterations as usize,
                    "counted iteration",
                    "counted iterations"
                ),
                kernel_mix_text(&i.kernels, i.other_kernels.as_ref(), caps)
            )
        });
    let ranges_all = g.per_range_kernels.as_deref().unwrap_or(&[]);
    let shown = &ranges_all[..ranges_all.len().min(rows)];
    let projected_unit = ColumnUnit::of(
        shown
            .iter()
            .filter_map(|r| r.projected_total_ns.map(|ns| ns as f64)),
    );
    let kernel_unit = ColumnUnit::of(shown.iter().map(|r| r.total_ns as f64));
    let ranges: Vec<RangeMixRow> = shown
        .iter()
        .map(|r| RangeMixRow {
            name: esc(&r.name, caps.name_chars),
            projected_total: r
                .projected_total_ns
                .map_or("no projection".to_owned(), |ns| {
                    projected_unit.show(ns as f64)
                }),
            launches: r.launches,
            kernel_total: kernel_unit.show(r.total_ns as f64),
            mix: kernel_mix_text(&r.kernels, r.other_kernels.as_ref(), caps),
        })
        .collect();
    let copies_all = g.memory_copies.as_deref().unwrap_or(&[]);
    let shown = &copies_all[..copies_all.len().min(rows)];
    let copy_unit = ColumnUnit::of(shown.iter().map(|c| c.total_ns as f64));
    let copies: Vec<CopyRow> = shown.iter().map(|c| copy_row(c, copy_unit, caps)).collect();
    GpuWorkView {
        summary: gpu_work_summary(g, caps),
        unavailable,
        kernels: Table {
            note: left_out_note(kernels.len(), all.len(), "kernels", path),
            total: all.len(),
            rows: kernels,
        },
        iteration_mix,
        ranges: Table {
            note: left_out_note(ranges.len(), ranges_all.len(), "ranges", path),
            total: ranges_all.len(),
            rows: ranges,
        },
        copies: Table {
            note: left_out_note(copies.len(), copies_all.len(), "copy kinds", path),
            total: copies_all.len(),
            rows: copies,
        },
    }
}

/// One line: the GPUs, kernel time and launches, copies, memsets.
pub(super) fn gpu_work_summary(g: &GpuWork, caps: &Caps) -> String {
    let mut summary = Vec::new();
    if let Some(devices) = &g.devices {
        let names: Vec<String> = devices
            .iter()
            .map(|d| esc(&d.device, caps.name_chars))
            .collect();
        summary.push(match names.len() {
            0 => "no GPU operation".to_owned(),
            1 => format!("GPU: {}", names[0]),
            _ => format!("GPUs: {}", names.join(", ")),
        });
    }
    if let Some(kernels) = &g.kernels {
        let total: i64 = kernels.iter().map(|k| k.total_ns).sum();
        let launches: u64 = kernels.iter().map(|k| k.instances).sum();
        summary.push(format!(
            "kernels: {} in {} of {} (sum of kernel durations over the whole capture)",
            duration_i(total),
            plural(launches as usize, "launch", "launches"),
            plural(kernels.len(), "kernel", "kernels"),
        ));
    }
    if let Some(copies) = &g.memory_copies {
        let count: u64 = copies.iter().map(|c| c.count).sum();
        let bytes: u64 = copies.iter().map(|c| c.bytes).sum();
        let total: i64 = copies.iter().map(|c| c.total_ns).sum();
        summary.push(format!(
            "memory copies: {count} ({}, {})",
            format::bytes(bytes),
            duration_i(total)
        ));
    }
    if let Some(m) = &g.memsets {
        summary.push(format!(
            "memsets: {} ({}, {})",
            m.count,
            format::bytes(m.bytes),
            duration_i(m.total_ns)
        ));
    }
    format!("{}.", summary.join("; "))
}

/// `kernel 61.0 %, kernel 22.0 %, 3 others 17.0 %`.
pub(super) fn kernel_mix_text(
    kernels: &[RangeKernel],
    other: Option<&OtherKernels>,
    caps: &Caps,
) -> String {
    let mut parts: Vec<String> = kernels
        .iter()
        .map(|k| {
            format!(
                "{} {}",
                esc(kernel_display(&k.name), caps.name_chars),
                format::percent(k.share, 1.0)
            )
        })
        .collect();
    if let Some(o) = other {
        parts.push(format!(
            "{} {}",
            plural(o.kernels as usize, "other", "others"),
            format::percent(o.share, 1.0)
        ));
    }
    parts.join(", ")
}

pub(super) fn copy_row(c: &MemoryCopies, unit: ColumnUnit, caps: &Caps) -> CopyRow {
    CopyRow {
        kind: esc(&c.copy_kind, caps.name_chars),
        memory: format!(
            "{} → {}",
            esc(c.source.as_deref().unwrap_or("unknown"), caps.name_chars),
            esc(
                c.destination.as_deref().unwrap_or("unknown"),
                caps.name_chars
            )
        ),
        count: c.count,
        bytes: format::bytes(c.bytes),
        total: unit.show(c.total_ns as f64),
        bandwidth: c.bandwidth_bytes_per_s.map_or("n/a".to_owned(), |b| {
            format!("{}{}GB/s", format::significant(b / 1e9, 3), format::NBSP)
        }),
        note: if c.pageable_host {
            "⚠️ pageable host memory".to_owned()
        } else {
            String::new()
        },
    }
}

/// A kernel's name for the report: its demangled signature without the return type `void `
/// and the parameter list (`void gemm<float, 64>(float const*, int)` -> `gemm<float, 64>`).
/// Anything that does not end in a balanced parameter list is shown whole.
pub(super) fn kernel_display(name: &str) -> &str {
    let name = name.strip_prefix("void ").unwrap_or(name);
    if !name.ends_with(')') {
        return name;
    }
    let mut depth = 0usize;
    for (i, c) in name.char_indices().rev() {
        match c {
            ')' => depth += 1,
            '(' => {
                depth -= 1;
                if depth == 0 {
                    let head = name[..i].trim_end();
                    return if head.is_empty() { name } else { head };
                }
            }
            _ => {}
        }
    }
    name
}
