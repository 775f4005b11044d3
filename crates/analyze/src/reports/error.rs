//! [`ReportError`]: why a report could not be read.

use std::io;
use std::path::{Path, PathBuf};

use nsys_gate_core::text::shown_path;

/// Why a report could not be read. Every variant names the file.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// A 0-byte file (what nsys leaves behind for a skipped or failed report).
    #[error("{}: empty file (0 bytes)", shown_path(.path))]
    Empty { path: PathBuf },
    #[error("{}: cannot read: {source}", shown_path(.path))]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    /// No line of the file holds all the required columns; `header` is the line that came
    /// closest (or the first line).
    #[error("{}: missing required column `{column}` (header: {header})", shown_path(.path))]
    MissingColumn {
        path: PathBuf,
        column: String,
        header: String,
    },
    /// A name is not valid UTF-8 (names are never read lossily).
    #[error("{}: file is not UTF-8 at line {line}", shown_path(.path))]
    NotUtf8 { path: PathBuf, line: u32 },
    /// A record that does not parse or is inconsistent. `line` is 1-based.
    #[error("{}:{line}: {}{message}", shown_path(.path), column_prefix(.column))]
    Invalid {
        path: PathBuf,
        line: u32,
        column: Option<String>,
        message: String,
    },
}

fn column_prefix(column: &Option<String>) -> String {
    match column {
        Some(c) => format!("column `{c}`: "),
        None => String::new(),
    }
}

impl ReportError {
    /// The file the error is about.
    pub fn path(&self) -> &Path {
        match self {
            ReportError::Empty { path }
            | ReportError::Io { path, .. }
            | ReportError::MissingColumn { path, .. }
            | ReportError::NotUtf8 { path, .. }
            | ReportError::Invalid { path, .. } => path,
        }
    }
}
