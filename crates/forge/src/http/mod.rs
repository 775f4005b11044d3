//! The one HTTP client of every forge, which knows no forge: [`transport`] (a hyper client,
//! directly or through the environment's proxy ([`proxy`]); the token and the forge's own
//! headers only to the API's own host), [`retry`] (our own retries within a deadline),
//! [`client`] (calls, pages, a download's redirect followed without the token), [`config`] (a
//! client's settings), [`dialect`] (what each forge's API says its own way: paging, errors,
//! rate limits, "too long"; each forge defines its own), [`token`] (the token and its redaction
//! from server text), [`error`] (why a request failed).
//!
//! The files depend on each other one way: [`error`] <- [`token`] <- [`dialect`] <- [`config`]
//! <- [`proxy`] <- [`transport`] <- [`retry`] <- [`client`].

pub mod client;
pub mod config;
pub mod dialect;
pub mod error;
mod proxy;
mod retry;
pub mod token;
mod transport;

pub use client::{Client, Once};
pub use config::{ClientConfig, ProxyVars};
pub use dialect::{AuthHeader, Dialect, RateLimit};
pub use error::ApiError;
pub use token::Token;

/// The characters a query value keeps as given (RFC 3986's unreserved ones).
const QUERY_VALUE: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// `value` (a branch, a workflow file, an artifact name) as a URL's query value or path
/// segment: anything but letters, digits and `-_.~` percent-encoded.
pub fn query_value(value: &str) -> String {
    percent_encoding::utf8_percent_encode(value, QUERY_VALUE).to_string()
}

/// The one async runtime of a stage (posting, fetching the history): a current-thread tokio
/// runtime; `Err` says why it cannot start.
pub fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_query_value_keeps_only_the_unreserved_characters() {
        assert_eq!(super::query_value("main"), "main");
        assert_eq!(super::query_value("a-b_c.d~e"), "a-b_c.d~e");
        assert_eq!(
            super::query_value("feat/x y&z=ü"),
            "feat%2Fx%20y%26z%3D%C3%BC"
        );
    }
}
