//! The gate: which warnings fail the job, and the exit status that follows.
//!
//! By default the job fails on missing iterations and capture-range problems and on nothing
//! else (contract section 4). `--gate-on CODE` / `--no-gate-on CODE` change the set, and
//! `analysis.json` records the set that was used.

use std::collections::BTreeSet;
use std::process::ExitCode;

use crate::artifact::{Gate, Warning};

/// Every warning code the tool emits, with whether it gates by default.
pub const WARNING_CODES: &[(&str, bool)] = &[
    ("capture_range_exceeded", true),
    ("capture_range_missing", true),
    ("capture_range_multiple", true),
    ("capture_range_without_gpu_work", true),
    ("duplicate_iterations", false),
    ("first_iteration_slow", false),
    ("gpu_ops_outside_ranges", false),
    ("gpu_projection_unavailable", false),
    ("high_variance", false),
    ("iterations_without_gpu_projection", false),
    ("legacy_nsys_reports", false),
    ("manifest_unknown_key", false),
    ("missing_iterations", true),
    ("slow_iterations", false),
    ("trace_path_moved", false),
    ("unexpected_iterations", false),
];

/// Exit statuses (contract section 6).
pub mod exit {
    /// Analysis written; no gating warning.
    pub const PASS: u8 = 0;
    /// Analysis written; at least one gating warning.
    pub const FAIL: u8 = 1;
    /// No analysis: bad arguments, bad manifest, nsys missing or failed, unreadable reports.
    pub const ERROR: u8 = 2;
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GateConfig {
    gating: BTreeSet<String>,
}

impl Default for GateConfig {
    fn default() -> Self {
        GateConfig {
            gating: WARNING_CODES
                .iter()
                .filter(|(_, gating)| *gating)
                .map(|(code, _)| (*code).to_owned())
                .collect(),
        }
    }
}

/// A code given to `--gate-on`/`--no-gate-on` that the tool never emits.
#[derive(Debug, thiserror::Error)]
#[error("unknown warning code `{0}` (known codes: {known})", known = WARNING_CODES.iter().map(|(c, _)| *c).collect::<Vec<_>>().join(", "))]
pub struct UnknownCode(pub String);

impl GateConfig {
    pub fn new(gate_on: &[String], no_gate_on: &[String]) -> Result<Self, UnknownCode> {
        let mut config = GateConfig::default();
        for code in gate_on.iter().chain(no_gate_on) {
            if !WARNING_CODES.iter().any(|(c, _)| c == code) {
                return Err(UnknownCode(code.clone()));
            }
        }
        config.gating.extend(gate_on.iter().cloned());
        for code in no_gate_on {
            config.gating.remove(code);
        }
        Ok(config)
    }

    pub fn is_gating(&self, code: &str) -> bool {
        self.gating.contains(code)
    }
}

/// Marks gating warnings, sorts them by code then message, and decides the gate.
pub fn apply(config: &GateConfig, warnings: &mut [Warning]) -> Gate {
    for w in warnings.iter_mut() {
        w.gating = config.is_gating(&w.code);
    }
    warnings.sort_by(|a, b| a.code.cmp(&b.code).then_with(|| a.message.cmp(&b.message)));
    let failing: BTreeSet<String> = warnings
        .iter()
        .filter(|w| w.gating)
        .map(|w| w.code.clone())
        .collect();
    Gate {
        gating_codes: config.gating.iter().cloned().collect(),
        result: if failing.is_empty() { "pass" } else { "fail" }.to_owned(),
        failing_codes: failing.into_iter().collect(),
    }
}

pub fn exit_code(gate: &Gate) -> ExitCode {
    ExitCode::from(if gate.result == "pass" {
        exit::PASS
    } else {
        exit::FAIL
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_set_is_the_contracts() {
        let c = GateConfig::default();
        for code in [
            "missing_iterations",
            "capture_range_missing",
            "capture_range_multiple",
            "capture_range_exceeded",
            "capture_range_without_gpu_work",
        ] {
            assert!(c.is_gating(code), "{code}");
        }
        assert!(!c.is_gating("high_variance"));
        assert!(!c.is_gating("gpu_projection_unavailable"));
    }

    #[test]
    fn flags_change_the_set_and_unknown_codes_are_refused() {
        let c = GateConfig::new(&["high_variance".into()], &["missing_iterations".into()]).unwrap();
        assert!(c.is_gating("high_variance"));
        assert!(!c.is_gating("missing_iterations"));
        let err = GateConfig::new(&["missing_iteration".into()], &[]).unwrap_err();
        assert!(err
            .to_string()
            .contains("unknown warning code `missing_iteration`"));
    }

    #[test]
    fn warnings_are_sorted_and_the_gate_follows_them() {
        let mut w = vec![
            Warning::new("high_variance", "b".into()),
            Warning::new("capture_range_missing", "z".into()),
            Warning::new("capture_range_missing", "a".into()),
        ];
        let gate = apply(&GateConfig::default(), &mut w);
        let order: Vec<_> = w
            .iter()
            .map(|w| (w.code.as_str(), w.message.as_str()))
            .collect();
        assert_eq!(
            order,
            [
                ("capture_range_missing", "a"),
                ("capture_range_missing", "z"),
                ("high_variance", "b")
            ]
        );
        assert!(w[0].gating && !w[2].gating);
        assert_eq!(gate.result, "fail");
        assert_eq!(gate.failing_codes, ["capture_range_missing"]);
    }
}
