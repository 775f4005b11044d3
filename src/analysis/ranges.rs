//! The range tables, `host_ranges[]` and `gpu_projected_ranges[]`.
//!
//! Owns the rules: the tables cover the ranges below the counted iterations; a range is named
//! by the names on its path from the iteration's child down to it, joined by `.` (the
//! iteration itself is not part of the name), so `pre.resize` and `post.resize` stay apart;
//! only instances with a projection enter `gpu_projected_ranges`, and a name none of whose
//! instances launched GPU work is not listed there; both tables are sorted by name, then path.

use rustc_hash::FxHashMap;

use super::gpu::GpuIndex;
use super::iterations::Measured;
use super::tree::{Tree, NONE};
use crate::artifact::{GpuProjectedRange, HostRange};
use crate::reports::{Interner, NameId, PushPopRow};
use crate::stats::Sample;

#[derive(Default)]
struct RangeAccumulator {
    inclusive: Vec<i64>,
    exclusive: Vec<i64>,
    child_total: i128,
    projected: Vec<i64>,
    projected_host_total: i128,
    gpu_ops: u64,
}

/// The instances of every scoped name below `counted`. A scoped name is interned as a
/// (parent path id, name) pair, so a path costs one lookup; `paths[id]` is that pair and
/// `acc[id]` the name's instances.
struct ScopedNames {
    paths: Vec<(u32, NameId)>,
    acc: Vec<RangeAccumulator>,
}

pub(super) fn range_tables(
    tree: &Tree,
    rows: &[PushPopRow],
    names: &Interner,
    counted: &[&Measured],
    gpu: Option<&GpuIndex>,
) -> (Vec<HostRange>, Vec<GpuProjectedRange>) {
    let scoped = accumulate(tree, rows, counted, gpu);
    tables(scoped, names)
}

fn accumulate(
    tree: &Tree,
    rows: &[PushPopRow],
    counted: &[&Measured],
    gpu: Option<&GpuIndex>,
) -> ScopedNames {
    let mut path_ids: FxHashMap<(u32, NameId), u32> = FxHashMap::default();
    let mut paths: Vec<(u32, NameId)> = Vec::new();
    let mut acc: Vec<RangeAccumulator> = Vec::new();
    let mut stack: Vec<(u32, u32)> = Vec::new();
    for m in counted {
        stack.extend(tree.children(m.row).iter().map(|&c| (c, NONE)));
        while let Some((i, parent_path)) = stack.pop() {
            let r = &rows[i as usize];
            let key = (parent_path, r.name);
            let id = *path_ids.entry(key).or_insert_with(|| {
                paths.push(key);
                acc.push(RangeAccumulator::default());
                (paths.len() - 1) as u32
            });
            let a = &mut acc[id as usize];
            a.inclusive.push(r.duration_ns());
            a.exclusive.push(r.dur_non_child_ns());
            a.child_total += i128::from(r.dur_child_ns);
            if let Some(p) = gpu.and_then(|g| g.projection(i)) {
                a.projected.push(p.projected_ns);
                a.projected_host_total += i128::from(r.duration_ns());
                a.gpu_ops = a.gpu_ops.saturating_add(p.gpu_operation_count);
            }
            stack.extend(tree.children(i).iter().map(|&c| (c, id)));
        }
    }
    ScopedNames { paths, acc }
}

fn tables(scoped: ScopedNames, names: &Interner) -> (Vec<HostRange>, Vec<GpuProjectedRange>) {
    let ScopedNames { paths, acc } = scoped;
    let path_of = |mut id: u32| -> Vec<String> {
        let mut out = Vec::new();
        while id != NONE {
            let (parent, name) = paths[id as usize];
            out.push(names.resolve(name).to_owned());
            id = parent;
        }
        out.reverse();
        out
    };
    let clamp = |v: i128| i64::try_from(v).unwrap_or(i64::MAX);
    let mut host = Vec::with_capacity(acc.len());
    let mut gpu_ranges = Vec::new();
    for (id, a) in acc.into_iter().enumerate() {
        let path = path_of(id as u32);
        let name = path.join(".");
        if !a.projected.is_empty() {
            gpu_ranges.push(GpuProjectedRange {
                name: name.clone(),
                path: path.clone(),
                style: "PushPop".to_owned(),
                instances: a.projected.len() as u64,
                projected: Sample::new(a.projected).range_stats(),
                host_total_ns: clamp(a.projected_host_total),
                gpu_operation_count: a.gpu_ops,
            });
        }
        host.push(HostRange {
            name,
            path,
            instances: a.inclusive.len() as u64,
            inclusive: Sample::new(a.inclusive).range_stats(),
            exclusive: Sample::new(a.exclusive).range_stats(),
            child_total_ns: clamp(a.child_total),
        });
    }
    host.sort_by(|a, b| a.name.cmp(&b.name).then_with(|| a.path.cmp(&b.path)));
    gpu_ranges.sort_by(|a, b| a.name.cmp(&b.name).then_with(|| a.path.cmp(&b.path)));
    (host, gpu_ranges)
}
