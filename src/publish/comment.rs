//! The pull request's comment: its body (the report, marker first, cut or rendered again
//! smaller to fit the forge's limit: [`comment_body`]), posted through the [`Forge`].

use super::{Delivery, Done, Sink};
use crate::forge::{ApiError, CommentBody, CommentKey, CommentSettings, Forge, Level, Posted};
use crate::gate::Ending;
use crate::interrupt;
use crate::render::marker::comment_body;
use crate::render::Budget;
use crate::say;

/// The comment's sink: the report posted as the change request's comment of `key`, marker of
/// `key` first, cut to the forge's comment limit; when the server refuses it as too long,
/// rendered again within what it allows (tables shrink first, as for the step summary). A
/// failure is said at `failure`'s level; as an error it ends the command failed.
pub struct CommentSink {
    pub key: CommentKey,
    pub settings: CommentSettings,
    /// How a failure to post is said, and whether it fails the command.
    pub failure: Level,
}

impl Sink for CommentSink {
    fn deliver(
        &self,
        result: &Delivery<'_>,
        done: &mut Done,
        forge: &dyn Forge,
    ) -> anyhow::Result<()> {
        let key = &self.key;
        let body = comment_body(result.text(), key, forge.comment_limit());
        let shrink = |chars: usize| {
            let text = result
                .within(Budget::Chars(chars))
                .unwrap_or_else(|_| result.text().to_owned());
            comment_body(&text, key, chars)
        };
        interrupt::doing(POSTING);
        let posted = forge.post_comment(
            &self.settings,
            key,
            CommentBody {
                text: body,
                shrink: &shrink,
            },
        );
        if let Posted::Failed(err) = posted {
            let word = match self.failure {
                Level::Error => "error",
                Level::Warning => "warning",
            };
            print_post_failure(word, &err, forge);
            if self.failure == Level::Error {
                done.ending = Ending::Failed;
            }
        }
        Ok(())
    }
}

/// What a command is doing while it posts.
const POSTING: &str = "posting the pull-request comment; it may or may not have been created or updated (the next run finds it by its marker)";

/// Prints why posting failed, with the forge's hint when the token may not write (a fork).
fn print_post_failure(level: &str, err: &ApiError, forge: &dyn Forge) {
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
