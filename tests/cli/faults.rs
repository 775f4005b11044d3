//! Faults a real nsys cannot be made to produce on demand (a crash, a flood of output) use
//! small stand-ins, said so at each; everything else uses real nsys.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{analyze, assert_status, bin, fake_nsys, fixture, stderr};
use crate::require_nsys;

#[test]
fn an_nsys_killed_by_a_signal_is_reported_with_it() {
    // A real nsys cannot be made to crash on demand.
    let tmp = assert_fs::TempDir::new().unwrap();
    let fake = fake_nsys(tmp.path(), "echo 'Generating SQLite file'; kill -SEGV $$");
    let run = fixture("clean");
    let out = analyze(&run.dir, &fake, &[]);
    assert_status(&out, 2);
    let err = stderr(&out);
    assert!(
        err.contains("nsys 2024.2.3.38-242334140272v0 was killed by signal 11 (SIGSEGV)"),
        "{err}"
    );
    assert!(err.contains("Generating SQLite file"), "{err}");
    assert!(!run.path("analysis.json").exists());
}

#[test]
fn a_flood_of_nsys_output_is_capped_in_the_message() {
    // A real nsys does not print 40 MB on demand.
    let tmp = assert_fs::TempDir::new().unwrap();
    let fake = fake_nsys(
        tmp.path(),
        "echo 'ERROR: the first thing that went wrong' >&2\n\
         i=0; line=$(printf '%0500d' 0)\n\
         yes \"flood $line\" | head -n 80000 >&2\n\
         echo 'last words' >&2; exit 3",
    );
    let run = fixture("clean");
    let out = analyze(&run.dir, &fake, &[]);
    assert_status(&out, 2);
    let err = stderr(&out);
    assert!(err.len() < 20_000, "message of {} bytes", err.len());
    assert!(err.contains("failed with exit status 3"), "{err}");
    assert!(
        err.contains("ERROR: the first thing that went wrong"),
        "{err}"
    );
    assert!(err.contains("last words"), "{err}");
    assert!(err.contains("more lines …]"), "{err}");
}

#[test]
fn a_second_analysis_of_the_same_run_directory_is_refused() {
    let nsys = require_nsys!("2024.2");
    // The first analysis holds the run directory while its (stand-in, slow) nsys works.
    let tmp = assert_fs::TempDir::new().unwrap();
    let slow = fake_nsys(tmp.path(), "sleep 30");
    let run = fixture("clean");
    let mut first = Command::new(assert_cmd::cargo::cargo_bin("nsys-gate"))
        .args(["analyze", "--nsys-timeout", "4", "--run-dir"])
        .arg(&run.dir)
        .arg("--nsys")
        .arg(&slow)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the first one is running nsys.
    let deadline = Instant::now() + Duration::from_secs(20);
    while !run.path("stats/.nsys-gate.lock").exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(300));
    let second = analyze(&run.dir, &nsys, &[]);
    assert_status(&second, 2);
    let err = stderr(&second);
    assert!(err.contains("another nsys-gate is analysing"), "{err}");
    assert!(err.contains("wait for it to finish"), "{err}");
    assert!(!run.path("analysis.json").exists());
    let status = first.wait().unwrap();
    assert_eq!(status.code(), Some(2), "the first one timed out");
    // Once the first is gone, the run directory can be analysed.
    assert_status(&analyze(&run.dir, &nsys, &[]), 0);
}

#[test]
fn a_read_only_run_directory_fails_before_nsys_runs() {
    let nsys = require_nsys!("2024.2");
    let run = fixture("clean");
    // Root ignores permission bits, so make the run directory a read-only bind mount in a
    // private mount namespace.
    let bin = assert_cmd::cargo::cargo_bin("nsys-gate");
    let script = format!(
        "mount --bind '{dir}' '{dir}' && mount -o remount,ro,bind '{dir}' '{dir}' && exec '{bin}' analyze --run-dir '{dir}' --nsys '{nsys}'",
        dir = run.dir.display(),
        bin = bin.display(),
        nsys = nsys.display()
    );
    let out = Command::new("unshare")
        .args(["--mount", "--propagation", "private", "sh", "-c", &script])
        .output()
        .unwrap();
    let err = stderr(&out);
    if err.contains("unshare failed") || err.contains("Operation not permitted") {
        assert!(
            std::env::var_os("CI").is_none(),
            "cannot make a read-only mount: {err}"
        );
        eprintln!("SKIPPED: cannot make a read-only mount here: {err}");
        crate::skips::record("cannot make a read-only mount here (unshare)");
        return;
    }
    assert_status(&out, 2);
    assert!(err.contains("stats"), "{err}");
    assert!(err.to_lowercase().contains("read-only"), "{err}");
    assert!(!err.contains("running nsys stats"), "nsys ran: {err}");
}

/// A panic is a failure: the command ends with the contract's error status 2,
/// not Rust's 101, and says in one line which command it was in and that it is a bug. The panic
/// is forced by the debug build's test-only trigger (a release build has none): a real one
/// cannot be made on purpose.
#[test]
fn a_panic_exits_2_with_one_line_naming_the_command() {
    let run = fixture("clean");
    let out = bin()
        .env("NSYS_GATE_TEST_PANIC", "a test's panic")
        .args(["report", "--run-dir"])
        .arg(&run.dir)
        .output()
        .unwrap();
    assert_status(&out, 2);
    let err = stderr(&out);
    let first = err.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("nsys-gate: error: internal error during `report`: forced by NSYS_GATE_TEST_PANIC: a test's panic at src/commands/mod.rs:"),
        "{err}"
    );
    assert!(first.contains("a bug in nsys-gate"), "{err}");
    assert!(
        !err.contains("panicked at"),
        "Rust's own panic message: {err}"
    );
    assert!(!run.dir.join("report.md").exists());
}
