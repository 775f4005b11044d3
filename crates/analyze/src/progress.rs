//! What the user sees on standard error while `analyze` works, and the summary after it.
//!
//! Standard output is left alone: later commands print the report there. Everything goes
//! through [`nsys_gate_core::say`], and the run's own words (profile, run id, the nsys version of a
//! stamp, warning messages, paths) are [`shown`] on one line.

use std::path::Path;
use std::time::Duration;

use crate::nsys::Nsys;
use nsys_gate_core::artifact::{Analysis, GateResult};
use nsys_gate_core::say::{self, say};
use nsys_gate_core::text::{shown, shown_path};

/// Progress and summary lines on standard error.
pub struct Progress {
    terminal: bool,
    quiet: bool,
    last_line: Duration,
}

/// Without a terminal, a "still running" line this often (a CI log is not redrawn).
const LOG_EVERY: Duration = Duration::from_secs(15);

impl Progress {
    pub fn stderr() -> Self {
        Progress {
            terminal: say::stderr_is_terminal(),
            quiet: false,
            last_line: Duration::ZERO,
        }
    }

    /// Prints nothing (for library callers and tests).
    pub fn quiet() -> Self {
        Progress {
            terminal: false,
            quiet: true,
            last_line: Duration::ZERO,
        }
    }

    pub fn start_nsys(&mut self, nsys: &Nsys, trace: &Path) {
        if self.quiet {
            return;
        }
        self.last_line = Duration::ZERO;
        say!(
            "nsys-gate: running nsys stats (Nsight Systems {}) on {}",
            shown(&nsys.version),
            shown_path(trace)
        );
    }

    pub fn tick(&mut self, elapsed: Duration) {
        if self.quiet {
            return;
        }
        let secs = elapsed.as_secs();
        if self.terminal {
            let spinner = ['|', '/', '-', '\\'][(secs % 4) as usize];
            say::redraw(&format!("  {spinner} nsys stats: {secs} s elapsed"));
        } else if elapsed >= self.last_line + LOG_EVERY {
            self.last_line = elapsed;
            say!("  nsys stats still running: {secs} s elapsed");
        }
    }

    pub fn finish_nsys(&mut self) {
        if self.terminal && !self.quiet {
            say::clear_line();
        }
    }

    /// The short human summary after a successful analysis.
    pub fn summary(&self, analysis: &Analysis, written: &Path) {
        if self.quiet {
            return;
        }
        say::message(&summary_text(analysis, written));
    }
}

pub fn summary_text(a: &Analysis, written: &Path) -> String {
    let s = &a.iteration_summary;
    let mut out = format!(
        "nsys-gate: profile {} (run {}), Nsight Systems {}{}\n",
        shown(&a.run.profile_name),
        shown(&a.run.run_id),
        shown(&a.provenance.nsys_version),
        if a.provenance.stats_reused {
            ", reused CSVs"
        } else {
            ""
        }
    );
    out.push_str(&format!(
        "  iterations: {} found of {} expected, {} complete\n",
        s.found, s.expected, s.complete
    ));
    let gating = a.warnings.iter().filter(|w| w.gating).count();
    out.push_str(&match a.gate.result {
        GateResult::Pass => "  gate: passed\n".to_owned(),
        GateResult::Fail => {
            let codes: Vec<&str> = a.gate.failing_codes.iter().map(|c| c.as_str()).collect();
            format!("  gate: FAILED ({})\n", codes.join(", "))
        }
    });
    if a.warnings.is_empty() {
        out.push_str("  warnings: none\n");
    } else {
        out.push_str(&format!(
            "  warnings: {} ({gating} gating)\n",
            a.warnings.len()
        ));
        for w in &a.warnings {
            let mark = if w.gating { "[gating] " } else { "" };
            out.push_str(&format!("    - {mark}{}: {}\n", w.code, shown(&w.message)));
        }
    }
    out.push_str(&format!("  analysis: {}\n", shown_path(written)));
    out
}
