//! A run's GPU work item by item ([`WorkTotals`]), as the comparison reads it from a run's
//! analysis: kernels, copies, time per counted iteration and exposed communication.

use nsys_gate_core::artifact::{self, GpuWork, MemoryCopies};
use std::collections::BTreeMap;

/// A run's GPU work, item by item.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct WorkTotals {
    /// Total time in the capture, by kernel name and by copy kind.
    pub kernels: BTreeMap<String, f64>,
    pub memory_copies: BTreeMap<String, f64>,
    /// Total time in the capture by kernel base name (`kernels_by_base_name`, else `kernels`
    /// summed by base name).
    pub kernel_bases: BTreeMap<String, f64>,
    /// Time launched inside the counted iterations per counted iteration, by kernel base
    /// name and by copy kind; `None` when the run does not record it for every item (a file
    /// written before it was, kernels not attributed, copies whose launching calls are not
    /// known).
    pub kernels_per_iteration: Option<BTreeMap<String, f64>>,
    pub copies_per_iteration: Option<BTreeMap<String, f64>>,
    /// The range groups that launched most of each kernel base name's time.
    pub launched_by: BTreeMap<String, Vec<String>>,
    /// Exposed communication per counted iteration, by device (`NAME (ID)`), of the devices
    /// that communicated and had some exposed.
    pub exposed_communication: BTreeMap<String, f64>,
}

pub(super) fn work_totals(w: &GpuWork) -> WorkTotals {
    let mut totals = WorkTotals::default();
    for k in w.kernels.iter().flatten() {
        *totals.kernels.entry(k.name.clone()).or_default() += k.total_ns as f64;
    }
    match &w.kernels_by_base_name {
        Some(bases) => {
            let mut per_iteration = Some(BTreeMap::new());
            for b in bases {
                *totals.kernel_bases.entry(b.base_name.clone()).or_default() += b.total_ns as f64;
                match (per_iteration.as_mut(), b.per_iteration_ns) {
                    (Some(map), Some(v)) => *map.entry(b.base_name.clone()).or_default() += v,
                    _ => per_iteration = None,
                }
                if let Some(groups) = b.launched_by.as_ref().filter(|g| !g.is_empty()) {
                    totals.launched_by.insert(
                        b.base_name.clone(),
                        groups.iter().map(|g| g.group.clone()).collect(),
                    );
                }
            }
            totals.kernels_per_iteration = per_iteration;
        }
        None => {
            for k in w.kernels.iter().flatten() {
                let base = k
                    .base_name
                    .clone()
                    .unwrap_or_else(|| artifact::kernel_base_name(&k.name).to_owned());
                *totals.kernel_bases.entry(base).or_default() += k.total_ns as f64;
            }
        }
    }
    let mut per_iteration = Some(BTreeMap::new());
    for c in w.memory_copies.iter().flatten() {
        let label = copy_label(c);
        *totals.memory_copies.entry(label.clone()).or_default() += c.total_ns as f64;
        match (per_iteration.as_mut(), c.per_iteration_ns) {
            (Some(map), Some(v)) => *map.entry(label).or_default() += v,
            _ => per_iteration = None,
        }
    }
    totals.copies_per_iteration = per_iteration;
    for d in w.devices.iter().flatten() {
        if let Some(exposed) = d.exposed_communication_ns.filter(|&e| e > 0.0) {
            *totals
                .exposed_communication
                .entry(d.device.clone())
                .or_default() += exposed;
        }
    }
    totals
}

/// `Host-to-Device · Pageable → Device`.
pub(super) fn copy_label(c: &MemoryCopies) -> String {
    format!(
        "{} · {} → {}",
        c.copy_kind,
        c.source.as_deref().unwrap_or("?"),
        c.destination.as_deref().unwrap_or("?")
    )
}
