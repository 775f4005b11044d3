//! A run directory: its manifest, and the check that the trace belongs to it.
//!
//! The trace is `RUN_DIRECTORY/` + the last component of the manifest's
//! `expected_trace_path` (default `trace.nsys-rep`). It must be a regular file inside the run
//! directory, reached without `..` or a symlink that leaves it. Run directories travel between
//! machines (CI artifacts), so a different recorded path is only a warning.

/// The folder under a run directory that nsys's CSVs go to.
pub const STATS_DIR: &str = "stats";

use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;

use anyhow::{anyhow, Context};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::analysis::stage_warnings;
use crate::manifest::{self, Manifest, ManifestError};
use nsys_gate_core::artifact::Warning;
use nsys_gate_core::outcome::FailureKind;
use nsys_gate_core::text::{shown, shown_path};

pub const MANIFEST_FILE: &str = "manifest.yaml";
pub const DEFAULT_TRACE_FILE: &str = "trace.nsys-rep";

#[derive(Debug, thiserror::Error)]
pub enum RunDirError {
    #[error("run directory {} does not exist{}", shown_path(.0), listed(" (run directories beside it: ", .1, ")"))]
    Missing(PathBuf, RunDirsFound),
    #[error("{} is not a directory", shown_path(.0))]
    NotADirectory(PathBuf),
    #[error("cannot read {}: {source}", shown_path(.path))]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("no {MANIFEST_FILE} in {}{}", shown_path(.0), no_manifest_hint(.0, .1))]
    NoManifest(PathBuf, RunDirsFound),
    #[error(transparent)]
    Manifest(#[from] ManifestError),
    #[error("{MANIFEST_FILE}: `expected_trace_path` ({value:?}) does not end in a file name")]
    NoTraceName { value: String },
    #[error("trace {} not found in the run directory ({}){}", shown_path(.path), trace_source(.path, *.named), trace_hint(.others))]
    TraceMissing {
        /// The trace looked for: the run directory and the trace's name.
        path: PathBuf,
        /// Whether the manifest named the trace (`expected_trace_path`), or the default was
        /// looked for.
        named: bool,
        /// Other traces lying in the run directory (`*.nsys-rep`, `*.sqlite`), by name.
        others: Vec<String>,
    },
    #[error("trace {} is a symlink to {}, which is outside the run directory {}", shown_path(.path), shown_path(.target), shown_path(.dir))]
    TraceOutside {
        path: PathBuf,
        target: PathBuf,
        dir: PathBuf,
    },
    #[error("trace {} is not a regular file", shown_path(.0))]
    TraceNotAFile(PathBuf),
    #[error("{MANIFEST_FILE}: `trace_sha256` does not match the trace {}: the manifest says {}, the file's SHA-256 is {actual}", shown_path(.path), shown(.expected))]
    TraceHashMismatch {
        path: PathBuf,
        expected: String,
        actual: String,
    },
}

/// The run directories (folders holding a manifest.yaml) directly inside a folder, named in
/// the errors of a `--run-dir` that is not one: its parent (a typo), or a folder of runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunDirsFound {
    /// The first few names, sorted.
    pub names: Vec<String>,
    /// How many there are in all.
    pub total: usize,
}

impl RunDirsFound {
    const SHOWN: usize = 8;

    /// The run directories directly inside `folder` (none when it cannot be read).
    pub fn in_folder(folder: &Path) -> RunDirsFound {
        let Ok(entries) = std::fs::read_dir(folder) else {
            return RunDirsFound::default();
        };
        let mut names: Vec<String> = entries
            .filter_map(Result::ok)
            .take(4096)
            .filter(|e| e.path().join(MANIFEST_FILE).is_file())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        let total = names.len();
        names.truncate(Self::SHOWN);
        RunDirsFound { names, total }
    }
}

/// `before` + the names (and how many more) + `after`; empty when there are none.
fn listed(before: &str, found: &RunDirsFound, after: &str) -> String {
    if found.names.is_empty() {
        return String::new();
    }
    let names: Vec<String> = found.names.iter().map(|n| shown(n).into_owned()).collect();
    let more = match found.total - found.names.len() {
        0 => String::new(),
        n => format!(" and {n} more"),
    };
    format!("{before}{}{more}{after}", names.join(", "))
}

/// What to do about a folder without a manifest: the run directories it holds, or a hint.
fn no_manifest_hint(dir: &Path, found: &RunDirsFound) -> String {
    match found.names.first() {
        Some(first) => listed(
            "; it holds run directories: ",
            found,
            &format!(
                " (hint: pass each with its own --run-dir, such as --run-dir {})",
                shown_path(dir.join(first))
            ),
        ),
        None => " (hint: point --run-dir at a folder the profiling harness wrote)".to_owned(),
    }
}

/// Where the name of a trace that is not there (`path`) came from.
fn trace_source(path: &Path, named: bool) -> String {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if named {
        format!(
            "`expected_trace_path` in {MANIFEST_FILE} names `{}`, looked for beside the manifest",
            shown(&name)
        )
    } else {
        format!("{MANIFEST_FILE} has no `expected_trace_path`, so the trace is `{DEFAULT_TRACE_FILE}` beside it")
    }
}

/// What to do about a missing trace when others lie in the run directory.
fn trace_hint(others: &[String]) -> String {
    match others {
        [] => String::new(),
        [one] => format!(
            "; it holds `{}`: if that is this run's trace, set `expected_trace_path: {}` in {MANIFEST_FILE}",
            shown(one),
            shown(one)
        ),
        many => format!(
            "; it holds {}: name this run's trace in `expected_trace_path` in {MANIFEST_FILE}",
            many.iter()
                .map(|n| format!("`{}`", shown(n)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// The files of `dir` (not its folders: `stats/trace.sqlite` is nsys-gate's own export) that
/// may be a trace: `*.nsys-rep`, `*.qdrep`, `*.sqlite`, sorted; at most a few.
fn trace_candidates(dir: &Path) -> Vec<String> {
    const SHOWN: usize = 5;
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| {
            [".nsys-rep", ".qdrep", ".sqlite"]
                .iter()
                .any(|x| n.ends_with(x))
        })
        .collect();
    names.sort();
    names.truncate(SHOWN);
    names
}

impl RunDirError {
    /// What kind of failure this is, for the report: the manifest's, or the folder's.
    pub fn kind(&self) -> FailureKind {
        match self {
            RunDirError::Manifest(_) | RunDirError::NoTraceName { .. } => FailureKind::Manifest,
            _ => FailureKind::RunDirectory,
        }
    }
}

mod ranks;
pub use ranks::locate_rank_traces;

#[derive(Debug, Clone)]
pub struct RunDir {
    /// Canonical absolute path.
    pub dir: PathBuf,
    pub manifest: Manifest,
    pub manifest_sha256: String,
    /// The trace's file name inside `dir`.
    pub trace_name: String,
    pub trace: PathBuf,
    /// The trace's SHA-256 (lowercase hex), when the manifest's `trace_sha256` asked for the
    /// check and it matched.
    pub trace_sha256: Option<String>,
    /// Warnings found while opening (`trace_path_moved`, `manifest_unknown_key`).
    pub warnings: Vec<Warning>,
}

/// A run directory whose manifest has been read, before its trace is checked.
#[derive(Debug, Clone)]
pub struct ManifestRead {
    /// Canonical absolute path.
    pub dir: PathBuf,
    pub manifest: Manifest,
    pub manifest_sha256: String,
}

/// Reads the manifest of the run directory `dir`.
pub fn read_manifest_of(dir: &Path) -> Result<ManifestRead, RunDirError> {
    let meta = std::fs::metadata(dir).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => RunDirError::Missing(
            dir.to_owned(),
            RunDirsFound::in_folder(match dir.parent() {
                Some(p) if p.as_os_str().is_empty() => Path::new("."),
                Some(p) => p,
                None => Path::new("."),
            }),
        ),
        _ => RunDirError::Io {
            path: dir.to_owned(),
            source: e,
        },
    })?;
    if !meta.is_dir() {
        return Err(RunDirError::NotADirectory(dir.to_owned()));
    }
    let dir = std::fs::canonicalize(dir).map_err(|source| RunDirError::Io {
        path: dir.to_owned(),
        source,
    })?;

    let manifest_path = dir.join(MANIFEST_FILE);
    let bytes = read_manifest(&manifest_path)?;
    let manifest = manifest::parse(&bytes, Path::new(MANIFEST_FILE))?;
    let manifest_sha256 = hex(&Sha256::digest(&bytes));
    Ok(ManifestRead {
        dir,
        manifest,
        manifest_sha256,
    })
}

/// Finds the trace the manifest names and checks that it belongs to the run directory;
/// collects the warnings of both steps.
pub fn locate_trace(read: ManifestRead) -> Result<RunDir, RunDirError> {
    let ManifestRead {
        dir,
        manifest,
        manifest_sha256,
    } = read;
    let mut warnings = Vec::new();
    for miss in &manifest.near_misses {
        warnings.push(stage_warnings::unknown_key(
            MANIFEST_FILE,
            miss.line,
            &miss.key,
            &miss.suggestion,
        ));
    }

    let (trace_name, recorded_dir) = match &manifest.expected_trace_path {
        None => (DEFAULT_TRACE_FILE.to_owned(), None),
        Some(value) => split_trace_path(value)?,
    };
    let dir_name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if let Some(recorded) = recorded_dir {
        warnings.extend(stage_warnings::trace_path_moved(
            &recorded,
            &dir_name,
            &trace_name,
        ));
    }

    let trace = dir.join(&trace_name);
    let missing = || RunDirError::TraceMissing {
        path: trace.clone(),
        named: manifest.expected_trace_path.is_some(),
        others: trace_candidates(&dir),
    };
    let link = std::fs::symlink_metadata(&trace).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => missing(),
        _ => RunDirError::Io {
            path: trace.clone(),
            source: e,
        },
    })?;
    if link.file_type().is_symlink() {
        let target = std::fs::canonicalize(&trace).map_err(|_| missing())?;
        if !target.starts_with(&dir) {
            return Err(RunDirError::TraceOutside {
                path: trace,
                target,
                dir,
            });
        }
    }
    if !std::fs::metadata(&trace).is_ok_and(|m| m.is_file()) {
        return Err(RunDirError::TraceNotAFile(trace));
    }
    let mut trace_sha256 = None;
    if let Some(expected) = &manifest.trace_sha256 {
        let actual = sha256_file(&trace)?;
        if !actual.eq_ignore_ascii_case(expected) {
            return Err(RunDirError::TraceHashMismatch {
                path: trace,
                expected: expected.clone(),
                actual,
            });
        }
        trace_sha256 = Some(actual.to_ascii_lowercase());
    }

    Ok(RunDir {
        dir,
        manifest,
        manifest_sha256,
        trace_name,
        trace,
        trace_sha256,
        warnings,
    })
}

/// Fails before nsys runs when the stats folder or the output cannot be written, or when
/// `stats` is not a real directory of the run directory (see [`check_stats_dir`]).
pub fn prepare_outputs(stats_dir: &Path, output: &Path, reuse: bool) -> anyhow::Result<()> {
    if !reuse {
        // Not `create_dir_all`, which is content with a symlink to a directory elsewhere.
        match std::fs::create_dir(stats_dir) {
            Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => {
                return Err(anyhow!(e).context(format!("cannot create {}", shown_path(stats_dir))))
            }
            _ => {}
        }
    }
    // Checked after creating it, so that one check covers a folder made by this run too.
    check_stats_dir(stats_dir)?;
    if !reuse {
        probe_writable(stats_dir)?;
    }
    let out_dir = match output.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_owned(),
        _ => PathBuf::from("."),
    };
    if !out_dir.is_dir() {
        return Err(anyhow!(
            "cannot write {}: folder {} does not exist",
            shown_path(output),
            shown_path(out_dir)
        ));
    }
    probe_writable(&out_dir)
}

/// Refuses a `stats` that is anything but a real directory (a missing one is fine): nsys's
/// CSVs, the SQLite export, the lock and the stamp go there, and a symlink (which the
/// profiled program, writing the run directory, may have left) would send them wherever it
/// points. The link itself is looked at, never followed.
fn check_stats_dir(stats_dir: &Path) -> anyhow::Result<()> {
    let meta = match std::fs::symlink_metadata(stats_dir) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(anyhow!(e).context(format!("cannot read {}", shown_path(stats_dir)))),
    };
    let kind = meta.file_type();
    if kind.is_dir() {
        return Ok(());
    }
    let what = if kind.is_symlink() {
        match std::fs::read_link(stats_dir) {
            Ok(target) => format!("a symlink to {}", shown_path(target)),
            Err(_) => "a symlink".to_owned(),
        }
    } else if kind.is_file() {
        "a file".to_owned()
    } else {
        "not a directory".to_owned()
    };
    Err(anyhow!(
        "{} is {what}: nsys-gate writes nsys's reports, the SQLite export, its lock and its stamp only into a real `{}` directory inside the run directory; remove it and run again",
        shown_path(stats_dir),
        STATS_DIR
    ))
}

/// Name of the lock file under `stats/`, held while a run directory is analysed.
const LOCK_FILE: &str = ".nsys-gate.lock";

/// Another nsys-gate holds the run directory's lock: the run directory and its files are
/// that run's, and this one touches none of them.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Busy(String);

pub fn lock(
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
            // A symlink left in its place is refused, not followed to create a file elsewhere.
            .custom_flags(libc::O_NOFOLLOW)
            .open(&path)
    });
    let file = match opened {
        Ok(file) => file,
        // Reading CSVs another job left in a read-only run directory (output elsewhere):
        // this run writes nothing there, so there is nothing to guard.
        Err(e) if reuse && is_read_only(&e) => return Ok(None),
        Err(e) => {
            return Err(
                anyhow!(e).context(format!("cannot open the lock file {}", shown_path(path)))
            )
        }
    };
    match file.try_lock() {
        Ok(()) => Ok(Some(file)),
        Err(std::fs::TryLockError::WouldBlock) => Err(anyhow!(Busy(format!(
            "another nsys-gate is analysing {} right now (it holds {}); wait for it to finish and run again",
            shown_path(run_dir),
            shown_path(path)
        )))),
        Err(std::fs::TryLockError::Error(e)) => {
            Err(anyhow!(e).context(format!("cannot lock {}", shown_path(path))))
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
        .with_context(|| {
            format!(
                "cannot write in {} (hint: is it read-only?)",
                shown_path(dir)
            )
        })
}

fn read_manifest(path: &Path) -> Result<Vec<u8>, RunDirError> {
    if !path.exists() {
        let dir = path.parent().unwrap_or(path);
        return Err(RunDirError::NoManifest(
            dir.to_owned(),
            RunDirsFound::in_folder(dir),
        ));
    }
    Ok(manifest::read_bytes(path)?)
}

/// `a/b/RUN/trace.nsys-rep` -> (`trace.nsys-rep`, Some(`RUN`)). Split on `/` only: the
/// harness runs on Linux, where `\` is an ordinary character of a file name (a run id may
/// hold one, and the harness names the run's folder after it).
fn split_trace_path(value: &str) -> Result<(String, Option<String>), RunDirError> {
    let mut parts = value.rsplit('/');
    let name = parts.next().unwrap_or("");
    if name.is_empty() || name == "." || name == ".." {
        return Err(RunDirError::NoTraceName {
            value: value.to_owned(),
        });
    }
    let recorded_dir = parts.next().filter(|d| !d.is_empty()).map(str::to_owned);
    Ok((name.to_owned(), recorded_dir))
}

pub fn sha256_file(path: &Path) -> Result<String, RunDirError> {
    let (mut file, _) = nsys_gate_core::files::open_regular(path).map_err(|e| RunDirError::Io {
        path: path.to_owned(),
        source: e.into_io_error(),
    })?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buf).map_err(|source| RunDirError::Io {
            path: path.to_owned(),
            source,
        })?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hex(&hasher.finalize()))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trace_names_come_from_the_last_component() {
        assert_eq!(
            split_trace_path("inference_profiling/x/runs/R1/trace.nsys-rep").unwrap(),
            ("trace.nsys-rep".into(), Some("R1".into()))
        );
        assert_eq!(
            split_trace_path("trace.sqlite").unwrap(),
            ("trace.sqlite".into(), None)
        );
        // `\` is part of a name on Linux, where the harness writes manifests (and names a
        // run's folder after a run id that holds one), not a separator: splitting on it warned
        // `trace_path_moved` for a run that had not moved. A Windows path is one name.
        assert_eq!(
            split_trace_path("inference_profiling/x/runs/R\\1/trace.nsys-rep").unwrap(),
            ("trace.nsys-rep".into(), Some("R\\1".into()))
        );
        assert_eq!(
            split_trace_path("runs/R1/tr\\ace.nsys-rep").unwrap(),
            ("tr\\ace.nsys-rep".into(), Some("R1".into()))
        );
        assert_eq!(
            split_trace_path("C:\\runs\\R2\\t.nsys-rep").unwrap(),
            ("C:\\runs\\R2\\t.nsys-rep".into(), None)
        );
        assert!(split_trace_path("runs/R1/").is_err());
        assert!(split_trace_path("runs/..").is_err());
    }
}
