//! Numbers for people: durations in the largest unit that keeps them readable, with three
//! significant digits. `analysis.json` keeps integer nanoseconds; only the report rounds.

pub use nsys_gate_core::units::{
    bytes, duration, duration_i, fixed, in_unit, plus, positional, ratio, round_significant,
    significant, with_unit, CHANGE_DECIMALS, NBSP, UNITS,
};

/// The unit a set of durations is charted in: the largest one in which the largest value is
/// at least 1. Returns the unit's size in nanoseconds and its name.
pub fn chart_unit(max_ns: f64) -> (f64, &'static str) {
    for (scale, unit) in UNITS {
        if max_ns >= scale {
            return (scale, unit);
        }
    }
    (1.0, "ns")
}

/// The unit one table column shows its durations in: the unit of the column's largest value
/// (a column showing `9.51 ms` above `225 µs` misleads at a glance; `0.225 ms` does not).
#[derive(Debug, Clone, Copy)]
pub struct ColumnUnit {
    scale: f64,
    name: &'static str,
}

impl ColumnUnit {
    /// The unit for a column of these durations (non-finite ones ignored).
    pub fn of(values_ns: impl IntoIterator<Item = f64>) -> Self {
        let max = values_ns
            .into_iter()
            .filter(|v| v.is_finite())
            .map(f64::abs)
            .fold(0.0, f64::max);
        let (scale, name) = chart_unit(max);
        ColumnUnit { scale, name }
    }

    /// `ns` in this unit, three significant digits ([`in_unit`]); `n/a` when not finite.
    pub fn show(self, ns: f64) -> String {
        in_unit(ns, self.scale, self.name)
    }

    /// Two durations in this unit, the unit once: `0.641 → 0.692 ms` (a cell that never
    /// wraps: no-break spaces only); `n/a` for one that is not finite.
    pub fn show_pair(self, from_ns: f64, to_ns: f64) -> String {
        let number = |ns: f64| positional(ns / self.scale, 3, nsys_gate_core::units::DECIMALS);
        with_unit(
            format!("{}{NBSP}→{NBSP}{}", number(from_ns), number(to_ns)),
            self.name,
        )
    }

    /// A change in this unit, three significant digits and at most [`CHANGE_DECIMALS`]
    /// decimals (the column's resolution), `+` before a positive one: `+511 µs`, `-0.982 µs`,
    /// and `0 µs`, without a sign, for a change under the resolution.
    pub fn show_change(self, ns: f64) -> String {
        with_unit(
            plus(positional(ns / self.scale, 3, CHANGE_DECIMALS)),
            self.name,
        )
    }
}

/// The durations of one table column, all in one unit ([`ColumnUnit`]).
pub fn column(values_ns: &[f64]) -> Vec<String> {
    let unit = ColumnUnit::of(values_ns.iter().copied());
    values_ns.iter().map(|&v| unit.show(v)).collect()
}

/// A plain number for a chart axis: three significant digits, no unit.
pub fn chart_value(ns: f64, scale: f64) -> String {
    significant(ns / scale, 3)
}

/// A share such as `41.2 %` of `part / whole`; `n/a` when the whole is zero.
pub fn share_pct(part: f64, whole: f64) -> String {
    if whole <= 0.0 || !part.is_finite() || !whole.is_finite() {
        return "n/a".to_owned();
    }
    let p = 100.0 * part / whole;
    under_a_tenth(p).unwrap_or_else(|| with_unit(fixed(p, 1), "%"))
}

/// `under 0.1 %` for a share above 0 and under 0.1 %, which would read as `0.0 %`.
pub fn under_a_tenth(pct: f64) -> Option<String> {
    (pct > 0.0 && pct < 0.1).then(|| format!("under{NBSP}0.1{NBSP}%"))
}

/// `text` with its first letter upper-case.
pub fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

pub use nsys_gate_core::units::plural;

/// Items for prose: `a, b and c`, or past `max`, the first `max` and how many more.
pub fn index_list_words(items: &[String], max: usize) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        _ if items.len() > max => first_and_more(items.iter().cloned(), max),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// The first `max` items separated by commas (`a, b, c`) and, past `max`, how many more
/// (`a, b, c and 4 more`). Items past `max` are not made.
pub fn first_and_more(items: impl ExactSizeIterator<Item = String>, max: usize) -> String {
    let total = items.len();
    let shown: Vec<String> = items.take(max).collect();
    match total - shown.len() {
        0 => shown.join(", "),
        more => format!("{} and {more} more", shown.join(", ")),
    }
}

/// Iteration indexes for prose: `3, 4, 7` or, past `max`, `3, 4, 7, … (12 in all)`; runs of
/// consecutive indexes are written as ranges (`17-19`).
pub fn index_list(indexes: &[u64], max: usize) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < indexes.len() {
        let start = indexes[i];
        let mut end = start;
        while i + 1 < indexes.len() && indexes[i + 1] == end + 1 {
            i += 1;
            end = indexes[i];
        }
        parts.push(match end - start {
            0 => start.to_string(),
            1 => format!("{start}, {end}"),
            _ => format!("{start}-{end}"),
        });
        i += 1;
    }
    if parts.len() > max {
        let shown = parts[..max].join(", ");
        return format!("{shown}, … ({} in all)", indexes.len());
    }
    parts.join(", ")
}

/// `iteration 0` or `iterations 3, 5-9`.
pub fn iterations_named(indexes: &[u64]) -> String {
    format!(
        "{}\u{a0}{}",
        if indexes.len() == 1 {
            "iteration"
        } else {
            "iterations"
        },
        index_list(indexes, 20)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_use_the_largest_readable_unit_with_three_significant_digits() {
        let cases: &[(f64, &str)] = &[
            (0.0, "0 ns"),
            (1.0, "1 ns"),
            (12.0, "12 ns"),
            (999.0, "999 ns"),
            (12.5, "12.5 ns"),
            (0.5, "0.500 ns"),
            (1000.0, "1.00 µs"),
            (1234.0, "1.23 µs"),
            (12_345.0, "12.3 µs"),
            (123_456.0, "123 µs"),
            (999_499.0, "999 µs"),
            (999_700.0, "1.00 ms"),
            (2_612_345.0, "2.61 ms"),
            (2_605_000.5, "2.61 ms"),
            (10_000_000.0, "10.0 ms"),
            (999_999_999.0, "1.00 s"),
            (1_500_000_000.0, "1.50 s"),
            (999_600_000_000.0, "1000 s"),
            (1_234_000_000_000.0, "1234 s"),
            (-2_000.0, "-2.00 µs"),
            (9_996.0, "10.0 µs"),
        ];
        // A no-break space between number and unit, so that the two never wrap apart.
        for (ns, want) in cases {
            assert_eq!(duration(*ns), want.replace(' ', "\u{a0}"), "{ns} ns");
        }
        assert_eq!(duration(f64::NAN), "n/a");
        assert_eq!(duration_i(2_612_345), "2.61\u{a0}ms");
    }

    /// Also seen: `f64::MAX` printed as a 309-digit number, then as `1.80e299 s`, and float
    /// leftovers as `+5.59e-9 ns`. Every number is a few characters, never in exponent
    /// notation: tiny ones are `0`, absurdly large ones `n/a`.
    #[test]
    fn numbers_at_the_edge_of_f64_print_short() {
        for x in [
            f64::MAX,
            -f64::MAX,
            1e300,
            1e20,
            123_456_789_012.0,
            f64::MIN_POSITIVE,
            5e-324,
            5.59e-9,
        ] {
            for shown in [
                duration(x),
                significant(x, 3),
                ratio(x),
                column(&[x, 1.0])[0].clone(),
            ] {
                assert!(shown.chars().count() <= 16, "{x}: {shown}");
            }
        }
        assert_eq!(significant(1.234e20, 3), "n/a");
        assert_eq!(significant(1.234e14, 3), "123000000000000");
        assert_eq!(duration(f64::MAX), "n/a");
        assert_eq!(duration(f64::INFINITY), "n/a");
        assert_eq!(duration(5.59e-9), "0\u{a0}ns");
        assert_eq!(duration(-3.49e-10), "0\u{a0}ns");
        assert_eq!(duration(1e22), "10000000000000\u{a0}s");
        assert_eq!(significant(123_456.0, 3), "123000");
        assert_eq!(significant(3.4e-7, 3), "0");
        assert_eq!(significant(0.000_123_4, 3), "0.000123");
        assert_eq!(fixed(-0.04, 1), "0.0");
        assert_eq!(fixed(f64::NAN, 1), "n/a");
    }

    /// A column's resolution is a thousandth of its unit: a change under it is `0`, with no
    /// sign; a positive change has a `+`.
    #[test]
    fn changes_under_a_columns_resolution_are_zero() {
        let unit = ColumnUnit::of([1_500.0, 5.59e-9, -3.49e-10, -982.0]);
        let shown: Vec<String> = [1_500.0, 5.59e-9, -3.49e-10, -982.0, 0.4, 0.6]
            .iter()
            .map(|&ns| unit.show_change(ns))
            .collect();
        assert_eq!(
            shown,
            ["+1.50 µs", "0 µs", "0 µs", "-0.982 µs", "0 µs", "+0.001 µs"]
                .map(|s| s.replace(' ', "\u{a0}"))
        );
        assert_eq!(unit.show_change(f64::NAN), "n/a");
        // Values keep their three significant digits: only changes stop at the resolution.
        assert_eq!(unit.show(12.0), "0.0120\u{a0}µs");
        assert_eq!(unit.show(0.546), "0.000546\u{a0}µs");
    }

    #[test]
    fn significant_digits() {
        assert_eq!(significant(0.034_123, 3), "0.0341");
        assert_eq!(significant(2.6, 3), "2.60");
        assert_eq!(significant(123.4, 3), "123");
        assert_eq!(significant(9.996, 3), "10.0");
        assert_eq!(significant(12_345.0, 3), "12300");
        assert_eq!(ratio(2.3149), "2.31×");
        assert_eq!(share_pct(1.0, 3.0), "33.3\u{a0}%");
        assert_eq!(share_pct(1.0, 0.0), "n/a");
        assert_eq!(share_pct(1.0, 100_000.0), "under\u{a0}0.1\u{a0}%");
    }

    #[test]
    fn chart_units() {
        assert_eq!(chart_unit(2_600_000.0), (1e6, "ms"));
        assert_eq!(chart_unit(5.0), (1.0, "ns"));
        assert_eq!(chart_unit(0.0), (1.0, "ns"));
        assert_eq!(chart_value(2_612_345.0, 1e6), "2.61");
    }

    #[test]
    fn a_column_has_one_unit() {
        assert_eq!(
            column(&[9_510_000.0, 225_000.0, 0.0]),
            ["9.51\u{a0}ms", "0.225\u{a0}ms", "0\u{a0}ms"]
        );
        assert_eq!(column(&[]), Vec::<String>::new());
    }

    #[test]
    fn index_lists_collapse_runs() {
        assert_eq!(index_list(&[3, 4], 10), "3, 4");
        assert_eq!(index_list(&[17, 18, 19], 10), "17-19");
        assert_eq!(index_list(&[0, 2, 3, 4, 9], 10), "0, 2-4, 9");
        assert_eq!(index_list(&[0, 2, 4, 6], 2), "0, 2, … (4 in all)");
        assert_eq!(index_list(&[], 2), "");
    }
}
