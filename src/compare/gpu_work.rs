//! The capture's GPU work of two runs side by side: kernels by name, memory copies by kind
//! (copy kind, source and destination memory). Times are totals over the capture
//! (`gpu_work.kernels[].total_ns`, `gpu_work.memory_copies[].total_ns`), which counts every
//! pass the capture held.

use std::collections::BTreeMap;

use crate::artifact::comparison::{GpuWorkChanges, WorkChange};
use crate::artifact::{GpuWork, MemoryCopies};

/// Both runs' kernels and copies, item by item; `None` unless both runs record GPU work.
pub fn changes(base: Option<&GpuWork>, head: Option<&GpuWork>) -> Option<GpuWorkChanges> {
    let (base, head) = (base?, head?);
    let kernels =
        |w: &GpuWork| totals(w.kernels.iter().flatten(), |k| (k.name.clone(), k.total_ns));
    let copies = |w: &GpuWork| {
        totals(w.memory_copies.iter().flatten(), |c| {
            (copy_label(c), c.total_ns)
        })
    };
    let kernels = merge(kernels(base), kernels(head));
    let memory_copies = merge(copies(base), copies(head));
    if kernels.is_empty() && memory_copies.is_empty() {
        return None;
    }
    Some(GpuWorkChanges {
        kernels,
        memory_copies,
    })
}

/// The total time of each key over `items`, given each item's key and total.
fn totals<'a, T: 'a>(
    items: impl Iterator<Item = &'a T>,
    key_and_ns: impl Fn(&T) -> (String, i64),
) -> BTreeMap<String, f64> {
    let mut out: BTreeMap<String, f64> = BTreeMap::new();
    for item in items {
        let (key, ns) = key_and_ns(item);
        *out.entry(key).or_default() += ns as f64;
    }
    out
}

/// `Host-to-Device · Pageable → Device`.
fn copy_label(c: &MemoryCopies) -> String {
    format!(
        "{} · {} → {}",
        c.copy_kind,
        c.source.as_deref().unwrap_or("?"),
        c.destination.as_deref().unwrap_or("?")
    )
}

/// Items of either side, the largest absolute change first.
fn merge(base: BTreeMap<String, f64>, head: BTreeMap<String, f64>) -> Vec<WorkChange> {
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
    use crate::artifact::KernelStats;

    fn kernel(name: &str, total_ns: i64) -> KernelStats {
        KernelStats {
            name: name.into(),
            instances: 1,
            total_ns,
            mean_ns: total_ns as f64,
            median_ns: None,
            minimum_ns: total_ns,
            maximum_ns: total_ns,
            stddev_ns: None,
            share: 0.0,
        }
    }

    #[test]
    fn kernels_and_copies_are_paired_by_name_and_kind() {
        let base = GpuWork {
            kernels: Some(vec![kernel("gemm", 1000), kernel("relu", 200)]),
            memory_copies: Some(vec![MemoryCopies {
                copy_kind: "Host-to-Device".into(),
                source: Some("Pageable".into()),
                destination: Some("Device".into()),
                count: 1,
                bytes: 10,
                total_ns: 50,
                bandwidth_bytes_per_s: None,
                pageable_host: true,
            }]),
            ..GpuWork::default()
        };
        let head = GpuWork {
            kernels: Some(vec![kernel("gemm", 1500)]),
            ..base.clone()
        };
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
        assert_eq!(
            c.memory_copies[0].name,
            "Host-to-Device · Pageable → Device"
        );
        assert_eq!(changes(Some(&base), None), None);
        assert_eq!(
            changes(Some(&GpuWork::default()), Some(&GpuWork::default())),
            None
        );
    }
}
