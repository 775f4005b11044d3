//! YAML 1.1 scalar resolution and construction, exactly as PyYAML's `SafeLoader` does it.
//!
//! The harness writes manifests with `yaml.safe_dump`, whose emitter quotes every string that
//! PyYAML's resolver would otherwise read back as something else. Reading with the same resolver
//! is therefore what makes a plain `000000000139` a string (no YAML 1.1 rule matches it) while a
//! plain `0755` is the octal integer 493. The regular expressions below are copied from PyYAML's
//! `resolver.py` (PyYAML 6.0) and the constructors follow `SafeConstructor` in
//! `constructor.py`, including its quirks (`-.5` and `1e3` are strings; `! '123'` is an int).
//!
//! Timestamps are deliberately not constructed: PyYAML makes `date`/`datetime` objects of them,
//! the manifest never needs one, and keeping the text is the faithful JSON form.

use std::sync::LazyLock;

use regex::Regex;

/// PyYAML `tag:yaml.org,2002:bool` resolver.
static BOOL: LazyLock<Regex> = LazyLock::new(|| {
    pyyaml_regex(
        r"^(?:yes|Yes|YES|no|No|NO
            |true|True|TRUE|false|False|FALSE
            |on|On|ON|off|Off|OFF)$",
    )
});

/// PyYAML `tag:yaml.org,2002:float` resolver. Note that an exponent needs a dot and a signed
/// exponent (`1e3` is a string) and that `.5` may not carry a sign (`-.5` is a string).
static FLOAT: LazyLock<Regex> = LazyLock::new(|| {
    pyyaml_regex(
        r"^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?
            |\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?
            |[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*
            |[-+]?\.(?:inf|Inf|INF)
            |\.(?:nan|NaN|NAN))$",
    )
});

/// PyYAML `tag:yaml.org,2002:int` resolver: binary, YAML 1.1 octal (`0[0-7_]+`), decimal,
/// hexadecimal and base-60 forms. A leading zero followed by an 8 or 9 matches nothing, which is
/// why `000000000139` stays a string.
static INT: LazyLock<Regex> = LazyLock::new(|| {
    pyyaml_regex(
        r"^(?:[-+]?0b[0-1_]+
            |[-+]?0[0-7_]+
            |[-+]?(?:0|[1-9][0-9_]*)
            |[-+]?0x[0-9a-fA-F_]+
            |[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$",
    )
});

/// PyYAML `tag:yaml.org,2002:null` resolver (the empty scalar included).
static NULL: LazyLock<Regex> = LazyLock::new(|| pyyaml_regex(r"^(?:~|null|Null|NULL|)$"));

/// Compiles one of PyYAML's resolver patterns. They are written in Python's verbose mode, which
/// the `regex` crate's `x` flag reads the same way; `[0-9]` is ASCII-only in both.
fn pyyaml_regex(pattern: &str) -> Regex {
    Regex::new(&format!("(?x){pattern}")).expect("PyYAML resolver patterns are valid")
}

/// The YAML core tags this reader knows, by their full `tag:yaml.org,2002:` suffix.
pub const TAG_PREFIX: &str = "tag:yaml.org,2002:";

/// A resolved scalar value. The scalar's text is kept beside it (see [`super::node::Kind`]).
#[derive(Debug, Clone, PartialEq)]
pub enum ScalarValue {
    Null,
    Bool(bool),
    Int(Int),
    Float(f64),
    /// A string; the value is the node's text.
    Str,
    /// A plain `<<`: a merge key, meaningful only as a mapping key.
    Merge,
    /// A plain `=`: PyYAML's `tag:yaml.org,2002:value`, which it accepts only as a mapping key
    /// (where it becomes the string `=`) and refuses everywhere else.
    Equals,
}

/// A YAML integer. PyYAML integers are unbounded; 128 bits hold every value a manifest can
/// sensibly carry, and larger ones are kept as their text (see [`super::node::Kind`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Int {
    Small(i128),
    /// Outside the `i128` range.
    Big,
}

/// Why an explicitly tagged scalar cannot be constructed (PyYAML raises `ValueError`/`KeyError`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct InvalidScalar {
    pub expected: &'static str,
}

/// Resolves a scalar whose tag is absent or the non-specific `!`, as PyYAML does for plain
/// scalars. PyYAML also resolves a *quoted* scalar carrying the `!` tag this way (its parser marks
/// such scalars implicit), so callers pass those here too.
pub fn resolve_implicit(text: &str) -> Result<ScalarValue, InvalidScalar> {
    // PyYAML tries its resolvers in registration order: bool, float, int, merge, null,
    // timestamp, value. The patterns never overlap, so the order only matters for speed.
    if BOOL.is_match(text) {
        construct_bool(text)
    } else if FLOAT.is_match(text) {
        construct_float(text)
    } else if INT.is_match(text) {
        construct_int(text)
    } else if text == "<<" {
        Ok(ScalarValue::Merge)
    } else if NULL.is_match(text) {
        Ok(ScalarValue::Null)
    } else if text == "=" {
        Ok(ScalarValue::Equals)
    } else {
        // Timestamps included: see the module documentation.
        Ok(ScalarValue::Str)
    }
}

/// Constructs a scalar with an explicit `tag:yaml.org,2002:` tag. Returns `None` for a tag this
/// reader does not construct as a scalar.
pub fn construct_tagged(suffix: &str, text: &str) -> Option<Result<ScalarValue, InvalidScalar>> {
    Some(match suffix {
        "str" => Ok(ScalarValue::Str),
        // PyYAML's `construct_yaml_null` ignores the text entirely.
        "null" => Ok(ScalarValue::Null),
        "bool" => construct_bool(text),
        "int" => construct_int(text),
        "float" => construct_float(text),
        // Kept as text: see the module documentation. `!!binary` is what `safe_dump` writes for
        // Python `bytes`; its base64 text is the natural JSON form.
        "timestamp" | "binary" => Ok(ScalarValue::Str),
        "merge" => Ok(ScalarValue::Merge),
        "value" => Ok(ScalarValue::Equals),
        _ => return None,
    })
}

/// `SafeConstructor.construct_yaml_bool`: a lookup of the lowercased text.
fn construct_bool(text: &str) -> Result<ScalarValue, InvalidScalar> {
    match text.to_ascii_lowercase().as_str() {
        "yes" | "true" | "on" => Ok(ScalarValue::Bool(true)),
        "no" | "false" | "off" => Ok(ScalarValue::Bool(false)),
        _ => Err(InvalidScalar {
            expected: "a boolean",
        }),
    }
}

/// `SafeConstructor.construct_yaml_int`, including its handling of explicitly tagged text that
/// the implicit resolver would never produce (Python's `int()` accepts surrounding whitespace, a
/// second sign and a redundant base prefix, so `!!int ' 12 '` and `!!int 0o17` are valid).
fn construct_int(text: &str) -> Result<ScalarValue, InvalidScalar> {
    let invalid = InvalidScalar {
        expected: "an integer",
    };
    let cleaned: String = text.chars().filter(|&c| c != '_').collect();
    let (negative, rest) = split_sign(&cleaned);
    if cleaned.is_empty() {
        return Err(invalid);
    }
    let magnitude = if rest == "0" {
        Some(0)
    } else if let Some(digits) = rest.strip_prefix("0b") {
        python_int(digits, 2).ok_or(invalid)?
    } else if let Some(digits) = rest.strip_prefix("0x") {
        python_int(digits, 16).ok_or(invalid)?
    } else if rest.starts_with('0') {
        python_int(rest, 8).ok_or(invalid)?
    } else if rest.contains(':') {
        sexagesimal_int(rest).ok_or(invalid)?
    } else {
        python_int(rest, 10).ok_or(invalid)?
    };
    Ok(ScalarValue::Int(match magnitude {
        Some(value) if negative => Int::Small(-value),
        Some(value) => Int::Small(value),
        None => Int::Big,
    }))
}

/// Python's `int(text, base)` for the inputs PyYAML hands it: optional whitespace, an optional
/// sign, an optional prefix matching the base, then at least one digit. `None` means invalid;
/// `Some(None)` means valid but beyond `i128`.
fn python_int(text: &str, base: u32) -> Option<Option<i128>> {
    let (negative, body) = split_sign(text.trim_matches(|c: char| c.is_ascii_whitespace()));
    let prefix = match base {
        2 => Some("0b"),
        8 => Some("0o"),
        16 => Some("0x"),
        _ => None,
    };
    let digits = match (prefix, body.get(..2), body.get(2..)) {
        (Some(prefix), Some(head), Some(tail)) if head.eq_ignore_ascii_case(prefix) => tail,
        _ => body,
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(base)) {
        return None;
    }
    let mut value: Option<i128> = Some(0);
    for c in digits.chars() {
        let digit = i128::from(c.to_digit(base)?);
        value = value
            .and_then(|v| v.checked_mul(i128::from(base)))
            .and_then(|v| v.checked_add(digit));
    }
    Some(value.map(|v| if negative { -v } else { v }))
}

/// Base-60 integers (`190:20:30` is 685230), most significant part first.
fn sexagesimal_int(text: &str) -> Option<Option<i128>> {
    let mut value: Option<i128> = Some(0);
    for part in text.split(':') {
        let part = python_int(part, 10)?;
        value = match (value, part) {
            (Some(v), Some(p)) => v.checked_mul(60).and_then(|v| v.checked_add(p)),
            _ => None,
        };
    }
    Some(value)
}

/// `SafeConstructor.construct_yaml_float`.
fn construct_float(text: &str) -> Result<ScalarValue, InvalidScalar> {
    let invalid = InvalidScalar {
        expected: "a floating-point number",
    };
    let cleaned: String = text
        .chars()
        .filter(|&c| c != '_')
        .collect::<String>()
        .to_ascii_lowercase();
    if cleaned.is_empty() {
        return Err(invalid);
    }
    let (negative, rest) = split_sign(&cleaned);
    let sign = if negative { -1.0 } else { 1.0 };
    let value = if rest == ".inf" {
        sign * f64::INFINITY
    } else if rest == ".nan" {
        // PyYAML returns its positive NaN whatever the sign.
        f64::NAN
    } else if rest.contains(':') {
        // Same evaluation order as PyYAML: least significant part first, base growing by 60.
        let mut value = 0.0;
        let mut base = 1.0;
        for part in rest.split(':').rev() {
            value += python_float(part).ok_or(invalid)? * base;
            base *= 60.0;
        }
        sign * value
    } else {
        sign * python_float(rest).ok_or(invalid)?
    };
    Ok(ScalarValue::Float(value))
}

/// Python's `float(text)`: Rust's parser accepts the same decimal and `inf`/`nan` spellings
/// once surrounding whitespace is removed, and rounds the same way (correctly).
fn python_float(text: &str) -> Option<f64> {
    text.trim_matches(|c: char| c.is_ascii_whitespace())
        .parse::<f64>()
        .ok()
}

/// Splits one leading sign off, as PyYAML's constructors do.
fn split_sign(text: &str) -> (bool, &str) {
    match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int(v: i128) -> ScalarValue {
        ScalarValue::Int(Int::Small(v))
    }

    /// Each row was checked against PyYAML 6.0.3: `yaml.safe_load("v: " + text)["v"]`.
    #[test]
    fn plain_scalars_resolve_like_pyyaml() {
        use ScalarValue::{Bool, Float, Null, Str};
        let cases: &[(&str, ScalarValue)] = &[
            ("000000000139", Str),
            ("0139", Str),
            ("09", Str),
            ("-09", Str),
            ("0755", int(493)),
            ("00", int(0)),
            ("0", int(0)),
            ("-0", int(0)),
            ("+0", int(0)),
            ("0_", int(0)),
            ("0_7", int(7)),
            ("0b101", int(5)),
            ("-0b11", int(-3)),
            ("0b", Str),
            ("0x1F", int(31)),
            ("0X1F", Str),
            ("0xg", Str),
            ("0o17", Str),
            ("1_000", int(1000)),
            ("1__2", int(12)),
            ("1_", int(1)),
            ("_1", Str),
            ("+1", int(1)),
            ("+", Str),
            ("190:20:30", int(685_230)),
            ("-1:30", int(-90)),
            ("+12:30", int(750)),
            ("1:60", Str),
            ("0:30", Str),
            ("20261129", int(20_261_129)),
            ("20261129T120000Z", Str),
            ("2026-11-29", Str),
            ("2001-12-14t21:59:43.10-05:00", Str),
            ("1e3", Str),
            ("12e5", Str),
            ("1e+3", Str),
            ("01e2", Str),
            ("1_e3", Str),
            ("1.0e3", Str),
            ("1.5e400", Str),
            ("1.e+3", Float(1000.0)),
            ("1.0e+3", Float(1000.0)),
            ("1.5", Float(1.5)),
            ("1.", Float(1.0)),
            ("0.", Float(0.0)),
            ("00.5", Float(0.5)),
            (".5", Float(0.5)),
            ("-.5", Str),
            ("._5", Str),
            ("1_0.5_", Float(10.5)),
            ("1_2.5_0", Float(12.5)),
            ("190:20:30.15", Float(685_230.15)),
            ("1:2:3.", Float(3723.0)),
            (".inf", Float(f64::INFINITY)),
            ("-.Inf", Float(f64::NEG_INFINITY)),
            ("+.INF", Float(f64::INFINITY)),
            ("-.nan", Str),
            ("NaN", Str),
            ("inf", Str),
            ("yes", Bool(true)),
            ("Yes", Bool(true)),
            ("YES", Bool(true)),
            ("yEs", Str),
            ("y", Str),
            ("n", Str),
            ("on", Bool(true)),
            ("Off", Bool(false)),
            ("TRUE", Bool(true)),
            ("tRUE", Str),
            ("~", Null),
            ("null", Null),
            ("Null", Null),
            ("NULL", Null),
            ("nUll", Str),
            ("", Null),
            ("<<", ScalarValue::Merge),
            ("=", ScalarValue::Equals),
        ];
        for (text, expected) in cases {
            assert_eq!(&resolve_implicit(text).unwrap(), expected, "{text:?}");
        }
        for text in [".NaN", ".nan"] {
            assert!(matches!(resolve_implicit(text), Ok(Float(f)) if f.is_nan()));
        }
    }

    #[test]
    fn big_integers_are_kept_apart() {
        assert_eq!(
            resolve_implicit("18446744073709551616").unwrap(),
            int(18_446_744_073_709_551_616)
        );
        assert_eq!(
            resolve_implicit("123456789012345678901234567890123456789012").unwrap(),
            ScalarValue::Int(Int::Big)
        );
        assert_eq!(
            resolve_implicit("0x1_0000_0000_0000_0000_0000_0000_0000_0000").unwrap(),
            ScalarValue::Int(Int::Big)
        );
    }

    /// PyYAML raises `ValueError` for these although its int resolver matches them.
    #[test]
    fn matching_but_unconstructible_ints_are_errors() {
        for text in ["0b_", "0x_", "-0b_"] {
            assert!(resolve_implicit(text).is_err(), "{text:?}");
        }
    }

    /// Checked against PyYAML 6.0.3 with explicit tags.
    #[test]
    fn tagged_scalars_construct_like_pyyaml() {
        let ok = |suffix: &str, text: &str| construct_tagged(suffix, text).unwrap().unwrap();
        assert_eq!(ok("int", "5"), int(5));
        assert_eq!(ok("int", " 12 "), int(12));
        assert_eq!(ok("int", "0o17"), int(15));
        assert_eq!(ok("int", "0o_17"), int(15));
        assert_eq!(ok("int", "0b0b1"), int(1));
        assert_eq!(ok("int", "+-5"), int(-5));
        assert_eq!(ok("int", "1:30"), int(90));
        assert_eq!(ok("int", "-1:30"), int(-90));
        assert_eq!(ok("float", "1"), ScalarValue::Float(1.0));
        assert_eq!(ok("float", "1e3"), ScalarValue::Float(1000.0));
        assert_eq!(ok("float", ".5e3"), ScalarValue::Float(500.0));
        assert_eq!(ok("float", " 1.5 "), ScalarValue::Float(1.5));
        assert_eq!(ok("float", "1:30"), ScalarValue::Float(90.0));
        assert_eq!(ok("float", "infinity"), ScalarValue::Float(f64::INFINITY));
        assert!(matches!(ok("float", "-.nan"), ScalarValue::Float(f) if f.is_nan()));
        assert_eq!(ok("bool", "yes"), ScalarValue::Bool(true));
        assert_eq!(ok("null", "foo"), ScalarValue::Null);
        assert_eq!(ok("str", "5"), ScalarValue::Str);
        for (suffix, text) in [
            ("int", "abc"),
            ("int", "1.5"),
            ("int", "0X1F"),
            ("int", ""),
            ("int", "0b_"),
            ("float", "x"),
            ("float", ""),
            ("bool", "y"),
            ("bool", "Y"),
        ] {
            assert!(
                construct_tagged(suffix, text).unwrap().is_err(),
                "!!{suffix} {text:?}"
            );
        }
        assert!(construct_tagged("python/tuple", "x").is_none());
    }
}
