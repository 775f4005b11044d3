//! The pull-request comment: the only code that talks to GitHub, and the only async code.
//!
//! One comment per key, found by the hidden marker `<!-- nsys-gate:KEY -->` on its first
//! line ([`marker::CommentKey::marker`]; a key taken from an artifact in a namespace of its
//! own) and by its author ([`comment`]), updated in place with `PATCH`,
//! created when missing, left alone when unchanged ([`mod@upsert`]). [`client`] holds the API
//! calls, over the HTTP edge: [`transport`] (octocrab's generic request methods over a client
//! built here) and [`retry`] (our own retries); [`artifacts`] fetches the base branch's
//! artifact for `--baseline auto`; [`event`] finds the pull request of a GitHub Actions event.
//! [`repo`] checks `owner/name`, [`config`] holds a client's settings, [`error`] why a post
//! failed.
//!
//! The token is a [`Token`] ([`token`]): its `Debug` and `Display` print `***`, and no error
//! holds it. Server text that could echo it (bodies, messages, URLs from `link`, a comment's
//! URL) goes through [`Token::redact`] in [`transport`] and [`client`] before anything shows
//! or stores it.
//!
//! The files depend on each other one way: [`error`] <- [`token`] <- [`config`] <-
//! [`transport`] <- [`retry`] <- [`client`] <- [`artifacts`], [`mod@upsert`]; [`repo`] and
//! [`comment`] (over [`marker`]) sit beside them.

pub mod artifacts;
pub mod client;
pub mod comment;
pub mod config;
pub mod error;
pub mod event;
pub mod marker;
pub mod repo;
mod retry;
pub mod token;
mod transport;
pub mod upsert;

pub use client::Client;
pub use comment::{Matcher, DEFAULT_AUTHOR};
pub use config::{ClientConfig, DEFAULT_API_URL};
pub use error::{PostError, FORK_HINT};
pub use event::EventPr;
pub use repo::Repo;
pub use token::Token;
pub use upsert::{upsert, CommentBody, Upserted};
