//! `cargo bench --bench ranks`: `nsys-gate analyze` against the 2-core floor of its nsys
//! reports, on traces recorded by the project's harness under real nsys 2024.2 and cached under
//! `target/` (made on the first run):
//!
//! - `target/bench-ranks/one`: 8 ranks x 1,000 passes in one trace (the harness forks the ranks);
//! - `target/bench-ranks/per`: the same as 8 per-rank traces (`trace_%q{RANK}.nsys-rep`);
//! - `target/bench-gpu/gpu`: the GPU-heavy trace of `scripts/bench-gpu-work.sh` (23,334 passes,
//!   163,339 GPU operations injected, a `.sqlite`).
//!
//! The floor and the measurement are `scripts/bench-floor.py`'s (each report alone, best of
//! the rounds; `analyze` once a round; peak memory): see docs/performance.md ("Many ranks").
//!
//! ```sh
//! cargo bench --bench ranks                        # all three, 3 rounds
//! cargo bench --bench ranks -- --repeat 5 gpu      # 5 rounds, the GPU-heavy trace only
//! cargo bench --bench ranks -- gpu --baseline OLD   # and another build's analyze, same rounds
//! ```

use std::path::Path;
use std::process::Command;

fn run(command: &mut Command) {
    let status = command.status().expect("the command starts");
    assert!(status.success(), "{command:?} failed: {status}");
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let gate = env!("CARGO_BIN_EXE_nsys-gate");
    let mut repeat = "3".to_owned();
    let mut baseline = None;
    let mut only = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--repeat" => repeat = args.next().expect("--repeat N"),
            "--baseline" => baseline = Some(args.next().expect("--baseline GATE")),
            "one" | "per" | "gpu" => only.push(arg),
            // what `cargo bench` passes to every bench
            "--bench" => {}
            other => {
                panic!("unknown argument {other}: [--repeat N] [--baseline GATE] [one] [per] [gpu]")
            }
        }
    }
    if only.is_empty() {
        only = vec!["one".into(), "per".into(), "gpu".into()];
    }
    let nsys = Command::new(root.join("scripts/install-nsys.sh"))
        .arg("2024.2")
        .output()
        .expect("scripts/install-nsys.sh runs");
    assert!(
        nsys.status.success(),
        "nsys 2024.2 is needed (scripts/install-nsys.sh 2024.2)"
    );
    let nsys = String::from_utf8(nsys.stdout).expect("a UTF-8 path");
    let ranks = root.join("target/bench-ranks");
    let gpu = root.join("target/bench-gpu");
    run(Command::new(root.join("scripts/lib/bench-ranks-record.sh")).arg(&ranks));
    if only.iter().any(|o| o == "gpu") {
        run(Command::new(root.join("scripts/lib/bench-gpu-record.sh")).arg(&gpu));
    }
    let dirs = only.iter().map(|o| match o.as_str() {
        "gpu" => gpu.join("gpu"),
        other => ranks.join(other),
    });
    let mut floor = Command::new("python3");
    floor
        .arg(root.join("scripts/bench-floor.py"))
        .arg(gate)
        .arg(nsys.trim())
        .args(dirs)
        .args(["--repeat", &repeat]);
    if let Some(baseline) = baseline {
        floor.args(["--baseline", &baseline]);
    }
    run(&mut floor);
}
