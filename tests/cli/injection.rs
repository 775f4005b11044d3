//! Workflow commands smuggled through what nsys-gate prints inside GitHub Actions, and Azure
//! Pipelines' `##vso[` logging commands on every platform.
//!
//! The runner reads a step's standard output and standard error line by line (a line ends at
//! `\n`, `\r\n` or a lone `\r`) and runs a line as a workflow command when, after leading white
//! space, it starts with `::NAME`, or when it holds the legacy `##[NAME`. Each test gives
//! nsys-gate text the code under review controls (manifest values and keys, a stamp) and checks
//! every line it printed with [`assert_inert`], a reading of the runner's parser
//! (actions/runner `ActionCommand.TryParseV2` and `TryParse`): nothing is a command but the
//! `::error`/`::warning` annotations nsys-gate issues on purpose, and the report between
//! `::stop-commands::TOKEN` and `::TOKEN::`.

use std::path::Path;
use std::process::Output;

use assert_fs::TempDir;

use crate::common::{self, assert_status, bin, fixture, stderr, Run};
use crate::require_nsys;

/// The commands the runner knows (`ActionCommandManager`'s extensions and `stop-commands`).
const COMMANDS: &[&str] = &[
    "add-mask",
    "add-matcher",
    "add-path",
    "debug",
    "echo",
    "endgroup",
    "error",
    "group",
    "internal-set-repo-path",
    "notice",
    "remove-matcher",
    "save-state",
    "set-env",
    "set-output",
    "stop-commands",
    "warning",
];

/// The lines the runner reads: split at `\n`, `\r\n` and a lone `\r`.
fn runner_lines(text: &str) -> Vec<&str> {
    let mut lines = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find(['\r', '\n']) {
        lines.push(&rest[..at]);
        let skip = if rest[at..].starts_with("\r\n") { 2 } else { 1 };
        rest = &rest[at + skip..];
    }
    if !rest.is_empty() {
        lines.push(rest);
    }
    lines
}

/// What ICU's collation skips: .NET's culture-sensitive `StartsWith` and `IndexOf`, which the
/// parser uses, ignore these on Linux (format characters, soft hyphen, variation selectors…).
fn ignorable(unit: u16) -> bool {
    matches!(
        unit,
        0x0000 | 0x00AD | 0x034F | 0x061C | 0x115F | 0x1160 | 0x17B4 | 0x17B5 | 0x180B..=0x180F
            | 0x200B..=0x200F | 0x202A..=0x202E | 0x2060..=0x206F | 0x3164 | 0xFE00..=0xFE0F
            | 0xFEFF | 0xFFA0 | 0xFFF0..=0xFFF8
    )
}

/// Whether `pattern` matches `s` at `at`, ordinally or skipping ignorable units (ICU).
fn matches_at(s: &[u16], mut at: usize, pattern: &[u16], icu: bool) -> bool {
    for &p in pattern {
        while icu && at < s.len() && ignorable(s[at]) {
            at += 1;
        }
        if at >= s.len() || s[at] != p {
            return false;
        }
        at += 1;
    }
    true
}

fn index_of(s: &[u16], pattern: &str, from: usize, icu: bool) -> Option<usize> {
    let pattern: Vec<u16> = pattern.encode_utf16().collect();
    (from..s.len()).find(|&i| !(icu && ignorable(s[i])) && matches_at(s, i, &pattern, icu))
}

/// The command name at `s[from..end]`, up to a space, when the runner knows it (or it is the
/// stop token).
fn known_name(s: &[u16], from: usize, end: usize, token: Option<&str>) -> Option<String> {
    let info = String::from_utf16_lossy(s.get(from..end)?);
    let name = info.split(' ').next().unwrap_or_default().to_owned();
    let known = COMMANDS.iter().any(|c| c.eq_ignore_ascii_case(&name))
        || token.is_some_and(|t| t.eq_ignore_ascii_case(&name));
    known.then_some(name)
}

/// The command the runner reads in `line`, as `TryParseV2` then `TryParse` do (UTF-16
/// offsets and all), with ordinal comparisons or ICU's.
fn runner_command(line: &str, token: Option<&str>, icu: bool) -> Option<String> {
    // `::name props::data`, after `TrimStart` (.NET's white space is Rust's).
    let trimmed: Vec<u16> = line.trim_start().encode_utf16().collect();
    if matches_at(&trimmed, 0, &[0x3A, 0x3A], icu) {
        if let Some(end) = index_of(&trimmed, "::", 2, icu) {
            if let Some(name) = known_name(&trimmed, 2, end, token) {
                return Some(name);
            }
        }
    }
    // Legacy `##[name props]data`, anywhere in the line.
    let units: Vec<u16> = line.encode_utf16().collect();
    let at = index_of(&units, "##[", 0, icu)?;
    let close = (at..units.len()).find(|&i| units[i] == u16::from(b']'))?;
    known_name(&units, at + 3, close, token)
}

/// The command of `line` under either comparison, or under the plain rule (a line starting
/// with `::` and a name, or holding `##[` and a later `]`).
fn command_in(line: &str, token: Option<&str>) -> Option<String> {
    let plain = line.trim_start().strip_prefix("::").and_then(|rest| {
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
            .collect();
        (!name.is_empty()).then_some(name)
    });
    let legacy = line
        .find("##[")
        .filter(|&at| line[at..].contains(']'))
        .map(|_| "##[".to_owned());
    runner_command(line, token, false)
        .or_else(|| runner_command(line, token, true))
        .or(plain)
        .or(legacy)
}

/// An annotation nsys-gate means: `::error` or `::warning` with an nsys-gate title, its
/// properties and message escaped (no raw `:` or `,` in the title).
fn is_own_annotation(line: &str) -> bool {
    let Some(rest) = line
        .strip_prefix("::error title=nsys-gate")
        .or_else(|| line.strip_prefix("::warning title=nsys-gate"))
    else {
        return false;
    };
    rest.split_once("::")
        .is_some_and(|(title, _)| !title.contains([':', ',']))
}

/// No line of standard output or standard error is a workflow command, but the report's
/// `::stop-commands::TOKEN` … `::TOKEN::` block and, after it, nsys-gate's own annotations.
#[track_caller]
fn assert_inert(out: &Output) {
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    let show = || format!("--- stdout\n{stdout}\n--- stderr\n{stderr}");
    for line in runner_lines(&stderr) {
        assert_eq!(
            command_in(line, None),
            None,
            "stderr line {line:?}\n{}",
            show()
        );
    }
    let mut token: Option<String> = None;
    let mut after_report = false;
    for line in runner_lines(&stdout) {
        if let Some(t) = &token {
            // Inside the block only the resume line is read.
            if command_in(line, Some(t)).is_some_and(|c| c.eq_ignore_ascii_case(t)) {
                assert_eq!(line, format!("::{t}::"), "{}", show());
                token = None;
                after_report = true;
            }
            continue;
        }
        if let Some(t) = line.strip_prefix("::stop-commands::") {
            assert!(!after_report, "a second report block\n{}", show());
            assert_eq!(t.len(), 32, "{}", show());
            assert!(t.chars().all(|c| c.is_ascii_hexdigit()), "{}", show());
            token = Some(t.to_owned());
            continue;
        }
        // After the report, every line is a whole annotation: a raw line break in one would
        // leave a line of its message on its own here.
        assert!(
            is_own_annotation(line),
            "stdout line {line:?} is not an annotation of nsys-gate\n{}",
            show()
        );
    }
    assert_eq!(token, None, "the report's block was not closed\n{}", show());
    assert_no_vso(out);
}

/// `nsys-gate run --no-post` inside GitHub Actions (a step summary and an output file).
fn run_in_actions(run: &Run, nsys: Option<&Path>, args: &[&str]) -> Output {
    let files = TempDir::new().unwrap();
    let mut cmd = bin();
    cmd.args(["run", "--no-post", "--run-dir"]).arg(&run.dir);
    if let Some(nsys) = nsys {
        cmd.arg("--nsys").arg(nsys);
    }
    cmd.args(args)
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_STEP_SUMMARY", files.path().join("summary.md"))
        .env("GITHUB_OUTPUT", files.path().join("output.txt"))
        .output()
        .unwrap()
}

#[track_caller]
fn assert_shown(out: &Output, text: &str) {
    assert!(
        stderr(out).contains(text),
        "no {text:?} in\n{}",
        stderr(out)
    );
}

#[test]
fn a_hostile_profile_name_and_run_id_issue_no_command() {
    let nsys = require_nsys!("2024.2");
    let run = fixture("clean");
    run.edit_manifest(
        "profile_name: smoke-tensor",
        r#"profile_name: "evil\n::error title=pwn::x""#,
    );
    run.edit_manifest("run_id: clean", r#"run_id: "R1\r::add-mask::ghp_x""#);
    let out = run_in_actions(&run, Some(&nsys), &[]);
    assert_status(&out, 0);
    assert_inert(&out);
    // Read as written, line breaks shown.
    assert_shown(
        &out,
        r"nsys-gate: profile evil\n::error title=pwn::x (run R1\r::add-mask::ghp_x)",
    );
    // The annotation carries them escaped as the runner decodes them.
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("::evil%0A::error title=pwn::x (run R1%0D::add-mask::ghp_x): "),
        "{stdout}"
    );
}

#[test]
fn a_profile_name_holding_the_legacy_prefix_issues_no_command() {
    let nsys = require_nsys!("2024.2");
    let run = fixture("clean");
    run.edit_manifest(
        "profile_name: smoke-tensor",
        r#"profile_name: "x ##[error]v1""#,
    );
    let out = run_in_actions(&run, Some(&nsys), &[]);
    assert_status(&out, 0);
    assert_inert(&out);
    assert_shown(&out, "nsys-gate: profile x #\u{200B}#[error]v1 (run clean)");
}

#[test]
fn a_capture_range_with_a_carriage_return_issues_no_command() {
    let nsys = require_nsys!("2024.2");
    let run = fixture("clean");
    run.edit_manifest(
        "capture_range: profile-target",
        r#"capture_range: "profile-target\r::warning title=pwn::cap""#,
    );
    let out = run_in_actions(&run, Some(&nsys), &[]);
    assert_status(&out, 1);
    assert_inert(&out);
    assert_shown(&out, r"`profile-target\r::warning title=pwn::cap`");
}

#[test]
fn a_yaml_error_quoting_a_hostile_key_issues_no_command() {
    let run = fixture("clean");
    let key = r#""k\n::error title=pwn::dup ##[warning]w""#;
    run.set_manifest(&format!("{}{key}: 1\n{key}: 2\n", run.manifest()));
    for args in [&[][..], &["--reuse-stats"][..]] {
        let out = run_in_actions(&run, None, args);
        assert_status(&out, 2);
        assert_inert(&out);
        assert_shown(&out, r"duplicate key `k\n::error title=pwn::dup #");
    }
    // `analyze` says it through its own error writer.
    let out = bin()
        .args(["analyze", "--run-dir"])
        .arg(&run.dir)
        .env("GITHUB_ACTIONS", "true")
        .output()
        .unwrap();
    assert_status(&out, 2);
    assert_inert(&out);
}

#[test]
fn a_bad_iteration_pattern_issues_no_command() {
    let run = fixture("clean");
    // The regex crate's error repeats the pattern on an indented line of its own.
    run.set_manifest(&format!(
        "{}iteration_pattern: \"::error title=pwn::(x ##[add-mask]y\"\n",
        run.manifest()
    ));
    let out = run_in_actions(&run, None, &[]);
    assert_status(&out, 2);
    assert_inert(&out);
    assert_shown(
        &out,
        "`iteration_pattern` is not a valid regular expression",
    );
    let out = bin()
        .args(["analyze", "--run-dir"])
        .arg(&run.dir)
        .env("GITHUB_ACTIONS", "true")
        .output()
        .unwrap();
    assert_status(&out, 2);
    assert_inert(&out);
}

#[test]
fn a_hostile_expected_trace_path_issues_no_command() {
    let run = fixture("clean");
    run.edit_manifest(
        "expected_trace_path: inference_profiling/snippets/smoke-tensor/runs/clean/trace.nsys-rep",
        r#"expected_trace_path: "runs/clean/t\n::error title=pwn::t\r::set-output name=gate::pass.nsys-rep""#,
    );
    let out = run_in_actions(&run, None, &[]);
    assert_status(&out, 2);
    assert_inert(&out);
    assert_shown(
        &out,
        r"names `t\n::error title=pwn::t\r::set-output name=gate::pass.nsys-rep`, looked for beside the manifest",
    );
}

#[test]
fn reuse_stats_with_a_hostile_stamp_issues_no_command() {
    let nsys = require_nsys!("2024.2");
    let run = fixture("clean");
    assert_status(&common::analyze(&run.dir, &nsys, &[]), 0);
    let stamp_path = run.path("stats/nsys-gate-stats.json");
    let mut stamp = common::read_json(&stamp_path);
    stamp["nsys_version"] = "2024.2.3\n::error title=pwn::version ##[warning]v".into();
    stamp["reports"]["nvtx_gpu_proj_trace"]["message"] =
        "no CUDA\r::add-mask::m\n  ::error::w ##[error]x".into();
    std::fs::write(&stamp_path, serde_json::to_vec(&stamp).unwrap()).unwrap();
    let out = run_in_actions(&run, None, &["--reuse-stats"]);
    assert_status(&out, 0);
    assert_inert(&out);
    assert_shown(
        &out,
        r"Nsight Systems 2024.2.3\n::error title=pwn::version #",
    );
    assert_shown(&out, r"no CUDA\r::add-mask::m\n  ::error::w #");
}

#[test]
fn a_command_line_error_quoting_a_hostile_value_issues_no_command() {
    let run = fixture("clean");
    let out = run_in_actions(&run, None, &["--nsys-timeout", "1\n::error title=pwn::t"]);
    assert_status(&out, 2);
    assert_inert(&out);
    assert_shown(&out, "--nsys-timeout");
}

/// The Azure Pipelines agent's reading of a line: `##vso[` anywhere (ordinally, or skipping
/// what ICU ignores, as an older agent's culture-sensitive `IndexOf` does) and a later `]`
/// (microsoft/azure-pipelines-agent `Command.TryParse`). The prefix is looked for in any case.
fn vso_command_in(line: &str) -> bool {
    let units: Vec<u16> = line.to_ascii_lowercase().encode_utf16().collect();
    [false, true].into_iter().any(|icu| {
        index_of(&units, "##vso[", 0, icu).is_some_and(|at| units[at..].contains(&u16::from(b']')))
    })
}

/// No line of either stream holds an Azure Pipelines logging command, the report's included.
#[track_caller]
fn assert_no_vso(out: &Output) {
    for stream in [&out.stdout, &out.stderr] {
        let text = String::from_utf8_lossy(stream);
        for line in runner_lines(&text) {
            assert!(
                !vso_command_in(line),
                "line {line:?}\n--- stdout\n{}\n--- stderr\n{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}

/// A range name holding Azure's `##vso[` and GitHub's `::error::` reaches no log as a command:
/// in GitHub Actions (neither is one), in GitLab CI and outside CI (no `##vso[`; GitHub's
/// commands mean nothing there and are shown as written).
#[test]
fn a_range_name_holding_azure_and_github_commands_issues_none_on_any_platform() {
    let nsys = require_nsys!("2024.2");
    let run = fixture("clean");
    run.edit_manifest(
        "capture_range: profile-target",
        r###"capture_range: "##vso[task.setvariable variable=x]y\n::error::z""###,
    );
    let out = run_in_actions(&run, Some(&nsys), &[]);
    assert_status(&out, 1);
    assert_inert(&out);
    assert_no_vso(&out);
    assert_shown(&out, r"`##vso\[task.setvariable variable=x]y\n::error::z`");
    for ci in [&[("GITLAB_CI", "true"), ("CI", "true")][..], &[]] {
        let out = bin()
            .args(["run", "--no-post", "--nsys"])
            .arg(&nsys)
            .arg("--run-dir")
            .arg(&run.dir)
            .env_remove("GITHUB_ACTIONS")
            .envs(ci.iter().copied())
            .output()
            .unwrap();
        assert_status(&out, 1);
        assert_no_vso(&out);
        assert_shown(&out, r"`##vso\[task.setvariable variable=x]y\n::error::z`");
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("##vso\\["),
            "the report names the range, broken: {}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
}

/// The checker itself: it catches what the runner would run, the ICU readings included.
#[test]
fn the_checker_reads_commands_as_the_runner_does() {
    let seen = |line: &str| command_in(line, None);
    assert_eq!(seen("  ::error title=x::y").as_deref(), Some("error"));
    assert_eq!(seen("a ##[add-mask]b").as_deref(), Some("add-mask"));
    assert_eq!(seen("::nothing::y").as_deref(), Some("nothing"));
    assert_eq!(
        runner_command("\t::set-output name=a::b", None, true).as_deref(),
        Some("set-output")
    );
    // ICU (.NET's culture-sensitive `StartsWith`/`IndexOf` on Linux) skips a zero-width space,
    // so `:\u{200B}:` starts with `::` there; but the parser then reads the name from UTF-16
    // offset 2, the second colon, and `:error` is no command. Ordinally there is no `::` at all.
    assert_eq!(runner_command(":\u{200B}:error::y", None, true), None);
    assert_eq!(runner_command("\u{200B}::error::y", None, true), None);
    assert_eq!(runner_command(":\u{200B}:error::y", None, false), None);
    assert_eq!(runner_command("a #\u{200B}#[error]b", None, true), None);
    assert_eq!(runner_lines("a\r::b\r\nc\nd"), ["a", "::b", "c", "d"]);
    assert!(is_own_annotation(
        "::error title=nsys-gate%3A x (fails the job)::m%0A::y"
    ));
    assert!(!is_own_annotation("::error title=nsys-gate: x::m"));
    assert!(vso_command_in("a ##vso[task.setvariable variable=x]y"));
    assert!(vso_command_in("#\u{200B}#VSO[task.complete]"));
    assert!(!vso_command_in("##vso\\[task.setvariable variable=x]y"));
}
