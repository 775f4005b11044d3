//! Bad input in the run directory: exit 2, one clear message naming the key and line or the
//! path, and nothing written (an existing analysis.json is left untouched).

use std::path::Path;

use crate::common::{self, analyze, assert_status, fixture, stderr, Run};
use crate::require_nsys;

const PREVIOUS: &str = "{\"previous\": true}\n";

/// Runs analyze on a run directory that already holds an analysis.json, expects exit 2 with
/// every `needles` in the message, and checks the old analysis.json survived byte for byte.
#[track_caller]
fn refused(run: &Run, nsys: &Path, needles: &[&str]) {
    std::fs::write(run.path("analysis.json"), PREVIOUS).unwrap();
    let out = analyze(&run.dir, nsys, &[]);
    assert_status(&out, 2);
    let err = stderr(&out);
    for needle in needles {
        assert!(err.contains(needle), "{needle:?} not in:\n{err}");
    }
    assert_eq!(
        std::fs::read_to_string(run.path("analysis.json")).unwrap(),
        PREVIOUS
    );
    // nsys never ran: the manifest and trace are checked first.
    assert!(!run.path("stats/nsys-gate-stats.json").exists());
}

#[test]
fn missing_required_keys_are_named() {
    let nsys = require_nsys!("2024.2");
    for key in ["profile_name", "run_id", "capture_range"] {
        let run = fixture("clean");
        let text: String = run
            .manifest()
            .lines()
            .filter(|l| !l.starts_with(&format!("{key}:")))
            .map(|l| format!("{l}\n"))
            .collect();
        run.set_manifest(&text);
        refused(&run, &nsys, &["manifest.yaml", &format!("`{key}`")]);
    }
}

#[test]
fn wrong_iteration_count_names_key_and_line() {
    let nsys = require_nsys!("2024.2");
    let run = fixture("clean");
    let text = run.manifest();
    let line = text
        .lines()
        .position(|l| l.trim_start().starts_with("iterations:"))
        .unwrap()
        + 1;
    let replaced: String = text
        .lines()
        .map(|l| {
            if l.trim_start().starts_with("iterations:") {
                "  iterations: two\n".to_owned()
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    run.set_manifest(&replaced);
    refused(
        &run,
        &nsys,
        &[
            &format!("manifest.yaml:{line}"),
            "`workload.iterations`",
            "two",
        ],
    );
}

#[test]
fn a_capture_range_of_the_wrong_type_is_refused() {
    let nsys = require_nsys!("2024.2");
    let run = fixture("clean");
    run.edit_manifest("capture_range: profile-target", "capture_range: [a, b]");
    refused(&run, &nsys, &["manifest.yaml:1", "`capture_range`"]);
}

#[test]
fn a_trace_that_is_not_in_the_run_directory_is_named() {
    let nsys = require_nsys!("2024.2");
    let run = fixture("clean");
    std::fs::rename(
        run.path("trace.nsys-rep"),
        run.dir.parent().unwrap().join("trace.nsys-rep"),
    )
    .unwrap();
    refused(
        &run,
        &nsys,
        &["trace", "trace.nsys-rep", "not found in the run directory"],
    );
}

/// Issue 30, item 8: with no `expected_trace_path` the error named that key as if the manifest
/// held it, and said nothing of the `trace.sqlite` lying in the run directory.
#[test]
fn a_missing_trace_says_where_its_name_came_from_and_names_the_traces_there() {
    let nsys = require_nsys!("2024.2");
    let run = fixture("gpu-projection");
    let text: String = run
        .manifest()
        .lines()
        .filter(|l| !l.starts_with("expected_trace_path:"))
        .map(|l| format!("{l}\n"))
        .collect();
    run.set_manifest(&text);
    refused(
        &run,
        &nsys,
        &[
            "trace.nsys-rep not found in the run directory",
            "manifest.yaml has no `expected_trace_path`, so the trace is `trace.nsys-rep` beside it",
            "it holds `trace.sqlite`: if that is this run's trace, set `expected_trace_path: trace.sqlite` in manifest.yaml",
        ],
    );
    // A name the manifest gives is said to come from it.
    let run = fixture("clean");
    run.edit_manifest("runs/clean/trace.nsys-rep", "runs/clean/other.nsys-rep");
    refused(
        &run,
        &nsys,
        &[
            "other.nsys-rep not found",
            "`expected_trace_path` in manifest.yaml names `other.nsys-rep`",
            "it holds `trace.nsys-rep`",
        ],
    );
}

#[test]
fn a_trace_symlink_leaving_the_run_directory_is_refused() {
    let nsys = require_nsys!("2024.2");
    let run = fixture("clean");
    let outside = run.dir.parent().unwrap().join("elsewhere.nsys-rep");
    std::fs::rename(run.path("trace.nsys-rep"), &outside).unwrap();
    std::os::unix::fs::symlink(&outside, run.path("trace.nsys-rep")).unwrap();
    refused(
        &run,
        &nsys,
        &["is a symlink to", "outside the run directory"],
    );
}

#[test]
fn a_trace_symlink_inside_the_run_directory_is_fine() {
    let nsys = require_nsys!("2024.2");
    let run = fixture("clean");
    std::fs::create_dir(run.path("raw")).unwrap();
    std::fs::rename(run.path("trace.nsys-rep"), run.path("raw/trace.nsys-rep")).unwrap();
    std::os::unix::fs::symlink("raw/trace.nsys-rep", run.path("trace.nsys-rep")).unwrap();
    assert_status(&analyze(&run.dir, &nsys, &[]), 0);
    // Read through the link, as the manifest names it, with nothing to warn about.
    let a = run.analysis();
    assert_eq!(a["provenance"]["trace_path"], "trace.nsys-rep");
    assert_eq!(a["iteration_summary"]["complete"], 5, "{a:#}");
    let codes = common::codes(&a);
    assert!(!codes.iter().any(|c| c == "trace_path_moved"), "{codes:?}");
}

#[test]
fn a_trace_hash_that_does_not_match_is_refused() {
    let nsys = require_nsys!("2024.2");
    let run = fixture("clean");
    let mut text = run.manifest();
    text.push_str(&format!("trace_sha256: {}\n", "0".repeat(64)));
    run.set_manifest(&text);
    refused(
        &run,
        &nsys,
        &["`trace_sha256` does not match", &"0".repeat(64)],
    );
}

#[test]
fn a_matching_trace_hash_is_accepted() {
    let nsys = require_nsys!("2024.2");
    let run = fixture("clean");
    let out = std::process::Command::new("sha256sum")
        .arg(run.path("trace.nsys-rep"))
        .output()
        .unwrap();
    let hash = String::from_utf8(out.stdout).unwrap();
    let hash = hash.split_whitespace().next().unwrap().to_owned();
    let mut text = run.manifest();
    // Written in capitals: the check ignores case, provenance records it lowercase.
    text.push_str(&format!("trace_sha256: {}\n", hash.to_uppercase()));
    run.set_manifest(&text);
    assert_status(&analyze(&run.dir, &nsys, &[]), 0);
    // The check ran (a hash that is ignored would leave no trace in provenance).
    let a = run.analysis();
    assert_eq!(a["provenance"]["trace_sha256"], hash.as_str(), "{a:#}");
    assert!(a["run"]["extra"].get("trace_sha256").is_none(), "{a:#}");
    // The clean fixture has no CUDA data: that is its one warning.
    let codes = common::codes(&a);
    assert_eq!(codes, ["gpu_projection_unavailable"], "{a:#}");
}

#[test]
fn a_moved_run_directory_warns_but_works() {
    let nsys = require_nsys!("2024.2");
    let source = common::repo().join("tests/fixtures/clean");
    let tmp = assert_fs::TempDir::new().unwrap();
    let moved = tmp.path().join("artifact-from-ci");
    std::fs::create_dir(&moved).unwrap();
    for f in ["manifest.yaml", "trace.nsys-rep"] {
        std::fs::copy(source.join(f), moved.join(f)).unwrap();
    }
    assert_status(&analyze(&moved, &nsys, &[]), 0);
    let a = common::read_json(&moved.join("analysis.json"));
    let w = common::warning(&a, "trace_path_moved");
    assert_eq!(w["gating"], false);
    assert!(w["message"].as_str().unwrap().contains("artifact-from-ci"));
}

#[test]
fn a_run_directory_without_a_manifest_is_named() {
    let nsys = require_nsys!("2024.2");
    let run = fixture("clean");
    std::fs::remove_file(run.path("manifest.yaml")).unwrap();
    let out = analyze(&run.dir, &nsys, &[]);
    assert_status(&out, 2);
    assert!(
        stderr(&out).contains("no manifest.yaml in"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn unknown_gate_codes_are_refused() {
    let nsys = require_nsys!("2024.2");
    let run = fixture("clean");
    let out = analyze(&run.dir, &nsys, &["--gate-on", "missing_iteration"]);
    assert_status(&out, 2);
    assert!(stderr(&out).contains("invalid value 'missing_iteration' for '--gate-on <CODE>'"));
}

#[test]
fn a_misspelt_key_is_kept_and_warned_about() {
    let nsys = require_nsys!("2024.2");
    let run = fixture("clean");
    let mut text = run.manifest();
    text.push_str("iteration_patern: '^step (\\d+)$'\n");
    run.set_manifest(&text);
    assert_status(&analyze(&run.dir, &nsys, &[]), 0);
    let a = run.analysis();
    let w = common::warning(&a, "manifest_unknown_key");
    assert_eq!(w["gating"], false);
    let message = w["message"].as_str().unwrap();
    assert!(message.contains("`iteration_patern`"), "{message}");
    assert!(message.contains("`iteration_pattern`"), "{message}");
    assert_eq!(a["run"]["extra"]["iteration_patern"], "^step (\\d+)$");
    // The default pattern still applies.
    assert_eq!(a["run"]["iteration_pattern"], "^iteration (\\d+)$");
}

#[test]
fn a_manifest_that_is_not_utf8_is_refused_with_its_line() {
    let nsys = require_nsys!("2024.2");
    let run = fixture("clean");
    let mut bytes = run.manifest().into_bytes();
    let at = bytes.windows(7).position(|w| w == b"\ndevice").unwrap() + 9;
    let line = 1 + bytes[..at].iter().filter(|&&b| b == b'\n').count();
    bytes[at] = 0xff;
    std::fs::write(run.path("manifest.yaml"), &bytes).unwrap();
    std::fs::write(run.path("analysis.json"), PREVIOUS).unwrap();
    let out = analyze(&run.dir, &nsys, &[]);
    assert_status(&out, 2);
    let err = stderr(&out);
    assert!(err.contains(&format!("manifest.yaml:{line}:")), "{err}");
    assert!(err.to_lowercase().contains("not valid utf-8"), "{err}");
    assert_eq!(
        std::fs::read_to_string(run.path("analysis.json")).unwrap(),
        PREVIOUS
    );
}

#[test]
fn yaml_1_1_record_ids_stay_strings() {
    let nsys = require_nsys!("2023.4");
    let run = fixture("clean-2023.4");
    assert_status(&analyze(&run.dir, &nsys, &[]), 0);
    let a = run.analysis();
    assert_eq!(a["run"]["record_count"], 3);
    assert!(run.manifest().contains("- 000000000139"));
}

/// `--run-dir` at the folder of runs above the run directories (`runs/`) names the run
/// directories it holds; a mistyped one names those beside it.
#[test]
fn a_folder_of_runs_or_a_typo_names_the_run_directories_found() {
    let tmp = assert_fs::TempDir::new().unwrap();
    let runs = tmp.path().join("runs");
    for name in ["20261201T090000Z", "20261130T090000Z"] {
        std::fs::create_dir_all(runs.join(name)).unwrap();
        std::fs::copy(
            common::repo().join("tests/fixtures/clean/manifest.yaml"),
            runs.join(name).join("manifest.yaml"),
        )
        .unwrap();
    }
    std::fs::create_dir_all(runs.join("notes")).unwrap();
    let nsys = Path::new("/nonexistent/nsys");

    let out = analyze(&runs, nsys, &[]);
    assert_status(&out, 2);
    let err = stderr(&out);
    assert!(
        err.contains("; it holds run directories: 20261130T090000Z, 20261201T090000Z (hint: pass each with its own --run-dir, such as --run-dir "),
        "{err}"
    );
    assert!(!err.contains("notes"), "{err}");

    // Issue 30, item 8: `run` at the folder of runs wrote a stray runs/report.md; it is no run
    // directory, so the report goes nowhere but standard output (with `--output`, there).
    let out = common::run_cmd(&[&runs], nsys, &[]);
    assert_status(&out, 2);
    assert!(!runs.join("report.md").exists(), "a stray runs/report.md");
    assert!(
        stderr(&out)
            .contains("no run directory (a folder with manifest.yaml) to write report.md into"),
        "{}",
        stderr(&out)
    );

    let out = analyze(&runs.join("20261201T09000Z"), nsys, &[]);
    assert_status(&out, 2);
    let err = stderr(&out);
    assert!(
        err.contains(
            "does not exist (run directories beside it: 20261130T090000Z, 20261201T090000Z)"
        ),
        "{err}"
    );
}

/// Issue 34: `run` in a terminal printed 119 lines of raw markdown (HTML tags, `&nbsp;`, a
/// mermaid block) that scrolled its own summary away. In a terminal it prints the summary and
/// names report.md; piped, the markdown as before.
#[test]
fn run_prints_its_summary_not_the_markdown_to_a_terminal() {
    let nsys = require_nsys!("2024.2");
    let run = common::copy_run(&common::repo().join("examples/smoke-tensor/runs/20261129T120000Z"));
    let exe = assert_cmd::cargo::cargo_bin("nsys-gate");
    let command = format!(
        "{} run --no-post --nsys {} --run-dir {}",
        exe.display(),
        nsys.display(),
        run.dir.display()
    );
    // `script` runs the command with a pseudo-terminal as its standard output.
    let out = std::process::Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .env_remove("GITHUB_ACTIONS")
        .output()
        .expect("script (util-linux)");
    let shown = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{shown}");
    let report = std::fs::read_to_string(run.dir.join("report.md")).unwrap();
    assert!(report.contains("<details>") && report.contains("```mermaid"));
    for markdown in ["<details>", "&nbsp;", "```mermaid", "# ✅"] {
        assert!(!shown.contains(markdown), "{markdown} in:\n{shown}");
    }
    assert!(
        shown.contains("gate passed") || shown.contains("gate: pass"),
        "{shown}"
    );
    assert!(
        shown.contains(&format!(
            "the report is markdown for a pull-request comment ({} lines), so it is not printed to a terminal",
            report.lines().count()
        )),
        "{shown}"
    );
    assert!(shown.contains("report.md"), "{shown}");

    // Piped: the markdown, whole.
    let out = common::run_cmd(&[&run.dir], &nsys, &[]);
    assert_status(&out, 0);
    let report = std::fs::read_to_string(run.dir.join("report.md")).unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), report);
}

/// `run` with a mistyped `--run-dir` in a terminal: the error, not a page of markdown
/// repeating it. Piped (a CI log, `> file`), the report is printed as before.
#[test]
fn run_prints_no_failure_report_to_a_terminal() {
    let tmp = assert_fs::TempDir::new().unwrap();
    let exe = assert_cmd::cargo::cargo_bin("nsys-gate");
    let command = format!(
        "{} run --no-post --run-dir {}",
        exe.display(),
        tmp.path().join("runs/typo").display()
    );
    // `script` runs the command with a pseudo-terminal as its standard output.
    let out = std::process::Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .env_remove("GITHUB_ACTIONS")
        .output()
        .expect("script (util-linux)");
    let shown = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{shown}");
    assert!(shown.contains("does not exist"), "{shown}");
    assert!(
        shown.contains("the report (the errors above, in markdown) is not printed to the terminal"),
        "{shown}"
    );
    assert!(!shown.contains("# ⛔"), "{shown}");

    let out = common::bin()
        .args(["run", "--no-post", "--run-dir"])
        .arg(tmp.path().join("runs/typo"))
        .env_remove("GITHUB_ACTIONS")
        .output()
        .unwrap();
    assert_status(&out, 2);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("# ⛔"),
        "{}",
        stderr(&out)
    );
}
