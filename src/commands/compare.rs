//! `nsys-gate compare BASE HEAD`: two sets of analysis.json files compared locally, printed as
//! markdown (and written as comparison.json with --json). A difference is never a failure.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Context as _;

use crate::artifact::comparison::{BaselineKind, BaselineSource};
use crate::artifact::Analysis;
use crate::baseline::compare_loaded;
use crate::cli::CompareArgs;
use crate::render::comparison::render_alone;
use crate::say::{self, say};
use crate::text::{shown, shown_path};
use crate::{files, load};

pub fn compare(args: &CompareArgs) -> anyhow::Result<ExitCode> {
    let base = load::path(&args.base).map_err(|why| anyhow::anyhow!("BASE: {why}"))?;
    let head = load::path(&args.head).map_err(|why| anyhow::anyhow!("HEAD: {why}"))?;
    for note in &head.notes {
        say!("nsys-gate: warning: HEAD: {}", shown(note));
    }
    let heads: Vec<(&Analysis, String)> = head.runs.iter().map(|(a, p)| (a, p.clone())).collect();
    let source = BaselineSource {
        kind: BaselineKind::Path,
        path: Some(args.base.display().to_string()),
        workflow_run: None,
        artifact: None,
        analyses: Vec::new(),
    };
    let comparison = compare_loaded(&heads, &base, source, Vec::new());
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
