//! From report rows to the numbers of `analysis.json`.
//!
//! Pure: takes the manifest's settings and the rows of the two nsys reports, returns the
//! iterations, statistics, range tables and warnings. Every rule here is the contract's
//! (section 3, "Reading the reports"); the comments say which one a piece of code implements.
//!
//! Nothing here recurses over the range tree: ranges nest as deep as a program pushes them
//! (10,000 levels is a test case), so walks use explicit stacks.

use std::collections::BTreeMap;

use rustc_hash::FxHashMap;
use std::path::{Path, PathBuf};

use regex::Regex;

use crate::artifact::{
    FirstIteration, GpuProjectedRange, HostRange, Iteration, IterationGpu, IterationHost,
    IterationSummary, Warning, WarningCode,
};
use crate::reports::{GpuProjRow, Interner, NameId, PushPopRow, RangeStyle};
use crate::stats::Sample;

const NONE: u32 = u32::MAX;

/// The manifest settings the analysis needs.
#[derive(Debug, Clone)]
pub struct Settings {
    pub capture_range: Option<String>,
    /// Full-match regex with exactly one capture group for the index.
    pub iteration_pattern: Regex,
    pub expected_iterations: u64,
}

/// The rows of both reports, and where they came from (for error messages).
pub struct Reports<'a> {
    pub names: &'a Interner,
    pub pushpop: &'a [PushPopRow],
    pub pushpop_path: &'a Path,
    /// `None` when nsys produced no GPU projection.
    pub gpu: Option<&'a [GpuProjRow]>,
    pub gpu_path: &'a Path,
}

/// Everything the analysis found; the caller adds provenance, run settings and the gate.
#[derive(Debug, Clone, PartialEq)]
pub struct Findings {
    pub warnings: Vec<Warning>,
    pub iteration_summary: IterationSummary,
    pub iterations: Vec<Iteration>,
    pub host_ranges: Vec<HostRange>,
    pub gpu_projected_ranges: Vec<GpuProjectedRange>,
}

/// Rows that are individually valid but do not fit together.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}:{line}: column `{column}`: {message}", path.display())]
pub struct DataError {
    pub path: PathBuf,
    pub line: u32,
    pub column: &'static str,
    pub message: String,
}

/// Compiles the manifest's pattern so that it must match a whole name, as `re.fullmatch` does.
pub fn full_match_regex(pattern: &str) -> Result<Regex, regex::Error> {
    Regex::new(&format!("^(?:{pattern})$"))
}

/// Thresholds of the non-gating advisory warnings.
pub const FIRST_ITERATION_SLOW_RATIO: f64 = 1.5;
pub const HIGH_VARIANCE_CV: f64 = 0.10;
pub const SLOW_ITERATION_MADS: f64 = 5.0;

/// Range id -> row index. nsys numbers ranges by their NVTX_EVENTS row, so ids are dense
/// with small gaps: a flat table when they are, a hash map otherwise.
enum IdIndex {
    Dense { min: u64, rows: Vec<u32> },
    Sparse(FxHashMap<u64, u32>),
}

impl IdIndex {
    /// Builds the index; `Err((first, second))` names two rows with the same id.
    fn build(rows: &[PushPopRow]) -> Result<IdIndex, (usize, usize)> {
        let min = rows.iter().map(|r| r.range_id).min().unwrap_or(0);
        let max = rows.iter().map(|r| r.range_id).max().unwrap_or(0);
        let span = max - min;
        if span < 4 * rows.len() as u64 + 1024 {
            let mut table = vec![NONE; span as usize + 1];
            for (i, r) in rows.iter().enumerate() {
                let slot = &mut table[(r.range_id - min) as usize];
                if *slot != NONE {
                    return Err((*slot as usize, i));
                }
                *slot = i as u32;
            }
            Ok(IdIndex::Dense { min, rows: table })
        } else {
            let mut map = FxHashMap::with_capacity_and_hasher(rows.len(), Default::default());
            for (i, r) in rows.iter().enumerate() {
                if let Some(first) = map.insert(r.range_id, i as u32) {
                    return Err((first as usize, i));
                }
            }
            Ok(IdIndex::Sparse(map))
        }
    }

    fn get(&self, id: u64) -> Option<u32> {
        match self {
            IdIndex::Dense { min, rows } => id
                .checked_sub(*min)
                .and_then(|k| rows.get(usize::try_from(k).ok()?))
                .copied()
                .filter(|&r| r != NONE),
            IdIndex::Sparse(map) => map.get(&id).copied(),
        }
    }
}

/// The push/pop ranges as a tree: parent index and children lists (CSR) over row indexes.
struct Tree {
    by_id: IdIndex,
    parent: Vec<u32>,
    child_offsets: Vec<u32>,
    children: Vec<u32>,
}

impl Tree {
    fn build(rows: &[PushPopRow], path: &Path) -> Result<Tree, DataError> {
        let n = rows.len();
        let by_id = IdIndex::build(rows).map_err(|(first, second)| DataError {
            path: path.to_owned(),
            line: rows[second].line,
            column: "RangeId",
            message: format!(
                "range id {} appears twice (first at line {})",
                rows[second].range_id, rows[first].line
            ),
        })?;
        let mut parent = Vec::with_capacity(n);
        for r in rows {
            let p = match r.parent_id {
                None => NONE,
                Some(pid) => by_id.get(pid).ok_or_else(|| DataError {
                    path: path.to_owned(),
                    line: r.line,
                    column: "ParentId",
                    message: format!(
                        "parent range {pid} of range {} is not in the report",
                        r.range_id
                    ),
                })?,
            };
            parent.push(p);
        }
        let mut child_offsets = vec![0u32; n + 1];
        for &p in &parent {
            if p != NONE {
                child_offsets[p as usize + 1] += 1;
            }
        }
        for i in 0..n {
            child_offsets[i + 1] += child_offsets[i];
        }
        let mut fill = child_offsets.clone();
        let mut children = vec![0u32; child_offsets[n] as usize];
        for (i, &p) in parent.iter().enumerate() {
            if p != NONE {
                children[fill[p as usize] as usize] = i as u32;
                fill[p as usize] += 1;
            }
        }
        Ok(Tree {
            by_id,
            parent,
            child_offsets,
            children,
        })
    }

    fn children(&self, i: u32) -> &[u32] {
        let (a, b) = (
            self.child_offsets[i as usize] as usize,
            self.child_offsets[i as usize + 1] as usize,
        );
        &self.children[a..b]
    }

    fn roots(&self) -> impl Iterator<Item = u32> + '_ {
        self.parent
            .iter()
            .enumerate()
            .filter(|(_, &p)| p == NONE)
            .map(|(i, _)| i as u32)
    }
}

/// One measured iteration while the analysis works on it.
struct Measured {
    row: u32,
    index: u64,
    complete: bool,
    duplicate: bool,
}

/// Per name: does it match the iteration pattern, and with which index.
struct IterationIndexes(Vec<Option<u64>>);

impl IterationIndexes {
    /// Runs the pattern on every distinct name once (a trace can hold one name per pass).
    fn new(regex: &Regex, names: &Interner) -> Self {
        let mut slots = regex.capture_locations();
        IterationIndexes(
            names
                .names()
                .map(|text| {
                    regex
                        .captures_read(&mut slots, text)
                        .and_then(|_| slots.get(1))
                        .and_then(|(a, b)| text[a..b].parse::<u64>().ok())
                })
                .collect(),
        )
    }

    fn index(&self, name: NameId) -> Option<u64> {
        self.0.get(name.0 as usize).copied().flatten()
    }
}

fn is_capture_name(name: &str, capture: &str) -> bool {
    name == capture
        || name
            .split_once(':')
            .is_some_and(|(_, rest)| rest == capture)
}

pub fn analyze(settings: &Settings, reports: &Reports<'_>) -> Result<Findings, DataError> {
    let rows = reports.pushpop;
    let names = reports.names;
    // The pattern runs over the names while the tree is built.
    let (tree, matcher) = std::thread::scope(|scope| {
        let matcher = scope.spawn(|| IterationIndexes::new(&settings.iteration_pattern, names));
        let tree = Tree::build(rows, reports.pushpop_path);
        (
            tree,
            matcher.join().expect("the name matcher does not panic"),
        )
    });
    let tree = tree?;
    let mut warnings = Vec::new();

    // Capture range: a top-level range named `capture_range`, or `DOMAIN:capture_range`.
    let mut captures: Vec<u32> = Vec::new();
    if let Some(cap) = &settings.capture_range {
        captures = tree
            .roots()
            .filter(|&i| is_capture_name(names.resolve(rows[i as usize].name), cap))
            .collect();
        captures.sort_by_key(|&i| (rows[i as usize].start_ns, i));
        match captures.len() {
            0 => warnings.push(Warning::new(
                WarningCode::CaptureRangeMissing,
                format!(
                    "no top-level range named `{cap}` in the push/pop report; iterations were read from the whole trace"
                ),
            )),
            1 => {}
            n => warnings.push(
                Warning::new(
                    WarningCode::CaptureRangeMultiple,
                    format!("{n} top-level ranges named `{cap}`; the iterations of each are counted"),
                )
                .with_count(n as u64),
            ),
        }
    }

    // Measured iterations: the direct children of the capture range(s) that match the
    // pattern; with no capture range, the outermost matching ranges of the busiest thread.
    let mut measured: Vec<(u32, u64, i64)> = Vec::new(); // (row, index, end of its capture)
    if !captures.is_empty() {
        for &c in &captures {
            for &child in tree.children(c) {
                if let Some(index) = matcher.index(rows[child as usize].name) {
                    measured.push((child, index, rows[c as usize].end_ns));
                }
            }
        }
    } else {
        let outermost = outermost_matches(&tree, rows, &matcher);
        let mut per_thread: BTreeMap<(u32, u32), Vec<u32>> = BTreeMap::new();
        for i in outermost {
            let r = &rows[i as usize];
            per_thread.entry((r.pid, r.tid)).or_default().push(i);
        }
        let busiest = per_thread.into_iter().max_by(|(ta, a), (tb, b)| {
            let first = |v: &Vec<u32>| v.iter().map(|&i| rows[i as usize].start_ns).min();
            a.len()
                .cmp(&b.len())
                .then_with(|| first(b).cmp(&first(a)))
                .then_with(|| tb.cmp(ta))
        });
        if let Some((_, chosen)) = busiest {
            let latest_end = rows.iter().map(|r| r.end_ns).max().unwrap_or(0);
            for i in chosen {
                let index = matcher.index(rows[i as usize].name).unwrap_or(0);
                measured.push((i, index, latest_end));
            }
        }
    }

    // Ranges matching the pattern that are not measured iterations.
    let mut is_measured = vec![false; rows.len()];
    for m in &measured {
        is_measured[m.0 as usize] = true;
    }
    let reachable = reachable_from_roots(&tree);
    let elsewhere = (0..rows.len() as u32)
        .filter(|&i| reachable[i as usize] && !is_measured[i as usize])
        .filter(|&i| !captures.contains(&i))
        .filter(|&i| matcher.index(rows[i as usize].name).is_some())
        .count() as u64;
    if elsewhere > 0 {
        warnings.push(
            Warning::new(
                WarningCode::CaptureRangeExceeded,
                format!(
                    "{elsewhere} {} matching the iteration pattern {} outside the measured iterations",
                    plural(elsewhere, "range", "ranges"),
                    if elsewhere == 1 { "is" } else { "are" }
                ),
            )
            .with_count(elsewhere),
        );
    }

    // Completeness: nsys ends a never-popped range at the end of the capture. With no
    // capture range that end is the latest in the report, and the pass also did different
    // work (child names) than most passes.
    let usual_children = if captures.is_empty() {
        most_common_child_set(&tree, rows, measured.iter().map(|m| m.0))
    } else {
        None
    };
    let mut iterations: Vec<Measured> = measured
        .iter()
        .map(|&(row, index, capture_end)| {
            let r = &rows[row as usize];
            let ends_with_capture = r.end_ns == capture_end;
            let complete = if captures.is_empty() {
                !(ends_with_capture
                    && usual_children
                        .as_ref()
                        .is_some_and(|usual| &child_set(&tree, rows, row) != usual))
            } else {
                !ends_with_capture
            };
            Measured {
                row,
                index,
                complete,
                duplicate: false,
            }
        })
        .collect();
    iterations.sort_by_key(|m| (m.index, rows[m.row as usize].start_ns, m.row));
    for pair in 1..iterations.len() {
        if iterations[pair].index == iterations[pair - 1].index {
            iterations[pair].duplicate = true;
        }
    }

    // Index checks.
    let expected = settings.expected_iterations;
    let complete_indexes: std::collections::BTreeSet<u64> = iterations
        .iter()
        .filter(|m| m.complete)
        .map(|m| m.index)
        .collect();
    let missing_count = expected.saturating_sub(
        complete_indexes
            .iter()
            .take_while(|&&i| i < expected)
            .count() as u64,
    );
    if missing_count > 0 {
        let missing: Vec<u64> = (0..expected)
            .filter(|i| !complete_indexes.contains(i))
            .take(MAX_LISTED)
            .collect();
        let incomplete: Vec<u64> = iterations
            .iter()
            .filter(|m| !m.complete && m.index < expected)
            .map(|m| m.index)
            .collect();
        let mut message = format!(
            "expected {}, missing {}",
            describe_expected(expected),
            list_indexes(&missing, missing_count)
        );
        if !incomplete.is_empty() {
            message.push_str(&format!(
                " (incomplete: {})",
                list_indexes(&incomplete, incomplete.len() as u64)
            ));
        }
        warnings.push(
            Warning::new(WarningCode::MissingIterations, message)
                .with_iterations(missing)
                .with_count(missing_count),
        );
    }
    let mut unexpected: Vec<u64> = iterations
        .iter()
        .filter(|m| m.index >= expected)
        .map(|m| m.index)
        .collect();
    unexpected.dedup();
    if !unexpected.is_empty() {
        warnings.push(
            Warning::new(
                WarningCode::UnexpectedIterations,
                format!(
                    "found {} beyond the expected {}",
                    list_named_indexes(&unexpected),
                    describe_expected(expected)
                ),
            )
            .with_count(unexpected.len() as u64)
            .with_iterations(unexpected),
        );
    }
    let mut duplicated: Vec<u64> = iterations
        .iter()
        .filter(|m| m.duplicate)
        .map(|m| m.index)
        .collect();
    duplicated.dedup();
    if !duplicated.is_empty() {
        warnings.push(
            Warning::new(
                WarningCode::DuplicateIterations,
                format!(
                    "{} seen more than once; later passes are left out of the statistics",
                    list_named_indexes(&duplicated)
                ),
            )
            .with_count(duplicated.len() as u64)
            .with_iterations(duplicated),
        );
    }

    // GPU projection: each report row joined to its push/pop range on RangeId, PID and TID.
    let gpu = match reports.gpu {
        Some(gpu_rows) => Some(GpuIndex::build(gpu_rows, rows, &tree, reports.gpu_path)?),
        None => None,
    };

    // The statistics set: complete measured iterations, the first pass of each index.
    let counted: Vec<&Measured> = iterations
        .iter()
        .filter(|m| m.complete && !m.duplicate)
        .collect();
    // The range tables take a walk of their own: on a second thread, beside the rest.
    std::thread::scope(|scope| {
        let tables = scope.spawn(|| range_tables(&tree, rows, names, &counted, gpu.as_ref()));
        let host_inclusive = Sample::new(
            counted
                .iter()
                .map(|m| rows[m.row as usize].duration_ns())
                .collect(),
        );
        let host_exclusive = Sample::new(
            counted
                .iter()
                .map(|m| rows[m.row as usize].dur_non_child_ns())
                .collect(),
        );
        let gpu_projected = gpu.as_ref().map(|g| {
            Sample::new(
                counted
                    .iter()
                    .filter_map(|m| g.projection(m.row).map(|p| p.projected_ns))
                    .collect(),
            )
        });

        // Advisory warnings on the host-inclusive iteration times.
        let first_iteration = counted
            .iter()
            .min_by_key(|m| (rows[m.row as usize].start_ns, m.row))
            .map(|m| {
                let ns = rows[m.row as usize].duration_ns();
                let median = host_inclusive.median();
                FirstIteration {
                    index: m.index,
                    host_inclusive_ns: ns,
                    ratio_to_median: if median > 0.0 {
                        ns as f64 / median
                    } else {
                        1.0
                    },
                }
            });
        if let Some(first) = &first_iteration {
            if counted.len() >= 2 && first.ratio_to_median > FIRST_ITERATION_SLOW_RATIO {
                warnings.push(
                    Warning::new(
                        WarningCode::FirstIterationSlow,
                        format!(
                        "first measured iteration {} took {:.2}x the median host inclusive time",
                        first.index, first.ratio_to_median
                    ),
                    )
                    .with_iterations(vec![first.index]),
                );
            }
        }
        if host_inclusive.len() >= 2 && host_inclusive.cv() > HIGH_VARIANCE_CV {
            warnings.push(Warning::new(
            WarningCode::HighVariance,
            format!(
                "host inclusive iteration times vary widely: cv {:.3} over {} iterations (threshold {HIGH_VARIANCE_CV})",
                host_inclusive.cv(),
                host_inclusive.len()
            ),
        ));
        }
        if host_inclusive.len() >= 3 {
            let limit = host_inclusive.median() + SLOW_ITERATION_MADS * host_inclusive.mad();
            let slow: Vec<u64> = counted
                .iter()
                .filter(|m| rows[m.row as usize].duration_ns() as f64 > limit)
                .map(|m| m.index)
                .collect();
            if !slow.is_empty() {
                warnings.push(
                Warning::new(
                    WarningCode::SlowIterations,
                    format!(
                        "{} took longer than the median + 5 x MAD of host inclusive time ({:.0} ns)",
                        list_named_indexes(&slow),
                        limit
                    ),
                )
                .with_count(slow.len() as u64)
                .with_iterations(slow),
            );
            }
        }

        // GPU warnings.
        if let Some(g) = &gpu {
            if g.outside_ops > 0 {
                warnings.push(
                    Warning::new(
                        WarningCode::GpuOpsOutsideRanges,
                        format!(
                            "{} GPU {} launched outside every NVTX range",
                            g.outside_ops,
                            plural(g.outside_ops, "operation was", "operations were")
                        ),
                    )
                    .with_count(g.outside_ops),
                );
            }
            let idle: Vec<&str> = captures
                .iter()
                .filter(|&&c| g.projection(c).is_none())
                .map(|&c| names.resolve(rows[c as usize].name))
                .collect();
            if !idle.is_empty() {
                warnings.push(Warning::new(
                    WarningCode::CaptureRangeWithoutGpuWork,
                    "the GPU projection exists but the capture range launched no GPU work"
                        .to_owned(),
                ));
            }
            let without: Vec<u64> = counted
                .iter()
                .filter(|m| g.projection(m.row).is_none())
                .map(|m| m.index)
                .collect();
            if !without.is_empty() {
                warnings.push(
                    Warning::new(
                        WarningCode::IterationsWithoutGpuProjection,
                        format!("{} launched no GPU work", list_named_indexes(&without)),
                    )
                    .with_count(without.len() as u64)
                    .with_iterations(without),
                );
            }
        }

        // Ranges that are not a capture range, not a measured iteration and not below one.
        let mut attributed = vec![false; rows.len()];
        for &c in &captures {
            attributed[c as usize] = true;
        }
        let mut stack: Vec<u32> = iterations.iter().map(|m| m.row).collect();
        while let Some(i) = stack.pop() {
            if !attributed[i as usize] {
                attributed[i as usize] = true;
                stack.extend_from_slice(tree.children(i));
            }
        }
        let unattributed_ranges = attributed.iter().filter(|&&a| !a).count() as u64;

        let iteration_list = iterations
            .iter()
            .map(|m| {
                let r = &rows[m.row as usize];
                Iteration {
                    index: m.index,
                    range_id: r.range_id,
                    pid: u64::from(r.pid),
                    tid: u64::from(r.tid),
                    complete: m.complete,
                    duplicate: m.duplicate,
                    host: IterationHost {
                        start_ns: r.start_ns,
                        end_ns: r.end_ns,
                        inclusive_ns: r.duration_ns(),
                        exclusive_ns: r.dur_non_child_ns(),
                        child_total_ns: r.dur_child_ns,
                    },
                    gpu_projection: gpu.as_ref().and_then(|g| g.projection(m.row)),
                }
            })
            .collect();

        // Range tables over the statistics set, by scoped name.
        let (host_ranges, gpu_projected_ranges) =
            tables.join().expect("the range tables do not panic");
        Ok(Findings {
            warnings,
            iteration_summary: IterationSummary {
                expected,
                found: iterations.len() as u64,
                complete: iterations.iter().filter(|m| m.complete).count() as u64,
                unattributed_ranges,
                host_inclusive: host_inclusive.iteration_stats(),
                host_exclusive: host_exclusive.iteration_stats(),
                gpu_projected: gpu_projected.and_then(|s| s.iteration_stats()),
                first_iteration,
            },
            iterations: iteration_list,
            host_ranges,
            gpu_projected_ranges,
        })
    })
}

/// At most this many indexes are listed in a warning; `count` has the full number.
const MAX_LISTED: usize = 10_000;

fn plural<'a>(n: u64, one: &'a str, many: &'a str) -> &'a str {
    if n == 1 {
        one
    } else {
        many
    }
}

fn describe_expected(expected: u64) -> String {
    match expected {
        0 => "no iterations".to_owned(),
        1 => "iteration 0".to_owned(),
        n => format!("iterations 0-{}", n - 1),
    }
}

fn list_named_indexes(indexes: &[u64]) -> String {
    format!(
        "{} {}",
        plural(indexes.len() as u64, "iteration", "iterations"),
        list_indexes(indexes, indexes.len() as u64)
    )
}

/// At most this many entries (single indexes or runs) are written into a message; the
/// warning's `iterations` and `count` carry the rest.
const MESSAGE_ENTRIES: usize = 20;

/// `1, 2, 5-9` (runs of four or more collapse), and how many more when the list was cut.
fn list_indexes(indexes: &[u64], total: u64) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut shown = 0u64;
    let mut i = 0;
    while i < indexes.len() && parts.len() < MESSAGE_ENTRIES {
        let mut j = i;
        while j + 1 < indexes.len() && indexes[j + 1] == indexes[j] + 1 {
            j += 1;
        }
        if j - i >= 3 {
            parts.push(format!("{}-{}", indexes[i], indexes[j]));
            shown += (j - i + 1) as u64;
        } else {
            for index in indexes[i..=j].iter().take(MESSAGE_ENTRIES - parts.len()) {
                parts.push(index.to_string());
                shown += 1;
            }
        }
        i = j + 1;
    }
    let mut out = parts.join(", ");
    if total > shown {
        out.push_str(&format!(" and {} more", total - shown));
    }
    out
}

fn reachable_from_roots(tree: &Tree) -> Vec<bool> {
    let mut seen = vec![false; tree.parent.len()];
    let mut stack: Vec<u32> = tree.roots().collect();
    while let Some(i) = stack.pop() {
        if !seen[i as usize] {
            seen[i as usize] = true;
            stack.extend_from_slice(tree.children(i));
        }
    }
    seen
}

/// Matching ranges with no matching ancestor.
fn outermost_matches(tree: &Tree, rows: &[PushPopRow], matcher: &IterationIndexes) -> Vec<u32> {
    let mut found = Vec::new();
    let mut stack: Vec<u32> = tree.roots().collect();
    while let Some(i) = stack.pop() {
        if matcher.index(rows[i as usize].name).is_some() {
            found.push(i);
        } else {
            stack.extend_from_slice(tree.children(i));
        }
    }
    found.sort_unstable();
    found
}

fn child_set(tree: &Tree, rows: &[PushPopRow], i: u32) -> Vec<NameId> {
    let mut set = Vec::new();
    child_set_into(tree, rows, i, &mut set);
    set
}

/// The distinct names of the direct children of `i`, sorted, into `set`.
fn child_set_into(tree: &Tree, rows: &[PushPopRow], i: u32, set: &mut Vec<NameId>) {
    set.clear();
    set.extend(tree.children(i).iter().map(|&c| rows[c as usize].name));
    set.sort_unstable();
    set.dedup();
}

/// The set of direct-child names most iterations have (ties: the earliest seen).
fn most_common_child_set(
    tree: &Tree,
    rows: &[PushPopRow],
    iterations: impl Iterator<Item = u32>,
) -> Option<Vec<NameId>> {
    // Set -> (count, order first seen). Hashed: every pass may have a set of its own.
    let mut counts: FxHashMap<Vec<NameId>, (usize, usize)> = FxHashMap::default();
    let mut set = Vec::new();
    for i in iterations {
        child_set_into(tree, rows, i, &mut set);
        let seen = counts.len();
        match counts.get_mut(&set) {
            Some((n, _)) => *n += 1,
            None => {
                counts.insert(set.clone(), (1, seen));
            }
        }
    }
    counts
        .into_iter()
        .max_by(|(_, (na, fa)), (_, (nb, fb))| na.cmp(nb).then(fb.cmp(fa)))
        .map(|(set, _)| set)
}

/// GPU projection rows by push/pop row.
struct GpuIndex<'a> {
    /// Per push/pop row: the index of its projection row in `gpu`, or NONE.
    by_row: Vec<u32>,
    gpu: &'a [GpuProjRow],
    outside_ops: u64,
}

impl<'a> GpuIndex<'a> {
    fn build(
        gpu: &'a [GpuProjRow],
        rows: &[PushPopRow],
        tree: &Tree,
        path: &Path,
    ) -> Result<GpuIndex<'a>, DataError> {
        let mut by_row = vec![NONE; rows.len()];
        let mut outside_ops = 0u64;
        for (k, g) in gpu.iter().enumerate() {
            let Some(range_id) = g.range_id else {
                // nsys's synthetic root (no range): the operations launched outside every
                // range.
                outside_ops = outside_ops.saturating_add(g.num_gpu_ops);
                continue;
            };
            if g.style != Some(RangeStyle::PushPop) {
                continue;
            }
            let Some(row) = tree.by_id.get(range_id) else {
                continue;
            };
            let r = &rows[row as usize];
            if r.pid != g.pid || r.tid != g.tid {
                continue;
            }
            if let Some(orig) = g.orig_start_ns {
                if orig != r.start_ns {
                    return Err(DataError {
                        path: path.to_owned(),
                        line: g.line,
                        column: "Orig Start (ns)",
                        message: format!(
                            "range {range_id} starts at {orig} here but at {} in the push/pop report (line {}): the two reports are not from the same export",
                            r.start_ns, r.line
                        ),
                    });
                }
            }
            if projection_of(g).is_some() {
                by_row[row as usize] = k as u32;
            }
        }
        Ok(GpuIndex {
            by_row,
            gpu,
            outside_ops,
        })
    }

    fn projection(&self, row: u32) -> Option<IterationGpu> {
        match self.by_row[row as usize] {
            NONE => None,
            k => projection_of(&self.gpu[k as usize]),
        }
    }
}

/// What a projection row says about its range: `None` when it launched nothing.
fn projection_of(g: &GpuProjRow) -> Option<IterationGpu> {
    let (Some(start), Some(projected)) = (g.projected_start_ns, g.projected_duration_ns) else {
        return None;
    };
    (g.num_gpu_ops > 0).then(|| IterationGpu {
        start_ns: start,
        end_ns: start.saturating_add(projected),
        projected_ns: projected,
        gpu_operation_count: g.num_gpu_ops,
    })
}

#[derive(Default)]
struct RangeAccumulator {
    inclusive: Vec<i64>,
    exclusive: Vec<i64>,
    child_total: i128,
    projected: Vec<i64>,
    projected_host_total: i128,
    gpu_ops: u64,
}

fn range_tables(
    tree: &Tree,
    rows: &[PushPopRow],
    names: &Interner,
    counted: &[&Measured],
    gpu: Option<&GpuIndex>,
) -> (Vec<HostRange>, Vec<GpuProjectedRange>) {
    // Scoped names are interned as (parent path, name) pairs, so a path costs one lookup.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_collapse_long_runs_only() {
        assert_eq!(list_indexes(&[17, 18, 19], 3), "17, 18, 19");
        assert_eq!(list_indexes(&[1, 3, 4, 5, 6, 9], 6), "1, 3-6, 9");
        assert_eq!(list_indexes(&[1, 2], 5), "1, 2 and 3 more");
        let many: Vec<u64> = (0..100).map(|i| i * 2).collect();
        let text = list_indexes(&many, 100);
        assert!(text.starts_with("0, 2, 4,"), "{text}");
        assert!(text.ends_with("38 and 80 more"), "{text}");
    }

    /// A tree of push/pop rows built from (parent index, name, start, length) tuples, with
    /// consistent DurChild/DurNonChild, as nsys would write them.
    fn build_rows(
        spec: &[(Option<usize>, &str, i64, i64)],
        names: &mut Interner,
    ) -> Vec<PushPopRow> {
        let mut rows: Vec<PushPopRow> = spec
            .iter()
            .enumerate()
            .map(|(i, &(parent, name, start, len))| PushPopRow {
                start_ns: start,
                end_ns: start + len,
                dur_child_ns: 0,
                name: names.intern(name),
                pid: 1,
                tid: 1,
                range_id: i as u64 + 1,
                parent_id: parent.map(|p| p as u64 + 1),
                line: i as u32 + 2,
            })
            .collect();
        for i in 0..rows.len() {
            if let Some(p) = spec[i].0 {
                let d = rows[i].end_ns - rows[i].start_ns;
                rows[p].dur_child_ns += d;
            }
        }
        rows
    }

    fn run(
        capture: Option<&str>,
        expected: u64,
        rows: &[PushPopRow],
        names: &Interner,
    ) -> Findings {
        let settings = Settings {
            capture_range: capture.map(str::to_owned),
            iteration_pattern: full_match_regex(r"^iteration (\d+)$").unwrap(),
            expected_iterations: expected,
        };
        analyze(
            &settings,
            &Reports {
                names,
                pushpop: rows,
                pushpop_path: Path::new("p.csv"),
                gpu: None,
                gpu_path: Path::new("g.csv"),
            },
        )
        .unwrap()
    }

    fn codes(f: &Findings) -> Vec<&str> {
        f.warnings.iter().map(|w| w.code.as_str()).collect()
    }

    #[test]
    fn scoped_names_keep_parents_apart_and_exclusive_times_add_up() {
        let mut names = Interner::new();
        let rows = build_rows(
            &[
                (None, "cap", 0, 1000),
                (Some(0), "iteration 0", 10, 400),
                (Some(1), "pre", 20, 100),
                (Some(2), "resize", 30, 50),
                (Some(1), "post", 200, 100),
                (Some(4), "resize", 210, 30),
                (Some(0), "iteration 1", 500, 400),
                (Some(6), "pre", 520, 100),
                (Some(7), "resize", 530, 60),
                (Some(6), "post", 700, 100),
                (Some(9), "resize", 710, 20),
            ],
            &mut names,
        );
        let f = run(Some("cap"), 2, &rows, &names);
        assert!(f.warnings.is_empty(), "{:?}", f.warnings);
        let table: Vec<(&str, u64, i64)> = f
            .host_ranges
            .iter()
            .map(|r| (r.name.as_str(), r.instances, r.inclusive.total_ns))
            .collect();
        assert_eq!(
            table,
            [
                ("post", 2, 200),
                ("post.resize", 2, 50),
                ("pre", 2, 200),
                ("pre.resize", 2, 110),
            ]
        );
        // An iteration's exclusive time plus its ranges' exclusive times is its inclusive time.
        let exclusive: i64 = f
            .host_ranges
            .iter()
            .map(|r| r.exclusive.total_ns)
            .sum::<i64>()
            + f.iteration_summary
                .host_exclusive
                .as_ref()
                .unwrap()
                .total_ns;
        assert_eq!(
            exclusive,
            f.iteration_summary
                .host_inclusive
                .as_ref()
                .unwrap()
                .total_ns
        );
    }

    #[test]
    fn without_a_capture_range_ties_go_to_the_earliest_thread() {
        let mut names = Interner::new();
        let mut rows = build_rows(
            &[
                (None, "iteration 0", 100, 10),
                (None, "iteration 1", 120, 10),
                (None, "iteration 0", 50, 10),
                (None, "iteration 1", 70, 10),
            ],
            &mut names,
        );
        rows[0].tid = 2;
        rows[1].tid = 2;
        rows[2].tid = 3;
        rows[3].tid = 3;
        let f = run(None, 2, &rows, &names);
        assert!(f.iterations.iter().all(|i| i.tid == 3));
        assert_eq!(codes(&f), ["capture_range_exceeded"]);
    }

    #[test]
    fn without_a_capture_range_a_cut_short_last_pass_is_incomplete() {
        let mut names = Interner::new();
        let rows = build_rows(
            &[
                (None, "iteration 0", 0, 100),
                (Some(0), "work", 10, 50),
                (Some(0), "tail", 70, 20),
                (None, "iteration 1", 200, 100),
                (Some(3), "work", 210, 50),
                (Some(3), "tail", 270, 20),
                (None, "iteration 2", 400, 600),
                (Some(6), "work", 410, 590),
            ],
            &mut names,
        );
        let f = run(None, 3, &rows, &names);
        let complete: Vec<bool> = f.iterations.iter().map(|i| i.complete).collect();
        assert_eq!(complete, [true, true, false]);
        assert_eq!(f.warnings[0].iterations.as_deref(), Some(&[2][..]));
    }

    proptest::proptest! {
        /// Whatever rows a report holds (cycles, self-parents, any times), the analysis
        /// returns without panicking, and its counts stay consistent.
        #[test]
        fn arbitrary_rows_never_panic(
            spec in proptest::collection::vec(
                (proptest::option::of(0usize..40), 0usize..6, -5i64..1000, 0i64..500, 1u32..3),
                0..40,
            ),
            expected in 1u64..6,
            capture in proptest::option::of(0usize..6),
        ) {
            let labels = ["cap", "iteration 0", "iteration 1", "iteration 9", "work", ":x"];
            let mut names = Interner::new();
            let rows: Vec<PushPopRow> = spec
                .iter()
                .enumerate()
                .map(|(i, &(parent, name, start, len, tid))| PushPopRow {
                    start_ns: start,
                    end_ns: start + len,
                    dur_child_ns: len / 2,
                    name: names.intern(labels[name]),
                    pid: 1,
                    tid,
                    range_id: i as u64 + 1,
                    parent_id: parent.filter(|&p| p < spec.len()).map(|p| p as u64 + 1),
                    line: i as u32 + 2,
                })
                .collect();
            let f = run(capture.map(|c| labels[c]), expected, &rows, &names);
            let s = &f.iteration_summary;
            proptest::prop_assert_eq!(s.found, f.iterations.len() as u64);
            proptest::prop_assert!(s.complete <= s.found);
            if let Some(h) = &s.host_inclusive {
                proptest::prop_assert!(h.count <= s.complete);
                proptest::prop_assert!(h.minimum_ns as f64 <= h.median_ns && h.median_ns <= h.maximum_ns as f64);
            }
            for r in &f.host_ranges {
                proptest::prop_assert!(r.exclusive.total_ns <= r.inclusive.total_ns);
            }
            proptest::prop_assert!(s.unattributed_ranges <= rows.len() as u64);
        }
    }

    #[test]
    fn capture_names_may_carry_a_domain() {
        assert!(is_capture_name("profile-target", "profile-target"));
        assert!(is_capture_name("harness:profile-target", "profile-target"));
        assert!(!is_capture_name("profile-target-2", "profile-target"));
    }
}
