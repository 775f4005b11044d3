//! nsys-gate: from a profiling run directory to `analysis.json`, a report and a CI gate.
//!
//! The pipeline runs top to bottom through the workspace's crates, each depending only on the
//! ones below it (`docs/architecture.md` draws them; tests/cli/layers.rs checks it):
//!
//! 1. `nsys-gate-core`: analysis.json's and comparison.json's types, the statistics, the gate,
//!    and what every layer shares ([`say`], [`text`], [`files`], [`interrupt`]);
//! 2. `nsys-gate-analyze`: stages 1-6 for one run directory ([`pipeline`]: the manifest, nsys
//!    and its reports, the analysis);
//! 3. `nsys-gate-compare`: the current runs against the base branch's history ([`compare`],
//!    [`load`], [`history`]);
//! 4. `nsys-gate-render`: the markdown report ([`render`]);
//! 5. `nsys-gate-forge`: everything that depends on a code host or CI system ([`forge`]);
//! 6. this crate, the binary: [`cli`] reads the command line once, [`commands`] holds one file
//!    per subcommand, [`baseline`] picks the base runs (paths, or the forge's history), and
//!    [`publish`] holds the sinks every command feeds its result through: the JUnit report,
//!    report.md and comparison.json, standard output, and through the forge the CI step's
//!    files and the pull-request comment.
//!
//! The lower crates' modules are re-exported here under their own names, so that
//! `nsys_gate::artifact` is what it always was.

pub(crate) mod baseline;
pub(crate) mod cli;
pub mod commands;
pub(crate) mod publish;

pub use nsys_gate_analyze::{analysis, manifest, nsys, pipeline, progress, reports, rundir};
pub use nsys_gate_compare::{compare, history, load, unpack};
pub use nsys_gate_core::{artifact, files, gate, interrupt, outcome, say, stats, text, units};
pub use nsys_gate_forge as forge;
pub use nsys_gate_render as render;

pub use artifact::TOOL_VERSION;
pub use nsys::{NsysChoice, StatsPlan};
pub use pipeline::{analyze, AnalyzeError, AnalyzeOptions};

pub use artifact::ANALYSIS_FILE;
pub use rundir::STATS_DIR;
