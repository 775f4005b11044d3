//! analysis.json read back: the one place that turns the bytes of an analysis.json into an
//! [`Analysis`] of this schema version, for every reader (`report`, `post --analyses`,
//! `compare`, `--baseline`).
//!
//! - [`run_dir`]: a run directory's own analysis.json (`report`), as a [`RunOutcome`];
//! - [`under`]: every analysis.json under a folder that someone else filled (an artifact,
//!   a fork's included), found without following a symlink and read with bounds;
//! - [`each`]: an analysis.json, a run directory holding one, or a folder searched for them
//!   (`compare`'s sides and `--baseline PATH`), one analysis at a time.

use std::path::{Path, PathBuf};

use anyhow::Context as _;

use crate::artifact::{self, Analysis};
use crate::files::{self, SearchBounds};
use crate::outcome::{Failure, FailureKind, RunFacts, RunOutcome};
use crate::say::say;
use crate::text::{shown_path, shown_shortened};
use crate::{manifest, rundir, ANALYSIS_FILE};

/// Largest analysis.json read: a trace of a million ranges makes about 42 MB.
pub const MAX_ANALYSIS_BYTES: u64 = 1 << 30;

/// How far [`under`] searches: an artifact's folders are a few levels deep and hold a few
/// analyses; a larger one is refused rather than read without end.
pub const SEARCH: SearchBounds = SearchBounds {
    max_depth: 16,
    max_entries: 100_000,
    max_found: 256,
};

/// The analysis.json files [`under`] reads, in all.
const MAX_TOTAL_BYTES: u64 = 1 << 30;

/// Characters of artifact text (a path, a parse error) shown in one message at most.
const SHOWN_CHARS: usize = 300;

/// An analysis.json's bytes as an [`Analysis`] of this schema version; `Err` says why not,
/// naming `path`.
pub fn parse(path: &Path, bytes: &[u8]) -> Result<Analysis, String> {
    let wrong_version = |v: &dyn std::fmt::Display| {
        format!(
            "{} has schema_version {v}; this nsys-gate reads {}",
            shown_path(path),
            artifact::SCHEMA_VERSION
        )
    };
    match serde_json::from_slice::<Analysis>(bytes) {
        Ok(analysis) if analysis.schema_version == artifact::SCHEMA_VERSION => Ok(analysis),
        Ok(analysis) => Err(wrong_version(&analysis.schema_version)),
        Err(e) => {
            let version = serde_json::from_slice::<serde_json::Value>(bytes)
                .ok()
                .and_then(|v| v.get("schema_version").cloned());
            match version {
                Some(v) if v != serde_json::json!(artifact::SCHEMA_VERSION) => {
                    Err(wrong_version(&v))
                }
                _ => Err(format!(
                    "{} is not an analysis.json that nsys-gate wrote: {e}",
                    shown_path(path)
                )),
            }
        }
    }
}

/// Reads `DIR/analysis.json`; a missing or unreadable one is a failed outcome, with the
/// manifest's profile name when the manifest reads.
pub fn run_dir(dir: &Path) -> RunOutcome {
    let dir = files::absolute(dir);
    let path = dir.join(ANALYSIS_FILE);
    match read_in_run_dir(&dir, &path) {
        Ok(analysis) => RunOutcome::Analysed {
            analysis: Box::new(analysis),
            path,
        },
        Err(error) => {
            let mut failure = Failure::new(dir.clone(), FailureKind::NoAnalysis, error);
            failure.facts = facts_of(&dir);
            RunOutcome::Failed(failure)
        }
    }
}

fn read_in_run_dir(dir: &Path, path: &Path) -> Result<Analysis, String> {
    let bytes = match files::read_regular(path, MAX_ANALYSIS_BYTES) {
        Ok(b) => b,
        Err(e) if e.is_not_found() => {
            return Err(format!(
                "no {ANALYSIS_FILE} in {} (run `nsys-gate analyze --run-dir {}` first)",
                shown_path(dir),
                shown_path(dir)
            ))
        }
        Err(e) => return Err(e.to_string()),
    };
    parse(path, &bytes)
}

/// What the run directory's manifest says, when it reads.
fn facts_of(dir: &Path) -> RunFacts {
    let path = dir.join(rundir::MANIFEST_FILE);
    RunFacts {
        profile_name: manifest::read_bytes(&path)
            .ok()
            .and_then(|bytes| manifest::parse(&bytes, &path).ok())
            .map(|m| m.profile_name),
    }
}

/// Every analysis.json under `dir`, in path order: an analysis, or a failed outcome saying
/// why the file could not be read. Each is named by its path inside `dir`. No file at all is
/// an error, whose message ends with `nothing` (what that means for the caller).
pub fn under(dir: &Path, nothing: &str) -> anyhow::Result<Vec<RunOutcome>> {
    let mut outcomes = Vec::new();
    under_each(dir, nothing, |o| outcomes.push(o))?;
    Ok(outcomes)
}

/// [`under`], each outcome handed to `visit` as it is read.
pub fn under_each(
    dir: &Path,
    nothing: &str,
    mut visit: impl FnMut(RunOutcome),
) -> anyhow::Result<()> {
    let found = files::find_named(dir, ANALYSIS_FILE, SEARCH)
        .with_context(|| format!("cannot search {} for {ANALYSIS_FILE}", shown_path(dir)))?;
    for (path, what) in &found.skipped {
        say!(
            "nsys-gate: warning: {} is {what}, not a regular file; not read",
            inside(dir, path)
        );
    }
    if let Some(first) = found.too_deep.first() {
        say!(
            "nsys-gate: warning: {} folders deeper than {} levels were not searched, the first {}",
            found.too_deep.len(),
            SEARCH.max_depth,
            inside(dir, first)
        );
    }
    anyhow::ensure!(
        !found.files.is_empty(),
        "no {ANALYSIS_FILE} under {} (searched {} levels deep for regular files; symlinks are not followed): {nothing}",
        shown_path(dir),
        SEARCH.max_depth
    );
    let mut left = MAX_TOTAL_BYTES;
    for path in &found.files {
        visit(read_found(dir, path, &mut left));
    }
    Ok(())
}

/// One analysis.json [`under`] found, named in the report by its path inside `dir` (as the
/// artifact has it).
fn read_found(dir: &Path, path: &Path, left: &mut u64) -> RunOutcome {
    let name = path.strip_prefix(dir).unwrap_or(path).to_owned();
    let parsed = files::read_regular_no_symlink(path, MAX_ANALYSIS_BYTES.min(*left))
        .map_err(|e| format!("{}: {}", name.display(), e.into_io_error()))
        .and_then(|bytes| {
            *left = left.saturating_sub(bytes.len() as u64);
            parse(&name, &bytes)
        });
    match parsed {
        Ok(analysis) => RunOutcome::Analysed {
            analysis: Box::new(analysis),
            path: name,
        },
        Err(error) => {
            say!(
                "nsys-gate: warning: {}",
                shown_shortened(&error, SHOWN_CHARS * 2)
            );
            let folder = match name.parent() {
                Some(p) if !p.as_os_str().is_empty() => p.to_owned(),
                _ => PathBuf::from("."),
            };
            RunOutcome::Failed(Failure::new(folder, FailureKind::NoAnalysis, error))
        }
    }
}

/// A path inside the artifact, on one line of standard error: a line break or other control
/// character in it is shown escaped (`\n`), so that no line it holds can start a workflow
/// command (`::add-mask::`, `::error::`, …) in a privileged job.
fn inside(dir: &Path, path: &Path) -> String {
    shown_shortened(
        &path.strip_prefix(dir).unwrap_or(path).to_string_lossy(),
        SHOWN_CHARS,
    )
}

/// Every analysis an analysis.json, a run directory holding one, or a folder searched for
/// them ([`under`]) holds, handed to `visit` one at a time with its path for people (inside
/// the folder searched, or as given), so that a caller that reduces them never holds more
/// than one. Returns the notes on the files that could not be read; `Err` says why nothing
/// could be.
pub fn each(path: &Path, mut visit: impl FnMut(Analysis, String)) -> Result<Vec<String>, String> {
    let meta =
        std::fs::metadata(path).map_err(|e| format!("cannot read {}: {e}", shown_path(path)))?;
    let one = |file: &Path| -> Result<Analysis, String> {
        let bytes = files::read_regular(file, MAX_ANALYSIS_BYTES).map_err(|e| e.to_string())?;
        parse(file, &bytes)
    };
    let file = if meta.is_file() {
        Some(path.to_owned())
    } else {
        Some(path.join(ANALYSIS_FILE)).filter(|f| f.is_file())
    };
    if let Some(file) = file {
        visit(one(&file)?, file.display().to_string());
        return Ok(Vec::new());
    }
    let mut read = 0;
    let mut notes = Vec::new();
    under_each(path, "nothing to compare", |outcome| match outcome {
        RunOutcome::Analysed { analysis, path } => {
            read += 1;
            visit(*analysis, path.display().to_string());
        }
        RunOutcome::Failed(f) => notes.push(f.error),
    })
    .map_err(|e| format!("{e:#}"))?;
    if read == 0 {
        return Err(format!(
            "no readable {ANALYSIS_FILE} in {}: {}",
            shown_path(path),
            notes.join("; ")
        ));
    }
    Ok(notes)
}
