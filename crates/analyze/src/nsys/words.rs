//! Reading nsys's words. Its exit status does not tell what it did, so its output does: which
//! reports it wrote or skipped (and why), a trace from a newer nsys, and the excerpt of its
//! output a message quotes; and how a command is shown in messages.

use std::ffi::OsString;
use std::path::Path;

use nsys_gate_core::artifact::{ReportName, ReportStatus};

/// What nsys did with one report, from the CSV it left and its words; `None`: it failed.
pub(super) fn classify(
    produced_path: &Path,
    words: &str,
    report: ReportName,
    produced: &str,
) -> Option<ReportStatus> {
    let size = std::fs::metadata(produced_path).map(|m| m.len()).ok();
    match (size, skipped_message(words, produced)) {
        (Some(n), _) if n > 0 => Some(ReportStatus::written()),
        (_, Some(message)) => Some(ReportStatus::skipped(message)),
        // nsys 2024.2 writes an empty projection, saying neither PROCESSED nor SKIPPED,
        // when the trace has CUDA data but no range launched anything: a result, not a
        // skip. The push/pop report has no such case (no ranges means no NVTX data).
        (Some(0), None)
            if report == ReportName::GpuProjection && mentions_report(words, produced) =>
        {
            Some(ReportStatus::written())
        }
        _ => None,
    }
}

/// nsys's words about one report: an `ERROR` line naming its script (nsys 2022.4 prints
/// `ERROR: Report 'gputrace.py' encountered an internal error: …` after every report), else
/// what it said past the `...` of that report's `Processing [` line.
pub(super) fn report_words(words: &str, report: &str) -> Option<String> {
    let script = format!("'{}.py'", report.split(':').next().unwrap_or(report));
    if let Some(line) = words
        .lines()
        .find(|l| l.contains("ERROR") && l.contains(&script))
    {
        return Some(line.trim().to_owned());
    }
    report_blocks(words)
        .find(|block| is_report_block(block, report))
        .and_then(|block| block.split_once("... ").map(|(_, rest)| rest))
        .map(|rest| excerpt(rest.trim()))
        .filter(|w| w != "(nothing)")
}

/// `(trace version, nsys version)` when nsys said the trace is from a newer nsys.
pub(super) fn incompatible_trace(words: &str) -> Option<(String, String)> {
    let re = regex::Regex::new(
        r"Report was created in Nsight Systems version \(([^)]*)\), newer than your current version \(([^)]*)\)",
    )
    .expect("valid regex");
    if let Some(c) = re.captures(words) {
        return Some((c[1].to_owned(), c[2].to_owned()));
    }
    // nsys 2022.4 cannot parse the newer version string and says so instead.
    let old = regex::Regex::new(r"Version number is invalid: (\S+)").expect("valid regex");
    old.captures(words)
        .map(|c| (c[1].replace('@', "."), String::new()))
}

/// nsys's words about each report it processed: from one `Processing [` to the next. nsys's
/// lines are not split by line here: a path with a newline in it (the trace's own name, the
/// only path nsys is given that may hold one) does not cut a report's words in two.
fn report_blocks(words: &str) -> impl Iterator<Item = &str> {
    words.split("Processing [").skip(1)
}

/// Whether a block of nsys's words is about the given report: it names the report's script,
/// the report, or its output file. A report with an argument (`cuda_gpu_kern_sum:base`) is
/// written `[…/cuda_gpu_kern_sum.py](base) to […/nsys_cuda_gpu_kern_sum_base.csv]`; the report
/// without one is not that block.
fn is_report_block(block: &str, report: &str) -> bool {
    // The part up to `...`, where nsys says what it did: names in its words do not count.
    let head = block.split("... ").next().unwrap_or(block);
    let script = match report.split_once(':') {
        Some((script, argument)) => head.contains(&format!("{script}.py]({argument})")),
        None => head
            .match_indices(&format!("{report}.py]"))
            .any(|(i, m)| !head[i + m.len()..].starts_with('(')),
    };
    script
        || head.contains(&format!("[{report}]"))
        || head.contains(&format!("_{}.csv]", report.replace(':', "_")))
}

/// Whether nsys said it processed (or tried) the given report.
fn mentions_report(words: &str, report: &str) -> bool {
    report_blocks(words).any(|block| is_report_block(block, report))
}

/// nsys's words after `SKIPPED:` for the given report, if it skipped it: up to the blank line
/// nsys leaves after each report.
fn skipped_message(words: &str, report: &str) -> Option<String> {
    // "Processing [db] with [/…/reports/nvtx_gpu_proj_trace.py] to [out.csv]... SKIPPED: …"
    report_blocks(words)
        .filter(|block| is_report_block(block, report))
        .find_map(|block| block.split_once("SKIPPED: "))
        .map(|(_, rest)| {
            let end = rest.find("\n\n").unwrap_or(rest.len());
            rest[..end].trim().to_owned()
        })
}

/// The first line of `words` holding one of `needles`, trimmed; all of `words` when none does.
pub(super) fn first_line_with(words: &str, needles: &[&str]) -> String {
    words
        .lines()
        .find(|l| needles.iter().any(|n| l.contains(n)))
        .unwrap_or(words)
        .trim()
        .to_owned()
}

/// A command as messages show it: the program and its arguments, each holding a space quoted.
pub(super) fn describe_command(program: &Path, args: &[OsString]) -> String {
    std::iter::once(program.as_os_str())
        .chain(args.iter().map(OsString::as_os_str))
        .map(|a| {
            let s = a.to_string_lossy();
            if s.contains(' ') {
                format!("'{s}'")
            } else {
                s.into_owned()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// At most this many lines of nsys's output go into a message.
pub(super) const MESSAGE_LINES: usize = 30;
/// Longest line of nsys's output in a message, in characters; longer ones are cut with `…`.
pub(super) const MESSAGE_LINE_CHARS: usize = 300;

/// nsys's words for a message: the lines that say what went wrong (up to half of
/// [`MESSAGE_LINES`]) and the last lines, gaps marked, each line cut to
/// [`MESSAGE_LINE_CHARS`] characters; `(nothing)` when it said nothing.
pub(super) fn excerpt(text: &str) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.is_empty() {
        return "(nothing)".to_owned();
    }
    let important = |l: &str| {
        ["ERROR", "rror", "SKIPPED", "newer than"]
            .iter()
            .any(|n| l.contains(n))
    };
    let tail_from = lines.len().saturating_sub(MESSAGE_LINES / 2);
    let mut keep: Vec<usize> = (0..lines.len())
        .filter(|&i| important(lines[i]))
        .take(MESSAGE_LINES / 2)
        .collect();
    keep.extend(tail_from..lines.len());
    keep.sort_unstable();
    keep.dedup();
    let mut out = Vec::new();
    let mut previous: Option<usize> = None;
    for i in keep {
        let gap = match previous {
            Some(p) => i - p - 1,
            None => i,
        };
        if gap > 0 {
            out.push(format!(
                "[… {gap} more {} …]",
                if gap == 1 { "line" } else { "lines" }
            ));
        }
        let line = lines[i];
        if line.chars().count() > MESSAGE_LINE_CHARS {
            let cut: String = line.chars().take(MESSAGE_LINE_CHARS).collect();
            out.push(format!("{cut}…"));
        } else {
            out.push(line.to_owned());
        }
        previous = Some(i);
    }
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    const PUSHPOP: &str = ReportName::PushPop.as_str();
    const GPU_PROJ: &str = ReportName::GpuProjection.as_str();
    const LEGACY_PUSHPOP: &str = ReportName::PushPop.legacy_name();

    #[test]
    fn reads_the_incompatible_trace_messages_of_both_generations() {
        let new = "Exportation error: Report was created in Nsight Systems version (2024.2.3.38-242334140272v0), newer than your current version (2023.4.4.54-234433681190v0).";
        assert_eq!(
            incompatible_trace(new),
            Some((
                "2024.2.3.38-242334140272v0".into(),
                "2023.4.4.54-234433681190v0".into()
            ))
        );
        let old = "Exportation error: Version number is invalid: 2024@2@3@38-242334140272v0";
        assert_eq!(
            incompatible_trace(old),
            Some(("2024.2.3.38-242334140272v0".into(), String::new()))
        );
        assert_eq!(incompatible_trace("all fine"), None);
    }

    /// nsys 2024.2's words for a report and the same report with an argument (`:base`), the
    /// second skipped: each report's words are its own.
    #[test]
    fn a_report_with_an_argument_is_told_from_the_same_report_without() {
        let words = "\nProcessing [trace.sqlite] with [/n/reports/cuda_gpu_kern_sum.py] to [stats/nsys_cuda_gpu_kern_sum.csv]... PROCESSED\n\nProcessing [trace.sqlite] with [/n/reports/cuda_gpu_kern_sum.py](base) to [stats/nsys_cuda_gpu_kern_sum_base.csv]... SKIPPED: trace.sqlite does not contain CUDA kernel data.\n\n";
        let plain = ReportName::KernelSummary.as_str();
        let base = ReportName::KernelBaseSummary.as_str();
        assert_eq!(skipped_message(words, plain), None);
        assert_eq!(
            skipped_message(words, base).as_deref(),
            Some("trace.sqlite does not contain CUDA kernel data.")
        );
        assert!(mentions_report(words, plain) && mentions_report(words, base));
        let only_base = &words[words.rfind("Processing").unwrap()..];
        assert!(!mentions_report(only_base, plain));
        let legacy = "Processing [t.sqlite] with [/n/gpukernsum.py](base) to [o_gpukernsum_base.csv]... PROCESSED";
        assert!(mentions_report(
            legacy,
            ReportName::KernelBaseSummary.legacy_name()
        ));
        assert!(!mentions_report(
            legacy,
            ReportName::KernelSummary.legacy_name()
        ));
    }

    #[test]
    fn a_flood_of_output_is_cut_to_what_matters() {
        let mut text = String::from("Generating SQLite file\nERROR: the thing that went wrong\n");
        for i in 0..100_000 {
            text.push_str(&format!("noise line {i} {}\n", "x".repeat(1000)));
        }
        let e = excerpt(&text);
        assert!(e.contains("ERROR: the thing that went wrong"));
        assert!(e.contains("noise line 99999"));
        assert!(e.contains("more lines …]"));
        assert!(
            e.lines().count() <= MESSAGE_LINES + 3,
            "{}",
            e.lines().count()
        );
        assert!(e.len() < 20_000, "{}", e.len());
        assert_eq!(excerpt(""), "(nothing)");
    }

    #[test]
    fn finds_the_skip_message_of_each_report() {
        let words = "Processing [s/trace.sqlite] with [/x/reports/nvtx_pushpop_trace.py] to [s/nsys_nvtx_pushpop_trace.csv]... PROCESSED\n\nProcessing [s/trace.sqlite] with [/x/reports/nvtx_gpu_proj_trace.py] to [s/nsys_nvtx_gpu_proj_trace.csv]... SKIPPED: s/trace.sqlite does not contain CUDA API data.\n";
        assert_eq!(skipped_message(words, PUSHPOP), None);
        assert_eq!(
            skipped_message(words, GPU_PROJ).as_deref(),
            Some("s/trace.sqlite does not contain CUDA API data.")
        );
        assert!(mentions_report(words, PUSHPOP) && mentions_report(words, GPU_PROJ));
        assert!(!mentions_report(words, LEGACY_PUSHPOP));
    }

    #[test]
    fn a_path_split_across_lines_does_not_hide_the_skip() {
        // What nsys 2024.2 printed for a run directory `/t/no<newline>nvtx` given absolute paths.
        let words = "Generating SQLite file /t/no\nnvtx/stats/trace.sqlite from /t/no\nnvtx/trace.nsys-rep\n\
            Processing [/t/no\nnvtx/stats/trace.sqlite] with [/x/reports/nvtx_pushpop_trace.py] to [/t/no\nnvtx/stats/nsys_nvtx_pushpop_trace.csv]... SKIPPED: /t/no\nnvtx/stats/trace.sqlite does not contain NV Tools Extension (NVTX) data.\n\n\
            Processing [/t/no\nnvtx/stats/trace.sqlite] with [/x/reports/nvtx_gpu_proj_trace.py] to [/t/no\nnvtx/stats/nsys_nvtx_gpu_proj_trace.csv]... SKIPPED: /t/no\nnvtx/stats/trace.sqlite does not contain NV Tools Extension (NVTX) data.\n\n";
        for report in [PUSHPOP, GPU_PROJ] {
            assert_eq!(
                skipped_message(words, report).as_deref(),
                Some("/t/no\nnvtx/stats/trace.sqlite does not contain NV Tools Extension (NVTX) data."),
                "{report}"
            );
        }
    }
}
