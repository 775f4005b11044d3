//! The comparison's numbers and verdicts in words: percentages, the verdict of a measure as a
//! sentence, commits as short SHAs (linked when the forge is known).

pub use crate::escape::commit;
use crate::escape::{self, inline_shortened as esc};
use crate::format::{capitalized, duration, fixed, with_unit, NBSP};
use nsys_gate_core::artifact::comparison::{ChangeVerdict, ConditionName, Measure};

/// `12.3 %`, `0.4 %`: one decimal below 100 %, whole percent from 100 on; `n/a` for no
/// number.
pub fn pct(x: f64) -> String {
    let a = x.abs();
    with_unit(fixed(a, if a >= 100.0 { 0 } else { 1 }), "%")
}

/// `+1.2 %`, `-0.4 %`; `0.0 %` for no change; `n/a` for no number.
pub fn signed_pct(x: f64) -> String {
    if shows_as_zero(x) {
        return format!("0.0{NBSP}%");
    }
    let shown = pct(x);
    if shown == "n/a" {
        return shown;
    }
    let sign = if x < 0.0 { "-" } else { "+" };
    format!("{sign}{shown}")
}

/// How head compares with `runs` in words: `20.1 % slower than RUNS`, `3.0 % faster than
/// RUNS`, and for a change that rounds to 0.0 % `the same as RUNS (0.0 %)`: never "0.0 %
/// slower".
fn compared(change: f64, runs: &str) -> String {
    if shows_as_zero(change) {
        return format!("the same as {runs} (0.0{NBSP}%)");
    }
    if pct(change) == "n/a" {
        return format!("not comparable with {runs} (n/a)");
    }
    let direction = if change < 0.0 { "faster" } else { "slower" };
    format!("{} {direction} than {runs}", pct(change))
}

/// A change in percent that [`pct`] shows as `0.0 %`: no change, and no direction either.
fn shows_as_zero(x: f64) -> bool {
    format!("{:.1}", x.abs()) == "0.0"
}

/// Conditions that differ, as a clause: `device differs`, `device, data source differ`.
pub fn differ<S: AsRef<str>>(labels: &[S]) -> String {
    let labels: Vec<&str> = labels.iter().map(AsRef::as_ref).collect();
    format!(
        "{} {}",
        labels.join(", "),
        if labels.len() == 1 {
            "differs"
        } else {
            "differ"
        }
    )
}

/// `-1.9 % to +1.9 %`, with no-break spaces: a table cell never wraps inside it.
pub fn range_pct([lo, hi]: [f64; 2]) -> String {
    format!("{}{NBSP}to{NBSP}{}", signed_pct(lo), signed_pct(hi))
}

/// A condition as the report names it: its label, escaped (a `workload.KEY` or
/// `manifest.KEY` is the manifest's own key).
pub fn condition(name: &ConditionName) -> String {
    esc(&name.label(), 80)
}

/// A creation time as `2026-11-29 12:00` (UTC, as the forge gives it), or empty.
pub fn date(created_at: Option<&str>) -> String {
    created_at
        .filter(|t| {
            t.len() >= 16
                && t.is_char_boundary(16)
                && t[..16]
                    .chars()
                    .all(|c| c.is_ascii_digit() || matches!(c, '-' | ':' | 'T'))
        })
        .map(|t| t[..16].replace('T', " "))
        .unwrap_or_default()
}

/// The verdict of a measure as the report's words: what the change is and why it is, or is
/// not, a verdict. `runs` names the history (`the base branch's last 10 runs`).
pub fn sentence(m: &Measure, runs: &str, floor_pct: f64) -> String {
    let (Some(change), Some(verdict)) = (m.change_pct, m.verdict) else {
        return format!(
            "not compared: {}",
            escape::inline(m.note.as_deref().unwrap_or("no data"))
        );
    };
    let expected = m.interval_pct.map(|i| {
        format!(
            "a run of unchanged code lands within {} of their level (95 %)",
            range_pct(i)
        )
    });
    match (verdict, expected) {
        (ChangeVerdict::Slower | ChangeVerdict::Faster, Some(expected)) => format!(
            "head is **{} {}** than {runs}, beyond the run-to-run noise: {expected}",
            pct(change),
            verdict.as_str()
        ),
        (ChangeVerdict::WithinNoise, Some(expected)) => {
            let outside = m
                .interval_pct
                .is_some_and(|[lo, hi]| change < lo || change > hi);
            if outside {
                format!(
                    "within noise: head is {}, outside the run-to-run noise but under the noise floor of {}; {expected}",
                    compared(change, runs),
                    pct(floor_pct)
                )
            } else {
                format!(
                    "within noise: head is {}, within the run-to-run noise: {expected}",
                    compared(change, runs)
                )
            }
        }
        _ => format!(
            "head is {}, but **the run-to-run noise is unknown**: {}",
            compared(change, runs),
            escape::inline(&why_unknown(m.note.as_deref()))
        ),
    }
}

/// Why the noise is unknown, without what the sentence around it says already: the note's
/// own `the run-to-run noise is unknown`, and which run the head was compared with (`runs`
/// names it).
fn why_unknown(note: Option<&str>) -> String {
    let note = note.unwrap_or("too few base runs");
    let mut why = note
        .replace(": the run-to-run noise is unknown", "")
        .replace(
            " (compared with the newest base run, whose conditions differ)",
            "",
        );
    if why.trim().is_empty() {
        why = note.to_owned();
    }
    why
}

/// [`sentence`] as a paragraph: the measure's name first.
pub fn paragraph(m: &Measure, runs: &str, floor_pct: f64) -> String {
    let text = sentence(m, runs, floor_pct);
    format!("**{}:** {text}", capitalized(m.name.label()))
}

/// The history's level of a measure in words: `9.80-10.02 ms, run-to-run sd 0.8 %`.
pub fn spread(m: &Measure, floor_pct: Option<f64>) -> Option<String> {
    let b = m.base.as_ref()?;
    let range = if b.runs == 1 {
        duration(b.level_ns)
    } else {
        format!(
            "{}{NBSP}to{NBSP}{}",
            duration(b.minimum_ns),
            duration(b.maximum_ns)
        )
    };
    Some(match (b.spread_pct, floor_pct) {
        // Identical runs (sd 0.0 %) beside an interval of ±3 % read as a contradiction: the
        // spread judged with is the floor, named.
        (Some(sd), Some(floor)) if sd < floor => format!(
            "{range}, run-to-run sd {}, judged as {} (the least spread taken: runs that agree more closely are more likely copies of one run than a machine that quiet)",
            pct(sd),
            pct(floor)
        ),
        (Some(sd), _) => format!("{range}, run-to-run sd {}", pct(sd)),
        (None, _) => range,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_as_changes() {
        assert_eq!(signed_pct(4.04), "+4.0\u{a0}%");
        assert_eq!(signed_pct(-0.04), "0.0\u{a0}%");
        assert_eq!(signed_pct(-0.0), "0.0\u{a0}%");
        assert_eq!(signed_pct(-12.345), "-12.3\u{a0}%");
        assert_eq!(
            range_pct([-1.9, 1.9]),
            "-1.9\u{a0}%\u{a0}to\u{a0}+1.9\u{a0}%"
        );
        // `compare X X`: no change is no direction.
        assert_eq!(compared(0.0, "base"), "the same as base (0.0\u{a0}%)");
        assert_eq!(compared(-0.04, "base"), "the same as base (0.0\u{a0}%)");
        assert_eq!(compared(1.25, "base"), "1.2\u{a0}% slower than base");
        assert_eq!(compared(-3.0, "base"), "3.0\u{a0}% faster than base");
    }

    /// Every number the comment shows, whatever its magnitude (subnormal, negative, float
    /// leftovers of a few 1e-9, huge, infinite, NaN), is positional: never exponent notation,
    /// never `NaN` or `inf`, and a few characters long.
    mod numbers {
        use super::super::*;
        use crate::format::{
            bytes, column, duration, duration_i, fixed, ratio, share_pct, significant, ColumnUnit,
        };
        use proptest::prelude::*;

        /// Any f64, with the magnitudes that broke the comment before over-represented.
        fn any_number() -> impl Strategy<Value = f64> {
            prop_oneof![
                proptest::num::f64::ANY,
                (-1e3..1e3f64).prop_map(|x| x * 1e-9),
                (-1e3..1e3f64).prop_map(|x| x * 1e-300),
                (-1e3..1e3f64).prop_map(|x| x * 1e12),
                Just(5e-324),
                Just(-0.0),
                Just(f64::MAX),
                Just(f64::NAN),
                Just(f64::NEG_INFINITY),
            ]
        }

        fn check(shown: &str) -> Result<(), TestCaseError> {
            let chars: Vec<char> = shown.chars().collect();
            for w in chars.windows(2) {
                prop_assert!(
                    !(w[0].is_ascii_digit() && matches!(w[1], 'e' | 'E')),
                    "exponent notation: {shown:?}"
                );
            }
            let lower = shown.to_lowercase();
            prop_assert!(!lower.contains("nan"), "NaN: {shown:?}");
            prop_assert!(!lower.contains("inf"), "infinity: {shown:?}");
            // One word: nothing a table cell could wrap at (no-break spaces only, a minus
            // sign only in front).
            prop_assert!(chars.len() <= 24, "long: {shown:?}");
            prop_assert!(
                !chars.iter().skip(1).any(|&c| c == '-' || c == ' '),
                "a break inside: {shown:?}"
            );
            Ok(())
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(4000))]

            #[test]
            fn every_number_for_people_is_positional(x in any_number(), y in any_number()) {
                let unit = ColumnUnit::of([x, y]);
                for shown in [
                    duration(x),
                    duration_i(x as i64),
                    significant(x, 2),
                    significant(x, 3),
                    fixed(x, 1),
                    ratio(x),
                    share_pct(x, y),
                    bytes(x.abs() as u64),
                    unit.show(x),
                    unit.show_change(y),
                    column(&[x, y])[1].clone(),
                    pct(x),
                    signed_pct(y),
                ] {
                    check(&shown)?;
                }
                for shown in range_pct([x, y]).split("\u{a0}to\u{a0}") {
                    check(shown)?;
                }
                for shown in unit.show_pair(x, y).split("\u{a0}→\u{a0}") {
                    check(shown)?;
                }
            }
        }
    }

    /// Issue 30, item 8: the sentence of an unknown noise said it twice (`the run-to-run noise
    /// is unknown: 1 usable base run with a value: the run-to-run noise is unknown`).
    #[test]
    fn an_unknown_noise_is_said_once() {
        let m = Measure {
            name: nsys_gate_core::artifact::comparison::MeasureName::HostInclusive,
            base: None,
            head: None,
            change_pct: Some(16.7),
            interval_pct: None,
            p_value: None,
            verdict: Some(ChangeVerdict::NoiseUnknown),
            within_pair: None,
            note: Some(
                "1 usable base run with a value: the run-to-run noise is unknown (3 needed)"
                    .to_owned(),
            ),
            detectable_pct: None,
        };
        let text = sentence(&m, "the last base run", 1.0);
        assert_eq!(text.matches("noise is unknown").count(), 1, "{text}");
        assert!(
            text.ends_with(
                "**the run-to-run noise is unknown**: 1 usable base run with a value (3 needed)"
            ),
            "{text}"
        );
        let other = Measure {
            note: Some("no base run has the head's conditions (compared with the newest base run, whose conditions differ)".to_owned()),
            ..m
        };
        let text = sentence(&other, "the newest base run (other conditions)", 1.0);
        assert_eq!(text.matches("newest base run").count(), 1, "{text}");
        assert!(
            text.ends_with(": no base run has the head's conditions"),
            "{text}"
        );
    }

    #[test]
    fn commits_are_short_and_linked_when_they_can_be() {
        let sha = "0123456789abcdef0123456789abcdef01234567";
        assert_eq!(commit(Some(sha), None), "`0123456`");
        assert_eq!(
            commit(Some(sha), Some("https://github.com/o/r/commit/")),
            format!("[`0123456`](https://github.com/o/r/commit/{sha})")
        );
        assert_eq!(commit(Some("@evil #1"), None), "@\u{200B}evil #\u{200B}1");
        assert_eq!(commit(None, None), "not recorded");
        assert_eq!(date(Some("2026-11-29T12:00:07Z")), "2026-11-29 12:00");
        assert_eq!(date(Some("<b>")), "");
    }
}
