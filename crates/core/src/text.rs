//! Text helpers that every layer may use: untrusted values shown on one line, text made inert
//! to the GitHub Actions runner, text shortened to a length. Nothing here knows the rest of
//! the crate; it imports nothing of it.
//!
//! - [`shown`] / [`shown_path`]: an untrusted value (a name, a key, a path, nsys's words) on
//!   one line: line feed as `\n`, carriage return as `\r`, other control characters and the
//!   Unicode line and paragraph separators as `\u{…}`;
//! - [`inert`]: a whole message made safe to print where a runner reads it (see there);
//! - [`without_vso`]: Azure Pipelines' logging commands broken, on every platform;
//! - [`shorten`]: at most so many characters, `…` at the end when cut;
//! - [`without_commands`]: text printed where the runner reads it, wrapped so that nothing in
//!   it is a workflow command (with a [`random_token`]);
//! - [`ZWSP`]: the zero-width space, the one character used to break what a reader must not
//!   act on (a workflow command for the runner, a mention or a link for GitHub's markdown).

use std::borrow::Cow;
use std::fmt::Write as _;
use std::path::Path;

/// Zero-width space: breaks `::` and `##[` for the runner, and mentions and references for
/// GitHub, invisible to a reader.
pub const ZWSP: char = '\u{200B}';

/// An untrusted value shown on one line: line feed as `\n`, carriage return as `\r`, other
/// control characters (tab aside) and the Unicode line and paragraph separators as `\u{…}`.
/// Unchanged (borrowed) when it holds none.
pub fn shown(value: &str) -> Cow<'_, str> {
    if !value.chars().any(|c| c == '\n' || needs_escape(c)) {
        return Cow::Borrowed(value);
    }
    let mut out = String::with_capacity(value.len() + 8);
    for c in value.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            c => push_visible(&mut out, c),
        }
    }
    Cow::Owned(out)
}

/// A path as [`shown`] shows a value.
pub fn shown_path(path: impl AsRef<Path>) -> String {
    shown(&path.as_ref().display().to_string()).into_owned()
}

/// [`shown`], then at most `max_chars` characters ([`shorten`]): a value of any length as
/// part of one line.
pub fn shown_shortened(value: &str, max_chars: usize) -> String {
    shorten(&shown(value), max_chars)
}

/// Characters of a commit SHA shown to people, everywhere (git's own short form).
pub const SHORT_SHA: usize = 7;

/// A commit as people read it: its first [`SHORT_SHA`] characters.
pub fn short_sha(sha: &str) -> String {
    sha.chars().take(SHORT_SHA).collect()
}

/// Whether `value` is a commit SHA: 7 to 40 ASCII hexadecimal digits.
pub fn is_commit_sha(value: &str) -> bool {
    (7..=40).contains(&value.len()) && value.chars().all(|c| c.is_ascii_hexdigit())
}

/// At most `max_chars` characters of `text`, ending with `…` when shortened.
pub fn shorten(text: &str, max_chars: usize) -> String {
    if text.chars().count() <= max_chars {
        return text.to_owned();
    }
    let mut s: String = text.chars().take(max_chars.saturating_sub(1)).collect();
    s.push('…');
    s
}

/// A URL as it may be shown or stored: its userinfo (`user:password@` before the host, as in
/// `GITHUB_API_URL=http://user:password@host/api`) replaced by `***@`, whatever it holds. A text
/// that is not a URL is returned as it is.
pub fn without_userinfo(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => format!("{scheme}://***{}", &rest[at..]),
        None => url.to_owned(),
    }
}

/// `a`, `a and b`, `a, b and c`.
pub fn and_list(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// Control characters other than line feed and tab, and U+2028/U+2029.
fn needs_escape(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t') || c == '\u{2028}' || c == '\u{2029}'
}

fn push_visible(out: &mut String, c: char) {
    match c {
        '\r' => out.push_str("\\r"),
        c if needs_escape(c) => {
            let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
        }
        c => out.push(c),
    }
}

/// `text` as it may be written where a GitHub Actions runner reads it. The runner reads a
/// stream line by line (a line ends at `\n`, `\r\n` or a lone `\r`) and runs as a workflow
/// command any line that starts, after leading white space, with `::`, or that holds the
/// legacy `##[` anywhere. So:
///
/// - control characters but line feed and tab are made visible (a carriage return as `\r`,
///   others as `\u{…}`), in every mode, so that a terminal is not spoofed either; the only
///   line breaks left are the line feeds, each one a line of the message;
/// - in every mode, Azure Pipelines' `##vso[` is broken ([`without_vso`]);
/// - with `actions`, on every line, a leading `::` (after white space or an invisible
///   character) becomes `:` [`ZWSP`] `:` and every `##[` becomes `#` [`ZWSP`] `#[`. The
///   zero-width space is not white space to the runner's `Trim`, and reads the same.
pub fn inert(text: &str, actions: bool) -> String {
    let mut visible = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        push_visible(&mut visible, c);
    }
    let visible = without_vso(&visible).into_owned();
    if !actions {
        return visible;
    }
    let mut out = String::with_capacity(visible.len() + 8);
    for (i, line) in visible.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let body = line.trim_start_matches(|c: char| c.is_whitespace() || is_invisible(c));
        let lead = &line[..line.len() - body.len()];
        out.push_str(lead);
        let body = match body.strip_prefix("::") {
            Some(rest) => {
                out.push(':');
                out.push(ZWSP);
                out.push(':');
                rest
            }
            None => body,
        };
        out.push_str(&body.replace("##[", "#\u{200B}#["));
    }
    out
}

/// Characters that show nothing, which an older or other runner might trim as white space.
fn is_invisible(c: char) -> bool {
    matches!(
        c,
        '\u{180E}' | '\u{200B}'..='\u{200D}' | '\u{2060}' | '\u{FEFF}'
    )
}

/// Characters that .NET's culture-sensitive `IndexOf` skips on Linux (ICU's ignorables:
/// format characters, the soft hyphen, variation selectors…), as an older Azure Pipelines agent
/// compares.
fn is_ignorable(c: char) -> bool {
    matches!(
        c,
        '\u{00AD}'
            | '\u{034F}'
            | '\u{061C}'
            | '\u{115F}'
            | '\u{1160}'
            | '\u{17B4}'
            | '\u{17B5}'
            | '\u{180B}'..='\u{180F}'
            | '\u{200B}'..='\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2060}'..='\u{206F}'
            | '\u{3164}'
            | '\u{FE00}'..='\u{FE0F}'
            | '\u{FEFF}'
            | '\u{FFA0}'
            | '\u{FFF0}'..='\u{FFF8}'
    )
}

/// `text` with every Azure Pipelines logging command (`##vso[`, which the agent acts on
/// anywhere in a line, on standard output and standard error) broken: a `\` before the `[`,
/// so it reads `##vso\[`. The prefix is found in any case and across characters that show
/// nothing (an older agent compares with ICU, which skips them). Done on every platform: a
/// log may be read by an agent nsys-gate cannot see. Unchanged (borrowed) when there is none.
pub fn without_vso(text: &str) -> Cow<'_, str> {
    const PREFIX: [char; 5] = ['#', '#', 'v', 's', 'o'];
    if !text.contains('[') {
        return Cow::Borrowed(text);
    }
    let chars: Vec<char> = text.chars().collect();
    let is_command = |at: usize| {
        let mut before = chars[..at].iter().rev().filter(|c| !is_ignorable(**c));
        PREFIX
            .iter()
            .rev()
            .all(|p| before.next().is_some_and(|c| c.eq_ignore_ascii_case(p)))
    };
    let at: Vec<usize> = (0..chars.len())
        .filter(|&i| chars[i] == '[' && is_command(i))
        .collect();
    if at.is_empty() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + at.len());
    for (i, c) in chars.iter().enumerate() {
        if at.binary_search(&i).is_ok() {
            out.push('\\');
        }
        out.push(*c);
    }
    Cow::Owned(out)
}

/// A random token for delimiters and `stop-commands`: SHA-256 of 16 bytes of the system's
/// randomness (`/dev/urandom`, where there is one), the time, the process id, a counter and an
/// address, as 32 hex digits.
pub fn random_token() -> String {
    use std::io::Read;
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    let mut seed = [0u8; 16];
    if std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut seed))
        .is_ok()
    {
        h.update(seed);
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    h.update(now.as_nanos().to_le_bytes());
    h.update(std::process::id().to_le_bytes());
    h.update(COUNTER.fetch_add(1, Ordering::Relaxed).to_le_bytes());
    let local = 0u8;
    h.update((std::ptr::addr_of!(local) as usize).to_le_bytes());
    h.finalize()[..16]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// `text` between `::stop-commands::TOKEN` and `::TOKEN::`, with a token the text does not
/// hold (in any case: the runner compares the end line ignoring case): nothing in it is read
/// as a workflow command.
pub fn without_commands(text: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let mut token = random_token();
    while lower.contains(&token) {
        token = random_token();
    }
    let mut out = format!("::stop-commands::{token}\n{}", without_vso(text));
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&format!("::{token}::\n"));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_urls_userinfo_is_never_shown() {
        for (url, shown) in [
            ("http://user:password@host/api/v1", "http://***@host/api/v1"),
            (
                "https://tok@ghe.example:8443",
                "https://***@ghe.example:8443",
            ),
            ("http://a:b@c@host/x?y=@z", "http://***@host/x?y=@z"),
            ("https://api.github.com", "https://api.github.com"),
            ("http://host/path@x", "http://host/path@x"),
            ("not a url", "not a url"),
        ] {
            assert_eq!(without_userinfo(url), shown, "{url}");
        }
    }

    /// The runner's reading of one line: a command when it starts with `::` after trimming, or
    /// holds `##[`.
    fn runner_sees_command(line: &str) -> bool {
        line.trim_start().starts_with("::") || line.contains("##[")
    }

    #[test]
    fn no_line_of_hostile_text_is_a_command_in_actions() {
        let hostile = [
            "evil\n::error title=pwn::x",
            "R1\r::add-mask::ghp_x",
            "a\r\n  ::set-output name=x::y",
            "x ##[error]v1",
            "###[error]x ##[##[warning]y",
            "\u{FEFF}::error::bom",
            "\u{200B}::error::zwsp",
            "\t \u{A0}\u{3000}::error::spaces",
            "::",
        ];
        for text in hostile {
            let out = inert(text, true);
            assert!(!out.contains('\r'), "{out:?}");
            for line in out.split('\n') {
                assert!(!runner_sees_command(line), "{text:?} -> {line:?}");
            }
        }
    }

    /// The agent's reading: `##vso[` anywhere (ordinally, or skipping what ICU ignores) and a
    /// later `]`.
    fn agent_sees_command(line: &str) -> bool {
        let kept: String = line.chars().filter(|c| !is_ignorable(*c)).collect();
        kept.to_ascii_lowercase()
            .find("##vso[")
            .is_some_and(|at| kept[at..].contains(']'))
    }

    #[test]
    fn no_azure_command_passes_on_any_platform() {
        let hostile = [
            "##vso[task.setvariable variable=x]y",
            "a ##vso[task.setvariable variable=x]y ##vso[task.complete result=Failed]z",
            "a ##VSO[task.logissue type=error]x",
            "#\u{200B}#vso\u{AD}[task.setvariable variable=x]y",
            "###vso[[x]",
        ];
        for text in hostile {
            for actions in [false, true] {
                let out = inert(text, actions);
                assert!(!agent_sees_command(&out), "{text:?} -> {out:?}");
            }
            assert!(!agent_sees_command(&without_commands(text)), "{text:?}");
            assert!(!agent_sees_command(&without_vso(text)), "{text:?}");
        }
        assert_eq!(
            inert("##vso[task.setvariable variable=x]y", false),
            "##vso\\[task.setvariable variable=x]y"
        );
        assert_eq!(
            without_vso("a [b] #vso[ vso["),
            Cow::Borrowed("a [b] #vso[ vso[")
        );
    }

    #[test]
    fn inert_text_reads_the_same() {
        assert_eq!(
            inert("nsys-gate: error: x\n  caused by: y", true),
            "nsys-gate: error: x\n  caused by: y"
        );
        assert_eq!(inert("  ::error::x", true), "  :\u{200B}:error::x");
        assert_eq!(inert("a ##[b] c::d", true), "a #\u{200B}#[b] c::d");
        assert_eq!(inert("R1\r::x", true), "R1\\r::x");
        assert_eq!(inert("R1\r::x", false), "R1\\r::x");
        assert_eq!(inert("\u{1b}[2Kx", false), "\\u{1b}[2Kx");
        assert_eq!(inert("::x\n##[y", false), "::x\n##[y");
    }

    #[test]
    fn shown_values_stay_on_one_line() {
        assert_eq!(shown("plain, tab\tok"), Cow::Borrowed("plain, tab\tok"));
        assert_eq!(
            shown("evil\n::error title=pwn::x\r\u{7}\u{2028}"),
            "evil\\n::error title=pwn::x\\r\\u{7}\\u{2028}"
        );
        assert_eq!(shown_path(Path::new("/r/a\nb")), "/r/a\\nb");
        assert_eq!(
            shown_shortened("a\n::add-mask::x\r\u{1b}[2J", 100),
            "a\\n::add-mask::x\\r\\u{1b}[2J"
        );
        assert_eq!(shown_shortened("abcdef", 4), "abc…");
        assert_eq!(shown_shortened("café 🚀", 10), "café 🚀");
    }

    #[test]
    fn lists_read_as_words() {
        assert_eq!(and_list(&[]), "");
        assert_eq!(and_list(&["a"]), "a");
        assert_eq!(and_list(&["a", "b"]), "a and b");
        assert_eq!(and_list(&["a", "b", "c"]), "a, b and c");
    }

    #[test]
    fn shorten_counts_characters() {
        assert_eq!(shorten("abc", 3), "abc");
        assert_eq!(shorten("abcd", 3), "ab…");
        assert_eq!(shorten("µµµµ", 2), "µ…");
    }

    #[test]
    fn stop_commands_wrap_the_text() {
        let out = without_commands("::error::injected\n");
        let lines: Vec<&str> = out.lines().collect();
        let token = lines[0].strip_prefix("::stop-commands::").unwrap();
        assert_eq!(lines[1], "::error::injected");
        assert_eq!(lines[2], format!("::{token}::"));
        assert_ne!(random_token(), random_token());
        assert_eq!(random_token().len(), 32);
    }
}
