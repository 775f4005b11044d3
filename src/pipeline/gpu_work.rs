//! The GPU-work reports in the pipeline: reading them (each on its own; a report that failed
//! or cannot be read leaves its parts `null`, never an error) and assembling `gpu_work` with
//! its warnings: `gpu_work_unavailable` per failed report, `pageable_memory_copies`.

use std::collections::BTreeMap;
use std::path::Path;

use crate::analysis::gpu_work::{self as rules, GpuTraceParts, GpuTraceSummary};
use crate::analysis::{KernelMix, Launches};
use crate::artifact::{GpuWork, KernelStats, ReportName, ReportStatus, Warning, WarningCode};
use crate::nsys::{self, StatsStamp};
use crate::reports::{self, ApiCall, Interner};

/// Why a GPU-work report gave nothing: which report, and what nsys (or the reader) said.
#[derive(Debug, Clone)]
pub(super) struct Unavailable {
    report: ReportName,
    reason: String,
}

type Part<T> = Result<T, Unavailable>;

/// What the three GPU-work reports gave: the kernel table, the GPU trace's summary (with
/// its names) and the API calls, or why each is unavailable.
pub(super) struct GpuWorkRows {
    kernels: Part<Vec<KernelStats>>,
    trace: Part<GpuTraceParts>,
    trace_names: Interner,
    api: Part<Vec<ApiCall>>,
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

/// Reads the GPU-work reports nsys wrote, one thread each (the GPU trace in one pass, kept
/// only as the summary `gpu_work` needs).
pub(super) fn read(stats_dir: &Path, stamp: &StatsStamp) -> GpuWorkRows {
    let any_written = ReportName::GPU_WORK
        .iter()
        .any(|&r| stamp.status(r).is_written());
    let (kernels, api, (trace, trace_names)) = std::thread::scope(|scope| {
        let api = scope.spawn(|| {
            read_one(stats_dir, stamp, ReportName::ApiTrace, Vec::new, |p| {
                reports::read_api_trace(p)
            })
        });
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
        let kernels = read_one(stats_dir, stamp, ReportName::KernelSummary, Vec::new, |p| {
            let mut names = Interner::new();
            let rows = reports::read_kernel_summary(p, &mut names)?;
            Ok(rules::kernel_table(&rows, &names))
        });
        (
            kernels,
            api.join().expect("the API trace reader does not panic"),
            trace.join().expect("the GPU trace reader does not panic"),
        )
    });
    GpuWorkRows {
        kernels,
        trace,
        trace_names,
        api,
        any_written,
    }
}

impl GpuWorkRows {
    /// The API calls and kernels for the analysis to attribute, when both reports were read.
    pub(super) fn launches(&self) -> Option<Launches<'_>> {
        match (&self.trace, &self.api) {
            (Ok(trace), Ok(api)) => Some(Launches {
                api,
                kernels: &trace.launches,
                kernel_rows: trace.kernels,
                names: &self.trace_names,
            }),
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
        const MIX: [&str; 3] = [
            "iteration_kernels",
            "kernel_attribution",
            "per_range_kernels",
        ];
        const TRACE: [&str; 6] = [
            "devices",
            "memory_copies",
            "memsets",
            MIX[0],
            MIX[1],
            MIX[2],
        ];
        let failed: [(Option<&Unavailable>, &[&str]); 3] = [
            (self.kernels.as_ref().err(), &["kernels"]),
            (self.trace.as_ref().err(), &TRACE),
            (self.api.as_ref().err(), &MIX),
        ];
        let mut unavailable: BTreeMap<String, String> = BTreeMap::new();
        let mut warnings: Vec<Warning> = Vec::new();
        for (u, parts) in failed {
            let Some(u) = u else { continue };
            for part in parts {
                unavailable
                    .entry((*part).to_owned())
                    .and_modify(|r| {
                        r.push_str("; ");
                        r.push_str(&u.reason);
                    })
                    .or_insert_with(|| u.reason.clone());
            }
            warnings.push(unavailable_warning(u));
        }
        let trace = self.trace.ok();
        if let Some(t) = &trace {
            warnings.extend(rules::pageable_warning(&t.memory_copies));
        }
        let (iteration_kernels, per_range_kernels, kernel_attribution) = match kernel_mix {
            Some(m) => (Some(m.iteration), Some(m.ranges), Some(m.attribution)),
            None => (None, None, None),
        };
        let (devices, memory_copies, memsets) = match trace {
            Some(t) => (Some(t.devices), Some(t.memory_copies), Some(t.memsets)),
            None => (None, None, None),
        };
        let work = GpuWork {
            devices,
            kernels: self.kernels.ok(),
            memory_copies,
            memsets,
            iteration_kernels,
            per_range_kernels,
            kernel_attribution,
            unavailable,
        };
        (Some(work), warnings)
    }
}

/// `gpu_work_unavailable` for one report: which parts it leaves `null`, and why.
fn unavailable_warning(u: &Unavailable) -> Warning {
    let parts = match u.report {
        ReportName::KernelSummary => "`kernels`",
        ReportName::GpuTrace => "`devices`, `memory_copies`, `memsets` and the kernels per range",
        _ => "the kernels per range",
    };
    Warning::new(
        WarningCode::GpuWorkUnavailable,
        format!("{parts} of gpu_work: {}", u.reason),
    )
    .with_report(u.report.as_str())
}
