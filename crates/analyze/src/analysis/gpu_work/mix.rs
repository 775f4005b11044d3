//! Kernels per range: each kernel joined to the CUDA API call that launched it and attributed
//! to the innermost range around that call; the mixes of the counted iterations and of the
//! ranges with the largest GPU-projected totals.

use std::collections::BTreeMap;

use rustc_hash::FxHashMap;

use super::super::iterations::Measured;
use super::super::ranges::{clamp, Scopes};
use super::super::tree::{Tree, NONE};
use super::devices::{DeviceSpans, DeviceWork};
use super::share;
use super::trace::{copy_key, CopyKey, CopyLaunch, KernelLaunch, Totals};
use crate::reports::{ApiCall, Interner, NameId, PushPopRow};
use nsys_gate_core::artifact::{
    group_name, kernel_base_name, AdviceKernels, GpuProjectedRange, GpuProjectedRangeGroup,
    HostRange, HostRangeGroup, IterationKernels, KernelAttribution, OtherKernels, RangeKernel,
    RangeKernelGroup, RangeKernels,
};

/// Kernels named in a range's mix; the others are summed in `other_kernels`.
pub const TOP_KERNELS: usize = 5;
/// Ranges in `per_range_kernels` (and groups in `per_range_kernel_groups`).
pub const TOP_RANGES: usize = 10;

/// The CUDA API calls and the kernels they launched, with the kernels' names: from
/// `cuda_kern_exec_trace` (a call per kernel, joined by nsys, each with a correlation id of its
/// own here), or `cuda_api_trace`'s calls and `cuda_gpu_trace`'s kernels, joined here on the
/// correlation id.
pub struct Launches<'a> {
    pub api: &'a [ApiCall],
    pub kernels: &'a [KernelLaunch],
    /// Every kernel of the capture, with a launching call or not (`cuda_gpu_trace`'s kernel
    /// rows, or what counts them best).
    pub kernel_rows: u64,
    pub names: &'a Interner,
    /// The report the calls came from (`kernel_attribution.report`).
    pub report: &'static str,
    /// Each kernel's base name (`gpu_work.kernels[].base_name`); a kernel not in it gets the
    /// derived one.
    pub base_names: FxHashMap<&'a str, &'a str>,
    /// The memory copies, when their launching calls are among `api` (`cuda_api_trace`,
    /// joined on the correlation id as the kernels are); `None` when they are not
    /// (`cuda_kern_exec_trace` gives kernels only). Names in `names`.
    pub copies: Option<&'a [CopyLaunch]>,
}

/// The kernels of the counted iterations and of the ranges below them.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelMix {
    pub iteration: IterationKernels,
    pub ranges: Vec<RangeKernels>,
    /// The groups of ranges with the largest GPU-projected totals, with their mixes.
    pub range_groups: Vec<RangeKernelGroup>,
    pub attribution: KernelAttribution,
    /// The kernels of the groups asked for ([`MixInput::groups`]), by group; a group whose
    /// ranges launched no kernel is left out.
    pub groups: BTreeMap<String, AdviceKernels>,
    /// Every kernel launched inside the counted iterations, by base name.
    pub by_base_name: BTreeMap<String, BaseNameLaunches>,
    /// The memory copies launched inside the counted iterations, by copy group; `None` when
    /// the copies' launching calls are unknown ([`Launches::copies`]).
    pub copies: Option<BTreeMap<CopyKey, Totals>>,
    /// Each device's compute and communication inside the counted iterations, by device id.
    pub devices: BTreeMap<u32, DeviceWork>,
    /// What `devices` is per: the counted iterations, or a distributed run's complete steps
    /// (a step runs each rank's iteration, each on its rank's device).
    pub device_iterations: u64,
}

/// The kernels of one base name launched inside the counted iterations.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BaseNameLaunches {
    pub launches: u64,
    pub total_ns: i128,
    /// Their time by the group of the innermost range around each launch; launches of an
    /// iteration outside every range below it are in no group.
    pub by_group: BTreeMap<String, i128>,
}

/// The range tables the mixes are named and ranked by, and the groups whose mixes are wanted.
pub(in crate::analysis) struct MixInput<'a> {
    pub host: &'a [HostRange],
    pub gpu: &'a [GpuProjectedRange],
    pub host_groups: &'a [HostRangeGroup],
    pub gpu_groups: &'a [GpuProjectedRangeGroup],
    /// Groups of scoped names (`artifact::group_name`): advice's GPU-bound groups.
    pub groups: &'a [String],
}

const AMBIGUOUS: u32 = u32::MAX - 1;

/// Attributes every kernel to the innermost range containing its launch, and sums the mixes.
pub(in crate::analysis) fn kernel_mix(
    tree: &Tree,
    rows: &[PushPopRow],
    counted: &[&Measured],
    scopes: &Scopes,
    launches: &Launches<'_>,
    tables: &MixInput<'_>,
) -> KernelMix {
    // The API calls that launched a kernel, by correlation id.
    let mut by_corr: FxHashMap<u64, u32> = FxHashMap::default();
    by_corr.reserve(launches.kernels.len());
    for k in launches.kernels {
        by_corr.insert(k.corr_id, NONE);
    }
    for c in launches.copies.unwrap_or_default() {
        by_corr.insert(c.corr_id, NONE);
    }
    for (i, call) in launches.api.iter().enumerate() {
        if let Some(slot) = by_corr.get_mut(&call.corr_id) {
            *slot = match *slot {
                NONE => i as u32,
                AMBIGUOUS => AMBIGUOUS,
                j if launches.api[j as usize].pid == call.pid
                    && launches.api[j as usize].tid == call.tid =>
                {
                    j
                }
                _ => AMBIGUOUS,
            };
        }
    }
    let mut calls: Vec<u32> = by_corr
        .values()
        .copied()
        .filter(|&i| i != NONE && i != AMBIGUOUS)
        .collect();
    let place = place_calls(tree, rows, counted, scopes, launches.api, &mut calls);

    let mut attribution = KernelAttribution {
        kernels: launches.kernel_rows,
        in_counted_iterations: 0,
        elsewhere: 0,
        without_api_call: launches
            .kernel_rows
            .saturating_sub(launches.kernels.len() as u64),
        ambiguous: 0,
        report: Some(launches.report.to_owned()),
    };
    let mut iteration = Mix::default();
    let mut by_scope: Vec<Mix> = (0..scopes.parent.len()).map(|_| Mix::default()).collect();
    // Each kernel name's launches and time by the innermost scope around them.
    let mut innermost: FxHashMap<(NameId, u32), (u64, i128)> = FxHashMap::default();
    let mut devices = DeviceSpans::default();
    for k in launches.kernels {
        let call = by_corr.get(&k.corr_id).copied().unwrap_or(NONE);
        if call == NONE {
            attribution.without_api_call += 1;
            devices.add(k, false, launches.names);
            continue;
        }
        if call == AMBIGUOUS {
            attribution.ambiguous += 1;
            devices.add(k, false, launches.names);
            continue;
        }
        let scope = place.get(&call).copied();
        devices.add(k, scope.is_some(), launches.names);
        match scope {
            None => attribution.elsewhere += 1,
            Some(scope) => {
                attribution.in_counted_iterations += 1;
                iteration.add(k);
                let e = innermost.entry((k.name, scope)).or_default();
                e.0 += 1;
                e.1 += i128::from(k.duration_ns);
                let mut s = scope;
                while s != NONE {
                    by_scope[s as usize].add(k);
                    s = scopes.parent[s as usize];
                }
            }
        }
    }

    let (kernels, other_kernels) = iteration.top(launches.names, &launches.base_names);
    let iteration = IterationKernels {
        iterations: counted.len() as u64,
        launches: iteration.launches,
        total_ns: clamp(iteration.total_ns),
        kernels,
        other_kernels,
    };
    let copies = launches.copies.map(|copies| {
        let mut sums: FxHashMap<_, Totals> = FxHashMap::default();
        for c in copies {
            let call = by_corr.get(&c.corr_id).copied().unwrap_or(NONE);
            if call != NONE && call != AMBIGUOUS && place.contains_key(&call) {
                sums.entry(c.kind).or_default().add(Totals {
                    count: 1,
                    bytes: c.bytes,
                    total_ns: i128::from(c.duration_ns),
                });
            }
        }
        let mut out: BTreeMap<CopyKey, Totals> = BTreeMap::new();
        for (kind, t) in sums {
            if let Some(key) = copy_key(launches.names, kind) {
                out.entry(key).or_default().add(t);
            }
        }
        out
    });
    let sums = group_sums(&by_scope, scopes);
    KernelMix {
        devices: devices.finish(),
        device_iterations: iteration.iterations,
        by_base_name: by_base_name(&innermost, scopes, launches),
        copies,
        iteration,
        groups: group_mixes(&sums, launches, tables.groups),
        range_groups: top_groups(&sums, launches, tables),
        ranges: top_ranges(by_scope, scopes, launches, tables.host, tables.gpu),
        attribution,
    }
}

/// The kernels of the counted iterations by base name, each with its time by the group of
/// the innermost range around its launches.
fn by_base_name(
    innermost: &FxHashMap<(NameId, u32), (u64, i128)>,
    scopes: &Scopes,
    launches: &Launches<'_>,
) -> BTreeMap<String, BaseNameLaunches> {
    let mut groups: FxHashMap<u32, String> = FxHashMap::default();
    let mut out: BTreeMap<String, BaseNameLaunches> = BTreeMap::new();
    for (&(name, scope), &(count, total)) in innermost {
        let name = launches.names.resolve(name);
        let base = launches
            .base_names
            .get(name)
            .copied()
            .unwrap_or_else(|| kernel_base_name(name));
        let e = out.entry(base.to_owned()).or_default();
        e.launches += count;
        e.total_ns += total;
        if scope != NONE {
            let group = groups
                .entry(scope)
                .or_insert_with(|| group_name(&scopes.name[scope as usize]));
            *e.by_group.entry(group.clone()).or_default() += total;
        }
    }
    out
}

/// The mix of every group of scoped names that launched kernels: the sums of its members'
/// (members of a group have the same number of scope levels, so none holds another's
/// kernels).
fn group_sums(by_scope: &[Mix], scopes: &Scopes) -> BTreeMap<String, Mix> {
    let mut sums: BTreeMap<String, Mix> = BTreeMap::new();
    for (id, mix) in by_scope.iter().enumerate() {
        if mix.launches > 0 {
            sums.entry(group_name(&scopes.name[id]))
                .or_default()
                .merge(mix);
        }
    }
    sums
}

/// The mixes of the `wanted` groups; a group that launched no kernel is left out.
fn group_mixes(
    sums: &BTreeMap<String, Mix>,
    launches: &Launches<'_>,
    wanted: &[String],
) -> BTreeMap<String, AdviceKernels> {
    let (names, base_names) = (launches.names, &launches.base_names);
    wanted
        .iter()
        .filter_map(|group| {
            let m = sums.get(group)?;
            let (kernels, other_kernels) = m.top(names, base_names);
            let kernels = AdviceKernels {
                launches: m.launches,
                total_ns: clamp(m.total_ns),
                kernels,
                other_kernels,
            };
            Some((group.clone(), kernels))
        })
        .collect()
}

/// The groups with the largest GPU-projected totals that launched kernels (by kernel time
/// when there is no projection), with their mixes, as [`top_ranges`] ranks ranges.
fn top_groups(
    sums: &BTreeMap<String, Mix>,
    launches: &Launches<'_>,
    tables: &MixInput<'_>,
) -> Vec<RangeKernelGroup> {
    let (names, base_names) = (launches.names, &launches.base_names);
    let projected: FxHashMap<&str, i64> = tables
        .gpu_groups
        .iter()
        .map(|g| (g.group.as_str(), g.projected.total_ns))
        .collect();
    let host: FxHashMap<&str, (u64, u64)> = tables
        .host_groups
        .iter()
        .map(|h| (h.group.as_str(), (h.names, h.instances)))
        .collect();
    let mut ranked: Vec<(&str, Option<i64>, &Mix)> = sums
        .iter()
        .map(|(g, m)| (g.as_str(), projected.get(g.as_str()).copied(), m))
        .collect();
    ranked.sort_by(|a, b| {
        b.1.cmp(&a.1)
            .then_with(|| b.2.total_ns.cmp(&a.2.total_ns))
            .then_with(|| a.0.cmp(b.0))
    });
    ranked
        .into_iter()
        .take(TOP_RANGES)
        .map(|(group, projected_total_ns, mix)| {
            let (kernels, other_kernels) = mix.top(names, base_names);
            let (names_in_group, instances) = host.get(group).copied().unwrap_or((0, 0));
            RangeKernelGroup {
                group: group.to_owned(),
                names: names_in_group,
                instances,
                projected_total_ns,
                launches: mix.launches,
                total_ns: clamp(mix.total_ns),
                kernels,
                other_kernels,
            }
        })
        .collect()
}

/// The ranges with the largest GPU-projected totals that launched kernels (by kernel time
/// when there is no projection), with their mixes.
fn top_ranges(
    by_scope: Vec<Mix>,
    scopes: &Scopes,
    launches: &Launches<'_>,
    host: &[HostRange],
    gpu: &[GpuProjectedRange],
) -> Vec<RangeKernels> {
    let (names, base_names) = (launches.names, &launches.base_names);
    let projected: FxHashMap<&str, i64> = gpu
        .iter()
        .map(|g| (g.name.as_str(), g.projected.total_ns))
        .collect();
    let instances: FxHashMap<&str, u64> = host
        .iter()
        .map(|h| (h.name.as_str(), h.instances))
        .collect();
    let mut ranked: Vec<(u32, Option<i64>, &Mix)> = by_scope
        .iter()
        .enumerate()
        .filter(|(_, m)| m.launches > 0)
        .map(|(id, m)| {
            let name = scopes.name[id].as_str();
            (id as u32, projected.get(name).copied(), m)
        })
        .collect();
    ranked.sort_by(|a, b| {
        b.1.cmp(&a.1)
            .then_with(|| b.2.total_ns.cmp(&a.2.total_ns))
            .then_with(|| scopes.name[a.0 as usize].cmp(&scopes.name[b.0 as usize]))
    });
    ranked
        .into_iter()
        .take(TOP_RANGES)
        .map(|(id, projected_total_ns, mix)| {
            let name = scopes.name[id as usize].clone();
            let (kernels, other_kernels) = mix.top(names, base_names);
            RangeKernels {
                instances: instances.get(name.as_str()).copied().unwrap_or(0),
                path: scopes.path[id as usize].clone(),
                name,
                projected_total_ns,
                launches: mix.launches,
                total_ns: clamp(mix.total_ns),
                kernels,
                other_kernels,
            }
        })
        .collect()
}

/// The kernels of one range (or of the iterations): launches and time per kernel name.
#[derive(Default)]
struct Mix {
    launches: u64,
    total_ns: i128,
    by_name: FxHashMap<NameId, (u64, i128)>,
}

impl Mix {
    fn add(&mut self, k: &KernelLaunch) {
        self.launches += 1;
        self.total_ns += i128::from(k.duration_ns);
        let e = self.by_name.entry(k.name).or_default();
        e.0 += 1;
        e.1 += i128::from(k.duration_ns);
    }

    fn merge(&mut self, other: &Mix) {
        self.launches += other.launches;
        self.total_ns += other.total_ns;
        for (&name, &(launches, total)) in &other.by_name {
            let e = self.by_name.entry(name).or_default();
            e.0 += launches;
            e.1 += total;
        }
    }

    /// The first [`TOP_KERNELS`] kernels by time (then name), and the rest together.
    fn top(
        &self,
        names: &Interner,
        base_names: &FxHashMap<&str, &str>,
    ) -> (Vec<RangeKernel>, Option<OtherKernels>) {
        let mut all: Vec<RangeKernel> = self
            .by_name
            .iter()
            .map(|(&name, &(launches, total))| {
                let name = names.resolve(name);
                let base_name = base_names
                    .get(name)
                    .copied()
                    .unwrap_or_else(|| kernel_base_name(name));
                RangeKernel {
                    name: name.to_owned(),
                    base_name: Some(base_name.to_owned()),
                    launches,
                    total_ns: clamp(total),
                    share: share(total, self.total_ns),
                }
            })
            .collect();
        all.sort_by(|a, b| {
            b.total_ns
                .cmp(&a.total_ns)
                .then_with(|| a.name.cmp(&b.name))
        });
        let rest = all.split_off(all.len().min(TOP_KERNELS));
        let other = (!rest.is_empty()).then(|| {
            let total: i128 = rest.iter().map(|k| i128::from(k.total_ns)).sum();
            OtherKernels {
                kernels: rest.len() as u64,
                launches: rest.iter().map(|k| k.launches).sum(),
                total_ns: clamp(total),
                share: share(total, self.total_ns),
            }
        });
        (all, other)
    }
}

/// Where each of `calls` (indexes into `api`) was made: for a call inside a counted iteration
/// on the iteration's thread, the scoped id of the innermost range containing it (NONE for
/// the iteration itself). Calls elsewhere (outside every counted iteration) are left out of
/// the map.
fn place_calls(
    tree: &Tree,
    rows: &[PushPopRow],
    counted: &[&Measured],
    scopes: &Scopes,
    api: &[ApiCall],
    calls: &mut [u32],
) -> FxHashMap<u32, u32> {
    let key = |i: &u32| {
        let c = &api[*i as usize];
        (c.pid, c.tid, c.start_ns, c.end_ns, *i)
    };
    calls.sort_unstable_by_key(key);
    let mut place = FxHashMap::default();
    let mut subtree: Vec<u32> = Vec::new();
    let mut walk: Vec<u32> = Vec::new();
    let mut open: Vec<u32> = Vec::new();
    for m in counted {
        let it = &rows[m.row as usize];
        // This iteration's calls: same thread, starting inside it.
        let from = calls.partition_point(|i| {
            let c = &api[*i as usize];
            (c.pid, c.tid, c.start_ns) < (it.pid, it.tid, it.start_ns)
        });
        let to = calls.partition_point(|i| {
            let c = &api[*i as usize];
            (c.pid, c.tid, c.start_ns) <= (it.pid, it.tid, it.end_ns)
        });
        if from >= to {
            continue;
        }
        // Its ranges in start order (the longer first on a tie: the parent).
        subtree.clear();
        walk.clear();
        walk.extend_from_slice(tree.children(m.row));
        while let Some(j) = walk.pop() {
            subtree.push(j);
            walk.extend_from_slice(tree.children(j));
        }
        subtree.sort_unstable_by_key(|&j| {
            let r = &rows[j as usize];
            (r.start_ns, std::cmp::Reverse(r.end_ns), j)
        });
        open.clear();
        let mut next = 0;
        for &i in &calls[from..to] {
            let c = &api[i as usize];
            if c.end_ns > it.end_ns {
                continue;
            }
            while let Some(&j) = subtree.get(next) {
                let r = &rows[j as usize];
                if r.start_ns > c.start_ns {
                    break;
                }
                while open
                    .last()
                    .is_some_and(|&o| rows[o as usize].end_ns < r.start_ns)
                {
                    open.pop();
                }
                open.push(j);
                next += 1;
            }
            while open
                .last()
                .is_some_and(|&o| rows[o as usize].end_ns < c.start_ns)
            {
                open.pop();
            }
            let innermost = open
                .iter()
                .rev()
                .find(|&&o| rows[o as usize].end_ns >= c.end_ns)
                .map_or(NONE, |&o| scopes.of_row[o as usize]);
            place.insert(i, innermost);
        }
    }
    place
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The example's memory operations: copies in `c` and in iteration 1's `a`, a memset in
    /// `c`, a copy outside the iterations, and one whose id no API call has.
    fn example_copies(names: &mut Interner) -> [CopyLaunch; 5] {
        let mut name = |text: &str| names.intern_bytes(text.as_bytes()).unwrap();
        let h2d = (
            name("[CUDA memcpy HtoD]"),
            Some(name("Pageable")),
            Some(name("Device")),
        );
        let memset = (name("[CUDA memset]"), Some(name("Device")), None);
        let copy = |corr_id, duration_ns, bytes, kind| CopyLaunch {
            corr_id,
            duration_ns,
            bytes,
            kind,
        };
        [
            copy(11, 40, 1_000, h2d),
            copy(12, 60, 3_000, h2d),
            copy(13, 9, 64, memset),
            copy(14, 500, 7_000, h2d),
            copy(15, 500, 7_000, h2d),
        ]
    }

    /// `cap > iteration 0 > (a > b), c` and `iteration 1 > a`; calls on the iterations' thread
    /// (1) at the edges of ranges, on another thread, outside the iterations, and with an
    /// id two processes share.
    fn mix_of_the_example() -> KernelMix {
        use crate::analysis::iterations::Measured;
        use crate::analysis::tests::build_rows;
        use crate::analysis::tree::Tree;
        use nsys_gate_core::stats::Sample;
        use std::path::Path;

        let mut names = Interner::new();
        let spec: &[(Option<usize>, &str, i64, i64)] = &[
            (None, "cap", 0, 10_000),
            (Some(0), "iteration 0", 100, 1_000),
            (Some(1), "a", 200, 500),
            (Some(2), "b", 300, 100),
            (Some(1), "c", 800, 200),
            (Some(0), "iteration 1", 2_000, 1_000),
            (Some(5), "a", 2_100, 500),
        ];
        let rows = build_rows(spec, &mut names);
        let tree = Tree::build(&rows, Path::new("p.csv")).unwrap();
        let measured = [
            Measured {
                row: 1,
                index: 0,
                complete: true,
                duplicate: false,
            },
            Measured {
                row: 5,
                index: 1,
                complete: true,
                duplicate: false,
            },
        ];
        let counted: Vec<&Measured> = measured.iter().collect();
        let tables =
            crate::analysis::ranges::range_tables(&tree, &rows, &names, &counted, None, true);
        let scopes = tables.scopes.unwrap();

        let call = |corr_id, start, end, pid, tid| ApiCall {
            start_ns: start,
            end_ns: end,
            corr_id,
            pid,
            tid,
        };
        let api = [
            call(1, 300, 310, 1, 1),     // b (starts with it)
            call(2, 390, 400, 1, 1),     // b (ends with it)
            call(3, 395, 405, 1, 1),     // runs past b: a
            call(4, 150, 160, 1, 1),     // iteration 0 itself
            call(5, 850, 860, 1, 1),     // c
            call(6, 2_200, 2_210, 1, 1), // iteration 1's a
            call(7, 300, 310, 1, 2),     // another thread: elsewhere
            call(8, 5_000, 5_010, 1, 1), // outside the iterations: elsewhere
            call(9, 310, 320, 1, 1),     // id 9 also in process 2: ambiguous
            call(9, 310, 320, 2, 1),
            call(11, 820, 830, 1, 1),     // a copy in c
            call(12, 2_150, 2_160, 1, 1), // a copy in iteration 1's a
            call(13, 860, 870, 1, 1),     // a memset in c
            call(14, 6_000, 6_010, 1, 1), // a copy outside the iterations
        ];
        let mut kernel_names = Interner::new();
        let gemm = kernel_names
            .intern_bytes(b"void gemm<float, 2>(float*, int)")
            .unwrap();
        let relu = kernel_names.intern_bytes(b"relu").unwrap();
        let launch = |corr_id, duration_ns, name| KernelLaunch {
            corr_id,
            start_ns: 0,
            duration_ns,
            name,
            device: 0,
        };
        let kernels = [
            launch(1, 10, gemm),
            launch(2, 10, gemm),
            launch(3, 5, relu),
            launch(4, 7, relu),
            launch(5, 3, relu),
            launch(6, 20, gemm),
            launch(7, 1, gemm),
            launch(8, 1, gemm),
            launch(9, 1, gemm),
            launch(10, 1, gemm), // no API call has its id
        ];
        let copies = example_copies(&mut kernel_names);
        let launches = Launches {
            api: &api,
            kernels: &kernels,
            kernel_rows: 11,
            names: &kernel_names,
            report: "cuda_api_trace",
            base_names: FxHashMap::default(),
            copies: Some(&copies),
        };
        let gpu: Vec<GpuProjectedRange> = ["a", "a.b", "c"]
            .iter()
            .zip([300, 100, 50])
            .map(|(name, total)| GpuProjectedRange {
                name: (*name).to_owned(),
                path: name.split('.').map(str::to_owned).collect(),
                style: "PushPop".to_owned(),
                instances: 1,
                projected: Sample::new(vec![total]).range_stats(),
                host_total_ns: 0,
                gpu_operation_count: 1,
            })
            .collect();
        kernel_mix(
            &tree,
            &rows,
            &counted,
            &scopes,
            &launches,
            &MixInput {
                host: &tables.host,
                gpu: &gpu,
                host_groups: &crate::analysis::groups::host_groups(&tables.host),
                gpu_groups: &crate::analysis::groups::gpu_groups(&gpu),
                groups: &["a".to_owned(), "c".to_owned(), "none".to_owned()],
            },
        )
    }

    /// A range, its instances, kernel total and (kernel, launches, total) mix.
    type Mixed<'a> = (&'a str, u64, i64, Vec<(&'a str, u64, i64)>);

    #[test]
    fn kernels_go_to_the_innermost_range_around_their_launch() {
        let mix = mix_of_the_example();

        assert_eq!(
            mix.attribution,
            KernelAttribution {
                kernels: 11,
                in_counted_iterations: 6,
                elsewhere: 2,
                without_api_call: 2,
                ambiguous: 1,
                report: Some("cuda_api_trace".to_owned()),
            }
        );
        assert_eq!((mix.iteration.launches, mix.iteration.total_ns), (6, 55));
        let got: Vec<Mixed> = mix
            .ranges
            .iter()
            .map(|r| {
                let k = r
                    .kernels
                    .iter()
                    .map(|k| (k.name.as_str(), k.launches, k.total_ns))
                    .collect();
                (r.name.as_str(), r.instances, r.total_ns, k)
            })
            .collect();
        let gemm = "void gemm<float, 2>(float*, int)";
        assert_eq!(
            got,
            [
                // Largest projected total first; a holds b's kernels and iteration 1's.
                ("a", 2, 45, vec![(gemm, 3, 40), ("relu", 1, 5)]),
                ("a.b", 1, 20, vec![(gemm, 2, 20)]),
                ("c", 1, 3, vec![("relu", 1, 3)]),
            ]
        );
        assert!((mix.ranges[0].kernels[0].share - 40.0 / 45.0).abs() < 1e-12);

        // The groups asked for, as their ranges' mixes; a group that launched nothing is left out.
        let groups: Vec<(&str, u64, i64)> = mix
            .groups
            .iter()
            .map(|(g, k)| (g.as_str(), k.launches, k.total_ns))
            .collect();
        assert_eq!(groups, [("a", 4, 45), ("c", 1, 3)]);
        assert_eq!(mix.groups["a"].kernels, mix.ranges[0].kernels);

        // Every group, largest projected total first: here each group is one name.
        let got: Vec<(&str, u64, Option<i64>, u64, i64)> = mix
            .range_groups
            .iter()
            .map(|g| {
                (
                    g.group.as_str(),
                    g.names,
                    g.projected_total_ns,
                    g.launches,
                    g.total_ns,
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("a", 1, Some(300), 4, 45),
                ("a.b", 1, Some(100), 2, 20),
                ("c", 1, Some(50), 1, 3)
            ]
        );
        assert_eq!(mix.range_groups[0].kernels, mix.ranges[0].kernels);
        assert_eq!(mix.ranges[0].kernels[0].base_name.as_deref(), Some("gemm"));
    }

    /// Each base name's launches in the counted iterations, by the group of the innermost
    /// range around them; the copies launched in the iterations, by copy group (memsets apart).
    #[test]
    fn base_names_and_copies_of_the_counted_iterations() {
        let mix = mix_of_the_example();
        type ByBase<'a> = (&'a str, u64, i128, Vec<(&'a str, i128)>);
        let got: Vec<ByBase> = mix
            .by_base_name
            .iter()
            .map(|(base, l)| {
                let groups = l.by_group.iter().map(|(g, t)| (g.as_str(), *t)).collect();
                (base.as_str(), l.launches, l.total_ns, groups)
            })
            .collect();
        assert_eq!(
            got,
            [
                // b's two and iteration 1's a's; relu's 7 ns in iteration 0 itself: no group.
                ("gemm", 3, 40, vec![("a", 20), ("a.b", 20)]),
                ("relu", 3, 15, vec![("a", 5), ("c", 3)]),
            ]
        );
        let total: i128 = mix.by_base_name.values().map(|l| l.total_ns).sum();
        assert_eq!(total, i128::from(mix.iteration.total_ns));
        let key = (
            "Host-to-Device".to_owned(),
            Some("Pageable".to_owned()),
            Some("Device".to_owned()),
        );
        let copies = mix.copies.unwrap();
        assert_eq!(copies.keys().collect::<Vec<_>>(), [&key]);
        assert_eq!(
            copies[&key],
            Totals {
                count: 2,
                bytes: 4_000,
                total_ns: 100
            }
        );
    }

    /// A group's mix is the sum of its members' (`step_1.k` and `step_2.k` are `step_#.k`).
    #[test]
    fn a_group_sums_the_mixes_of_its_names() {
        let mut names = Interner::new();
        let gemm = names.intern_bytes(b"gemm").unwrap();
        let relu = names.intern_bytes(b"relu").unwrap();
        let mix = |kernels: &[(NameId, i64)]| {
            let mut m = Mix::default();
            for &(name, duration_ns) in kernels {
                m.add(&KernelLaunch {
                    corr_id: 0,
                    start_ns: 0,
                    duration_ns,
                    name,
                    device: 0,
                });
            }
            m
        };
        let one = mix(&[(gemm, 10), (relu, 2)]);
        let two = mix(&[(gemm, 30)]);
        let scopes = Scopes {
            of_row: Vec::new(),
            parent: vec![NONE, NONE, NONE],
            name: ["step_1.k", "step_2.k", "other"].map(String::from).to_vec(),
            path: Vec::new(),
        };
        let sums = group_sums(&[one, two, Mix::default()], &scopes);
        assert_eq!(sums.keys().collect::<Vec<_>>(), ["step_#.k"]);
        let launches = Launches {
            api: &[],
            kernels: &[],
            kernel_rows: 0,
            names: &names,
            report: "cuda_kern_exec_trace",
            base_names: [("gemm", "nsys_gemm")].into_iter().collect(),
            copies: None,
        };
        let mixes = group_mixes(&sums, &launches, &["step_#.k".to_owned()]);
        let k = &mixes["step_#.k"];
        assert_eq!((k.launches, k.total_ns), (3, 42));
        let got: Vec<(&str, u64, i64)> = k
            .kernels
            .iter()
            .map(|k| (k.name.as_str(), k.launches, k.total_ns))
            .collect();
        assert_eq!(got, [("gemm", 2, 40), ("relu", 1, 2)]);
        assert!((k.kernels[0].share - 40.0 / 42.0).abs() < 1e-12);
        // Base names as the kernel table has them, else derived.
        let bases: Vec<Option<&str>> = k.kernels.iter().map(|k| k.base_name.as_deref()).collect();
        assert_eq!(bases, [Some("nsys_gemm"), Some("relu")]);
    }
}
