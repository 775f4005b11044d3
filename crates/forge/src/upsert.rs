//! The one comment per key ([`upsert`]), on every forge: found by its marker and author
//! ([`Matcher`]), updated in place, created when missing, left alone when unchanged. A create
//! is never sent twice blindly, duplicates a race left behind are deleted (the oldest is
//! kept), and a body the server calls too long is sent once more, shortened. The forge's
//! calls are a [`Thread`]: a pull request's comments (GitHub, Gitea), a merge request's notes
//! (GitLab).

use std::time::Duration;

use super::comment::{Comment, Matcher};
use super::http::{ApiError, Client};
use nsys_gate_core::say::say;

/// The answer to a create.
#[derive(Debug)]
pub enum Created {
    Done(Comment),
    /// It failed in a way that may or may not have created the comment (5xx, timeout) or
    /// was refused for a rate limit: list before trying again.
    Unknown {
        wait: Duration,
        reason: String,
    },
}

/// The comments of one change request, as a forge's API reads and writes them. Every
/// comment handed back is redacted (its URL may be shown and stored).
pub trait Thread {
    /// The client the calls go through (its deadline, tries and waits).
    fn client(&self) -> &Client;
    /// The comments' API path, for messages.
    fn path(&self) -> String;
    /// Every comment `ours` matches, every page read (the others dropped as each page is
    /// read: another author's comments, marked or not, take no memory).
    async fn list(&self, ours: &Matcher) -> Result<Vec<Comment>, ApiError>;
    /// One create, never sent twice by this call.
    async fn create(&self, body: &str) -> Result<Created, ApiError>;
    async fn update(&self, id: u64, body: &str) -> Result<Comment, ApiError>;
    /// Deleted, or already gone.
    async fn delete(&self, id: u64) -> Result<(), ApiError>;
}

/// The calls every forge's [`Thread`] makes the same way, on its own URLs and JSON: `T` is a
/// comment as the forge's JSON has it, `comment` reads it as the crate does.
pub mod calls {
    use http::Method;
    use serde::de::DeserializeOwned;
    use serde_json::json;

    use super::{Comment, Created, Matcher};
    use crate::http::{ApiError, Client, Once};

    /// Every comment on every page from `url` (at most `max_pages`; more is an error naming
    /// `what`) that `keep` keeps and `ours` matches; with `streamed`, each page streamed through a temporary
    /// file of at most that many bytes and parsed as it is read ([`Client::pages_streamed`]).
    pub async fn list<T: DeserializeOwned>(
        client: &Client,
        url: String,
        (max_pages, streamed): (usize, Option<u64>),
        (what, ours): (&str, &Matcher),
        keep: impl Fn(&T) -> bool,
        comment: impl Fn(T) -> Comment,
    ) -> Result<Vec<Comment>, ApiError> {
        let mut all = Vec::new();
        let mut each = |page: Vec<T>| {
            all.extend(
                page.into_iter()
                    .filter(|c| keep(c))
                    .map(&comment)
                    .filter(|c| ours.matches(c)),
            );
            true
        };
        let complete = match streamed {
            None => client.pages(url.clone(), max_pages, each).await?,
            Some(cap) => {
                client
                    .pages_streamed(url.clone(), (max_pages, cap), &mut each)
                    .await?
            }
        };
        if !complete {
            return Err(ApiError::Response {
                method: "GET".into(),
                path: client.display_path(&url),
                message: format!("more than {max_pages} pages of {what}"),
            });
        }
        Ok(all)
    }

    /// One POST of `body` to `url`, never sent twice: the comment (200, 201), unknown, or
    /// the failure.
    pub async fn create<T: DeserializeOwned>(
        client: &Client,
        url: &str,
        body: &str,
        comment: impl FnOnce(T) -> Comment,
    ) -> Result<Created, ApiError> {
        match client.post_once(url, &json!({ "body": body })).await? {
            Once::Unknown { wait, reason } => Ok(Created::Unknown { wait, reason }),
            Once::Reply(reply) if reply.status == 201 || reply.status == 200 => {
                Ok(Created::Done(comment(client.parse("POST", url, &reply)?)))
            }
            Once::Reply(reply) => Err(client.failure("POST", url, &reply)),
        }
    }

    /// `body` as comment `id`'s at `url`, by `method` (PATCH, PUT); a 204 (Gitea's answer for
    /// a comment without content) is the comment with nothing known but its ID.
    pub async fn update<T: DeserializeOwned>(
        client: &Client,
        method: Method,
        url: &str,
        id: u64,
        body: &str,
        comment: impl FnOnce(T) -> Comment,
    ) -> Result<Comment, ApiError> {
        let name = method.as_str().to_owned();
        let reply = client
            .request(method, url, Some(&json!({ "body": body })))
            .await?;
        match reply.status {
            200 | 201 => Ok(comment(client.parse(&name, url, &reply)?)),
            204 => Ok(Comment {
                id,
                ..Comment::default()
            }),
            _ => Err(client.failure(&name, url, &reply)),
        }
    }

    /// The comment at `url` deleted, or already gone (404: someone else deleted it first).
    pub async fn delete(client: &Client, url: &str) -> Result<(), ApiError> {
        let reply = client.request(Method::DELETE, url, None).await?;
        match reply.status {
            200 | 204 | 404 => Ok(()),
            _ => Err(client.failure("DELETE", url, &reply)),
        }
    }
}

/// What [`upsert`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Upserted {
    Created { id: u64, url: Option<String> },
    Updated { id: u64, url: Option<String> },
    Unchanged { id: u64, url: Option<String> },
}

impl Upserted {
    /// The comment's URL, when the server gave one.
    pub fn url(&self) -> Option<&str> {
        match self {
            Upserted::Created { url, .. }
            | Upserted::Updated { url, .. }
            | Upserted::Unchanged { url, .. } => url.as_deref(),
        }
    }

    /// `created`, `updated` or `unchanged`.
    pub fn verb(&self) -> &'static str {
        match self {
            Upserted::Created { .. } => "created",
            Upserted::Updated { .. } => "updated",
            Upserted::Unchanged { .. } => "unchanged",
        }
    }
}

/// The body to post, and how to shrink it when the server says it is too long.
pub struct CommentBody<'a> {
    pub text: String,
    /// The body within this many characters (the marker kept first).
    pub shrink: &'a dyn Fn(usize) -> String,
}

/// Creates or updates the one comment of `matcher.key` in `thread`.
pub async fn upsert(
    thread: &impl Thread,
    matcher: &Matcher,
    body: CommentBody<'_>,
) -> Result<Upserted, ApiError> {
    let mut text = body.text.clone();
    let mut shrunk = false;
    loop {
        match upsert_once(thread, matcher, &text).await {
            Err(ApiError::TooLong { message, .. }) if !shrunk => {
                shrunk = true;
                // Half, or under the limit the server names if that is smaller.
                let chars = text.chars().count();
                let named = stated_maximum(&message).map_or(usize::MAX, |m| m - m / 20);
                let smaller = (body.shrink)((chars / 2).min(named));
                say!(
                    "nsys-gate: the server refused the comment as too long ({message}); sending it shortened to {} characters",
                    smaller.chars().count()
                );
                text = smaller;
            }
            other => return other,
        }
    }
}

/// `N` of "… (maximum is N characters)".
fn stated_maximum(message: &str) -> Option<usize> {
    let at = message.find("maximum is ")? + "maximum is ".len();
    let digits: String = message[at..]
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == ',')
        .filter(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// One pass with `text`: update ours (deleting any duplicates), or create it.
async fn upsert_once(
    thread: &impl Thread,
    matcher: &Matcher,
    text: &str,
) -> Result<Upserted, ApiError> {
    let client = thread.client();
    let ours = list_ours(thread, matcher).await?;
    if let Some((first, rest)) = ours.split_first() {
        let outcome = update(thread, first, text).await?;
        for extra in rest {
            thread.delete(extra.id).await?;
        }
        return Ok(outcome);
    }

    // None yet: create, without ever sending the same POST twice blindly.
    let mut tries = 0;
    let created = loop {
        tries += 1;
        match thread.create(text).await? {
            Created::Done(c) => break Some(c),
            Created::Unknown { wait, reason } => {
                if tries >= client.config().max_tries {
                    return Err(ApiError::GaveUp {
                        tries,
                        last: reason,
                    });
                }
                client.sleep(wait, &reason).await?;
                // The failed POST may have been applied: look before posting again.
                let ours = list_ours(thread, matcher).await?;
                if !ours.is_empty() {
                    break None;
                }
            }
        }
    };

    // Another job may have created the same comment at the same time: keep the oldest.
    let ours = list_ours(thread, matcher).await?;
    let Some((first, rest)) = ours.split_first() else {
        // Listed without it (a replica lagging behind): trust the create.
        let c = created.ok_or_else(|| ApiError::Response {
            method: "GET".into(),
            path: thread.path(),
            message: "the comment just created is not listed".into(),
        })?;
        return Ok(Upserted::Created {
            id: c.id,
            url: c.url,
        });
    };
    for extra in rest {
        thread.delete(extra.id).await?;
    }
    match created {
        Some(c) if c.id == first.id => Ok(Upserted::Created {
            id: c.id,
            url: c.url.or_else(|| first.url.clone()),
        }),
        _ => update(thread, first, text).await,
    }
}

/// Puts `text` in `existing`, unless it is there already.
async fn update(
    thread: &impl Thread,
    existing: &Comment,
    text: &str,
) -> Result<Upserted, ApiError> {
    if same_text(existing.body(), text) {
        return Ok(Upserted::Unchanged {
            id: existing.id,
            url: existing.url.clone(),
        });
    }
    let c = thread.update(existing.id, text).await?;
    Ok(Upserted::Updated {
        id: existing.id,
        url: c.url.or_else(|| existing.url.clone()),
    })
}

/// Equal but for line endings and trailing white space (which servers may normalise).
fn same_text(a: &str, b: &str) -> bool {
    a.replace("\r\n", "\n").trim_end() == b.replace("\r\n", "\n").trim_end()
}

/// Our comments, oldest (lowest id) first.
async fn list_ours(thread: &impl Thread, matcher: &Matcher) -> Result<Vec<Comment>, ApiError> {
    let mut ours: Vec<Comment> = thread.list(matcher).await?;
    ours.sort_by_key(|c| c.id);
    Ok(ours)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stated_maximum_is_read() {
        assert_eq!(
            stated_maximum("Validation Failed: Body is too long (maximum is 65536 characters)"),
            Some(65536)
        );
        assert_eq!(stated_maximum("Body is too long"), None);
    }
}
