//! nsys-gate: from a profiling run directory to `analysis.json`, a report and a CI gate.
//!
//! The pipeline, one module per stage, each taking and returning plain data:
//!
//! 1. [`rundir`] + [`manifest`]: read `manifest.yaml`, check the trace belongs to the run;
//! 2. [`nsys`]: find nsys, run the one `nsys stats` call, classify what it did;
//! 3. [`reports`]: read its two CSV reports into compact rows;
//! 4. [`analysis`] (+ [`stats`]): iterations, statistics, range tables, warnings;
//! 5. [`gate`]: which warnings fail the job, and the exit status;
//! 6. [`artifact`]: `analysis.json`, written atomically.

pub mod actions;
pub mod analysis;
pub mod artifact;
pub mod cli;
pub mod commands;
pub mod gate;
pub mod github;
pub mod manifest;
pub mod nsys;
pub mod progress;
pub mod render;
pub mod reports;
pub mod rundir;
pub mod stats;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{anyhow, Context};

use crate::artifact::{Analysis, Provenance, ReportStatus, Run, Warning, WarningCode};
use crate::cli::{AnalysisArgs, AnalyzeArgs, Cli, Command};
use crate::gate::GateConfig;
use crate::nsys::{StatsStamp, GPU_PROJ, PUSHPOP};
use crate::progress::Progress;
use crate::reports::Interner;

pub const TOOL_VERSION: &str = env!("CARGO_PKG_VERSION");
pub const STATS_DIR: &str = "stats";
pub const ANALYSIS_FILE: &str = "analysis.json";

/// Runs one command line and returns the contract's exit status.
pub fn run(cli: Cli) -> ExitCode {
    let result = match cli.command {
        Command::Analyze(args) => analyze_command(&args),
        Command::Report(args) => commands::report(&args),
        Command::Run(args) => commands::run(&args),
        Command::Post(args) => commands::post(&args),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            report_error(&err);
            ExitCode::from(gate::exit::ERROR)
        }
    }
}

fn report_error(err: &anyhow::Error) {
    let mut text = format!("nsys-gate: error: {err}");
    for cause in err.chain().skip(1) {
        text.push_str(&format!("\n  caused by: {cause}"));
    }
    eprintln!("{text}");
}

/// What `analyze` is asked to do, free of clap types.
#[derive(Debug, Clone)]
pub struct AnalyzeOptions {
    pub run_dir: PathBuf,
    pub nsys: Option<PathBuf>,
    pub nsys_timeout: Duration,
    pub output: Option<PathBuf>,
    pub reuse_stats: bool,
    pub gate: GateConfig,
}

impl AnalyzeOptions {
    /// Options for one run directory; `gate` comes from [`GateConfig::new`] on the same
    /// arguments (checked once, before any run directory is analysed).
    pub fn new(
        run_dir: &Path,
        output: Option<PathBuf>,
        args: &AnalysisArgs,
        gate: GateConfig,
    ) -> Self {
        AnalyzeOptions {
            run_dir: run_dir.to_owned(),
            nsys: args.nsys.clone(),
            nsys_timeout: Duration::from_secs(args.nsys_timeout),
            output,
            reuse_stats: args.reuse_stats,
            gate,
        }
    }
}

fn analyze_command(args: &AnalyzeArgs) -> anyhow::Result<ExitCode> {
    let gate = GateConfig::new(&args.analysis.gate_on, &args.analysis.no_gate_on);
    let options = AnalyzeOptions::new(&args.run_dir, args.output.clone(), &args.analysis, gate);
    let mut progress = Progress::stderr();
    let (analysis, written) = analyze(&options, &mut progress)?;
    progress.summary(&analysis, &written);
    Ok(gate::exit_code(&analysis.gate))
}

/// The `analyze` pipeline. Returns the analysis and the path it was written to. On any error
/// nothing is written: an existing analysis.json stays as it was.
pub fn analyze(
    options: &AnalyzeOptions,
    progress: &mut Progress,
) -> anyhow::Result<(Analysis, PathBuf)> {
    // 1. The run directory and its manifest.
    let run = rundir::open(&options.run_dir)?;
    let output = options
        .output
        .clone()
        .unwrap_or_else(|| run.dir.join(ANALYSIS_FILE));
    let stats_dir = run.dir.join(STATS_DIR);
    prepare_outputs(&stats_dir, &output, options.reuse_stats)?;
    // One analysis of a run directory at a time: a second one is refused, not interleaved.
    let _lock = lock_run_dir(&run.dir, &stats_dir, options.reuse_stats)?;

    // 2. nsys stats (or the CSVs an earlier run left).
    let stamp = if options.reuse_stats {
        read_stamp(&stats_dir)?
    } else {
        let path = nsys::locate(options.nsys.as_deref())?;
        let nsys = nsys::identify(&path)?;
        progress.start_nsys(&nsys, &run.trace);
        let stamp = nsys::run_stats(
            &nsys,
            &run.trace,
            &stats_dir,
            options.nsys_timeout,
            &mut |elapsed| progress.tick(elapsed),
        );
        progress.finish_nsys();
        let stamp = stamp?;
        let json = serde_json::to_vec_pretty(&stamp).expect("stamp serialises");
        artifact::write_atomically(&stats_dir.join(nsys::STAMP_FILE), &json)?;
        stamp
    };

    // 3. The CSVs.
    let pushpop_path = nsys::csv_path(&stats_dir, PUSHPOP);
    let gpu_path = nsys::csv_path(&stats_dir, GPU_PROJ);
    let pushpop_status = stamp.status(PUSHPOP);
    let gpu_status = stamp.status(GPU_PROJ);
    let with_version = |e: reports::ReportError| {
        anyhow!(e).context(format!(
            "cannot read a report written by nsys {}",
            stamp.nsys_version
        ))
    };
    // The two reports are read at once, one per thread: nsys's time dominates big traces,
    // and what is left is mostly reading. The projection's names are never looked up (rows
    // join on RangeId), so it interns into a table of its own.
    let read_gpu = pushpop_status.is_written() && gpu_status.is_written();
    let (pushpop, gpu_rows, names) = std::thread::scope(|scope| {
        let gpu = read_gpu.then(|| {
            scope.spawn(|| {
                // An empty file is nsys's answer when no range launched GPU work.
                if std::fs::metadata(&gpu_path).is_ok_and(|m| m.len() == 0) {
                    Ok(Vec::new())
                } else {
                    reports::read_gpu_proj(&gpu_path, &mut Interner::new())
                }
            })
        });
        let mut names = Interner::new();
        let pushpop = if pushpop_status.is_written() {
            reports::read_pushpop(&pushpop_path, &mut names)
        } else {
            Ok(Vec::new())
        };
        let gpu = gpu.map(|handle| handle.join().expect("the projection reader does not panic"));
        (pushpop, gpu, names)
    });
    let pushpop = pushpop.map_err(with_version)?;
    let (gpu, gpu_unavailable) = match gpu_rows {
        Some(rows) => (Some(rows.map_err(with_version)?), None),
        None if !pushpop_status.is_written() => (
            None,
            Some("the push/pop report was skipped (no NVTX data), so there is no GPU projection either".to_owned()),
        ),
        None => (
            None,
            Some(format!(
                "nsys skipped the GPU projection: {}",
                gpu_status.message.as_deref().unwrap_or("no reason given")
            )),
        ),
    };

    // 4. The analysis.
    let manifest = &run.manifest;
    let settings = analysis::Settings {
        capture_range: manifest.capture_range.clone(),
        iteration_pattern: analysis::full_match_regex(&manifest.iteration_pattern)
            .context("invalid `iteration_pattern`")?,
        expected_iterations: manifest.iterations,
    };
    let findings = analysis::analyze(
        &settings,
        &analysis::Reports {
            names: &names,
            pushpop: &pushpop,
            pushpop_path: Path::new(STATS_DIR)
                .join(pushpop_path.file_name().unwrap_or_default())
                .as_path(),
            gpu: gpu.as_deref(),
            gpu_path: Path::new(STATS_DIR)
                .join(gpu_path.file_name().unwrap_or_default())
                .as_path(),
        },
    )
    .map_err(|e| {
        anyhow!(e).context(format!(
            "reports written by nsys {} do not fit together",
            stamp.nsys_version
        ))
    })?;

    // 5. Warnings from every stage, and the gate.
    let mut warnings: Vec<Warning> = run.warnings.clone();
    if stamp.legacy_reports {
        warnings.push(Warning::new(
            WarningCode::LegacyNsysReports,
            format!(
                "nsys {} has only the legacy `nvtxpptrace`/`nvtxgpuproj` reports; they were used under the new names",
                stamp.nsys_version
            ),
        ));
    }
    if let Some(reason) = gpu_unavailable {
        warnings.push(Warning::new(WarningCode::GpuProjectionUnavailable, reason));
    }
    warnings.extend(findings.warnings);
    let gate = gate::apply(&options.gate, &mut warnings);

    // 6. analysis.json.
    let analysis = Analysis {
        schema_version: artifact::SCHEMA_VERSION,
        provenance: Provenance {
            run_dir: run.dir.to_string_lossy().into_owned(),
            manifest_path: rundir::MANIFEST_FILE.to_owned(),
            manifest_sha256: run.manifest_sha256.clone(),
            trace_path: run.trace_name.clone(),
            reports: [PUSHPOP, GPU_PROJ]
                .iter()
                .map(|r| {
                    (
                        (*r).to_owned(),
                        format!("{STATS_DIR}/{}_{r}.csv", nsys::OUTPUT_PREFIX),
                    )
                })
                .collect(),
            report_status: [(PUSHPOP, pushpop_status), (GPU_PROJ, gpu_status)]
                .into_iter()
                .map(|(r, s)| (r.to_owned(), s))
                .collect(),
            nsys_version: stamp.nsys_version.clone(),
            legacy_reports: stamp.legacy_reports,
            stats_reused: options.reuse_stats,
            tool_version: TOOL_VERSION.to_owned(),
        },
        run: Run {
            profile_name: manifest.profile_name.clone(),
            run_id: manifest.run_id.clone(),
            target: manifest.target.clone(),
            device: manifest.device.clone(),
            git_commit: manifest.git_commit.clone(),
            command_line: manifest.command_line.clone(),
            capture_range: manifest.capture_range.clone(),
            iteration_pattern: manifest.iteration_pattern.clone(),
            record_count: manifest.record_count,
            workload: manifest.workload.clone(),
            cuda: manifest.cuda.clone(),
            data_source: manifest.data_source.clone(),
            extra: manifest.extra.clone(),
        },
        gate,
        warnings,
        iteration_summary: findings.iteration_summary,
        iterations: findings.iterations,
        host_ranges: findings.host_ranges,
        gpu_projected_ranges: findings.gpu_projected_ranges,
    };
    artifact::write_atomically_with(&output, |out| analysis.write_json(out))?;
    Ok((analysis, output))
}

/// Fails before nsys runs when the stats folder or the output cannot be written.
fn prepare_outputs(stats_dir: &Path, output: &Path, reuse: bool) -> anyhow::Result<()> {
    if !reuse {
        std::fs::create_dir_all(stats_dir)
            .with_context(|| format!("cannot create {}", stats_dir.display()))?;
        probe_writable(stats_dir)?;
    }
    let out_dir = match output.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_owned(),
        _ => PathBuf::from("."),
    };
    if !out_dir.is_dir() {
        return Err(anyhow!(
            "cannot write {}: folder {} does not exist",
            output.display(),
            out_dir.display()
        ));
    }
    probe_writable(&out_dir)
}

/// Name of the lock file under `stats/`, held while a run directory is analysed.
const LOCK_FILE: &str = ".nsys-gate.lock";

fn lock_run_dir(
    run_dir: &Path,
    stats_dir: &Path,
    reuse: bool,
) -> anyhow::Result<Option<std::fs::File>> {
    let path = stats_dir.join(LOCK_FILE);
    let opened = std::fs::create_dir_all(stats_dir).and_then(|()| {
        std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
    });
    let file = match opened {
        Ok(file) => file,
        // Reading CSVs another job left in a read-only run directory (output elsewhere):
        // this run writes nothing there, so there is nothing to guard.
        Err(e) if reuse && is_read_only(&e) => return Ok(None),
        Err(e) => {
            return Err(anyhow!(e).context(format!("cannot open the lock file {}", path.display())))
        }
    };
    match file.try_lock() {
        Ok(()) => Ok(Some(file)),
        Err(std::fs::TryLockError::WouldBlock) => Err(anyhow!(
            "another nsys-gate is analysing {} right now (it holds {}); wait for it to finish and run again",
            run_dir.display(),
            path.display()
        )),
        Err(std::fs::TryLockError::Error(e)) => {
            Err(anyhow!(e).context(format!("cannot lock {}", path.display())))
        }
    }
}

fn is_read_only(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::ReadOnlyFilesystem
    )
}

fn probe_writable(dir: &Path) -> anyhow::Result<()> {
    tempfile::Builder::new()
        .prefix(".nsys-gate-probe-")
        .tempfile_in(dir)
        .map(drop)
        .with_context(|| format!("cannot write in {} (hint: is it read-only?)", dir.display()))
}

fn read_stamp(stats_dir: &Path) -> anyhow::Result<StatsStamp> {
    let path = stats_dir.join(nsys::STAMP_FILE);
    let bytes = std::fs::read(&path).with_context(|| {
        format!(
            "--reuse-stats: cannot read {} (hint: run `nsys-gate analyze` without --reuse-stats once, so that nsys writes the CSVs and this stamp)",
            path.display()
        )
    })?;
    let stamp: StatsStamp = serde_json::from_slice(&bytes).with_context(|| {
        format!(
            "--reuse-stats: {} is not a stamp nsys-gate wrote",
            path.display()
        )
    })?;
    for report in [PUSHPOP, GPU_PROJ] {
        let csv = nsys::csv_path(stats_dir, report);
        if stamp.status(report).is_written() && !csv.is_file() {
            return Err(anyhow!(
                "--reuse-stats: {} is missing although {} says nsys wrote it",
                csv.display(),
                path.display()
            ));
        }
    }
    Ok(stamp)
}

impl ReportStatus {
    /// For messages: `written` or `skipped (nsys's words)`.
    pub fn describe(&self) -> String {
        match &self.message {
            Some(m) => format!("{} ({m})", self.status.as_str()),
            None => self.status.as_str().to_owned(),
        }
    }
}
