//! SIGINT and SIGTERM: stop cleanly instead of dying with nsys still running, and say what
//! was stopped.
//!
//! nsys runs in a process group of its own (so that a timeout can kill it and its helpers), so
//! a Ctrl-C or a CI runner's SIGTERM that kills nsys-gate alone would leave nsys writing under
//! `stats/` after the run directory's lock is gone. Instead, [`install`] starts a thread that
//! waits for SIGINT and SIGTERM (signal-hook's self-pipe, no unsafe code here) and records the
//! first one ([`received`]):
//!
//! - while an analysis runs ([`deferred`]), the work checks [`received`]: a running nsys gets
//!   the same signal on its whole process group and is waited for (then killed, after a grace
//!   period), its SQLite export is removed, the lock is released as the pipeline returns, and
//!   the command exits with 128 + the signal's number (130 for SIGINT, 143 for SIGTERM);
//!   `analysis.json` is written by rename, so it is either the old file or the new one;
//! - while `--baseline auto` fetches the base branch's history (also [`deferred`]), the
//!   download is dropped at once ([`wait`] is raced against it), an unpacking or a reading
//!   stops at its next piece ([`received`]), their temporary folder is removed, what was
//!   interrupted is said, and the command exits with the same status ([`Stopped`]): nothing
//!   is left in the temporary folder, and no report is written or posted;
//! - in every other stage (reading analyses, comparing, rendering, writing, posting), and on
//!   a second signal at any time, the thread says what the command was doing (the stage each
//!   command names with [`doing`]) and ends the process at once with that status: nothing
//!   there leaves a lock, a process or a half-written file behind (files are written by
//!   rename), and a post stopped half-way is said as such.

use std::borrow::Cow;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

use crate::say::say;

/// The signals nsys-gate stops cleanly on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    Interrupt,
    Terminate,
}

impl Signal {
    const ALL: [Signal; 2] = [Signal::Interrupt, Signal::Terminate];

    fn number(self) -> i32 {
        match self {
            Signal::Interrupt => libc::SIGINT,
            Signal::Terminate => libc::SIGTERM,
        }
    }

    fn from_number(number: usize) -> Option<Signal> {
        Signal::ALL
            .into_iter()
            .find(|s| usize::try_from(s.number()).is_ok_and(|n| n == number))
    }

    pub fn name(self) -> &'static str {
        match self {
            Signal::Interrupt => "SIGINT",
            Signal::Terminate => "SIGTERM",
        }
    }

    /// The exit status a shell gives a process this signal ended: 130 or 143.
    pub fn exit_status(self) -> u8 {
        match self {
            Signal::Interrupt => 130,
            Signal::Terminate => 143,
        }
    }

    /// The same signal, to forward to nsys's process group.
    pub fn to_rustix(self) -> rustix::process::Signal {
        match self {
            Signal::Interrupt => rustix::process::Signal::INT,
            Signal::Terminate => rustix::process::Signal::TERM,
        }
    }
}

/// The number of the first signal received (0: none yet).
static RECEIVED: AtomicUsize = AtomicUsize::new(0);
/// Whether the first signal is left to the work under way ([`deferred`]).
static DEFERRING: AtomicBool = AtomicBool::new(false);
static INSTALLED: AtomicBool = AtomicBool::new(false);
/// What the command is doing, for the words of a stop ([`doing`]).
static DOING: Mutex<Cow<'static, str>> = Mutex::new(Cow::Borrowed("starting"));

/// Starts the thread that handles SIGINT and SIGTERM, once per process (the binary's `main`; a
/// library caller that does not call it keeps the default behaviour).
pub fn install() -> std::io::Result<()> {
    if INSTALLED.swap(true, Ordering::SeqCst) {
        return Ok(());
    }
    let numbers = Signal::ALL.map(Signal::number);
    let mut signals = signal_hook::iterator::Signals::new(numbers)?;
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            for number in signals.forever() {
                let Some(signal) = usize::try_from(number).ok().and_then(Signal::from_number)
                else {
                    continue;
                };
                let first = RECEIVED
                    .compare_exchange(
                        0,
                        signal.number() as usize,
                        Ordering::SeqCst,
                        Ordering::SeqCst,
                    )
                    .is_ok();
                if first && DEFERRING.load(Ordering::SeqCst) {
                    // The work under way winds down and says what it stopped.
                    continue;
                }
                stop_now(signal, first);
            }
        })?;
    Ok(())
}

/// Says what was stopped, and ends the process with the signal's status.
fn stop_now(signal: Signal, first: bool) -> ! {
    let doing = DOING
        .lock()
        .map_or_else(|e| e.into_inner().clone(), |d| d.clone());
    say!(
        "nsys-gate: stopped by {}{} while {doing}",
        signal.name(),
        if first { "" } else { " (a second signal)" }
    );
    // As a shell's child that the signal ended: no destructor runs, no file is half-written
    // (every output is written to a temporary file and renamed).
    signal_hook::low_level::exit(i32::from(signal.exit_status()))
}

/// Names what the command is doing now (`posting the pull-request comment`): the words a
/// SIGINT/SIGTERM outside [`deferred`] work is said with.
pub fn doing(what: impl Into<Cow<'static, str>>) {
    let what = what.into();
    match DOING.lock() {
        Ok(mut d) => *d = what,
        Err(e) => *e.into_inner() = what,
    }
}

/// The signal received, if one was.
pub fn received() -> Option<Signal> {
    Signal::from_number(RECEIVED.load(Ordering::SeqCst))
}

/// Resolves once a SIGINT/SIGTERM has been received (looked at every 20 ms): raced against
/// work that may wait long (a download), so that a signal ends it at once.
pub async fn wait() -> Signal {
    loop {
        if let Some(signal) = received() {
            return signal;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// The error a command returns when a signal stopped it after its work was wound down (what
/// was interrupted already said): the process exits with the signal's status, 130 or 143,
/// and prints nothing more.
#[derive(Debug, thiserror::Error)]
#[error("stopped by {}", .0.name())]
pub struct Stopped(pub Signal);

/// Runs `work` with the first SIGINT/SIGTERM deferred to it: `work` checks [`received`] and
/// winds down (stops nsys, releases the lock). A second signal still ends the process at once.
pub fn deferred<T>(work: impl FnOnce() -> T) -> T {
    struct Rearm;
    impl Drop for Rearm {
        fn drop(&mut self) {
            DEFERRING.store(false, Ordering::SeqCst);
        }
    }
    DEFERRING.store(true, Ordering::SeqCst);
    let _rearm = Rearm;
    work()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signals_map_to_the_shells_exit_statuses() {
        assert_eq!(Signal::Interrupt.exit_status(), 130);
        assert_eq!(Signal::Terminate.exit_status(), 143);
        assert_eq!(Signal::from_number(2), Some(Signal::Interrupt));
        assert_eq!(Signal::from_number(15), Some(Signal::Terminate));
        assert_eq!(Signal::from_number(0), None);
        assert_eq!(Signal::from_number(9), None);
    }
}
