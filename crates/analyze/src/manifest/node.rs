//! The composed YAML document: a tree of [`Node`]s that remember their line numbers, built by
//! [`super::yaml`] with scalars resolved by [`super::scalar`], and its JSON form ([`to_json`]).
//!
//! YAML to JSON: integers become JSON integers when they fit in `i64` or `u64` and strings of
//! their decimal value otherwise (their text as written beyond 128 bits); finite floats become
//! numbers and the others the strings `.inf`, `-.inf`, `.nan`; timestamps and `!!binary` keep
//! their text; `!!set` becomes a list of its members; mapping keys become their string form
//! (`1`, `true`, `null`).

use super::scalar::{Int, ScalarValue};

/// A composed node.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub kind: Kind,
    /// 1-based line where the node starts.
    pub line: usize,
}

/// What a node is: a scalar, a sequence or a mapping.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    /// A scalar and its text as written (after YAML's folding and escapes). The text is kept
    /// for every scalar so that an identifier written plain, like `git_commit: 0123456` (a YAML
    /// 1.1 octal integer), can still be read as the characters the user wrote.
    Scalar {
        value: ScalarValue,
        text: String,
    },
    Seq(Vec<Node>),
    /// Entries in document order (merged keys first, as PyYAML orders them), keys unique.
    Map(Vec<Entry>),
}

/// One mapping entry. Keys are reduced to their string form (see [`key_string`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub key: String,
    pub key_line: usize,
    pub value: Node,
}

impl Node {
    /// Describes the node for an error message: `string "two"`, `integer 0`, `a mapping`.
    pub fn describe(&self) -> String {
        match &self.kind {
            Kind::Scalar { value, text } => match value {
                ScalarValue::Null => "null".to_owned(),
                ScalarValue::Bool(_) => format!("boolean `{text}`"),
                ScalarValue::Int(_) => format!("integer {text}"),
                ScalarValue::Float(_) => format!("float {text}"),
                ScalarValue::Str | ScalarValue::Merge | ScalarValue::Equals => {
                    format!("string {}", quote_for_message(text))
                }
            },
            Kind::Seq(_) => "a sequence".to_owned(),
            Kind::Map(_) => "a mapping".to_owned(),
        }
    }

    /// Looks a key up in a mapping node.
    pub fn get(&self, key: &str) -> Option<&Entry> {
        match &self.kind {
            Kind::Map(entries) => entries.iter().find(|entry| entry.key == key),
            _ => None,
        }
    }
}

/// Quotes a string for a message, shortened so that one bad value cannot flood the terminal.
pub fn quote_for_message(text: &str) -> String {
    const MAX_CHARS: usize = 60;
    if text.chars().count() > MAX_CHARS {
        let head: String = text.chars().take(MAX_CHARS).collect();
        format!("{head:?}… ({} characters)", text.chars().count())
    } else {
        format!("{text:?}")
    }
}

/// The string form of a scalar mapping key, which is also its JSON object key: strings as they
/// are, `null`, `true`/`false`, integers in decimal (beyond 128 bits: as written), floats as
/// JSON writes them (`.inf`, `-.inf`, `.nan` when not finite).
pub fn key_string(value: &ScalarValue, text: &str) -> String {
    match value {
        ScalarValue::Null => "null".to_owned(),
        ScalarValue::Bool(b) => b.to_string(),
        ScalarValue::Int(Int::Small(i)) => i.to_string(),
        ScalarValue::Int(Int::Big) => text.to_owned(),
        ScalarValue::Float(f) => match float_to_json(*f) {
            serde_json::Value::String(s) => s,
            other => other.to_string(),
        },
        ScalarValue::Equals => "=".to_owned(),
        ScalarValue::Str | ScalarValue::Merge => text.to_owned(),
    }
}

/// A float as JSON: a number when finite, else the YAML spelling as a string.
pub fn float_to_json(f: f64) -> serde_json::Value {
    match serde_json::Number::from_f64(f) {
        Some(n) => serde_json::Value::Number(n),
        None if f.is_nan() => serde_json::Value::String(".nan".to_owned()),
        None if f > 0.0 => serde_json::Value::String(".inf".to_owned()),
        None => serde_json::Value::String("-.inf".to_owned()),
    }
}

/// Converts a node to JSON (see the module documentation). Recursion is bounded by
/// [`super::yaml::MAX_NESTING_DEPTH`].
pub fn to_json(node: &Node) -> serde_json::Value {
    use serde_json::Value;
    match &node.kind {
        Kind::Scalar { value, text } => match value {
            ScalarValue::Null => Value::Null,
            ScalarValue::Bool(b) => Value::Bool(*b),
            ScalarValue::Int(Int::Small(i)) => {
                if let Ok(i) = i64::try_from(*i) {
                    Value::from(i)
                } else if let Ok(u) = u64::try_from(*i) {
                    Value::from(u)
                } else {
                    Value::String(i.to_string())
                }
            }
            ScalarValue::Int(Int::Big) => Value::String(text.clone()),
            ScalarValue::Float(f) => float_to_json(*f),
            ScalarValue::Str | ScalarValue::Merge | ScalarValue::Equals => {
                Value::String(text.clone())
            }
        },
        Kind::Seq(items) => Value::Array(items.iter().map(to_json).collect()),
        Kind::Map(entries) => Value::Object(
            entries
                .iter()
                .map(|entry| (entry.key.clone(), to_json(&entry.value)))
                .collect(),
        ),
    }
}
