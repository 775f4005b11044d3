//! What the user sees on standard error while `analyze` works, and the summary after it.
//!
//! Standard output is left alone: later commands print the report there.

use std::io::{IsTerminal, Write};
use std::path::Path;
use std::time::Duration;

use crate::artifact::{Analysis, GateResult};
use crate::nsys::Nsys;

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
            terminal: std::io::stderr().is_terminal(),
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
        eprintln!(
            "nsys-gate: running nsys stats (Nsight Systems {}) on {}",
            nsys.version,
            trace.display()
        );
    }

    pub fn tick(&mut self, elapsed: Duration) {
        if self.quiet {
            return;
        }
        let secs = elapsed.as_secs();
        if self.terminal {
            let spinner = ['|', '/', '-', '\\'][(secs % 4) as usize];
            eprint!("\r  {spinner} nsys stats: {secs} s elapsed");
            let _ = std::io::stderr().flush();
        } else if elapsed >= self.last_line + LOG_EVERY {
            self.last_line = elapsed;
            eprintln!("  nsys stats still running: {secs} s elapsed");
        }
    }

    pub fn finish_nsys(&mut self) {
        if self.terminal && !self.quiet {
            eprint!("\r\x1b[2K");
            let _ = std::io::stderr().flush();
        }
    }

    /// The short human summary after a successful analysis.
    pub fn summary(&self, analysis: &Analysis, written: &Path) {
        if self.quiet {
            return;
        }
        eprint!("{}", summary_text(analysis, written));
    }
}

pub fn summary_text(a: &Analysis, written: &Path) -> String {
    let s = &a.iteration_summary;
    let mut out = format!(
        "nsys-gate: profile {} (run {}), Nsight Systems {}{}\n",
        a.run.profile_name,
        a.run.run_id,
        a.provenance.nsys_version,
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
            let message = w.message.replace('\n', " ");
            out.push_str(&format!("    - {mark}{}: {message}\n", w.code));
        }
    }
    out.push_str(&format!("  analysis: {}\n", written.display()));
    out
}
