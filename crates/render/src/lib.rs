//! The markdown report: run outcomes in, one markdown document out.
//!
//! 1. [`view`] turns the outcomes into a view model: every number formatted, every list sorted
//!    and cut, every untrusted string escaped ([`escape`]), every judgement (gate, advice,
//!    call-outs) made;
//! 2. a minijinja template lays it out: the built-in `templates/report.md.j2` or the user's
//!    `--template FILE`, with undefined values an error;
//! 3. [`limit`] keeps the result within the size the caller gives (the forge's comment limit,
//!    the room left in a step summary): tables shrink first, and only then is the text cut.

mod chart;
pub mod comparison;
pub mod escape;
pub mod format;
pub mod limit;
pub mod marker;
pub mod view;

use std::path::{Path, PathBuf};

use minijinja::{AutoEscape, Environment, UndefinedBehavior};

pub use limit::{Budget, Caps};

use nsys_gate_core::artifact::comparison::Comparison;
use nsys_gate_core::outcome::RunOutcome;

/// The built-in template.
pub const DEFAULT_TEMPLATE: &str = include_str!("../../../templates/report.md.j2");
const DEFAULT_TEMPLATE_NAME: &str = "report.md.j2 (built in)";

/// Range-table rows by default.
pub const DEFAULT_TOP: usize = 10;

#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    #[error("cannot read the template {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("template {name}{}: {message}", line.map(|l| format!(", line {l}")).unwrap_or_default())]
    Template {
        name: String,
        line: Option<usize>,
        message: String,
    },
}

/// Largest template file read (the built-in one is a few kilobytes).
pub const MAX_TEMPLATE_BYTES: u64 = 4 << 20;

/// A template's source and the name its errors are reported under.
#[derive(Debug, Clone)]
pub struct Template {
    pub name: String,
    pub source: String,
}

impl Template {
    pub fn builtin() -> Self {
        Template {
            name: DEFAULT_TEMPLATE_NAME.to_owned(),
            source: DEFAULT_TEMPLATE.to_owned(),
        }
    }

    /// A template read from `path` (the caller reads the file: render reads nothing).
    pub fn from_source(path: &Path, source: String) -> Self {
        Template {
            name: path.display().to_string(),
            source,
        }
    }
}

#[derive(Debug, Clone)]
pub struct RenderOptions {
    /// Rows of each range table.
    pub top: usize,
    pub budget: Budget,
    /// Show exact range names in the tables instead of groups of names that differ only in
    /// decimal numbers (`--exact-names`); the advice of analysis.json is about groups.
    pub exact_names: bool,
    /// Where the reader finds the analysis.json files.
    pub links: Links,
    /// The analyses come from another job's artifact (`post --analyses`, a pull request's own
    /// job): the report says whose numbers they are, and its marker is of the artifact's key
    /// ([`marker::CommentKey::of_outcomes`]).
    pub from_artifact: bool,
}

/// Where the report points for the full data: a path on the runner is no use to a reader.
/// The forge gives the URLs, as plain data.
#[derive(Debug, Clone, Default)]
pub struct Links {
    /// The CI run's page (GitHub Actions' workflow run, GitLab's job), whose artifacts hold
    /// the analysis.json files the CI uploaded.
    pub run_url: Option<String>,
    /// How a sentence names that page: `the workflow run`, `the job`.
    pub run_label: String,
    /// A commit's page is this followed by its full SHA
    /// (`https://github.com/OWNER/REPO/commit/`).
    pub commit_prefix: Option<String>,
    /// Paths are shown relative to this folder (the working folder) when inside it.
    pub base_dir: Option<PathBuf>,
    /// How the report names the CI's runs and inputs: the forge's words, as data.
    pub words: CiWords,
}

/// How a report names the CI's runs and the inputs that set up the base branch's history.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CiWords {
    /// One CI run that a history point is: `run` (of a workflow), `pipeline`.
    pub run: &'static str,
    /// More than one: `runs`, `pipelines`.
    pub runs: &'static str,
    /// Where a history's runs are, after their count and `{runs}`, with `{place}` (the
    /// workflow's or the job's name, as code) and `{artifact}`: ` of {place}, artifact
    /// {artifact}`, `, the artifacts of job {place}`.
    pub runs_place: &'static str,
    /// How to build the base branch's history, one sentence or two (the report's advice when
    /// it has none).
    pub how_to_history: &'static str,
    /// After a link to the CI run's page: when the analyses are in its artifacts.
    pub full_data_when: &'static str,
    /// The CI configuration that renders a pull request's own job's artifact (`post
    /// --analyses`): `this workflow`.
    pub this_config: &'static str,
    /// The change request: `pull request`, `merge request`.
    pub change_request: &'static str,
}

/// Words that name no CI platform (the forge gives its own, `nsys_gate_forge::words`).
impl Default for CiWords {
    fn default() -> Self {
        CiWords {
            run: "run",
            runs: "runs",
            runs_place: " of {place}, artifact {artifact}",
            how_to_history: "To know the run-to-run noise: compare with several runs of the base branch (see the README's \"Comparing with the base branch\").",
            full_data_when: "when the CI keeps it",
            this_config: "this job",
            change_request: "change request",
        }
    }
}

impl RenderOptions {
    /// The same options within another budget.
    pub fn within(&self, budget: Budget) -> Self {
        RenderOptions {
            budget,
            ..self.clone()
        }
    }
}

/// A compiled template.
pub struct Renderer<'t> {
    env: Environment<'t>,
    name: &'t str,
}

impl<'t> Renderer<'t> {
    /// Compiles the template; a syntax error names the template and its line.
    pub fn new(template: &'t Template) -> Result<Self, RenderError> {
        let mut env = Environment::new();
        env.set_undefined_behavior(UndefinedBehavior::Strict);
        env.set_keep_trailing_newline(true);
        env.set_trim_blocks(true);
        env.set_lstrip_blocks(true);
        // Everything is escaped for markdown already; HTML escaping would garble it.
        env.set_auto_escape_callback(|_| AutoEscape::None);
        // The comparison's partial, which the built-in template imports (and a custom one
        // may).
        env.add_template(comparison::PARTIAL_NAME, comparison::PARTIAL)
            .map_err(|e| template_error(comparison::PARTIAL_NAME, &e))?;
        env.add_template(&template.name, &template.source)
            .map_err(|e| template_error(&template.name, &e))?;
        Ok(Renderer {
            env,
            name: &template.name,
        })
    }

    /// Renders the report of `outcomes` within `options.budget`: the full report when it
    /// fits, else the first step of [`Caps::ladder`] that fits, else the smallest step cut.
    pub fn render(
        &self,
        outcomes: &[RunOutcome],
        options: &RenderOptions,
    ) -> Result<String, RenderError> {
        self.render_with(outcomes, None, options)
    }

    /// [`Renderer::render`] with the outcomes' comparison with a baseline, if any.
    pub fn render_with(
        &self,
        outcomes: &[RunOutcome],
        compared: Option<&Comparison>,
        options: &RenderOptions,
    ) -> Result<String, RenderError> {
        let mut last = String::new();
        for caps in Caps::ladder(options.top) {
            let view = view::build(outcomes, compared, &caps, options);
            last = self.render_view(&view)?;
            if options.budget.fits(&last) {
                return Ok(last);
            }
        }
        Ok(limit::cut(
            &last,
            options.budget,
            &cut_notice(outcomes, options.budget),
        ))
    }

    fn render_view(&self, view: &view::ReportView) -> Result<String, RenderError> {
        self.render_value(view)
    }

    /// Renders any serializable view with this template.
    fn render_value<V: serde::Serialize>(&self, view: &V) -> Result<String, RenderError> {
        let template = self
            .env
            .get_template(self.name)
            .map_err(|e| template_error(self.name, &e))?;
        template
            .render(view)
            .map_err(|e| template_error(self.name, &e))
    }
}

/// Renders with the given template (compiling it first).
pub fn render(
    outcomes: &[RunOutcome],
    options: &RenderOptions,
    template: &Template,
) -> Result<String, RenderError> {
    Renderer::new(template)?.render(outcomes, options)
}

fn template_error(name: &str, e: &minijinja::Error) -> RenderError {
    let mut message = e.kind().to_string();
    if let Some(detail) = e.detail() {
        message.push_str(": ");
        message.push_str(detail);
    }
    let mut source = std::error::Error::source(e);
    while let Some(cause) = source {
        message.push_str(&format!(" (caused by: {cause})"));
        source = cause.source();
    }
    RenderError::Template {
        name: e.name().unwrap_or(name).to_owned(),
        line: e.line(),
        message,
    }
}

/// The last line of a report that had to be cut: where the full data is.
fn cut_notice(outcomes: &[RunOutcome], budget: Budget) -> String {
    const SHOWN: usize = 5;
    let paths: Vec<String> = outcomes
        .iter()
        .filter_map(|o| match o {
            RunOutcome::Analysed { path, .. } => {
                Some(escape::inline_shortened(&path.to_string_lossy(), 200))
            }
            RunOutcome::Failed(_) => None,
        })
        .collect();
    let mut text = format!(
        "**This report was cut to fit the limit of {}.** ",
        budget.describe()
    );
    if paths.is_empty() {
        text.push_str("No run directory could be analysed.");
    } else {
        text.push_str("The full data is in each run's analysis.json: ");
        text.push_str(&format::first_and_more(paths.into_iter(), SHOWN));
        text.push('.');
    }
    text
}

#[cfg(test)]
mod tests;
