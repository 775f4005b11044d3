//! A run directory: its manifest, and the check that the trace belongs to it.
//!
//! The trace is `RUN_DIRECTORY/` + the last component of the manifest's
//! `expected_trace_path` (default `trace.nsys-rep`). It must be a regular file inside the run
//! directory, reached without `..` or a symlink that leaves it. Run directories travel between
//! machines (CI artifacts), so a different recorded path is only a warning.

use std::io::Read;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::artifact::{Warning, WarningCode};
use crate::manifest::{self, Manifest, ManifestError};

pub const MANIFEST_FILE: &str = "manifest.yaml";
pub const DEFAULT_TRACE_FILE: &str = "trace.nsys-rep";

#[derive(Debug, thiserror::Error)]
pub enum RunDirError {
    #[error("run directory {} does not exist", .0.display())]
    Missing(PathBuf),
    #[error("{} is not a directory", .0.display())]
    NotADirectory(PathBuf),
    #[error("cannot read {}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("no {MANIFEST_FILE} in {} (hint: point --run-dir at a folder the profiling harness wrote)", .0.display())]
    NoManifest(PathBuf),
    #[error(transparent)]
    Manifest(#[from] ManifestError),
    #[error("{MANIFEST_FILE}: `expected_trace_path` ({value:?}) does not end in a file name")]
    NoTraceName { value: String },
    #[error("trace {} not found in the run directory (from `expected_trace_path` in {MANIFEST_FILE}; expected `{name}` beside the manifest)", path.display())]
    TraceMissing { path: PathBuf, name: String },
    #[error("trace {} is a symlink to {}, which is outside the run directory {}", path.display(), target.display(), dir.display())]
    TraceOutside {
        path: PathBuf,
        target: PathBuf,
        dir: PathBuf,
    },
    #[error("trace {} is not a regular file", .0.display())]
    TraceNotAFile(PathBuf),
    #[error("{MANIFEST_FILE}: `trace_sha256` does not match the trace {}: the manifest says {expected}, the file's SHA-256 is {actual}", path.display())]
    TraceHashMismatch {
        path: PathBuf,
        expected: String,
        actual: String,
    },
}

#[derive(Debug, Clone)]
pub struct RunDir {
    /// Canonical absolute path.
    pub dir: PathBuf,
    pub manifest: Manifest,
    pub manifest_sha256: String,
    /// The trace's file name inside `dir`.
    pub trace_name: String,
    pub trace: PathBuf,
    /// Warnings found while opening (`trace_path_moved`, `manifest_unknown_key`).
    pub warnings: Vec<Warning>,
}

impl RunDir {
    pub fn is_sqlite_trace(&self) -> bool {
        self.trace_name.ends_with(".sqlite")
    }
}

pub fn open(dir: &Path) -> Result<RunDir, RunDirError> {
    let meta = std::fs::metadata(dir).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => RunDirError::Missing(dir.to_owned()),
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

    let mut warnings = Vec::new();
    for miss in &manifest.near_misses {
        warnings.push(Warning::new(
            WarningCode::ManifestUnknownKey,
            format!(
                "{MANIFEST_FILE}:{}: unknown key `{}` kept in run.extra; did you mean `{}`?",
                miss.line, miss.key, miss.suggestion
            ),
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
        if recorded != dir_name {
            warnings.push(Warning::new(
                WarningCode::TracePathMoved,
                format!(
                    "the manifest recorded the trace in a folder named `{recorded}`, this run directory is named `{dir_name}`; using {trace_name} beside the manifest"
                ),
            ));
        }
    }

    let trace = dir.join(&trace_name);
    let link = std::fs::symlink_metadata(&trace).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => RunDirError::TraceMissing {
            path: trace.clone(),
            name: trace_name.clone(),
        },
        _ => RunDirError::Io {
            path: trace.clone(),
            source: e,
        },
    })?;
    if link.file_type().is_symlink() {
        let target = std::fs::canonicalize(&trace).map_err(|_| RunDirError::TraceMissing {
            path: trace.clone(),
            name: trace_name.clone(),
        })?;
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
    if let Some(expected) = &manifest.trace_sha256 {
        let actual = sha256_file(&trace)?;
        if !actual.eq_ignore_ascii_case(expected) {
            return Err(RunDirError::TraceHashMismatch {
                path: trace,
                expected: expected.clone(),
                actual,
            });
        }
    }

    Ok(RunDir {
        dir,
        manifest,
        manifest_sha256,
        trace_name,
        trace,
        warnings,
    })
}

fn read_manifest(path: &Path) -> Result<Vec<u8>, RunDirError> {
    if !path.exists() {
        return Err(RunDirError::NoManifest(
            path.parent().unwrap_or(path).to_owned(),
        ));
    }
    Ok(manifest::read_bytes(path)?)
}

/// `a/b/RUN/trace.nsys-rep` -> (`trace.nsys-rep`, Some(`RUN`)). Accepts `/` and `\`.
fn split_trace_path(value: &str) -> Result<(String, Option<String>), RunDirError> {
    let mut parts = value.rsplit(['/', '\\']);
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
    let mut file = std::fs::File::open(path).map_err(|source| RunDirError::Io {
        path: path.to_owned(),
        source,
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
        assert_eq!(
            split_trace_path("C:\\runs\\R2\\t.nsys-rep").unwrap(),
            ("t.nsys-rep".into(), Some("R2".into()))
        );
        assert!(split_trace_path("runs/R1/").is_err());
        assert!(split_trace_path("runs/..").is_err());
    }
}
