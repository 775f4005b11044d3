//! The bottom layer of nsys-gate: the types every later stage reads and writes, and what every
//! layer shares (docs/architecture.md draws the layers).
//!
//! - [`artifact`]: analysis.json's and comparison.json's types (the contract), written
//!   atomically; [`gate`]: which warnings fail the job, and the exit status; [`outcome`]: a run
//!   directory's result, an analysis or a typed failure;
//! - [`stats`] and [`units`]: the statistics and the numbers for people;
//! - [`text`]: untrusted text shown on one line, inert; [`say`]: the one writer of standard
//!   output and standard error (inside GitHub Actions nothing it writes is a workflow command,
//!   but the annotations meant as ones); [`files`]: every file read (regular files only, with a
//!   bound) and written (atomically); [`interrupt`]: SIGINT/SIGTERM turned into a clean stop.

pub mod artifact;
pub mod files;
pub mod gate;
pub mod interrupt;
pub mod outcome;
pub mod say;
pub mod stats;
pub mod text;
pub mod units;
