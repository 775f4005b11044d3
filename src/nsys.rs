//! Running NVIDIA's `nsys`: finding it, asking its version, and the `nsys stats` runs that
//! turn a trace into the CSV reports (the two NVTX reports, required, and the GPU-work
//! reports, optional): one call, or one export and concurrent processes over it, with what
//! happened to each report classified from the files it left and the words it printed.
//!
//! nsys's exit status does not tell success: it exits 0 after an "incompatible report" error
//! and after a skipped report, leaving 0-byte CSVs. So every outcome here is decided from the
//! CSVs' sizes and nsys's own messages (contract section 2).

use std::ffi::OsString;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{anyhow, Context};
use serde::{Deserialize, Serialize};

use crate::artifact::{ReportName, ReportStatus};
use crate::interrupt::{self, Signal};
use crate::outcome::FailureKind;
use crate::text::shown_path;

const PUSHPOP: &str = ReportName::PushPop.as_str();
const GPU_PROJ: &str = ReportName::GpuProjection.as_str();
const LEGACY_PUSHPOP: &str = ReportName::PushPop.legacy_name();
const LEGACY_GPU_PROJ: &str = ReportName::GpuProjection.legacy_name();

/// Output prefix under the stats folder: nsys writes `nsys_<report>.csv`.
pub const OUTPUT_PREFIX: &str = "nsys";
/// The stamp beside the CSVs: which nsys made them and what it said.
pub const STAMP_FILE: &str = "nsys-gate-stats.json";

/// Usual install places, searched after `--nsys`, `$NSYS` and `PATH`.
const USUAL_PLACES: &[&str] = &[
    "/usr/local/cuda/bin/nsys",
    "/opt/nvidia/nsight-systems/*/bin/nsys",
    "/usr/lib/nsight-systems/bin/nsys",
];

/// Folder (in this repository or one above the working folder) that
/// `scripts/install-nsys.sh` installs into.
const PROJECT_INSTALLS: &str = ".nsys";
const PREFERRED_PROJECT_VERSION: &str = "2024.2";

#[derive(Debug, thiserror::Error)]
pub enum NsysError {
    #[error("no nsys executable found; searched:\n{}\n(hint: install NVIDIA Nsight Systems, run `scripts/install-nsys.sh`, or pass `--nsys PATH`)", searched.iter().map(|s| format!("  - {s}")).collect::<Vec<_>>().join("\n"))]
    NotFound { searched: Vec<String> },

    #[error("{what} `{}` is not an executable file", path.display())]
    NotExecutable { what: &'static str, path: PathBuf },

    #[error("could not run `{command}`: {source}")]
    Spawn {
        command: String,
        source: std::io::Error,
    },

    #[error("`{command}` did not report a version ({status}); nsys said:\n{words}")]
    Version {
        command: String,
        status: String,
        words: String,
    },

    #[error("`{command}` is not Nsight Systems: it did not print `NVIDIA Nsight Systems version …` but:\n{words}\n(hint: pass --nsys or $NSYS the path of the nsys executable, such as /opt/nvidia/nsight-systems/2024.2.3/bin/nsys, or leave both unset to search PATH and the usual install places)")]
    NotNsys { command: String, words: String },

    #[error("nsys {version} has neither `{PUSHPOP}`/`{GPU_PROJ}` nor the legacy `{LEGACY_PUSHPOP}`/`{LEGACY_GPU_PROJ}` reports (tried `{command}`)\n(hint: use Nsight Systems 2022.4 or newer)")]
    MissingReports { version: String, command: String },

    #[error("the trace was recorded by Nsight Systems {trace_version}, newer than this nsys {nsys_version}; nsys said: {words}\ntried: `{command}`\n(hint: read the trace with Nsight Systems {trace_version} or newer: pass `--nsys PATH`)")]
    IncompatibleTrace {
        trace_version: String,
        nsys_version: String,
        words: String,
        command: String,
    },

    #[error("nsys {version} ran past the {seconds} s timeout and was killed\ntried: `{command}`\n(hint: raise `--nsys-timeout` for large traces)")]
    Timeout {
        version: String,
        seconds: u64,
        command: String,
    },

    #[error("nsys {version} {status} and wrote no `{report}` report\ntried: `{command}`\nnsys said:\n{words}")]
    Failed {
        version: String,
        status: String,
        report: &'static str,
        command: String,
        words: String,
    },

    #[error("nsys-gate received {signal}: stopped `{command}` and its process group")]
    Interrupted {
        signal: &'static str,
        command: String,
    },

    #[error("could not prepare {}: {source}", shown_path(path))]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl NsysError {
    /// What kind of failure this is, for the report. The one place where nsys's words are
    /// read to tell kinds apart (a `Failed` report that names NVTX: no NVTX data).
    pub fn kind(&self) -> FailureKind {
        match self {
            NsysError::NotFound { .. }
            | NsysError::NotExecutable { .. }
            | NsysError::Spawn { .. }
            | NsysError::Version { .. }
            | NsysError::NotNsys { .. } => FailureKind::MissingExecutable,
            NsysError::MissingReports { .. } | NsysError::IncompatibleTrace { .. } => {
                FailureKind::IncompatibleTrace
            }
            NsysError::Timeout { .. } => FailureKind::Timeout,
            NsysError::Failed { words, .. } => {
                if words.contains("NVTX") || words.contains("NV Tools Extension") {
                    FailureKind::NoNvtxData
                } else {
                    FailureKind::NsysFailed
                }
            }
            NsysError::Io { .. } => FailureKind::NsysFailed,
            NsysError::Interrupted { .. } => FailureKind::Other,
        }
    }

    /// The exact version of the nsys that failed, once it is known.
    pub fn version(&self) -> Option<&str> {
        match self {
            NsysError::MissingReports { version, .. }
            | NsysError::Timeout { version, .. }
            | NsysError::Failed { version, .. } => Some(version),
            NsysError::IncompatibleTrace { nsys_version, .. } => Some(nsys_version),
            _ => None,
        }
    }

    /// nsys's own words, when it said something.
    pub fn words(&self) -> Option<&str> {
        match self {
            NsysError::Version { words, .. }
            | NsysError::NotNsys { words, .. }
            | NsysError::IncompatibleTrace { words, .. }
            | NsysError::Failed { words, .. } => Some(words),
            _ => None,
        }
    }

    /// The command that was tried.
    pub fn command(&self) -> Option<&str> {
        match self {
            NsysError::Spawn { command, .. }
            | NsysError::Version { command, .. }
            | NsysError::NotNsys { command, .. }
            | NsysError::MissingReports { command, .. }
            | NsysError::IncompatibleTrace { command, .. }
            | NsysError::Timeout { command, .. }
            | NsysError::Interrupted { command, .. }
            | NsysError::Failed { command, .. } => Some(command),
            _ => None,
        }
    }
}

/// An nsys executable and its exact version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Nsys {
    pub path: PathBuf,
    /// As `nsys --version` prints it, e.g. `2024.2.3.38-242334140272v0`.
    pub version: String,
}

/// Which nsys the user asked for: errors name where the path came from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum NsysChoice {
    /// `--nsys PATH`.
    Flag(PathBuf),
    /// `$NSYS`.
    Env(PathBuf),
    /// Neither: search `PATH`, the usual install places and the project's installs.
    #[default]
    Search,
}

/// Finds nsys: `--nsys`, else `$NSYS`, else `PATH`, else the usual install places, else a
/// copy installed by `scripts/install-nsys.sh` in the working folder or one above it.
pub fn locate(choice: &NsysChoice) -> Result<PathBuf, NsysError> {
    match choice {
        NsysChoice::Flag(path) => return check_executable("`--nsys`", path),
        NsysChoice::Env(path) => return check_executable("`$NSYS`", path),
        NsysChoice::Search => {}
    }
    let mut searched = vec![
        "`--nsys` (not given)".to_owned(),
        "`$NSYS` (not set)".to_owned(),
    ];
    let path_var = std::env::var_os("PATH").unwrap_or_default();
    for dir in std::env::split_paths(&path_var) {
        let candidate = dir.join("nsys");
        if is_executable(&candidate) {
            return Ok(candidate);
        }
    }
    searched.push(format!("PATH ({})", path_var.to_string_lossy()));
    for place in USUAL_PLACES {
        for candidate in expand_star(place) {
            if is_executable(&candidate) {
                return Ok(candidate);
            }
        }
        searched.push((*place).to_owned());
    }
    let mut roots: Vec<PathBuf> = Vec::new();
    if let Ok(cwd) = std::env::current_dir() {
        roots.extend(cwd.ancestors().map(Path::to_path_buf));
    }
    if let Ok(exe) = std::env::current_exe() {
        roots.extend(exe.ancestors().skip(1).map(Path::to_path_buf));
    }
    for root in &roots {
        if let Some(found) = project_install(&root.join(PROJECT_INSTALLS)) {
            return Ok(found);
        }
    }
    searched.push(format!(
        "{PROJECT_INSTALLS}/*/nsys in the working folder, the nsys-gate executable's folder and the folders above them (installed by scripts/install-nsys.sh)"
    ));
    Err(NsysError::NotFound { searched })
}

fn check_executable(what: &'static str, path: &Path) -> Result<PathBuf, NsysError> {
    if is_executable(path) {
        Ok(path.to_owned())
    } else {
        Err(NsysError::NotExecutable {
            what,
            path: path.to_owned(),
        })
    }
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// `/opt/x/*/bin/nsys` -> the existing matches, newest name last-sorted first.
fn expand_star(pattern: &str) -> Vec<PathBuf> {
    let Some((head, tail)) = pattern.split_once("/*/") else {
        return vec![PathBuf::from(pattern)];
    };
    let mut found: Vec<PathBuf> = std::fs::read_dir(head)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join(tail))
        .collect();
    found.sort();
    found.reverse();
    found
}

fn project_install(dir: &Path) -> Option<PathBuf> {
    let preferred = dir.join(PREFERRED_PROJECT_VERSION).join("nsys");
    if is_executable(&preferred) {
        return Some(preferred);
    }
    expand_star(&format!("{}/*/nsys", dir.display()))
        .into_iter()
        .find(|p| is_executable(p))
}

/// Runs `nsys --version` and returns the version it prints.
pub fn identify(path: &Path) -> Result<Nsys, NsysError> {
    let args: [OsString; 1] = ["--version".into()];
    let output = run_captured(
        &Invocation::new(path, &args, Duration::from_secs(120)),
        &mut |_| {},
    )?;
    let words = output.words();
    let command = format!("{} --version", path.display());
    if !output.status.as_ref().is_some_and(ExitStatus::success) {
        return Err(NsysError::Version {
            command,
            status: output.describe_status(),
            words: output.excerpt(),
        });
    }
    match version_of(&words) {
        Some(version) => Ok(Nsys {
            path: path.to_owned(),
            version,
        }),
        None => Err(NsysError::NotNsys {
            command,
            words: output.excerpt(),
        }),
    }
}

/// The version in `nsys --version`'s words (`NVIDIA Nsight Systems version 2024.2.3.38-…`):
/// the word after `version ` on the line naming Nsight Systems, when it starts with a digit.
/// Another program's `--version` (`GNU GPL version 3 or later`) has none.
fn version_of(words: &str) -> Option<String> {
    words
        .lines()
        .filter(|l| l.contains("Nsight Systems"))
        .find_map(|l| l.split_once("version ")?.1.split_whitespace().next())
        .filter(|v| v.starts_with(|c: char| c.is_ascii_digit()))
        .map(str::to_owned)
}

/// What one `nsys stats` call produced.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatsStamp {
    pub nsys_version: String,
    pub legacy_reports: bool,
    /// `nvtx_pushpop_trace` / `nvtx_gpu_proj_trace` -> written or skipped with nsys's words.
    pub reports: std::collections::BTreeMap<String, ReportStatus>,
    /// Names (never values) of the variables in the trace's recorded environment that look like
    /// credentials, read from the export before it is removed, so that `--reuse-stats` warns
    /// as the first analysis did.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub credential_variables: Vec<String>,
}

impl StatsStamp {
    pub fn status(&self, report: ReportName) -> ReportStatus {
        self.reports
            .get(report.as_str())
            .cloned()
            .unwrap_or_else(|| ReportStatus::skipped("not recorded in the stamp"))
    }
}

/// Whether nsys `version` (`nsys --version`'s, such as `2024.2.3.38-242334140272v0`) writes
/// `:message` for a range of the default domain. Public 2025.x outputs do; 2022.4, 2023.4
/// and 2024.2 (the versions tested here) write the name as pushed, a program's own leading
/// `:` included. So 2025.1 and newer do; older versions, and a version this cannot read,
/// do not (their names are kept exactly as nsys wrote them).
pub fn adds_default_domain_prefix(version: &str) -> bool {
    let Some((year, release)) = year_release(version) else {
        return false;
    };
    match (year.parse::<u32>(), release.parse::<u32>()) {
        (Ok(year), Ok(release)) => (year, release) >= (2025, 1),
        _ => false,
    }
}

/// The nsys versions the tests run (`year.release`).
pub const TESTED_VERSIONS: [&str; 3] = ["2022.4", "2023.4", "2024.2"];

/// Whether nsys `version` (`nsys --version`'s) is one of [`TESTED_VERSIONS`].
pub fn is_tested_version(version: &str) -> bool {
    year_release(version).is_some_and(|(year, release)| {
        TESTED_VERSIONS.contains(&format!("{year}.{release}").as_str())
    })
}

/// The first two runs of digits of an nsys version, as written: `2024.2.3.38-…` -> (`2024`,
/// `2`).
fn year_release(version: &str) -> Option<(&str, &str)> {
    let mut numbers = version
        .split(|c: char| !c.is_ascii_digit())
        .filter(|n| !n.is_empty());
    Some((numbers.next()?, numbers.next()?))
}

/// CSV path of a report under the stats folder.
pub fn csv_path(stats_dir: &Path, report: &str) -> PathBuf {
    stats_dir.join(format!("{OUTPUT_PREFIX}_{report}.csv"))
}

/// Largest stamp read: it holds the nsys version and a line of nsys's words per report.
const MAX_STAMP_BYTES: u64 = 16 << 20;

/// Reads the stamp an earlier run left under `stats/`, for `--reuse-stats`, and checks that
/// the CSVs it says nsys wrote are there.
pub fn read_stamp(stats_dir: &Path) -> anyhow::Result<StatsStamp> {
    let path = stats_dir.join(STAMP_FILE);
    let bytes = crate::files::read_regular(&path, MAX_STAMP_BYTES).with_context(|| {
        format!(
            "--reuse-stats: cannot read {} (hint: run `nsys-gate analyze` without --reuse-stats once, so that nsys writes the CSVs and this stamp)",
            shown_path(&path)
        )
    })?;
    let stamp: StatsStamp = serde_json::from_slice(&bytes).with_context(|| {
        format!(
            "--reuse-stats: {} is not a stamp nsys-gate wrote",
            shown_path(&path)
        )
    })?;
    for report in ReportName::ALL {
        let csv = csv_path(stats_dir, report.as_str());
        if stamp.status(report).is_written() && !csv.is_file() {
            return Err(anyhow!(
                "--reuse-stats: {} is missing although {} says nsys wrote it",
                shown_path(&csv),
                shown_path(&path)
            ));
        }
    }
    Ok(stamp)
}

/// The SQLite export `nsys stats` makes of a `.nsys-rep` trace, under the stats folder. It holds
/// the whole trace, the profiled process's environment included: the pipeline removes it once
/// the reports are written, unless `--keep-export`.
pub const EXPORT_FILE: &str = "trace.sqlite";

/// Whether the trace is a SQLite export, used as is (contract section 1).
pub fn is_sqlite_trace(trace: &Path) -> bool {
    trace.extension().is_some_and(|e| e == "sqlite")
}

/// How `nsys stats` is run: how many processes at once, at most.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatsPlan {
    /// 1: one `nsys stats` call for every report (with the export, for a `.nsys-rep`).
    /// More: the SQLite export is made first (`nsys export`), then the reports run as up to
    /// this many `nsys stats` processes over it at once, each classified on its own.
    pub processes: usize,
}

impl StatsPlan {
    /// At most this many processes: five reports in three groups (see [`groups`]).
    pub const MAX_PROCESSES: usize = 3;

    /// Three processes with two cores or more, else one call. On two cores three and two
    /// measure the same in interleaved runs, and three did better on a loaded machine
    /// (`scripts/bench-gpu-work.sh`, docs/performance.md).
    pub fn default_for_machine() -> Self {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        StatsPlan {
            processes: if cores >= 2 { Self::MAX_PROCESSES } else { 1 },
        }
    }
}

/// One report as this nsys is asked for it: the contract's name and the name this nsys gives
/// it (2022.x's legacy names), whose CSV is renamed to the contract's.
#[derive(Debug, Clone, Copy)]
struct Asked {
    report: ReportName,
    produced: &'static str,
}

/// Runs `nsys stats` for the two NVTX reports and the GPU-work reports and classifies what it
/// did with each. `progress` is called about once a second with the time spent so far.
///
/// With `plan.processes` 1, one call makes the export and every report. Otherwise the
/// reports run as concurrent `nsys stats` processes, each classified on its own: a failure of
/// a required report is an error, of a GPU-work report a `skipped` status with nsys's words
/// (never an error). A `.sqlite` trace is read by all at once; a `.nsys-rep` is exported once,
/// by the first process, and the others start over its export as soon as that process creates
/// its first report's CSV (the export is then written and closed).
///
/// nsys runs in the run directory with paths relative to it (`stats/nsys`, `stats/trace.sqlite`,
/// `trace.nsys-rep`), so its words never hold the run directory's own path, which may contain
/// anything, newlines included: a `SKIPPED: <path> does not contain …` line stays one line, and
/// messages say `stats/trace.sqlite` wherever the run directory sits. Messages show the
/// equivalent command with absolute paths.
pub fn run_stats(
    nsys: &Nsys,
    trace: &Path,
    stats_dir: &Path,
    timeout: Duration,
    plan: StatsPlan,
    progress: &mut dyn FnMut(Duration),
) -> Result<StatsStamp, NsysError> {
    let (legacy, asked, missing) = report_names(nsys)?;
    // Nothing stale may be mistaken for this run's output.
    for report in ReportName::ALL {
        for name in [report.as_str(), report.legacy_name()] {
            remove_if_present(&csv_path(stats_dir, name))?;
        }
    }
    remove_if_present(&stats_dir.join(STAMP_FILE))?;
    if !is_sqlite_trace(trace) {
        // A fresh export, never written through a symlink left in the old one's place.
        remove_if_present(&stats_dir.join(EXPORT_FILE))?;
    }
    let run_dir = stats_dir.parent().unwrap_or(stats_dir);
    let started = Instant::now();
    let groups = groups(&asked, plan.processes);
    // A `.nsys-rep` is exported by the first process; the others read its export.
    let export = stats_dir.join(EXPORT_FILE);
    let calls: Vec<StatsCall> = groups
        .into_iter()
        .enumerate()
        .map(|(k, reports)| {
            let input = if k == 0 || is_sqlite_trace(trace) {
                trace
            } else {
                &export
            };
            StatsCall::new(nsys, input, stats_dir, run_dir, reports, timeout)
        })
        .collect();
    let first_csv = calls
        .first()
        .and_then(|c| c.reports.first())
        .map(|a| csv_path(stats_dir, a.produced));
    let first_exports = first_csv.as_deref().filter(|_| !is_sqlite_trace(trace));
    let outputs = run_concurrently(&calls, first_exports, started, progress);

    let mut statuses = std::collections::BTreeMap::new();
    for (report, why) in missing {
        statuses.insert(report.as_str().to_owned(), ReportStatus::skipped(why));
    }
    for (call, output) in calls.iter().zip(outputs) {
        for (report, status) in call.classify(nsys, stats_dir, output?)? {
            statuses.insert(report.as_str().to_owned(), status);
        }
        for asked in &call.reports {
            if asked.produced != asked.report.as_str() {
                rename_legacy(stats_dir, asked.report)?;
            }
        }
    }
    Ok(StatsStamp {
        nsys_version: nsys.version.clone(),
        legacy_reports: legacy,
        reports: statuses,
        credential_variables: Vec::new(),
    })
}

/// The reports split into at most `processes` groups of about equal cost, measured on a trace
/// of 140,000 NVTX ranges and 163,000 GPU operations (`scripts/bench-gpu-work.sh`): the
/// push/pop report 4.5 s, the projection 3.8 s, `cuda_gpu_trace` 2.4-2.8 s, `cuda_api_trace`
/// 1.4-2.0 s, `cuda_gpu_kern_sum` 0.14 s, each alone. Two groups: the push/pop report with the API trace, the
/// projection with the others; three: the push/pop report, the projection with the kernel
/// summary, the two GPU traces. On a trace without CUDA data the GPU-work reports end at once,
/// and the two NVTX reports are still apart.
fn groups(asked: &[Asked], processes: usize) -> Vec<Vec<Asked>> {
    use ReportName::{ApiTrace, GpuProjection, GpuTrace, KernelSummary, PushPop};
    let of = |reports: &[ReportName]| -> Vec<Asked> {
        asked
            .iter()
            .copied()
            .filter(|a| reports.contains(&a.report))
            .collect()
    };
    let groups = match processes {
        0 | 1 => vec![asked.to_vec()],
        2 => vec![
            of(&[PushPop, ApiTrace]),
            of(&[GpuProjection, KernelSummary, GpuTrace]),
        ],
        _ => vec![
            of(&[PushPop]),
            of(&[GpuProjection, KernelSummary]),
            of(&[GpuTrace, ApiTrace]),
        ],
    };
    groups.into_iter().filter(|g| !g.is_empty()).collect()
}

/// The name this nsys gives each report (`nsys stats --help-reports`): the new names, or
/// nsys 2022.x's legacy ones (`legacy` true, for the NVTX reports). A GPU-work report this
/// nsys lacks is not asked for: it is returned with why.
#[allow(clippy::type_complexity)]
fn report_names(nsys: &Nsys) -> Result<(bool, Vec<Asked>, Vec<(ReportName, String)>), NsysError> {
    let args: Vec<OsString> = vec!["stats".into(), "--help-reports".into()];
    let output = run_captured(
        &Invocation::new(&nsys.path, &args, Duration::from_secs(120)),
        &mut |_| {},
    )?;
    let words = output.words();
    let has = |name: &str| {
        words.lines().any(|l| {
            l.trim_start()
                .split(|c: char| c.is_whitespace() || c == '[')
                .next()
                == Some(name)
        })
    };
    let legacy = if ReportName::REQUIRED.iter().all(|r| has(r.as_str())) {
        false
    } else if ReportName::REQUIRED.iter().all(|r| has(r.legacy_name())) {
        true
    } else {
        return Err(NsysError::MissingReports {
            version: nsys.version.clone(),
            command: describe_command(&nsys.path, &args),
        });
    };
    let mut asked = Vec::new();
    let mut missing = Vec::new();
    for report in ReportName::ALL {
        let produced = if report.is_required() && legacy {
            Some(report.legacy_name())
        } else if has(report.as_str()) {
            Some(report.as_str())
        } else if has(report.legacy_name()) {
            Some(report.legacy_name())
        } else {
            None
        };
        match produced {
            Some(produced) => asked.push(Asked { report, produced }),
            None => missing.push((
                report,
                format!(
                    "nsys {} has no `{}` report (nor `{}`): `{}` does not list it",
                    nsys.version,
                    report.as_str(),
                    report.legacy_name(),
                    describe_command(&nsys.path, &args)
                ),
            )),
        }
    }
    Ok((legacy, asked, missing))
}

/// Renames a legacy report's CSV to the contract's name (same output names whichever nsys
/// made them).
fn rename_legacy(stats_dir: &Path, report: ReportName) -> Result<(), NsysError> {
    let produced = csv_path(stats_dir, report.legacy_name());
    let wanted = csv_path(stats_dir, report.as_str());
    if produced.exists() {
        std::fs::rename(&produced, &wanted).map_err(|source| NsysError::Io {
            path: wanted.clone(),
            source,
        })?;
    }
    Ok(())
}

fn incompatible_error(nsys: &Nsys, words: &str, command: &str) -> Option<NsysError> {
    let (trace_version, nsys_version) = incompatible_trace(words)?;
    Some(NsysError::IncompatibleTrace {
        trace_version,
        nsys_version: if nsys_version.is_empty() {
            nsys.version.clone()
        } else {
            nsys_version
        },
        words: first_line_with(words, &["newer than", "Version number is invalid"]),
        command: command.to_owned(),
    })
}

/// One `nsys stats` process: the reports it makes, its arguments and its command as
/// messages show it.
struct StatsCall {
    reports: Vec<Asked>,
    program: PathBuf,
    args: Vec<OsString>,
    run_dir: PathBuf,
    command: String,
    timeout: Duration,
}

impl StatsCall {
    fn new(
        nsys: &Nsys,
        input: &Path,
        stats_dir: &Path,
        run_dir: &Path,
        reports: Vec<Asked>,
        timeout: Duration,
    ) -> Self {
        let names: Vec<&str> = reports.iter().map(|a| a.produced).collect();
        // `cuda_gpu_trace` in bytes (its default is MB with three decimals); nsys pairs
        // formats with reports in order.
        let formats: Vec<&str> = reports
            .iter()
            .map(|a| {
                if a.report == ReportName::GpuTrace {
                    "csv:mem=B"
                } else {
                    "csv"
                }
            })
            .collect();
        let formats = if formats.iter().all(|f| *f == "csv") {
            "csv".to_owned()
        } else {
            formats.join(",")
        };
        let names = names.join(",");
        let args = stats_args(&names, &formats, input, stats_dir, |p| {
            relative_to(p, run_dir)
        });
        let shown = stats_args(&names, &formats, input, stats_dir, Path::to_path_buf);
        StatsCall {
            reports,
            // nsys runs in another folder: `--nsys ./bin/nsys` must still name it.
            program: std::path::absolute(&nsys.path).unwrap_or_else(|_| nsys.path.clone()),
            command: describe_command(&nsys.path, &shown),
            args,
            run_dir: run_dir.to_owned(),
            timeout,
        }
    }

    /// Runs it with `timeout` left.
    fn run(
        &self,
        timeout: Duration,
        progress: &mut dyn FnMut(Duration),
    ) -> Result<Captured, NsysError> {
        let invocation = Invocation {
            dir: Some(&self.run_dir),
            command: self.command.clone(),
            ..Invocation::new(&self.program, &self.args, timeout)
        };
        run_captured(&invocation, progress)
    }

    /// What this process did with each of its reports. A failure concerning a required
    /// report (a timeout, a trace from a newer nsys, no CSV and no skip) is an error; for a
    /// GPU-work report it is a `skipped` status with what happened.
    fn classify(
        &self,
        nsys: &Nsys,
        stats_dir: &Path,
        output: Captured,
    ) -> Result<Vec<(ReportName, ReportStatus)>, NsysError> {
        let required = self.reports.iter().any(|a| a.report.is_required());
        let words = output.words();
        if output.timed_out {
            if required {
                return Err(NsysError::Timeout {
                    version: nsys.version.clone(),
                    seconds: self.timeout.as_secs(),
                    command: self.command.clone(),
                });
            }
            let why = format!(
                "nsys {} ran past the timeout ({} s left for it) and was killed",
                nsys.version,
                self.timeout.as_secs()
            );
            return Ok(self
                .reports
                .iter()
                .map(|a| (a.report, ReportStatus::skipped(why.clone())))
                .collect());
        }
        if let Some(e) = incompatible_error(nsys, &words, &self.command) {
            if required {
                return Err(e);
            }
        }
        let mut out = Vec::new();
        for a in &self.reports {
            let produced_path = csv_path(stats_dir, a.produced);
            match classify(&produced_path, &words, a.report, a.produced) {
                Some(status) => out.push((a.report, status)),
                None if a.report.is_required() => {
                    return Err(NsysError::Failed {
                        version: nsys.version.clone(),
                        status: output.describe_status(),
                        report: a.report.as_str(),
                        command: self.command.clone(),
                        words: output.excerpt(),
                    })
                }
                None => out.push((
                    a.report,
                    ReportStatus::skipped(format!(
                        "nsys {} and wrote no `{}` report; nsys said: {}",
                        output.describe_status(),
                        a.produced,
                        report_words(&words, a.produced).unwrap_or_else(|| output.excerpt())
                    )),
                )),
            }
        }
        Ok(out)
    }
}

/// Runs the calls at once, one thread each, and returns their outputs in order; `progress`
/// is called from this thread about once a second. With `first_exports` (the CSV of the first
/// call's first report), the first call makes the export the others read: they start once
/// that CSV appears, and are not run at all when the first call ends before (its own failure
/// then says why).
///
/// nsys creates a report's CSV when it starts the report, right after closing the export it
/// wrote (strace of 2022.4, 2023.4 and 2024.2); it says `Processing [...]` only when the
/// report is done, so its words would hold the others back for a whole report.
fn run_concurrently(
    calls: &[StatsCall],
    first_exports: Option<&Path>,
    started: Instant,
    progress: &mut dyn FnMut(Duration),
) -> Vec<Result<Captured, NsysError>> {
    let timeout = |call: &StatsCall| call.timeout.saturating_sub(started.elapsed());
    if let [call] = calls {
        return vec![call.run(timeout(call), &mut |_| progress(started.elapsed()))];
    }
    let export_written = || first_exports.is_none_or(Path::exists);
    std::thread::scope(|scope| {
        let (first, rest) = calls.split_first().expect("more than one call");
        let first = scope.spawn(move || first.run(timeout(first), &mut |_| {}));
        let mut others: Vec<std::thread::ScopedJoinHandle<_>> = Vec::new();
        let mut waiting = true;
        let mut last_tick = Instant::now();
        loop {
            // Checked before `export_written`: a first call that ended with its CSV written
            // still lets the others run.
            let first_ended = first.is_finished();
            if waiting && export_written() {
                waiting = false;
                others = rest
                    .iter()
                    .map(|call| scope.spawn(move || call.run(timeout(call), &mut |_| {})))
                    .collect();
            }
            if first_ended
                && (waiting
                    || others
                        .iter()
                        .all(std::thread::ScopedJoinHandle::is_finished))
            {
                break;
            }
            if last_tick.elapsed() >= Duration::from_secs(1) {
                last_tick = Instant::now();
                progress(started.elapsed());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let mut outputs = vec![first.join().expect("an nsys runner thread does not panic")];
        if waiting {
            outputs.extend(rest.iter().map(|_| {
                Ok(Captured {
                    status: None,
                    timed_out: false,
                    text: "not run: the first nsys stats process, which makes the export, ended before it started a report".to_owned(),
                })
            }));
        } else {
            outputs.extend(
                others
                    .into_iter()
                    .map(|h| h.join().expect("an nsys runner thread does not panic")),
            );
        }
        outputs
    })
}

/// The `nsys stats` arguments, each path passed through `path` (relative or absolute).
fn stats_args(
    reports: &str,
    formats: &str,
    trace: &Path,
    stats_dir: &Path,
    path: impl Fn(&Path) -> PathBuf,
) -> Vec<OsString> {
    let mut args: Vec<OsString> = vec![
        "stats".into(),
        "--report".into(),
        reports.into(),
        "--format".into(),
        formats.into(),
        "--timeunit".into(),
        "nsec".into(),
        "--output".into(),
        path(&stats_dir.join(OUTPUT_PREFIX)).into(),
    ];
    if !is_sqlite_trace(trace) {
        // nsys refuses to "force export" a .sqlite input, and needs no export for one.
        args.extend([
            "--sqlite".into(),
            path(&stats_dir.join(EXPORT_FILE)).into(),
            "--force-export=true".into(),
        ]);
    }
    args.extend(["--force-overwrite=true".into(), path(trace).into()]);
    args
}

/// `path` relative to `base` when it is inside it (`./` before a name starting with `-`, which
/// nsys would read as an option); else `path` itself.
fn relative_to(path: &Path, base: &Path) -> PathBuf {
    match path.strip_prefix(base) {
        Ok(rel) if rel.as_os_str().as_encoded_bytes().starts_with(b"-") => Path::new(".").join(rel),
        Ok(rel) if !rel.as_os_str().is_empty() => rel.to_owned(),
        _ => path.to_owned(),
    }
}

/// What nsys did with one report, from the CSV it left and its words; `None`: it failed.
fn classify(
    produced_path: &Path,
    words: &str,
    report: ReportName,
    produced: &str,
) -> Option<ReportStatus> {
    let size = std::fs::metadata(produced_path).map(|m| m.len()).ok();
    match (size, skipped_message(words, produced)) {
        (Some(n), _) if n > 0 => Some(ReportStatus::written()),
        (_, Some(message)) => Some(ReportStatus::skipped(message)),
        // nsys 2024.2 writes an empty projection, saying neither PROCESSED nor SKIPPED,
        // when the trace has CUDA data but no range launched anything: a result, not a
        // skip. The push/pop report has no such case (no ranges means no NVTX data).
        (Some(0), None)
            if report == ReportName::GpuProjection && mentions_report(words, produced) =>
        {
            Some(ReportStatus::written())
        }
        _ => None,
    }
}

/// nsys's words about one report: an `ERROR` line naming its script (nsys 2022.4 prints
/// `ERROR: Report 'gputrace.py' encountered an internal error: …` after every report), else
/// what it said past the `...` of that report's `Processing [` line.
fn report_words(words: &str, report: &str) -> Option<String> {
    let script = format!("'{report}.py'");
    if let Some(line) = words
        .lines()
        .find(|l| l.contains("ERROR") && l.contains(&script))
    {
        return Some(line.trim().to_owned());
    }
    report_blocks(words)
        .find(|block| is_report_block(block, report))
        .and_then(|block| block.split_once("... ").map(|(_, rest)| rest))
        .map(|rest| excerpt(rest.trim()))
        .filter(|w| w != "(nothing)")
}

fn remove_if_present(path: &Path) -> Result<(), NsysError> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(NsysError::Io {
            path: path.to_owned(),
            source: e,
        }),
        _ => Ok(()),
    }
}

/// `(trace version, nsys version)` when nsys said the trace is from a newer nsys.
fn incompatible_trace(words: &str) -> Option<(String, String)> {
    let re = regex::Regex::new(
        r"Report was created in Nsight Systems version \(([^)]*)\), newer than your current version \(([^)]*)\)",
    )
    .expect("valid regex");
    if let Some(c) = re.captures(words) {
        return Some((c[1].to_owned(), c[2].to_owned()));
    }
    // nsys 2022.4 cannot parse the newer version string and says so instead.
    let old = regex::Regex::new(r"Version number is invalid: (\S+)").expect("valid regex");
    old.captures(words)
        .map(|c| (c[1].replace('@', "."), String::new()))
}

/// nsys's words about each report it processed: from one `Processing [` to the next. nsys's
/// lines are not split by line here: a path with a newline in it (the trace's own name, the
/// only path nsys is given that may hold one) does not cut a report's words in two.
fn report_blocks(words: &str) -> impl Iterator<Item = &str> {
    words.split("Processing [").skip(1)
}

/// Whether a block of nsys's words is about the given report: it names the report's script,
/// the report, or its output file.
fn is_report_block(block: &str, report: &str) -> bool {
    // The part up to `...`, where nsys says what it did: names in its words do not count.
    let head = block.split("... ").next().unwrap_or(block);
    head.contains(&format!("{report}.py]"))
        || head.contains(&format!("[{report}]"))
        || head.contains(&format!("_{report}.csv]"))
}

/// Whether nsys said it processed (or tried) the given report.
fn mentions_report(words: &str, report: &str) -> bool {
    report_blocks(words).any(|block| is_report_block(block, report))
}

/// nsys's words after `SKIPPED:` for the given report, if it skipped it: up to the blank line
/// nsys leaves after each report.
fn skipped_message(words: &str, report: &str) -> Option<String> {
    // "Processing [db] with [/…/reports/nvtx_gpu_proj_trace.py] to [out.csv]... SKIPPED: …"
    report_blocks(words)
        .filter(|block| is_report_block(block, report))
        .find_map(|block| block.split_once("SKIPPED: "))
        .map(|(_, rest)| {
            let end = rest.find("\n\n").unwrap_or(rest.len());
            rest[..end].trim().to_owned()
        })
}

fn first_line_with(words: &str, needles: &[&str]) -> String {
    words
        .lines()
        .find(|l| needles.iter().any(|n| l.contains(n)))
        .unwrap_or(words)
        .trim()
        .to_owned()
}

fn describe_command(program: &Path, args: &[OsString]) -> String {
    std::iter::once(program.as_os_str())
        .chain(args.iter().map(OsString::as_os_str))
        .map(|a| {
            let s = a.to_string_lossy();
            if s.contains(' ') {
                format!("'{s}'")
            } else {
                s.into_owned()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The first this-many bytes of nsys's output are kept whole.
const OUTPUT_CAP: usize = 64 * 1024;

struct Captured {
    status: Option<ExitStatus>,
    timed_out: bool,
    text: String,
}

impl Captured {
    /// Everything kept of nsys's output, for classifying it.
    fn words(&self) -> String {
        self.text.clone()
    }

    /// nsys's words for a message: the lines that say what went wrong and the last lines,
    /// at most [`MESSAGE_LINES`] lines of at most [`MESSAGE_LINE_CHARS`] characters.
    fn excerpt(&self) -> String {
        excerpt(&self.text)
    }

    fn describe_status(&self) -> String {
        use std::os::unix::process::ExitStatusExt;
        match self.status {
            None => "ended with no exit status".to_owned(),
            Some(s) => match (s.code(), s.signal()) {
                (Some(0), _) => "exited with status 0".to_owned(),
                (Some(c), _) => format!("failed with exit status {c}"),
                (None, Some(sig)) => format!("was killed by signal {sig}{}", signal_name(sig)),
                _ => s.to_string(),
            },
        }
    }
}

/// At most this many lines of nsys's output go into a message.
const MESSAGE_LINES: usize = 30;
const MESSAGE_LINE_CHARS: usize = 300;

fn excerpt(text: &str) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.is_empty() {
        return "(nothing)".to_owned();
    }
    let important = |l: &str| {
        ["ERROR", "rror", "SKIPPED", "newer than"]
            .iter()
            .any(|n| l.contains(n))
    };
    let tail_from = lines.len().saturating_sub(MESSAGE_LINES / 2);
    let mut keep: Vec<usize> = (0..lines.len())
        .filter(|&i| important(lines[i]))
        .take(MESSAGE_LINES / 2)
        .collect();
    keep.extend(tail_from..lines.len());
    keep.sort_unstable();
    keep.dedup();
    let mut out = Vec::new();
    let mut previous: Option<usize> = None;
    for i in keep {
        let gap = match previous {
            Some(p) => i - p - 1,
            None => i,
        };
        if gap > 0 {
            out.push(format!(
                "[… {gap} more {} …]",
                if gap == 1 { "line" } else { "lines" }
            ));
        }
        let line = lines[i];
        if line.chars().count() > MESSAGE_LINE_CHARS {
            let cut: String = line.chars().take(MESSAGE_LINE_CHARS).collect();
            out.push(format!("{cut}…"));
        } else {
            out.push(line.to_owned());
        }
        previous = Some(i);
    }
    out.join("\n")
}

fn signal_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGKILL => " (SIGKILL)",
        libc::SIGSEGV => " (SIGSEGV)",
        libc::SIGABRT => " (SIGABRT)",
        libc::SIGTERM => " (SIGTERM)",
        libc::SIGBUS => " (SIGBUS)",
        libc::SIGINT => " (SIGINT)",
        _ => "",
    }
}

/// What is kept of nsys's output: the first [`OUTPUT_CAP`] bytes, the lines past them that
/// classify the outcome, and the last [`TAIL_LINES`] lines. Memory stays bounded whatever
/// nsys prints.
#[derive(Default)]
struct Sink {
    head: String,
    important: Vec<String>,
    tail: std::collections::VecDeque<String>,
    /// Lines past the head that are in neither `important` nor `tail`.
    dropped: usize,
}

const TAIL_LINES: usize = 40;
const IMPORTANT_LINES: usize = 200;
/// Longest line kept; nsys's own lines are far shorter.
const LINE_CAP: usize = 4096;

impl Sink {
    fn push(&mut self, text: &str) {
        let text = cut_at(text, LINE_CAP);
        if self.head.len() + text.len() < OUTPUT_CAP && self.tail.is_empty() {
            self.head.push_str(text);
            self.head.push('\n');
            return;
        }
        let important = [
            "SKIPPED",
            "ERROR",
            "rror",
            "Version",
            "newer than",
            "Processing [",
        ]
        .iter()
        .any(|n| text.contains(n));
        if important && self.important.len() < IMPORTANT_LINES {
            self.important.push(text.to_owned());
            return;
        }
        self.tail.push_back(text.to_owned());
        if self.tail.len() > TAIL_LINES {
            self.tail.pop_front();
            self.dropped += 1;
        }
    }

    fn text(&self) -> String {
        let mut out = self.head.clone();
        for line in &self.important {
            out.push_str(line);
            out.push('\n');
        }
        if self.dropped > 0 {
            out.push_str(&format!("[… {} more lines …]\n", self.dropped));
        }
        for line in &self.tail {
            out.push_str(line);
            out.push('\n');
        }
        out
    }
}

fn cut_at(text: &str, max: usize) -> &str {
    let mut cut = text.len().min(max);
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    &text[..cut]
}

/// Collects lines from a pipe into the shared sink.
fn collect_lines(
    pipe: impl Read + Send + 'static,
    sink: Arc<Mutex<Sink>>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let mut reader = BufReader::new(pipe);
        let mut line = Vec::new();
        loop {
            line.clear();
            // A line is read at most LINE_CAP bytes at a time, so one endless line cannot
            // grow the buffer without bound.
            match (&mut reader)
                .take(LINE_CAP as u64)
                .read_until(b'\n', &mut line)
            {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            // nsys redraws progress bars with '\r': keep the last state of such a line.
            let text = String::from_utf8_lossy(&line);
            let text = text
                .rsplit('\r')
                .find(|s| !s.trim().is_empty())
                .unwrap_or("");
            let text = text.trim_end_matches('\n');
            if text.starts_with("Processing [") && text.contains('%') {
                continue;
            }
            sink.lock().unwrap_or_else(|e| e.into_inner()).push(text);
        }
    })
}

/// How one nsys process is run: where, for how long, and what to call while it works.
struct Invocation<'a> {
    program: &'a Path,
    args: &'a [OsString],
    /// The working folder (`nsys stats` runs in the run directory, with relative paths).
    dir: Option<&'a Path>,
    timeout: Duration,
    /// The command as messages show it.
    command: String,
}

impl<'a> Invocation<'a> {
    fn new(program: &'a Path, args: &'a [OsString], timeout: Duration) -> Self {
        Invocation {
            program,
            args,
            dir: None,
            timeout,
            command: describe_command(program, args),
        }
    }
}

/// How long nsys has to stop after a forwarded SIGINT/SIGTERM before it is killed. A CI runner
/// cancelling a job waits about 7.5 s after its SIGINT, 2.5 s more after its SIGTERM.
const STOP_GRACE: Duration = Duration::from_secs(5);

/// Runs a program with both output streams captured, a timeout and a progress callback, in a
/// process group of its own. A SIGINT/SIGTERM nsys-gate receives meanwhile is forwarded to that
/// group, which is waited for (and killed after [`STOP_GRACE`]): then `Interrupted`.
fn run_captured(
    run: &Invocation<'_>,
    progress: &mut dyn FnMut(Duration),
) -> Result<Captured, NsysError> {
    use std::os::unix::process::CommandExt;
    let interrupted = |signal: Signal| NsysError::Interrupted {
        signal: signal.name(),
        command: run.command.clone(),
    };
    if let Some(signal) = interrupt::received() {
        return Err(interrupted(signal));
    }
    let mut command = Command::new(run.program);
    command
        .args(run.args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Its own process group, so a timeout or a signal can stop nsys and the helpers it
        // starts (and a terminal's Ctrl-C reaches nsys-gate alone, which forwards it).
        .process_group(0);
    if let Some(dir) = run.dir {
        command.current_dir(dir);
    }
    let mut child: Child = command.spawn().map_err(|source| NsysError::Spawn {
        command: run.command.clone(),
        source,
    })?;
    let sink = Arc::new(Mutex::new(Sink::default()));
    let readers = [
        child.stdout.take().map(|p| collect_lines(p, sink.clone())),
        child.stderr.take().map(|p| collect_lines(p, sink.clone())),
    ];
    let started = Instant::now();
    let mut last_tick = Duration::ZERO;
    let mut timed_out = false;
    let mut signal = None;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) => {}
            Err(_) => break None,
        }
        if let Some(received) = interrupt::received() {
            signal = Some(received);
            break stop_group(&mut child, received);
        }
        let elapsed = started.elapsed();
        if elapsed >= run.timeout {
            timed_out = true;
            kill_group(&mut child);
            break child.wait().ok();
        }
        if elapsed >= last_tick + Duration::from_secs(1) {
            last_tick = elapsed;
            progress(elapsed);
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let stopped = timed_out || signal.is_some();
    for reader in readers.into_iter().flatten() {
        // After a kill, a grandchild may still hold the pipe: do not wait on it forever.
        if stopped {
            let deadline = Instant::now() + Duration::from_secs(2);
            while !reader.is_finished() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(10));
            }
            if !reader.is_finished() {
                continue;
            }
        }
        let _ = reader.join();
    }
    if let Some(signal) = signal {
        return Err(interrupted(signal));
    }
    let text = sink.lock().unwrap_or_else(|e| e.into_inner()).text();
    Ok(Captured {
        status,
        timed_out,
        text,
    })
}

/// Forwards `signal` to the child's process group and waits until the whole group is gone;
/// what is left after [`STOP_GRACE`] is killed. Returns the child's exit status.
fn stop_group(child: &mut Child, signal: Signal) -> Option<ExitStatus> {
    use rustix::process::{kill_process_group, test_kill_process_group, Pid};
    let group = Pid::from_child(child);
    let _ = kill_process_group(group, signal.to_rustix());
    let mut status = None;
    let deadline = Instant::now() + STOP_GRACE;
    loop {
        if status.is_none() {
            status = child.try_wait().ok().flatten();
        }
        // The leader is reaped above; the rest of the group is reaped by whoever inherits it.
        let group_alive = test_kill_process_group(group).is_ok();
        if status.is_some() && !group_alive {
            return status;
        }
        if Instant::now() >= deadline {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    kill_group(child);
    let status = status.or_else(|| child.wait().ok());
    let deadline = Instant::now() + Duration::from_secs(2);
    while test_kill_process_group(group).is_ok() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    status
}

/// Kills the child's whole process group (made with `process_group(0)`) and the child.
fn kill_group(child: &mut Child) {
    use rustix::process::{kill_process_group, Pid, Signal as Sig};
    let _ = kill_process_group(Pid::from_child(child), Sig::KILL);
    let _ = child.kill();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_version_of_nsys_and_of_nothing_else() {
        for (words, version) in [
            ("NVIDIA Nsight Systems version 2022.4.2.1-df9881f\n", Some("2022.4.2.1-df9881f")),
            ("NVIDIA Nsight Systems version 2024.2.3.38-242334140272v0", Some("2024.2.3.38-242334140272v0")),
            // GNU coreutils' `true --version`.
            ("true (GNU coreutils) 9.1\nLicense GPLv3+: GNU GPL version 3 or later <https://gnu.org/licenses/gpl.html>.", None),
            ("NVIDIA Nsight Systems version unknown", None),
            ("", None),
        ] {
            assert_eq!(version_of(words).as_deref(), version, "{words}");
        }
    }

    #[test]
    fn reads_the_incompatible_trace_messages_of_both_generations() {
        let new = "Exportation error: Report was created in Nsight Systems version (2024.2.3.38-242334140272v0), newer than your current version (2023.4.4.54-234433681190v0).";
        assert_eq!(
            incompatible_trace(new),
            Some((
                "2024.2.3.38-242334140272v0".into(),
                "2023.4.4.54-234433681190v0".into()
            ))
        );
        let old = "Exportation error: Version number is invalid: 2024@2@3@38-242334140272v0";
        assert_eq!(
            incompatible_trace(old),
            Some(("2024.2.3.38-242334140272v0".into(), String::new()))
        );
        assert_eq!(incompatible_trace("all fine"), None);
    }

    #[test]
    fn only_nsys_2025_1_and_newer_mark_the_default_domain() {
        for tested in [
            "2022.4.2.1-df9881f",
            "2023.4.4.54-234433681190v0",
            "2024.2.3.38-242334140272v0",
            "2024.7.1.84-247134868898v0",
            "2025.0",
        ] {
            assert!(!adds_default_domain_prefix(tested), "{tested}");
        }
        for newer in [
            "2025.1.1.131-251135540420v0",
            "2025.3.2",
            "2026.1",
            "v2025.1",
        ] {
            assert!(adds_default_domain_prefix(newer), "{newer}");
        }
        // A version this cannot read: names are kept as nsys wrote them.
        for unreadable in ["", "unknown", "2025"] {
            assert!(!adds_default_domain_prefix(unreadable), "{unreadable}");
        }
    }

    #[test]
    fn a_flood_of_output_is_cut_to_what_matters() {
        let mut text = String::from("Generating SQLite file\nERROR: the thing that went wrong\n");
        for i in 0..100_000 {
            text.push_str(&format!("noise line {i} {}\n", "x".repeat(1000)));
        }
        let e = excerpt(&text);
        assert!(e.contains("ERROR: the thing that went wrong"));
        assert!(e.contains("noise line 99999"));
        assert!(e.contains("more lines …]"));
        assert!(
            e.lines().count() <= MESSAGE_LINES + 3,
            "{}",
            e.lines().count()
        );
        assert!(e.len() < 20_000, "{}", e.len());
        assert_eq!(excerpt(""), "(nothing)");
    }

    #[test]
    fn finds_the_skip_message_of_each_report() {
        let words = "Processing [s/trace.sqlite] with [/x/reports/nvtx_pushpop_trace.py] to [s/nsys_nvtx_pushpop_trace.csv]... PROCESSED\n\nProcessing [s/trace.sqlite] with [/x/reports/nvtx_gpu_proj_trace.py] to [s/nsys_nvtx_gpu_proj_trace.csv]... SKIPPED: s/trace.sqlite does not contain CUDA API data.\n";
        assert_eq!(skipped_message(words, PUSHPOP), None);
        assert_eq!(
            skipped_message(words, GPU_PROJ).as_deref(),
            Some("s/trace.sqlite does not contain CUDA API data.")
        );
        assert!(mentions_report(words, PUSHPOP) && mentions_report(words, GPU_PROJ));
        assert!(!mentions_report(words, LEGACY_PUSHPOP));
    }

    #[test]
    fn a_path_split_across_lines_does_not_hide_the_skip() {
        // What nsys 2024.2 printed for a run directory `/t/no<newline>nvtx` given absolute paths.
        let words = "Generating SQLite file /t/no\nnvtx/stats/trace.sqlite from /t/no\nnvtx/trace.nsys-rep\n\
            Processing [/t/no\nnvtx/stats/trace.sqlite] with [/x/reports/nvtx_pushpop_trace.py] to [/t/no\nnvtx/stats/nsys_nvtx_pushpop_trace.csv]... SKIPPED: /t/no\nnvtx/stats/trace.sqlite does not contain NV Tools Extension (NVTX) data.\n\n\
            Processing [/t/no\nnvtx/stats/trace.sqlite] with [/x/reports/nvtx_gpu_proj_trace.py] to [/t/no\nnvtx/stats/nsys_nvtx_gpu_proj_trace.csv]... SKIPPED: /t/no\nnvtx/stats/trace.sqlite does not contain NV Tools Extension (NVTX) data.\n\n";
        for report in [PUSHPOP, GPU_PROJ] {
            assert_eq!(
                skipped_message(words, report).as_deref(),
                Some("/t/no\nnvtx/stats/trace.sqlite does not contain NV Tools Extension (NVTX) data."),
                "{report}"
            );
        }
    }

    #[test]
    fn nsys_is_given_paths_relative_to_the_run_directory() {
        let run = Path::new("/r/a\nb");
        let args = stats_args(
            "a,b",
            "csv",
            &run.join("trace.nsys-rep"),
            &run.join("stats"),
            |p| relative_to(p, run),
        );
        let args: Vec<&str> = args.iter().map(|a| a.to_str().unwrap()).collect();
        assert_eq!(
            args,
            [
                "stats",
                "--report",
                "a,b",
                "--format",
                "csv",
                "--timeunit",
                "nsec",
                "--output",
                "stats/nsys",
                "--sqlite",
                "stats/trace.sqlite",
                "--force-export=true",
                "--force-overwrite=true",
                "trace.nsys-rep"
            ]
        );
        assert_eq!(
            relative_to(&run.join("-t.sqlite"), run),
            Path::new("./-t.sqlite")
        );
        assert_eq!(
            relative_to(Path::new("/elsewhere/t"), run),
            Path::new("/elsewhere/t")
        );
        assert_eq!(relative_to(run, run), run);
    }
}
