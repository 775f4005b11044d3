//! `nsys-gate compare BASE... HEAD`: base runs (a history, oldest first) and current runs
//! compared locally, printed as markdown (and written as comparison.json with --json). A
//! difference is never a failure.

use std::path::{Path, PathBuf};

use anyhow::Context as _;

use crate::baseline::{read_paths, PathRuns};
use crate::cli::CompareArgs;
use crate::compare::{self, Criteria};
use crate::files;
use crate::forge::{CiWords, HistoryNote};
use crate::gate::Ending;
use crate::interrupt;
use crate::render::comparison::render_alone;
use crate::say::{self, say};
use crate::text::{shown, shown_path};

/// `words`: the forge's, for the advice on a history.
pub fn compare(args: &CompareArgs, words: &CiWords) -> anyhow::Result<Ending> {
    let (head_path, base_paths) = args
        .paths
        .split_last()
        .expect("clap requires two paths at least");
    interrupt::doing("reading the base runs' analysis.json files; nothing was written");
    let bases = read_side("BASE", "no base run", base_paths)?;
    interrupt::doing("reading the current runs' analysis.json files; nothing was written");
    let heads = read_side("HEAD", "no current run", std::slice::from_ref(head_path))?;
    interrupt::doing("comparing the runs; nothing was written");
    let source = bases.source();
    let notes = bases
        .notes()
        .into_iter()
        .map(HistoryNote::into_text)
        .collect();
    let settings = Criteria {
        noise_floor_pct: args.noise_floor,
        judged_keys: args.conditions.clone(),
        exact_names: args.exact_names,
    };
    let comparison = compare::compare(&heads.runs, &bases.runs, source, notes, settings);
    interrupt::doing("writing the comparison; a file written is whole (written to a temporary file and renamed into place)");
    let json_to_stdout = args.json.as_deref() == Some(Path::new("-"));
    if let Some(path) = args.json.as_deref().filter(|_| !json_to_stdout) {
        files::write_atomically(path, &comparison.to_json())
            .with_context(|| format!("cannot write {}", shown_path(path)))?;
        say!("nsys-gate: comparison written to {}", shown_path(path));
    }
    let text = if json_to_stdout {
        String::from_utf8(comparison.to_json()).expect("JSON is UTF-8")
    } else {
        render_alone(&comparison, usize::from(args.top), words)?
    };
    say::report(&text).context("cannot write to standard output")?;
    Ok(Ending::Done)
}

/// The runs of one side, each path or file left out said as a warning that names the side;
/// an error naming the side when nothing could be read.
fn read_side(side: &str, none: &str, paths: &[PathBuf]) -> anyhow::Result<PathRuns> {
    let read = read_paths(paths);
    if read.runs.is_empty() {
        anyhow::bail!("{side}: {none} could be read: {}", read.unread.join("; "));
    }
    for why in &read.unread {
        say!("nsys-gate: warning: {side}: {}", shown(why));
    }
    Ok(read)
}
