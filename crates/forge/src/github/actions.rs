//! Inside GitHub Actions (`GITHUB_ACTIONS=true`): the step summary, annotations and step
//! outputs, written the way the runner reads them (Gitea's and Forgejo's runners read the
//! same).
//!
//! - `$GITHUB_STEP_SUMMARY`: the report is appended, within the 1 MiB a step may write (less
//!   what the step already wrote).
//! - Annotations: `::error` for gating warnings and failed analyses, `::warning` for the
//!   others, escaped as workflow commands require. GitHub shows only 10 of each kind per step,
//!   so when there are more, the tenth says how many more there are.
//! - `$GITHUB_OUTPUT`: `analysis-paths`, `report-path`, `gate` and `warnings`, each in the
//!   multi-line `name<<DELIMITER` form with a random delimiter that the value must not hold.
//! - Untrusted text echoed to standard output is wrapped in `::stop-commands::TOKEN` …
//!   `::TOKEN::` ([`nsys_gate_core::text::without_commands`]), so that it cannot issue workflow
//!   commands.
//!
//! Printing is [`nsys_gate_core::say`]'s: it makes every message on standard error inert to the
//! runner and prints the report (wrapped) and the annotations (the only commands meant).

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::{Annotation, Level};
use nsys_gate_core::text::random_token;

/// GitHub shows at most this many annotations of one kind per step.
pub const ANNOTATIONS_PER_KIND: usize = 10;

/// The workflow command line of an annotation, escaped (without a line break at the end).
pub fn command(a: &Annotation) -> String {
    let level = match a.level {
        Level::Error => "error",
        Level::Warning => "warning",
    };
    format!(
        "::{level} title={}::{}",
        escape_property(&a.title),
        escape_data(&a.message)
    )
}

/// The annotations GitHub shows: each kind capped at [`ANNOTATIONS_PER_KIND`], the last one
/// saying how many more there are.
pub fn shown(list: &[Annotation]) -> Vec<Annotation> {
    let (errors, warnings): (Vec<Annotation>, Vec<Annotation>) =
        list.iter().cloned().partition(|a| a.level == Level::Error);
    let mut out = cap(errors, Level::Error, "errors");
    out.extend(cap(warnings, Level::Warning, "warnings"));
    out
}

/// Escapes a workflow command's message (as actions/toolkit does).
pub fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Escapes a workflow command's property value: also `:` and `,`.
pub fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

/// At most [`ANNOTATIONS_PER_KIND`]: past that, the last one says how many more there are.
fn cap(mut list: Vec<Annotation>, level: Level, kind: &str) -> Vec<Annotation> {
    if list.len() <= ANNOTATIONS_PER_KIND {
        return list;
    }
    let more = list.len() - (ANNOTATIONS_PER_KIND - 1);
    list.truncate(ANNOTATIONS_PER_KIND - 1);
    list.push(Annotation {
        level,
        title: format!("nsys-gate: {more} more {kind}"),
        message: format!(
            "{more} more {kind} are not shown as annotations (GitHub shows {ANNOTATIONS_PER_KIND} per step): see the report in the job summary."
        ),
    });
    list
}

#[derive(Debug, thiserror::Error)]
pub enum ActionsError {
    #[error("cannot write {var} ({}): {source}", path.display())]
    Write {
        var: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("step output `{name}` holds its delimiter `{delimiter}`; refusing to write it")]
    DelimiterCollision { name: String, delimiter: String },
}

/// Appends `text` to the step summary file, with a blank line before it when the file
/// already has content.
pub fn append_summary(path: &Path, text: &str) -> Result<(), ActionsError> {
    let err = |source| ActionsError::Write {
        var: "GITHUB_STEP_SUMMARY",
        path: path.to_owned(),
        source,
    };
    let existing = summary_size(path);
    let mut file = nsys_gate_core::files::open_append_regular(path).map_err(err)?;
    let mut bytes = Vec::with_capacity(text.len() + 2);
    if existing > 0 {
        bytes.extend_from_slice(b"\n");
    }
    bytes.extend_from_slice(text.as_bytes());
    file.write_all(&bytes).map_err(err)
}

/// Bytes already in the step summary file (0 when it does not exist yet).
pub fn summary_size(path: &Path) -> usize {
    std::fs::metadata(path).map_or(0, |m| m.len() as usize)
}

/// `name<<DELIMITER\nvalue\nDELIMITER\n` for each output, appended to `$GITHUB_OUTPUT`.
pub fn write_outputs(path: &Path, outputs: &[(&str, String)]) -> Result<(), ActionsError> {
    let mut text = String::new();
    for (name, value) in outputs {
        text.push_str(&output_entry(name, value, &random_token())?);
    }
    let mut file = nsys_gate_core::files::open_append_regular(path)
        .and_then(|mut f| f.write_all(text.as_bytes()).map(|()| f))
        .map_err(|source| ActionsError::Write {
            var: "GITHUB_OUTPUT",
            path: path.to_owned(),
            source,
        })?;
    file.flush().map_err(|source| ActionsError::Write {
        var: "GITHUB_OUTPUT",
        path: path.to_owned(),
        source,
    })
}

/// One output in the multi-line form, refusing a value that holds the delimiter (as
/// actions/toolkit does).
pub fn output_entry(name: &str, value: &str, token: &str) -> Result<String, ActionsError> {
    let delimiter = format!("ghadelimiter_{token}");
    if name.contains(&delimiter) || value.contains(&delimiter) {
        return Err(ActionsError::DelimiterCollision {
            name: name.to_owned(),
            delimiter,
        });
    }
    Ok(format!("{name}<<{delimiter}\n{value}\n{delimiter}\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_follows_the_toolkit() {
        assert_eq!(escape_data("50% a\r\nb: c, d"), "50%25 a%0D%0Ab: c, d");
        assert_eq!(escape_property("a: b, 5%\n"), "a%3A b%2C 5%25%0A");
        let a = Annotation {
            level: Level::Error,
            title: "nsys-gate: missing_iterations".into(),
            message: "line 1\n::add-mask::x".into(),
        };
        assert_eq!(
            command(&a),
            "::error title=nsys-gate%3A missing_iterations::line 1%0A::add-mask::x"
        );
    }

    #[test]
    fn the_tenth_annotation_counts_the_rest() {
        let list: Vec<Annotation> = (0..25)
            .map(|i| Annotation {
                level: Level::Warning,
                title: format!("t{i}"),
                message: format!("m{i}"),
            })
            .collect();
        let capped = cap(list, Level::Warning, "warnings");
        assert_eq!(capped.len(), 10);
        assert_eq!(capped[8].title, "t8");
        assert!(
            capped[9].message.starts_with("16 more warnings"),
            "{:?}",
            capped[9]
        );
        let few: Vec<Annotation> = capped[..10].to_vec();
        assert_eq!(cap(few.clone(), Level::Warning, "warnings"), few);
    }

    #[test]
    fn outputs_use_a_delimiter_the_value_does_not_hold() {
        let entry = output_entry("analysis-paths", "/a\n/b", "t0k3n").unwrap();
        assert_eq!(
            entry,
            "analysis-paths<<ghadelimiter_t0k3n\n/a\n/b\nghadelimiter_t0k3n\n"
        );
        let err = output_entry("x", "a\nghadelimiter_t0k3n\nb", "t0k3n").unwrap_err();
        assert!(err.to_string().contains("refusing"), "{err}");
    }
}
