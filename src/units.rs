//! Numbers for people: durations in the largest unit that keeps them readable, with three
//! significant digits, a no-break space between a number and its unit (so that `2.61 ms`
//! never wraps between the two). Used by the report and by warning messages; analysis.json
//! itself keeps integer nanoseconds.

/// Between a number and its unit: a no-break space.
pub const NBSP: char = '\u{a0}';

/// Units from the largest down: seconds, milliseconds, microseconds, nanoseconds.
pub const UNITS: [(f64, &str); 4] = [(1e9, "s"), (1e6, "ms"), (1e3, "µs"), (1.0, "ns")];

/// A duration given in nanoseconds, in the largest unit in which it is at least 1, with three
/// significant digits: `2.61 ms`, `950 µs`, `12 ns`, `1.00 s`. Whole nanoseconds below 1 µs
/// are shown as they are (`12 ns`, not `12.0 ns`). Seconds are the largest unit: `1234 s`.
pub fn duration(ns: f64) -> String {
    if !ns.is_finite() {
        return "n/a".to_owned();
    }
    if ns == 0.0 {
        return format!("0{NBSP}ns");
    }
    let sign = if ns < 0.0 { "-" } else { "" };
    let v = ns.abs();
    if v < 1000.0 && v.fract() == 0.0 {
        return format!("{sign}{v}{NBSP}ns");
    }
    for (i, (scale, unit)) in UNITS.iter().enumerate() {
        if v >= *scale || i == UNITS.len() - 1 {
            let x = round_significant(v / scale, 3);
            // 999.7 µs rounds to 1000 µs: that is 1.00 ms.
            if x >= 1000.0 && i > 0 {
                let (bigger, bigger_unit) = UNITS[i - 1];
                return format!("{sign}{}{NBSP}{bigger_unit}", significant(v / bigger, 3));
            }
            if x >= 1000.0 {
                if !POSITIONAL.contains(&(v / scale)) {
                    return format!("{sign}{}{NBSP}{unit}", significant(v / scale, 3));
                }
                return format!("{sign}{:.0}{NBSP}{unit}", v / scale);
            }
            return format!("{sign}{}{NBSP}{unit}", significant(v / scale, 3));
        }
    }
    unreachable!("the last unit always matches")
}

/// An integer number of nanoseconds; see [`duration`].
pub fn duration_i(ns: i64) -> String {
    duration(ns as f64)
}

/// Magnitudes shown in positional notation; outside them, scientific (`1.80e308`), so that no
/// number in a report is longer than a few characters whatever an analysis.json holds (an
/// `f64::MAX` once printed as 309 digits).
const POSITIONAL: std::ops::Range<f64> = 1e-6..1e15;

/// `x` with `digits` significant digits, trailing zeros kept (`2.60`, `0.0341`, `123`).
/// Values of 10^digits and over are shown as whole numbers; magnitudes from 10^15 on and
/// under 10^-6 in scientific notation (`1.23e20`).
pub fn significant(x: f64, digits: u32) -> String {
    if !x.is_finite() {
        return "n/a".to_owned();
    }
    if x == 0.0 {
        return "0".to_owned();
    }
    if !POSITIONAL.contains(&x.abs()) {
        let decimals = digits.saturating_sub(1) as usize;
        return format!("{x:.decimals$e}");
    }
    let r = round_significant(x, digits);
    let magnitude = r.abs().log10().floor() as i32;
    let decimals = (digits as i32 - 1 - magnitude).max(0) as usize;
    format!("{r:.decimals$}")
}

pub fn round_significant(x: f64, digits: u32) -> f64 {
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
    const BINARY: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if n < 1024 {
        return format!("{n}{NBSP}B");
    }
    let mut v = n as f64;
    let mut unit = "B";
    for u in BINARY {
        if v < 1024.0 {
            break;
        }
        v /= 1024.0;
        unit = u;
    }
    format!("{}{NBSP}{unit}", significant(v, 3))
}

/// A ratio such as `2.31×`.
pub fn ratio(x: f64) -> String {
    format!("{}×", significant(x, 3))
}

/// `65536` as `65,536`.
pub fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}
