//! `--junit PATH`: the gate as a JUnit XML report, which CI systems show beside the job
//! (GitLab's merge request widget through `artifacts:reports:junit`, Jenkins, test-report
//! actions on GitHub).
//!
//! One `<testsuite>` per run directory; in it one `<testcase>` per warning code of the gate set
//! the analysis used (its `gate.gating_codes`), named by the code, with a `<failure>` when the
//! analysis raised it: the message gives the code, how many warnings of it and the first one's
//! words, the element's text every one of them. A run directory without an analysis is one
//! test case, `analysis`, with an `<error>`. The file is written whether the gate passes or
//! fails (a CI system reads a missing report as a broken job), atomically.
//!
//! Every name and message (profile names and range names come from manifests and traces, and
//! in `post --analyses` from another job's artifact) is escaped here: `&`, `<`, `>` and both
//! quotes as entities, line breaks and tabs in attributes as character references, and the
//! characters XML 1.0 cannot hold at all (the C0 controls but tab and line breaks, U+FFFE,
//! U+FFFF) written as `\u{…}`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Context as _;

use super::{Delivery, Done, Sink};
use crate::artifact::{Analysis, Warning, WarningCode};
use crate::files;
use crate::forge::Forge;
use crate::outcome::{Failure, RunOutcome};
use crate::say::say;
use crate::text::{shorten, shown_path};

/// Characters of a failure's `message` attribute (its first warning's words).
const MESSAGE_CHARS: usize = 500;

/// Characters of one warning in a failure's text.
const DETAIL_CHARS: usize = 2000;

/// Warnings of one code listed in a failure's text; the rest are counted.
const DETAILS: usize = 20;

/// The JUnit report's sink (`--junit PATH`): written first, whether the gate passes or fails;
/// a failure to write it ends the command before anything else is written or posted.
pub struct Junit(pub PathBuf);

impl Sink for Junit {
    fn deliver(&self, result: &Delivery<'_>, _: &mut Done, _: &dyn Forge) -> anyhow::Result<()> {
        write(&self.0, result.outcomes)
    }
}

/// Writes the JUnit report of `outcomes` to `path`.
fn write(path: &Path, outcomes: &[RunOutcome]) -> anyhow::Result<()> {
    files::write_atomically(path, report(outcomes).as_bytes())
        .with_context(|| format!("cannot write the JUnit report to {}", shown_path(path)))?;
    say!(
        "nsys-gate: JUnit report of the gate written to {}",
        shown_path(path)
    );
    Ok(())
}

/// The JUnit XML of `outcomes`' gates.
pub fn report(outcomes: &[RunOutcome]) -> String {
    let suites: Vec<Suite> = outcomes.iter().map(Suite::of).collect();
    let sum = |f: fn(&Suite) -> usize| suites.iter().map(f).sum::<usize>();
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        xml,
        "<testsuites name=\"nsys-gate\" tests=\"{}\" failures=\"{}\" errors=\"{}\">",
        sum(|s| s.cases.len()),
        sum(Suite::failures),
        sum(Suite::errors),
    );
    for suite in &suites {
        suite.write(&mut xml);
    }
    xml.push_str("</testsuites>\n");
    xml
}

/// One run directory's gate.
struct Suite {
    name: String,
    cases: Vec<Case>,
}

struct Case {
    name: String,
    outcome: Option<Problem>,
}

/// Why a test case did not pass.
struct Problem {
    /// `failure` (a gating warning) or `error` (no analysis).
    element: &'static str,
    kind: String,
    message: String,
    text: String,
}

impl Suite {
    fn of(outcome: &RunOutcome) -> Suite {
        match outcome {
            RunOutcome::Analysed { analysis, .. } => Suite::analysed(analysis),
            RunOutcome::Failed(f) => Suite::failed(f),
        }
    }

    fn analysed(analysis: &Analysis) -> Suite {
        let run = &analysis.run;
        let name = match analysis.label.as_deref() {
            Some(label) => format!("{} · {label} (run {})", run.profile_name, run.run_id),
            None => format!("{} (run {})", run.profile_name, run.run_id),
        };
        let cases = analysis
            .gate
            .gating_codes
            .iter()
            .map(|&code| {
                let raised: Vec<&Warning> = analysis
                    .warnings
                    .iter()
                    .filter(|w| w.code == code)
                    .collect();
                Case {
                    name: code.as_str().to_owned(),
                    outcome: (!raised.is_empty()).then(|| failure(code, &raised)),
                }
            })
            .collect();
        Suite { name, cases }
    }

    fn failed(f: &Failure) -> Suite {
        let name = match (&f.facts.profile_name, &f.facts.run_id) {
            (Some(profile), Some(run)) => format!("{profile} (run {run})"),
            (Some(profile), None) => profile.clone(),
            _ => shown_path(&f.run_dir),
        };
        let first = f.error.lines().next().unwrap_or_default();
        Suite {
            name,
            cases: vec![Case {
                name: "analysis".to_owned(),
                outcome: Some(Problem {
                    element: "error",
                    kind: f.kind.label().to_owned(),
                    message: shorten(
                        &format!("{}: {}: {first}", f.kind.label(), shown_path(&f.run_dir)),
                        MESSAGE_CHARS,
                    ),
                    text: f.error.clone(),
                }),
            }],
        }
    }

    fn failures(&self) -> usize {
        self.count("failure")
    }

    fn errors(&self) -> usize {
        self.count("error")
    }

    fn count(&self, element: &str) -> usize {
        self.cases
            .iter()
            .filter(|c| c.outcome.as_ref().is_some_and(|p| p.element == element))
            .count()
    }

    fn write(&self, xml: &mut String) {
        let _ = writeln!(
            xml,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\">",
            attribute(&self.name),
            self.cases.len(),
            self.failures(),
            self.errors(),
        );
        let classname = attribute(&format!("nsys-gate: {}", self.name));
        for case in &self.cases {
            let _ = write!(
                xml,
                "    <testcase classname=\"{classname}\" name=\"{}\"",
                attribute(&case.name)
            );
            match &case.outcome {
                None => xml.push_str("/>\n"),
                Some(p) => {
                    let _ = writeln!(
                        xml,
                        ">\n      <{0} type=\"{1}\" message=\"{2}\">{3}</{0}>\n    </testcase>",
                        p.element,
                        attribute(&p.kind),
                        attribute(&p.message),
                        text(&p.text),
                    );
                }
            }
        }
        xml.push_str("  </testsuite>\n");
    }
}

/// The failure of a gating code raised by `raised` (at least one warning).
fn failure(code: WarningCode, raised: &[&Warning]) -> Problem {
    let first = raised.first().map_or("", |w| w.message.as_str());
    let message = match raised.len() {
        1 => format!("{code}: {first}"),
        n => format!("{code}: {n} warnings; the first: {first}"),
    };
    let mut details: Vec<String> = raised
        .iter()
        .take(DETAILS)
        .map(|w| shorten(&w.message, DETAIL_CHARS))
        .collect();
    if raised.len() > DETAILS {
        details.push(format!("… and {} more", raised.len() - DETAILS));
    }
    Problem {
        element: "failure",
        kind: code.as_str().to_owned(),
        message: shorten(&message, MESSAGE_CHARS),
        text: format!("{}\n", details.join("\n")),
    }
}

/// `value` as an attribute's value between double quotes.
fn attribute(value: &str) -> String {
    escape(value, true)
}

/// `value` as an element's text.
fn text(value: &str) -> String {
    escape(value, false)
}

fn escape(value: &str, in_attribute: bool) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // A parser turns these into spaces in an attribute, and a bare carriage return
            // into a line feed anywhere: references keep them.
            '\n' if in_attribute => out.push_str("&#10;"),
            '\t' if in_attribute => out.push_str("&#9;"),
            '\r' => out.push_str("&#13;"),
            '\n' | '\t' => out.push(c),
            // Not XML 1.0 characters at all, not even as references.
            '\u{0}'..='\u{1f}' | '\u{fffe}' | '\u{ffff}' => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::artifact::fake;
    use crate::gate::{self, GateConfig};
    use crate::outcome::FailureKind;
    use WarningCode::*;

    fn outcome(profile: &str, warnings: Vec<Warning>, config: &GateConfig) -> RunOutcome {
        let mut analysis = fake::analysis(&[2_500_000; 5], &[("inference", 7_500_000)], false);
        analysis.run.profile_name = profile.to_owned();
        analysis.warnings = warnings;
        analysis.gate = gate::apply(config, &mut analysis.warnings);
        RunOutcome::Analysed {
            analysis: Box::new(analysis),
            path: PathBuf::from("runs/a/analysis.json"),
        }
    }

    #[test]
    fn a_passing_gate_is_one_passed_case_per_code_of_the_set() {
        let config = GateConfig::default();
        let xml = report(&[outcome(
            "llama",
            vec![Warning::new(HighVariance, "cv 9 %".into())],
            &config,
        )]);
        assert!(xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"nsys-gate\" tests=\"5\" failures=\"0\" errors=\"0\">\n"), "{xml}");
        for code in [
            "capture_range_exceeded",
            "capture_range_missing",
            "capture_range_multiple",
            "capture_range_without_gpu_work",
            "missing_iterations",
        ] {
            assert!(
                xml.contains(&format!("name=\"{code}\"/>\n")),
                "{code}: {xml}"
            );
        }
        // A warning outside the gate set is no test case.
        assert!(!xml.contains("high_variance"), "{xml}");
        assert!(!xml.contains("<failure"), "{xml}");
        assert!(xml.ends_with("  </testsuite>\n</testsuites>\n"), "{xml}");
    }

    #[test]
    fn each_raised_code_is_one_failure_with_its_count_and_first_words() {
        let config = GateConfig::new(&[HighVariance], &[]);
        let xml = report(&[outcome(
            "llama",
            vec![
                Warning::new(MissingIterations, "expected 10 iterations, found 8".into()),
                Warning::new(MissingIterations, "iteration 3 is missing".into()),
                Warning::new(HighVariance, "cv 9 %".into()),
            ],
            &config,
        )]);
        assert!(
            xml.contains("tests=\"6\" failures=\"2\" errors=\"0\""),
            "{xml}"
        );
        assert_eq!(xml.matches("<failure").count(), 2, "{xml}");
        // The warnings are sorted by message: "expected…" first.
        assert!(
            xml.contains("<failure type=\"missing_iterations\" message=\"missing_iterations: 2 warnings; the first: expected 10 iterations, found 8\">expected 10 iterations, found 8\niteration 3 is missing\n</failure>"),
            "{xml}"
        );
        assert!(
            xml.contains("<failure type=\"high_variance\" message=\"high_variance: cv 9 %\">cv 9 %\n</failure>"),
            "{xml}"
        );
        assert!(xml.contains("name=\"capture_range_missing\"/>"), "{xml}");
    }

    #[test]
    fn a_run_directory_without_an_analysis_is_an_error() {
        let mut failure = Failure::new(
            PathBuf::from("runs/b"),
            FailureKind::Manifest,
            "manifest.yaml: missing key `run_id`\n  caused by: x".into(),
        );
        failure.facts.profile_name = Some("bert".into());
        let xml = report(&[
            outcome("llama", Vec::new(), &GateConfig::default()),
            RunOutcome::Failed(failure),
        ]);
        assert!(
            xml.contains("<testsuites name=\"nsys-gate\" tests=\"6\" failures=\"0\" errors=\"1\">"),
            "{xml}"
        );
        assert!(
            xml.contains("<testsuite name=\"bert\" tests=\"1\" failures=\"0\" errors=\"1\">"),
            "{xml}"
        );
        assert!(
            xml.contains("name=\"analysis\">\n      <error type=\"manifest.yaml"),
            "{xml}"
        );
        assert!(
            xml.contains("runs/b: manifest.yaml: missing key `run_id`\">"),
            "{xml}"
        );
    }

    #[test]
    fn hostile_names_and_messages_cannot_leave_their_attribute_or_element() {
        let hostile =
            "a\"/><testcase name=\"x\"><failure/>&amp;<![CDATA[ ]]>\u{1b}[31m\u{0}\r\n\t'\u{ffff}";
        let config = GateConfig::default();
        let xml = report(&[outcome(
            hostile,
            vec![Warning::new(MissingIterations, hostile.into())],
            &config,
        )]);
        // One failure, one suite, no element the names made.
        assert_eq!(xml.matches("<failure").count(), 1, "{xml}");
        assert_eq!(xml.matches("<testsuite ").count(), 1, "{xml}");
        assert_eq!(xml.matches("<testcase ").count(), 5, "{xml}");
        assert!(!xml.contains("<![CDATA["), "{xml}");
        let escaped = "a&quot;/&gt;&lt;testcase name=&quot;x&quot;&gt;&lt;failure/&gt;&amp;amp;&lt;![CDATA[ ]]&gt;\\u{1b}[31m\\u{0}&#13;";
        assert!(
            xml.contains(&format!(
                "<testsuite name=\"{escaped}&#10;&#9;&apos;\\u{{ffff}} (run "
            )),
            "{xml}"
        );
        assert!(
            xml.contains(&format!(">{escaped}\n\t&apos;\\u{{ffff}}\n</failure>")),
            "{xml}"
        );
        // No character XML 1.0 forbids is left, nor a bare carriage return.
        assert!(
            !xml.chars()
                .any(|c| (c < ' ' && c != '\n' && c != '\t') || c == '\u{ffff}'),
            "{xml:?}"
        );
        // Well formed: every element opened is closed, in order.
        let mut open: Vec<&str> = Vec::new();
        for tag in xml.split('<').skip(2) {
            let tag = tag.split('>').next().unwrap();
            if let Some(name) = tag.strip_prefix('/') {
                assert_eq!(open.pop(), Some(name), "{xml}");
            } else if !tag.ends_with('/') {
                open.push(tag.split(' ').next().unwrap());
            }
        }
        assert!(open.is_empty(), "{open:?}");
    }

    #[test]
    fn many_warnings_of_one_code_are_counted_not_all_listed() {
        let warnings = (0..25)
            .map(|i| Warning::new(MissingIterations, format!("iteration {i:02} missing")))
            .collect();
        let xml = report(&[outcome("llama", warnings, &GateConfig::default())]);
        assert!(
            xml.contains(
                "message=\"missing_iterations: 25 warnings; the first: iteration 00 missing\""
            ),
            "{xml}"
        );
        assert!(
            xml.contains("iteration 19 missing\n… and 5 more\n</failure>"),
            "{xml}"
        );
        assert!(!xml.contains("iteration 20 missing"), "{xml}");
    }
}
