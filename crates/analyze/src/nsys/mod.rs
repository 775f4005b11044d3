//! Running NVIDIA's `nsys`: finding it, asking its version, and the `nsys stats` runs that
//! turn a trace into the CSV reports (the two NVTX reports, required, and the GPU-work
//! reports, optional): one call, or one export and concurrent processes over it, with what
//! happened to each report classified from the files it left and the words it printed.
//!
//! nsys's exit status does not tell success: it exits 0 after an "incompatible report" error
//! and after a skipped report, leaving 0-byte CSVs. So every outcome here is decided from the
//! CSVs' sizes and nsys's own messages (contract section 2).
//!
//! One file per job:
//!
//! - `locate.rs`: which nsys runs: `--nsys`, `$NSYS`, `PATH`, the usual install places and
//!   the project's installs ([`NsysChoice`], [`locate()`]).
//! - `version.rs`: its version ([`identify`], [`Nsys`]) and what a version means here
//!   ([`TESTED_VERSIONS`], [`adds_default_domain_prefix`]).
//! - `stats.rs`: the `nsys stats` run: which reports this nsys has, how they are split into
//!   concurrent processes ([`StatsPlan`]), and the stamp of what each process did
//!   ([`run_stats`]).
//! - `stamp.rs`: the files a run leaves under `stats/`: the CSVs' names, the export and the
//!   stamp ([`StatsStamp`], [`read_stamp`]), read back by `--reuse-stats`.
//! - `words.rs`: reading nsys's words: what it did with each report, a trace from a newer
//!   nsys, the excerpt a message quotes, a command as messages show it.
//! - `process.rs`: running one nsys process: captured output of bounded size, a timeout,
//!   SIGINT/SIGTERM forwarded to its process group.
//! - `error.rs`: [`NsysError`], every way running nsys fails, and its kind for the report.
//!
//! They use one another in one direction: `stats` uses all the others but `locate`;
//! `version` uses `process` and `error`; `process` uses `words` (excerpts, commands) and
//! `error`; `locate` uses `error`; `words`, `error` and `stamp` use none of them.

mod error;
mod locate;
mod process;
mod stamp;
mod stats;
mod version;
mod words;

pub use error::NsysError;

pub use locate::{locate, NsysChoice};
pub use nsys_gate_core::artifact::DOWNLOAD_URL;
pub use stamp::{csv_path, is_sqlite_trace, read_stamp, StatsStamp, EXPORT_FILE, STAMP_FILE};
pub use stats::{clear_outputs, identify_with_plan, run_stats, ReportPlan, Slots, StatsPlan};
pub use version::{adds_default_domain_prefix, is_tested_version, Nsys};
