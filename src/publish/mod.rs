//! What becomes of a rendered report: [`output`] writes it (report.md, and comparison.json
//! beside it), prints it and, in GitHub Actions, adds it to the runner's files (step summary,
//! annotations, step outputs); [`comment`] posts it as the pull request's one comment of its
//! key, cut or rendered again smaller to fit; [`junit`] writes the gate as a JUnit XML report
//! (`--junit`).

pub mod comment;
pub mod junit;
pub mod output;

pub use comment::Rendered;
pub use output::{deliver, Destination, Output};
