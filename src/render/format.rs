//! Numbers for people: durations in the largest unit that keeps them readable, with three
//! significant digits. `analysis.json` keeps integer nanoseconds; only the report rounds.

/// Units from the largest down: seconds, milliseconds, microseconds, nanoseconds.
const UNITS: [(f64, &str); 4] = [(1e9, "s"), (1e6, "ms"), (1e3, "µs"), (1.0, "ns")];

/// A duration given in nanoseconds, in the largest unit in which it is at least 1, with three
/// significant digits: `2.61 ms`, `950 µs`, `12 ns`, `1.00 s`. Whole nanoseconds below 1 µs
/// are shown as they are (`12 ns`, not `12.0 ns`). Seconds are the largest unit: `1234 s`.
pub fn duration(ns: f64) -> String {
    if !ns.is_finite() {
        return "n/a".to_owned();
    }
    if ns == 0.0 {
        return "0 ns".to_owned();
    }
    let sign = if ns < 0.0 { "-" } else { "" };
    let v = ns.abs();
    if v < 1000.0 && v.fract() == 0.0 {
        return format!("{sign}{v} ns");
    }
    for (i, (scale, unit)) in UNITS.iter().enumerate() {
        if v >= *scale || i == UNITS.len() - 1 {
            let x = round_significant(v / scale, 3);
            // 999.7 µs rounds to 1000 µs: that is 1.00 ms.
            if x >= 1000.0 && i > 0 {
                let (bigger, bigger_unit) = UNITS[i - 1];
                return format!("{sign}{} {bigger_unit}", significant(v / bigger, 3));
            }
            if x >= 1000.0 {
                return format!("{sign}{:.0} {unit}", v / scale);
            }
            return format!("{sign}{} {unit}", significant(v / scale, 3));
        }
    }
    unreachable!("the last unit always matches")
}

/// An integer number of nanoseconds; see [`duration`].
pub fn duration_i(ns: i64) -> String {
    duration(ns as f64)
}

/// `x` with `digits` significant digits, trailing zeros kept (`2.60`, `0.0341`, `123`).
/// Values of 10^digits and over are shown as whole numbers.
pub fn significant(x: f64, digits: u32) -> String {
    if !x.is_finite() {
        return "n/a".to_owned();
    }
    if x == 0.0 {
        return "0".to_owned();
    }
    let r = round_significant(x, digits);
    let magnitude = r.abs().log10().floor() as i32;
    let decimals = (digits as i32 - 1 - magnitude).max(0) as usize;
    format!("{r:.decimals$}")
}

fn round_significant(x: f64, digits: u32) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    let magnitude = x.abs().log10().floor() as i32;
    let factor = 10f64.powi(digits as i32 - 1 - magnitude);
    let r = (x * factor).round() / factor;
    // Rounding may add a digit (9.996 -> 10.0): round again at the new magnitude.
    if r.abs().log10().floor() as i32 != magnitude {
        let factor = 10f64.powi(digits as i32 - 2 - magnitude);
        return (x * factor).round() / factor;
    }
    r
}

/// A size in bytes with three significant digits in the largest binary unit in which it is
/// at least 1: `512 B`, `48.0 KiB`, `4.00 MiB`.
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut v = n as f64;
    let mut unit = "B";
    for u in UNITS {
        if v < 1024.0 {
            break;
        }
        v /= 1024.0;
        unit = u;
    }
    format!("{} {unit}", significant(v, 3))
}

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

/// A plain number for a chart axis: three significant digits, no unit.
pub fn chart_value(ns: f64, scale: f64) -> String {
    significant(ns / scale, 3)
}

/// A ratio such as `2.31×`.
pub fn ratio(x: f64) -> String {
    format!("{}×", significant(x, 3))
}

/// A share such as `41.2 %` of `part / whole`; `n/a` when the whole is zero.
pub fn percent(part: f64, whole: f64) -> String {
    if whole <= 0.0 || !part.is_finite() || !whole.is_finite() {
        return "n/a".to_owned();
    }
    let p = 100.0 * part / whole;
    if p > 0.0 && p < 0.1 {
        return "under 0.1 %".to_owned();
    }
    format!("{p:.1} %")
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
        for (ns, want) in cases {
            assert_eq!(duration(*ns), *want, "{ns} ns");
        }
        assert_eq!(duration(f64::NAN), "n/a");
        assert_eq!(duration_i(2_612_345), "2.61 ms");
    }

    #[test]
    fn significant_digits() {
        assert_eq!(significant(0.034_123, 3), "0.0341");
        assert_eq!(significant(2.6, 3), "2.60");
        assert_eq!(significant(123.4, 3), "123");
        assert_eq!(significant(9.996, 3), "10.0");
        assert_eq!(significant(12_345.0, 3), "12300");
        assert_eq!(ratio(2.3149), "2.31×");
        assert_eq!(percent(1.0, 3.0), "33.3 %");
        assert_eq!(percent(1.0, 0.0), "n/a");
        assert_eq!(percent(1.0, 100_000.0), "under 0.1 %");
    }

    #[test]
    fn chart_units() {
        assert_eq!(chart_unit(2_600_000.0), (1e6, "ms"));
        assert_eq!(chart_unit(5.0), (1.0, "ns"));
        assert_eq!(chart_unit(0.0), (1.0, "ns"));
        assert_eq!(chart_value(2_612_345.0, 1e6), "2.61");
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
