//! nsys-gate: from a profiling run directory to `analysis.json`, a report and a CI gate.
//!
//! The pipeline, one module per stage, each taking and returning plain data
//! (`docs/architecture.md` draws it):
//!
//! 1. [`rundir`] + [`manifest`]: read `manifest.yaml`, check the trace belongs to the run;
//! 2. [`nsys`]: find nsys, run `nsys stats` for the five reports (one call, or concurrent
//!    processes over one export: [`StatsPlan`]), classify what it did with each;
//! 3. [`reports`]: read the CSV reports into compact rows: the two NVTX ones (required) and
//!    the three GPU-work ones (each optional);
//! 4. [`analysis`] (+ [`stats`]): iterations, statistics, range tables, warnings, advice;
//! 5. [`gate`]: which warnings fail the job, and the exit status;
//! 6. [`artifact`]: `analysis.json`, written atomically;
//! 7. [`compare`] (+ [`baseline`], and [`history`] for `--baseline auto`: the base runs'
//!    artifacts the forge lists and hands over, unpacked, read and reduced): the current runs
//!    against the base branch's history;
//! 8. [`render`]: the markdown report of [`outcome`]s (analyses and typed failures);
//! 9. [`publish`]: the sinks every command feeds its result through: the JUnit report,
//!    report.md and comparison.json, standard output, and through the [`forge`] (GitHub,
//!    GitLab, Gitea) the CI step's files and the pull-request comment. Everything that depends on a code
//!    host or CI system is in [`forge`].
//!
//! [`pipeline`] runs stages 1-6 for one run directory; [`commands`] holds one file per
//! subcommand and reads the command line and the environment once. [`load`] reads
//! analysis.json back; [`files`] opens every file the tool reads (regular files only, read with
//! a bound) and writes files atomically; [`text`] shows untrusted text on one line, inert.
//! `trace_env` reads the environment nsys recorded in the trace (to name credentials in it);
//! `interrupt` turns SIGINT/SIGTERM into a clean stop of nsys and of the analysis. [`say`] is
//! the one writer of standard output and standard error: inside GitHub Actions nothing it
//! writes is a workflow command, but the annotations meant as ones.

pub(crate) mod analysis;
pub mod artifact;
pub(crate) mod baseline;
pub(crate) mod cli;
pub mod commands;
pub(crate) mod compare;
pub(crate) mod files;
pub(crate) mod forge;
pub mod gate;
pub(crate) mod history;
pub(crate) mod interrupt;
pub(crate) mod load;
pub(crate) mod manifest;
pub(crate) mod nsys;
pub mod outcome;
pub(crate) mod pipeline;
pub mod progress;
pub(crate) mod publish;
pub mod render;
pub mod reports;
pub(crate) mod rundir;
pub(crate) mod say;
pub(crate) mod stats;
pub(crate) mod text;
pub(crate) mod trace_env;
pub(crate) mod units;
pub(crate) mod unpack;

pub use artifact::TOOL_VERSION;
pub use nsys::{NsysChoice, StatsPlan};
pub use pipeline::{analyze, AnalyzeError, AnalyzeOptions};

pub use artifact::ANALYSIS_FILE;
pub use rundir::STATS_DIR;
