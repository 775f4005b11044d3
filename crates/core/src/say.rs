//! The one writer of everything nsys-gate prints: its messages on standard error, the report
//! on standard output, and the annotations. Nothing else in `src/` prints (a unit test greps
//! for `eprintln!` and the like).
//!
//! Inside GitHub Actions the runner reads both streams line by line (a line ends at `\n`,
//! `\r\n` or a lone `\r`) and runs as a workflow command any line that starts, after leading
//! white space, with `::`, or that holds the legacy `##[` anywhere. Messages quote text the
//! code under review wrote (profile names, run ids, manifest keys, paths, nsys's words, a
//! stamp's version), so every message goes through [`inert`] on its way out:
//!
//! - a carriage return is shown as `\r` and any other control character (but line feed and
//!   tab) as `\u{…}`: in every mode, so a terminal is not spoofed either;
//! - `##vso[`, which an Azure Pipelines agent acts on anywhere in a line, is shown as
//!   `##vso\[`, in every mode: an agent may read the log where nsys-gate sees no sign of one (a
//!   script of an Azure job running it);
//! - in GitHub Actions, on every line, a leading `::` becomes `:` U+200B `:` and every `##[`
//!   becomes `#` U+200B `#[` (U+200B, the zero-width space, is not white space to the runner's
//!   `Trim`, and reads the same).
//!
//! Untrusted values embedded in a message are also shown on one line with [`crate::text::shown`] (line
//! feeds as `\n`), so that they cannot even look like a line of their own. The report is
//! printed verbatim but for `##vso[`, inside `::stop-commands::TOKEN` … `::TOKEN::` in Actions
//! ([`crate::text::without_commands`]); annotations are the only workflow commands written
//! on purpose, escaped as the runner reads them by the forge ([`commands`]).

use std::borrow::Cow;
use std::fmt::Write as _;
use std::io::{IsTerminal, Write};
#[cfg(test)]
use std::path::Path;
use std::sync::atomic::{AtomicU8, Ordering};

use crate::text::inert;

/// 0: outside (until told otherwise); 2: the log's reader acts on workflow commands.
static MODE: AtomicU8 = AtomicU8::new(0);

/// Says whether output is read by a runner that acts on workflow commands (GitHub Actions'),
/// as the forge found it (`nsys_gate_forge::log_reads_commands`): set first thing, before the
/// command line is parsed.
pub fn set_actions(in_actions: bool) {
    MODE.store(if in_actions { 2 } else { 0 }, Ordering::Relaxed);
}

fn in_actions() -> bool {
    MODE.load(Ordering::Relaxed) == 2
}

/// `say!("nsys-gate: …", …)`: one message (of one or more lines) on standard error, made
/// [`inert`]. Use it as `eprintln!` was used.
#[macro_export]
#[doc(hidden)]
macro_rules! __say {
    ($($arg:tt)*) => {
        $crate::say::message(&format!($($arg)*))
    };
}
pub use crate::__say as say;

/// Writes `text` on standard error, made [`inert`], with a line break at the end. A failed
/// write is ignored (there is nowhere left to say it).
pub fn message(text: &str) {
    let mut out = inert(text.strip_suffix('\n').unwrap_or(text), in_actions());
    out.push('\n');
    let mut stderr = std::io::stderr().lock();
    let _ = stderr
        .write_all(out.as_bytes())
        .and_then(|()| stderr.flush());
}

/// Whether standard error is a terminal (where progress is redrawn in place).
pub fn stderr_is_terminal() -> bool {
    std::io::stderr().is_terminal()
}

/// Whether standard output is a terminal (a person reading, not a log or a pipe).
pub fn stdout_is_terminal() -> bool {
    std::io::stdout().is_terminal()
}

/// Redraws the progress line on a terminal: `\r` and `text` ([`inert`]), no line break.
pub fn redraw(text: &str) {
    let out = format!("\r{}", inert(text, in_actions()));
    let mut stderr = std::io::stderr().lock();
    let _ = stderr
        .write_all(out.as_bytes())
        .and_then(|()| stderr.flush());
}

/// Clears the progress line that [`redraw`] drew.
pub fn clear_line() {
    let mut stderr = std::io::stderr().lock();
    let _ = stderr.write_all(b"\r\x1b[2K").and_then(|()| stderr.flush());
}

/// Prints the report on standard output as it is, but for Azure Pipelines' `##vso[` broken
/// everywhere ([`crate::text::without_vso`]); in GitHub Actions between
/// `::stop-commands::TOKEN` and `::TOKEN::`, so that nothing in it is run.
pub fn report(text: &str) -> std::io::Result<()> {
    let text = if in_actions() {
        Cow::Owned(crate::text::without_commands(text))
    } else {
        crate::text::without_vso(text)
    };
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(text.as_bytes())?;
    stdout.flush()
}

/// Prints workflow commands on standard output: the annotations nsys-gate issues on purpose,
/// one line each, escaped by the forge as its runner reads them (and `##vso[` broken, as
/// everywhere).
pub fn commands(lines: &[String]) -> std::io::Result<()> {
    let mut text = String::new();
    for line in lines {
        debug_assert!(!line.contains(['\r', '\n']), "{line:?}");
        text.push_str(&crate::text::without_vso(line));
        text.push('\n');
    }
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(text.as_bytes())?;
    stdout.flush()
}

/// Whether `text` may be printed as it is: outside GitHub Actions, and with no `##vso[` in it.
pub fn prints_as_is(text: &str) -> bool {
    !in_actions() && matches!(crate::text::without_vso(text), Cow::Borrowed(_))
}

/// The command line's own text (its error, `--help`, `--version`), made [`inert`]: on standard
/// error when `on_stderr`, otherwise on standard output.
pub fn usage(text: &str, on_stderr: bool) {
    if on_stderr {
        message(text);
    } else {
        let mut out = inert(text.strip_suffix('\n').unwrap_or(text), in_actions());
        out.push('\n');
        let mut stdout = std::io::stdout().lock();
        let _ = stdout
            .write_all(out.as_bytes())
            .and_then(|()| stdout.flush());
    }
}

/// What the process is doing, for the panic hook's line: the command's name.
static DOING: std::sync::Mutex<&str> = std::sync::Mutex::new("nsys-gate");

/// Names what the process is doing (the command), for a panic's one line.
pub fn set_doing(what: &'static str) {
    *DOING
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner) = what;
}

/// A panic (a bug in nsys-gate) said in one line through [`message`], with what was being done
/// and where it happened; the backtrace below it only when `RUST_BACKTRACE` asks for one. The
/// command then ends with the contract's error status (see `commands::execute`).
pub fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let payload = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "no message".to_owned());
        let location = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        let doing = *DOING
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut text = panic_line(doing, &payload, &location);
        let trace = std::backtrace::Backtrace::capture();
        if trace.status() == std::backtrace::BacktraceStatus::Captured {
            let _ = write!(text, "\nstack backtrace:\n{trace}");
        }
        message(&text);
    }));
}

/// A panic's one line: what was being done, the panic's message on one line, where.
fn panic_line(doing: &str, payload: &str, location: &str) -> String {
    let payload = payload.split_whitespace().collect::<Vec<_>>().join(" ");
    format!(
        "nsys-gate: error: internal error during `{doing}`: {payload}{location} (a bug in nsys-gate; please report it with this line; RUST_BACKTRACE=1 adds a backtrace)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_is_one_line_naming_the_command() {
        let line = panic_line("report", "index out of\nbounds", " at src/x.rs:3");
        assert_eq!(line.lines().count(), 1, "{line}");
        assert!(line.starts_with("nsys-gate: error: internal error during `report`: index out of bounds at src/x.rs:3"), "{line}");
    }

    /// Nothing in `src/` prints but this module: a stray `eprintln!` (or a child process
    /// sharing our standard error) would bypass [`inert`].
    #[test]
    fn nothing_else_in_src_prints() {
        let forbidden = [
            "println!",
            "print!",
            "dbg!",
            "io::stdout(",
            "io::stderr(",
            "Stdio::inherit",
            "libc::write(",
            "/dev/stdout",
            "/dev/stderr",
            "/dev/tty",
        ];
        // Every crate of the workspace: this one's parent holds the others, beside the root's.
        let workspace = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../..")
            .canonicalize()
            .unwrap();
        let mut files = vec![workspace.join("src")];
        for krate in std::fs::read_dir(workspace.join("crates")).unwrap() {
            files.push(krate.unwrap().path().join("src"));
        }
        let this = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("src/say.rs")
            .canonicalize()
            .unwrap();
        let mut stray = Vec::new();
        while let Some(path) = files.pop() {
            if path.is_dir() {
                for entry in std::fs::read_dir(&path).unwrap() {
                    files.push(entry.unwrap().path());
                }
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") || path == this {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            for (n, line) in text.lines().enumerate() {
                let code = line.trim_start();
                if code.starts_with("//") {
                    continue;
                }
                let imported = code.starts_with("use std::io")
                    && (code.contains("stdout") || code.contains("stderr"));
                if imported || forbidden.iter().any(|w| code.contains(w)) {
                    stray.push(format!("{}:{}: {code}", path.display(), n + 1));
                }
            }
        }
        assert!(
            stray.is_empty(),
            "print through nsys_gate_core::say (say!, say::message, say::report), not directly:\n{}",
            stray.join("\n")
        );
    }
}
