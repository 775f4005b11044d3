//! `report` and `run`: the markdown report of real fixtures (insta snapshots), templates,
//! exit statuses and the GitHub Actions files.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common::{self, assert_status, bin, fixture, report_md, run_cmd, stderr, Run};
use crate::require_nsys;

/// The same text on every machine: the temporary folders and the repository replaced.
fn redact(text: &str, runs: &[&Run]) -> String {
    let mut text = text.to_owned();
    for run in runs {
        let tmp = run.dir.parent().unwrap();
        let canonical = std::fs::canonicalize(tmp).unwrap();
        for path in [canonical.to_str().unwrap(), tmp.to_str().unwrap()] {
            // As it appears in markdown text, and as it is.
            text = text
                .replace(&nsys_gate::render::escape::inline(path), "[TMP]")
                .replace(path, "[TMP]");
        }
    }
    text.replace(common::repo().to_str().unwrap(), "[REPO]")
}

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).expect("UTF-8 report")
}

/// Runs one fixture, checks the status, and returns its redacted report.
fn snapshot_of(name: &str, nsys: &Path, status: i32) -> String {
    let run = fixture(name);
    let out = run_cmd(&[&run.dir], nsys, &[]);
    assert_status(&out, status);
    let report = report_md(&run);
    assert_eq!(stdout(&out), report, "--no-post prints the report it wrote");
    assert!(report.chars().count() <= 65_536);
    redact(&report, &[&run])
}

#[test]
fn snapshot_clean_without_gpu_projection() {
    let nsys = require_nsys!("2024.2");
    let report = snapshot_of("clean", &nsys, 0);
    // No column of `unavailable` cells: one sentence says it.
    assert!(report.contains("| count | 5 |\n"), "{report}");
    assert!(
        report.contains("GPU projection unavailable (not zero)"),
        "{report}"
    );
    insta::assert_snapshot!("clean", report);
}

#[test]
fn snapshot_missing_iterations() {
    let nsys = require_nsys!("2024.2");
    let report = snapshot_of("missing-iterations", &nsys, 1);
    assert!(report.contains("Resolve this before drawing performance conclusions"));
    insta::assert_snapshot!("missing_iterations", report);
}

#[test]
fn snapshot_gpu_projection() {
    let nsys = require_nsys!("2024.2");
    let report = snapshot_of("gpu-projection", &nsys, 0);
    assert!(report.contains("<summary>Largest GPU-projected times</summary>"));
    insta::assert_snapshot!("gpu_projection", report);
}

#[test]
fn snapshot_gpu_work() {
    let nsys = require_nsys!("2024.2");
    let report = snapshot_of("gpu-work", &nsys, 0);
    assert!(report.contains("### GPU work"));
    // A kernel is shown by its base name; its whole name, with commas, quotes and templates,
    // is one line of the collapsed list.
    assert!(
        report.contains("| attention\\_kernel | 5 | 7.00\u{a0}ms |"),
        "{report}"
    );
    assert!(
        report.contains(
            "\n- **attention\\_kernel**: void attention\\_kernel&lt;\"causal\",64, cutlass::half\\_t&gt;(int, float const\\*, \"x\",1,2)\n"
        ),
        "{report}"
    );
    assert!(report.contains("⚠️ pageable host memory"));
    insta::assert_snapshot!("gpu_work", report);
}

#[test]
fn snapshot_hostile_names() {
    let nsys = require_nsys!("2024.2");
    let report = snapshot_of("hostile-names", &nsys, 0);
    for raw in ["<script>", "@octocat", "#123", "```fence"] {
        assert!(!report.contains(raw), "{raw:?} reached the report");
    }
    insta::assert_snapshot!("hostile_names", report);
}

#[test]
fn snapshot_error_incompatible_trace() {
    let nsys = require_nsys!("2023.4");
    let run = fixture("clean");
    // Issue 30, item 8: the section is titled with the manifest's run ID, not the folder's name.
    run.edit_manifest("run_id: clean", "run_id: nightly-7");
    // The command quoted depends on how the reports are split: pinned, whatever the cores.
    let out = run_cmd(&[&run.dir], &nsys, &["--nsys-processes", "2"]);
    assert_status(&out, 2);
    let report = report_md(&run);
    assert!(!run.path("analysis.json").exists());
    assert!(
        report.contains("the trace is newer than this nsys"),
        "{report}"
    );
    // nsys's words once, the command once, only this failure's checks.
    assert_eq!(
        report.matches("newer than your current version").count(),
        1,
        "{report}"
    );
    assert_eq!(report.matches("**Tried:**").count(), 1, "{report}");
    assert!(!report.contains("2022.4 or newer"), "{report}");
    assert!(
        report.contains("## ⛔ smoke-tensor · run nightly-7: could not be analysed"),
        "{report}"
    );
    assert!(
        report.contains("newer than your current version (2023.4."),
        "nsys's own words: {report}"
    );
    assert!(
        report.contains("**Nsight Systems version:** 2023.4."),
        "{report}"
    );
    insta::assert_snapshot!("error_incompatible_trace", redact(&report, &[&run]));
}

#[test]
fn snapshot_two_run_directories() {
    let nsys = require_nsys!("2024.2");
    let (a, b) = (fixture("clean"), fixture("missing-iterations"));
    let out = run_cmd(&[&a.dir, &b.dir], &nsys, &[]);
    assert_status(&out, 1);
    // One report, in the first run directory.
    assert!(!b.path("report.md").exists());
    let report = report_md(&a);
    assert!(
        report.contains("**2 run directories**: 1 passed, 1 with gating warnings"),
        "{report}"
    );
    insta::assert_snapshot!("two_run_directories", redact(&report, &[&a, &b]));
}

#[test]
fn report_renders_an_existing_analysis_the_same_way_every_time() {
    let nsys = require_nsys!("2024.2");
    let run = fixture("missing-iterations");
    assert_status(&common::analyze(&run.dir, &nsys, &[]), 1);
    let tmp = assert_fs::TempDir::new().unwrap();
    let mut reports = Vec::new();
    for i in 0..2 {
        let output = tmp.path().join(format!("r{i}.md"));
        let out = bin()
            .args(["report", "--run-dir"])
            .arg(&run.dir)
            .arg("--output")
            .arg(&output)
            .env_remove("GITHUB_ACTIONS")
            .output()
            .unwrap();
        assert_status(&out, 1);
        assert!(out.stdout.is_empty(), "report --output prints nothing");
        reports.push(std::fs::read(&output).unwrap());
    }
    assert_eq!(reports[0], reports[1]);
    assert!(
        !run.path("report.md").exists(),
        "--output is the only file written"
    );
    // `--output -` prints it instead, and --top shortens the range tables.
    let out = bin()
        .args(["report", "--top", "2", "--output", "-", "--run-dir"])
        .arg(&run.dir)
        .env_remove("GITHUB_ACTIONS")
        .output()
        .unwrap();
    assert_status(&out, 1);
    let text = stdout(&out);
    assert!(
        text.contains("Top 2 of 5 ranges; the other 3 are in "),
        "{text}"
    );
    assert!(!run.path("report.md").exists(), "--output - writes no file");
}

#[test]
fn report_without_an_analysis_still_renders_and_exits_2() {
    let run = fixture("clean");
    let out = bin()
        .args(["report", "--run-dir"])
        .arg(&run.dir)
        .env_remove("GITHUB_ACTIONS")
        .output()
        .unwrap();
    assert_status(&out, 2);
    let report = report_md(&run);
    assert!(
        report.contains("there is no readable analysis.json"),
        "{report}"
    );
    assert!(report.contains("nsys-gate analyze --run-dir"), "{report}");
    assert!(report.contains("# ⛔ nsys-gate: gate error"), "{report}");

    std::fs::write(run.path("analysis.json"), r#"{"schema_version": 2}"#).unwrap();
    let out = bin()
        .args(["report", "--output", "-", "--run-dir"])
        .arg(&run.dir)
        .output()
        .unwrap();
    assert_status(&out, 2);
    assert!(
        stdout(&out).contains("schema\\_version 2; this nsys-gate reads 1"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn a_custom_template_replaces_the_default() {
    let nsys = require_nsys!("2024.2");
    let run = fixture("clean");
    let tmp = assert_fs::TempDir::new().unwrap();
    let template = tmp.path().join("mine.md.j2");
    std::fs::write(
        &template,
        "{{ marker }}\nGate: {{ gate.word }}\n{% for r in runs %}{{ r.analysed.title }}: median {{ r.analysed.stats.rows[2].host }}\n{% endfor %}",
    )
    .unwrap();
    let out = run_cmd(
        &[&run.dir],
        &nsys,
        &["--template", template.to_str().unwrap()],
    );
    assert_status(&out, 0);
    let report = report_md(&run);
    assert!(
        report.starts_with(
            "<!-- nsys-gate:smoke-tensor -->\nGate: passed\nsmoke-tensor · run clean: median "
        ),
        "{report}"
    );
    assert!(report.ends_with("\u{a0}ms\n"), "{report:?}");
}

#[test]
fn a_broken_template_exits_2_naming_its_line_before_nsys_runs() {
    let run = fixture("clean");
    let tmp = assert_fs::TempDir::new().unwrap();
    let template = tmp.path().join("broken.md.j2");
    std::fs::write(
        &template,
        "# fine\n\n{% for r in runs %}\n{{ r.analysed.title }\n{% endfor %}\n",
    )
    .unwrap();
    // No nsys is needed: the template is compiled first.
    let out = run_cmd(
        &[&run.dir],
        Path::new("/nonexistent/nsys"),
        &["--template", template.to_str().unwrap()],
    );
    assert_status(&out, 2);
    let err = stderr(&out);
    assert!(
        err.contains(&format!(
            "template {}, line 4: syntax error",
            template.display()
        )),
        "{err}"
    );
    assert!(!run.path("analysis.json").exists() && !run.path("report.md").exists());

    // An undefined value is an error too, at render time, with its line.
    std::fs::write(&template, "ok\n{{ runs[0].analysed.no_such_field }}\n").unwrap();
    std::fs::write(run.path("analysis.json"), "{}").unwrap();
    let out = bin()
        .args(["report", "--template"])
        .arg(&template)
        .arg("--run-dir")
        .arg(&run.dir)
        .output()
        .unwrap();
    assert_status(&out, 2);
    let err = stderr(&out);
    assert!(err.contains("line 2: undefined value"), "{err}");

    let out = bin()
        .args(["report", "--template", "/nonexistent/t.j2", "--run-dir"])
        .arg(&run.dir)
        .output()
        .unwrap();
    assert_status(&out, 2);
    let err = stderr(&out);
    assert!(
        err.contains("cannot read the template /nonexistent/t.j2"),
        "{err}"
    );
    // Said once: the error quotes its cause, so the cause is not repeated below it.
    assert_eq!(err.matches("No such file or directory").count(), 1, "{err}");
}

#[test]
fn run_without_a_pull_request_says_so_and_prints() {
    let nsys = require_nsys!("2024.2");
    let run = fixture("clean");
    let out = bin()
        .args(["run", "--run-dir"])
        .arg(&run.dir)
        .arg("--nsys")
        .arg(&nsys)
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_EVENT_NAME")
        .env_remove("GITHUB_EVENT_PATH")
        .output()
        .unwrap();
    assert_status(&out, 0);
    assert!(
        stderr(&out).contains("no pull request to comment on"),
        "{}",
        stderr(&out)
    );
    assert_eq!(stdout(&out), report_md(&run));
}

#[test]
fn run_refuses_an_unknown_gate_code() {
    let run = fixture("clean");
    let out = bin()
        .args(["run", "--gate-on", "missing_iteration", "--run-dir"])
        .arg(&run.dir)
        .output()
        .unwrap();
    assert_status(&out, 2);
    assert!(stderr(&out).contains("invalid value 'missing_iteration' for '--gate-on <CODE>'"));
}

/// `name<<DELIMITER` … `DELIMITER` entries of a `$GITHUB_OUTPUT` file.
fn parse_outputs(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let (name, delimiter) = line.split_once("<<").expect("multi-line form");
        assert!(
            delimiter.starts_with("ghadelimiter_") && delimiter.len() > 20,
            "{delimiter}"
        );
        let mut value = Vec::new();
        for l in lines.by_ref() {
            if l == delimiter {
                break;
            }
            value.push(l);
        }
        out.push((name.to_owned(), value.join("\n")));
    }
    out
}

#[test]
fn github_actions_files_are_written() {
    let nsys = require_nsys!("2024.2");
    let (a, b) = (fixture("missing-iterations"), fixture("clean"));
    let tmp = assert_fs::TempDir::new().unwrap();
    let summary = tmp.path().join("summary.md");
    let outputs = tmp.path().join("output.txt");
    std::fs::write(&summary, "# an earlier step's summary\n").unwrap();
    std::fs::write(&outputs, "earlier=1\n").unwrap();
    let mut cmd = bin();
    cmd.args(["run", "--no-post", "--nsys"]).arg(&nsys);
    for d in [&a.dir, &b.dir] {
        cmd.arg("--run-dir").arg(d);
    }
    let out = cmd
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_STEP_SUMMARY", &summary)
        .env("GITHUB_OUTPUT", &outputs)
        .output()
        .unwrap();
    assert_status(&out, 1);
    let report = report_md(&a);

    // The summary is appended.
    let written = std::fs::read_to_string(&summary).unwrap();
    assert_eq!(written, format!("# an earlier step's summary\n\n{report}"));

    // Outputs.
    let text = std::fs::read_to_string(&outputs).unwrap();
    let (earlier, rest) = text.split_once('\n').unwrap();
    assert_eq!(earlier, "earlier=1");
    let parsed = parse_outputs(rest);
    let get = |n: &str| {
        parsed
            .iter()
            .find(|(k, _)| k == n)
            .map(|(_, v)| v.clone())
            .unwrap()
    };
    assert_eq!(
        get("analysis-paths"),
        format!(
            "{}\n{}",
            a.path("analysis.json").display(),
            b.path("analysis.json").display()
        )
    );
    assert_eq!(PathBuf::from(get("report-path")), a.path("report.md"));
    assert_eq!(get("gate"), "fail");
    let warnings = common::read_json(&a.path("analysis.json"))["warnings"]
        .as_array()
        .unwrap()
        .len()
        + common::read_json(&b.path("analysis.json"))["warnings"]
            .as_array()
            .unwrap()
            .len();
    assert_eq!(get("warnings"), warnings.to_string());

    // Standard output: the report with workflow commands stopped, then the annotations.
    let printed = stdout(&out);
    let first = printed.lines().next().unwrap();
    let token = first
        .strip_prefix("::stop-commands::")
        .expect("stop-commands first");
    let end = format!("\n::{token}::\n");
    let (body, annotations) = printed.split_once(&end).expect("commands resumed");
    assert_eq!(format!("{body}\n"), format!("{first}\n{report}"));
    let lines: Vec<&str> = annotations.lines().collect();
    assert!(
        lines.contains(&"::error title=nsys-gate%3A missing_iterations (fails the job)::smoke-tensor (run missing-iterations): expected iterations 0-4, missing 3, 4"),
        "{annotations}"
    );
    assert!(
        lines.iter().any(|l| l.starts_with(
            "::warning title=nsys-gate%3A gpu_projection_unavailable::smoke-tensor (run clean)"
        )),
        "{annotations}"
    );
    assert_eq!(lines.len(), warnings, "{annotations}");
}

#[test]
fn github_actions_error_runs_set_gate_error() {
    let run = fixture("clean");
    let tmp = assert_fs::TempDir::new().unwrap();
    let outputs = tmp.path().join("output.txt");
    let summary = tmp.path().join("summary.md");
    let out = bin()
        .args(["report", "--run-dir"])
        .arg(&run.dir)
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_OUTPUT", &outputs)
        .env("GITHUB_STEP_SUMMARY", &summary)
        .output()
        .unwrap();
    assert_status(&out, 2);
    let parsed = parse_outputs(&std::fs::read_to_string(&outputs).unwrap());
    let get = |n: &str| {
        parsed
            .iter()
            .find(|(k, _)| k == n)
            .map(|(_, v)| v.clone())
            .unwrap()
    };
    assert_eq!(get("gate"), "error");
    assert_eq!(get("analysis-paths"), "");
    assert_eq!(get("warnings"), "0");
    assert!(std::fs::read_to_string(&summary)
        .unwrap()
        .contains("there is no readable analysis.json"));
    assert!(
        stdout(&out).starts_with("::error title=nsys-gate%3A there is no readable analysis.json::"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn a_full_step_summary_is_left_alone() {
    let run = fixture("clean");
    std::fs::write(run.path("analysis.json"), "{}").unwrap();
    let tmp = assert_fs::TempDir::new().unwrap();
    let summary = tmp.path().join("summary.md");
    let full = "x".repeat(1024 * 1024 - 10);
    std::fs::write(&summary, &full).unwrap();
    let out = bin()
        .args(["report", "--run-dir"])
        .arg(&run.dir)
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_STEP_SUMMARY", &summary)
        .env_remove("GITHUB_OUTPUT")
        .output()
        .unwrap();
    assert_status(&out, 2);
    assert_eq!(std::fs::read_to_string(&summary).unwrap(), full);
    assert!(
        stderr(&out).contains("already holds nearly 1,048,576 bytes"),
        "{}",
        stderr(&out)
    );
}

/// Issue 34: the bundled example has no CUDA data, so the first report a newcomer saw said
/// "GPU projected unavailable". examples/llama-gpu/ is a run with GPU work (the `llama-gpu`
/// fixture: a real nsys trace with synthetic CUDA work, tests/fixtures/README.md): its report
/// has a GPU-projected median and the kernels.
#[test]
fn the_bundled_run_with_gpu_work_reports_gpu_time() {
    let nsys = require_nsys!("2024.2");
    let run = common::copy_run(&common::repo().join("examples/llama-gpu/runs/llama-gpu"));
    let out = run_cmd(&[&run.dir], &nsys, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report = report_md(&run);
    let headline = report
        .lines()
        .find(|l| l.contains("GPU projected median"))
        .expect("a headline");
    assert!(!headline.contains("unavailable"), "{headline}");
    assert!(!report.contains("gpu_projection_unavailable"), "{report}");
    let a = run.analysis();
    assert!(
        a["iteration_summary"]["gpu_projected"]["median_ns"]
            .as_f64()
            .unwrap()
            > 0.0
    );
    assert!(!a["gpu_work"]["kernels"].as_array().unwrap().is_empty());
    let readme = std::fs::read_to_string(common::repo().join("README.md")).unwrap();
    assert!(readme.contains("--run-dir examples/llama-gpu/runs/llama-gpu"));
}

/// docs/example-report.md is the report of the bundled example run, as `run` renders it
/// (with the run directory's path as in the repository). `NSYS_GATE_UPDATE_DOCS=1` rewrites it.
#[test]
fn the_example_report_in_docs_is_current() {
    let nsys = require_nsys!("2024.2");
    let rel = "examples/smoke-tensor/runs/20261129T120000Z";
    let run = common::copy_run(&common::repo().join(rel));
    let out = run_cmd(&[&run.dir], &nsys, &[]);
    assert!(matches!(out.status.code(), Some(0 | 1)), "{}", stderr(&out));
    let mut report = report_md(&run);
    let canonical = std::fs::canonicalize(&run.dir).unwrap();
    for path in [canonical.to_str().unwrap(), run.dir.to_str().unwrap()] {
        report = report
            .replace(&nsys_gate::render::escape::inline(path), rel)
            .replace(path, rel);
    }
    let doc = common::repo().join("docs/example-report.md");
    if std::env::var_os("NSYS_GATE_UPDATE_DOCS").is_some() {
        std::fs::write(&doc, &report).unwrap();
    }
    let current = std::fs::read_to_string(&doc).unwrap_or_default();
    assert!(
        current == report,
        "{} is out of date: rerun this test with NSYS_GATE_UPDATE_DOCS=1",
        doc.display()
    );
    // The README shows its top as a picture (scripts/render-report.sh, docs/development.md) and
    // links the whole of it.
    let readme = std::fs::read_to_string(common::repo().join("README.md")).unwrap();
    assert!(
        readme.contains("](docs/example-report.md)")
            && readme.contains("(docs/images/example-report.png)"),
        "the README links the example report and shows its picture"
    );
    let png = std::fs::read(common::repo().join("docs/images/example-report.png")).unwrap();
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "a PNG");
}

#[test]
fn snapshot_ranks() {
    // Issue 35, item 5: a distributed run leads with its step, and the rank table follows.
    let nsys = require_nsys!("2024.2");
    let report = snapshot_of("ranks-2", &nsys, 0);
    let headline = report
        .lines()
        .find(|l| l.contains("**gate passed**"))
        .expect("headline");
    assert!(
        headline.contains("**2** ranks · step median **")
            && headline.contains("slowest in **10\u{a0}of\u{a0}10** steps"),
        "{headline}"
    );
    assert!(report.contains("### Ranks"), "{report}");
    insta::assert_snapshot!("ranks", report);
}
