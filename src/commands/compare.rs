//! `nsys-gate compare BASE... HEAD`: base runs (a history, oldest first) and current runs
//! compared locally, printed as markdown (and written as comparison.json with --json). A
//! difference is never a failure.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Context as _;

use crate::baseline::{path_source, read_paths};
use crate::cli::CompareArgs;
use crate::compare::{self, Criteria};
use crate::files;
use crate::render::comparison::render_alone;
use crate::say::{self, say};
use crate::text::{shown, shown_path};

pub fn compare(args: &CompareArgs) -> anyhow::Result<ExitCode> {
    let (head_path, base_paths) = args
        .paths
        .split_last()
        .expect("clap requires two paths at least");
    let (bases, mut notes) = read_paths(base_paths);
    if bases.is_empty() {
        anyhow::bail!(
            "BASE: no base run could be read: {}",
            notes.join("; ").replace("no baseline from ", "")
        );
    }
    let (heads, head_notes) = read_paths(std::slice::from_ref(head_path));
    if heads.is_empty() {
        anyhow::bail!(
            "HEAD: no current run could be read: {}",
            head_notes.join("; ").replace("no baseline from ", "")
        );
    }
    for note in &head_notes {
        say!("nsys-gate: warning: HEAD: {}", shown(note));
    }
    let analyses: Vec<String> = bases.iter().map(|r| r.run.analysis_path.clone()).collect();
    let source = path_source(base_paths, &analyses);
    notes.retain(|n| !n.starts_with("no baseline from "));
    let settings = Criteria {
        noise_floor_pct: args.noise_floor,
    };
    let comparison = compare::compare(&heads, &bases, source, notes, settings);
    let json_to_stdout = args.json.as_deref() == Some(Path::new("-"));
    if let Some(path) = args.json.as_deref().filter(|_| !json_to_stdout) {
        files::write_atomically(path, &comparison.to_json())
            .with_context(|| format!("cannot write {}", shown_path(path)))?;
        say!("nsys-gate: comparison written to {}", shown_path(path));
    }
    let text = if json_to_stdout {
        String::from_utf8(comparison.to_json()).expect("JSON is UTF-8")
    } else {
        render_alone(&comparison, usize::from(args.top))?
    };
    say::report(&text).context("cannot write to standard output")?;
    Ok(ExitCode::SUCCESS)
}
