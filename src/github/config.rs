//! What a [`super::Client`] is built from ([`ClientConfig`]): the API, the token, the tries
//! and the time limits. The transport reads the URL, the token and the timeouts; the retry
//! policy the tries and the budget.

use std::time::Duration;

use super::token::Token;

/// The default API base.
pub const DEFAULT_API_URL: &str = "https://api.github.com";

/// A client's settings.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// `GITHUB_API_URL`: `https://api.github.com`, `https://HOST/api/v3`, `https://HOST/api/v1`.
    pub api_url: String,
    pub token: Token,
    /// Tries of one request (1 = no retry).
    pub max_tries: u32,
    /// All waiting between tries together stays under this.
    pub budget: Duration,
    pub connect_timeout: Duration,
    /// One request, from sending it to the last byte of the response.
    pub request_timeout: Duration,
}
