//! Command-line interface: clap derive types only. Everything here is converted into plain
//! option structs before any work starts.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// Turns Nsight Systems NVTX reports of a profiling run into analysis.json and a CI gate.
#[derive(Debug, Parser)]
#[command(name = "nsys-gate", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Analyse one run directory: run `nsys stats`, read its CSVs, write analysis.json.
    ///
    /// Exit status: 0 analysis written and no gating warning; 1 analysis written with a
    /// gating warning; 2 no analysis (bad arguments, bad manifest, nsys missing or failed,
    /// unreadable reports).
    Analyze(AnalyzeArgs),
}

#[derive(Debug, Args)]
pub struct AnalyzeArgs {
    /// Run directory holding manifest.yaml and the trace.
    #[arg(long, value_name = "DIR")]
    pub run_dir: PathBuf,

    /// nsys executable [default: $NSYS, then PATH, then the usual install places].
    #[arg(long, value_name = "PATH")]
    pub nsys: Option<PathBuf>,

    /// Kill nsys and fail when `nsys stats` runs longer than this.
    #[arg(long, value_name = "SECONDS", default_value_t = 1800, value_parser = clap::value_parser!(u64).range(1..))]
    pub nsys_timeout: u64,

    /// Where to write the analysis [default: RUN_DIR/analysis.json].
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Analyse the CSVs already under RUN_DIR/stats/ without running nsys.
    #[arg(long)]
    pub reuse_stats: bool,

    /// Also fail the job on this warning code (repeatable).
    #[arg(long, value_name = "CODE")]
    pub gate_on: Vec<String>,

    /// Do not fail the job on this warning code (repeatable).
    #[arg(long, value_name = "CODE")]
    pub no_gate_on: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_is_well_formed() {
        Cli::command().debug_assert();
    }
}
