//! Running one nsys process: both output streams captured into a bounded [`Sink`], a
//! timeout, progress ticks, and a process group of its own, to which a SIGINT/SIGTERM
//! nsys-gate receives is forwarded (and which a timeout kills whole).

use std::ffi::OsString;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use nsys_gate_core::interrupt::{self, Signal};

use super::error::NsysError;
use super::words::{describe_command, excerpt};

/// The first this-many bytes of nsys's output are kept whole.
const OUTPUT_CAP: usize = 64 * 1024;

/// What one nsys process left: how it ended and what is kept of its output.
pub(super) struct Captured {
    /// `None` when it could not be waited for (or was not run).
    pub(super) status: Option<ExitStatus>,
    /// Killed at the timeout.
    pub(super) timed_out: bool,
    /// Both output streams, as [`Sink`] kept them.
    pub(super) text: String,
}

impl Captured {
    /// Everything kept of nsys's output, for classifying it.
    pub(super) fn words(&self) -> String {
        self.text.clone()
    }

    /// nsys's words for a message: the lines that say what went wrong and the last lines,
    /// at most [`MESSAGE_LINES`](super::words::MESSAGE_LINES) lines of at most
    /// [`MESSAGE_LINE_CHARS`](super::words::MESSAGE_LINE_CHARS) characters.
    pub(super) fn excerpt(&self) -> String {
        excerpt(&self.text)
    }

    /// How the process ended, as messages say it (`failed with exit status 1`).
    pub(super) fn describe_status(&self) -> String {
        use std::os::unix::process::ExitStatusExt;
        match self.status {
            None => "ended with no exit status".to_owned(),
            Some(s) => match (s.code(), s.signal()) {
                (Some(0), _) => "exited with status 0".to_owned(),
                (Some(c), _) => format!("failed with exit status {c}"),
                (None, Some(sig)) => format!("was killed by signal {sig}{}", signal_name(sig)),
                _ => s.to_string(),
            },
        }
    }
}

/// ` (SIGKILL)` and the like after a signal's number, for the usual ones; else nothing.
fn signal_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGKILL => " (SIGKILL)",
        libc::SIGSEGV => " (SIGSEGV)",
        libc::SIGABRT => " (SIGABRT)",
        libc::SIGTERM => " (SIGTERM)",
        libc::SIGBUS => " (SIGBUS)",
        libc::SIGINT => " (SIGINT)",
        _ => "",
    }
}

/// What is kept of nsys's output: the first [`OUTPUT_CAP`] bytes, the lines past them that
/// classify the outcome, and the last [`TAIL_LINES`] lines. Memory stays bounded whatever
/// nsys prints.
#[derive(Default)]
struct Sink {
    /// The first lines, up to [`OUTPUT_CAP`] bytes.
    head: String,
    /// Lines past the head that classify the outcome, up to [`IMPORTANT_LINES`].
    important: Vec<String>,
    /// The last [`TAIL_LINES`] lines past the head.
    tail: std::collections::VecDeque<String>,
    /// Lines past the head that are in neither `important` nor `tail`.
    dropped: usize,
}

/// Lines kept at the end of the output.
const TAIL_LINES: usize = 40;
/// Lines past the head kept for what they say (`SKIPPED`, `ERROR`, …).
const IMPORTANT_LINES: usize = 200;
/// Longest line kept; nsys's own lines are far shorter.
const LINE_CAP: usize = 4096;

impl Sink {
    /// Keeps one line (cut to [`LINE_CAP`] bytes) in the head, the important lines or the tail.
    fn push(&mut self, text: &str) {
        let text = cut_at(text, LINE_CAP);
        if self.head.len() + text.len() < OUTPUT_CAP && self.tail.is_empty() {
            self.head.push_str(text);
            self.head.push('\n');
            return;
        }
        let important = [
            "SKIPPED",
            "ERROR",
            "rror",
            "Version",
            "newer than",
            "Processing [",
        ]
        .iter()
        .any(|n| text.contains(n));
        if important && self.important.len() < IMPORTANT_LINES {
            self.important.push(text.to_owned());
            return;
        }
        self.tail.push_back(text.to_owned());
        if self.tail.len() > TAIL_LINES {
            self.tail.pop_front();
            self.dropped += 1;
        }
    }

    /// What is kept, in order, with how many lines were dropped between.
    fn text(&self) -> String {
        let mut out = self.head.clone();
        for line in &self.important {
            out.push_str(line);
            out.push('\n');
        }
        if self.dropped > 0 {
            out.push_str(&format!("[… {} more lines …]\n", self.dropped));
        }
        for line in &self.tail {
            out.push_str(line);
            out.push('\n');
        }
        out
    }
}

/// `text` cut to at most `max` bytes, on a character boundary.
fn cut_at(text: &str, max: usize) -> &str {
    let mut cut = text.len().min(max);
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    &text[..cut]
}

/// Collects lines from a pipe into the shared sink.
fn collect_lines(
    pipe: impl Read + Send + 'static,
    sink: Arc<Mutex<Sink>>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let mut reader = BufReader::new(pipe);
        let mut line = Vec::new();
        loop {
            line.clear();
            // A line is read at most LINE_CAP bytes at a time, so one endless line cannot
            // grow the buffer without bound.
            match (&mut reader)
                .take(LINE_CAP as u64)
                .read_until(b'\n', &mut line)
            {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            // nsys redraws progress bars with '\r': keep the last state of such a line.
            let text = String::from_utf8_lossy(&line);
            let text = text
                .rsplit('\r')
                .find(|s| !s.trim().is_empty())
                .unwrap_or("");
            let text = text.trim_end_matches('\n');
            if text.starts_with("Processing [") && text.contains('%') {
                continue;
            }
            sink.lock().unwrap_or_else(|e| e.into_inner()).push(text);
        }
    })
}

/// How one nsys process is run: where, for how long, and what to call while it works.
pub(super) struct Invocation<'a> {
    /// The executable.
    pub(super) program: &'a Path,
    /// Its arguments.
    pub(super) args: &'a [OsString],
    /// The working folder (`nsys stats` runs in the run directory, with relative paths).
    pub(super) dir: Option<&'a Path>,
    /// Killed (with its process group) past this.
    pub(super) timeout: Duration,
    /// The command as messages show it.
    pub(super) command: String,
}

impl<'a> Invocation<'a> {
    /// Runs `program` with `args` in the working folder, the command shown as run.
    pub(super) fn new(program: &'a Path, args: &'a [OsString], timeout: Duration) -> Self {
        Invocation {
            program,
            args,
            dir: None,
            timeout,
            command: describe_command(program, args),
        }
    }
}

/// How long nsys has to stop after a forwarded SIGINT/SIGTERM before it is killed. A CI runner
/// cancelling a job waits about 7.5 s after its SIGINT, 2.5 s more after its SIGTERM.
const STOP_GRACE: Duration = Duration::from_secs(5);

/// Runs a program with both output streams captured, a timeout and a progress callback, in a
/// process group of its own. A SIGINT/SIGTERM nsys-gate receives meanwhile is forwarded to that
/// group, which is waited for (and killed after [`STOP_GRACE`]): then `Interrupted`.
pub(super) fn run_captured(
    run: &Invocation<'_>,
    progress: &mut dyn FnMut(Duration),
) -> Result<Captured, NsysError> {
    use std::os::unix::process::CommandExt;
    let interrupted = |signal: Signal| NsysError::Interrupted {
        signal: signal.name(),
        command: run.command.clone(),
    };
    if let Some(signal) = interrupt::received() {
        return Err(interrupted(signal));
    }
    let mut command = Command::new(run.program);
    command
        .args(run.args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Its own process group, so a timeout or a signal can stop nsys and the helpers it
        // starts (and a terminal's Ctrl-C reaches nsys-gate alone, which forwards it).
        .process_group(0);
    if let Some(dir) = run.dir {
        command.current_dir(dir);
    }
    let mut child: Child = command.spawn().map_err(|source| NsysError::Spawn {
        command: run.command.clone(),
        source,
    })?;
    let sink = Arc::new(Mutex::new(Sink::default()));
    let readers = [
        child.stdout.take().map(|p| collect_lines(p, sink.clone())),
        child.stderr.take().map(|p| collect_lines(p, sink.clone())),
    ];
    let started = Instant::now();
    let mut last_tick = Duration::ZERO;
    let mut timed_out = false;
    let mut signal = None;
    let exit = ExitWatch::of(&child);
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) => {}
            Err(_) => break None,
        }
        if let Some(received) = interrupt::received() {
            signal = Some(received);
            break stop_group(&mut child, received);
        }
        let elapsed = started.elapsed();
        if elapsed >= run.timeout {
            timed_out = true;
            kill_group(&mut child);
            break child.wait().ok();
        }
        if elapsed >= last_tick + Duration::from_secs(1) {
            last_tick = elapsed;
            progress(elapsed);
        }
        exit.wait_up_to(POLL);
    };
    let stopped = timed_out || signal.is_some();
    for reader in readers.into_iter().flatten() {
        // After a kill, a grandchild may still hold the pipe: do not wait on it forever.
        if stopped {
            let deadline = Instant::now() + Duration::from_secs(2);
            while !reader.is_finished() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(10));
            }
            if !reader.is_finished() {
                continue;
            }
        }
        let _ = reader.join();
    }
    if let Some(signal) = signal {
        return Err(interrupted(signal));
    }
    let text = sink.lock().unwrap_or_else(|e| e.into_inner()).text();
    Ok(Captured {
        status,
        timed_out,
        text,
    })
}

/// How often a running process is checked for a signal received, its timeout and progress.
const POLL: Duration = Duration::from_millis(20);

/// Waits for a child to end, or for a while: woken at once when it ends (a pidfd, Linux 5.3
/// and newer), so that the next process or the reading starts then, not up to [`POLL`] later
/// (on a trace of a few seconds, each process's end waited for is about 1 % of the run).
/// Without a pidfd, it sleeps the while.
struct ExitWatch(Option<std::os::fd::OwnedFd>);

impl ExitWatch {
    fn of(child: &Child) -> Self {
        use rustix::process::{pidfd_open, Pid, PidfdFlags};
        ExitWatch(pidfd_open(Pid::from_child(child), PidfdFlags::empty()).ok())
    }

    /// Returns when the child has ended or after `most`, whichever comes first (or early, on a
    /// signal received).
    fn wait_up_to(&self, most: Duration) {
        use rustix::event::{poll, PollFd, PollFlags, Timespec};
        let waited = self.0.as_ref().and_then(|fd| {
            let timeout = Timespec::try_from(most).ok()?;
            match poll(&mut [PollFd::new(fd, PollFlags::IN)], Some(&timeout)) {
                Ok(_) | Err(rustix::io::Errno::INTR) => Some(()),
                Err(_) => None,
            }
        });
        if waited.is_none() {
            std::thread::sleep(most);
        }
    }
}

/// Forwards `signal` to the child's process group and waits until the whole group is gone;
/// what is left after [`STOP_GRACE`] is killed. Returns the child's exit status.
fn stop_group(child: &mut Child, signal: Signal) -> Option<ExitStatus> {
    use rustix::process::{kill_process_group, test_kill_process_group, Pid};
    let group = Pid::from_child(child);
    let _ = kill_process_group(group, signal.to_rustix());
    let mut status = None;
    let deadline = Instant::now() + STOP_GRACE;
    loop {
        if status.is_none() {
            status = child.try_wait().ok().flatten();
        }
        // The leader is reaped above; the rest of the group is reaped by whoever inherits it.
        let group_alive = test_kill_process_group(group).is_ok();
        if status.is_some() && !group_alive {
            return status;
        }
        if Instant::now() >= deadline {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    kill_group(child);
    let status = status.or_else(|| child.wait().ok());
    let deadline = Instant::now() + Duration::from_secs(2);
    while test_kill_process_group(group).is_ok() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    status
}

/// Kills the child's whole process group (made with `process_group(0)`) and the child.
fn kill_group(child: &mut Child) {
    use rustix::process::{kill_process_group, Pid, Signal as Sig};
    let _ = kill_process_group(Pid::from_child(child), Sig::KILL);
    let _ = child.kill();
}
