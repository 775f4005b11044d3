//! `gpu_work` for people: the GPUs, the top kernels, the kernel mix of the iterations and of
//! the largest GPU-projected ranges (or groups of ranges), memory copies by kind, and the
//! kernels' full names.
//!
//! Kernels are named by their base name ([`KernelNames`]): a demangled C++ signature runs to
//! hundreds of characters (PyTorch's templated kernels), which wrap over lines and push table
//! columns out of view. Base names that several kernels share get ` [1]`, ` [2]`, … and the
//! collapsed list of full names tells which is which.

use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::Path;

use serde::Serialize;

use super::devices::{devices_table, DeviceRow};
use super::ranges::{group_display, names_by_group};
use super::{left_out_note, path_text, Table};
use crate::escape::{self, inline_shortened as esc};
use crate::format::{self, duration_i, plural, ColumnUnit};
use crate::limit::Caps;
use crate::RenderOptions;
use nsys_gate_core::artifact::{
    kernel_base_name, AdviceKind, Analysis, GpuWork, MemoryCopies, OtherKernels, RangeKernel,
    ReportName,
};

/// `gpu_work` for people: top kernels, the kernel mix of the iterations and of the largest
/// GPU-projected ranges, copies by kind.
#[derive(Debug, Serialize)]
pub struct GpuWorkView {
    /// One line: the GPUs, kernel time and launches, copies, memsets.
    pub summary: String,
    /// Each GPU's work and communication, when the run used several or communicated.
    pub devices: Option<Table<DeviceRow>>,
    /// The parts of gpu_work that are unavailable (the `gpu_work_unavailable` warnings say
    /// why), in one line.
    pub unavailable: Option<String>,
    pub kernels: Table<KernelRow>,
    /// The kernel mix of the counted iterations, in one line.
    pub iteration_mix: Option<String>,
    /// Kernels left out of the mixes because their launching call could not be told (the
    /// calls joined on correlation id alone, by an nsys without `cuda_kern_exec_trace`).
    pub attribution_note: Option<String>,
    /// The mix table shows groups of ranges whose names differ only in decimal numbers.
    pub grouped: bool,
    pub ranges: Table<RangeMixRow>,
    /// Which iterations the mix table holds, when the range tables above hold others (the
    /// steady state); `None` when they hold the same.
    pub ranges_iterations: Option<String>,
    pub copies: Table<CopyRow>,
    /// Every kernel the report names whose shown name is not its whole name: the shown name
    /// and the full demangled signature, by shown name.
    pub kernel_names: Vec<KernelNameRow>,
}

#[derive(Debug, Serialize)]
pub struct KernelNameRow {
    /// As the tables show it (escaped): the base name, with ` [n]` when several kernels share it.
    pub short: String,
    /// The demangled signature (escaped).
    pub full: String,
}

#[derive(Debug, Serialize)]
pub struct KernelRow {
    /// Escaped; the kernel's base name ([`KernelNames`]).
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

/// How the report names the kernels of one analysis: the base name (`gpu_work.kernels[].
/// base_name`, derived with [`kernel_base_name`] in files written before it), and when several
/// kernels of the analysis share a base name, ` [1]`, ` [2]`, … after it, numbered in the order
/// of `gpu_work.kernels` (largest total first; kernels only in the mixes after them). The same
/// kernel has the same name in every part of the report.
pub(super) struct KernelNames<'a> {
    shown: HashMap<&'a str, String>,
}

impl<'a> KernelNames<'a> {
    pub(super) fn of(a: &'a Analysis) -> Self {
        let mut order: Vec<(&'a str, &'a str)> = Vec::new();
        let mut seen: HashSet<&'a str> = HashSet::new();
        let mut add = |name: &'a str, base: Option<&'a str>| {
            if seen.insert(name) {
                order.push((name, base.unwrap_or_else(|| kernel_base_name(name))));
            }
        };
        let mix_names = |kernels: &'a [RangeKernel]| {
            kernels
                .iter()
                .map(|k| (k.name.as_str(), k.base_name.as_deref()))
        };
        if let Some(g) = &a.gpu_work {
            for k in g.kernels.iter().flatten() {
                add(&k.name, k.base_name.as_deref());
            }
            for (name, base) in g
                .iteration_kernels
                .iter()
                .flat_map(|i| mix_names(&i.kernels))
            {
                add(name, base);
            }
            for r in g.per_range_kernels.iter().flatten() {
                for (name, base) in mix_names(&r.kernels) {
                    add(name, base);
                }
            }
            for r in g.per_range_kernel_groups.iter().flatten() {
                for (name, base) in mix_names(&r.kernels) {
                    add(name, base);
                }
            }
        }
        for k in a.advice.iter().filter_map(|item| item.kernels.as_ref()) {
            for (name, base) in mix_names(&k.kernels) {
                add(name, base);
            }
        }
        let mut sharing: HashMap<&str, usize> = HashMap::new();
        for (_, base) in &order {
            *sharing.entry(base).or_default() += 1;
        }
        let mut numbered: HashMap<&str, usize> = HashMap::new();
        let shown = order
            .into_iter()
            .map(|(name, base)| {
                let label = if sharing[base] > 1 {
                    let n = numbered.entry(base).or_default();
                    *n += 1;
                    format!("{base} [{n}]")
                } else {
                    base.to_owned()
                };
                (name, label)
            })
            .collect();
        KernelNames { shown }
    }

    /// The kernel's name in the report (not escaped).
    pub(super) fn shown<'n>(&self, name: &'n str) -> Cow<'n, str> {
        match self.shown.get(name) {
            Some(label) => Cow::Owned(label.clone()),
            None => Cow::Borrowed(kernel_base_name(name)),
        }
    }
}

/// The GPU work of `a` for people, or nothing when the trace holds no CUDA data. `path`: its
/// analysis.json, shown in notes as "Full data" shows it.
pub(super) fn gpu_work_view(
    a: &Analysis,
    caps: &Caps,
    path: &Path,
    options: &RenderOptions,
) -> Option<GpuWorkView> {
    let g = a.gpu_work.as_ref()?;
    let names = KernelNames::of(a);
    let mut named: BTreeSet<&str> = BTreeSet::new();
    let path = path_text(path, options.links.base_dir.as_deref(), caps);
    let path = path.as_str();
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
        .map(|k| {
            named.insert(k.name.as_str());
            KernelRow {
                name: esc(&names.shown(&k.name), caps.name_chars),
                instances: k.instances,
                total: total_unit.show(k.total_ns as f64),
                mean: mean_unit.show(k.mean_ns),
                share: format::share_pct(k.share, 1.0),
            }
        })
        .collect();
    let iteration_mix = g
        .iteration_kernels
        .as_ref()
        .filter(|i| i.launches > 0)
        .map(|i| {
            named.extend(i.kernels.iter().map(|k| k.name.as_str()));
            format!(
                "{} in {} over {}: {}",
                duration_i(i.total_ns),
                plural(i.launches as usize, "kernel launch", "kernel launches"),
                plural(
                    i.iterations as usize,
                    "counted iteration",
                    "counted iterations"
                ),
                kernel_mix_text(
                    &i.kernels,
                    i.other_kernels.as_ref(),
                    &names,
                    caps.name_chars,
                )
            )
        });
    let (ranges, grouped) = mix_table(a, g, options.exact_names, &names, &mut named, caps, path);
    let copies_all = g.memory_copies.as_deref().unwrap_or(&[]);
    let shown = &copies_all[..copies_all.len().min(rows)];
    let copy_unit = ColumnUnit::of(shown.iter().map(|c| c.total_ns as f64));
    let copies: Vec<CopyRow> = shown.iter().map(|c| copy_row(c, copy_unit, caps)).collect();
    named.extend(advice_kernels(a).map(|k| k.name.as_str()));
    Some(GpuWorkView {
        summary: gpu_work_summary(g, caps),
        devices: devices_table(g, caps, path),
        unavailable,
        kernels: Table {
            note: left_out_note(kernels.len(), all.len(), "kernels", path),
            total: all.len(),
            rows: kernels,
        },
        iteration_mix,
        attribution_note: attribution_note(g),
        grouped,
        ranges_iterations: super::ranges::steady(a, options.exact_names).map(|s| {
            let (ones, them) = if s.left_out.len() == 1 {
                ("one", "it")
            } else {
                ("ones", "them")
            };
            format!("These kernels are of every counted iteration, the slow {ones} included: the range tables above leave {them} out (the steady state).")
        }),
        ranges,
        copies: Table {
            note: left_out_note(copies.len(), copies_all.len(), "copy kinds", path),
            total: copies_all.len(),
            rows: copies,
        },
        kernel_names: kernel_name_rows(named, &names, caps),
    })
}

/// The kernel-mix table: its rows (the first few ranges or groups), the kernels it names added
/// to `named`, and whether its rows are groups.
fn mix_table<'a>(
    a: &'a Analysis,
    g: &'a GpuWork,
    exact: bool,
    names: &KernelNames<'_>,
    named: &mut BTreeSet<&'a str>,
    caps: &Caps,
    path: &str,
) -> (Table<RangeMixRow>, bool) {
    let (mixes, grouped) = range_mixes(a, g, exact);
    let shown = &mixes[..mixes.len().min(caps.top.min(GPU_WORK_ROWS))];
    let projected_unit = ColumnUnit::of(
        shown
            .iter()
            .filter_map(|r| r.projected_total_ns.map(|ns| ns as f64)),
    );
    let kernel_unit = ColumnUnit::of(shown.iter().map(|r| r.total_ns as f64));
    let rows: Vec<RangeMixRow> = shown
        .iter()
        .map(|r| {
            named.extend(r.kernels.iter().map(|k| k.name.as_str()));
            RangeMixRow {
                name: esc(&r.name, caps.name_chars),
                projected_total: r
                    .projected_total_ns
                    .map_or("no projection".to_owned(), |ns| {
                        projected_unit.show(ns as f64)
                    }),
                launches: r.launches,
                kernel_total: kernel_unit.show(r.total_ns as f64),
                mix: kernel_mix_text(
                    r.kernels,
                    r.other_kernels,
                    names,
                    MIX_CELL_NAME_CHARS.min(caps.name_chars),
                ),
            }
        })
        .collect();
    let table = Table {
        note: left_out_note(
            rows.len(),
            mixes.len(),
            if grouped { "range groups" } else { "ranges" },
            path,
        ),
        total: mixes.len(),
        rows,
    };
    (table, grouped)
}

/// The collapsed list: each kernel `named` whose shown name is not its whole name, by shown
/// name (`gemm [2]` before `gemm [10]`).
fn kernel_name_rows(
    named: BTreeSet<&str>,
    names: &KernelNames<'_>,
    caps: &Caps,
) -> Vec<KernelNameRow> {
    let mut rows: Vec<(String, &str)> = named
        .into_iter()
        .map(|full| (names.shown(full).into_owned(), full))
        .filter(|(short, full)| short != full)
        .collect();
    rows.sort_by(|x, y| natural_key(&x.0).cmp(&natural_key(&y.0)));
    rows.into_iter()
        .map(|(short, full)| KernelNameRow {
            short: esc(&short, caps.name_chars),
            full: esc(full, caps.message_chars),
        })
        .collect()
}

/// `gemm [2]` before `gemm [10]`: a shown name as its base and number.
fn natural_key(shown: &str) -> (&str, usize) {
    shown
        .strip_suffix(']')
        .and_then(|s| s.rsplit_once(" ["))
        .and_then(|(base, n)| Some((base, n.parse().ok()?)))
        .unwrap_or((shown, 0))
}

/// One row of the kernel-mix table, a range or a group of ranges.
struct MixRow<'a> {
    name: String,
    projected_total_ns: Option<i64>,
    launches: u64,
    total_ns: i64,
    kernels: &'a [RangeKernel],
    other_kernels: Option<&'a OtherKernels>,
}

/// The kernel-mix table's rows: groups of ranges whose names differ only in decimal numbers,
/// as the other tables show them (a group of one name by that name), or the exact names with
/// `--exact-names` or an analysis.json written before the groups were; and whether they are
/// groups.
fn range_mixes<'a>(a: &'a Analysis, g: &'a GpuWork, exact: bool) -> (Vec<MixRow<'a>>, bool) {
    match (&g.per_range_kernel_groups, exact) {
        (Some(groups), false) => {
            let single = names_by_group(a.host_ranges.iter().map(|r| &r.name));
            let rows = groups
                .iter()
                .map(|r| MixRow {
                    name: group_display(&r.group, r.names, &single),
                    projected_total_ns: r.projected_total_ns,
                    launches: r.launches,
                    total_ns: r.total_ns,
                    kernels: &r.kernels,
                    other_kernels: r.other_kernels.as_ref(),
                })
                .collect::<Vec<_>>();
            let grouped = groups.iter().any(|r| r.names > 1);
            (rows, grouped)
        }
        _ => {
            let rows = g
                .per_range_kernels
                .iter()
                .flatten()
                .map(|r| MixRow {
                    name: r.name.clone(),
                    projected_total_ns: r.projected_total_ns,
                    launches: r.launches,
                    total_ns: r.total_ns,
                    kernels: &r.kernels,
                    other_kernels: r.other_kernels.as_ref(),
                })
                .collect();
            (rows, false)
        }
    }
}

/// Kernels the mixes leave out because their launching call could not be told: joined on the
/// correlation id alone (`cuda_api_trace`, an nsys without `cuda_kern_exec_trace`), ids that
/// more than one process used.
fn attribution_note(g: &GpuWork) -> Option<String> {
    let a = g.kernel_attribution.as_ref()?;
    if a.ambiguous == 0 {
        return None;
    }
    let joined_here = a
        .report
        .as_deref()
        .is_none_or(|r| r == ReportName::ApiTrace.as_str());
    Some(format!(
        "{} left out of the kernel mixes: {} correlation id is on CUDA API calls of more than one process, and {} cannot tell which one launched {}{}.",
        plural(a.ambiguous as usize, "kernel launch is", "kernel launches are"),
        if a.ambiguous == 1 { "its" } else { "their" },
        if joined_here { "nsys's GPU trace (it has no process column)" } else { "the report" },
        if a.ambiguous == 1 { "it" } else { "them" },
        if joined_here {
            " (an nsys with `cuda_kern_exec_trace`, 2022.4 or newer, joins them by process)"
        } else {
            ""
        },
    ))
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

/// Kernels named in a GPU-bound advice item's sentence.
pub(super) const ADVICE_KERNELS: usize = 3;

/// The kernels the advice names (the first few of each GPU-bound item's).
fn advice_kernels(a: &Analysis) -> impl Iterator<Item = &RangeKernel> {
    a.advice
        .iter()
        .filter(|item| item.kind == AdviceKind::GpuBound)
        .filter_map(|item| item.kernels.as_ref())
        .flat_map(|k| &k.kernels[..k.kernels.len().min(ADVICE_KERNELS)])
}

/// Characters of a kernel's name in the cells of the kernel-mix table: a name has no space to
/// wrap at (`ampere_bf16_s16816gemm_bf16_128x64_ldg8_f2f_stages_64x3_tn`), and two of them
/// widened the table past a 760-pixel comment column. Shortened ones end with `…`; "Kernel
/// names in full" gives each whole.
pub(super) const MIX_CELL_NAME_CHARS: usize = 24;

/// `gemm 61.0 %, relu 22.0 %, 3 others 17.0 %`, each name at most `name_chars` characters.
pub(super) fn kernel_mix_text(
    kernels: &[RangeKernel],
    other: Option<&OtherKernels>,
    names: &KernelNames<'_>,
    name_chars: usize,
) -> String {
    let mut parts: Vec<String> = kernels
        .iter()
        .map(|k| {
            format!(
                "{} {}",
                esc(&names.shown(&k.name), name_chars),
                format::share_pct(k.share, 1.0)
            )
        })
        .collect();
    if let Some(o) = other {
        parts.push(format!(
            "{} {}",
            plural(o.kernels as usize, "other", "others"),
            format::share_pct(o.share, 1.0)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Budget, Links};
    use nsys_gate_core::artifact::{
        fake, KernelAttribution, KernelStats, RangeKernelGroup, RangeKernels,
    };

    fn stats(name: &str, base: Option<&str>, total_ns: i64) -> KernelStats {
        KernelStats {
            name: name.to_owned(),
            base_name: base.map(str::to_owned),
            instances: 1,
            total_ns,
            mean_ns: total_ns as f64,
            median_ns: None,
            minimum_ns: total_ns,
            maximum_ns: total_ns,
            stddev_ns: None,
            share: 0.5,
        }
    }

    fn in_mix(name: &str, total_ns: i64, share: f64) -> RangeKernel {
        RangeKernel {
            name: name.to_owned(),
            base_name: None,
            launches: 1,
            total_ns,
            share,
        }
    }

    fn options(exact_names: bool, base_dir: Option<&Path>) -> RenderOptions {
        RenderOptions {
            top: 10,
            budget: Budget::Chars(65_536),
            exact_names,
            links: Links {
                base_dir: base_dir.map(Path::to_path_buf),
                ..Links::default()
            },
            from_artifact: false,
        }
    }

    /// Kernels of `layer_1.fwd` and `layer_2.fwd` (a group of two names), two `gemm`s.
    fn analysis() -> Analysis {
        let mut a = fake::analysis(
            &[1_000_000],
            &[("layer_1.fwd", 10), ("layer_2.fwd", 10)],
            true,
        );
        let gemm_f = "void gemm<float, 64>(float const*, float*, int)";
        let gemm_h = "void ns::gemm<__half, 128>(__half const*, __half*, int)";
        let relu = "void at::native::<unnamed>::relu_kernel<float>(float*)";
        let range = |name: &str| RangeKernels {
            name: name.to_owned(),
            path: name.split('.').map(str::to_owned).collect(),
            instances: 1,
            projected_total_ns: Some(100),
            launches: 2,
            total_ns: 30,
            kernels: vec![in_mix(gemm_h, 20, 2.0 / 3.0), in_mix(relu, 10, 1.0 / 3.0)],
            other_kernels: None,
        };
        a.gpu_work = Some(GpuWork {
            // An older file's kernel (no base name) and a newer one's.
            kernels: Some(vec![
                stats(gemm_f, Some("gemm"), 50),
                stats(gemm_h, None, 40),
                stats(relu, Some("relu_kernel"), 10),
            ]),
            per_range_kernels: Some(vec![range("layer_1.fwd"), range("layer_2.fwd")]),
            per_range_kernel_groups: Some(vec![RangeKernelGroup {
                group: "layer_#.fwd".to_owned(),
                names: 2,
                instances: 2,
                projected_total_ns: Some(200),
                launches: 4,
                total_ns: 60,
                kernels: vec![in_mix(gemm_h, 40, 2.0 / 3.0), in_mix(relu, 20, 1.0 / 3.0)],
                other_kernels: None,
            }]),
            kernel_attribution: Some(KernelAttribution {
                kernels: 7,
                in_counted_iterations: 4,
                elsewhere: 0,
                without_api_call: 0,
                ambiguous: 3,
                report: None,
            }),
            ..GpuWork::default()
        });
        a
    }

    #[test]
    fn kernels_sharing_a_base_name_are_numbered_in_the_order_of_the_kernel_table() {
        let a = analysis();
        let names = KernelNames::of(&a);
        assert_eq!(
            names.shown("void gemm<float, 64>(float const*, float*, int)"),
            "gemm [1]"
        );
        assert_eq!(
            names.shown("void ns::gemm<__half, 128>(__half const*, __half*, int)"),
            "gemm [2]"
        );
        assert_eq!(
            names.shown("void at::native::<unnamed>::relu_kernel<float>(float*)"),
            "relu_kernel"
        );
        // A name the analysis does not hold: its base name.
        assert_eq!(names.shown("void other<int>(int)"), "other");
        assert_eq!(natural_key("gemm [10]"), ("gemm", 10));
        assert!(natural_key("gemm [2]") < natural_key("gemm [10]"));
        assert_eq!(natural_key("odd [x]"), ("odd [x]", 0));
    }

    #[test]
    fn the_mix_table_shows_groups_unless_exact_names_and_notes_give_the_relative_path() {
        let a = analysis();
        let base = Path::new("/work/repo");
        let path = base.join("inference_profiling/runs/r1/analysis.json");
        let caps = Caps::full(1);
        let v = gpu_work_view(&a, &caps, &path, &options(false, Some(base))).unwrap();
        assert!(v.grouped);
        let names: Vec<&str> = v.ranges.rows.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["layer\\_#.fwd (2 names)"]);
        assert_eq!(
            v.ranges.rows[0].mix,
            "gemm \\[2\\] 66.7\u{a0}%, relu\\_kernel 33.3\u{a0}%"
        );
        // One row of three kernels shown: the note names analysis.json as "Full data" does.
        assert_eq!(
            v.kernels.note.as_deref(),
            Some("Top 1 of 3 kernels; the other 2 are in `inference_profiling/runs/r1/analysis.json`.")
        );
        // Every name shown by a shorter one, once, by shown name.
        let listed: Vec<(&str, &str)> = v
            .kernel_names
            .iter()
            .map(|k| (k.short.as_str(), k.full.as_str()))
            .collect();
        assert_eq!(
            listed,
            [
                (
                    "gemm \\[1\\]",
                    "void gemm&lt;float, 64&gt;(float const\\*, float\\*, int)"
                ),
                (
                    "gemm \\[2\\]",
                    "void ns::gemm&lt;\\_\\_half, 128&gt;(\\_\\_half const\\*, \\_\\_half\\*, int)"
                ),
                (
                    "relu\\_kernel",
                    "void at::native::&lt;unnamed&gt;::relu\\_kernel&lt;float&gt;(float\\*)"
                ),
            ]
        );
        let note = v.attribution_note.unwrap();
        assert!(
            note.starts_with("3 kernel launches are left out of the kernel mixes"),
            "{note}"
        );

        let v = gpu_work_view(&a, &caps, &path, &options(true, None)).unwrap();
        assert!(!v.grouped);
        let names: Vec<&str> = v.ranges.rows.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["layer\\_1.fwd"]);
        assert_eq!(
            v.ranges.note.as_deref(),
            Some("Top 1 of 2 ranges; the other 1 are in `/work/repo/inference_profiling/runs/r1/analysis.json`.")
        );

        // Issue 30, item 8: a name with no space to wrap at is shortened in the table's cells
        // (it widened the table past a 760-pixel comment), and given whole in the list.
        let long = "void ampere_bf16_s16816gemm_bf16_128x64_ldg8_f2f_stages_64x3_tn_sm80_cublas_kernel(float*)";
        let mut wide = a.clone();
        let groups = wide
            .gpu_work
            .as_mut()
            .unwrap()
            .per_range_kernel_groups
            .as_mut()
            .unwrap();
        groups[0].kernels[0].name = long.to_owned();
        let v = gpu_work_view(&wide, &caps, &path, &options(false, None)).unwrap();
        let mix = &v.ranges.rows[0].mix;
        let longest = mix
            .replace('\\', "")
            .split([' ', ','])
            .map(|w| w.chars().count())
            .max()
            .unwrap();
        assert!(longest <= MIX_CELL_NAME_CHARS, "{mix}");
        assert!(
            mix.starts_with("ampere\\_bf16\\_s16816gemm\\_… 66.7"),
            "{mix}"
        );
        assert!(
            v.kernel_names
                .iter()
                .any(|k| k.full.contains("ampere\\_bf16\\_s16816gemm\\_bf16\\_128x64\\_ldg8\\_f2f\\_stages\\_64x3\\_tn\\_sm80\\_cublas\\_kernel")),
            "{:?}",
            v.kernel_names.iter().map(|k| &k.full).collect::<Vec<_>>()
        );

        // A file written before the groups: the exact names.
        let mut old = a.clone();
        old.gpu_work.as_mut().unwrap().per_range_kernel_groups = None;
        let v = gpu_work_view(&old, &caps, &path, &options(false, None)).unwrap();
        assert_eq!(v.ranges.rows[0].name, "layer\\_1.fwd");
    }
}
