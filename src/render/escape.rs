//! Untrusted text (range names, manifest strings, paths, nsys's words) made safe for the
//! markdown GitHub renders.
//!
//! [`inline`] is the one escaping function for text inside a line: a table cell, a list item,
//! a heading or a paragraph. Its output
//!
//! - holds no line break: `\n` is shown as `␤`, other control characters as their Unicode
//!   control pictures (`␍`, `␉`, `␛`), so a name cannot end a table row or start a new block;
//! - cannot break a table: `|` becomes `\|` (GFM allows the escape inside cells);
//! - cannot open HTML, a comment or an entity: `<`, `>` and `&` become `&lt;`, `&gt;`, `&amp;`;
//! - cannot start a code span or fence, emphasis, strike-through, a link, an image, math or a
//!   footnote: `` ` `` `\` `*` `_` `[` `]` `!` `~` `$` are backslash-escaped;
//! - cannot mention a user or team: a zero-width space (U+200B) follows every `@`. GitHub
//!   finds mentions in the rendered text, after markdown escapes are gone, so a backslash would
//!   not help; the zero-width space is invisible and keeps the name readable (wrapping it in a
//!   code span would also work, but changes how every name looks);
//! - cannot link an issue or pull request: a zero-width space follows every `#` (`#123`,
//!   `owner/repo#123`) and the `-` of `GH-123`, and the `:` of `://` and the `www` of `www.`
//!   (so no URL is auto-linked either);
//! - cannot start a block when it begins a line or a list item: a leading `-`, `+`, `=` or the
//!   `.`/`)` of a leading `1.` is escaped, and leading spaces become `&#32;`;
//! - has no bidirectional-override characters (they can reorder what a reader sees): they
//!   become U+FFFD.
//!
//! Everything else, including CJK, emoji and combining accents, is kept as it is.
//!
//! [`code_block`] shows longer text (an error message with nsys's words) as an indented code
//! block, in which nothing is interpreted and which no line of the text can close.

use crate::text::{shorten, ZWSP};

/// Escapes untrusted text for use inside one line of markdown. See the module documentation.
pub fn inline(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len() + text.len() / 4 + 8);
    let leading_list_marker = ordered_list_marker(&chars);
    let mut at_start = true;
    for (i, &c) in chars.iter().enumerate() {
        if at_start && c == ' ' {
            out.push_str("&#32;");
            continue;
        }
        let first = at_start;
        at_start = false;
        match c {
            '\n' => out.push('\u{2424}'),
            '\u{7f}' => out.push('\u{2421}'),
            c if (c as u32) < 0x20 => {
                out.push(char::from_u32(0x2400 + c as u32).unwrap_or('\u{FFFD}'));
            }
            '\u{80}'..='\u{9f}' => out.push('\u{FFFD}'),
            c if is_bidi_control(c) => out.push('\u{FFFD}'),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '~' | '$' | '!' => {
                out.push('\\');
                out.push(c);
            }
            '#' if first => {
                out.push_str("\\#");
                out.push(ZWSP);
            }
            '@' | '#' => {
                out.push(c);
                out.push(ZWSP);
            }
            '-' | '+' | '=' if first => {
                out.push('\\');
                out.push(c);
            }
            '.' | ')' if leading_list_marker == Some(i) => {
                out.push('\\');
                out.push(c);
            }
            '-' if preceded_by_ignore_case(&chars, i, "gh")
                && chars.get(i + 1).is_some_and(char::is_ascii_digit) =>
            {
                out.push(c);
                out.push(ZWSP);
            }
            ':' if chars.get(i + 1) == Some(&'/') && chars.get(i + 2) == Some(&'/') => {
                out.push(c);
                out.push(ZWSP);
            }
            '.' if preceded_by_ignore_case(&chars, i, "www") => {
                out.push(ZWSP);
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// A warning code or other identifier as a code span when it is a plain identifier
/// (`[A-Za-z0-9_.-]`), else as [`inline`] text.
pub fn code(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
    if plain {
        format!("`{text}`")
    } else {
        inline(text)
    }
}

/// Any one-line text as a code span (a pattern, a path): shown as written, nothing in it
/// interpreted (no link, mention, emphasis or HTML). Text with a backtick, a line break, a `|`
/// (which splits a table cell even inside a code span), or a `<`, `@`, `#` or `://` (inert in
/// a code span, but kept out of the markdown altogether, as everywhere else), or a character
/// that no escape lets through ([`is_hidden`]: control and bidirectional-override
/// characters, which a code span shows as they act) is escaped as any text instead.
pub fn code_span(text: &str) -> String {
    if text.is_empty()
        || text.contains(['`', '\n', '\r', '<', '|', '@', '#'])
        || text.contains("://")
        || text.chars().any(is_hidden)
    {
        return inline(text);
    }
    format!("`{text}`")
}

/// A message nsys-gate wrote, with names from the trace or manifest in it: its `backticked`
/// parts become code spans when they are plain identifiers (through [`code`]), everything
/// else is escaped as any text. At most `max_chars` characters (counted before escaping).
/// A message with unbalanced backticks is escaped whole.
pub fn message(text: &str, max_chars: usize) -> String {
    let text = shorten(text, max_chars);
    let parts: Vec<&str> = text.split('`').collect();
    if parts.len().is_multiple_of(2) {
        return inline(&text);
    }
    parts
        .iter()
        .enumerate()
        .map(|(i, part)| if i % 2 == 1 { code(part) } else { inline(part) })
        .collect()
}

/// [`inline`] of at most `max_chars` characters of `text` (counted before escaping); a
/// shortened text ends with `…`.
pub fn inline_shortened(text: &str, max_chars: usize) -> String {
    inline(&shorten(text, max_chars))
}

/// Untrusted multi-line text as an indented code block (each line indented by four spaces),
/// to be placed after a blank line. Nothing inside is interpreted, no line can end the block,
/// and control characters other than tabs are shown as control pictures.
pub fn code_block(text: &str) -> String {
    let text = text.replace("\r\n", "\n");
    let mut out = String::with_capacity(text.len() + 16);
    for line in text.trim_end_matches('\n').split('\n') {
        out.push_str("    ");
        for c in line.chars() {
            match c {
                '\t' => out.push(c),
                '\u{7f}' => out.push('\u{2421}'),
                c if (c as u32) < 0x20 => {
                    out.push(char::from_u32(0x2400 + c as u32).unwrap_or('\u{FFFD}'));
                }
                '\u{80}'..='\u{9f}' => out.push('\u{FFFD}'),
                c if is_bidi_control(c) => out.push('\u{FFFD}'),
                c => out.push(c),
            }
        }
        out.push('\n');
    }
    out
}

/// The one rule of every escape here, whatever the kind of span: a character that acts
/// instead of showing (a control character, or a bidirectional override, which reorders
/// what a reader sees) never reaches the markdown as it is. [`inline`] and [`code_block`]
/// show each as a control picture or U+FFFD; [`code_span`] and [`code`] leave such text to
/// [`inline`].
fn is_hidden(c: char) -> bool {
    c.is_control() || is_bidi_control(c)
}

fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// Index of the `.` or `)` of a leading ordered-list marker (`12.` / `3)`), if any.
fn ordered_list_marker(chars: &[char]) -> Option<usize> {
    let start = chars.iter().take_while(|c| **c == ' ').count();
    let digits = chars[start..]
        .iter()
        .take_while(|c| c.is_ascii_digit())
        .count();
    if digits == 0 || digits > 9 {
        return None;
    }
    let i = start + digits;
    let marker = matches!(chars.get(i), Some('.' | ')'));
    let then_space = matches!(chars.get(i + 1), None | Some(' ' | '\t'));
    (marker && then_space).then_some(i)
}

fn preceded_by_ignore_case(chars: &[char], i: usize, word: &str) -> bool {
    let n = word.chars().count();
    i >= n
        && chars[i - n..i]
            .iter()
            .zip(word.chars())
            .all(|(a, b)| a.eq_ignore_ascii_case(&b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn code_spans_hold_any_one_line_text() {
        assert_eq!(
            code_span("^token_(\\d+)_processing$"),
            "`^token_(\\d+)_processing$`"
        );
        assert_eq!(code_span("a x"), "`a x`");
        assert_eq!(code_span("a @x"), inline("a @x"));
        assert_eq!(code_span("a|b"), inline("a|b"));
        assert_eq!(code_span("<b>"), inline("<b>"));
        assert_eq!(code_span("a`b"), inline("a`b"));
        assert_eq!(code_span("a\nb"), inline("a\nb"));
        // Issue item 4: an iteration pattern holding U+202E and U+202C.
        assert!(!code_span("^iteration\u{202E} (\\d+)\u{202C}$").contains('\u{202E}'));
    }

    #[test]
    fn messages_show_plain_identifiers_as_code_and_escape_the_rest() {
        assert_eq!(
            message("a folder named `20261129T120000Z`, this one `runs`", 200),
            "a folder named `20261129T120000Z`, this one `runs`"
        );
        // Not an identifier: escaped text, no code span that the name could end.
        assert_eq!(message("named `a`b` here", 200), inline("named `a`b` here"));
        assert_eq!(message("named `<b> @x`", 200), "named &lt;b&gt; @\u{200B}x");
    }

    #[test]
    fn examples() {
        assert_eq!(inline("preprocessing.resize"), "preprocessing.resize");
        assert_eq!(inline("a|b"), "a\\|b");
        assert_eq!(inline("<script>&"), "&lt;script&gt;&amp;");
        assert_eq!(inline("cc @octocat"), "cc @\u{200B}octocat");
        assert_eq!(inline("fixes #12"), "fixes #\u{200B}12");
        assert_eq!(inline("o/r#1"), "o/r#\u{200B}1");
        assert_eq!(inline("GH-123"), "GH-\u{200B}123");
        assert_eq!(inline("gh-1 a-1"), "gh-\u{200B}1 a-1");
        assert_eq!(inline("```rust"), "\\`\\`\\`rust");
        assert_eq!(inline("line\nbreak\r"), "line\u{2424}break\u{240D}");
        assert_eq!(inline("- item"), "\\- item");
        assert_eq!(inline("1. first"), "1\\. first");
        assert_eq!(inline("12)"), "12\\)");
        assert_eq!(inline("2024.2.3"), "2024.2.3");
        assert_eq!(inline("  x"), "&#32;&#32;x");
        assert_eq!(inline("a - b"), "a - b");
        assert_eq!(inline("see https://x.y"), "see https:\u{200B}//x.y");
        assert_eq!(inline("www.x.y"), "www\u{200B}.x.y");
        assert_eq!(
            inline("**b** _i_ [l](u) ![i](u) ~s~ $m$ \\"),
            "\\*\\*b\\*\\* \\_i\\_ \\[l\\](u) \\!\\[i\\](u) \\~s\\~ \\$m\\$ \\\\"
        );
        assert_eq!(inline("a\u{202E}b"), "a\u{FFFD}b");
        assert_eq!(inline("日本語 🎉 e\u{301}"), "日本語 🎉 e\u{301}");
        assert_eq!(inline("\u{1b}[31m"), "\u{241B}\\[31m");
    }

    #[test]
    fn shortening_counts_characters() {
        assert_eq!(shorten("abcdef", 4), "abc…");
        assert_eq!(shorten("abc", 4), "abc");
        assert_eq!(shorten("日本語です", 3), "日本…");
        assert_eq!(inline_shortened("@@@@@@", 3), "@\u{200B}@\u{200B}…");
    }

    #[test]
    fn code_blocks_cannot_be_closed() {
        let block = code_block("line 1\r\n```\n</details>\n\u{1b}[0m\n");
        assert_eq!(
            block,
            "    line 1\n    ```\n    </details>\n    \u{241B}[0m\n"
        );
    }

    /// Whether the `|` at byte `at` is escaped: an odd number of backslashes before it.
    fn escaped_at(s: &str, at: usize) -> bool {
        s[..at].chars().rev().take_while(|c| *c == '\\').count() % 2 == 1
    }

    fn check_inline(text: &str) -> Result<(), TestCaseError> {
        let out = inline(text);
        prop_assert!(
            !out.contains('\n') && !out.contains('\r'),
            "line break in {out:?}"
        );
        prop_assert!(
            !out.contains('<') && !out.contains('>'),
            "raw angle bracket in {out:?}"
        );
        for (at, _) in out.match_indices('|') {
            prop_assert!(escaped_at(&out, at), "unescaped | in {out:?}");
        }
        for (at, _) in out.match_indices('`') {
            prop_assert!(escaped_at(&out, at), "unescaped ` in {out:?}");
        }
        prop_assert!(!out.contains("```"), "fence in {out:?}");
        let chars: Vec<char> = out.chars().collect();
        for w in chars.windows(2) {
            if w[0] == '@' {
                prop_assert!(!w[1].is_ascii_alphanumeric(), "mention in {out:?}");
            }
        }
        for (at, _) in out.match_indices('#') {
            // `&#32;` is an entity (a leading space), not text with a `#`.
            let entity = out[..at].ends_with('&');
            let next = out[at + 1..].chars().next();
            prop_assert!(
                entity || !next.is_some_and(|c| c.is_ascii_digit()),
                "issue reference in {out:?}"
            );
        }
        prop_assert!(!out.contains("://"), "URL in {out:?}");
        let lower = out.to_ascii_lowercase();
        for (at, _) in lower.match_indices("gh-") {
            let next = lower[at + 3..].chars().next();
            prop_assert!(
                !next.is_some_and(|c| c.is_ascii_digit()),
                "GH- reference in {out:?}"
            );
        }
        // A line that starts with the text starts no block.
        let first = out.chars().next();
        prop_assert!(
            !matches!(
                first,
                Some('-' | '+' | '=' | '#' | '>' | ' ' | '*' | '`' | '~')
            ),
            "block start in {out:?}"
        );
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn arbitrary_text_stays_inline_and_inert(text in ".{0,40}") {
            check_inline(&text)?;
        }

        #[test]
        fn markdown_heavy_text_stays_inline_and_inert(
            text in proptest::collection::vec(
                prop_oneof![
                    Just("|"), Just("`"), Just("```"), Just("<"), Just(">"), Just("&"), Just("@"),
                    Just("#"), Just("1"), Just("gh-"), Just("GH-"), Just(":"), Just("//"),
                    Just("www."), Just("\n"), Just("\r"), Just(" "), Just("-"), Just("\\"),
                    Just("a"), Just("<details>"), Just("<!--"), Just("1."), Just("\u{202E}"),
                ],
                0..30,
            ).prop_map(|parts| parts.concat())
        ) {
            check_inline(&text)?;
        }

        /// One rule for every kind of span (issue item 4: code spans lacked it): no
        /// escape lets a bidirectional-override character through.
        #[test]
        fn no_escape_lets_a_bidi_control_through(
            text in proptest::collection::vec(
                prop_oneof![
                    Just("a"), Just(" "), Just("^x (\\d+)$"), Just("runs/"), Just("`"),
                    Just("\u{202E}"), Just("\u{202C}"), Just("\u{2066}"), Just("\u{2069}"),
                    Just("\u{200F}"), Just("\u{061C}"), Just("\u{202A}"),
                ],
                0..12,
            ).prop_map(|parts| parts.concat())
        ) {
            for (kind, out) in [
                ("inline", inline(&text)),
                ("code", code(&text)),
                ("code_span", code_span(&text)),
                ("message", message(&text, 200)),
                ("message with a span", message(&format!("see `{text}`"), 200)),
                ("code_block", code_block(&text)),
            ] {
                prop_assert!(
                    !out.chars().any(is_bidi_control),
                    "{kind} of {text:?} gave {out:?}"
                );
            }
        }

        #[test]
        fn code_blocks_stay_code(text in ".{0,80}") {
            let block = code_block(&text);
            for line in block.lines() {
                prop_assert!(line.starts_with("    "), "line {line:?} of {block:?}");
            }
        }
    }
}
