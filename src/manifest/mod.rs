//! Reading and validating the profiling harness's `manifest.yaml` (contract §1).
//!
//! The harness writes the manifest with PyYAML (`yaml.safe_dump(..., sort_keys=True)`), so it is
//! read with PyYAML's YAML 1.1 rules: a plain `000000000139` is a string, `yes` is a boolean,
//! `0755` is the integer 493 (see `scalar.rs`). [`parse`] turns the bytes into a [`Manifest`] in
//! three steps, each in its own module:
//!
//! 1. decoding and size check (here): at most [`MAX_MANIFEST_BYTES`]; UTF-8, or UTF-16 with a
//!    byte order mark, like PyYAML's reader;
//! 2. composing one YAML document into a tree of nodes with line numbers (`yaml.rs`, the tree
//!    in `node.rs`), with bounded nesting and alias expansion;
//! 3. checking the keys this tool needs (here), keeping the rest as JSON.
//!
//! Decisions a user may notice:
//! - `profile_name` and `run_id` accept a plain integer and keep it **as written**
//!   (`run_id: 20261129` is `"20261129"`). PyYAML's dumper quotes a string that looks like a
//!   number, so an integer there was typed by a person, who meant the name they typed; reading
//!   `0042` as the octal 34 would help nobody. Booleans, floats and null stay errors, since
//!   `run_id: yes` or `run_id: 1.50` would not round-trip as written.
//! - The informational keys `git_commit`, `device`, `command_line` and `expected_trace_path`
//!   accept any scalar and keep its text as written (an abbreviated commit `0123456` is a YAML
//!   1.1 octal integer); `null` means not recorded.
//! - `capture_range` must be a string or null: a number there is almost surely a mistake, and
//!   the error says how to quote it.
//! - A key repeated in one mapping is an error naming both lines (PyYAML keeps the last one).
//! - Unknown top-level keys go to [`Manifest::extra`]; those that look like a misspelling of a
//!   known key are also listed in [`Manifest::near_misses`] for the caller to warn about.
//!
//! YAML to JSON: integers become JSON integers when they fit in `i64` or `u64` and strings of
//! their decimal value otherwise (their text as written beyond 128 bits); finite floats become
//! numbers and the others the strings `.inf`, `-.inf`, `.nan`; timestamps and `!!binary` keep
//! their text; `!!set` becomes a list of its members; mapping keys become their string form
//! (`1`, `true`, `null`).

mod error;
mod near_miss;
mod node;
mod scalar;
#[cfg(test)]
mod tests;
mod yaml;

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::Path;

pub use error::{ManifestError, ManifestErrorKind};

use crate::files::InputError;

use node::{Entry, Kind, Node};
use scalar::{Int, ScalarValue};

/// The iteration range pattern used when the manifest has no `iteration_pattern`.
pub const DEFAULT_ITERATION_PATTERN: &str = r"^iteration (\d+)$";

/// Largest manifest accepted, in bytes. Real manifests are a few kilobytes; the limit only
/// keeps a wrong path (a trace, a log) from being loaded into memory.
pub const MAX_MANIFEST_BYTES: u64 = 16 * 1024 * 1024;

/// Top-level keys this tool knows: the harness's own and the two this tool adds. Anything else
/// goes to [`Manifest::extra`].
const KNOWN_KEYS: &[&str] = &[
    "capture_range",
    "command_line",
    "cuda",
    "data_source",
    "device",
    "expected_trace_path",
    "git_commit",
    "iteration_pattern",
    "output_summaries",
    "profile_name",
    "record_ids",
    "run_id",
    "target",
    "trace_sha256",
    "workload",
];

/// Keys the harness writes under `workload:`, for near-miss detection.
const WORKLOAD_KEYS: &[&str] = &[
    "iterations",
    "record_loading",
    "seed",
    "validate_output",
    "warmup",
];

/// A validated manifest.
#[derive(Debug, Clone, PartialEq)]
pub struct Manifest {
    /// `profile_name`: the harness's name for what was profiled.
    pub profile_name: String,
    /// `run_id`: the run's identifier (usually also the run directory's name).
    pub run_id: String,
    /// `capture_range`: the top-level NVTX range nsys captured; `None` (written `null`) when the
    /// whole trace was captured.
    pub capture_range: Option<String>,
    /// `workload.iterations`: how many measured iterations the run made (at least 1).
    pub iterations: u64,
    /// `iteration_pattern`, or [`DEFAULT_ITERATION_PATTERN`]: a valid regular expression with
    /// exactly one capture group, which captures the iteration index.
    pub iteration_pattern: String,
    /// `trace_sha256`, lowercased: 64 hexadecimal digits the trace must hash to.
    pub trace_sha256: Option<String>,
    /// `expected_trace_path`, as written.
    pub expected_trace_path: Option<String>,
    /// `device`, e.g. `cuda:0`.
    pub device: Option<String>,
    /// `git_commit`.
    pub git_commit: Option<String>,
    /// `command_line` (folded onto one line, as YAML reads it).
    pub command_line: Option<String>,
    /// Length of `record_ids`; `None` when the key is absent or null.
    pub record_count: Option<u64>,
    /// SHA-256 of `record_ids` (their compact JSON), so that two runs' record ids can be told
    /// apart without keeping them; `None` when the key is absent or null.
    pub record_ids_sha256: Option<String>,
    /// `target`, as JSON.
    pub target: Option<serde_json::Value>,
    /// `workload`, whole, as JSON.
    pub workload: serde_json::Value,
    /// `cuda` (the synchronization policy), as JSON.
    pub cuda: Option<serde_json::Value>,
    /// `data_source`, as JSON.
    pub data_source: Option<serde_json::Value>,
    /// Top-level keys this tool does not know, by their string form.
    pub extra: BTreeMap<String, serde_json::Value>,
    /// Unknown keys that look like misspellings of known ones, in key order.
    pub near_misses: Vec<NearMiss>,
}

/// An unknown key that is probably a misspelling of a known one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NearMiss {
    /// The key as written, as a dotted path (`workload.iteration`).
    pub key: String,
    /// The known key it resembles, as a dotted path.
    pub suggestion: String,
    /// 1-based line of the key.
    pub line: usize,
}

/// Reads a manifest file's bytes, refusing files over [`MAX_MANIFEST_BYTES`] without reading
/// them whole, and anything but a regular file (a FIFO would block forever) without waiting on
/// it. The caller hashes these bytes for provenance and hands them to [`parse`].
///
/// # Errors
///
/// [`ManifestErrorKind::Io`] when the file cannot be read, [`ManifestErrorKind::NotAFile`]
/// when it is not a regular file, [`ManifestErrorKind::TooLarge`] when it is over the limit.
pub fn read_bytes(path: &Path) -> Result<Vec<u8>, ManifestError> {
    crate::files::read_regular(path, MAX_MANIFEST_BYTES).map_err(|e| match e {
        InputError::Io { source, .. } => {
            ManifestError::new(path, None, ManifestErrorKind::Io(source))
        }
        InputError::NotAFile { what, .. } => {
            ManifestError::new(path, None, ManifestErrorKind::NotAFile { what })
        }
        InputError::TooLarge { .. } => too_large(path),
    })
}

/// Parses and validates a manifest. `file_label` names the file in error messages.
///
/// # Errors
///
/// Any [`ManifestErrorKind`] but `Io`: the bytes are too many or not text, the YAML is
/// malformed or hostile, or a key the tool needs is missing or ill-typed. The error names the
/// file, the key and its line (or the line and column of a syntax error).
pub fn parse(text: &[u8], file_label: &Path) -> Result<Manifest, ManifestError> {
    let text = decode(text, file_label)?;
    let root = yaml::load(&text, file_label)?;
    Validator { file: file_label }.manifest(root)
}

fn too_large(file: &Path) -> ManifestError {
    ManifestError::new(
        file,
        None,
        ManifestErrorKind::TooLarge {
            limit: MAX_MANIFEST_BYTES,
        },
    )
}

/// Decodes the bytes the way PyYAML's reader does: UTF-16 when a byte order mark says so,
/// UTF-8 otherwise (a UTF-8 byte order mark is left for the YAML parser, which skips it).
fn decode<'t>(bytes: &'t [u8], file: &Path) -> Result<Cow<'t, str>, ManifestError> {
    if bytes.len() as u64 > MAX_MANIFEST_BYTES {
        return Err(too_large(file));
    }
    let encoding_error = |line: Option<usize>, message: String| {
        ManifestError::new(file, line, ManifestErrorKind::Encoding { message })
    };
    let utf16 = match bytes {
        [0xFF, 0xFE, rest @ ..] => Some((rest, u16::from_le_bytes as fn([u8; 2]) -> u16)),
        [0xFE, 0xFF, rest @ ..] => Some((rest, u16::from_be_bytes as fn([u8; 2]) -> u16)),
        _ => None,
    };
    if let Some((rest, unit)) = utf16 {
        if rest.len() % 2 != 0 {
            return Err(encoding_error(
                None,
                "not valid utf-16: the file has an odd number of bytes".to_owned(),
            ));
        }
        let units = rest.chunks_exact(2).map(|pair| unit([pair[0], pair[1]]));
        let mut text = String::with_capacity(rest.len() / 2);
        for (index, c) in char::decode_utf16(units).enumerate() {
            match c {
                Ok(c) => text.push(c),
                Err(e) => {
                    let line = text.matches('\n').count() + 1;
                    return Err(encoding_error(
                        Some(line),
                        format!(
                            "not valid utf-16: unpaired surrogate 0x{:04x} at byte offset {}",
                            e.unpaired_surrogate(),
                            2 + 2 * index
                        ),
                    ));
                }
            }
        }
        return Ok(Cow::Owned(text));
    }
    match std::str::from_utf8(bytes) {
        Ok(text) => Ok(Cow::Borrowed(text)),
        Err(e) => {
            let offset = e.valid_up_to();
            let line = bytes[..offset].iter().filter(|&&b| b == b'\n').count() + 1;
            let message = match e.error_len() {
                Some(_) => format!(
                    "not valid utf-8: byte 0x{:02x} at byte offset {offset} \
                     (the manifest must be utf-8 text)",
                    bytes[offset]
                ),
                None => format!(
                    "not valid utf-8: the file ends inside a character at byte offset {offset}"
                ),
            };
            Err(encoding_error(Some(line), message))
        }
    }
}

/// Checks the composed document against what the tool needs.
struct Validator<'f> {
    file: &'f Path,
}

impl Validator<'_> {
    fn error(&self, line: Option<usize>, kind: ManifestErrorKind) -> ManifestError {
        ManifestError::new(self.file, line, kind)
    }

    fn invalid(&self, entry: &Entry, path: &str, requirement: &str) -> ManifestError {
        self.invalid_with_hint(entry, path, requirement, None)
    }

    fn invalid_with_hint(
        &self,
        entry: &Entry,
        path: &str,
        requirement: &str,
        hint: Option<String>,
    ) -> ManifestError {
        self.error(
            Some(entry.key_line),
            ManifestErrorKind::InvalidValue {
                key: path.to_owned(),
                requirement: requirement.to_owned(),
                found: entry.value.describe(),
                hint,
            },
        )
    }

    fn manifest(&self, root: Node) -> Result<Manifest, ManifestError> {
        let entries = match root.kind {
            Kind::Map(entries) => entries,
            _ => {
                return Err(self.error(
                    Some(root.line),
                    ManifestErrorKind::NotAMapping {
                        found: root.describe(),
                    },
                ));
            }
        };
        let (known, extra, mut near_misses) = split_top_level(entries);
        // Workload keys are checked for misspellings too: a misspelled `iterations` is the
        // likeliest cause of a missing one.
        if let Some(Entry {
            value:
                Node {
                    kind: Kind::Map(workload),
                    ..
                },
            ..
        }) = known.get("workload")
        {
            near_misses.extend(workload_near_misses(workload));
        }
        near_misses.sort_by(|a, b| (a.line, &a.key).cmp(&(b.line, &b.key)));

        let missing = |key: &str| {
            near_misses
                .iter()
                .find(|miss| miss.suggestion == key)
                .map(|miss| {
                    format!(
                        "found `{}` on line {}; did you mean `{key}`?",
                        miss.key, miss.line
                    )
                })
        };

        let profile_name = self.identifier(&known, "profile_name", &missing)?;
        let run_id = self.identifier(&known, "run_id", &missing)?;
        let capture_range = self.capture_range(&known, &missing)?;
        let (iterations, workload) = self.workload(&known, &missing)?;
        let iteration_pattern = self.iteration_pattern(known.get("iteration_pattern"))?;
        let trace_sha256 = self.trace_sha256(known.get("trace_sha256"))?;
        let text = |key: &str| self.optional_text(known.get(key), key);
        let mapping = |key: &str| self.optional_mapping(known.get(key), key);
        Ok(Manifest {
            profile_name,
            run_id,
            capture_range,
            iterations,
            iteration_pattern,
            trace_sha256,
            expected_trace_path: text("expected_trace_path")?,
            device: text("device")?,
            git_commit: text("git_commit")?,
            command_line: text("command_line")?,
            record_count: self.record_count(known.get("record_ids"))?,
            record_ids_sha256: record_ids_sha256(known.get("record_ids")),
            target: mapping("target")?,
            workload,
            cuda: mapping("cuda")?,
            data_source: mapping("data_source")?,
            extra,
            near_misses,
        })
    }

    fn require<'e>(
        &self,
        known: &'e BTreeMap<&'static str, Entry>,
        key: &str,
        missing: &dyn Fn(&str) -> Option<String>,
    ) -> Result<&'e Entry, ManifestError> {
        known.get(key).ok_or_else(|| {
            self.error(
                None,
                ManifestErrorKind::MissingKey {
                    key: key.to_owned(),
                    hint: missing(key),
                },
            )
        })
    }

    /// `profile_name` and `run_id`: a non-empty string, or a plain integer kept as written.
    fn identifier(
        &self,
        known: &BTreeMap<&'static str, Entry>,
        key: &str,
        missing: &dyn Fn(&str) -> Option<String>,
    ) -> Result<String, ManifestError> {
        let entry = self.require(known, key, missing)?;
        match &entry.value.kind {
            Kind::Scalar {
                value: ScalarValue::Str | ScalarValue::Int(_),
                text,
            } if !text.is_empty() => Ok(text.clone()),
            Kind::Scalar {
                value: ScalarValue::Bool(_) | ScalarValue::Float(_),
                text,
            } => Err(self.invalid_with_hint(
                entry,
                key,
                "be a non-empty string",
                Some(quote_hint(key, text)),
            )),
            _ => Err(self.invalid(entry, key, "be a non-empty string")),
        }
    }

    /// `capture_range`: a non-empty string, or null for "the whole trace was captured".
    fn capture_range(
        &self,
        known: &BTreeMap<&'static str, Entry>,
        missing: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Option<String>, ManifestError> {
        const KEY: &str = "capture_range";
        let entry = self.require(known, KEY, missing)?;
        match &entry.value.kind {
            Kind::Scalar {
                value: ScalarValue::Null,
                ..
            } => Ok(None),
            Kind::Scalar {
                value: ScalarValue::Str,
                text,
            } if text.is_empty() => Err(self.error(
                Some(entry.key_line),
                ManifestErrorKind::InvalidValue {
                    key: KEY.to_owned(),
                    requirement: "be a non-empty string or null".to_owned(),
                    found: "an empty string".to_owned(),
                    hint: Some(
                        "write `capture_range: null` when the whole trace was captured".to_owned(),
                    ),
                },
            )),
            Kind::Scalar {
                value: ScalarValue::Str,
                text,
            } => Ok(Some(text.clone())),
            Kind::Scalar { text, .. } => Err(self.invalid_with_hint(
                entry,
                KEY,
                "be a string or null",
                Some(quote_hint(KEY, text)),
            )),
            Kind::Seq(_) | Kind::Map(_) => Err(self.invalid(entry, KEY, "be a string or null")),
        }
    }

    /// `workload` (a mapping) and its `iterations` (an integer >= 1).
    fn workload(
        &self,
        known: &BTreeMap<&'static str, Entry>,
        missing: &dyn Fn(&str) -> Option<String>,
    ) -> Result<(u64, serde_json::Value), ManifestError> {
        const REQUIREMENT: &str = "be an integer >= 1";
        let entry = self.require(known, "workload", missing)?;
        if !matches!(entry.value.kind, Kind::Map(_)) {
            return Err(self.invalid(entry, "workload", "be a mapping holding `iterations`"));
        }
        let Some(iterations) = entry.value.get("iterations") else {
            let hint = missing("workload.iterations");
            return Err(self.error(
                Some(entry.key_line),
                ManifestErrorKind::MissingKey {
                    key: "workload.iterations".to_owned(),
                    hint,
                },
            ));
        };
        let count = match &iterations.value.kind {
            Kind::Scalar {
                value: ScalarValue::Int(Int::Small(n)),
                ..
            } if *n >= 1 => u64::try_from(*n).ok(),
            _ => None,
        };
        let Some(count) = count else {
            let hint = match &iterations.value.kind {
                Kind::Scalar {
                    value: ScalarValue::Str,
                    text,
                } if text.parse::<u64>().is_ok() => {
                    Some("write the number without quotes".to_owned())
                }
                _ => None,
            };
            return Err(self.invalid_with_hint(
                iterations,
                "workload.iterations",
                REQUIREMENT,
                hint,
            ));
        };
        Ok((count, to_json(&entry.value)))
    }

    /// `iteration_pattern`: a regular expression with exactly one capture group.
    fn iteration_pattern(&self, entry: Option<&Entry>) -> Result<String, ManifestError> {
        const KEY: &str = "iteration_pattern";
        let Some(entry) = entry else {
            return Ok(DEFAULT_ITERATION_PATTERN.to_owned());
        };
        let pattern = match &entry.value.kind {
            Kind::Scalar {
                value: ScalarValue::Null,
                ..
            } => return Ok(DEFAULT_ITERATION_PATTERN.to_owned()),
            Kind::Scalar {
                value: ScalarValue::Str,
                text,
            } => text,
            _ => {
                return Err(self.invalid(
                    entry,
                    KEY,
                    "be a string (a regular expression with one capture group)",
                ));
            }
        };
        let regex = regex::Regex::new(pattern).map_err(|e| {
            self.error(
                Some(entry.key_line),
                ManifestErrorKind::BadRegex {
                    key: KEY.to_owned(),
                    error: e.to_string(),
                },
            )
        })?;
        // `captures_len` counts the implicit group 0 (the whole match).
        let groups = regex.captures_len() - 1;
        if groups != 1 {
            return Err(self.error(
                Some(entry.key_line),
                ManifestErrorKind::InvalidValue {
                    key: KEY.to_owned(),
                    requirement: "have exactly one capture group for the iteration index"
                        .to_owned(),
                    found: groups.to_string(),
                    hint: Some(if groups == 0 {
                        format!("capture the index, as in `{DEFAULT_ITERATION_PATTERN}`")
                    } else {
                        "make the other groups non-capturing: `(?:...)`".to_owned()
                    }),
                },
            ));
        }
        Ok(pattern.clone())
    }

    /// `trace_sha256`: 64 hexadecimal digits, lowercased.
    fn trace_sha256(&self, entry: Option<&Entry>) -> Result<Option<String>, ManifestError> {
        const KEY: &str = "trace_sha256";
        let Some(entry) = entry else {
            return Ok(None);
        };
        match &entry.value.kind {
            Kind::Scalar {
                value: ScalarValue::Null,
                ..
            } => Ok(None),
            // A digest of decimal digits only is a (huge) YAML integer; its text is the digest.
            Kind::Scalar {
                value: ScalarValue::Str | ScalarValue::Int(_),
                text,
            } if text.len() == 64 && text.bytes().all(|b| b.is_ascii_hexdigit()) => {
                Ok(Some(text.to_ascii_lowercase()))
            }
            Kind::Scalar {
                value: ScalarValue::Str,
                text,
            } => Err(self.error(
                Some(entry.key_line),
                ManifestErrorKind::InvalidValue {
                    key: KEY.to_owned(),
                    requirement: "be 64 hexadecimal digits (a sha-256 digest) or null".to_owned(),
                    found: format!(
                        "{} ({} characters)",
                        entry.value.describe(),
                        text.chars().count()
                    ),
                    hint: None,
                },
            )),
            _ => Err(self.invalid(
                entry,
                KEY,
                "be 64 hexadecimal digits (a sha-256 digest) or null",
            )),
        }
    }

    /// An informational key: any scalar, kept as written; null means not recorded.
    fn optional_text(
        &self,
        entry: Option<&Entry>,
        key: &str,
    ) -> Result<Option<String>, ManifestError> {
        match entry.map(|entry| (entry, &entry.value.kind)) {
            None
            | Some((
                _,
                Kind::Scalar {
                    value: ScalarValue::Null,
                    ..
                },
            )) => Ok(None),
            Some((_, Kind::Scalar { text, .. })) => Ok(Some(text.clone())),
            Some((entry, _)) => Err(self.invalid(entry, key, "be a string or null")),
        }
    }

    /// `target`, `cuda`, `data_source`: a mapping or null.
    fn optional_mapping(
        &self,
        entry: Option<&Entry>,
        key: &str,
    ) -> Result<Option<serde_json::Value>, ManifestError> {
        match entry.map(|entry| (entry, &entry.value.kind)) {
            None
            | Some((
                _,
                Kind::Scalar {
                    value: ScalarValue::Null,
                    ..
                },
            )) => Ok(None),
            Some((entry, Kind::Map(_))) => Ok(Some(to_json(&entry.value))),
            Some((entry, _)) => Err(self.invalid(entry, key, "be a mapping or null")),
        }
    }

    /// `record_ids`: a list (only its length is kept) or null.
    fn record_count(&self, entry: Option<&Entry>) -> Result<Option<u64>, ManifestError> {
        match entry.map(|entry| (entry, &entry.value.kind)) {
            None
            | Some((
                _,
                Kind::Scalar {
                    value: ScalarValue::Null,
                    ..
                },
            )) => Ok(None),
            Some((_, Kind::Seq(items))) => Ok(Some(items.len() as u64)),
            Some((entry, _)) => Err(self.invalid(entry, "record_ids", "be a list or null")),
        }
    }
}

/// SHA-256 (hex) of the compact JSON of a `record_ids` list; `None` for anything else (its
/// type is checked by `record_count`).
fn record_ids_sha256(entry: Option<&Entry>) -> Option<String> {
    use sha2::{Digest, Sha256};
    let entry = entry?;
    let Kind::Seq(_) = &entry.value.kind else {
        return None;
    };
    let json = serde_json::to_vec(&to_json(&entry.value)).expect("JSON values serialize");
    Some(
        Sha256::digest(&json)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect(),
    )
}

/// Splits the top-level entries into the known keys and the rest ([`Manifest::extra`], as
/// JSON), listing the unknown keys that look like misspellings, in document order.
fn split_top_level(
    entries: Vec<Entry>,
) -> (
    BTreeMap<&'static str, Entry>,
    BTreeMap<String, serde_json::Value>,
    Vec<NearMiss>,
) {
    let mut near_misses = Vec::new();
    let mut extra = BTreeMap::new();
    let mut known: BTreeMap<&'static str, Entry> = BTreeMap::new();
    for entry in entries {
        match KNOWN_KEYS.iter().find(|&&k| k == entry.key) {
            Some(&k) => {
                known.insert(k, entry);
            }
            None => {
                let suggestion = near_miss::suggest(&entry.key, KNOWN_KEYS)
                    .map(str::to_owned)
                    // A common slip: `iterations` at the top level instead of under
                    // `workload:`.
                    .or_else(|| {
                        near_miss::suggest(&entry.key, &["iterations"])
                            .map(|_| "workload.iterations".to_owned())
                    });
                if let Some(suggestion) = suggestion {
                    near_misses.push(NearMiss {
                        key: entry.key.clone(),
                        suggestion,
                        line: entry.key_line,
                    });
                }
                extra.insert(entry.key, to_json(&entry.value));
            }
        }
    }
    (known, extra, near_misses)
}

/// The unknown keys under `workload:` that look like misspellings of the harness's own, as
/// dotted paths, in document order.
fn workload_near_misses(workload: &[Entry]) -> impl Iterator<Item = NearMiss> + '_ {
    workload
        .iter()
        .filter(|entry| !WORKLOAD_KEYS.contains(&entry.key.as_str()))
        .filter_map(|entry| {
            near_miss::suggest(&entry.key, WORKLOAD_KEYS).map(|suggestion| NearMiss {
                key: format!("workload.{}", entry.key),
                suggestion: format!("workload.{suggestion}"),
                line: entry.key_line,
            })
        })
}

/// How to make a scalar a string.
fn quote_hint(key: &str, text: &str) -> String {
    format!(
        "quote the value to make it a string: `{key}: {}`",
        serde_json::Value::String(text.to_owned())
    )
}

/// Converts a node to JSON (see the module documentation). Recursion is bounded by
/// [`yaml::MAX_NESTING_DEPTH`].
fn to_json(node: &Node) -> serde_json::Value {
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
            ScalarValue::Float(f) => node::float_to_json(*f),
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
