//! Credentials in the environment nsys recorded in the trace: named (never shown) in a
//! `trace_environment_secrets` warning, and nsys's SQLite export removed unless `--keep-export`.
//!
//! The planted environments are made here, at test time, in copies of the `.sqlite` fixtures
//! (recorded with a minimal environment), so no committed file holds anything that looks like
//! a credential, not even a fake one.

use std::path::Path;
use std::process::Output;

use rusqlite::Connection;

use crate::common::{self, analyze, assert_status, bin, fixture, stderr, Run};
use crate::require_nsys;

/// A fake GitHub token, built so that the source holds no token-shaped string.
fn fake_github_token() -> String {
    ["gh", "p_", &"Fake0Planted1Token2For3Tests".repeat(2)[..36]].concat()
}

const FAKE_API_KEY: &str = "planted-fake-api-key-value-7c41";

/// Replaces the environment recorded in a `.sqlite` trace, joined as that nsys version joins
/// it (`;`, or NUL for 2022.4), kept as TEXT like nsys writes it.
fn plant(db: &Path, separator: &str, variables: &[(&str, &str)]) {
    let recorded: Vec<String> = variables.iter().map(|(n, v)| format!("{n}={v}")).collect();
    let db = Connection::open(db).unwrap();
    let changed = db
        .execute(
            "UPDATE TARGET_INFO_SYSTEM_ENV SET value = ?1 WHERE name = 'DeviceEnvironment'",
            [recorded.join(separator)],
        )
        .unwrap();
    assert_eq!(changed, 1, "one recorded environment");
}

/// `nsys-gate run --no-post` on one run directory: analysis.json, report.md, stdout.
fn run_no_post(run: &Run, nsys: &Path, args: &[&str]) -> Output {
    bin()
        .args(["run", "--no-post", "--run-dir"])
        .arg(&run.dir)
        .arg("--nsys")
        .arg(nsys)
        .args(args)
        .env_remove("GITHUB_ACTIONS")
        .output()
        .unwrap()
}

/// Every file under `dir`, as text.
fn everything_under(dir: &Path) -> String {
    let mut text = String::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            text.push_str(&everything_under(&path));
        } else if path.extension().is_none_or(|e| e != "sqlite") {
            text.push_str(&String::from_utf8_lossy(&std::fs::read(&path).unwrap()));
        }
    }
    text
}

#[test]
fn credentials_in_the_recorded_environment_are_named_never_shown() {
    let token = fake_github_token();
    // What each version recorded: `;`-joined in 2023.4 and 2024.2, NUL-joined in 2022.4.
    for (fixture_name, version, separator, status) in [
        ("gpu-projection", "2024.2", ";", 0),
        ("gpu-projection-2023.4", "2023.4", ";", 0),
        ("gpu-projection-2022.4", "2022.4", "\0", 0),
    ] {
        let nsys = require_nsys!(version);
        let run = fixture(fixture_name);
        let trace = run.path("trace.sqlite");
        plant(
            &trace,
            separator,
            &[
                ("PATH", "/usr/bin:/bin"),
                ("GITHUB_TOKEN", &token),
                ("HOME", "/home/ci"),
                ("MY_API_KEY", FAKE_API_KEY),
                ("TOKENIZERS_PARALLELISM", "false"),
            ],
        );
        let trace_bytes = std::fs::read(&trace).unwrap();

        let out = run_no_post(&run, &nsys, &[]);
        assert_status(&out, status);
        let a = run.analysis();
        let w = common::warning(&a, "trace_environment_secrets");
        assert_eq!(w["gating"], false, "{version}: {w}");
        assert_eq!(
            w["variables"],
            serde_json::json!(["GITHUB_TOKEN", "MY_API_KEY"]),
            "{version}"
        );
        let message = w["message"].as_str().unwrap();
        for needle in [
            "credentials: GITHUB_TOKEN, MY_API_KEY (values not shown)",
            "do not upload the trace as an artifact",
        ] {
            assert!(message.contains(needle), "{version}: {message}");
        }
        // The report shows the message (its markdown escaped).
        let report = std::fs::read_to_string(run.path("report.md")).unwrap();
        assert!(
            report.replace('\\', "").contains(message),
            "{version}: {report}"
        );

        // The values appear nowhere: not in analysis.json, the report, the stamp, the CSVs,
        // nor on standard output or error.
        let shown = [
            everything_under(&run.dir),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr(&out),
        ]
        .concat();
        for value in [token.as_str(), FAKE_API_KEY, &token[4..20]] {
            assert!(!shown.contains(value), "{version}: a value was shown");
        }
        // A `.sqlite` trace is read where it is and never removed or changed.
        assert_eq!(std::fs::read(&trace).unwrap(), trace_bytes, "{version}");
        assert!(!run.path("stats/trace.sqlite").exists());

        // --reuse-stats warns the same from the stamp, without the export.
        assert_status(&common::reuse_stats(&run.dir), status);
        let again = run.analysis();
        assert_eq!(
            common::warning(&again, "trace_environment_secrets"),
            w,
            "{version}"
        );
        assert_eq!(again["warnings"], a["warnings"], "{version}");
    }
}

#[test]
fn an_export_without_the_environment_table_gets_no_warning_and_no_error() {
    let nsys = require_nsys!("2024.2");
    let run = fixture("gpu-projection");
    let db = Connection::open(run.path("trace.sqlite")).unwrap();
    db.execute_batch("DROP TABLE TARGET_INFO_SYSTEM_ENV")
        .unwrap();
    drop(db);
    let out = analyze(&run.dir, &nsys, &[]);
    assert_status(&out, 0);
    let a = run.analysis();
    assert!(!common::codes(&a).contains(&"trace_environment_secrets".to_owned()));
    assert!(!stderr(&out).contains("environment"), "{}", stderr(&out));
}

#[test]
fn the_export_is_removed_unless_kept() {
    let nsys = require_nsys!("2024.2");
    let run = fixture("clean");
    assert_status(&analyze(&run.dir, &nsys, &[]), 0);
    assert!(!run.path("stats/trace.sqlite").exists());
    // The fixtures were recorded with a minimal environment: nothing to warn about.
    assert!(!common::codes(&run.analysis()).contains(&"trace_environment_secrets".to_owned()));
    let plain = std::fs::read(run.path("analysis.json")).unwrap();

    assert_status(&analyze(&run.dir, &nsys, &["--keep-export"]), 0);
    assert!(run.path("stats/trace.sqlite").is_file());
    assert_eq!(std::fs::read(run.path("analysis.json")).unwrap(), plain);
    // The export nsys made holds the recorded environment where nsys-gate reads it.
    let db = Connection::open(run.path("stats/trace.sqlite")).unwrap();
    let recorded: String = db
        .query_row(
            "SELECT value FROM TARGET_INFO_SYSTEM_ENV WHERE name = 'DeviceEnvironment'",
            [],
            |row| row.get(0),
        )
        .unwrap();
    assert!(
        recorded.starts_with("PATH=/usr/bin:/bin;HOME="),
        "{recorded}"
    );

    // A failed nsys leaves no export either.
    let tmp = assert_fs::TempDir::new().unwrap();
    let fake = common::fake_nsys(
        tmp.path(),
        "echo 'ERROR: made up' >&2; touch stats/trace.sqlite; exit 1",
    );
    assert_status(&analyze(&run.dir, &fake, &[]), 2);
    assert!(!run.path("stats/trace.sqlite").exists());
}

/// With one trace per rank, every trace's recorded environment is searched: credentials that
/// only rank 1's trace holds are named (only the first trace's were), and the run's
/// environment lists every trace's GPUs.
#[test]
fn every_ranks_trace_is_searched_for_credentials() {
    let nsys = require_nsys!("2024.2");
    let run = fixture("ranks-devices-per-trace");
    plant(
        &run.path("trace_1.sqlite"),
        ";",
        &[("PATH", "/usr/bin:/bin"), ("MY_API_KEY", FAKE_API_KEY)],
    );
    let out = run_no_post(&run, &nsys, &[]);
    assert_status(&out, 0);
    let a = run.analysis();
    let w = common::warning(&a, "trace_environment_secrets");
    assert_eq!(w["variables"], serde_json::json!(["MY_API_KEY"]), "{w}");
    let shown = [everything_under(&run.dir), stderr(&out)].concat();
    assert!(!shown.contains(FAKE_API_KEY), "a value was shown");
    let ids: Vec<u64> = a["environment"]["gpus"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["id"].as_u64().unwrap())
        .collect();
    assert_eq!(ids, [0, 1], "{}", a["environment"]);
}
