//! What a [`super::Client`] is built from ([`ClientConfig`]): the API, the token, the forge's
//! dialect, the tries and the time limits. The transport reads the URL, the token, its header,
//! the timeouts and the deadline; the retry policy the tries and the deadline.

use std::time::{Duration, Instant};

use super::dialect::Dialect;
use super::token::Token;

/// A client's settings.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// The API's base URL (`https://api.github.com`, `https://HOST/api/v3`,
    /// `https://HOST/api/v1`, `https://HOST/api/v4`).
    pub api_url: String,
    pub token: Token,
    /// The forge's ways: its token header, paging, errors, rate limits.
    pub dialect: &'static Dialect,
    /// Tries of one request (1 = no retry).
    pub max_tries: u32,
    /// The stage's deadline: every request, page, redirect, wait and byte of a body ends
    /// before it.
    pub deadline: Deadline,
    pub connect_timeout: Duration,
    /// One request, from sending it to the last byte of the response (and never past the
    /// deadline).
    pub request_timeout: Duration,
    /// Where the proxy variables (`HTTPS_PROXY`, `NO_PROXY`, ...) are read from.
    pub proxy_vars: ProxyVars,
}

/// Where a client reads the proxy variables from.
#[derive(Debug, Clone, Default)]
pub enum ProxyVars {
    /// The process's environment, as curl reads it.
    #[default]
    Process,
    /// These only (a test's, which the machine's proxy must not reach).
    Given(Vec<(String, String)>),
}

impl ClientConfig {
    /// A client for a stage of `limit` from now, named by its option (`--post-timeout`) in
    /// the messages: one request gets at most half of it (30 s at most), a connection 10 s.
    pub fn for_stage(
        api_url: String,
        (token, dialect): (Token, &'static Dialect),
        limit: Duration,
        option: &'static str,
    ) -> Self {
        ClientConfig {
            api_url,
            token,
            dialect,
            max_tries: 3,
            deadline: Deadline::after(limit, option),
            connect_timeout: (limit / 2).min(Duration::from_secs(10)),
            request_timeout: (limit / 2).min(Duration::from_secs(30)),
            proxy_vars: ProxyVars::Process,
        }
    }
}

/// A century, in seconds: the deadline of a limit the clock cannot hold.
const FAR_SECS: u64 = 100 * 365 * 24 * 3600;

/// When a stage must be over: a wall-clock time, and how it was given.
#[derive(Debug, Clone, Copy)]
pub struct Deadline {
    pub at: Instant,
    /// The limit it was set from.
    pub limit: Duration,
    /// The option that sets it (`--post-timeout`).
    pub option: &'static str,
}

impl Deadline {
    /// `limit` from now; a limit past what the clock can hold (`--post-timeout
    /// 9223372036854775807`) is a century, which no stage reaches.
    pub fn after(limit: Duration, option: &'static str) -> Self {
        let now = Instant::now();
        Deadline {
            at: now
                .checked_add(limit)
                .unwrap_or_else(|| now + Duration::from_secs(FAR_SECS)),
            limit,
            option,
        }
    }

    /// The time left (zero once passed).
    pub fn left(&self) -> Duration {
        self.at.saturating_duration_since(Instant::now())
    }

    /// For messages: `the time limit of 60 s (--post-timeout)`.
    pub fn describe(&self) -> String {
        format!(
            "the time limit of {} s ({})",
            self.limit.as_secs_f64().ceil(),
            self.option
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--baseline-timeout 9223372036854775807` panicked: "overflow when adding duration to
    /// instant".
    #[test]
    fn a_limit_past_the_clock_is_a_far_deadline_not_a_panic() {
        for secs in [u64::MAX, i64::MAX as u64, FAR_SECS * 2] {
            let d = Deadline::after(Duration::from_secs(secs), "--post-timeout");
            assert!(d.left() > Duration::from_secs(FAR_SECS / 2), "{secs}");
            assert!(d.describe().contains("--post-timeout"));
        }
    }
}
