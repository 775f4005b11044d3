//! The warnings about what the stages before the analysis found: the run directory
//! (`manifest_unknown_key`, `trace_path_moved`), the nsys that wrote the reports
//! (`legacy_nsys_reports`, `nsys_version_untested`, `trace_environment_secrets`) and the
//! reports themselves (`gpu_projection_unavailable`, `gpu_work_unavailable`).
//!
//! Each takes the facts its stage found, as plain data, and decides and words its warning here,
//! beside every other warning's rule; the stages only hand over what they saw.

use nsys_gate_core::artifact::{Warning, WarningCode, TESTED_VERSIONS};
use nsys_gate_core::text::and_list;

/// `manifest_unknown_key`: a key the manifest schema does not know, one edit away from one it
/// does (kept in `run.extra`).
pub fn unknown_key(manifest_file: &str, line: usize, key: &str, suggestion: &str) -> Warning {
    Warning::new(
        WarningCode::ManifestUnknownKey,
        format!(
            "{manifest_file}:{line}: unknown key `{key}` kept in run.extra; did you mean `{suggestion}`?"
        ),
    )
}

/// `trace_path_moved`: the manifest recorded the trace in a folder named `recorded`, and the
/// run directory is named `dir_name`; none when they agree.
pub fn trace_path_moved(recorded: &str, dir_name: &str, trace_name: &str) -> Option<Warning> {
    (recorded != dir_name).then(|| {
        Warning::new(
            WarningCode::TracePathMoved,
            format!(
                "the manifest recorded the trace in a folder named `{recorded}`, this run directory is named `{dir_name}`; using {trace_name} beside the manifest"
            ),
        )
    })
}

/// `legacy_nsys_reports`, when nsys `version` had only the legacy report names.
pub fn legacy_reports(legacy: bool, version: &str) -> Option<Warning> {
    legacy.then(|| {
        Warning::new(
            WarningCode::LegacyNsysReports,
            format!(
                "nsys {version} has only the legacy `nvtxpptrace`/`nvtxgpuproj` reports; they were used under the new names"
            ),
        )
    })
}

/// `nsys_version_untested`, when the nsys that wrote the reports is not one the tests run
/// (`tested`: whether it is).
pub fn untested_version(tested: bool, version: &str) -> Option<Warning> {
    (!tested).then(|| {
        Warning::new(
            WarningCode::NsysVersionUntested,
            format!(
                "nsys {version} is not a version the tests run ({}): its reports are read by column name, but check the numbers against nsys's own output",
                TESTED_VERSIONS.join(", ")
            ),
        )
    })
}

/// `trace_environment_secrets` for the credential-like names nsys recorded (at most
/// `max_names` named), if any.
pub fn credentials(names: &[String], max_names: usize) -> Option<Warning> {
    if names.is_empty() {
        return None;
    }
    let shown: Vec<String> = names.iter().take(max_names).cloned().collect();
    let more = match names.len().saturating_sub(max_names) {
        0 => String::new(),
        n => format!(" and {n} more"),
    };
    let (count, look) = match names.len() {
        1 => ("1 variable".to_owned(), "looks"),
        n => (format!("{n} variables"), "look"),
    };
    Some(
        Warning::new(
            WarningCode::TraceEnvironmentSecrets,
            format!(
                "the trace records the profiled process's environment, where {count} {look} like credentials: {}{more} (values not shown); anyone with the trace or its SQLite export can read them: do not upload the trace as an artifact, and rotate them if it was shared",
                shown.join(", ")
            ),
        )
        .with_variables(shown),
    )
}

/// `gpu_projection_unavailable`, with the reason nsys gave no projection.
pub fn gpu_projection_unavailable(reason: String) -> Warning {
    Warning::new(WarningCode::GpuProjectionUnavailable, reason)
}

/// `gpu_work_unavailable` for one report that failed: which parts of `gpu_work` it leaves
/// `null` (none: the kernels' base names fall back to their demangled names), and why.
pub fn gpu_work_unavailable(report: &str, parts: &[&str], reason: &str) -> Warning {
    let message = if parts.is_empty() {
        format!(
            "the kernels' base names of gpu_work are derived from their demangled names instead: {reason}"
        )
    } else {
        let quoted: Vec<String> = parts.iter().map(|p| format!("`{p}`")).collect();
        let quoted: Vec<&str> = quoted.iter().map(String::as_str).collect();
        format!("{} of gpu_work: {reason}", and_list(&quoted))
    };
    Warning::new(WarningCode::GpuWorkUnavailable, message).with_report(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_stage_warning_is_raised_only_on_its_fact() {
        assert!(trace_path_moved("run-1", "run-1", "trace.nsys-rep").is_none());
        assert!(trace_path_moved("run-1", "run-2", "trace.nsys-rep").is_some());
        assert!(legacy_reports(false, "2022.4").is_none());
        assert!(untested_version(true, "2024.2").is_none());
        let w = untested_version(false, "2099.1").unwrap();
        assert!(w.message.contains("2024.2"), "{}", w.message);
        assert!(credentials(&[], 50).is_none());
    }

    #[test]
    fn credentials_name_at_most_the_limit_and_count_the_rest() {
        let names: Vec<String> = (0..5).map(|i| format!("TOKEN_{i}")).collect();
        let w = credentials(&names, 2).unwrap();
        assert_eq!(w.variables.as_deref().unwrap(), ["TOKEN_0", "TOKEN_1"]);
        assert!(
            w.message
                .contains("5 variables look like credentials: TOKEN_0, TOKEN_1 and 3 more"),
            "{}",
            w.message
        );
        let one = credentials(&names[..1], 2).unwrap();
        assert!(one.message.contains("1 variable looks"), "{}", one.message);
    }

    #[test]
    fn gpu_work_unavailable_names_the_parts_and_the_report() {
        let w = gpu_work_unavailable("cuda_gpu_trace", &["kernels", "memory_copies"], "it failed");
        assert_eq!(w.report.as_deref(), Some("cuda_gpu_trace"));
        assert_eq!(
            w.message,
            "`kernels` and `memory_copies` of gpu_work: it failed"
        );
        let none = gpu_work_unavailable("cuda_kern_exec_trace", &[], "it failed");
        assert!(
            none.message.starts_with("the kernels' base names"),
            "{}",
            none.message
        );
    }
}
