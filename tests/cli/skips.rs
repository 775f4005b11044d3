//! The tests skipped in this run, said together at its end. A test that returns early because
//! a tool is missing (nsys, act, a read-only mount) passes having tested nothing, and what it
//! prints is captured with its output, which a passing test never shows: without this, a local
//! run without nsys is green with nothing said. Under `CI` a missing install is a failure
//! instead ([`crate::common::installed_or_skip`]), never a skip.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write as _;
use std::sync::{Mutex, Once, PoisonError};

/// Each reason, and the tests skipped for it.
static SKIPPED: Mutex<BTreeMap<String, BTreeSet<String>>> = Mutex::new(BTreeMap::new());

/// Says that the running test is skipped and why (`SKIPPED: why`, in its captured output), and
/// records it for the summary at the end of the run.
pub fn skipped(why: &str) {
    eprintln!("SKIPPED: {why}");
    record(why);
}

/// Records that the running test (its thread's name) is skipped for `why`; the first skip
/// arranges for the summary to be printed as the test binary exits.
pub fn record(why: &str) {
    static AT_EXIT: Once = Once::new();
    AT_EXIT.call_once(|| {
        // SAFETY: `say_at_exit` is a plain function with no argument, which the C runtime
        // calls once as the process exits (after the test runner's own summary, whether the
        // run passed or failed); it only takes a lock and writes to standard error.
        #[allow(unsafe_code)]
        let registered = unsafe { libc::atexit(say_at_exit) };
        if registered != 0 {
            eprintln!("warning: the summary of skipped tests cannot be printed at exit");
        }
    });
    let test = std::thread::current().name().unwrap_or("a test").to_owned();
    SKIPPED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .entry(why.to_owned())
        .or_default()
        .insert(test);
}

extern "C" fn say_at_exit() {
    let skipped = SKIPPED.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(text) = summary(&skipped) {
        // Nothing to do about a closed standard error at exit.
        let _ = std::io::stderr().write_all(text.as_bytes());
    }
}

/// Tests named per reason, the rest counted.
const NAMED: usize = 3;

/// How many tests were skipped, and why: each reason with its count and the first tests'
/// names. `None` when none was.
fn summary(skipped: &BTreeMap<String, BTreeSet<String>>) -> Option<String> {
    let tests: BTreeSet<&String> = skipped.values().flatten().collect();
    if tests.is_empty() {
        return None;
    }
    let mut text = format!(
        "\nSKIPPED {} {} that passed without running what {} test (set CI=1 to make a missing nsys or tool a failure):\n",
        tests.len(),
        if tests.len() == 1 { "test" } else { "tests" },
        if tests.len() == 1 { "it would" } else { "they would" },
    );
    for (why, tests) in skipped {
        let named: Vec<&str> = tests.iter().take(NAMED).map(String::as_str).collect();
        let more = match tests.len().saturating_sub(NAMED) {
            0 => String::new(),
            n => format!(" and {n} more"),
        };
        text.push_str(&format!(
            "  {} × {why}\n    ({}{more})\n",
            tests.len(),
            named.join(", ")
        ));
    }
    Some(text)
}

#[test]
fn skips_are_summed_up_by_reason() {
    let mut skipped: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    assert_eq!(summary(&skipped), None);
    let nsys = "nsys 2024.2 is not installed at .nsys/2024.2/nsys";
    for test in ["a::one", "a::two", "b::three", "b::four", "c::five"] {
        skipped
            .entry(nsys.to_owned())
            .or_default()
            .insert(test.to_owned());
    }
    // A test skipped for two reasons counts once in the total.
    skipped
        .entry("act is not installed".to_owned())
        .or_default()
        .insert("a::one".to_owned());
    let text = summary(&skipped).unwrap();
    assert!(
        text.starts_with("\nSKIPPED 5 tests that passed without running"),
        "{text}"
    );
    assert!(
        text.contains("  1 × act is not installed\n    (a::one)\n"),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "  5 × {nsys}\n    (a::one, a::two, b::four and 2 more)\n"
        )),
        "{text}"
    );
}

/// Records a skip only when [`the_summary_is_printed_as_the_run_ends`] runs it.
#[test]
fn a_skip_for_the_summary() {
    if std::env::var_os("NSYS_GATE_TEST_A_SKIP").is_some() {
        record("a reason only this test gives");
    }
}

/// The test binary run on one test that skips: after the test runner's own summary, standard
/// error says how many tests were skipped, why and which.
#[test]
fn the_summary_is_printed_as_the_run_ends() {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "skips::a_skip_for_the_summary",
            "--test-threads",
            "2",
        ])
        .env("NSYS_GATE_TEST_A_SKIP", "1")
        .env_remove("CI")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("1 passed"),
        "{out:?}"
    );
    assert!(
        err.contains("SKIPPED 1 test that passed without running what it would test"),
        "{err}"
    );
    assert!(
        err.contains("  1 × a reason only this test gives\n    (skips::a_skip_for_the_summary)\n"),
        "{err}"
    );
}
