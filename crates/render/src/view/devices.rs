//! `gpu_work.devices` for people: each GPU's kernels and copies over the capture, and per
//! counted iteration its compute, its communication (NCCL's kernels) and the communication no
//! compute hid. Shown when the run used more than one GPU or communicated at all: a run on one
//! GPU without communication reads as before.

use serde::Serialize;

use super::{left_out_note, Table};
use crate::escape::inline_shortened as esc;
use crate::format::{self, ColumnUnit};
use crate::limit::Caps;
use nsys_gate_core::artifact::{GpuDevice, GpuWork};

#[derive(Debug, Clone, Serialize)]
pub struct DeviceRow {
    /// Escaped: `NVIDIA A100-SXM4-80GB (0)`.
    pub device: String,
    pub kernels: u64,
    pub kernel_total: String,
    /// `Peer-to-Peer 5 (320 KiB, 150 µs)`, the copy kinds largest first; `none`.
    pub copies: String,
    pub compute: String,
    pub communication: String,
    /// `200 µs (40 %)`: the share of the communication.
    pub exposed: String,
}

/// The devices' table, or `None` when it would say nothing the summary does not: one device
/// (or none) and no communication.
pub(super) fn devices_table(g: &GpuWork, caps: &Caps, path: &str) -> Option<Table<DeviceRow>> {
    let all = g.devices.as_deref()?;
    let communicates = all
        .iter()
        .any(|d| d.communication_ns.is_some_and(|c| c > 0.0));
    if all.len() < 2 && !communicates {
        return None;
    }
    let shown = &all[..all.len().min(caps.top)];
    let kernel_unit = ColumnUnit::of(
        shown
            .iter()
            .filter_map(|d| d.kernel_total_ns)
            .map(|n| n as f64),
    );
    let per_unit = ColumnUnit::of(
        shown
            .iter()
            .flat_map(|d| [d.compute_ns, d.communication_ns])
            .flatten(),
    );
    let rows = shown
        .iter()
        .map(|d| row(d, kernel_unit, per_unit, caps))
        .collect::<Vec<_>>();
    Some(Table {
        note: left_out_note(rows.len(), all.len(), "devices", path),
        total: all.len(),
        rows,
    })
}

fn row(d: &GpuDevice, kernel_unit: ColumnUnit, per_unit: ColumnUnit, caps: &Caps) -> DeviceRow {
    let or_na = |v: Option<f64>| v.map_or_else(|| "n/a".to_owned(), |ns| per_unit.show(ns));
    let exposed = match (d.exposed_communication_ns, d.communication_ns) {
        (Some(e), Some(c)) if c > 0.0 => {
            format!("{} ({})", per_unit.show(e), format::share_pct(e, c))
        }
        (e, _) => or_na(e),
    };
    DeviceRow {
        device: esc(&d.device, caps.name_chars),
        kernels: d.kernels,
        kernel_total: d
            .kernel_total_ns
            .map_or_else(|| "n/a".to_owned(), |ns| kernel_unit.show(ns as f64)),
        copies: copies_text(d, caps),
        compute: or_na(d.compute_ns),
        communication: or_na(d.communication_ns),
        exposed,
    }
}

/// A device's copies by kind: `Peer-to-Peer 5 (320 KiB, 150 µs), Host-to-Device 1 (…)`.
fn copies_text(d: &GpuDevice, caps: &Caps) -> String {
    let Some(copies) = d.memory_copies.as_deref() else {
        return "n/a".to_owned();
    };
    if copies.is_empty() {
        return "none".to_owned();
    }
    copies
        .iter()
        .map(|c| {
            format!(
                "{} {} ({}, {})",
                esc(&c.copy_kind, caps.name_chars),
                c.count,
                format::bytes(c.bytes),
                format::duration_i(c.total_ns)
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use nsys_gate_core::artifact::DeviceCopies;

    fn device(id: u64, communication: Option<f64>) -> GpuDevice {
        GpuDevice {
            device: format!("NVIDIA A100-SXM4-80GB ({id})"),
            name: Some("NVIDIA A100-SXM4-80GB".into()),
            id: Some(id),
            kernels: 15,
            memory_operations: 5,
            kernel_total_ns: Some(8_500_000),
            memory_total_ns: Some(150_000),
            memory_copies: Some(vec![DeviceCopies {
                copy_kind: "Peer-to-Peer".into(),
                count: 5,
                bytes: 5 * 65_536,
                total_ns: 150_000,
            }]),
            iteration_kernels: Some(15),
            compute_ns: Some(700_000.0),
            communication_ns: communication,
            exposed_communication_ns: communication.map(|c| c * 0.4),
        }
    }

    #[test]
    fn one_device_without_communication_has_no_table() {
        let caps = Caps::full(10);
        let mut g = GpuWork {
            devices: Some(vec![device(0, Some(0.0))]),
            ..GpuWork::default()
        };
        assert!(devices_table(&g, &caps, "analysis.json").is_none());
        g.devices = Some(vec![device(0, Some(500_000.0))]);
        assert!(devices_table(&g, &caps, "analysis.json").is_some());
        g.devices = None;
        assert!(devices_table(&g, &caps, "analysis.json").is_none());
    }

    #[test]
    fn each_device_shows_its_exposed_share_and_copies() {
        let g = GpuWork {
            devices: Some(vec![device(0, Some(500_000.0)), device(1, None)]),
            ..GpuWork::default()
        };
        let t = devices_table(&g, &Caps::full(10), "analysis.json").unwrap();
        assert_eq!(t.rows.len(), 2);
        let mut r = t.rows[0].clone();
        for cell in [
            &mut r.communication,
            &mut r.exposed,
            &mut r.compute,
            &mut r.copies,
        ] {
            *cell = cell.replace('\u{a0}', " ");
        }
        assert_eq!(r.device, "NVIDIA A100-SXM4-80GB (0)");
        assert_eq!(r.communication, "500 µs");
        assert_eq!(r.exposed, "200 µs (40.0 %)");
        assert_eq!(r.compute, "700 µs");
        assert!(r.copies.starts_with("Peer-to-Peer 5 ("), "{}", r.copies);
        assert_eq!(t.rows[1].communication, "n/a");
        assert_eq!(t.rows[1].exposed, "n/a");
    }
}
