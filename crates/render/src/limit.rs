//! Size limits: a report rendered within a [`Budget`] the caller gives (the forge's comment
//! limit, what is left of a step summary).
//!
//! A report that is too long is shrunk in steps ([`Caps::ladder`]): first the per-iteration
//! tables and the chart (collapsed detail), then the range tables, then long messages and
//! names. Every table that lost rows says how many and where the full data is (each run's
//! analysis.json). Only when the smallest step is still too long (say, hundreds of run
//! directories) is the text cut ([`cut`]): at a line boundary, never before the first line (the
//! marker), closing any open code fence and `<details>`, with a last line saying so.

use nsys_gate_core::units::thousands;

/// A size limit: characters (comments) or bytes (step summaries).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Budget {
    Chars(usize),
    Bytes(usize),
}

impl Budget {
    pub fn measure(self, text: &str) -> usize {
        match self {
            Budget::Chars(_) => text.chars().count(),
            Budget::Bytes(_) => text.len(),
        }
    }

    pub fn max(self) -> usize {
        match self {
            Budget::Chars(n) | Budget::Bytes(n) => n,
        }
    }

    pub fn fits(self, text: &str) -> bool {
        self.measure(text) <= self.max()
    }

    /// For people: `65,536 characters`, `1,048,576 bytes`.
    pub fn describe(self) -> String {
        match self {
            Budget::Chars(n) => format!("{} characters", thousands(n)),
            Budget::Bytes(n) => format!("{} bytes", thousands(n)),
        }
    }
}

/// How much of each table the report shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caps {
    /// Rows of each range table.
    pub top: usize,
    /// Rows of each per-iteration table.
    pub iterations: usize,
    /// Points of each per-iteration chart.
    pub chart_points: usize,
    /// Characters of a warning message or an error text.
    pub message_chars: usize,
    /// Characters of a range name, profile name, path or other manifest string.
    pub name_chars: usize,
    /// Warnings listed per run directory.
    pub warnings: usize,
}

impl Caps {
    /// The full report: `top` rows per range table, every iteration, long texts kept.
    pub fn full(top: usize) -> Self {
        Caps {
            top,
            iterations: usize::MAX,
            chart_points: 200,
            message_chars: 2000,
            name_chars: 200,
            warnings: 100,
        }
    }

    /// From the full report to the smallest one, each step smaller than the one before.
    pub fn ladder(top: usize) -> Vec<Caps> {
        let full = Caps::full(top);
        let mut steps = vec![full];
        let mut push = |f: &dyn Fn(&mut Caps)| {
            let mut next = *steps.last().expect("non-empty");
            f(&mut next);
            if next != *steps.last().expect("non-empty") {
                steps.push(next);
            }
        };
        push(&|c| c.iterations = 1000);
        push(&|c| c.iterations = 200);
        push(&|c| {
            c.iterations = 50;
            c.chart_points = 100;
        });
        push(&|c| {
            c.iterations = 10;
            c.chart_points = 50;
        });
        push(&|c| {
            c.iterations = 0;
            c.chart_points = 0;
        });
        push(&|c| c.top = c.top.min(5));
        push(&|c| {
            c.top = c.top.min(3);
            c.message_chars = 500;
            c.name_chars = 100;
        });
        push(&|c| {
            c.top = c.top.min(1);
            c.message_chars = 200;
            c.name_chars = 60;
            c.warnings = 20;
        });
        push(&|c| {
            c.top = 0;
            c.message_chars = 120;
            c.name_chars = 40;
            c.warnings = 5;
        });
        steps
    }
}

/// `text` cut to fit `budget`: whole lines up to the limit (at least the first line), then
/// whatever closes an open code fence and open `<details>` sections, then `notice`.
pub fn cut(text: &str, budget: Budget, notice: &str) -> String {
    if budget.fits(text) {
        return text.to_owned();
    }
    let notice_size = budget.measure(notice) + 2;
    let mut kept = String::new();
    let mut kept_size = 0;
    let mut state = Blocks::default();
    for (n, line) in text.split_inclusive('\n').enumerate() {
        let mut next_state = state.clone();
        next_state.feed(line);
        let size = budget.measure(line);
        let closers = next_state.closers();
        if n > 0 && kept_size + size + budget.measure(&closers) + notice_size > budget.max() {
            break;
        }
        kept.push_str(line);
        kept_size += size;
        state = next_state;
    }
    if !kept.ends_with('\n') {
        kept.push('\n');
    }
    kept.push_str(&state.closers());
    kept.push('\n');
    kept.push_str(notice);
    if !kept.ends_with('\n') {
        kept.push('\n');
    }
    kept
}

/// Open code fence and `<details>` sections at a point of the text.
#[derive(Debug, Clone, Default)]
struct Blocks {
    /// The opening fence (its character and length) while inside a fenced code block.
    fence: Option<(char, usize)>,
    details: usize,
}

impl Blocks {
    fn feed(&mut self, line: &str) {
        let trimmed = line.trim_start_matches(' ');
        if line.len() - trimmed.len() >= 4 {
            // An indented code line (or a fence's content): neither opens nor closes anything.
            return;
        }
        let run = |c: char| trimmed.chars().take_while(|x| *x == c).count();
        if let Some((c, len)) = self.fence {
            if run(c) >= len && trimmed.trim_start_matches(c).trim().is_empty() {
                self.fence = None;
            }
            return;
        }
        for c in ['`', '~'] {
            if run(c) >= 3 {
                self.fence = Some((c, run(c)));
                return;
            }
        }
        let lower = trimmed.to_ascii_lowercase();
        self.details += lower.matches("<details").count();
        self.details = self
            .details
            .saturating_sub(lower.matches("</details>").count());
    }

    fn closers(&self) -> String {
        let mut s = String::new();
        if let Some((c, len)) = self.fence {
            s.extend(std::iter::repeat_n(c, len));
            s.push('\n');
        }
        for _ in 0..self.details {
            s.push_str("\n</details>\n");
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ladder_only_shrinks() {
        let steps = Caps::ladder(10);
        assert_eq!(steps[0], Caps::full(10));
        for w in steps.windows(2) {
            let (a, b) = (w[0], w[1]);
            assert!(
                b.top <= a.top && b.iterations <= a.iterations && b.chart_points <= a.chart_points
            );
            assert!(b.message_chars <= a.message_chars && b.name_chars <= a.name_chars);
            assert_ne!(a, b);
        }
        let last = steps.last().unwrap();
        assert_eq!((last.top, last.iterations, last.chart_points), (0, 0, 0));
    }

    #[test]
    fn budgets_count_characters_or_bytes() {
        assert_eq!(Budget::Chars(10).measure("µs"), 2);
        assert_eq!(Budget::Bytes(10).measure("µs"), 3);
        assert_eq!(Budget::Chars(65_536).describe(), "65,536 characters");
        assert_eq!(Budget::Bytes(1024 * 1024).describe(), "1,048,576 bytes");
    }

    #[test]
    fn a_cut_keeps_the_first_line_and_closes_what_is_open() {
        let mut text = String::from("<!-- marker -->\n# Title\n<details>\n\n```mermaid\n");
        for i in 0..1000 {
            text.push_str(&format!("line {i}\n"));
        }
        text.push_str("```\n\n</details>\n");
        let out = cut(&text, Budget::Chars(300), "*cut*");
        assert!(out.chars().count() <= 300, "{}", out.chars().count());
        assert!(out.starts_with("<!-- marker -->\n# Title\n"));
        assert!(out.ends_with("```\n\n</details>\n\n*cut*\n"), "{out}");
        // Indented code is not markup.
        let text = format!("first\n<details>\n\n    </details>\n{}", "x\n".repeat(100));
        assert!(cut(&text, Budget::Chars(60), "c").contains("x\n\n</details>\n\nc\n"));
        // Short enough: unchanged.
        assert_eq!(cut("a\nb\n", Budget::Chars(10), "*cut*"), "a\nb\n");
    }

    #[test]
    fn a_cut_outside_blocks_adds_no_closers() {
        let text = "first\n".repeat(100);
        let out = cut(&text, Budget::Bytes(50), "cut");
        assert!(out.len() <= 50);
        assert!(out.ends_with("first\n\ncut\n"), "{out:?}");
    }
}
