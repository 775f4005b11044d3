//! The one HTTP client of every forge: [`transport`] (octocrab's raw request methods over a
//! client built here; the token in the forge's header, only to the API's own host), [`retry`]
//! (our own retries within a deadline), [`client`] (calls, pages, a download's redirect
//! followed without the token), [`config`] (a client's settings), [`token`] (the token and
//! its redaction from server text), [`error`] (why a request failed).
//!
//! The files depend on each other one way: [`error`] <- [`token`] <- [`config`] <-
//! [`transport`] <- [`retry`] <- [`client`].

pub mod client;
pub mod config;
pub mod error;
mod retry;
pub mod token;
mod transport;

pub use client::{Client, Once};
pub use config::{Auth, AuthHeader, ClientConfig};
pub use error::PostError;
pub use token::Token;

/// The one async runtime of a stage (posting, fetching the history): a current-thread tokio
/// runtime; `Err` says why it cannot start.
pub fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))
}
