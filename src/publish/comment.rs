//! The pull request's comment: its body (the report, marker first, cut or rendered again
//! smaller to fit the forge's limit), posted through the [`Forge`].

use crate::artifact::comparison::Comparison;
use crate::forge::marker::with_marker;
use crate::forge::{ApiError, CommentBody, CommentKey, CommentSettings, Forge, Posted};
use crate::outcome::RunOutcome;
use crate::render::{limit, Budget, RenderOptions, Renderer};
use crate::say;

/// The report cut to `chars` characters at a line boundary, the first line (the marker) kept;
/// unchanged when it fits.
pub fn cut(text: &str, chars: usize) -> String {
    limit::cut(
        text,
        Budget::Chars(chars),
        &format!(
            "**This report was cut to fit the server's limit of {} characters.** The full report is in the job's report.md.",
            crate::units::thousands(chars)
        ),
    )
}

/// A report rendered here, as the comment of `key` shows it.
pub struct Rendered<'a> {
    pub renderer: &'a Renderer<'a>,
    pub outcomes: &'a [RunOutcome],
    pub comparison: Option<&'a Comparison>,
    pub options: &'a RenderOptions,
    /// The report as rendered within `options`.
    pub report: &'a str,
}

impl Rendered<'_> {
    /// Posts the report as the comment of `key`: marker of `key` first, cut to the forge's
    /// comment limit; when the server refuses it as too long, rendered again within what it
    /// allows (tables shrink first, as for the step summary).
    pub fn post(&self, key: &CommentKey, settings: &CommentSettings, forge: &dyn Forge) -> Posted {
        let body = cut(&with_marker(self.report, key), forge.comment_limit());
        let shrink = |chars: usize| {
            let text = self
                .renderer
                .render_with(
                    self.outcomes,
                    self.comparison,
                    &self.options.within(Budget::Chars(chars)),
                )
                .unwrap_or_else(|_| self.report.to_owned());
            cut(&with_marker(&text, key), chars)
        };
        forge.post_comment(
            settings,
            key,
            CommentBody {
                text: body,
                shrink: &shrink,
            },
        )
    }
}

/// Prints why posting failed, with the forge's hint when the token may not write (a fork).
pub fn print_post_failure(level: &str, err: &ApiError, forge: &dyn Forge) {
    let mut text = format!(
        "nsys-gate: {level}: cannot post the {} comment: {err}",
        forge.words().change_request.replace(' ', "-")
    );
    if err.is_no_access() {
        text.push_str("\n  hint: ");
        text.push_str(forge.access_hint());
    }
    say::message(&text);
}
