//! The gate: which warnings fail the job, and the exit status that follows.
//!
//! By default the job fails on missing iterations and capture-range problems and on nothing
//! else (contract section 4). `--gate-on CODE` / `--no-gate-on CODE` change the set, and
//! `analysis.json` records the set that was used.

use std::collections::BTreeSet;
use std::process::ExitCode;

use crate::artifact::{Gate, GateResult, Verdict, Warning, WarningCode};

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
    gating: BTreeSet<WarningCode>,
}

impl Default for GateConfig {
    fn default() -> Self {
        GateConfig {
            gating: WarningCode::ALL
                .into_iter()
                .filter(|code| code.gates_by_default())
                .collect(),
        }
    }
}

impl GateConfig {
    /// The default set, plus `gate_on`, less `no_gate_on` (which wins when a code is in both).
    pub fn new(gate_on: &[WarningCode], no_gate_on: &[WarningCode]) -> Self {
        let mut config = GateConfig::default();
        config.gating.extend(gate_on.iter().copied());
        for code in no_gate_on {
            config.gating.remove(code);
        }
        config
    }

    pub fn is_gating(&self, code: WarningCode) -> bool {
        self.gating.contains(&code)
    }
}

/// Marks gating warnings, sorts them by code then message, and decides the gate.
pub fn apply(config: &GateConfig, warnings: &mut [Warning]) -> Gate {
    for w in warnings.iter_mut() {
        w.gating = config.is_gating(w.code);
    }
    warnings.sort_by(|a, b| {
        (a.code.as_str())
            .cmp(b.code.as_str())
            .then_with(|| a.message.cmp(&b.message))
    });
    let failing: BTreeSet<WarningCode> = warnings
        .iter()
        .filter(|w| w.gating)
        .map(|w| w.code)
        .collect();
    Gate {
        gating_codes: config.gating.iter().copied().collect(),
        result: if failing.is_empty() {
            GateResult::Pass
        } else {
            GateResult::Fail
        },
        failing_codes: failing.into_iter().collect(),
    }
}

/// How a command ended: all its exit status says (contract section 6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// The analyses' overall verdict: pass 0, fail 1, error 2.
    Judged(Verdict),
    /// Done, with nothing to judge (a comparison written, a comment posted or left as it
    /// was): 0.
    Done,
    /// What the command itself had to do failed (said where it happened): 2.
    Failed,
    /// Stopped by SIGINT or SIGTERM: 130 or 143, as a shell reports it.
    Stopped(crate::interrupt::Signal),
}

impl Ending {
    /// The ending of one analysis: its gate's verdict.
    pub fn of_gate(gate: &Gate) -> Self {
        Ending::Judged(gate.result.into())
    }
}

/// The one mapping of how a command ended to its exit status.
pub fn exit_status(ending: Ending) -> u8 {
    match ending {
        Ending::Judged(Verdict::Pass) | Ending::Done => exit::PASS,
        Ending::Judged(Verdict::Fail) => exit::FAIL,
        Ending::Judged(Verdict::Error) | Ending::Failed => exit::ERROR,
        Ending::Stopped(signal) => signal.exit_status(),
    }
}

/// [`exit_status`] as the process's exit code.
pub fn exit_code(ending: Ending) -> ExitCode {
    ExitCode::from(exit_status(ending))
}

#[cfg(test)]
mod tests {
    use super::*;
    use WarningCode::*;

    #[test]
    fn every_ending_has_the_contracts_exit_status() {
        use crate::interrupt::Signal;
        assert_eq!(exit_status(Ending::Judged(Verdict::Pass)), 0);
        assert_eq!(exit_status(Ending::Done), 0);
        assert_eq!(exit_status(Ending::Judged(Verdict::Fail)), 1);
        assert_eq!(exit_status(Ending::Judged(Verdict::Error)), 2);
        assert_eq!(exit_status(Ending::Failed), 2);
        assert_eq!(exit_status(Ending::Stopped(Signal::Interrupt)), 130);
        assert_eq!(exit_status(Ending::Stopped(Signal::Terminate)), 143);
    }

    #[test]
    fn default_set_is_the_contracts() {
        let c = GateConfig::default();
        for code in [
            MissingIterations,
            CaptureRangeMissing,
            CaptureRangeMultiple,
            CaptureRangeExceeded,
            CaptureRangeWithoutGpuWork,
        ] {
            assert!(c.is_gating(code), "{code}");
        }
        assert!(!c.is_gating(HighVariance));
        assert!(!c.is_gating(GpuProjectionUnavailable));
        assert_eq!(c.gating.len(), 5);
    }

    #[test]
    fn flags_change_the_set() {
        let c = GateConfig::new(&[HighVariance], &[MissingIterations]);
        assert!(c.is_gating(HighVariance));
        assert!(!c.is_gating(MissingIterations));
        // --no-gate-on wins over --gate-on for the same code.
        let c = GateConfig::new(&[HighVariance], &[HighVariance]);
        assert!(!c.is_gating(HighVariance));
    }

    #[test]
    fn warnings_are_sorted_and_the_gate_follows_them() {
        let mut w = vec![
            Warning::new(HighVariance, "b".into()),
            Warning::new(CaptureRangeMissing, "z".into()),
            Warning::new(CaptureRangeMissing, "a".into()),
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
        assert_eq!(gate.result, GateResult::Fail);
        assert_eq!(gate.failing_codes, [CaptureRangeMissing]);
    }
}
