//! The GPU-work reports in the pipeline: reading them (each on its own; a report that failed
//! or cannot be read leaves its parts `null`, never an error) and assembling `gpu_work` with
//! its warnings: `gpu_work_unavailable` per failed report, `pageable_memory_copies`.

use std::collections::BTreeMap;
use std::path::Path;

use crate::analysis::gpu_work::{self as rules, GpuTraceParts, GpuTraceSummary, KernelLaunch};
use crate::analysis::{stage_warnings, KernelMix, Launches};
use crate::nsys::{self, StatsStamp};
use crate::reports::{self, ApiCall, Interner, KernelExecRow};
use nsys_gate_core::artifact::{GpuWork, KernelStats, ReportName, ReportStatus, Warning};

/// Why a GPU-work report gave nothing: which report, and what nsys (or the reader) said.
#[derive(Debug, Clone)]
pub(super) struct Unavailable {
    report: ReportName,
    reason: String,
}

type Part<T> = Result<T, Unavailable>;

/// What the GPU-work reports gave: the kernel table, the GPU trace's summary (with its names)
/// and the kernels' launching calls, or why each is unavailable.
pub(super) struct GpuWorkRows {
    kernels: Part<Vec<KernelStats>>,
    /// Why nsys's base names could not be read (the kernels then keep derived ones).
    base_names: Option<Unavailable>,
    trace: Part<GpuTraceParts>,
    trace_names: Interner,
    /// Why not: each report tried (`cuda_kern_exec_trace`, then `cuda_api_trace`).
    calls: Result<Calls, Vec<Unavailable>>,
    /// Whether nsys wrote any of them: with none, and no projection, the trace holds no CUDA
    /// data (and `gpu_work` is `null`).
    any_written: bool,
}

/// nsys's words when a report is skipped because the trace holds no such data at all (an
/// empty result, not a failure, when other CUDA data exists).
fn no_such_data(status: &ReportStatus) -> bool {
    status.message.as_deref().is_some_and(|m| {
        [
            "does not contain CUDA kernel data",
            "does not contain GPU trace data",
            "does not contain CUDA trace data",
        ]
        .iter()
        .any(|n| m.contains(n))
    })
}

/// Reads one report: `empty` when nsys said the trace holds no such data, `read` when it
/// wrote it, why not otherwise.
fn read_one<T>(
    stats_dir: &Path,
    stamp: &StatsStamp,
    report: ReportName,
    empty: impl FnOnce() -> T,
    read: impl FnOnce(&Path) -> Result<T, reports::ReportError>,
) -> Part<T> {
    let status = stamp.status(report);
    let unavailable = |reason: String| Unavailable { report, reason };
    if !status.is_written() {
        if no_such_data(&status) {
            return Ok(empty());
        }
        return Err(unavailable(format!(
            "nsys {} did not write `{report}`: {}",
            stamp.nsys_version,
            status.message.as_deref().unwrap_or("no reason given")
        )));
    }
    let path = nsys::csv_path(stats_dir, report.as_str());
    read(&path).map_err(|e| {
        unavailable(format!(
            "cannot read `{report}` written by nsys {}: {e}",
            stamp.nsys_version
        ))
    })
}

/// The kernels' launching calls, from the report that had them.
enum Calls {
    /// `cuda_kern_exec_trace`: one call per kernel, joined by nsys on correlation id and
    /// process; each pair is given its row number as its correlation id here.
    Exec {
        api: Vec<ApiCall>,
        kernels: Vec<KernelLaunch>,
        names: Interner,
    },
    /// `cuda_api_trace` (an nsys without `cuda_kern_exec_trace`): every call, joined here
    /// with `cuda_gpu_trace`'s kernels on the correlation id alone.
    Api(Vec<ApiCall>),
}

/// `cuda_kern_exec_trace`'s rows as calls and kernels paired by a correlation id of their own.
fn exec_calls(rows: Vec<KernelExecRow>, names: Interner) -> Calls {
    let (api, kernels) = rows
        .into_iter()
        .enumerate()
        .map(|(i, r)| {
            let corr_id = i as u64;
            (
                ApiCall {
                    start_ns: r.api_start_ns,
                    end_ns: r.api_end_ns,
                    corr_id,
                    pid: r.pid,
                    tid: r.tid,
                },
                KernelLaunch {
                    corr_id,
                    start_ns: r.start_ns,
                    duration_ns: r.duration_ns,
                    name: r.name,
                    device: r.device.unwrap_or(rules::NO_DEVICE),
                },
            )
        })
        .unzip();
    Calls::Exec {
        api,
        kernels,
        names,
    }
}

/// The launching calls: `cuda_kern_exec_trace`'s, else (an nsys without it, or
/// `--reuse-stats` on CSVs written before it was used) `cuda_api_trace`'s.
fn read_calls(stats_dir: &Path, stamp: &StatsStamp) -> Result<Calls, Vec<Unavailable>> {
    let exec = read_one(
        stats_dir,
        stamp,
        ReportName::KernelExecTrace,
        || (Vec::new(), Interner::new()),
        |p| {
            let mut names = Interner::new();
            let rows = reports::read_kernel_exec_trace(p, &mut names)?;
            Ok((rows, names))
        },
    );
    let exec_failed = match exec {
        Ok((rows, names)) => return Ok(exec_calls(rows, names)),
        Err(e) => e,
    };
    let api_status = stamp.status(ReportName::ApiTrace);
    match read_one(stats_dir, stamp, ReportName::ApiTrace, Vec::new, |p| {
        reports::read_api_trace(p)
    }) {
        Ok(api) => Ok(Calls::Api(api)),
        // Not asked because this nsys has `cuda_kern_exec_trace`: that one's failure says it.
        Err(_)
            if api_status
                .message
                .as_deref()
                .is_some_and(|m| m.contains(ReportName::KernelExecTrace.as_str())) =>
        {
            Err(vec![exec_failed])
        }
        Err(api_failed) => Err(vec![exec_failed, api_failed]),
    }
}

/// The kernel table of `cuda_gpu_kern_sum` (by name, or by base name with `:base`).
fn read_kernel_table(
    stats_dir: &Path,
    stamp: &StatsStamp,
    report: ReportName,
) -> Part<Vec<KernelStats>> {
    read_one(stats_dir, stamp, report, Vec::new, |p| {
        let mut names = Interner::new();
        let rows = reports::read_kernel_summary(p, &mut names)?;
        Ok(rules::kernel_table(&rows, &names))
    })
}

/// Reads the GPU-work reports nsys wrote, one thread each (the GPU trace in one pass, kept
/// only as the summary `gpu_work` needs).
pub(super) fn read(stats_dir: &Path, stamp: &StatsStamp) -> GpuWorkRows {
    let any_written = ReportName::GPU_WORK
        .iter()
        .any(|&r| stamp.status(r).is_written());
    let ((kernels, base_names), calls, (trace, trace_names)) = std::thread::scope(|scope| {
        let calls = scope.spawn(|| read_calls(stats_dir, stamp));
        let trace = scope.spawn(|| {
            let mut names = Interner::new();
            let trace = read_one(
                stats_dir,
                stamp,
                ReportName::GpuTrace,
                GpuTraceSummary::default,
                |p| {
                    let mut summary = GpuTraceSummary::default();
                    reports::stream_gpu_trace(p, &mut names, &mut summary)?;
                    Ok(summary)
                },
            )
            .map(|summary| summary.finish(&names));
            (trace, names)
        });
        let kernels = read_kernel_table(stats_dir, stamp, ReportName::KernelSummary);
        let (kernels, base_names) = match kernels {
            Ok(mut table) => {
                let base = read_kernel_table(stats_dir, stamp, ReportName::KernelBaseSummary);
                rules::attach_base_names(&mut table, base.as_deref().unwrap_or(&[]));
                (Ok(table), base.err())
            }
            Err(e) => (Err(e), None),
        };
        (
            (kernels, base_names),
            calls
                .join()
                .expect("the launching calls' reader does not panic"),
            trace.join().expect("the GPU trace reader does not panic"),
        )
    });
    GpuWorkRows {
        kernels,
        base_names,
        trace,
        trace_names,
        calls,
        any_written,
    }
}

impl GpuWorkRows {
    /// The GPU-work rows of each rank's trace as one, as if one trace held every rank: the
    /// processes of `rows[k]` become process `k` (as every rank's push/pop rows are numbered
    /// then), correlation ids made distinct, names interned anew, the kernel and copy tables
    /// and the devices summed. A report unavailable in one trace is unavailable for the run
    /// (the first such trace's reason).
    pub(super) fn merge(rows: Vec<GpuWorkRows>) -> GpuWorkRows {
        let any_written = rows.iter().any(|r| r.any_written);
        let base_names = rows.iter().find_map(|r| r.base_names.clone());
        // each trace's correlation ids moved past the previous traces'
        let mut offsets = Vec::with_capacity(rows.len());
        let mut next = 0u64;
        for r in &rows {
            offsets.push(next);
            next += r.max_corr_id().map_or(0, |m| m + 1);
        }
        let kernels = match rows.iter().find_map(|r| r.kernels.as_ref().err()) {
            Some(e) => Err(e.clone()),
            None => Ok(rules::merge_kernel_tables(
                rows.iter()
                    .map(|r| r.kernels.clone().unwrap_or_default())
                    .collect(),
            )),
        };
        let calls = merge_calls(&rows, &offsets);
        let (trace, trace_names) = match rows.iter().find_map(|r| r.trace.as_ref().err()) {
            Some(e) => (Err(e.clone()), Interner::new()),
            None => {
                let (parts, names) = rules::merge_trace_parts(
                    rows.iter()
                        .zip(&offsets)
                        .filter_map(|(r, &corr_offset)| {
                            Some(rules::TraceParts {
                                parts: r.trace.as_ref().ok()?.clone(),
                                names: &r.trace_names,
                                corr_offset,
                            })
                        })
                        .collect(),
                );
                (Ok(parts), names)
            }
        };
        GpuWorkRows {
            kernels,
            base_names,
            trace,
            trace_names,
            calls,
            any_written,
        }
    }

    /// The highest correlation id of the calls, launches and copies read.
    fn max_corr_id(&self) -> Option<u64> {
        let calls = match &self.calls {
            Ok(Calls::Exec { api, .. } | Calls::Api(api)) => api.iter().map(|c| c.corr_id).max(),
            Err(_) => None,
        };
        let trace = self.trace.as_ref().ok().and_then(|t| {
            t.launches
                .iter()
                .map(|k| k.corr_id)
                .chain(t.copies.iter().map(|c| c.corr_id))
                .max()
        });
        calls.max(trace)
    }

    /// The API calls and kernels for the analysis to attribute, when the reports they come
    /// from were read.
    pub(super) fn launches(&self) -> Option<Launches<'_>> {
        match self.calls.as_ref().ok()? {
            Calls::Exec {
                api,
                kernels,
                names,
            } => Some(Launches {
                api,
                kernels,
                kernel_rows: self.kernel_count().unwrap_or(0).max(kernels.len() as u64),
                names,
                report: ReportName::KernelExecTrace.as_str(),
                base_names: self.base_name_map(),
                // Kernels only: the copies' launching calls are not in it.
                copies: None,
            }),
            Calls::Api(api) => {
                let trace = self.trace.as_ref().ok()?;
                Some(Launches {
                    api,
                    kernels: &trace.launches,
                    kernel_rows: trace.kernels,
                    names: &self.trace_names,
                    report: ReportName::ApiTrace.as_str(),
                    base_names: self.base_name_map(),
                    copies: Some(&trace.copies),
                })
            }
        }
    }

    /// Each kernel's base name, as the kernel table has it.
    fn base_name_map(&self) -> rustc_hash::FxHashMap<&str, &str> {
        self.kernels
            .iter()
            .flatten()
            .filter_map(|k| Some((k.name.as_str(), k.base_name.as_deref()?)))
            .collect()
    }

    /// Every kernel of the capture: `cuda_gpu_trace`'s kernel rows, else the instances of
    /// `cuda_gpu_kern_sum`.
    fn kernel_count(&self) -> Option<u64> {
        match (&self.trace, &self.kernels) {
            (Ok(trace), _) => Some(trace.kernels),
            (_, Ok(kernels)) => Some(kernels.iter().map(|k| k.instances).sum()),
            _ => None,
        }
    }

    /// `gpu_work` and its warnings. `projection_written`: whether nsys wrote the GPU
    /// projection; with it unwritten and no GPU-work report written, the trace holds no CUDA
    /// data: `gpu_work` is `null` and `gpu_projection_unavailable` (added by the caller) is
    /// the one warning for that cause.
    pub(super) fn assemble(
        self,
        kernel_mix: Option<KernelMix>,
        projection_written: bool,
    ) -> (Option<GpuWork>, Vec<Warning>) {
        if !self.any_written && !projection_written {
            return (None, Vec::new());
        }
        const MIX: [&str; 4] = [
            "iteration_kernels",
            "kernel_attribution",
            "per_range_kernel_groups",
            "per_range_kernels",
        ];
        const TRACE: [&str; 3] = ["devices", "memory_copies", "memsets"];
        // The kernels per range need the GPU trace only when joined here.
        let joined_here = matches!(self.calls, Ok(Calls::Api(_)));
        let trace_parts: Vec<&str> = if joined_here {
            TRACE.iter().chain(&MIX).copied().collect()
        } else {
            TRACE.to_vec()
        };
        let mut failed: Vec<(&Unavailable, &[&str])> = Vec::new();
        if let Err(u) = &self.kernels {
            failed.push((u, &["kernels", "kernels_by_base_name"]));
        }
        if let Err(u) = &self.trace {
            failed.push((u, &trace_parts));
        }
        if let Err(us) = &self.calls {
            failed.extend(us.iter().map(|u| (u, &MIX[..])));
        }
        // The kernels keep base names derived from their demangled names: nothing is `null`.
        if let Some(u) = &self.base_names {
            failed.push((u, &[]));
        }
        let mut unavailable: BTreeMap<String, String> = BTreeMap::new();
        let mut warnings: Vec<Warning> = Vec::new();
        for (u, parts) in failed {
            for part in parts {
                unavailable
                    .entry((*part).to_owned())
                    .and_modify(|r| {
                        r.push_str("; ");
                        r.push_str(&u.reason);
                    })
                    .or_insert_with(|| u.reason.clone());
            }
            warnings.push(unavailable_warning(u, parts));
        }
        let mut trace = self.trace.ok();
        if let Some(t) = &trace {
            warnings.extend(rules::pageable_warning(&t.memory_copies));
        }
        let kernels_by_base_name = self.kernels.as_ref().ok().map(|kernels| {
            let launched = kernel_mix.as_ref().map(|m| rules::IterationLaunches {
                iterations: m.iteration.iterations,
                by_base_name: &m.by_base_name,
            });
            rules::kernels_by_base_name(kernels, launched.as_ref())
        });
        if let (Some(t), Some(m)) = (&mut trace, &kernel_mix) {
            let launched = m.copies.as_ref().map(|c| (c, m.iteration.iterations));
            rules::attach_iteration_copies(&mut t.memory_copies, launched);
        }
        if let Some(t) = &mut trace {
            let work = kernel_mix
                .as_ref()
                .map(|m| (&m.devices, m.device_iterations));
            rules::attach_device_work(&mut t.devices, work);
        }
        let (iteration_kernels, per_range_kernels, per_range_kernel_groups, kernel_attribution) =
            match kernel_mix {
                Some(m) => (
                    Some(m.iteration),
                    Some(m.ranges),
                    Some(m.range_groups),
                    Some(m.attribution),
                ),
                None => (None, None, None, None),
            };
        let (devices, memory_copies, memsets) = match trace {
            Some(t) => (Some(t.devices), Some(t.memory_copies), Some(t.memsets)),
            None => (None, None, None),
        };
        let work = GpuWork {
            devices,
            kernels: self.kernels.ok(),
            kernels_by_base_name,
            memory_copies,
            memsets,
            iteration_kernels,
            per_range_kernels,
            per_range_kernel_groups,
            kernel_attribution,
            unavailable,
        };
        (Some(work), warnings)
    }
}

/// The launching calls of every trace as one: each trace's calls of process `k` (its position),
/// correlation ids moved by its offset; unavailable when one trace's are, or when the traces
/// took them from different reports.
fn merge_calls(rows: &[GpuWorkRows], offsets: &[u64]) -> Result<Calls, Vec<Unavailable>> {
    if let Some(e) = rows.iter().find_map(|r| r.calls.as_ref().err()) {
        return Err(e.clone());
    }
    let moved = |api: &[ApiCall], k: usize| -> Vec<ApiCall> {
        api.iter()
            .map(|c| ApiCall {
                corr_id: c.corr_id + offsets[k],
                pid: k as u32,
                ..*c
            })
            .collect()
    };
    let all_exec = rows
        .iter()
        .all(|r| matches!(r.calls, Ok(Calls::Exec { .. })));
    let all_api = rows.iter().all(|r| matches!(r.calls, Ok(Calls::Api(_))));
    if all_api {
        let mut api = Vec::new();
        for (k, r) in rows.iter().enumerate() {
            if let Ok(Calls::Api(calls)) = &r.calls {
                api.extend(moved(calls, k));
            }
        }
        return Ok(Calls::Api(api));
    }
    if !all_exec {
        return Err(vec![Unavailable {
            report: ReportName::KernelExecTrace,
            reason: "the ranks' traces gave the kernels' launching calls from different reports"
                .to_owned(),
        }]);
    }
    let mut names = Interner::new();
    let mut api = Vec::new();
    let mut kernels = Vec::new();
    for (k, r) in rows.iter().enumerate() {
        if let Ok(Calls::Exec {
            api: calls,
            kernels: launched,
            names: own,
        }) = &r.calls
        {
            api.extend(moved(calls, k));
            kernels.extend(launched.iter().map(|l| KernelLaunch {
                corr_id: l.corr_id + offsets[k],
                name: names.intern(own.resolve(l.name)),
                ..*l
            }));
        }
    }
    Ok(Calls::Exec {
        api,
        kernels,
        names,
    })
}

/// `gpu_work_unavailable` for one report: which parts it leaves `null`, and why.
fn unavailable_warning(u: &Unavailable, parts: &[&str]) -> Warning {
    stage_warnings::gpu_work_unavailable(u.report.as_str(), parts, &u.reason)
}
