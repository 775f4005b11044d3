//! How the `nsys stats` processes are scheduled: the places shared by the traces of one
//! analysis ([`Slots`]), the reports split into groups of about equal cost, one process each,
//! and the processes run at once, the others waiting for the first one's export.

use super::{Asked, StatsCall, StatsPlan};
use crate::nsys::error::NsysError;
use crate::nsys::process::Captured;
use nsys_gate_core::artifact::ReportName;
use std::path::Path;
use std::time::{Duration, Instant};

/// Places for `nsys stats` processes shared by the traces of one analysis (one trace per
/// rank): at most this many run at once, whatever the number of traces, so that eight traces
/// on two cores do not start twenty-four processes that share the cores and the memory.
#[derive(Debug)]
pub struct Slots {
    free: std::sync::Mutex<usize>,
    freed: std::sync::Condvar,
}

impl Slots {
    pub fn new(count: usize) -> Self {
        Slots {
            free: std::sync::Mutex::new(count.max(1)),
            freed: std::sync::Condvar::new(),
        }
    }

    /// Waits for a place; it is given back when the guard is dropped.
    pub(super) fn take(&self) -> SlotGuard<'_> {
        let mut free = self
            .free
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        while *free == 0 {
            free = self
                .freed
                .wait(free)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
        }
        *free -= 1;
        SlotGuard(self)
    }
}

/// A place taken from [`Slots`], given back on drop.
pub(super) struct SlotGuard<'s>(&'s Slots);

impl Drop for SlotGuard<'_> {
    fn drop(&mut self) {
        let mut free = self
            .0
            .free
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        *free += 1;
        self.0.freed.notify_one();
    }
}

/// The asked reports split into at most `processes` groups (at most
/// [`StatsPlan::MAX_PROCESSES`], at most one per report, never an empty one) of about equal
/// [`ReportName::cost`], one `nsys stats` process each. The groups come from the reports asked, so every
/// report runs, whatever the number of processes.
///
/// The rule: longest processing time first. Each report, the most costly first (equal costs
/// in [`ReportName::ALL`]'s order), goes into the group with the least cost so far (equal
/// costs: the lower group). With more groups than required reports, each required (NVTX)
/// report has a group of its own and the GPU-work reports share the others by the same rule.
/// Within a group the reports are in [`ReportName::ALL`]'s order, the order nsys is asked for
/// them. One process (or 0): one group, every report in that order.
///
/// So the most costly report, the push/pop report, opens the first group: that process makes
/// the export of a `.nsys-rep`, and the others start when it creates its first report's CSV
/// (see [`run_stats`]). With two processes or more the two NVTX reports, the most costly, are
/// apart; on a trace without CUDA data the GPU-work reports end at once. With the costs
/// above, two groups: the push/pop report with the API trace, the projection with the others;
/// three: the push/pop report, the projection, the GPU-work reports together. Three processes
/// on two cores share them about equally, so the last two end about together when the two
/// largest groups cost about the same: the push/pop report alone, and beside it the
/// projection (3.8 s) and the GPU-work reports (4.2 s with `cuda_kern_exec_trace`) rather than
/// the projection with a kernel summary (3.9 s) and the other GPU-work reports (4.0 s). The
/// GPU-work reports, read together ([`crate::pipeline`]), are then made by one process, which
/// usually ends before the push/pop report's.
pub(super) fn groups(asked: &[Asked], processes: usize) -> Vec<Vec<Asked>> {
    let count = processes
        .clamp(1, StatsPlan::MAX_PROCESSES)
        .min(asked.len());
    let mut groups: Vec<Vec<Asked>> = vec![Vec::new(); count];
    let mut loads = vec![0u32; count];
    let rank = |a: &Asked| ReportName::ALL.iter().position(|r| *r == a.report);
    let mut by_cost = asked.to_vec();
    by_cost.sort_by_key(|a| (std::cmp::Reverse(a.report.cost()), rank(a)));
    let required = by_cost.iter().filter(|a| a.report.is_required()).count();
    let apart = count > required && required > 0 && count > 1;
    for a in by_cost {
        // The required reports first (they cost the most), each into a group of its own when
        // `apart`; the others never into those groups then.
        let candidates = if apart && !a.report.is_required() {
            required..count
        } else {
            0..count
        };
        // `min_by_key` returns the first of equal minimums: ties go to the lower group.
        let Some(k) = candidates.min_by_key(|&k| loads[k]) else {
            break;
        };
        loads[k] += a.report.cost();
        groups[k].push(a);
    }
    for group in &mut groups {
        group.sort_by_key(rank);
    }
    groups
}

/// Runs the calls at once, one thread each, and hands each call's output to `ended` (with the
/// call's index) as soon as it ends; `progress` is called from this thread about once a
/// second. With `first_exports` (the CSV of the first call's first report), the first call
/// makes the export the others read: they start once that CSV appears, and are not run at all
/// when the first call ends before (its own failure then says why).
///
/// nsys creates a report's CSV when it starts the report, right after closing the export it
/// wrote (strace of 2022.4, 2023.4 and 2024.2); it says `Processing [...]` only when the
/// report is done, so its words would hold the others back for a whole report.
pub(super) fn run_concurrently(
    calls: &[StatsCall],
    first_exports: Option<&Path>,
    started: Instant,
    progress: &mut dyn FnMut(Duration),
    ended: &mut dyn FnMut(usize, Result<Captured, NsysError>),
) {
    let timeout = |call: &StatsCall| call.timeout.saturating_sub(started.elapsed());
    if let [call] = calls {
        ended(
            0,
            call.run(timeout(call), &mut |_| progress(started.elapsed())),
        );
        return;
    }
    let export_written = || first_exports.is_none_or(Path::exists);
    // Each runner says when it ends (a panicking one too: it says so when dropped), so that
    // its end is handed on at once; the loop looks every 20 ms only for the export and the
    // progress.
    let (done, ends) = std::sync::mpsc::channel::<usize>();
    std::thread::scope(|scope| {
        let spawn = |k: usize| {
            let call = &calls[k];
            let says = SaysEnded(k, done.clone());
            Some(scope.spawn(move || {
                let _says = says;
                call.run(timeout(call), &mut |_| {})
            }))
        };
        let mut running = vec![spawn(0)];
        let mut waiting = true;
        let mut last_tick = Instant::now();
        // The runners that said they ended, handed on at the next turn.
        let mut ended_now: Vec<usize> = Vec::new();
        loop {
            // Looked at before the first call's end is handed on (which renames a legacy
            // CSV): a first call that ended with its CSV written still lets the others run.
            if waiting && export_written() {
                waiting = false;
                running.extend((1..calls.len()).map(spawn));
            }
            for k in ended_now.drain(..) {
                let output = running[k]
                    .take()
                    .expect("a running call")
                    .join()
                    .expect("an nsys runner thread does not panic");
                ended(k, output);
            }
            if running[0].is_none() && (waiting || running.iter().all(Option::is_none)) {
                break;
            }
            if last_tick.elapsed() >= Duration::from_secs(1) {
                last_tick = Instant::now();
                progress(started.elapsed());
            }
            if let Ok(first) = ends.recv_timeout(Duration::from_millis(20)) {
                ended_now.extend(std::iter::once(first).chain(ends.try_iter()));
            }
        }
        if waiting {
            for k in 1..calls.len() {
                ended(
                    k,
                    Ok(Captured {
                        status: None,
                        timed_out: false,
                        text: "not run: the first nsys stats process, which makes the export, ended before it started a report".to_owned(),
                    }),
                );
            }
        }
    });
}

/// Says on drop that runner `.0` ended, however it ended.
struct SaysEnded(usize, std::sync::mpsc::Sender<usize>);

impl Drop for SaysEnded {
    fn drop(&mut self) {
        let _ = self.1.send(self.0);
    }
}
