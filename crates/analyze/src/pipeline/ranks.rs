//! One trace per rank (`expected_trace_path` with `%q{RANK}`): each trace's reports made and
//! read on a thread of its own, then analysed together as the processes of one trace are.

use std::path::{Path, PathBuf};

use anyhow::Context as _;

use super::{
    gpu_work, read_trace, settings_of, stats, trace_clocks, unfit, Analysed, AnalyzeError,
    AnalyzeOptions, NvtxRows, SharedNsys,
};
use crate::analysis;
use crate::nsys::{self, StatsStamp};
use crate::progress::Progress;
use crate::reports::{GpuProjRow, Interner, PushPopRow};
use crate::rundir::{RunDir, STATS_DIR};
use nsys_gate_core::artifact::ReportName;
use nsys_gate_core::text::shown_path;

/// One trace per rank: each trace's reports under `stats/RANK/`, made and read on a thread
/// per trace; the ranks analysed as the processes of one trace are (`analysis::ranks`), the
/// GPU-work reports of every trace as one (each rank's device from its own trace's kernels).
/// The stamp and the projection's absence are the first rank's.
pub(super) fn analyze_rank_traces(
    options: &AnalyzeOptions,
    traces: &[(u64, RunDir)],
    stats_dir: &Path,
    progress: &mut Progress,
) -> Result<Analysed, AnalyzeError> {
    let dirs: Vec<PathBuf> = traces
        .iter()
        .map(|(rank, _)| stats_dir.join(rank.to_string()))
        .collect();
    for dir in &dirs {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create {}", shown_path(dir)))
            .map_err(AnalyzeError::other)?;
    }
    let per_trace = stats_of_traces(options, traces, &dirs, progress)?;
    AnalyzeError::check_interrupt()?;
    let (per_trace, gpu_rows): (Vec<(StatsStamp, NvtxRows)>, Vec<gpu_work::GpuWorkRows>) =
        per_trace
            .into_iter()
            .map(|(stamp, rows, gpu)| ((stamp, rows), gpu))
            .unzip();
    // every trace's GPU work as one, trace k's processes process k; each rank's device
    let gpu_work_rows = gpu_work::GpuWorkRows::merge(gpu_rows);
    let devices = gpu_work_rows
        .launches()
        .map(|l| analysis::devices_by_process(&l))
        .unwrap_or_default();

    // One name table; each rank's rows with their own range ids, and every rank's at once with
    // range ids made distinct and the rank's position for its PID.
    let mut names = Interner::new();
    let mut ranks = Vec::with_capacity(traces.len());
    let mut all = Vec::new();
    let mut all_gpu: Option<Vec<GpuProjRow>> = Some(Vec::new());
    let mut offset = 0u64;
    for (position, ((rank, _), (_, rows))) in traces.iter().zip(&per_trace).enumerate() {
        let pushpop: Vec<PushPopRow> = rows
            .pushpop
            .iter()
            .map(|r| PushPopRow {
                name: names.intern(rows.names.resolve(r.name)),
                ..r.clone()
            })
            .collect();
        all.extend(pushpop.iter().map(|r| PushPopRow {
            range_id: r.range_id + offset,
            parent_id: r.parent_id.map(|p| p + offset),
            pid: position as u32,
            ..r.clone()
        }));
        match (&mut all_gpu, &rows.gpu) {
            (Some(all_gpu), Some(gpu)) => all_gpu.extend(gpu.iter().map(|r| GpuProjRow {
                range_id: r.range_id.map(|id| id + offset),
                pid: position as u32,
                ..r.clone()
            })),
            _ => all_gpu = None,
        }
        offset += rows.pushpop.iter().map(|r| r.range_id).max().unwrap_or(0) + 1;
        ranks.push(analysis::RankRows {
            rank: *rank,
            pid: pushpop.first().map_or(0, |r| r.pid),
            device: devices
                .get(&(position as u32))
                .filter(|d| d.len() == 1)
                .and_then(|d| d.first())
                .map(|&d| u64::from(d)),
            pushpop,
            gpu: rows.gpu.clone(),
        });
    }
    let run = &traces[0].1;
    let stamp = &per_trace[0].0;
    let settings = settings_of(run)?;
    let world_size = run
        .manifest
        .extra
        .get("world_size")
        .and_then(serde_json::Value::as_u64);
    let relative = |report: ReportName| nsys::csv_path(Path::new(STATS_DIR), report.as_str());
    let findings = analysis::apply_rules_per_rank(
        &settings,
        &analysis::Reports {
            names: &names,
            pushpop: &all,
            pushpop_path: &relative(ReportName::PushPop),
            gpu: all_gpu.as_deref(),
            gpu_path: &relative(ReportName::GpuProjection),
            launches: gpu_work_rows.launches(),
        },
        &ranks,
        world_size,
    )
    .map_err(|e| unfit(e, stamp))?;
    let clocks = rank_clocks(&ranks, &per_trace, &findings.rank_iterations);
    let mut first = with_other_traces(per_trace);
    Ok((
        first.0,
        first.1.gpu_unavailable.take(),
        gpu_work_rows,
        findings,
        clocks,
    ))
}

/// Each rank trace's stamp and rows: nsys found once, each trace one `nsys stats` call, at most
/// `--nsys-processes` at once; the first trace with the progress shown, the others beside it.
fn stats_of_traces(
    options: &AnalyzeOptions,
    traces: &[(u64, RunDir)],
    dirs: &[PathBuf],
    progress: &mut Progress,
) -> Result<Vec<PerTrace>, AnalyzeError> {
    // nsys found once; each trace one `nsys stats` call, at most `--nsys-processes` at once.
    let shared = SharedNsys::find(options)?;
    let shared = shared.as_ref();
    let per_trace: Vec<Result<PerTrace, AnalyzeError>> = std::thread::scope(|scope| {
        let others: Vec<_> = traces
            .iter()
            .zip(dirs)
            .skip(1)
            .map(|((_, run), dir)| {
                scope.spawn(move || {
                    let stamp = stats(
                        options,
                        run,
                        dir,
                        shared,
                        &mut Progress::quiet(),
                        &mut |_| {},
                    )?;
                    let (rows, gpu) = read_trace(dir, &stamp, &run.trace_name, Default::default())?;
                    Ok((stamp, rows, gpu))
                })
            })
            .collect();
        let first = stats(
            options,
            &traces[0].1,
            &dirs[0],
            shared,
            progress,
            &mut |_| {},
        )
        .and_then(|stamp| {
            read_trace(
                &dirs[0],
                &stamp,
                &traces[0].1.trace_name,
                Default::default(),
            )
            .map(|(rows, gpu)| (stamp, rows, gpu))
        });
        std::iter::once(first)
            .chain(
                others
                    .into_iter()
                    .map(|h| h.join().expect("a trace's analysis does not panic")),
            )
            .collect()
    });
    per_trace.into_iter().collect()
}

/// One rank trace's stamp and rows.
type PerTrace = (StatsStamp, NvtxRows, gpu_work::GpuWorkRows);

/// Each rank's trace's GPU metrics over its own rank's iterations: each trace keeps its own
/// time.
fn rank_clocks(
    ranks: &[analysis::RankRows],
    per_trace: &[(StatsStamp, NvtxRows)],
    rank_iterations: &[Vec<nsys_gate_core::artifact::Iteration>],
) -> Vec<analysis::clocks::TraceClocks> {
    ranks
        .iter()
        .zip(per_trace)
        .zip(rank_iterations)
        .map(|((r, (stamp, _)), iterations)| {
            trace_clocks((Some(r.rank), r.device), stamp, iterations)
        })
        .collect()
}

/// The first trace's stamp and rows, with what the others recorded ([`with_other_trace`]).
fn with_other_traces(per_trace: Vec<(StatsStamp, NvtxRows)>) -> (StatsStamp, NvtxRows) {
    let mut per_trace = per_trace.into_iter();
    let mut first = per_trace.next().expect("one trace at least");
    for (other, _) in per_trace {
        with_other_trace(&mut first.0, other);
    }
    first
}

/// What another rank's trace recorded, added to the first trace's stamp: every credential name
/// its environment holds (the warning names them all), and the GPUs the first does not list
/// (the traces of several nodes list other GPUs).
fn with_other_trace(first: &mut StatsStamp, other: StatsStamp) {
    for name in other.credential_variables {
        if !first.credential_variables.contains(&name) {
            first.credential_variables.push(name);
        }
    }
    first.credential_variables.sort();
    match (&mut first.environment, other.environment) {
        (Some(environment), Some(other)) => environment.add_gpus(other.gpus),
        (None, Some(other)) => first.environment = Some(other),
        (_, None) => {}
    }
}
