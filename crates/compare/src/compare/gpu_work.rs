//! The capture's GPU work of two runs side by side: kernels by name, memory copies by kind
//! (copy kind, source and destination memory). Times are totals over the capture
//! (`gpu_work.kernels[].total_ns`, `gpu_work.memory_copies[].total_ns`), which counts every
//! pass the capture held.

use std::collections::BTreeMap;

use super::run_level::WorkTotals;
use nsys_gate_core::artifact::comparison::{GpuWorkChanges, WorkChange};

/// Both runs' kernels and copies, item by item; `None` unless both runs record GPU work.
pub fn changes(base: Option<&WorkTotals>, head: Option<&WorkTotals>) -> Option<GpuWorkChanges> {
    let (base, head) = (base?, head?);
    let kernels = merge(&base.kernels, &head.kernels);
    let memory_copies = merge(&base.memory_copies, &head.memory_copies);
    if kernels.is_empty() && memory_copies.is_empty() {
        return None;
    }
    Some(GpuWorkChanges {
        kernels,
        memory_copies,
        kernels_omitted: 0,
        memory_copies_omitted: 0,
    })
}

/// Items of either side, the largest absolute change first.
fn merge(base: &BTreeMap<String, f64>, head: &BTreeMap<String, f64>) -> Vec<WorkChange> {
    let mut names: Vec<&String> = base.keys().chain(head.keys()).collect();
    names.sort();
    names.dedup();
    let mut out: Vec<WorkChange> = names
        .into_iter()
        .map(|n| WorkChange {
            name: n.clone(),
            base_total_ns: base.get(n).copied(),
            head_total_ns: head.get(n).copied(),
        })
        .collect();
    let delta =
        |w: &WorkChange| (w.head_total_ns.unwrap_or(0.0) - w.base_total_ns.unwrap_or(0.0)).abs();
    out.sort_by(|x, y| {
        delta(y)
            .total_cmp(&delta(x))
            .then_with(|| x.name.cmp(&y.name))
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn totals(kernels: &[(&str, f64)], copies: &[(&str, f64)]) -> WorkTotals {
        let map =
            |items: &[(&str, f64)]| items.iter().map(|(n, t)| ((*n).to_owned(), *t)).collect();
        WorkTotals {
            kernels: map(kernels),
            memory_copies: map(copies),
            ..WorkTotals::default()
        }
    }

    #[test]
    fn kernels_and_copies_are_paired_by_name_and_kind() {
        let copy = "Host-to-Device · Pageable → Device";
        let base = totals(&[("gemm", 1000.0), ("relu", 200.0)], &[(copy, 50.0)]);
        let head = totals(&[("gemm", 1500.0)], &[(copy, 50.0)]);
        let c = changes(Some(&base), Some(&head)).unwrap();
        assert_eq!(c.kernels[0].name, "gemm");
        assert_eq!(
            (c.kernels[0].base_total_ns, c.kernels[0].head_total_ns),
            (Some(1000.0), Some(1500.0))
        );
        assert_eq!(
            (c.kernels[1].name.as_str(), c.kernels[1].head_total_ns),
            ("relu", None)
        );
        assert_eq!(c.memory_copies[0].name, copy);
        assert_eq!(changes(Some(&base), None), None);
        assert_eq!(
            changes(Some(&WorkTotals::default()), Some(&WorkTotals::default())),
            None
        );
    }
}
