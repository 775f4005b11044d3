//! The reports of one trace read as soon as the `nsys stats` process that made them ends, each
//! on a thread of its own, while nsys still makes the others: the push/pop report, the GPU
//! projection, and the GPU-work reports once every one of them is made. Reading is then off
//! the critical path but for the reports of the process that ends last; on two cores the
//! reading also fills the core a lone last process leaves idle.

use std::path::Path;
use std::thread::{Scope, ScopedJoinHandle};

use super::gpu_work::{self, GpuWorkRows};
use crate::nsys::{self, StatsStamp};
use crate::reports::{self, GpuProjRow, Interner, PushPopRow, ReportError};
use nsys_gate_core::artifact::ReportName;

/// The push/pop report's rows and the names they intern.
pub(super) type PushPopRead = Result<(Vec<PushPopRow>, Interner), ReportError>;
/// The GPU projection's rows.
pub(super) type GpuProjRead = Result<Vec<GpuProjRow>, ReportError>;

/// Reading options for a stamp's nsys.
fn read_options(stamp: &StatsStamp) -> reports::ReadOptions {
    reports::ReadOptions {
        strip_default_domain: nsys::adds_default_domain_prefix(&stamp.nsys_version),
    }
}

/// Reads the push/pop report nsys wrote into `stats_dir`.
pub(super) fn read_pushpop(stats_dir: &Path, stamp: &StatsStamp) -> PushPopRead {
    let path = nsys::csv_path(stats_dir, ReportName::PushPop.as_str());
    let mut names = Interner::new();
    let rows = reports::read_pushpop(&path, &mut names, read_options(stamp))?;
    Ok((rows, names))
}

/// Reads the GPU projection nsys wrote into `stats_dir`. Its names are never looked up (rows
/// join on RangeId), so it interns into a table of its own. An empty file is nsys's answer
/// when no range launched GPU work.
pub(super) fn read_gpu_proj(stats_dir: &Path, stamp: &StatsStamp) -> GpuProjRead {
    let path = nsys::csv_path(stats_dir, ReportName::GpuProjection.as_str());
    if std::fs::metadata(&path).is_ok_and(|m| m.len() == 0) {
        return Ok(Vec::new());
    }
    reports::read_gpu_proj(&path, &mut Interner::new(), read_options(stamp))
}

/// What was read early, by report; `None` for a report not read (not written, or its process
/// not ended before the others): it is read after nsys then.
#[derive(Default)]
pub(super) struct EarlyRows {
    pub(super) pushpop: Option<PushPopRead>,
    pub(super) gpu: Option<GpuProjRead>,
    pub(super) gpu_work: Option<GpuWorkRows>,
}

/// The readers started so far, as the processes end ([`EarlyReaders::ended`]).
#[derive(Default)]
pub(super) struct EarlyReaders<'scope> {
    pushpop: Option<ScopedJoinHandle<'scope, PushPopRead>>,
    gpu: Option<ScopedJoinHandle<'scope, GpuProjRead>>,
    gpu_work: Option<ScopedJoinHandle<'scope, GpuWorkRows>>,
}

impl<'scope> EarlyReaders<'scope> {
    /// Called as each process ends, with the reports classified so far: starts a reader for
    /// each report (or, for the GPU-work reports, the set of them) now made and not yet read.
    pub(super) fn ended<'env>(
        &mut self,
        scope: &'scope Scope<'scope, 'env>,
        stats_dir: &'env Path,
        so_far: &StatsStamp,
    ) {
        let written = |report: ReportName| {
            so_far
                .reports
                .get(report.as_str())
                .is_some_and(|s| s.is_written())
        };
        if self.pushpop.is_none() && written(ReportName::PushPop) {
            let stamp = so_far.clone();
            self.pushpop = Some(scope.spawn(move || read_pushpop(stats_dir, &stamp)));
        }
        if self.gpu.is_none() && written(ReportName::GpuProjection) {
            let stamp = so_far.clone();
            self.gpu = Some(scope.spawn(move || read_gpu_proj(stats_dir, &stamp)));
        }
        let gpu_work_done = ReportName::GPU_WORK
            .iter()
            .all(|r| so_far.reports.contains_key(r.as_str()));
        if self.gpu_work.is_none() && gpu_work_done {
            let stamp = so_far.clone();
            self.gpu_work = Some(scope.spawn(move || gpu_work::read(stats_dir, &stamp)));
        }
    }

    /// Waits for every reader started.
    pub(super) fn join(self) -> EarlyRows {
        EarlyRows {
            pushpop: self
                .pushpop
                .map(|h| h.join().expect("the push/pop reader does not panic")),
            gpu: self
                .gpu
                .map(|h| h.join().expect("the projection reader does not panic")),
            gpu_work: self
                .gpu_work
                .map(|h| h.join().expect("the GPU-work readers do not panic")),
        }
    }
}
