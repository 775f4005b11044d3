//! The one error type of manifest reading: where (file, line, column) and what.

use std::fmt;
use std::path::{Path, PathBuf};

use nsys_gate_core::text::{shown, shown_path};

/// Why a manifest could not be read, and where.
///
/// Displays as `FILE:LINE:COLUMN: message`, `FILE:LINE: message` or `FILE: message`, depending
/// on which positions are known: a YAML syntax error has a line and a column, a key problem has
/// the key's line, and a missing top-level key has neither. Boxed, so that `Result`s carrying it
/// stay small.
#[derive(Debug)]
pub struct ManifestError(Box<Repr>);

#[derive(Debug)]
struct Repr {
    file: PathBuf,
    line: Option<usize>,
    column: Option<usize>,
    kind: ManifestErrorKind,
}

impl ManifestError {
    pub fn new(file: &Path, line: Option<usize>, kind: ManifestErrorKind) -> Self {
        ManifestError(Box::new(Repr {
            file: file.to_path_buf(),
            line,
            column: None,
            kind,
        }))
    }

    pub fn with_column(mut self, column: usize) -> Self {
        self.0.column = Some(column);
        self
    }

    /// The file label given to [`super::parse`] (a path or a bare `manifest.yaml`).
    #[must_use]
    pub fn file(&self) -> &Path {
        &self.0.file
    }

    /// 1-based line, when the problem has one.
    #[must_use]
    pub fn line(&self) -> Option<usize> {
        self.0.line
    }

    /// 1-based column (in characters), for syntax errors.
    #[must_use]
    pub fn column(&self) -> Option<usize> {
        self.0.column
    }

    /// What is wrong.
    #[must_use]
    pub fn kind(&self) -> &ManifestErrorKind {
        &self.0.kind
    }
}

impl fmt::Display for ManifestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", shown_path(&self.0.file))?;
        if let Some(line) = self.0.line {
            write!(f, ":{line}")?;
            if let Some(column) = self.0.column {
                write!(f, ":{column}")?;
            }
        }
        write!(f, ": {}", self.0.kind)
    }
}

// The kind's message already includes any underlying I/O error, so there is no `source` to
// repeat it.
impl std::error::Error for ManifestError {}

/// What is wrong with a manifest. Messages are lowercase fragments; keys are named by their
/// dotted path in backticks, [`shown`] on one line (a key is the manifest writer's text).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ManifestErrorKind {
    /// The file could not be read.
    #[error("cannot read the manifest: {0}")]
    Io(std::io::Error),
    /// The path is not a regular file (a FIFO, a device, a directory): not read at all.
    #[error("the manifest is not a regular file (it is {what}); refusing to read it")]
    NotAFile {
        /// What it is instead (`a FIFO`, `a directory`...).
        what: &'static str,
    },
    /// The file is larger than [`super::read::MAX_MANIFEST_BYTES`].
    #[error(
        "the manifest is larger than {limit} bytes ({} MiB); refusing to read it",
        limit / (1024 * 1024)
    )]
    TooLarge {
        /// The limit in bytes.
        limit: u64,
    },
    /// The bytes are not text in an encoding YAML allows (UTF-8, or UTF-16 with a byte order
    /// mark, as PyYAML's reader accepts).
    #[error("{message}")]
    Encoding {
        /// Says which byte or character is at fault.
        message: String,
    },
    /// The text is not well-formed YAML, or uses YAML that a manifest cannot hold (an unknown
    /// tag, a recursive alias, a non-scalar mapping key, a bad merge key).
    #[error("invalid yaml: {message}")]
    Syntax {
        /// The parser's description of the problem.
        message: String,
    },
    /// Collections nest deeper than [`super::yaml::MAX_NESTING_DEPTH`].
    #[error("invalid yaml: collections nest deeper than {limit} levels")]
    TooDeep {
        /// The nesting limit.
        limit: usize,
    },
    /// Aliases would expand the document beyond [`super::yaml::MAX_ALIAS_EXPANSION_BYTES`].
    #[error(
        "invalid yaml: aliases expand to more than {} MiB of data (refusing what looks like an alias bomb)",
        limit / (1024 * 1024)
    )]
    AliasBomb {
        /// The expansion limit, in approximate bytes of data.
        limit: usize,
    },
    /// The stream holds more than one YAML document.
    #[error("expected a single yaml document, found a second one here")]
    MultipleDocuments,
    /// The stream holds no document, or only `null`.
    #[error("the manifest is empty")]
    Empty,
    /// The document is not a mapping.
    #[error("the manifest must be a mapping of keys to values, found {}", shown(.found))]
    NotAMapping {
        /// What the document is instead (`a sequence`, `string "x"`...).
        found: String,
    },
    /// A key appears twice in one mapping.
    #[error("duplicate key `{}` (first defined on line {first_line})", shown(.key))]
    DuplicateKey {
        /// The dotted key path.
        key: String,
        /// Line of the first definition.
        first_line: usize,
    },
    /// A required key is absent (or null, for required mappings).
    #[error("missing required key `{}`{}", shown(.key), hint_suffix(.hint.as_deref()))]
    MissingKey {
        /// The dotted key path.
        key: String,
        /// A likely fix, such as the misspelled key that is present instead.
        hint: Option<String>,
    },
    /// A key has a value of the wrong type or out of range.
    #[error("`{}` must {requirement}, found {}{}", shown(.key), shown(.found), hint_suffix(.hint.as_deref()))]
    InvalidValue {
        /// The dotted key path.
        key: String,
        /// What the value must be, as a verb phrase (`be an integer >= 1`).
        requirement: String,
        /// What it is (`string "two"`, `integer 0`, `a sequence`).
        found: String,
        /// A likely fix.
        hint: Option<String>,
    },
    /// `iteration_pattern` is not a regular expression.
    #[error("`{}` is not a valid regular expression:\n{error}", shown(.key))]
    BadRegex {
        /// The dotted key path.
        key: String,
        /// The `regex` crate's explanation, which points at the offending part.
        error: String,
    },
}

/// The `(hint: ...)` line that follows a message when there is a likely fix.
fn hint_suffix(hint: Option<&str>) -> String {
    match hint {
        Some(hint) => format!("\n(hint: {})", shown(hint)),
        None => String::new(),
    }
}
