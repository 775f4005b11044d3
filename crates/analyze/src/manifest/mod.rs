//! Reading and validating the profiling harness's `manifest.yaml` (contract §1).
//!
//! The harness writes the manifest with PyYAML (`yaml.safe_dump(..., sort_keys=True)`), so it is
//! read with PyYAML's YAML 1.1 rules: a plain `000000000139` is a string, `yes` is a boolean,
//! `0755` is the integer 493 (see `scalar.rs`). [`parse`] turns the bytes into a [`Manifest`]
//! (`model.rs`) in three steps, each in its own module:
//!
//! 1. decoding and size check (`read.rs`, with [`read_bytes`]): at most [`read::MAX_MANIFEST_BYTES`];
//!    UTF-8, or UTF-16 with a byte order mark, like PyYAML's reader;
//! 2. composing one YAML document into a tree of nodes with line numbers (`yaml.rs`, the tree
//!    in `node.rs`), with bounded nesting and alias expansion;
//! 3. checking the keys this tool needs (`validate.rs`, near misses found by `near_miss.rs`),
//!    keeping the rest as JSON.
//!
//! Decisions a user may notice:
//! - `profile_name` and `run_id` accept a plain integer and keep it **as written**
//!   (`run_id: 20261129` is `"20261129"`). PyYAML's dumper quotes a string that looks like a
//!   number, so an integer there was typed by a person, who meant the name they typed; reading
//!   `0042` as the octal 34 would help nobody. Booleans, floats and null stay errors, since
//!   `run_id: yes` or `run_id: 1.50` would not round-trip as written.
//! - The informational keys `git_commit`, `device`, `command_line` and `expected_trace_path`
//!   accept any scalar and keep its text as written (an abbreviated commit `0123456` is a YAML
//!   1.1 octal integer); `null` means not recorded.
//! - `capture_range` must be a string or null: a number there is almost surely a mistake, and
//!   the error says how to quote it.
//! - A key repeated in one mapping is an error naming both lines (PyYAML keeps the last one).
//! - Unknown top-level keys go to [`Manifest::extra`]; those that look like a misspelling of a
//!   known key are also listed in [`Manifest::near_misses`] for the caller to warn about.
//!
//! YAML to JSON follows PyYAML's values (see `node.rs`); every error is a [`ManifestError`]
//! (`error.rs`).

pub mod error;
pub mod model;
mod near_miss;
mod node;
pub mod read;
mod scalar;
#[cfg(test)]
mod tests;
mod validate;
mod yaml;

pub use error::ManifestError;
pub use model::Manifest;
pub use read::{parse, read_bytes};
