use std::process::ExitCode;

fn main() -> ExitCode {
    nsys_gate::commands::main()
}
