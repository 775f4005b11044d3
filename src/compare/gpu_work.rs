//! The capture's GPU work of two runs side by side: kernels by name, memory copies by kind.
//!
//! Isolated on purpose: `gpu_work` in analysis.json is issue 13's, and this function reads it
//! tolerantly (kernels and copies as JSON objects) so that it can be adapted to that schema in
//! one place. A kernel is named by its `name`; a memory-copy group by its string fields (kind,
//! source and destination memory, whatever the schema names them), in key order. An item's
//! time is its `total_ns` (or `total_duration_ns`): totals over the capture, which counts
//! every pass the capture held.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::artifact::comparison::{GpuWorkChanges, WorkChange};
use crate::artifact::GpuWork;

/// Both runs' kernels and copies, item by item; `None` unless both runs record GPU work.
pub fn changes(base: Option<&GpuWork>, head: Option<&GpuWork>) -> Option<GpuWorkChanges> {
    let (base, head) = (base?, head?);
    let side = |list: Option<&Vec<Value>>, label: fn(&Value) -> Option<String>| {
        let mut out: BTreeMap<String, f64> = BTreeMap::new();
        for item in list.into_iter().flatten() {
            if let (Some(name), Some(total)) = (label(item), total_ns(item)) {
                *out.entry(name).or_default() += total;
            }
        }
        out
    };
    let kernels = merge(
        side(base.kernels.as_ref(), kernel_label),
        side(head.kernels.as_ref(), kernel_label),
    );
    let memory_copies = merge(
        side(base.memory_copies.as_ref(), copy_label),
        side(head.memory_copies.as_ref(), copy_label),
    );
    if kernels.is_empty() && memory_copies.is_empty() {
        return None;
    }
    Some(GpuWorkChanges {
        kernels,
        memory_copies,
    })
}

fn kernel_label(item: &Value) -> Option<String> {
    item.get("name")?.as_str().map(str::to_owned)
}

fn copy_label(item: &Value) -> Option<String> {
    let parts: Vec<&str> = item
        .as_object()?
        .values()
        .filter_map(Value::as_str)
        .collect();
    (!parts.is_empty()).then(|| parts.join(" · "))
}

fn total_ns(item: &Value) -> Option<f64> {
    ["total_ns", "total_duration_ns"]
        .iter()
        .find_map(|k| item.get(*k).and_then(Value::as_f64))
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
    use serde_json::json;

    #[test]
    fn kernels_and_copies_are_paired_by_name_and_kind() {
        let base = GpuWork {
            devices: vec!["NVIDIA T4".into()],
            kernels: Some(vec![
                json!({"name": "gemm", "total_ns": 1000, "instances": 5}),
                json!({"name": "relu", "total_ns": 200}),
            ]),
            memory_copies: Some(vec![
                json!({"kind": "HtoD", "source": "pageable", "total_ns": 50}),
            ]),
        };
        let head = GpuWork {
            kernels: Some(vec![json!({"name": "gemm", "total_ns": 1500})]),
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
        assert_eq!(c.memory_copies[0].name, "HtoD · pageable");
        assert_eq!(changes(Some(&base), None), None);
    }

    #[test]
    fn any_shape_of_gpu_work_reads() {
        let read = |v: serde_json::Value| serde_json::from_value::<GpuWork>(v).unwrap();
        let w = read(json!({"devices": null, "kernels": {"not": "a list"},
                            "memory_copies": [{"kind": "HtoD"}], "memsets": {}}));
        assert_eq!(w.devices, Vec::<String>::new());
        assert_eq!(w.kernels, None);
        assert_eq!(w.memory_copies.map(|c| c.len()), Some(1));
        let w = read(json!({"devices": ["NVIDIA T4", {"name": "NVIDIA A100", "id": 0}, 3]}));
        assert_eq!(w.devices, ["NVIDIA T4", "NVIDIA A100"]);
        // A null gpu_work in an analysis is no GPU work.
        let a: Option<GpuWork> = serde_json::from_value(json!(null)).unwrap();
        assert_eq!(a, None);
    }
}
