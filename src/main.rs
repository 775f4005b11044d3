use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    nsys_gate::run(nsys_gate::cli::Cli::parse())
}
