//! Tests of the renderer on synthetic analyses: escaping in place, the size limits, the
//! template errors.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::*;
use nsys_gate_core::artifact::GateResult;
use nsys_gate_core::artifact::{
    Advice, AdviceKernels, AdviceKind, Analysis, Gate, RangeKernel, Run, Warning, WarningCode,
};
use nsys_gate_core::outcome::{Failure, FailureKind};

/// GitHub's comment limit and step-summary limit, as the forge gives them.
const COMMENT: Budget = Budget::Chars(65_536);
const SUMMARY_BYTES: usize = 1024 * 1024;

const HOSTILE: &str = "x|y <b>z</b> @octocat @org/team #12 GH-7 o/r#3 https://e.com ```f``` \n- [l](u) **b** $m$ &amp; <!-- c --> \u{202E}";

fn run(profile: &str, text: &str) -> Run {
    Run {
        profile_name: profile.to_owned(),
        run_id: text.to_owned(),
        target: None,
        device: Some(text.to_owned()),
        git_commit: Some(text.to_owned()),
        command_line: Some(text.to_owned()),
        capture_range: Some(text.to_owned()),
        iteration_pattern: format!("^{text} (\\d+)$"),
        record_count: Some(2),
        record_ids_sha256: None,
        workload: serde_json::json!({"iterations": 5, "warmup": 1}),
        cuda: Some(serde_json::json!({"synchronize_each_iteration": false, text: text})),
        data_source: None,
        extra: BTreeMap::new(),
    }
}

/// An analysis with `iterations` iterations and `ranges` ranges named after `name` (the
/// shared fake, [`nsys_gate_core::artifact::fake`], with every text field `name`, warnings of both
/// kinds and advice of every kind).
fn analysis(name: &str, iterations: u64, ranges: usize, gpu: bool) -> Analysis {
    let durations: Vec<i64> = (0..iterations as i64)
        .map(|i| 2_500_000 + (i % 7) * 10_000)
        .collect();
    let names: Vec<String> = (0..ranges).map(|i| format!("{name} {i}")).collect();
    let named: Vec<(&str, i64)> = names.iter().map(|n| (n.as_str(), 0)).collect();
    let mut a = nsys_gate_core::artifact::fake::analysis(&durations, &named, gpu);
    // Every range: instances of 1000 ns, 1001 ns, … (one per iteration).
    let stats = nsys_gate_core::artifact::fake::range_stats(
        (0..iterations as i64).map(|i| 1000 + i).collect(),
    );
    for r in &mut a.host_ranges {
        r.path = vec![r.name.clone()];
        r.inclusive = stats.clone();
        r.exclusive = stats.clone();
    }
    for r in &mut a.gpu_projected_ranges {
        r.path = vec![r.name.clone()];
        r.projected = stats.clone();
        r.host_total_ns = stats.total_ns;
    }
    a.run = run(name, name);
    let mut warnings = vec![
        Warning::new(WarningCode::HighVariance, format!("cv over 0.10 in {name}")),
        Warning::new(WarningCode::MissingIterations, format!("missing in {name}"))
            .with_iterations(vec![5, 6]),
    ];
    warnings[1].gating = true;
    if !gpu {
        warnings.push(Warning::new(
            WarningCode::GpuProjectionUnavailable,
            "nsys skipped it".to_owned(),
        ));
    }
    a.warnings = warnings;
    a.gate = Gate {
        gating_codes: vec![WarningCode::MissingIterations],
        result: GateResult::Fail,
        failing_codes: vec![WarningCode::MissingIterations],
    };
    a.iteration_summary.expected = iterations + 2;
    a.advice = advice_items(name, gpu);
    a
}

/// An advice item on `range` of one name, 20 instances over iterations of 50 ms in all.
fn advice_item(kind: AdviceKind, range: &str, projected_ns: Option<i64>) -> Advice {
    Advice {
        kind,
        range: range.to_owned(),
        group: range.to_owned(),
        path: vec![range.to_owned()],
        names: 1,
        instances: 20,
        host_exclusive_ns: 10_000_000,
        host_exclusive_mean_ns: 500_000.0,
        host_inclusive_ns: 12_000_000,
        host_inclusive_mean_ns: 600_000.0,
        iterations_host_inclusive_ns: 50_000_000,
        host_exclusive_share: 0.2,
        host_inclusive_share: 0.24,
        projected_ns,
        projected_mean_ns: projected_ns.map(|p| p as f64 / 20.0),
        projected_instances: projected_ns.map(|_| 20),
        gpu_operation_count: projected_ns.map(|_| 60),
        projected_to_host_inclusive: projected_ns.map(|p| p as f64 / 12_000_000.0),
        threshold_share: 0.05,
        threshold_ratio: 0.5,
        kernels: None,
    }
}

/// What the analysis would have advised on the synthetic analysis: host-bound and GPU-bound
/// ranges with a projection, the largest host exclusive time without.
fn advice_items(name: &str, gpu: bool) -> Vec<Advice> {
    if !gpu {
        return vec![advice_item(
            AdviceKind::NoGpuProjection,
            &format!("{name} 0"),
            None,
        )];
    }
    let mut gpu_bound = advice_item(AdviceKind::GpuBound, &format!("{name} 2"), Some(11_000_000));
    gpu_bound.kernels = Some(AdviceKernels {
        launches: 40,
        total_ns: 9_000_000,
        kernels: vec![RangeKernel {
            name: format!("void {name}<float>(float*)"),
            base_name: None,
            launches: 40,
            total_ns: 9_000_000,
            share: 1.0,
        }],
        other_kernels: None,
    });
    vec![
        advice_item(AdviceKind::HostBound, &format!("{name} 0"), Some(2_400_000)),
        advice_item(AdviceKind::HostBound, &format!("{name} 1"), None),
        gpu_bound,
    ]
}

fn outcome(a: Analysis) -> RunOutcome {
    RunOutcome::Analysed {
        analysis: Box::new(a),
        path: PathBuf::from("/runs/r/analysis.json"),
    }
}

/// The options `report` and `run` use: ten rows (the marker is of the outcomes' key).
fn options(budget: Budget) -> RenderOptions {
    RenderOptions {
        top: 10,
        budget,
        exact_names: false,
        links: super::Links::default(),
        from_artifact: false,
    }
}

fn render_default(outcomes: &[RunOutcome], budget: Budget) -> String {
    render(outcomes, &options(budget), &Template::builtin()).expect("renders")
}

/// Unescaped `|` in a line.
fn cells(line: &str) -> usize {
    let mut n = 0;
    let mut backslashes = 0;
    for c in line.chars() {
        if c == '|' && backslashes % 2 == 0 {
            n += 1;
        }
        backslashes = if c == '\\' { backslashes + 1 } else { 0 };
    }
    n
}

/// The chart's first line, fixed in the template: its colours.
const CHART_INIT: &str =
    r##"%%{init: {"themeVariables": {"xyChart": {"plotColorPalette": "#4e79a7, #e15759"}}}}%%"##;

/// What the rendered markdown must never hold, whatever the names.
fn assert_inert(md: &str) {
    let mut in_table: Option<usize> = None;
    let mut in_fence = false;
    for line in md.lines() {
        if line.starts_with("```") {
            assert!(
                line == "```mermaid" || line == "```",
                "fence from data: {line:?}"
            );
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            assert!(
                !line.contains(|c: char| c.is_alphabetic()
                    && !"xychartbetaitlelinebarxisyrdumnsµPeo".contains(c))
                    || line.contains("title")
                    || line.contains("axis")
                    || line == CHART_INIT,
                "data in the chart: {line:?}"
            );
            continue;
        }
        if line.starts_with("    ") {
            // An indented code block: nothing in it is interpreted.
            continue;
        }
        // Tables keep their shape.
        if line.starts_with('|') {
            let n = cells(line);
            match in_table {
                None => in_table = Some(n),
                Some(m) => assert_eq!(n, m, "row with another number of cells: {line:?}"),
            }
        } else {
            in_table = None;
        }
        // Only the template's own HTML.
        let mut rest = line;
        while let Some(at) = rest.find('<') {
            let tail = &rest[at..];
            assert!(
                [
                    "<!-- nsys-gate:",
                    "<details>",
                    "</details>",
                    "<summary>",
                    "</summary>",
                    "<sub>",
                    "</sub>"
                ]
                .iter()
                .any(|t| tail.starts_with(t)),
                "raw HTML from data: {line:?}"
            );
            rest = &tail[1..];
        }
        let chars: Vec<char> = line.chars().collect();
        for w in chars.windows(2) {
            assert!(
                !(w[0] == '@' && w[1].is_ascii_alphanumeric()),
                "mention: {line:?}"
            );
        }
        for (at, _) in line.match_indices('#') {
            let entity = line[..at].ends_with('&');
            let next = line[at + 1..].chars().next();
            assert!(
                entity || !next.is_some_and(|c| c.is_ascii_digit()),
                "issue link: {line:?}"
            );
        }
        // nsys-gate's own words link to one address; no other URL reaches the report.
        assert!(
            !line
                .replace(nsys_gate_core::artifact::DOWNLOAD_URL, "")
                .contains("://"),
            "URL: {line:?}"
        );
    }
    assert!(!in_fence, "unclosed fence");
    let markup: Vec<&str> = md.lines().filter(|l| !l.starts_with("    ")).collect();
    assert_eq!(
        markup.iter().filter(|l| l.contains("<details>")).count(),
        markup.iter().filter(|l| l.contains("</details>")).count(),
        "unbalanced <details>"
    );
}

#[test]
fn hostile_text_everywhere_stays_inert() {
    let mut a = analysis(HOSTILE, 5, 12, true);
    a.warnings[0].message = HOSTILE.to_owned();
    let mut failure = Failure::new(
        PathBuf::from(HOSTILE),
        FailureKind::NsysFailed,
        format!("{HOSTILE}\n```\n</details>\n::error::x"),
    );
    failure.nsys_version = Some(HOSTILE.to_owned());
    failure.nsys_words = Some(format!("{HOSTILE}\n```\n</details>"));
    failure.command = Some(HOSTILE.to_owned());
    failure.facts.profile_name = Some(HOSTILE.to_owned());
    let failure = RunOutcome::Failed(failure);
    let md = render_default(&[outcome(a), failure], COMMENT);
    assert!(md.starts_with(crate::marker::MARKER_PREFIX));
    assert_inert(&md);
    assert!(md.contains("@\u{200B}octocat"));
    assert!(md.contains("x\\|y"));
}

/// The report words the analysis's advice and decides nothing: the host-bound sentence names
/// the host exclusive time, and the GPU projection against the host inclusive time; a group is
/// shown with its number of names; an analysis without `advice` (written before it existed)
/// gets no advice, whatever its ranges.
#[test]
fn advice_is_worded_from_the_analysis_never_derived() {
    let a = analysis("r", 20, 3, true);
    let md = render_default(&[outcome(a.clone())], COMMENT).replace('\u{a0}', " ");
    assert!(md.contains("What to look at (3)"), "{md}");
    assert!(
        md.contains("- **r 0**: 500 µs of host exclusive time per instance (20.0 % of the counted iterations' host time), while the GPU work it launched spans only 2.40 ms in all, 20.0 % of its 12.0 ms host inclusive time (under 50.0 %). That time is spent on the host"),
        "{md}"
    );
    assert!(
        md.contains("- **r 1**: 500 µs of host exclusive time per instance (20.0 % of the counted iterations' host time), and it launched no GPU work."),
        "{md}"
    );
    assert!(
        md.contains("- **r 2**: the GPU work it launched spans 550 µs per instance (projected, 60 GPU operations in all). Look at the kernels launched in this range: r 100.0 % of its kernel time."),
        "{md}"
    );

    let mut grouped = a.clone();
    grouped.advice.truncate(1);
    grouped.advice[0].range = "layer_#.load".to_owned();
    grouped.advice[0].names = 2;
    let md = render_default(&[outcome(grouped)], COMMENT).replace('\u{a0}', " ");
    assert!(md.contains(".load (2 names)**: 500"), "{md}");

    let mut old = a;
    old.advice.clear();
    let json = String::from_utf8(old.to_json()).unwrap();
    let mut value: serde_json::Value = serde_json::from_str(&json).unwrap();
    value.as_object_mut().unwrap().remove("advice");
    let read: Analysis = serde_json::from_value(value).expect("a file without advice reads");
    assert!(read.advice.is_empty());
    let md = render_default(&[outcome(read)], COMMENT);
    assert!(!md.contains("What to look at"), "{md}");
    assert!(md.contains("### Largest host times"), "{md}");
}

#[test]
fn wording_keeps_the_timing_semantics() {
    for gpu in [true, false] {
        let md = render_default(&[outcome(analysis("r", 20, 12, gpu))], COMMENT);
        let lower = md.to_lowercase();
        assert!(!lower.contains("regression"), "{md}");
        for (at, _) in lower.match_indices("gpu latency") {
            assert!(
                lower[..at].ends_with("is not "),
                "host time called GPU latency: {md}"
            );
        }
        assert!(md.contains("Resolve this before drawing performance conclusions"));
        assert!(md.contains("do not add up"));
        if !gpu {
            // No column of `unavailable`: one sentence says it.
            assert!(md.contains("| count | 20 |\n"), "{md}");
            assert!(md.contains("GPU projection unavailable (not zero)"), "{md}");
        }
        // The gate comes first, before any measurement.
        let gate = md.find("gate failed").unwrap();
        assert!(gate < md.find("### Iteration statistics").unwrap());
        // Measurements before advice.
        assert!(md.find("### Largest host times").unwrap() < md.find("What to look at").unwrap());
        assert_one_unit_per_column(&md);
    }
}

#[test]
fn thousands_of_long_hostile_names_fit_a_comment() {
    let name = format!("{HOSTILE}{}", "long name ".repeat(30));
    let a = analysis(&name, 3000, 5000, true);
    let md = render_default(&[outcome(a)], COMMENT);
    let size = md.chars().count();
    assert!(size <= 65_536, "{size} characters");
    assert!(md.starts_with(crate::marker::MARKER_PREFIX));
    assert!(
        md.contains("This report was shortened to fit the limit of 65,536 characters"),
        "{md}"
    );
    assert!(md.contains("left out"));
    assert!(md.contains("/runs/r/analysis.json"));
    assert_inert(&md);
}

#[test]
fn a_summary_may_hold_more_than_a_comment() {
    let a = analysis("r", 3000, 50, true);
    let comment = render_default(&[outcome(a.clone())], COMMENT);
    let summary = render_default(&[outcome(a)], Budget::Bytes(SUMMARY_BYTES));
    assert!(summary.len() <= SUMMARY_BYTES);
    assert!(summary.len() > comment.len());
    assert!(!summary.contains("shortened"), "the full report fits 1 MiB");
}

#[test]
fn hundreds_of_run_directories_are_cut_with_a_notice() {
    let outcomes: Vec<RunOutcome> = (0..400)
        .map(|i| {
            if i % 2 == 0 {
                outcome(analysis(&format!("run {i}"), 5, 3, false))
            } else {
                RunOutcome::Failed(Failure::new(
                    PathBuf::from(format!("/runs/{i}")),
                    FailureKind::IncompatibleTrace,
                    "x".repeat(3000),
                ))
            }
        })
        .collect();
    for budget in [COMMENT, Budget::Bytes(100_000)] {
        let md = render_default(&outcomes, budget);
        assert!(budget.fits(&md), "{} over {budget:?}", budget.measure(&md));
        assert!(md.starts_with(crate::marker::MARKER_PREFIX));
        assert!(
            md.contains("This report was cut to fit the limit of "),
            "{}",
            &md[md.len() - 500..]
        );
        assert!(md.contains("and 195 more"));
        assert_inert(&md);
    }
}

#[test]
fn a_custom_template_gets_the_view() {
    let t = Template {
        name: "mine.j2".to_owned(),
        source: "{{ gate.word }}:{% for r in runs %} {{ r.analysed.title }}{% endfor %}.\n"
            .to_owned(),
    };
    let md = render(
        &[outcome(analysis("p", 5, 1, false))],
        &options(COMMENT),
        &t,
    )
    .unwrap();
    assert_eq!(md, "failed: p · run p.\n");
}

#[test]
fn template_errors_name_the_template_and_the_line() {
    let syntax = Template {
        name: "broken.j2".to_owned(),
        source: "line 1\n{% if %}\n".to_owned(),
    };
    let err = Renderer::new(&syntax).err().expect("syntax error");
    assert!(
        matches!(err, RenderError::Template { line: Some(2), .. }),
        "{err}"
    );
    assert!(
        err.to_string()
            .starts_with("template broken.j2, line 2: syntax error"),
        "{err}"
    );

    let undefined = Template {
        name: "undefined.j2".to_owned(),
        source: "a\nb\n{{ gate.no_such_field }}\n".to_owned(),
    };
    let err = render(
        &[outcome(analysis("p", 5, 1, false))],
        &options(COMMENT),
        &undefined,
    )
    .unwrap_err();
    assert!(
        err.to_string()
            .starts_with("template undefined.j2, line 3: undefined value"),
        "{err}"
    );
}

#[test]
fn the_builtin_template_keeps_its_trailing_newline() {
    let md = render_default(&[outcome(analysis("p", 5, 1, false))], COMMENT);
    assert!(md.ends_with("</sub>\n"), "{md}");
    assert!(!md.contains("\n\n\n"), "three line breaks in a row:\n{md}");
}

#[test]
fn the_marker_carries_the_profile_names() {
    use crate::marker::{key_of_marker, CommentKey};
    let outcomes = [
        outcome(analysis("h100", 3, 1, false)),
        outcome(analysis("a100", 3, 1, false)),
        outcome(analysis("h100", 3, 1, false)),
    ];
    assert_eq!(CommentKey::of_report(&outcomes).as_str(), "a100,h100");
    let md = render_default(&outcomes, COMMENT);
    assert!(md.starts_with("<!-- nsys-gate:a100,h100 -->\n"), "{md}");
    assert_eq!(key_of_marker(&md), Some("a100,h100"));
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    /// The whole report, rendered with arbitrary text as the profile name, range names and
    /// warning message, stays inert markdown and within the comment limit.
    #[test]
    fn arbitrary_names_through_the_whole_report_stay_inert(
        name in "\\PC{0,40}",
        hostile in proptest::collection::vec(
            proptest::prop_oneof![
                proptest::string::string_regex("[|<>@#`\\[\\]()!*_~\\\\\n\r:/.,\" a-zA-Z0-9-]{0,30}").unwrap(),
                "\\PC{0,30}",
            ],
            1..6,
        ),
        gpu in proptest::bool::ANY,
    ) {
        let mut a = analysis(&name, 5, 3, gpu);
        for (range, text) in a.host_ranges.iter_mut().zip(hostile.iter().cycle()) {
            range.name = text.clone();
            range.path = vec![text.clone()];
        }
        a.warnings[0].message = hostile[0].clone();
        let md = render_default(&[outcome(a)], COMMENT);
        assert_inert(&md);
        proptest::prop_assert!(md.chars().count() <= 65_536);
    }
}

/// The GPU work of a run on one T4: one kernel of `total` ns, one copy.
fn t4_work(total: i64) -> nsys_gate_core::artifact::GpuWork {
    nsys_gate_core::artifact::GpuWork {
        devices: Some(vec![nsys_gate_core::artifact::GpuDevice {
            device: "NVIDIA T4 (0)".into(),
            name: Some("NVIDIA T4".into()),
            id: Some(0),
            kernels: 1,
            memory_operations: 1,
            ..Default::default()
        }]),
        kernels: Some(vec![nsys_gate_core::artifact::KernelStats {
            name: "gemm<float, 2>".into(),
            base_name: None,
            instances: 1,
            total_ns: total,
            mean_ns: total as f64,
            median_ns: None,
            minimum_ns: total,
            maximum_ns: total,
            stddev_ns: None,
            share: 1.0,
        }]),
        memory_copies: Some(vec![nsys_gate_core::artifact::MemoryCopies {
            copy_kind: "HtoD".into(),
            source: Some("Pinned".into()),
            destination: Some("Device".into()),
            count: 1,
            bytes: 1,
            total_ns: 45_000,
            bandwidth_bytes_per_s: None,
            pageable_host: false,
            iteration_count: None,
            iteration_bytes: None,
            iteration_total_ns: None,
            per_iteration_ns: None,
        }]),
        ..nsys_gate_core::artifact::GpuWork::default()
    }
}

/// Five base runs about 2.5 ms (the second on another device), and a head 20 % slower with a
/// hostile range name; the base runs' source.
fn history_and_head() -> (
    Vec<nsys_gate_compare::compare::RunLevel>,
    Analysis,
    nsys_gate_core::artifact::comparison::BaselineSource,
) {
    use nsys_gate_compare::compare::RunLevel;
    use nsys_gate_core::artifact::comparison::{BaselineKind, BaselineSource};
    use nsys_gate_core::artifact::fake;
    let ranges = [("inference", 8_000_000), ("pre", 2_000_000)];
    let mut bases = Vec::new();
    for (k, offset) in [0i64, 10_000, -8_000, 4_000, -3_000]
        .into_iter()
        .enumerate()
    {
        let host: Vec<i64> = (0..5).map(|i| 2_500_000 + offset + i * 1_000).collect();
        let mut base = fake::analysis(&host, &ranges, true);
        base.gpu_work = Some(t4_work(1_000_000));
        base.run.git_commit = Some(format!("{k}abcdef0123456789abcdef0123456789abcdef"));
        if k == 1 {
            base.run.device = Some("cuda:1 @octocat".into());
        }
        bases.push(RunLevel::of(&base, &format!("base/{k}/analysis.json")));
    }
    let mut head = fake::analysis(
        &[3_000_000, 3_010_000, 2_990_000, 3_005_000, 2_995_000],
        &[("inference", 10_000_000), (HOSTILE, 500_000)],
        true,
    );
    head.gpu_work = Some(t4_work(1_400_000));
    let source = BaselineSource {
        kind: BaselineKind::Path,
        paths: vec!["base".into()],
        workflow: None,
        job: None,
        branch: None,
        artifact: None,
        workflow_runs: Vec::new(),
        ci_runs: Vec::new(),
        analyses: Vec::new(),
    };
    (bases, head, source)
}

/// More ranges than the tables show: both the host and the GPU range tables say how many
/// other ranges are left out of them (exact names: grouped, `stage#` would be one group).
#[test]
fn both_range_tables_say_how_many_ranges_they_leave_out() {
    use nsys_gate_compare::compare::{self, Criteria, RunLevel};
    use nsys_gate_core::artifact::fake;
    let names: Vec<String> = (0..12).map(|k| format!("stage{k}")).collect();
    // The first `slower` ranges 10 % slower.
    let ranges = |scale: i64, slower: usize| -> Vec<(&str, i64)> {
        names
            .iter()
            .enumerate()
            .map(|(k, n)| {
                let change = if k < slower { 110 } else { 100 };
                (
                    n.as_str(),
                    (1_000_000 + 10_000 * k as i64) * scale / 100 * change / 100,
                )
            })
            .collect()
    };
    let host = [2_500_000, 2_510_000, 2_490_000, 2_505_000, 2_495_000];
    let bases: Vec<RunLevel> = [100, 101, 99, 100]
        .iter()
        .enumerate()
        .map(|(k, &scale)| {
            RunLevel::of(
                &fake::analysis(&host, &ranges(scale, 0), true),
                &format!("base/{k}/analysis.json"),
            )
        })
        .collect();
    let head = fake::analysis(&host, &ranges(100, 3), true);
    let (_, _, source) = history_and_head();
    let c = compare::compare(
        &[RunLevel::of(&head, "/runs/r/analysis.json")],
        &bases,
        source,
        Vec::new(),
        Criteria {
            exact_names: true,
            ..Criteria::default()
        },
    );
    let outcomes = vec![outcome(head)];
    let md = Renderer::new(&Template::builtin())
        .unwrap()
        .render_with(&outcomes, Some(&c), &options(COMMENT))
        .unwrap();
    let note = "The 2 other ranges changed less; all are in comparison.json.";
    assert_eq!(md.matches(note).count(), 2, "{md}");
    // The title counts ranges, as the tables do, with exact names.
    assert!(md.contains("· within noise · 3 ranges slower"), "{md}");
    let gpu = md.find("**GPU-projected time per iteration:**").unwrap();
    assert!(md[gpu..].contains(note), "{md}");
    assert!(
        md.contains("**Host exclusive time per iteration:** 3 slower of 12 ranges beyond their run-to-run noise; with their own noise, ranges see changes of about"),
        "{md}"
    );
}

/// The base runs' table has a column only where one of its runs fills it: dates come from the
/// forge's runs (none from local paths), the note column only when a run is left out.
#[test]
fn the_base_runs_table_leaves_out_the_columns_no_run_fills() {
    use nsys_gate_compare::compare::{self, Criteria, RunLevel};
    let (bases, head, source) = history_and_head();
    let heads = [RunLevel::of(&head, "/runs/r/analysis.json")];
    let outcomes = vec![outcome(head.clone())];
    let opts = options(COMMENT);
    let render = |bases: &[RunLevel]| {
        let c = compare::compare(
            &heads,
            bases,
            source.clone(),
            Vec::new(),
            Criteria::default(),
        );
        Renderer::new(&Template::builtin())
            .unwrap()
            .render_with(&outcomes, Some(&c), &opts)
            .unwrap()
    };
    let md = render(&bases);
    assert!(
        md.contains("| commit | host inclusive | GPU projected | |\n| --- | ---: | ---: | --- |\n"),
        "{md}"
    );
    let mut dated = bases.clone();
    dated.remove(1);
    dated[0].created_at = Some("2026-11-28T09:15:00Z".into());
    let md = render(&dated);
    assert!(
        md.contains(
            "| commit | created | host inclusive | GPU projected |\n| --- | --- | ---: | ---: |\n"
        ),
        "{md}"
    );
    assert!(
        md.contains("| `0abcdef` | 2026-11-28 09:15 | 2.50\u{a0}ms | 1.25\u{a0}ms |\n| `2abcdef` |  | 2.49\u{a0}ms"),
        "{md}"
    );
}

/// The comparison section: a history of base runs, GPU measures and ranges, GPU work, a base
/// run left out for another device, hostile names in ranges and conditions; it shrinks with
/// the rest and never changes the gate.
#[test]
fn the_comparison_section_with_a_history_gpu_work_and_differences() {
    use nsys_gate_compare::compare::{self, Criteria, RunLevel};
    use nsys_gate_core::artifact::comparison::ChangeVerdict;
    let (bases, head, source) = history_and_head();
    let heads = [RunLevel::of(&head, "/runs/r/analysis.json")];
    let c = compare::compare(
        &heads,
        &bases,
        source.clone(),
        Vec::new(),
        Criteria::default(),
    );
    let run = &c.runs[0];
    assert!(run.like_for_like);
    assert_eq!(run.history.used.len(), 4);
    assert_eq!(run.history.left_out.len(), 1);
    assert_eq!(run.measures[1].verdict, Some(ChangeVerdict::Slower));
    let outcomes = vec![outcome(head.clone())];
    let opts = options(COMMENT);
    let render = |c, opts: &RenderOptions| {
        Renderer::new(&Template::builtin())
            .unwrap()
            .render_with(&outcomes, Some(c), opts)
            .unwrap()
    };
    let md = render(&c, &opts);
    assert_inert(&md);
    assert!(md.contains("GPU projected +20.0\u{a0}% **slower**"), "{md}");
    assert!(
        md.contains("1 base run is left out of the history: device differs from the head's."),
        "{md}"
    );
    assert!(
        md.contains("| `1abcdef` | 2.51\u{a0}ms | 1.26\u{a0}ms | left out: device differs |"),
        "{md}"
    );
    // Kernels by base name, judged; written without `kernels_by_base_name`, by the
    // capture's totals over the 5 counted iterations, said so.
    assert!(
        md.contains("| gemm | 200\u{a0}→\u{a0}280\u{a0}µs | +80.0\u{a0}µs | +40.0\u{a0}% | 100\u{a0}% | **slower** |"),
        "{md}"
    );
    assert!(
        md.contains("Kernels are compared by their capture totals over the counted iterations"),
        "{md}"
    );
    assert!(
        md.contains("the one memory copy kind did not change beyond its run-to-run noise; with its own noise, it sees changes of about 8.6\u{a0}% or more."),
        "{md}"
    );
    assert!(
        md.contains("kernel gemm **slower** +40.0\u{a0}% (+80.0\u{a0}µs per iteration)"),
        "{md}"
    );
    assert!(md.contains("GPU-projected time per iteration"), "{md}");
    assert!(
        md.contains("Gone range groups (only in base): pre (400\u{a0}µs)"),
        "{md}"
    );
    // The gate is the analysis's: not changed by a slower head.
    assert!(md.contains("# ✅ nsys-gate: gate passed"), "{md}");
    assert_one_unit_per_column(&md);
    // Shrunk to a tiny budget, the comparison's tables go with the others.
    let small = render(&c, &opts.within(Budget::Chars(6_000)));
    assert!(small.chars().count() <= 6_000);
    assert!(
        small.contains("### Compared with the base branch"),
        "{small}"
    );
    // Against the one run of another device only: not like for like, and no verdict.
    let c = compare::compare(
        &heads,
        &bases[1..2],
        source,
        Vec::new(),
        Criteria::default(),
    );
    let md = render(&c, &opts);
    assert_inert(&md);
    assert!(
        md.contains("⚠️ **not like for like** (device differs)"),
        "{md}"
    );
    assert!(
        md.contains("| device | cuda:1 @\u{200B}octocat | cuda:0 | differs |"),
        "{md}"
    );
    assert!(
        md.contains("**noise unknown** (0 usable base runs; 3 needed)"),
        "{md}"
    );
}

/// Numbers a person reads: the comparison's numbers set to float leftovers (a change of
/// 5.59e-9 ns between two equal ranges), subnormals, huge values, infinities and NaN; the
/// comment shows none in exponent notation, none as `NaN` or `inf`, a change under its
/// column's resolution as `0`, and each column in one unit.
#[test]
fn the_comparison_shows_every_number_positionally() {
    use nsys_gate_compare::compare::{self, Criteria, RunLevel};
    use nsys_gate_core::artifact::comparison::{RangeChange, RangeOnly};
    let (bases, head, source) = history_and_head();
    let heads = [RunLevel::of(&head, "/runs/r/analysis.json")];
    let mut c = compare::compare(&heads, &bases, source, Vec::new(), Criteria::default());
    let odd = [
        5.59e-9,
        -3.49e-10,
        5e-324,
        -0.0,
        f64::MIN_POSITIVE,
        1e300,
        f64::MAX,
        f64::INFINITY,
        f64::NAN,
        -1e-300,
    ];
    let run = &mut c.runs[0];
    let mut k = 0;
    let mut next = || {
        k += 1;
        odd[k % odd.len()]
    };
    // Two equal ranges of 1.5 µs whose levels differ by float leftovers, beside a real change.
    let change = |name: &str, base: f64, head: f64| RangeChange {
        name: name.to_owned(),
        base_per_iteration_ns: base,
        head_per_iteration_ns: head,
        change_ns: head - base,
        change_pct: Some((head - base) / base * 100.0),
        base_runs: 4,
        p_value: None,
        verdict: nsys_gate_core::artifact::comparison::ChangeVerdict::Slower,
        members: None,
        largest_members: Vec::new(),
        share: None,
        launched_by: Vec::new(),
    };
    run.host_ranges.changed = vec![
        change("real", 1_500.0, 3_000.0),
        change("leftover", 1_500.0, 1_500.0 + 5.59e-9),
        change("leftover.down", 1_500.0, 1_500.0 - 3.49e-10),
    ];
    let mut ranges = run.host_ranges.clone();
    for r in &mut ranges.changed {
        (r.base_per_iteration_ns, r.head_per_iteration_ns) = (next(), next());
        (r.change_ns, r.change_pct) = (next(), Some(next()));
    }
    ranges.new = vec![RangeOnly {
        name: "new".into(),
        per_iteration_ns: next(),
    }];
    run.gpu_ranges = Some(ranges.clone());
    // The kernels' table and its shares likewise.
    let kernels = run
        .kernels
        .as_mut()
        .expect("the head and the history record kernels");
    for r in &mut ranges.changed {
        r.share = Some(next());
    }
    kernels.items = ranges;
    for m in &mut run.measures {
        if let Some(b) = &mut m.base {
            (b.level_ns, b.minimum_ns, b.maximum_ns) = (next(), next(), next());
            b.spread_pct = Some(next());
        }
        if let Some(h) = &mut m.head {
            h.value_ns = next();
        }
        m.change_pct = Some(next());
        m.interval_pct = Some([next(), next()]);
    }
    for w in run.gpu_work.iter_mut().flat_map(|w| &mut w.kernels) {
        (w.base_total_ns, w.head_total_ns) = (Some(next()), Some(next()));
    }
    for r in &mut run.history.used {
        (r.host_inclusive_ns, r.gpu_projected_ns) = (Some(next()), Some(next()));
    }
    let outcomes = vec![outcome(head)];
    let md = Renderer::new(&Template::builtin())
        .unwrap()
        .render_with(&outcomes, Some(&c), &options(COMMENT))
        .unwrap();
    let section = &md[md.find("### Compared with the base branch").unwrap()..];
    // The charts' colours (`#4e79a7`) aside.
    let text: String = section
        .lines()
        .filter(|l| !l.starts_with("%%{init"))
        .collect::<Vec<_>>()
        .join("\n");
    let chars: Vec<char> = text.chars().collect();
    for (i, w) in chars.windows(3).enumerate() {
        let exponent = w[0].is_ascii_digit()
            && matches!(w[1], 'e' | 'E')
            && (w[2].is_ascii_digit() || matches!(w[2], '-' | '+'));
        let at: String = chars[i.saturating_sub(30)..(i + 30).min(chars.len())]
            .iter()
            .collect();
        assert!(!exponent, "exponent notation at `{at}` in\n{section}");
    }
    for word in ["NaN", "inf ", "inf\u{a0}", "infinity"] {
        assert!(!section.contains(word), "{word} in\n{section}");
    }
    assert!(
        section.contains("| real | 1.50\u{a0}→\u{a0}3.00\u{a0}µs | +1.50\u{a0}µs |"),
        "{section}"
    );
    assert!(
        section.contains("| leftover | 1.50\u{a0}→\u{a0}1.50\u{a0}µs | 0\u{a0}µs | 0.0\u{a0}% |"),
        "{section}"
    );
    assert!(
        section.contains("| leftover.down | 1.50\u{a0}→\u{a0}1.50\u{a0}µs | 0\u{a0}µs |"),
        "{section}"
    );
    assert_one_unit_per_column(&md);
}

/// Every column of every table in `md` shows its durations in one unit (`none`, `n/a` and
/// other words aside): `0.225 ms` under `9.51 ms`, never `225 µs`.
fn assert_one_unit_per_column(md: &str) {
    let cells = |line: &str| -> Vec<String> {
        // An escaped `\|` inside a cell is no column border.
        line.replace("\\|", "/")
            .trim()
            .trim_matches('|')
            .split('|')
            .map(|c| c.trim().to_owned())
            .collect()
    };
    let mut units: Vec<std::collections::BTreeSet<String>> = Vec::new();
    let mut tables = 0;
    for line in md.lines() {
        if !line.starts_with('|') {
            units.clear();
            continue;
        }
        if line.starts_with("| ---") || line.starts_with("| :--") {
            tables += 1;
            continue;
        }
        // The statistics' standard deviation, a spread, is shown in its own unit.
        if line.starts_with("| stddev |") {
            continue;
        }
        for (k, cell) in cells(line).iter().enumerate() {
            if units.len() <= k {
                units.push(Default::default());
            }
            // A duration cell: a number, a no-break space, a unit (and perhaps a note after).
            let mut words = cell.split(['\u{a0}', ' ']);
            let (Some(number), Some(unit)) = (words.next(), words.next()) else {
                continue;
            };
            let is_number = number.trim_start_matches(['+', '-']).parse::<f64>().is_ok();
            if is_number && nsys_gate_core::units::UNITS.iter().any(|(_, u)| *u == unit) {
                units[k].insert(unit.to_owned());
                assert!(
                    units[k].len() == 1,
                    "column {k} mixes units {:?} at `{line}` in\n{md}",
                    units[k]
                );
            }
        }
    }
    assert!(tables > 0, "no table in\n{md}");
}

/// A run whose first iteration is cold (152 ms against a steady ~10 ms, as the public llama3
/// trace's): the three warnings such a pass raises, as the analysis writes them.
fn cold_first_pass() -> Analysis {
    let mut host_ns = vec![152_000_000];
    host_ns.extend((0..15).map(|i| 9_800_000 + (i % 3) * 100_000));
    let mut a = nsys_gate_core::artifact::fake::analysis(
        &host_ns,
        &[("layer_computation", 40_000_000)],
        true,
    );
    let h = a.iteration_summary.host_inclusive.clone().unwrap();
    a.iteration_summary.first_iteration = Some(nsys_gate_core::artifact::FirstIteration {
        index: 0,
        host_inclusive_ns: 152_000_000,
        ratio_to_median: 152_000_000.0 / h.median_ns,
    });
    a.warnings = vec![
        Warning::new(WarningCode::FirstIterationSlow, "first measured iteration 0 took 15.3× the median host inclusive time".to_owned())
            .with_iterations(vec![0])
            .with_threshold(1.5),
        Warning::new(WarningCode::HighVariance, format!("host inclusive iteration times vary widely: cv {:.3} over 16 iterations (threshold 0.1)", h.cv))
            .with_threshold(0.1),
        Warning::new(WarningCode::SlowIterations, "iteration 0 took longer than the slow limit of 10.4 ms".to_owned())
            .with_count(1)
            .with_iterations(vec![0])
            .with_threshold_ns(10_400_000.0),
    ];
    a
}

/// A slow iteration only a little above the rest (3.12 ms over 3.07 ms) fits in the room
/// above the steady bars: the sparkline runs to it and says nothing is off the scale (it said
/// "bars from 0 to 3.99 ms; … 3.12 ms … off the scale").
#[test]
fn a_slow_iteration_that_fits_is_not_off_the_scale() {
    let mut host_ns: Vec<i64> = (0..10).map(|i| 3_070_000 + (i % 2) * 1_000).collect();
    host_ns[4] = 3_120_000;
    let mut a = nsys_gate_core::artifact::fake::analysis(&host_ns, &[("step", 1_000_000)], true);
    a.warnings = vec![Warning::new(
        WarningCode::SlowIterations,
        "iteration 4 took longer than the slow limit of 3.09 ms".to_owned(),
    )
    .with_count(1)
    .with_iterations(vec![4])
    .with_threshold_ns(3_090_000.0)];
    let md = render_default(&[outcome(a)], COMMENT).replace('\u{a0}', " ");
    let line = md
        .lines()
        .find(|l| l.starts_with("Host inclusive time per iteration: `"))
        .expect("a sparkline");
    assert!(
        line.contains("(bars from 0 to 3.12 ms; iteration 4 (3.12 ms) is slow)"),
        "{line}"
    );
    let bars: Vec<char> = line.split('`').nth(1).unwrap().chars().collect();
    assert_eq!(bars[4], '█', "{line}");
}

/// Issue 30, item 2: the bullet of a slow first iteration names all three codes it raised;
/// nothing is said to be left out.
#[test]
fn a_report_that_lists_every_warning_says_none_was_left_out() {
    let md = render_default(&[outcome(cold_first_pass())], COMMENT);
    for code in ["first_iteration_slow", "high_variance", "slow_iterations"] {
        assert!(md.contains(&format!("`{code}`")), "{code} in {md}");
    }
    assert!(!md.contains("left out to fit the size limit"), "{md}");
}

/// Whether a zero-width space (or another invisible character) sits inside a run of
/// hexadecimal digits of at least 7: a SHA that a copy would not paste whole.
fn broken_shas(md: &str) -> Vec<String> {
    let invisible = |c: char| {
        matches!(
            c,
            '\u{200B}' | '\u{200C}' | '\u{200D}' | '\u{2060}' | '\u{FEFF}'
        )
    };
    let mut out = Vec::new();
    let mut run = String::new();
    for c in md.chars().chain(std::iter::once(' ')) {
        if c.is_ascii_hexdigit() || invisible(c) {
            run.push(c);
            continue;
        }
        let hex = run.chars().filter(char::is_ascii_hexdigit).count();
        if hex >= 7 && run.trim_matches(invisible).chars().any(invisible) {
            out.push(run.clone());
        }
        run.clear();
    }
    out
}

/// Issue 30, item 1: the run facts' commit is a short SHA linked to the commit's page when the
/// repository is known (GitHub's own link of a commit), else in a code span; a copy of either
/// pastes whole: no invisible character inside a SHA or a warning code.
#[test]
fn a_commit_in_the_report_can_be_pasted() {
    let sha = "ef6b71f963c5a8e1d2c3b4a5968778695a4b3c2d";
    let mut a = cold_first_pass();
    a.run.git_commit = Some(sha.to_owned());
    let outcomes = [outcome(a)];
    let mut o = options(COMMENT);
    o.links.run_url = Some("https://github.com/o/r/actions/runs/7".to_owned());
    o.links.run_label = "the workflow run".to_owned();
    o.links.commit_prefix = Some("https://github.com/o/r/commit/".to_owned());
    let md = render(&outcomes, &o, &Template::builtin()).unwrap();
    assert!(
        md.contains(&format!(
            "| Git commit | [`ef6b71f`](https://github.com/o/r/commit/{sha}) |"
        )),
        "{md}"
    );
    assert_eq!(broken_shas(&md), Vec::<String>::new());
    // Without the repository's page: a code span.
    let md = render_default(&outcomes, COMMENT);
    assert!(md.contains("| Git commit | `ef6b71f` |"), "{md}");
    assert_eq!(broken_shas(&md), Vec::<String>::new());
    for code in ["first_iteration_slow", "high_variance", "slow_iterations"] {
        assert!(md.contains(&format!("`{code}`")), "{code} in {md}");
    }
    // Not a SHA (too short, not hexadecimal, too long): untrusted text, escaped as any.
    for text in ["ef6b71", "@dev #12", &"a".repeat(41)] {
        assert_eq!(
            crate::escape::commit(Some(text), Some("https://github.com/o/r/commit/")),
            crate::escape::inline_shortened(text, 40)
        );
    }
}

/// Issue 30, item 8: the statistics table said `stddev 0.00773 ms` where the next table says
/// `154 µs`: a spread a thousandth of the times is shown in its own unit.
#[test]
fn a_small_spread_is_shown_in_its_own_unit() {
    let a = nsys_gate_core::artifact::fake::analysis(
        &[2_570_000, 2_575_000, 2_565_000, 2_580_000, 2_560_000],
        &[("inference", 7_500_000)],
        false,
    );
    let md = render_default(&[outcome(a)], COMMENT).replace('\u{a0}', " ");
    let stddev = md
        .lines()
        .find(|l| l.starts_with("| stddev |"))
        .expect("a stddev row");
    assert_eq!(stddev, "| stddev | 7.91 µs |", "{md}");
    assert!(md.contains("| mean | 2.57 ms |"), "{md}");
}

/// Issue 30, item 4: the chart drew iteration 0 (152 ms) "at the top" of an axis running to
/// 11 ms, level with the rest, and the sparkline's 9.66-10.0 ms scale made 2 % of jitter look
/// like full swings. The outlier is a bar of its own colour, cut at the top of an axis with
/// room above the steady bars; the sparkline's scale starts at zero and says so.
#[test]
fn the_chart_shows_the_outlier_as_one_and_the_sparkline_has_a_zero() {
    let md = render_default(&[outcome(cold_first_pass())], COMMENT).replace('\u{a0}', " ");
    // The sparkline: from zero, the slow iteration the one full bar, cut at the top; the
    // steady ones level, and (issue 34) not on the floor: as in the chart, the scale stops 1.3
    // times above the slowest steady iteration, not at the outlier.
    let line = md
        .lines()
        .find(|l| l.starts_with("Host inclusive time per iteration: `"))
        .expect("a sparkline");
    let bars: Vec<char> = line.split('`').nth(1).unwrap().chars().collect();
    assert_eq!(bars[0], '█', "{line}");
    assert!(bars[1..].iter().all(|b| *b == bars[1]), "{line}");
    assert!(!matches!(bars[1], '▁' | '█'), "{line}");
    assert!(
        line.contains("(bars from 0 to 13.0 ms; iteration 0 (152 ms) is slow, off the scale)"),
        "{line}"
    );
    // The chart: the outlier's own bar series, drawn first, cut at the axis's top; the
    // steady bars at most 1/1.3 of the axis, the outlier's bar 0 among them.
    let chart: Vec<&str> = md
        .lines()
        .skip_while(|l| *l != "```mermaid")
        .take_while(|l| *l != "```")
        .collect();
    assert!(chart[1].contains("#f28e2b, #4e79a7, #e15759"), "{chart:?}");
    let values = |prefix: &str, n: usize| -> Vec<f64> {
        let line = chart
            .iter()
            .filter(|l| l.trim_start().starts_with(prefix))
            .nth(n)
            .unwrap();
        line.split(['[', ']'])
            .nth(1)
            .unwrap()
            .split(", ")
            .map(|v| v.parse().unwrap())
            .collect()
    };
    let axis: f64 = chart
        .iter()
        .find(|l| l.trim_start().starts_with("y-axis"))
        .unwrap()
        .rsplit(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let outliers = values("bar", 0);
    let host = values("bar", 1);
    assert_eq!(outliers[0], axis);
    assert!(outliers[1..].iter().all(|v| *v == 0.0), "{outliers:?}");
    assert_eq!(host[0], 0.0);
    let steady_top = host.iter().copied().fold(0.0, f64::max);
    assert!(steady_top * 1.25 < axis, "{steady_top} {axis}");
    assert!(
        md.contains("off the scale, as orange bars cut at the top (slow: over median + 5 × MAD): iteration 0 (host 152 ms"),
        "{md}"
    );
}

/// The headline's two history lines: the base branch's newest runs moved the head's way (one
/// run, and two that are the level the head is judged against), and a head on a runner the
/// history barely knows, whose one base run was left out.
#[test]
fn the_headline_says_the_newest_runs_moved_and_a_barely_known_runner() {
    use nsys_gate_compare::compare::{self, Criteria, RunLevel};
    use nsys_gate_core::artifact::comparison::{HeadRunner, MeasureName, NewestMoved, RunMark};
    let (bases, head, source) = history_and_head();
    let heads = [RunLevel::of(&head, "/runs/r/analysis.json")];
    let mut c = compare::compare(&heads, &bases, source, Vec::new(), Criteria::default());
    c.baseline.branch = Some("main".to_owned());
    let moved = |runs, provisional_level| NewestMoved {
        measure: MeasureName::HostInclusive,
        runs,
        change_pct: 5.08,
        provisional_level,
        since: RunMark {
            run_id: "r9".to_owned(),
            git_commit: Some("9abcdef".to_owned()),
            created_at: None,
        },
    };
    c.runs[0].history.newest_moved = Some(moved(1, false));
    c.runs[0].history.head_runner = Some(HeadRunner {
        name: "runner-b".to_owned(),
        points: 0,
        left_out: 1,
        own_level: false,
        own_spread: false,
        barely_known: true,
    });
    let outcomes = vec![outcome(head.clone())];
    let render = |c: &nsys_gate_core::artifact::comparison::Comparison| {
        Renderer::new(&Template::builtin())
            .unwrap()
            .render_with(&outcomes, Some(c), &options(COMMENT))
            .unwrap()
    };
    let md = render(&c);
    assert!(
        md.contains("; `main`'s newest run was also 5.1\u{a0}% slower: this change may already be on `main`;"),
        "{md}"
    );
    assert!(
        md.contains("; the head's runner `runner-b` ran 0 of the base runs used (1 more was left out): judged against every runner's level and spread."),
        "{md}"
    );
    c.runs[0].history.newest_moved = Some(moved(2, true));
    c.runs[0].history.head_runner = None;
    let md = render(&c);
    assert!(
        md.contains("; `main`'s newest 2 runs were also 5.1\u{a0}% slower: this change may already be on `main` (the head is judged against them)."),
        "{md}"
    );
    assert!(!md.contains("the head's runner `"), "{md}");
}
