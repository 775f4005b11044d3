//! The `nsys stats` run: which reports this nsys has (and under which names), how they are
//! split into concurrent processes over one export ([`schedule`]), each process's arguments, and
//! what each process did with its reports, gathered into the stamp.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use nsys_gate_core::artifact::{ReportName, ReportStatus};

mod schedule;

pub use self::schedule::Slots;
use self::schedule::{groups, run_concurrently};
use super::error::NsysError;
use super::process::{run_captured, Captured, Invocation};
use super::stamp::{csv_path, is_sqlite_trace, StatsStamp, EXPORT_FILE, OUTPUT_PREFIX, STAMP_FILE};
use super::version::{identify, Nsys};
use super::words::{classify, describe_command, first_line_with, incompatible_trace, report_words};

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

/// What this nsys is asked for: the reports it has (under the names it gives them), whether
/// they are 2022.x's legacy names, and the reports not asked with why. Made once per analysis
/// ([`identify_with_plan`]), for every trace of it.
#[derive(Debug, Clone)]
pub struct ReportPlan {
    legacy: bool,
    asked: Vec<Asked>,
    missing: Vec<(ReportName, String)>,
}

/// The nsys at `path` identified (`nsys --version`) and asked which reports it has (`nsys
/// stats --help-reports`) at once: each is a process start (about 0.05 s and 0.1 s) before
/// any report can start, and on two cores the second need not wait for the first. The outer
/// error is `--version`'s (which then wins over the other's); the inner, the report plan's.
pub fn identify_with_plan(path: &Path) -> Result<(Nsys, Result<ReportPlan, NsysError>), NsysError> {
    let (nsys, help) = std::thread::scope(|scope| {
        let help = scope.spawn(|| help_reports(path));
        let nsys = identify(path);
        (
            nsys,
            help.join()
                .expect("the --help-reports runner does not panic"),
        )
    });
    let nsys = nsys?;
    let plan = plan_from(&nsys, help);
    Ok((nsys, plan))
}

/// What `nsys stats --help-reports` said, as the plan for this nsys.
fn plan_from(nsys: &Nsys, help: Result<Captured, NsysError>) -> Result<ReportPlan, NsysError> {
    let (legacy, asked, missing) = report_names(nsys, &help?)?;
    Ok(ReportPlan {
        legacy,
        asked,
        missing,
    })
}

/// `nsys stats --help-reports`'s arguments.
fn help_reports_args() -> Vec<OsString> {
    vec!["stats".into(), "--help-reports".into()]
}

/// What `nsys stats --help-reports` says.
fn help_reports(path: &Path) -> Result<Captured, NsysError> {
    run_captured(
        &Invocation::new(path, &help_reports_args(), Duration::from_secs(120)),
        &mut |_| {},
    )
}

/// One report as this nsys is asked for it: the contract's name and the name this nsys gives
/// it (2022.x's legacy names), whose CSV is renamed to the contract's.
#[derive(Debug, Clone, Copy)]
struct Asked {
    /// The report, by the contract's name.
    report: ReportName,
    /// The name this nsys gives it: its CSV is `nsys_<produced>.csv`.
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
///
/// `ended` is called as each process ends, with the reports classified so far (the reports
/// not asked included): their CSVs are final, and may be read while the others run.
///
/// With `slots` (the traces of one analysis, one per rank), the reports run as one call taking
/// one of the shared places: the traces, not the reports of one, run side by side; the
/// timeout counts from when it got its place.
#[allow(clippy::too_many_arguments)]
pub fn run_stats(
    nsys: &Nsys,
    reports: &ReportPlan,
    trace: &Path,
    stats_dir: &Path,
    timeout: Duration,
    plan: StatsPlan,
    slots: Option<&Slots>,
    progress: &mut dyn FnMut(Duration),
    ended: &mut dyn FnMut(&StatsStamp),
) -> Result<StatsStamp, NsysError> {
    let ReportPlan {
        legacy,
        asked,
        missing,
    } = reports.clone();
    clear_outputs(trace, stats_dir)?;
    let run_dir = stats_dir.parent().unwrap_or(stats_dir);
    let _slot = slots.map(Slots::take);
    let started = Instant::now();
    let processes = if slots.is_some() { 1 } else { plan.processes };
    let groups = groups(&asked, processes);
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
    let mut statuses = std::collections::BTreeMap::new();
    for (report, why) in missing {
        statuses.insert(report.as_str().to_owned(), ReportStatus::skipped(why));
    }
    // Each call classified (and its legacy CSVs renamed) as soon as it ends, so that the
    // caller may read its reports while the others still run; the first error in the calls'
    // order is the one returned.
    let mut errors: Vec<Option<NsysError>> = (0..calls.len()).map(|_| None).collect();
    run_concurrently(
        &calls,
        first_exports,
        started,
        progress,
        &mut |k, output| {
            let call = &calls[k];
            let classified = output
                .and_then(|output| call.classify(nsys, stats_dir, &output))
                .and_then(|classified| {
                    for asked in &call.reports {
                        if asked.produced != asked.report.as_str() {
                            rename_legacy(stats_dir, asked.report)?;
                        }
                    }
                    Ok(classified)
                });
            match classified {
                Ok(classified) => {
                    for (report, status) in classified {
                        statuses.insert(report.as_str().to_owned(), status);
                    }
                    ended(&StatsStamp {
                        nsys_version: nsys.version.clone(),
                        legacy_reports: legacy,
                        reports: statuses.clone(),
                        credential_variables: Vec::new(),
                        environment: None,
                        gpu_clocks: Vec::new(),
                    });
                }
                Err(e) => errors[k] = Some(e),
            }
        },
    );
    if let Some(e) = errors.into_iter().flatten().next() {
        return Err(e);
    }
    Ok(StatsStamp {
        nsys_version: nsys.version.clone(),
        legacy_reports: legacy,
        reports: statuses,
        credential_variables: Vec::new(),
        environment: None,
        gpu_clocks: Vec::new(),
    })
}

/// Removes what an earlier run left in `stats_dir` (its CSVs, its stamp, and for a
/// `.nsys-rep` its export), so that nothing stale is mistaken for this run's output.
/// [`run_stats`] does it first; called before, while nsys is identified, it leaves
/// `run_stats` nothing to remove (the CSVs of a large trace take tens of milliseconds).
pub fn clear_outputs(trace: &Path, stats_dir: &Path) -> Result<(), NsysError> {
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
    Ok(())
}

/// The name this nsys gives each report (`nsys stats --help-reports`): the new names, or
/// nsys 2022.x's legacy ones (`legacy` true, for the NVTX reports). A GPU-work report this
/// nsys lacks is not asked for: it is returned with why; so is one whose replacement
/// ([`ReportName::replaced_by`]) this nsys has.
#[allow(clippy::type_complexity)]
fn report_names(
    nsys: &Nsys,
    output: &Captured,
) -> Result<(bool, Vec<Asked>, Vec<(ReportName, String)>), NsysError> {
    let args = help_reports_args();
    let words = output.words();
    // `cuda_gpu_kern_sum[:nvtx-name][:base|:mangled] -- …`: a report with an argument
    // (`cuda_gpu_kern_sum:base`) is there when its script is and lists the argument.
    let has = |name: &str| {
        let (script, argument) = match name.split_once(':') {
            Some((script, argument)) => (script, Some(argument)),
            None => (name, None),
        };
        words.lines().any(|l| {
            let l = l.trim_start();
            l.split(|c: char| c.is_whitespace() || c == '[').next() == Some(script)
                && argument.is_none_or(|a| {
                    l.split(" -- ")
                        .next()
                        .is_some_and(|usage| usage.contains(&format!(":{a}")))
                })
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
        if let Some(better) = report
            .replaced_by()
            .filter(|b| has(b.as_str()) || has(b.legacy_name()))
        {
            missing.push((
                report,
                format!(
                    "not asked: nsys {} has `{}`, which gives each kernel's launching process and thread",
                    nsys.version,
                    better.as_str()
                ),
            ));
            continue;
        }
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

/// The error for a trace from a newer nsys, when nsys's words say so; the version of `nsys`
/// when its words do not name one (2022.4's).
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
    /// Its reports, in the order nsys is asked for them.
    reports: Vec<Asked>,
    /// The nsys executable, as an absolute path.
    program: PathBuf,
    /// Its arguments, paths relative to `run_dir`.
    args: Vec<OsString>,
    /// Where it runs: the run directory.
    run_dir: PathBuf,
    /// The command with absolute paths, as messages show it.
    command: String,
    /// The whole run's timeout.
    timeout: Duration,
}

impl StatsCall {
    /// The call that makes `reports` from `input`, into `stats_dir`, run in `run_dir`.
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
        output: &Captured,
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

/// Removes a file left by an earlier run, if there is one.
fn remove_if_present(path: &Path) -> Result<(), NsysError> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(NsysError::Io {
            path: path.to_owned(),
            source: e,
        }),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A first call that creates its first CSV and ends at once, between two looks at that
    /// CSV, still lets the others run, though its end renames the CSV (as a legacy report's
    /// is). A shell script stands in for nsys: a real one cannot be made to end within one
    /// look (20 ms) of creating its CSV; nsys 2022.4 sometimes did, on a small trace.
    #[test]
    fn a_first_call_that_ends_as_its_csv_appears_still_lets_the_others_run() {
        let dir = assert_fs::TempDir::new().unwrap();
        let call = |script: &str| StatsCall {
            reports: Vec::new(),
            program: PathBuf::from("/bin/sh"),
            args: vec!["-c".into(), script.into()],
            run_dir: dir.path().to_path_buf(),
            command: script.to_owned(),
            timeout: Duration::from_secs(60),
        };
        let first_csv = dir.path().join("first.csv");
        for _ in 0..5 {
            let _ = std::fs::remove_file(&first_csv);
            let calls = [
                call("sleep 0.03; : > first.csv"),
                call("exit 0"),
                call("exit 0"),
            ];
            let mut ran = Vec::new();
            run_concurrently(
                &calls,
                Some(&first_csv),
                Instant::now(),
                &mut |_| {},
                &mut |k, output| {
                    if k == 0 {
                        std::fs::rename(&first_csv, dir.path().join("renamed.csv")).unwrap();
                    }
                    ran.push((k, output.unwrap().status.is_some()));
                },
            );
            ran.sort_unstable();
            assert_eq!(ran, [(0, true), (1, true), (2, true)]);
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

    /// The reports asked of an nsys with the contract's names.
    fn asked(reports: &[ReportName]) -> Vec<Asked> {
        reports
            .iter()
            .map(|&report| Asked {
                report,
                produced: report.as_str(),
            })
            .collect()
    }

    /// `groups`' answer, by report.
    fn grouped(reports: &[ReportName], processes: usize) -> Vec<Vec<ReportName>> {
        groups(&asked(reports), processes)
            .iter()
            .map(|g| g.iter().map(|a| a.report).collect())
            .collect()
    }

    /// Every subset of the reports, each in `ReportName::ALL`'s order (an nsys may lack any
    /// GPU-work report; the NVTX ones are always asked, but `groups` does not rely on it).
    fn subsets() -> impl Iterator<Item = Vec<ReportName>> {
        (0..1u32 << ReportName::ALL.len()).map(|mask| {
            ReportName::ALL
                .iter()
                .enumerate()
                .filter(|(i, _)| mask >> i & 1 == 1)
                .map(|(_, r)| *r)
                .collect()
        })
    }

    fn rank(report: ReportName) -> usize {
        ReportName::ALL.iter().position(|r| *r == report).unwrap()
    }

    /// All 128 subsets and 0 to 8 processes, so every case rather than a sample of them.
    #[test]
    fn every_asked_report_runs_in_exactly_one_group() {
        for reports in subsets() {
            for processes in 0..=8 {
                let groups = grouped(&reports, processes);
                let case = format!("{reports:?}, {processes} processes: {groups:?}");
                for report in &reports {
                    let times = groups.iter().flatten().filter(|r| *r == report).count();
                    assert_eq!(times, 1, "{report:?} in {case}");
                }
                assert_eq!(groups.iter().flatten().count(), reports.len(), "{case}");
                assert!(groups.iter().all(|g| !g.is_empty()), "{case}");
                let most = processes
                    .clamp(1, StatsPlan::MAX_PROCESSES)
                    .min(reports.len());
                assert_eq!(groups.len(), most, "{case}");
                for group in &groups {
                    assert!(
                        group.windows(2).all(|w| rank(w[0]) < rank(w[1])),
                        "not in ReportName::ALL's order: {case}"
                    );
                }
            }
        }
    }

    #[test]
    fn one_process_runs_every_report_in_one_group_in_order() {
        for processes in [0, 1] {
            assert_eq!(
                grouped(&ReportName::ALL, processes),
                [ReportName::ALL.to_vec()]
            );
            for reports in subsets().filter(|r| !r.is_empty()) {
                assert_eq!(grouped(&reports, processes), vec![reports.clone()]);
            }
        }
    }

    /// The first process makes the export of a `.nsys-rep`; its first report, the most costly,
    /// is the push/pop report.
    #[test]
    fn the_first_group_starts_with_the_push_pop_report() {
        for reports in subsets().filter(|r| r.contains(&ReportName::PushPop)) {
            for processes in 0..=8 {
                let groups = grouped(&reports, processes);
                assert_eq!(
                    groups[0][0],
                    ReportName::PushPop,
                    "{reports:?}, {processes} processes: {groups:?}"
                );
            }
        }
    }

    /// With more processes than NVTX reports, each NVTX report runs in a process of its own and
    /// the GPU-work reports in the others: every subset, 0 to 8 processes.
    #[test]
    fn with_room_each_nvtx_report_runs_alone() {
        for reports in subsets() {
            let required = reports.iter().filter(|r| r.is_required()).count();
            for processes in 0..=8 {
                let groups = grouped(&reports, processes);
                if required == 0 || groups.len() <= required {
                    continue;
                }
                let case = format!("{reports:?}, {processes} processes: {groups:?}");
                for (k, group) in groups.iter().enumerate() {
                    if k < required {
                        assert!(group.len() == 1 && group[0].is_required(), "{case}");
                    } else {
                        assert!(group.iter().all(|r| !r.is_required()), "{case}");
                    }
                }
            }
        }
    }

    /// The groupings measured in docs/performance.md (with `cuda_api_trace`, which an nsys
    /// without `cuda_kern_exec_trace` is asked for), and the same with `cuda_kern_exec_trace`
    /// in its place, as the tested versions are asked. Two processes' is also pinned by the
    /// `error_incompatible_trace` snapshot, which quotes the first process's command.
    #[test]
    fn two_and_three_processes_give_the_measured_groupings() {
        use ReportName::{
            ApiTrace, GpuProjection, GpuTrace, KernelBaseSummary, KernelExecTrace, KernelSummary,
            PushPop,
        };
        let old = [PushPop, GpuProjection, KernelSummary, GpuTrace, ApiTrace];
        assert_eq!(
            grouped(&old, 2),
            [
                vec![PushPop, ApiTrace],
                vec![GpuProjection, KernelSummary, GpuTrace]
            ]
        );
        // Three: each NVTX report alone, the GPU-work reports together.
        let three = [
            vec![PushPop],
            vec![GpuProjection],
            vec![KernelSummary, GpuTrace, ApiTrace],
        ];
        assert_eq!(grouped(&old, 3), three);
        // More processes than the plan allows: still three.
        assert_eq!(grouped(&old, 8), three);

        let asked = [
            PushPop,
            GpuProjection,
            KernelSummary,
            KernelBaseSummary,
            GpuTrace,
            KernelExecTrace,
        ];
        assert_eq!(
            grouped(&asked, 2),
            [
                vec![PushPop, KernelSummary, KernelBaseSummary, KernelExecTrace],
                vec![GpuProjection, GpuTrace]
            ]
        );
        assert_eq!(
            grouped(&asked, 3),
            [
                vec![PushPop],
                vec![GpuProjection],
                vec![KernelSummary, KernelBaseSummary, GpuTrace, KernelExecTrace],
            ]
        );
    }
}
