//! The `analyze` pipeline, one stage after another: run directory and manifest -> nsys (run
//! and classify) -> the CSV reports -> the analysis -> the gate -> `analysis.json`. The
//! functions after [`analyze`] follow the same order; the GPU-work reports are read and
//! assembled in `gpu_work`, the traces of one run per rank analysed together in `ranks`.
//!
//! Each stage's typed error becomes an [`AnalyzeError`] at the call site that knows what it
//! means (its [`FailureKind`], the nsys version, nsys's words, the command tried, the profile
//! name once the manifest is read), so the report never reads an error message back.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{anyhow, Context};

use crate::analysis::{self, stage_warnings};
use crate::nsys::{self, NsysChoice, NsysError, StatsPlan, StatsStamp};
use crate::progress::Progress;
use crate::reports::{self, GpuProjRow, Interner, PushPopRow};
use crate::rundir::STATS_DIR;
use crate::rundir::{self, RunDir, RunDirError};
use crate::trace_env;
use nsys_gate_core::artifact::{self, Analysis, CiRun, Provenance, ReportName, Run, Warning};
use nsys_gate_core::artifact::{ANALYSIS_FILE, TOOL_VERSION};
use nsys_gate_core::files;
use nsys_gate_core::gate::{self, GateConfig};
use nsys_gate_core::interrupt;
use nsys_gate_core::outcome::{chain_text, Failure, FailureKind, RunFacts};
use nsys_gate_core::text::shown;

mod early;
mod gpu_work;
mod ranks;
mod stats;

use self::ranks::analyze_rank_traces;
use self::stats::{stats, SharedNsys};

/// What `analyze` is asked to do, free of command-line types.
#[derive(Debug, Clone)]
pub struct AnalyzeOptions {
    pub run_dir: PathBuf,
    pub nsys: NsysChoice,
    pub nsys_timeout: Duration,
    /// How many `nsys stats` processes run the reports at once.
    pub stats_plan: StatsPlan,
    /// Where analysis.json goes [default: RUN_DIR/analysis.json].
    pub output: Option<PathBuf>,
    /// Read the CSVs an earlier run left under `stats/` instead of running nsys.
    pub reuse_stats: bool,
    /// Keep nsys's SQLite export `stats/trace.sqlite` (by default removed once the reports are
    /// written: it holds the whole trace, the recorded environment included).
    pub keep_export: bool,
    pub gate: GateConfig,
    /// A label for this run directory (`--label`), kept in analysis.json: what tells the legs
    /// of a matrix apart in the report when their GPUs do not.
    pub label: Option<String>,
    /// The CI run and runner this analysis is made in, recorded in its provenance (`None`
    /// outside CI).
    pub ci_run: Option<CiRun>,
    pub runner: Option<String>,
}

/// Why `analyze` wrote nothing: the error as people read it, and what the report needs.
#[derive(Debug)]
pub struct AnalyzeError {
    /// The error and its causes, as `nsys-gate: error:` prints them.
    pub error: anyhow::Error,
    pub kind: FailureKind,
    pub nsys_version: Option<String>,
    pub nsys_words: Option<String>,
    pub command: Option<String>,
    /// Boxed: an error travels through every stage's `Result`, and is rare.
    pub facts: Box<RunFacts>,
}

impl AnalyzeError {
    fn new(kind: FailureKind, error: impl Into<anyhow::Error>) -> Self {
        AnalyzeError {
            error: error.into(),
            kind,
            nsys_version: None,
            nsys_words: None,
            command: None,
            facts: Box::default(),
        }
    }

    fn other(error: impl Into<anyhow::Error>) -> Self {
        AnalyzeError::new(FailureKind::Other, error)
    }

    /// Stops the pipeline between stages when nsys-gate received SIGINT/SIGTERM.
    fn check_interrupt() -> Result<(), AnalyzeError> {
        match interrupt::received() {
            Some(signal) => Err(AnalyzeError::other(anyhow!(
                "nsys-gate received {}; stopped before finishing the analysis",
                signal.name()
            ))),
            None => Ok(()),
        }
    }

    fn with_version(mut self, version: &str) -> Self {
        self.nsys_version = Some(version.to_owned());
        self
    }

    fn with_facts(mut self, facts: &RunFacts) -> Self {
        self.facts = Box::new(facts.clone());
        self
    }

    /// The failure of the run directory `run_dir`, for the report.
    pub fn to_failure(&self, run_dir: PathBuf) -> Failure {
        Failure {
            run_dir,
            kind: self.kind,
            error: chain_text(&self.error),
            nsys_version: self.nsys_version.clone(),
            nsys_words: self.nsys_words.clone(),
            command: self.command.clone(),
            facts: (*self.facts).clone(),
        }
    }
}

impl From<RunDirError> for AnalyzeError {
    fn from(e: RunDirError) -> Self {
        AnalyzeError::new(e.kind(), e)
    }
}

impl From<NsysError> for AnalyzeError {
    fn from(e: NsysError) -> Self {
        AnalyzeError {
            kind: e.kind(),
            nsys_version: e.version().map(str::to_owned),
            nsys_words: e.words().map(str::to_owned),
            command: e.command().map(str::to_owned),
            facts: Box::default(),
            error: e.into(),
        }
    }
}

/// The `analyze` pipeline. Returns the analysis and the path it was written to. On any error
/// nothing is written: an existing analysis.json stays as it was.
pub fn analyze(
    options: &AnalyzeOptions,
    progress: &mut Progress,
) -> Result<(Analysis, PathBuf), AnalyzeError> {
    // 1. The run directory and its manifest.
    let read = rundir::read_manifest_of(&options.run_dir)?;
    AnalyzeError::check_interrupt()?;
    let facts = RunFacts {
        profile_name: Some(read.manifest.profile_name.clone()),
        run_id: Some(read.manifest.run_id.clone()),
    };
    let add_facts = |e: AnalyzeError| e.with_facts(&facts);
    // One trace per rank (`expected_trace_path` with `%q{RANK}`): each checked as the one
    // trace is; the first stands for the run's place.
    let rank_traces = rundir::locate_rank_traces(&read).map_err(|e| add_facts(e.into()))?;
    let run = match &rank_traces {
        Some(traces) => traces[0].1.clone(),
        None => rundir::locate_trace(read).map_err(|e| add_facts(e.into()))?,
    };
    let output = options
        .output
        .clone()
        .unwrap_or_else(|| run.dir.join(ANALYSIS_FILE));
    let stats_dir = run.dir.join(STATS_DIR);
    rundir::prepare_outputs(&stats_dir, &output, options.reuse_stats)
        .map_err(|e| add_facts(AnalyzeError::other(e)))?;
    // One analysis of a run directory at a time: a second one is refused, not interleaved.
    // Released when this function returns, also after SIGINT/SIGTERM (nsys stopped first).
    let _lock = rundir::lock(&run.dir, &stats_dir, options.reuse_stats).map_err(|e| {
        let kind = if e.is::<rundir::Busy>() {
            FailureKind::Busy
        } else {
            FailureKind::Other
        };
        add_facts(AnalyzeError::new(kind, e))
    })?;

    // 2-4. nsys stats, the CSVs, the analysis: of the one trace, or of each rank's.
    let (stamp, gpu_unavailable, gpu_work_rows, mut findings, trace_clocks) = match &rank_traces {
        Some(traces) => {
            analyze_rank_traces(options, traces, &stats_dir, progress).map_err(add_facts)?
        }
        None => analyze_trace(options, &run, &stats_dir, progress).map_err(add_facts)?,
    };
    let (gpu_work, gpu_warnings) = gpu_work_rows.assemble(
        findings.kernel_mix.take(),
        stamp.status(ReportName::GpuProjection).is_written(),
    );

    // The environment, of the GPUs that ran work, with their clocks over the counted
    // iterations (with one trace per rank, each trace's over its rank's own iterations).
    let mut environment = stamp.environment.clone().map(|e| {
        let ran_work: Vec<u64> = gpu_work
            .as_ref()
            .and_then(|w| w.devices.as_ref())
            .into_iter()
            .flatten()
            .filter_map(|d| d.id)
            .collect();
        e.of_gpus_that_ran_work(&ran_work)
    });
    let mut clock_warnings = Vec::new();
    if let Some(environment) = environment.as_mut() {
        let measured = analysis::clocks::measured(environment, &trace_clocks);
        analysis::clocks::record(environment, &measured);
        clock_warnings = analysis::clocks::unsteady(environment, &measured);
    }

    // 5. Warnings from every stage, and the gate.
    let mut warnings: Vec<Warning> = run.warnings.clone();
    warnings.extend(clock_warnings);
    warnings.extend(stage_warnings::legacy_reports(
        stamp.legacy_reports,
        &stamp.nsys_version,
    ));
    if let Some(reason) = gpu_unavailable {
        warnings.push(stage_warnings::gpu_projection_unavailable(reason));
    }
    warnings.extend(gpu_warnings);
    warnings.extend(stage_warnings::untested_version(
        nsys::is_tested_version(&stamp.nsys_version),
        &stamp.nsys_version,
    ));
    warnings.extend(stage_warnings::credentials(
        &stamp.credential_variables,
        trace_env::MAX_NAMES,
    ));
    warnings.extend(findings.warnings);
    let gate = gate::apply(&options.gate, &mut warnings);

    // 6. analysis.json.
    let analysis = Analysis {
        schema_version: artifact::SCHEMA_VERSION,
        provenance: {
            let mut p = provenance(&run, &stamp, options);
            if let Some(traces) = &rank_traces {
                p.traces = traces.iter().map(|(_, t)| t.trace_name.clone()).collect();
                // the first rank's CSVs, under stats/RANK/
                let first = Path::new(STATS_DIR).join(traces[0].0.to_string());
                for (name, path) in &mut p.reports {
                    *path = nsys::csv_path(&first, name).to_string_lossy().into_owned();
                }
            }
            p
        },
        run: run_settings(&run),
        gate,
        warnings,
        iteration_summary: findings.iteration_summary,
        iterations: findings.iterations,
        host_ranges: findings.host_ranges,
        host_range_groups: findings.host_range_groups,
        gpu_projected_range_groups: findings.gpu_projected_range_groups,
        steady_state: findings.steady_state,
        gpu_projected_ranges: findings.gpu_projected_ranges,
        gpu_work,
        advice: findings.advice,
        ranks: findings.ranks.map(|mut ranks| {
            for r in &mut ranks {
                r.trace = match &rank_traces {
                    Some(traces) => traces
                        .iter()
                        .find(|(rank, _)| *rank == r.rank)
                        .map(|(_, t)| t.trace_name.clone())
                        .unwrap_or_default(),
                    None => run.trace_name.clone(),
                };
            }
            ranks
        }),
        label: options.label.clone(),
        environment,
    };
    AnalyzeError::check_interrupt().map_err(add_facts)?;
    files::write_atomically_with(&output, |out| analysis.write_json(out))
        .map_err(|e| add_facts(AnalyzeError::other(e)))?;
    Ok((analysis, output))
}

/// The rows of both NVTX reports, and why there is no GPU projection when there is none.
struct NvtxRows {
    names: Interner,
    pushpop: Vec<PushPopRow>,
    gpu: Option<Vec<GpuProjRow>>,
    gpu_unavailable: Option<String>,
}

/// Reads the two NVTX reports at once, one per thread: nsys's time dominates big traces, and what
/// is left is mostly reading. A report read already (`early`, as its process ended) is not
/// read again.
fn read_reports(
    stats_dir: &Path,
    stamp: &StatsStamp,
    trace_name: &str,
    early: (Option<early::PushPopRead>, Option<early::GpuProjRead>),
) -> Result<NvtxRows, AnalyzeError> {
    let pushpop_status = stamp.status(ReportName::PushPop);
    let gpu_status = stamp.status(ReportName::GpuProjection);
    let read_gpu = pushpop_status.is_written() && gpu_status.is_written();
    let (early_pushpop, early_gpu) = early;
    let (pushpop, gpu_rows) = std::thread::scope(|scope| {
        let gpu = read_gpu.then(|| match early_gpu {
            Some(read) => Ok(read),
            None => Err(scope.spawn(|| early::read_gpu_proj(stats_dir, stamp))),
        });
        let pushpop = if pushpop_status.is_written() {
            early_pushpop.unwrap_or_else(|| early::read_pushpop(stats_dir, stamp))
        } else {
            Ok((Vec::new(), Interner::new()))
        };
        let gpu = gpu.map(|read| {
            read.unwrap_or_else(|handle| {
                handle.join().expect("the projection reader does not panic")
            })
        });
        (pushpop, gpu)
    });
    let unreadable = |e: reports::ReportError| {
        AnalyzeError::new(
            FailureKind::ReportColumns,
            anyhow!(e).context(format!(
                "cannot read a report written by nsys {}",
                shown(&stamp.nsys_version)
            )),
        )
        .with_version(&stamp.nsys_version)
    };
    let (pushpop, names) = pushpop.map_err(unreadable)?;
    let (gpu, gpu_unavailable) = match gpu_rows {
        Some(rows) => (Some(rows.map_err(unreadable)?), None),
        None if !pushpop_status.is_written() => (
            None,
            Some("the push/pop report was skipped (no NVTX data), so there is no GPU projection either".to_owned()),
        ),
        None => (
            None,
            Some(format!(
                "nsys skipped the GPU projection: {}",
                gpu_status
                    .message
                    .as_deref()
                    .map_or_else(|| "no reason given".to_owned(), |m| naming_the_trace(m, trace_name))
            )),
        ),
    };
    Ok(NvtxRows {
        names,
        pushpop,
        gpu,
        gpu_unavailable,
    })
}

/// nsys's words about a report it skipped name the file it read: for a `.nsys-rep`, the export
/// `stats/trace.sqlite`, which is removed before anyone reads the warning. They name the trace
/// (`trace.nsys-rep`) instead, the file the user has.
fn naming_the_trace(message: &str, trace_name: &str) -> String {
    let export = format!("{STATS_DIR}/{}", nsys::EXPORT_FILE);
    message.replace(&export, trace_name)
}

/// The analysis of the rows with the manifest's settings ([`analysis::apply_rules`]).
fn analyze_rows(
    run: &RunDir,
    nvtx_rows: &NvtxRows,
    gpu_work_rows: &gpu_work::GpuWorkRows,
    stamp: &StatsStamp,
) -> Result<analysis::Findings, AnalyzeError> {
    let settings = settings_of(run)?;
    // As `provenance.reports` names them: relative to the run directory.
    let relative = |report: ReportName| nsys::csv_path(Path::new(STATS_DIR), report.as_str());
    analysis::apply_rules(
        &settings,
        &analysis::Reports {
            names: &nvtx_rows.names,
            pushpop: &nvtx_rows.pushpop,
            pushpop_path: &relative(ReportName::PushPop),
            gpu: nvtx_rows.gpu.as_deref(),
            gpu_path: &relative(ReportName::GpuProjection),
            launches: gpu_work_rows.launches(),
        },
    )
    .map_err(|e| unfit(e, stamp))
}

/// The manifest's settings the analysis needs.
fn settings_of(run: &RunDir) -> Result<analysis::Settings, AnalyzeError> {
    let manifest = &run.manifest;
    Ok(analysis::Settings {
        capture_range: manifest.capture_range.clone(),
        iteration_pattern: analysis::full_match_regex(&manifest.iteration_pattern)
            .context("invalid `iteration_pattern`")
            .map_err(AnalyzeError::other)?,
        expected_iterations: manifest.iterations,
        warmup: manifest
            .workload
            .get("warmup")
            .and_then(serde_json::Value::as_u64),
        world_size: manifest
            .extra
            .get("world_size")
            .and_then(serde_json::Value::as_u64),
    })
}

/// Reports whose rows do not fit together.
fn unfit(e: analysis::DataError, stamp: &StatsStamp) -> AnalyzeError {
    AnalyzeError::new(
        FailureKind::ReportColumns,
        anyhow!(e).context(format!(
            "reports written by nsys {} do not fit together",
            shown(&stamp.nsys_version)
        )),
    )
    .with_version(&stamp.nsys_version)
}

fn provenance(run: &RunDir, stamp: &StatsStamp, options: &AnalyzeOptions) -> Provenance {
    Provenance {
        run_dir: run.dir.to_string_lossy().into_owned(),
        manifest_path: rundir::MANIFEST_FILE.to_owned(),
        manifest_sha256: run.manifest_sha256.clone(),
        trace_path: run.trace_name.clone(),
        trace_sha256: run.trace_sha256.clone(),
        traces: Vec::new(),
        reports: ReportName::ALL
            .iter()
            .map(|r| {
                let csv = nsys::csv_path(Path::new(STATS_DIR), r.as_str());
                (r.as_str().to_owned(), csv.to_string_lossy().into_owned())
            })
            .collect(),
        report_status: ReportName::ALL
            .into_iter()
            .map(|r| (r.as_str().to_owned(), stamp.status(r)))
            .collect(),
        nsys_version: stamp.nsys_version.clone(),
        legacy_reports: stamp.legacy_reports,
        stats_reused: options.reuse_stats,
        tool_version: TOOL_VERSION.to_owned(),
        ci_run: options.ci_run.clone(),
        runner: options.runner.clone(),
    }
}

fn run_settings(run: &RunDir) -> Run {
    let manifest = &run.manifest;
    Run {
        profile_name: manifest.profile_name.clone(),
        run_id: manifest.run_id.clone(),
        target: manifest.target.clone(),
        device: manifest.device.clone(),
        git_commit: manifest.git_commit.clone(),
        command_line: manifest.command_line.clone(),
        capture_range: manifest.capture_range.clone(),
        iteration_pattern: manifest.iteration_pattern.clone(),
        record_count: manifest.record_count,
        record_ids_sha256: manifest.record_ids_sha256.clone(),
        workload: manifest.workload.clone(),
        cuda: manifest.cuda.clone(),
        data_source: manifest.data_source.clone(),
        extra: manifest.extra.clone(),
    }
}

/// What steps 2-4 of [`analyze`] give: the stamp, why there is no GPU projection, the GPU-work
/// rows, the findings.
type Analysed = (
    StatsStamp,
    Option<String>,
    gpu_work::GpuWorkRows,
    analysis::Findings,
    Vec<analysis::clocks::TraceClocks>,
);

/// The NVTX reports (required) beside the GPU-work reports (each optional) of one trace; the
/// reports read already as their processes ended are not read again (`early`).
fn read_trace(
    stats_dir: &Path,
    stamp: &StatsStamp,
    trace_name: &str,
    early: early::EarlyRows,
) -> Result<(NvtxRows, gpu_work::GpuWorkRows), AnalyzeError> {
    let early::EarlyRows {
        pushpop,
        gpu,
        gpu_work: gpu_read,
    } = early;
    let (nvtx_rows, gpu_work_rows) = std::thread::scope(|scope| {
        let gpu_work_rows =
            gpu_read.ok_or_else(|| scope.spawn(|| gpu_work::read(stats_dir, stamp)));
        let nvtx_rows = read_reports(stats_dir, stamp, trace_name, (pushpop, gpu));
        let gpu_work_rows = gpu_work_rows
            .unwrap_or_else(|handle| handle.join().expect("the GPU-work readers do not panic"));
        (nvtx_rows, gpu_work_rows)
    });
    Ok((nvtx_rows?, gpu_work_rows))
}

/// nsys stats (or the CSVs an earlier run left), the CSVs and the analysis of the one trace.
fn analyze_trace(
    options: &AnalyzeOptions,
    run: &RunDir,
    stats_dir: &Path,
    progress: &mut Progress,
) -> Result<Analysed, AnalyzeError> {
    // Each report read as soon as its process ends (the GPU-work reports once all of them
    // are made), while nsys still makes the others.
    let (stamp, early) = std::thread::scope(|scope| {
        let mut readers = early::EarlyReaders::default();
        let stamp = stats(options, run, stats_dir, None, progress, &mut |so_far| {
            readers.ended(scope, stats_dir, so_far);
        });
        (stamp, readers.join())
    });
    let stamp = stamp?;
    AnalyzeError::check_interrupt()?;
    let (nvtx_rows, gpu_work_rows) = read_trace(stats_dir, &stamp, &run.trace_name, early)?;
    let findings = analyze_rows(run, &nvtx_rows, &gpu_work_rows, &stamp)?;
    let clocks = vec![trace_clocks((None, None), &stamp, &findings.iterations)];
    Ok((
        stamp,
        nvtx_rows.gpu_unavailable,
        gpu_work_rows,
        findings,
        clocks,
    ))
}

/// A trace's GPU clocks over `iterations` (its own process's), for the rank (and its device)
/// whose trace it is, if any.
fn trace_clocks(
    (rank, device): (Option<u64>, Option<u64>),
    stamp: &StatsStamp,
    iterations: &[nsys_gate_core::artifact::Iteration],
) -> analysis::clocks::TraceClocks {
    analysis::clocks::TraceClocks {
        rank,
        device,
        gpus: stamp
            .environment
            .as_ref()
            .map(|e| e.gpus.clone())
            .unwrap_or_default(),
        clocks: analysis::clocks::over_iterations(&stamp.gpu_clocks, iterations),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nsys_errors_keep_their_kind_version_words_and_command() {
        let e = AnalyzeError::from(NsysError::IncompatibleTrace {
            trace_version: "2024.2.3".into(),
            nsys_version: "2023.4.4.54-234433681190v0".into(),
            words: "Report was created in Nsight Systems version (2024.2.3), newer than your current version (2023.4.4).".into(),
            command: "nsys stats …".into(),
        });
        let f = e.to_failure("/r".into());
        assert_eq!(f.kind, FailureKind::IncompatibleTrace);
        assert_eq!(
            f.nsys_version.as_deref(),
            Some("2023.4.4.54-234433681190v0")
        );
        assert_eq!(f.command.as_deref(), Some("nsys stats …"));
        assert!(f
            .nsys_words
            .as_deref()
            .is_some_and(|w| w.contains("newer than your current version")));
        assert!(f.error.contains("newer than your current version"));

        let e = AnalyzeError::from(NsysError::NotFound {
            searched: vec!["PATH".into()],
        });
        let f = e.to_failure("/r".into());
        assert_eq!(f.kind, FailureKind::MissingExecutable);
        assert_eq!(f.nsys_version, None);
        assert!(f.error.starts_with("no nsys executable found"));
    }

    #[test]
    fn a_skipped_report_that_names_nvtx_is_no_nvtx_data() {
        let failed = |words: &str| NsysError::Failed {
            version: "2024.2".into(),
            status: "exited with status 1".into(),
            report: "nvtx_pushpop_trace",
            command: "nsys stats".into(),
            words: words.into(),
        };
        assert_eq!(
            failed("does not contain NV Tools Extension (NVTX) data").kind(),
            FailureKind::NoNvtxData
        );
        assert_eq!(failed("disk full").kind(), FailureKind::NsysFailed);
    }

    #[test]
    fn run_directory_errors() {
        let e = AnalyzeError::from(RunDirError::Missing("/nowhere".into(), Default::default()));
        assert_eq!(e.kind, FailureKind::RunDirectory);
        let e = AnalyzeError::from(RunDirError::NoTraceName { value: "x/".into() });
        assert_eq!(e.kind, FailureKind::Manifest);
        assert_eq!(
            AnalyzeError::other(anyhow!("something else")).kind,
            FailureKind::Other
        );
    }
}
