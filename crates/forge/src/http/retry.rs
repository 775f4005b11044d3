//! The retry policy: what is tried again, after how long, and before what deadline.
//!
//! A transport failure or a timeout, a 5xx, a 429 and what the forge's dialect calls a rate
//! limit (GitHub's 403 with `x-ratelimit-remaining: 0`) are tried again ([`retry_wait`]): after
//! `retry-after`, else the reset the forge names, else a backoff that doubles from 1 s to 32 s
//! (at least [`RATE_LIMIT_WAIT`] for a rate limit). Every other reply is
//! final, and so is a reply over the transport's cap. A request gets at most
//! [`ClientConfig::max_tries`] tries, and no wait goes past [`ClientConfig::deadline`]
//! ([`Retry::sleep`]).
//! [`Retry::request`] retries only idempotent requests; a create is tried once with
//! [`try_once`] and its caller decides what to do when that may or may not have worked.

use std::time::Duration;

use http::Method;
use serde_json::Value;

use super::config::{ClientConfig, Deadline};
use super::dialect::{self, Dialect};
use super::error::ApiError;
use super::transport::{message_of, Reply, SendError, Spill, Transport};
use nsys_gate_core::say::say;

/// The wait before retrying a rate limit that names no time.
const RATE_LIMIT_WAIT: Duration = Duration::from_secs(10);

/// One try's verdict.
pub(super) enum Try {
    Reply(Reply),
    /// Worth another try after `wait`.
    Again {
        wait: Duration,
        reason: String,
    },
    /// Failed in a way another try would repeat (a reply over the cap).
    Fail(ApiError),
}

/// The tries and the deadline of one client.
pub(super) struct Retry {
    /// Tries of one request (1 = no retry).
    max_tries: u32,
    /// No wait goes past it.
    deadline: Deadline,
}

impl Retry {
    /// The policy of `config`.
    pub(super) fn new(config: &ClientConfig) -> Self {
        Retry {
            max_tries: config.max_tries,
            deadline: config.deadline,
        }
    }

    /// Waits before another try, or refuses when that would pass the deadline.
    pub(super) async fn sleep(&self, wait: Duration, reason: &str) -> Result<(), ApiError> {
        if wait > self.deadline.left() {
            return Err(ApiError::OutOfTime(format!(
                "{reason}; waiting {} s more would pass {}",
                wait.as_secs_f64().ceil(),
                self.deadline.describe()
            )));
        }
        say!(
            "nsys-gate: {reason}; trying again in {:.0} s",
            wait.as_secs_f64().ceil()
        );
        tokio::time::sleep(wait).await;
        Ok(())
    }

    /// Sends an idempotent request (GET, PATCH, DELETE), retrying 5xx, timeouts and rate
    /// limits within the tries and the deadline; a 200's body into `spill` when there is one.
    pub(super) async fn request(
        &self,
        transport: &Transport,
        (method, url): (Method, &str),
        body: Option<&Value>,
        mut spill: Option<&mut Spill<'_>>,
    ) -> Result<Reply, ApiError> {
        let mut tries = 0;
        loop {
            tries += 1;
            match try_once(transport, (&method, url), body, spill.as_deref_mut(), tries).await {
                Try::Reply(r) => return Ok(r),
                Try::Fail(e) => return Err(e),
                Try::Again { wait, reason } => {
                    if tries >= self.max_tries {
                        return Err(ApiError::GaveUp {
                            tries,
                            last: reason,
                        });
                    }
                    self.sleep(wait, &reason).await?;
                }
            }
        }
    }
}

/// One try (the `tries`-th) and its verdict: a reply to hand back, or a reason to try again.
pub(super) async fn try_once(
    transport: &Transport,
    (method, url): (&Method, &str),
    body: Option<&Value>,
    spill: Option<&mut Spill<'_>>,
    tries: u32,
) -> Try {
    let backoff = Duration::from_secs(1u64 << tries.saturating_sub(1).min(5));
    match transport.send_once(method, url, body, spill).await {
        Err(SendError::Again(message)) => Try::Again {
            wait: backoff,
            reason: format!("{method} {}: {message}", transport.display_path(url)),
        },
        Err(SendError::Final(e)) => Try::Fail(e),
        Ok(reply) => match retry_wait(transport.dialect, &reply, backoff) {
            Some(wait) => Try::Again {
                wait,
                reason: format!(
                    "{method} {}: HTTP {}: {}",
                    transport.display_path(url),
                    reply.status,
                    transport.message(&reply.body)
                ),
            },
            None => Try::Reply(reply),
        },
    }
}

/// How long to wait before another try, or `None` when the reply is final: 5xx and 429, and
/// what the forge calls a rate limit, wait for `retry-after`, else the reset the forge names,
/// else `backoff` (or longer for a rate limit).
fn retry_wait(dialect: &Dialect, reply: &Reply, backoff: Duration) -> Option<Duration> {
    let limit = (dialect.rate_limit)(
        reply.status,
        &reply.headers,
        &message_of(dialect, &reply.body),
    );
    let rate_limited = reply.status == 429 || limit.is_some();
    if !rate_limited && reply.status < 500 {
        return None;
    }
    if let Some(secs) =
        dialect::header(&reply.headers, "retry-after").and_then(|v| v.parse::<u64>().ok())
    {
        return Some(Duration::from_secs(secs));
    }
    if let Some(reset) = limit.and_then(|l| l.reset) {
        return Some(reset);
    }
    Some(if rate_limited {
        backoff.max(RATE_LIMIT_WAIT)
    } else {
        backoff
    })
}

#[cfg(test)]
mod tests {
    use super::super::transport::tests::reply;
    use super::*;
    use std::time::{SystemTime, UNIX_EPOCH};

    fn retry_wait(reply: &Reply, backoff: Duration) -> Option<Duration> {
        super::retry_wait(&crate::github::DIALECT, reply, backoff)
    }

    #[test]
    fn what_is_retried_and_for_how_long() {
        let b = Duration::from_secs(2);
        assert_eq!(retry_wait(&reply(200, &[], "[]"), b), None);
        assert_eq!(retry_wait(&reply(404, &[], "{}"), b), None);
        assert_eq!(
            retry_wait(
                &reply(
                    403,
                    &[],
                    r#"{"message":"Resource not accessible by integration"}"#
                ),
                b
            ),
            None
        );
        assert_eq!(retry_wait(&reply(502, &[], ""), b), Some(b));
        assert_eq!(
            retry_wait(&reply(429, &[("retry-after", "7")], ""), b),
            Some(Duration::from_secs(7))
        );
        let secondary = r#"{"message":"You have exceeded a secondary rate limit and have been temporarily blocked from content creation."}"#;
        assert_eq!(
            retry_wait(&reply(403, &[("retry-after", "3")], secondary), b),
            Some(Duration::from_secs(3))
        );
        assert_eq!(
            retry_wait(&reply(403, &[], secondary), b),
            Some(RATE_LIMIT_WAIT)
        );
        let reset = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs()
            + 30;
        let w = retry_wait(
            &reply(
                403,
                &[
                    ("x-ratelimit-remaining", "0"),
                    ("x-ratelimit-reset", &reset.to_string()),
                ],
                r#"{"message":"API rate limit exceeded"}"#,
            ),
            b,
        )
        .unwrap();
        assert!(
            (Duration::from_secs(28)..=Duration::from_secs(30)).contains(&w),
            "{w:?}"
        );
    }
}
