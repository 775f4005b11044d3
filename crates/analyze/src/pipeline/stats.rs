//! `nsys stats` for one trace: the reports made (or an earlier run's stamp read), then what
//! the export recorded (the names of credentials, the environment, the GPU clocks) before the
//! export is removed. With one trace per rank, nsys is found once for every trace
//! ([`SharedNsys`]).

use std::path::Path;

use super::{AnalyzeError, AnalyzeOptions};
use crate::nsys::{self, StatsStamp};
use crate::progress::Progress;
use crate::rundir::RunDir;
use crate::trace_env;
use nsys_gate_core::artifact;
use nsys_gate_core::files;
use nsys_gate_core::say::say;
use nsys_gate_core::text::shown_path;

/// Runs `nsys stats` and stamps what it did, or reads the stamp of an earlier run.
///
/// After nsys, whatever it did: the names of the credentials in the recorded environment go
/// into the stamp (read from the export, or from a `.sqlite` trace itself), and the export is
/// removed unless `--keep-export`.
///
/// `shared`: nsys as found once for every trace of the run (one trace per rank), with the
/// places their processes share; `None` for one trace, found here. `ended`: called as each
/// nsys process ends, with the reports classified so far (see [`nsys::run_stats`]).
pub(super) fn stats(
    options: &AnalyzeOptions,
    run: &RunDir,
    stats_dir: &Path,
    shared: Option<&SharedNsys>,
    progress: &mut Progress,
    ended: &mut dyn FnMut(&StatsStamp),
) -> Result<StatsStamp, AnalyzeError> {
    if options.reuse_stats {
        return nsys::read_stamp(stats_dir).map_err(AnalyzeError::other);
    }
    let found;
    let (nsys, reports, slots) = match shared {
        Some(shared) => (&shared.nsys, &shared.reports, Some(&shared.slots)),
        None => {
            let path = nsys::locate(&options.nsys)?;
            // The last run's outputs removed while nsys answers.
            let (identified, cleared) = std::thread::scope(|scope| {
                let clear = scope.spawn(|| nsys::clear_outputs(&run.trace, stats_dir));
                let identified = nsys::identify_with_plan(&path);
                (
                    identified,
                    clear.join().expect("removing files does not panic"),
                )
            });
            let (nsys, reports) = identified?;
            cleared?;
            progress.start_nsys(&nsys, &run.trace);
            let reports = reports.inspect_err(|_| progress.finish_nsys())?;
            found = (nsys, reports);
            (&found.0, &found.1, None)
        }
    };
    if shared.is_some() {
        progress.start_nsys(nsys, &run.trace);
    }
    let stamp = nsys::run_stats(
        nsys,
        reports,
        &run.trace,
        stats_dir,
        options.nsys_timeout,
        options.stats_plan,
        slots,
        &mut |elapsed| progress.tick(elapsed),
        ended,
    );
    progress.finish_nsys();
    let export = stats_dir.join(nsys::EXPORT_FILE);
    let environment = if nsys::is_sqlite_trace(&run.trace) {
        &run.trace
    } else {
        &export
    };
    let stamp = stamp.map(|mut stamp| {
        stamp.credential_variables = recorded_credentials(environment);
        stamp.environment = recorded_environment(environment);
        stamp.gpu_clocks = recorded_clocks(environment);
        stamp
    });
    if !options.keep_export && !nsys::is_sqlite_trace(&run.trace) {
        remove_export(&export);
    }
    let stamp = stamp?;
    let json = serde_json::to_vec_pretty(&stamp).expect("stamp serialises");
    files::write_atomically(&stats_dir.join(nsys::STAMP_FILE), &json)
        .map_err(AnalyzeError::other)?;
    Ok(stamp)
}

/// nsys as the traces of one run (one per rank) share it: found, identified and asked for its
/// reports once, and the places for their `nsys stats` processes.
pub(super) struct SharedNsys {
    nsys: nsys::Nsys,
    reports: nsys::ReportPlan,
    slots: nsys::Slots,
}

impl SharedNsys {
    /// `None` with `--reuse-stats` (no nsys run).
    pub(super) fn find(options: &AnalyzeOptions) -> Result<Option<SharedNsys>, AnalyzeError> {
        if options.reuse_stats {
            return Ok(None);
        }
        let path = nsys::locate(&options.nsys)?;
        let (nsys, reports) = nsys::identify_with_plan(&path)?;
        let reports = reports?;
        Ok(Some(SharedNsys {
            nsys,
            reports,
            slots: nsys::Slots::new(options.stats_plan.processes),
        }))
    }
}

/// The credential-like names in the environment recorded in a SQLite export; none (and a note
/// on standard error) when it cannot be read: the reports themselves came out fine.
fn recorded_credentials(export: &Path) -> Vec<String> {
    if !export.is_file() {
        return Vec::new();
    }
    trace_env::credential_variables(export).unwrap_or_else(|e| {
        say!(
            "nsys-gate: note: could not read the environment recorded in {}: {e}",
            shown_path(export)
        );
        Vec::new()
    })
}

/// The GPUs, driver and system recorded in a SQLite export; `None` (and a note on standard
/// error) when it cannot be read.
fn recorded_environment(export: &Path) -> Option<artifact::Environment> {
    if !export.is_file() {
        return None;
    }
    trace_env::environment(export)
        .map_err(|e| {
            say!(
                "nsys-gate: note: could not read the GPUs and driver recorded in {}: {e}",
                shown_path(export)
            )
        })
        .ok()
}

/// Each GPU's SM clock samples in a SQLite export (GPU metrics); none (and a note on standard
/// error) when they cannot be read.
fn recorded_clocks(export: &Path) -> Vec<trace_env::ClockSeries> {
    if !export.is_file() {
        return Vec::new();
    }
    trace_env::gpu_clocks(export).unwrap_or_else(|e| {
        say!(
            "nsys-gate: note: could not read the GPU metrics recorded in {}: {e}",
            shown_path(export)
        );
        Vec::new()
    })
}

/// Removes nsys's export (and the journal SQLite may leave beside it); a failure is a note.
fn remove_export(export: &Path) {
    let mut journal = export.as_os_str().to_owned();
    journal.push("-journal");
    for path in [export, Path::new(&journal)] {
        match std::fs::remove_file(path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => say!(
                "nsys-gate: warning: could not remove {}: {e} (it holds the whole trace, the recorded environment included)",
                shown_path(path)
            ),
            _ => {}
        }
    }
}
