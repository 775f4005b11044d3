//! The range tables, `host_ranges[]` and `gpu_projected_ranges[]`.
//!
//! Owns the rules: the tables cover the ranges below the counted iterations; a range is named
//! by the names on its path from the iteration's child down to it, joined by `.` (the
//! iteration itself is not part of the name), so `pre.resize` and `post.resize` stay apart;
//! only instances with a projection enter `gpu_projected_ranges`, and a name none of whose
//! instances launched GPU work is not listed there; both tables are sorted by name, then path.
//!
//! Also owns the nesting limit and `nesting_truncated`: a name and its path grow with the
//! depth of the range, so a table of ranges nested N deep would hold N^2 names. Ranges more
//! than [`MAX_LEVEL`] levels below their iteration (its child is level 1) are folded into
//! their ancestor at that level: they get no entry of their own, and their exclusive times
//! are added to that ancestor's instance (exclusive time + the exclusive times of every range
//! folded into it), its `child_total_ns` being what is left of its inclusive time (0 for a
//! report as nsys writes it, where a range's `DurChild` is the sum of its children's
//! durations). So the exclusive times of an iteration's ranges add up to the same total as
//! without the limit, and nothing is counted twice. Its inclusive time and its projection
//! (which covers the GPU work launched by the ranges nested in it) already hold theirs, so
//! folded ranges add nothing to `gpu_projected_ranges`.

use rustc_hash::FxHashMap;

use super::gpu::GpuIndex;
use super::iterations::Measured;
use super::tree::{Tree, NONE};
use super::wording::noun_for;
use crate::reports::{Interner, NameId, PushPopRow};
use nsys_gate_core::artifact::{GpuProjectedRange, HostRange, Warning, WarningCode};
use nsys_gate_core::stats::Sample;

/// The deepest level below an iteration that the range tables name (the iteration's children
/// are level 1); ranges nested deeper are folded into their ancestor at this level. Programs
/// nest tens of levels; this bounds a name and its path to this many names.
const MAX_LEVEL: u32 = 256;

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

/// How deep the ranges below the counted iterations nest, and how many were folded.
#[derive(Debug, Default, Clone, Copy)]
struct Nesting {
    /// The deepest level seen (the iteration's children are level 1); 0 with no range.
    deepest: u32,
    /// Ranges deeper than the limit, folded into their ancestor at the limit.
    folded: u64,
}

/// The scoped names of the ranges below the counted iterations, for attributing work to
/// them by row: `of_row[row]` is the scoped-name id of a push/pop row (a folded range has its
/// ancestor's at the limit; NONE outside the counted iterations and for the iterations
/// themselves), `parent[id]` the id of the name it extends (NONE at level 1), `name[id]` and
/// `path[id]` the name as the tables write it.
pub(super) struct Scopes {
    pub of_row: Vec<u32>,
    pub parent: Vec<u32>,
    pub name: Vec<String>,
    pub path: Vec<Vec<String>>,
}

/// The range tables, `nesting_truncated` when ranges nest deeper than [`MAX_LEVEL`], and
/// (with `want_scopes`) the scoped name of each row.
pub(super) struct RangeTables {
    pub host: Vec<HostRange>,
    pub gpu: Vec<GpuProjectedRange>,
    pub nesting: Option<Warning>,
    pub scopes: Option<Scopes>,
}

/// The two tables, and `nesting_truncated` when ranges nest deeper than [`MAX_LEVEL`].
pub(super) fn range_tables(
    tree: &Tree,
    rows: &[PushPopRow],
    names: &Interner,
    counted: &[&Measured],
    gpu: Option<&GpuIndex>,
    want_scopes: bool,
) -> RangeTables {
    let mut of_row = want_scopes.then(|| vec![NONE; rows.len()]);
    let (scoped, nesting) = accumulate(tree, rows, counted, gpu, MAX_LEVEL, of_row.as_mut());
    let (host, gpu_ranges, scopes) = tables(scoped, names, of_row);
    RangeTables {
        host,
        gpu: gpu_ranges,
        nesting: truncated_warning(nesting, MAX_LEVEL),
        scopes,
    }
}

#[cfg(test)]
fn tables_with_limit(
    tree: &Tree,
    rows: &[PushPopRow],
    names: &Interner,
    counted: &[&Measured],
    gpu: Option<&GpuIndex>,
    limit: u32,
) -> (Vec<HostRange>, Vec<GpuProjectedRange>, Option<Warning>) {
    let (scoped, nesting) = accumulate(tree, rows, counted, gpu, limit, None);
    let (host, gpu_ranges, _) = tables(scoped, names, None);
    (host, gpu_ranges, truncated_warning(nesting, limit))
}

/// `nesting_truncated`: the deepest level, the limit and how many ranges were folded.
fn truncated_warning(nesting: Nesting, limit: u32) -> Option<Warning> {
    (nesting.folded > 0).then(|| {
        Warning::new(
            WarningCode::NestingTruncated,
            format!(
                "ranges nest up to {} levels below an iteration; host_ranges and gpu_projected_ranges name the first {limit}: {} deeper {} counted in {} ancestor at level {limit}",
                nesting.deepest,
                nesting.folded,
                noun_for(nesting.folded, "range is", "ranges are"),
                noun_for(nesting.folded, "its", "their"),
            ),
        )
        .with_count(nesting.folded)
        .with_depth(u64::from(nesting.deepest), u64::from(limit))
    })
}

fn accumulate(
    tree: &Tree,
    rows: &[PushPopRow],
    counted: &[&Measured],
    gpu: Option<&GpuIndex>,
    limit: u32,
    mut of_row: Option<&mut Vec<u32>>,
) -> (ScopedNames, Nesting) {
    let mut path_ids: FxHashMap<(u32, NameId), u32> = FxHashMap::default();
    let mut scoped = ScopedNames {
        paths: Vec::new(),
        acc: Vec::new(),
    };
    let mut nesting = Nesting::default();
    // (row, parent path id, level); `below` is the folding walks' own stack.
    let mut stack: Vec<(u32, u32, u32)> = Vec::new();
    let mut below: Vec<(u32, u32)> = Vec::new();
    for m in counted {
        stack.extend(tree.children(m.row).iter().map(|&c| (c, NONE, 1)));
        while let Some((i, parent_path, level)) = stack.pop() {
            let r = &rows[i as usize];
            let key = (parent_path, r.name);
            let id = *path_ids.entry(key).or_insert_with(|| {
                scoped.paths.push(key);
                scoped.acc.push(RangeAccumulator::default());
                (scoped.paths.len() - 1) as u32
            });
            nesting.deepest = nesting.deepest.max(level);
            if let Some(of_row) = of_row.as_deref_mut() {
                of_row[i as usize] = id;
            }
            // Above the limit the walk goes on; at it, the ranges below fold into this instance.
            let folded = if level < limit {
                stack.extend(tree.children(i).iter().map(|&c| (c, id, level + 1)));
                0
            } else {
                let folded = fold_below(tree, rows, i, level, &mut below, &mut nesting);
                if let Some(of_row) = of_row.as_deref_mut() {
                    // The folded ranges are this instance's: `below` still holds none of
                    // them, so walk again (rare: only past the limit).
                    tree.mark_subtree_with(of_row, i, id);
                }
                folded
            };
            let a = &mut scoped.acc[id as usize];
            a.inclusive.push(r.duration_ns());
            a.exclusive
                .push(clamp(i128::from(r.dur_non_child_ns()) + folded));
            a.child_total += i128::from(r.dur_child_ns) - folded;
            if let Some(p) = gpu.and_then(|g| g.projection(i)) {
                a.projected.push(p.projected_ns);
                a.projected_host_total += i128::from(r.duration_ns());
                a.gpu_ops = a.gpu_ops.saturating_add(p.gpu_operation_count);
            }
        }
    }
    (scoped, nesting)
}

/// Walks every range below row `i` (at `level`), counting them into `nesting`; returns the
/// sum of their exclusive times. `stack` is scratch space, kept between calls.
fn fold_below(
    tree: &Tree,
    rows: &[PushPopRow],
    i: u32,
    level: u32,
    stack: &mut Vec<(u32, u32)>,
    nesting: &mut Nesting,
) -> i128 {
    let mut exclusive = 0i128;
    stack.clear();
    stack.extend(tree.children(i).iter().map(|&c| (c, level + 1)));
    while let Some((j, level)) = stack.pop() {
        exclusive += i128::from(rows[j as usize].dur_non_child_ns());
        nesting.folded += 1;
        nesting.deepest = nesting.deepest.max(level);
        stack.extend(tree.children(j).iter().map(|&c| (c, level + 1)));
    }
    exclusive
}

/// A sum of nanoseconds as the artifact's `i64`, saturated.
pub(super) fn clamp(v: i128) -> i64 {
    i64::try_from(v).unwrap_or(if v < 0 { i64::MIN } else { i64::MAX })
}

fn tables(
    scoped: ScopedNames,
    names: &Interner,
    of_row: Option<Vec<u32>>,
) -> (Vec<HostRange>, Vec<GpuProjectedRange>, Option<Scopes>) {
    let ScopedNames { paths, acc } = scoped;
    let mut scopes = of_row.map(|of_row| Scopes {
        of_row,
        parent: paths.iter().map(|&(parent, _)| parent).collect(),
        name: Vec::with_capacity(paths.len()),
        path: Vec::with_capacity(paths.len()),
    });
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
    let mut host = Vec::with_capacity(acc.len());
    let mut gpu_ranges = Vec::new();
    for (id, a) in acc.into_iter().enumerate() {
        let path = path_of(id as u32);
        let name = path.join(".");
        if let Some(scopes) = scopes.as_mut() {
            scopes.name.push(name.clone());
            scopes.path.push(path.clone());
        }
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
            slowest_rank: None,
        });
    }
    host.sort_by(|a, b| a.name.cmp(&b.name).then_with(|| a.path.cmp(&b.path)));
    gpu_ranges.sort_by(|a, b| a.name.cmp(&b.name).then_with(|| a.path.cmp(&b.path)));
    (host, gpu_ranges, scopes)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::analysis::tests::build_rows;
    use crate::reports::{GpuProjRow, RangeStyle};

    /// Two iterations under `cap`: iteration 0 nests `a > b > c > d` and `a > b > e` (four
    /// levels), plus `f`; iteration 1 nests `a > b` only.
    const SPEC: &[(Option<usize>, &str, i64, i64)] = &[
        (None, "cap", 0, 5000),
        (Some(0), "iteration 0", 10, 1000),
        (Some(1), "a", 20, 900),
        (Some(2), "b", 30, 800),
        (Some(3), "c", 40, 500),
        (Some(4), "d", 50, 100),
        (Some(3), "e", 600, 100),
        (Some(1), "f", 950, 50),
        (Some(0), "iteration 1", 2000, 1000),
        (Some(8), "a", 2010, 700),
        (Some(9), "b", 2020, 300),
    ];

    fn measured(row: u32, index: u64) -> Measured {
        Measured {
            row,
            index,
            complete: true,
            duplicate: false,
        }
    }

    /// A projection row for push/pop row `row` launching `ops` operations.
    fn projection(rows: &[PushPopRow], row: usize, ops: u64) -> GpuProjRow {
        let r = &rows[row];
        GpuProjRow {
            projected_start_ns: Some(r.start_ns + 1),
            projected_duration_ns: Some(r.duration_ns() / 2),
            orig_start_ns: Some(r.start_ns),
            range_id: Some(r.range_id),
            num_gpu_ops: ops,
            name: Some(r.name),
            pid: r.pid,
            tid: r.tid,
            line: r.line,
            style: Some(RangeStyle::PushPop),
        }
    }

    type Tables = (Vec<HostRange>, Vec<GpuProjectedRange>, Option<Warning>);

    fn tables_of(spec: &[(Option<usize>, &str, i64, i64)], limit: u32) -> Tables {
        let mut names = Interner::new();
        let rows = build_rows(spec, &mut names);
        let tree = Tree::build(&rows, Path::new("p.csv")).unwrap();
        let iterations: Vec<Measured> = (0..rows.len())
            .filter(|&i| names.resolve(rows[i].name).starts_with("iteration "))
            .zip(0..)
            .map(|(row, index)| measured(row as u32, index))
            .collect();
        let counted: Vec<&Measured> = iterations.iter().collect();
        // Every range below the iterations launched work; projections are inclusive, as
        // nsys's are: a range's count holds the counts of the ranges nested in it.
        let ops = [(2, 4), (3, 3), (4, 1), (5, 1), (6, 1), (9, 2), (10, 1)];
        let gpu_rows: Vec<GpuProjRow> = ops
            .iter()
            .filter(|&&(row, _)| row < rows.len())
            .map(|&(row, n)| projection(&rows, row, n))
            .collect();
        let gpu = GpuIndex::build(&gpu_rows, &rows, &tree, Path::new("g.csv")).unwrap();
        tables_with_limit(&tree, &rows, &names, &counted, Some(&gpu), limit)
    }

    fn by_name<'a>(host: &'a [HostRange], name: &str) -> &'a HostRange {
        host.iter().find(|r| r.name == name).unwrap()
    }

    #[test]
    fn ranges_below_the_limit_fold_into_their_ancestor_at_it() {
        let (host, gpu, warning) = tables_of(SPEC, 2);
        let names: Vec<&str> = host.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["a", "a.b", "f"]);
        let b = by_name(&host, "a.b");
        assert_eq!(b.path, ["a", "b"]);
        assert_eq!(b.instances, 2);
        // Iteration 0's `b` (800) holds c, d and e: its exclusive time is its inclusive
        // time, and nothing is left as children; iteration 1's `b` has no children.
        assert_eq!(b.inclusive.total_ns, 800 + 300);
        assert_eq!(b.exclusive.total_ns, 800 + 300);
        assert_eq!(b.exclusive.maximum_ns, 800);
        assert_eq!(b.child_total_ns, 0);
        // `a` keeps its child `b` as a child.
        let a = by_name(&host, "a");
        assert_eq!(a.exclusive.total_ns, (900 - 800) + (700 - 300));
        assert_eq!(a.child_total_ns, 800 + 300);

        // Folded ranges have no projection entry: `b`'s projection already covers theirs.
        let gpu_names: Vec<(&str, u64, u64)> = gpu
            .iter()
            .map(|r| (r.name.as_str(), r.instances, r.gpu_operation_count))
            .collect();
        assert_eq!(gpu_names, [("a", 2, 6), ("a.b", 2, 4)]);

        let w = warning.expect("nesting_truncated");
        assert_eq!(w.code, WarningCode::NestingTruncated);
        assert_eq!(
            (w.count, w.depth, w.depth_limit),
            (Some(3), Some(4), Some(2))
        );
        assert_eq!(
            w.message,
            "ranges nest up to 4 levels below an iteration; host_ranges and gpu_projected_ranges name the first 2: 3 deeper ranges are counted in their ancestor at level 2"
        );
    }

    #[test]
    fn folding_keeps_the_exclusive_total_of_every_iteration() {
        let iteration_exclusive: i64 = [1, 8]
            .iter()
            .map(|&i| {
                let (_, _, _, len) = SPEC[i];
                let children: i64 = SPEC.iter().filter(|s| s.0 == Some(i)).map(|s| s.3).sum();
                len - children
            })
            .sum();
        let inclusive: i64 = SPEC[1].3 + SPEC[8].3;
        let unlimited = tables_of(SPEC, MAX_LEVEL).0.len();
        for limit in [1, 2, 3, 4, MAX_LEVEL] {
            let (host, _, _) = tables_of(SPEC, limit);
            // Below four levels, some ranges are folded: fewer names.
            assert_eq!(host.len() < unlimited, limit < 4, "limit {limit}");
            let exclusive: i64 = host.iter().map(|r| r.exclusive.total_ns).sum();
            assert_eq!(exclusive + iteration_exclusive, inclusive, "limit {limit}");
            // Per entry, inclusive = exclusive + children, as without the limit.
            for r in &host {
                assert_eq!(
                    r.inclusive.total_ns,
                    r.exclusive.total_ns + r.child_total_ns,
                    "{} at limit {limit}",
                    r.name
                );
            }
        }
    }

    #[test]
    fn a_trace_as_deep_as_the_limit_is_not_folded() {
        let unlimited = tables_of(SPEC, MAX_LEVEL);
        assert_eq!(unlimited.2, None);
        assert_eq!(tables_of(SPEC, 4), unlimited);
        let (host, _, warning) = tables_of(SPEC, 3);
        assert_eq!(host.len(), unlimited.0.len() - 1, "only a.b.c.d is folded");
        let w = warning.unwrap();
        assert_eq!((w.count, w.depth), (Some(1), Some(4)));
    }
}
