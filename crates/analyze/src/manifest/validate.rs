//! Checking the composed document against what the tool needs ([`Validator`]): the keys it
//! reads are checked and typed, the harness's other keys and any unknown ones are kept as JSON
//! ([`Manifest::extra`]), and unknown keys that look like misspellings of known ones are listed
//! ([`NearMiss`]).

use std::collections::BTreeMap;
use std::path::Path;

use super::error::{ManifestError, ManifestErrorKind};
use super::model::{Manifest, NearMiss, DEFAULT_ITERATION_PATTERN};
use super::near_miss;
use super::node::{to_json, Entry, Kind, Node};
use super::scalar::{Int, ScalarValue};

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

/// Checks the composed document against what the tool needs.
pub(super) struct Validator<'f> {
    /// The file label of error messages.
    pub(super) file: &'f Path,
}

impl Validator<'_> {
    /// An error at `line` of the file.
    fn error(&self, line: Option<usize>, kind: ManifestErrorKind) -> ManifestError {
        ManifestError::new(self.file, line, kind)
    }

    /// `entry`'s value does not meet `requirement`.
    fn invalid(&self, entry: &Entry, path: &str, requirement: &str) -> ManifestError {
        self.invalid_with_hint(entry, path, requirement, None)
    }

    /// [`Self::invalid`], with a hint on how to fix it.
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

    /// The manifest of the document `root`, or the first problem found.
    pub(super) fn manifest(&self, root: Node) -> Result<Manifest, ManifestError> {
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
        let (trace_sha256, trace_sha256_per_rank) =
            self.trace_digests(known.get("trace_sha256"))?;
        let text = |key: &str| self.optional_text(known.get(key), key);
        let mapping = |key: &str| self.optional_mapping(known.get(key), key);
        Ok(Manifest {
            profile_name,
            run_id,
            capture_range,
            iterations,
            iteration_pattern,
            trace_sha256,
            trace_sha256_per_rank,
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

    /// The entry of a required key, or an error naming it (and a likely misspelling of it).
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
    /// `trace_sha256`: one digest, or one per rank (a list, rank 0 first, or a mapping from
    /// rank to digest: one trace per rank).
    #[allow(clippy::type_complexity)]
    fn trace_digests(
        &self,
        entry: Option<&Entry>,
    ) -> Result<(Option<String>, Option<BTreeMap<u64, String>>), ManifestError> {
        const PER_RANK: &str =
            "be 64 hexadecimal digits (a sha-256 digest), a list of them (one per rank), a mapping from rank to digest, or null";
        let Some(entry) = entry else {
            return Ok((None, None));
        };
        let digest = |node: &Node| match &node.kind {
            Kind::Scalar {
                value: ScalarValue::Str | ScalarValue::Int(_),
                text,
            } if text.len() == 64 && text.bytes().all(|b| b.is_ascii_hexdigit()) => {
                Some(text.to_ascii_lowercase())
            }
            _ => None,
        };
        match &entry.value.kind {
            Kind::Seq(items) => items
                .iter()
                .enumerate()
                .map(|(k, n)| digest(n).map(|d| (k as u64, d)))
                .collect::<Option<_>>()
                .map(|m| (None, Some(m)))
                .ok_or_else(|| self.invalid(entry, "trace_sha256", PER_RANK)),
            Kind::Map(entries) => entries
                .iter()
                .map(|e| Some((e.key.parse::<u64>().ok()?, digest(&e.value)?)))
                .collect::<Option<_>>()
                .map(|m| (None, Some(m)))
                .ok_or_else(|| self.invalid(entry, "trace_sha256", PER_RANK)),
            _ => Ok((self.trace_sha256(Some(entry))?, None)),
        }
    }

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
