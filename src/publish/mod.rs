//! Where a command's result goes: sinks built once from the command line, then fed one typed
//! result ([`Delivery`]) through one path ([`Sinks::deliver`]), the same for `report`, `run`
//! and `post`.
//!
//! The sinks, in the order they are fed:
//!
//! - [`junit::Junit`]: the gate as a JUnit XML report (`--junit`);
//! - [`output::ReportSink`]: report.md (and comparison.json beside it) and standard output;
//! - [`output::StepSink`]: what the CI step shows besides the report (the job summary, the
//!   annotations, the step outputs), handed to the forge;
//! - [`comment::CommentSink`]: the pull request's one comment of its key, marker first, cut or
//!   rendered again smaller to fit.
//!
//! A sink that cannot deliver either ends the command there (an error: the report could not be
//! written) or says so and lets the others deliver, the command then ending failed (the step's
//! files, the comment).

pub mod comment;
pub mod junit;
pub mod output;

use std::path::PathBuf;

use crate::artifact::comparison::Comparison;
use crate::forge::Forge;
use crate::gate::Ending;
use crate::outcome::{overall_verdict, RunOutcome};
use crate::render::{Budget, RenderError, RenderOptions, Renderer};

pub use comment::CommentSink;
pub use junit::Junit;
pub use output::{Destination, ReportSink, StepSink};

/// The one result every sink is fed: the run directories' outcomes, their comparison with a
/// baseline, and the report.
pub struct Delivery<'a> {
    pub outcomes: &'a [RunOutcome],
    /// The comparison with a baseline (`--baseline`).
    pub comparison: Option<&'a Comparison>,
    pub report: Report<'a>,
}

/// The report a command delivers.
pub enum Report<'a> {
    /// Rendered here within `options`; rendered again within a smaller budget when a sink has
    /// less room (the job summary, a comment the server refuses as too long).
    Rendered {
        renderer: &'a Renderer<'a>,
        options: Box<RenderOptions>,
        text: String,
    },
    /// Given as it is (`post --report`): never rendered again.
    Given(String),
}

impl<'a> Delivery<'a> {
    /// The report of `outcomes` rendered within `options`.
    pub fn rendered(
        renderer: &'a Renderer<'a>,
        outcomes: &'a [RunOutcome],
        comparison: Option<&'a Comparison>,
        options: RenderOptions,
    ) -> Result<Self, RenderError> {
        let text = renderer.render_with(outcomes, comparison, &options)?;
        Ok(Delivery {
            outcomes,
            comparison,
            report: Report::Rendered {
                renderer,
                options: Box::new(options),
                text,
            },
        })
    }

    /// A report given as it is, with no analyses behind it.
    pub fn given(text: String) -> Delivery<'static> {
        Delivery {
            outcomes: &[],
            comparison: None,
            report: Report::Given(text),
        }
    }

    /// The report as rendered (or given).
    pub fn text(&self) -> &str {
        match &self.report {
            Report::Rendered { text, .. } | Report::Given(text) => text,
        }
    }

    /// The report rendered again within `budget`; a given report as it is.
    pub fn within(&self, budget: Budget) -> Result<String, RenderError> {
        match &self.report {
            Report::Rendered {
                renderer, options, ..
            } => renderer.render_with(self.outcomes, self.comparison, &options.within(budget)),
            Report::Given(text) => Ok(text.clone()),
        }
    }
}

/// What the sinks fed so far did, for the sinks after them and the command's ending.
#[derive(Debug)]
pub struct Done {
    /// Where report.md was written.
    pub report: Option<PathBuf>,
    /// Where comparison.json was written.
    pub comparison: Option<PathBuf>,
    /// How the command ends so far.
    pub ending: Ending,
}

/// One way out of a command's result.
pub trait Sink {
    /// Delivers `result`, adding what it wrote to `done`. An error ends the command at once
    /// (the sinks after it are not fed); a failure the command survives is said here and
    /// recorded in `done.ending`.
    fn deliver(
        &self,
        result: &Delivery<'_>,
        done: &mut Done,
        forge: &dyn Forge,
    ) -> anyhow::Result<()>;
}

/// A command's sinks, built once from its command line.
pub struct Sinks {
    sinks: Vec<Box<dyn Sink>>,
    judged: bool,
}

impl Sinks {
    /// No sink yet. `judged`: the command ends with the analyses' verdict (`report`, `run`);
    /// else done (`post`), whatever the gate.
    pub fn new(judged: bool) -> Self {
        Sinks {
            sinks: Vec::new(),
            judged,
        }
    }

    /// `sink` fed after those already there.
    pub fn with(mut self, sink: impl Sink + 'static) -> Self {
        self.sinks.push(Box::new(sink));
        self
    }

    /// `sink`, when there is one.
    pub fn with_some(self, sink: Option<impl Sink + 'static>) -> Self {
        match sink {
            Some(sink) => self.with(sink),
            None => self,
        }
    }

    /// Feeds `result` to every sink in turn; returns how the command ends.
    pub fn deliver(&self, result: &Delivery<'_>, forge: &dyn Forge) -> anyhow::Result<Ending> {
        let mut done = Done {
            report: None,
            comparison: None,
            ending: if self.judged {
                Ending::Judged(overall_verdict(result.outcomes))
            } else {
                Ending::Done
            },
        };
        for sink in &self.sinks {
            sink.deliver(result, &mut done, forge)?;
        }
        Ok(done.ending)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::artifact::Verdict;
    use std::cell::RefCell;
    use std::rc::Rc;

    /// A sink that records the order it was fed in, and fails when told to.
    struct Recording {
        name: &'static str,
        fed: Rc<RefCell<Vec<&'static str>>>,
        fails: Option<bool>,
    }

    impl Sink for Recording {
        fn deliver(
            &self,
            result: &Delivery<'_>,
            done: &mut Done,
            _: &dyn Forge,
        ) -> anyhow::Result<()> {
            assert_eq!(result.text(), "# report\n");
            self.fed.borrow_mut().push(self.name);
            match self.fails {
                Some(true) => anyhow::bail!("cannot"),
                Some(false) => done.ending = Ending::Failed,
                None => {}
            }
            Ok(())
        }
    }

    #[test]
    fn every_sink_is_fed_in_order_and_an_error_stops_the_rest() {
        let forge = crate::forge::detect(&crate::forge::Vars::default(), None);
        let fed = Rc::new(RefCell::new(Vec::new()));
        let sink = |name, fails| Recording {
            name,
            fed: fed.clone(),
            fails,
        };
        let result = Delivery::given("# report\n".to_owned());
        // No analysis: judged, the verdict is error; a failure said by a sink is kept.
        let sinks = Sinks::new(true).with(sink("a", None)).with(sink("b", None));
        assert_eq!(
            sinks.deliver(&result, forge.as_ref()).unwrap(),
            Ending::Judged(Verdict::Error)
        );
        let sinks = Sinks::new(false)
            .with(sink("c", Some(false)))
            .with_some(Some(sink("d", None)))
            .with_some(None::<Recording>);
        assert_eq!(
            sinks.deliver(&result, forge.as_ref()).unwrap(),
            Ending::Failed
        );
        let sinks = Sinks::new(false)
            .with(sink("e", Some(true)))
            .with(sink("f", None));
        assert!(sinks.deliver(&result, forge.as_ref()).is_err());
        assert_eq!(*fed.borrow(), ["a", "b", "c", "d", "e"]);
    }
}
