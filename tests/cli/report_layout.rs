//! What a reviewer meets first, on the shape of a real LLM trace (64 passes, indexed range
//! names, one slow first pass), and the report as GitHub renders it (Debian's cmark-gfm with
//! GitHub's comment extensions).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{
    assert_status, bin, fixture, installed_or_skip, repo, report_md, run_cmd, Run,
};
use crate::require_nsys;

/// `run --no-post` on a fixture; its report.md.
fn report_of(run: &Run, nsys: &Path, args: &[&str]) -> String {
    let out = run_cmd(&[&run.dir], nsys, args);
    assert_status(&out, 0);
    report_md(run)
}

/// `report --output - ARGS… --run-dir DIR…` on analysed run directories: the report it prints.
fn rendered(dirs: &[&Path], args: &[&str]) -> String {
    let mut cmd = bin();
    cmd.args(["report", "--output", "-"]).args(args);
    for d in dirs {
        cmd.arg("--run-dir").arg(d);
    }
    let out = cmd.output().unwrap();
    assert_status(&out, 0);
    String::from_utf8(out.stdout.clone()).unwrap()
}

#[test]
fn an_llm_report_leads_with_the_gate_the_medians_and_the_iterations() {
    let nsys = require_nsys!("2024.2");
    let run = fixture("llama-like");
    let report = report_of(&run, &nsys, &[]);
    let head: String = report.lines().take(25).collect::<Vec<_>>().join("\n");
    for needle in [
        "gate passed",
        "host median **1.",
        "GPU projected median **unavailable**",
        "**64\u{a0}/\u{a0}64** iterations complete",
        "Host inclusive time per iteration: `",
    ] {
        assert!(
            head.contains(needle),
            "{needle:?} not in the first 25 lines:\n{head}"
        );
    }
    // Indexed names are grouped in the tables: 504 instances of one group (the slow token 0
    // left out: the steady state), not ten rows of one instance each; a `#` that links nothing
    // carries no zero-width space.
    assert!(
        report.contains("| layer\\_#\\_token\\_#.ensure\\_layer\\_#\\_weights (504 names) | 504 |"),
        "{report}"
    );
    assert!(
        report.contains("The steady state: iteration\u{a0}0 (27."),
        "{report}"
    );
    assert!(!report.contains('\u{200b}'), "{report}");
    // Five exclusive rows before the details.
    let exclusive = report.find("By **exclusive** time").unwrap();
    let details = exclusive + report[exclusive..].find("<details>").unwrap();
    assert_eq!(
        report[exclusive..details].matches("\n| layer").count()
            + report[exclusive..details].matches("\n| embed").count()
            + report[exclusive..details].matches("\n| sample").count(),
        5,
        "{}",
        &report[exclusive..details]
    );
    // The chart: a numeric axis, the axis clipped above the steady passes, the slow first
    // pass named with its real time.
    assert!(report.contains("x-axis \"iteration\" 0 --> 63"), "{report}");
    let caption = report
        .lines()
        .find(|l| l.contains("The axis stops at"))
        .expect("a caption naming the clipped iteration");
    assert!(caption.contains("iteration\u{a0}0 (host 2"), "{caption}");
    // Each thing said once: the slow first pass and the variance it causes are explained in
    // one warning (the three codes together), with its time and the slow limit named.
    assert_eq!(
        report.matches("**One slow iteration:**").count(),
        1,
        "{report}"
    );
    assert!(
        report.contains("`first_iteration_slow`, `high_variance`, `slow_iterations`: **One slow iteration:** iteration\u{a0}0 took 27."),
        "{report}"
    );
    assert!(report.contains("the slow limit is "), "{report}");
    assert!(
        report.contains("It alone makes the host time vary (cv "),
        "{report}"
    );
    assert!(!report.contains("**First-iteration effect:**"), "{report}");
    // No raw nanoseconds, no `x` for a ratio.
    assert!(!report.contains(" ns)"), "{report}");
    assert!(!report.contains("0x the median"), "{report}");

    // --exact-names: the exact names, no groups (the same analysis, rendered again).
    let exact = rendered(&[&run.dir], &["--exact-names"]);
    assert!(!exact.contains("names) |"), "{exact}");
    assert!(exact.contains("| layer\\_"), "{exact}");
}

/// The legs of a matrix across GPUs: same profile, same run id, `device: cuda:0` on each.
/// Rendered together (as the final job of the matrix example does from the legs'
/// analysis.json files), each is labelled by its GPU.
#[test]
fn matrix_legs_are_labelled_by_their_gpu() {
    let nsys = require_nsys!("2024.2");
    let run = fixture("gpu-work");
    report_of(&run, &nsys, &[]);
    let analysis = std::fs::read_to_string(run.path("analysis.json")).unwrap();
    assert!(
        analysis.contains("NVIDIA A100-SXM4-80GB"),
        "the fixture's GPU"
    );
    let tmp = assert_fs::TempDir::new().unwrap();
    let legs: Vec<PathBuf> = ["a100", "h100"]
        .iter()
        .map(|leg| tmp.path().join(leg).join("gpu-work"))
        .collect();
    for (leg, gpu) in legs
        .iter()
        .zip(["NVIDIA A100-SXM4-80GB", "NVIDIA H100 80GB HBM3"])
    {
        std::fs::create_dir_all(leg).unwrap();
        std::fs::write(
            leg.join("analysis.json"),
            analysis.replace("NVIDIA A100-SXM4-80GB", gpu),
        )
        .unwrap();
    }
    let report = rendered(&[&legs[0], &legs[1]], &[]);
    assert!(
        report.contains("## smoke-tensor · run gpu-work · NVIDIA A100-SXM4-80GB\n"),
        "{report}"
    );
    assert!(
        report.contains("## smoke-tensor · run gpu-work · NVIDIA H100 80GB HBM3\n"),
        "{report}"
    );
    assert!(
        report.contains("| smoke-tensor · run gpu-work · NVIDIA H100 80GB HBM3 | ✅\u{a0}passed |"),
        "{report}"
    );

    // Without GPU names, the legs' `--label`s (kept in analysis.json) tell them apart.
    for (leg, label) in legs.iter().zip(["leg one", "leg two"]) {
        let mut a: serde_json::Value = serde_json::from_str(&analysis).unwrap();
        a["gpu_work"] = serde_json::Value::Null;
        a["label"] = serde_json::Value::from(label);
        std::fs::write(leg.join("analysis.json"), a.to_string()).unwrap();
    }
    let report = rendered(&[&legs[0], &legs[1]], &[]);
    assert!(
        report.contains("## smoke-tensor · run gpu-work · leg one\n")
            && report.contains("## smoke-tensor · run gpu-work · leg two\n"),
        "{report}"
    );
}

/// `--label` is kept in analysis.json.
#[test]
fn a_label_is_kept_in_the_analysis() {
    let nsys = require_nsys!("2024.2");
    let run = fixture("clean");
    report_of(&run, &nsys, &["--label", "a100 leg"]);
    let a: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.path("analysis.json")).unwrap()).unwrap();
    assert_eq!(a["label"], "a100 leg");
    let run = fixture("clean");
    report_of(&run, &nsys, &[]);
    let a = std::fs::read_to_string(run.path("analysis.json")).unwrap();
    assert!(!a.contains("\"label\""), "absent when not given");
}

/// cmark-gfm, installed by `scripts/install-cmark-gfm.sh` (or on PATH).
fn cmark_gfm() -> Option<PathBuf> {
    let local = repo().join(".tools/cmark-gfm/cmark-gfm");
    let found = if local.is_file() {
        Some(local)
    } else if Command::new("cmark-gfm").arg("--version").output().is_ok() {
        Some(PathBuf::from("cmark-gfm"))
    } else {
        None
    };
    installed_or_skip(
        found,
        "cmark-gfm is not installed (run `scripts/install-cmark-gfm.sh`)",
    )
}

/// Renders markdown to HTML as GitHub renders a comment: raw HTML allowed (GitHub then
/// sanitises it), the tag filter on.
fn github_html(cmark: &Path, markdown: &str) -> String {
    let mut child = Command::new(cmark)
        .args([
            "--unsafe",
            "-e",
            "table",
            "-e",
            "autolink",
            "-e",
            "tagfilter",
            "-e",
            "strikethrough",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write as _;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(markdown.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap()
}

/// Each table's rows have as many cells as its header.
fn assert_tables_intact(html: &str) {
    for table in html.split("<table>").skip(1) {
        let table = &table[..table.find("</table>").expect("closed table")];
        let header = table.matches("<th").count() - table.matches("<thead").count();
        assert!(header > 0, "{table}");
        for row in table.split("<tr>").skip(1).filter(|r| r.contains("<td")) {
            assert_eq!(
                row.matches("<td").count(),
                header,
                "a row split or merged:\n{row}"
            );
        }
    }
}

#[test]
fn reports_render_through_cmark_gfm_as_github_does() {
    let nsys = require_nsys!("2024.2");
    let Some(cmark) = cmark_gfm() else { return };
    for name in [
        "clean",
        "gpu-work",
        "hostile-names",
        "llama-like",
        "missing-iterations",
    ] {
        let run = fixture(name);
        let out = run_cmd(&[&run.dir], &nsys, &[]);
        assert!(out.status.code().is_some_and(|c| c <= 1), "{name}");
        let markdown = report_md(&run);
        let html = github_html(&cmark, &markdown);
        // The headline is the first paragraph after the title.
        let h1 = html.find("<h1>").expect("a title");
        let first_p = h1 + html[h1..].find("<p>").unwrap();
        let headline = &html[first_p..first_p + html[first_p..].find("</p>").unwrap()];
        assert!(headline.contains("host median"), "{name}: {headline}");
        assert!(
            headline.contains("iterations complete"),
            "{name}: {headline}"
        );
        assert_tables_intact(&html);
        // No HTML from names: the only tags are the renderer's and the template's own.
        for tag in ["<script", "<img", "<a ", "<iframe", "<style", "<b>", "<h1 "] {
            assert!(!html.contains(tag), "{name}: {tag} in\n{html}");
        }
        let allowed = [
            "p",
            "h1",
            "h2",
            "h3",
            "ul",
            "li",
            "strong",
            "em",
            "code",
            "table",
            "thead",
            "tbody",
            "tr",
            "th",
            "td",
            "details",
            "summary",
            "blockquote",
            "pre",
            "hr",
            "br",
            "sub",
            "del",
        ];
        for tag in html.split('<').skip(1) {
            let name_end = tag
                .find(|c: char| !c.is_ascii_alphanumeric() && c != '/')
                .unwrap_or(tag.len());
            let tag_name = tag[..name_end].trim_start_matches('/');
            if tag_name.is_empty() || tag.starts_with("!--") {
                continue;
            }
            assert!(
                allowed.contains(&tag_name),
                "{name}: <{tag_name}> in the HTML:\n{}",
                &tag[..tag.len().min(80)]
            );
        }
    }
}
