//! `--baseline auto`: the base branch's analysis.json files from a GitHub Actions artifact.

use super::baseline::{Api, Loaded};
use super::Context;
use crate::artifact::comparison::{BaselineKind, BaselineSource};
use crate::cli::BaselineArgs;

/// What `auto` found: the analyses (if any), where they came from, and notes.
pub struct Auto {
    pub loaded: Option<Loaded>,
    pub source: BaselineSource,
    pub notes: Vec<String>,
}

pub fn load(_args: &BaselineArgs, _api: &Api<'_>, _context: &Context) -> Auto {
    Auto {
        loaded: None,
        source: BaselineSource {
            kind: BaselineKind::Auto,
            path: None,
            workflow_run: None,
            artifact: None,
            analyses: Vec::new(),
        },
        notes: vec!["not yet".into()],
    }
}
