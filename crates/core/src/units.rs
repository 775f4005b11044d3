//! Numbers for people: durations in the largest unit that keeps them readable, with three
//! significant digits, a no-break space between a number and its unit (so that `2.61 ms`
//! never wraps between the two). Used by the report and by warning messages; analysis.json
//! itself keeps integer nanoseconds.

/// Between a number and its unit: a no-break space.
pub const NBSP: char = '\u{a0}';

/// Units from the largest down: seconds, milliseconds, microseconds, nanoseconds.
pub const UNITS: [(f64, &str); 4] = [(1e9, "s"), (1e6, "ms"), (1e3, "µs"), (1.0, "ns")];

/// Magnitudes from which a number is no longer shown: `n/a`, as for a non-finite one. No
/// measurement is that large (an `i64` of nanoseconds is under 10^10 s, a percentage of
/// 10^15 compares something with next to nothing), and 16 digits are no number a person reads.
pub const LARGEST: f64 = 1e15;

/// Decimals a change shows at most, in the unit of its column: a change's resolution is a
/// thousandth of that unit (`+0.219 µs` beside `+511 µs`), and a change under half of it is `0`
/// (a float leftover such as `+5.59e-9 ns` between two equal ranges is no change).
pub const CHANGE_DECIMALS: u32 = 3;

/// Decimals any other number shows at most (a standard deviation of `0.000546 ms`, a cv of
/// `0.000120`): a millionth of its unit; under half of that it is `0`.
pub const DECIMALS: u32 = 6;

/// The one rule every number for people follows: `x` in positional notation, never exponent
/// notation, with `digits` significant digits (trailing zeros kept: `2.60`) and at most
/// `max_decimals` decimals; whole numbers from 10^digits on (`12300`). A value that rounds to
/// zero is `0`, without a sign; a non-finite value, or a magnitude of [`LARGEST`] or more, is
/// `n/a`.
pub fn positional(x: f64, digits: u32, max_decimals: u32) -> String {
    if !x.is_finite() || x.abs() >= LARGEST {
        return "n/a".to_owned();
    }
    // Under half the last decimal shown (a subnormal among them): no digit to show.
    if x.abs() < 0.5 * 10f64.powi(-(max_decimals as i32)) {
        return "0".to_owned();
    }
    let r = round_significant(x, digits);
    let magnitude = r.abs().log10().floor() as i32;
    let decimals = (digits as i32 - 1 - magnitude).clamp(0, max_decimals as i32) as usize;
    zero_unsigned(format!("{r:.decimals$}"))
}

/// `x` with exactly `decimals` decimals (`41.2`), positional; `-0.0` is `0.0`; `n/a` as
/// [`positional`] has it.
pub fn fixed(x: f64, decimals: u32) -> String {
    if !x.is_finite() || x.abs() >= LARGEST {
        return "n/a".to_owned();
    }
    let decimals = decimals as usize;
    let shown = format!("{x:.decimals$}");
    match shown.strip_prefix('-') {
        Some(unsigned) if unsigned.bytes().all(|b| matches!(b, b'0' | b'.')) => unsigned.to_owned(),
        _ => shown,
    }
}

/// A shown number that is zero (`0.000`, `-0.0`) as `0`.
fn zero_unsigned(shown: String) -> String {
    if shown.bytes().all(|b| matches!(b, b'-' | b'0' | b'.')) {
        "0".to_owned()
    } else {
        shown
    }
}

/// `shown` (a number as [`positional`] writes it) with a `+` before it when it is positive:
/// a change. Zero and `n/a` take no sign.
pub fn plus(shown: String) -> String {
    if shown == "0" || shown == "n/a" || shown.starts_with('-') {
        shown
    } else {
        format!("+{shown}")
    }
}

/// `ns` in the unit `scale` nanoseconds named `unit`, three significant digits and at most
/// [`DECIMALS`] decimals: `0.225 ms`; `n/a` without a unit.
pub fn in_unit(ns: f64, scale: f64, unit: &str) -> String {
    with_unit(positional(ns / scale, 3, DECIMALS), unit)
}

/// A shown number and its unit, a no-break space between; `n/a` alone.
pub fn with_unit(shown: String, unit: &str) -> String {
    if shown == "n/a" {
        shown
    } else {
        format!("{shown}{NBSP}{unit}")
    }
}

/// A duration given in nanoseconds, in the largest unit in which it is at least 1, with three
/// significant digits: `2.61 ms`, `950 µs`, `12 ns`, `1.00 s`. Whole nanoseconds below 1 µs
/// are shown as they are (`12 ns`, not `12.0 ns`); under a nanosecond, at most [`DECIMALS`]
/// decimals (`0.500 ns`; a float leftover such as 5.59e-9 is `0 ns`).
/// Seconds are the largest unit: `1234 s`. See [`positional`].
pub fn duration(ns: f64) -> String {
    if !ns.is_finite() {
        return "n/a".to_owned();
    }
    let v = ns.abs();
    if v < 1000.0 && v.fract() == 0.0 {
        return format!("{}{NBSP}ns", ns as i64);
    }
    for (i, (scale, unit)) in UNITS.iter().enumerate() {
        if v >= *scale || i == UNITS.len() - 1 {
            let x = round_significant(v / scale, 3);
            // 999.7 µs rounds to 1000 µs: that is 1.00 ms.
            if x >= 1000.0 && i > 0 {
                let (bigger, bigger_unit) = UNITS[i - 1];
                return in_unit(ns, bigger, bigger_unit);
            }
            if x >= 1000.0 {
                // Whole seconds, every digit.
                return with_unit(positional(ns / scale, 15, 0), unit);
            }
            return in_unit(ns, *scale, unit);
        }
    }
    unreachable!("the last unit always matches")
}

/// An integer number of nanoseconds; see [`duration`].
pub fn duration_i(ns: i64) -> String {
    duration(ns as f64)
}

/// `x` with `digits` significant digits, trailing zeros kept (`2.60`, `0.0341`, `123`), at
/// most [`DECIMALS`] decimals: [`positional`].
pub fn significant(x: f64, digits: u32) -> String {
    positional(x, digits, DECIMALS)
}

pub fn round_significant(x: f64, digits: u32) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    let magnitude = x.abs().log10().floor() as i32;
    let factor = 10f64.powi(digits as i32 - 1 - magnitude);
    if !factor.is_finite() || factor == 0.0 {
        // A subnormal (10^326 overflows) or the like: nothing to round at that scale.
        return x;
    }
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

/// `1 run`, `3 runs`: a count and its noun.
pub fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}
