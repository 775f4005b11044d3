//! Loads one YAML document into a small tree of nodes that remember their line numbers
//! ([`Node`], in `node.rs`).
//!
//! `saphyr-parser` supplies the events (it is a state machine with explicit stacks, so deep
//! input does not recurse); this module composes them the way PyYAML's `SafeLoader` composes
//! and constructs its nodes: scalars are resolved by [`super::scalar`], aliases are expanded,
//! `<<` merge keys are applied, `!!set` becomes a list of its keys.
//!
//! Hostile input is bounded here, before anything else sees the tree:
//! - nesting deeper than [`MAX_NESTING_DEPTH`] is refused, which also bounds every later
//!   recursion over the tree (cloning, conversion to JSON, drop);
//! - alias expansion is charged against [`MAX_ALIAS_EXPANSION_BYTES`], so a "billion laughs"
//!   document fails quickly instead of exhausting memory;
//! - characters PyYAML's reader refuses (control characters) are refused too.
//!
//! Unlike PyYAML, a key repeated in one mapping is an error (PyYAML silently keeps the last one,
//! which would hide a hand-edit mistake); keys brought in by a `<<` merge may be overridden, as
//! YAML intends.
//!
//! Why not the `saphyr` crate's loader? Checked with saphyr 0.3.4 (on saphyr-parser 0.3.4, the
//! newest `cargo info saphyr` reported): `YamlLoader::<MarkedYaml>` with `early_parse(false)`
//! does keep each scalar's text, style and tag with a 1-based line, so our 1.1 resolution could
//! run on it, and it has an `alias_limit`. But it lacks what this composer guarantees:
//! - duplicate keys are compared as written (text, style, tag), so `1` and `0x1` pass; with
//!   `allow_duplicate_keys(false)` the error is a bare "duplicated key in mapping" naming
//!   neither the key nor the first line, and with `true` the later value silently replaces the
//!   earlier one, so we cannot see it. A second `<<` in one mapping is refused, or replaces the
//!   first merge;
//! - tags in the `tag:yaml.org,2002:` namespace are dropped from collections
//!   (`Tag::is_yaml_core_schema` checks only the handle): `!!set`, `!!omap`, `!!str [1]`, even
//!   `!!python/tuple [1]` arrive as a plain mapping or sequence, so `!!set` cannot become its
//!   keys and misapplied or unsupported tags cannot be refused;
//! - the alias budget counts nodes, not text: 2000 aliases of a 1 MiB scalar pass (2 GiB once
//!   converted), the error is known only by its message, and a recursive alias becomes a silent
//!   `BadValue`;
//! - nesting is unbounded in block style (flow stops at the scanner's 256), and the tree is
//!   dropped recursively: 100,000 nested `- ` overflow a 256 KiB stack;
//! - every document is loaded, so a second one (or a syntax error in it) is not refused at its
//!   `---`.
//!
//! Keeping today's behaviour would take our own pass over the events for depth, documents,
//! collection tags, duplicate keys and alias weight, plus a conversion of saphyr's tree: more
//! code than this composer. Worth another look if saphyr keeps core tags on collections, bounds
//! depth and reports duplicate keys with both positions.

use std::borrow::Cow;
use std::collections::hash_map::Entry as MapEntry;
use std::collections::HashMap;
use std::path::Path;

use saphyr_parser::{Event, Parser, ScalarStyle, ScanError, Tag};

use super::error::{ManifestError, ManifestErrorKind};
use super::node::{key_string, quote_for_message, Entry, Kind, Node};
use super::scalar::{self, ScalarValue, TAG_PREFIX};

/// Deepest nesting of sequences and mappings accepted. A manifest nests four or five levels;
/// PyYAML itself gives up (Python recursion limit) a few hundred levels down.
pub const MAX_NESTING_DEPTH: usize = 128;

/// Most data that alias expansion may add, in approximate bytes (each copied node counts 64
/// bytes plus its text).
pub const MAX_ALIAS_EXPANSION_BYTES: usize = 64 * 1024 * 1024;

/// Approximate memory of one node, for the alias budget.
const NODE_WEIGHT: usize = 64;

/// Loads the single document of `text`. `file` labels errors.
pub fn load(text: &str, file: &Path) -> Result<Node, ManifestError> {
    check_characters(text, file)?;
    Loader {
        file,
        stack: Vec::new(),
        anchors: HashMap::new(),
        expanded: 0,
        root: None,
    }
    .run(text)
}

/// PyYAML's reader refuses non-printable characters anywhere in the stream (its `NON_PRINTABLE`
/// class); `saphyr-parser` would accept some of them inside scalars.
fn check_characters(text: &str, file: &Path) -> Result<(), ManifestError> {
    let printable = |c: char| {
        matches!(c, '\t' | '\n' | '\r' | ' '..='~' | '\u{85}' | '\u{A0}'..='\u{D7FF}')
            || matches!(c, '\u{E000}'..='\u{FFFD}' | '\u{10000}'..)
    };
    let Some(offset) = text.find(|c: char| !printable(c)) else {
        return Ok(());
    };
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
    let c = text[offset..].chars().next().unwrap_or_default();
    Err(ManifestError::new(
        file,
        Some(line),
        ManifestErrorKind::Syntax {
            message: format!(
                "unacceptable character U+{:04X}: control characters are not allowed",
                u32::from(c)
            ),
        },
    )
    .with_column(column))
}

/// An open collection.
struct Frame {
    line: usize,
    anchor: usize,
    shape: Shape,
    /// `!!set`: a mapping whose keys are the members.
    is_set: bool,
}

enum Shape {
    Seq(Vec<Node>),
    Map {
        /// Key and value nodes in document order; reduced to [`Entry`]s when the mapping ends.
        pairs: Vec<(Node, Node)>,
        pending_key: Option<Node>,
    },
}

/// An anchored node, with what it costs to copy for an alias.
struct Anchored {
    node: Node,
    weight: usize,
    height: usize,
}

struct Loader<'f> {
    file: &'f Path,
    stack: Vec<Frame>,
    anchors: HashMap<usize, Anchored>,
    /// Weight added by alias expansion so far.
    expanded: usize,
    root: Option<Node>,
}

impl Loader<'_> {
    fn error(&self, line: usize, kind: ManifestErrorKind) -> ManifestError {
        ManifestError::new(self.file, Some(line), kind)
    }

    fn syntax(&self, line: usize, message: impl Into<String>) -> ManifestError {
        self.error(
            line,
            ManifestErrorKind::Syntax {
                message: message.into(),
            },
        )
    }

    fn run(mut self, text: &str) -> Result<Node, ManifestError> {
        let mut parser = Parser::new_from_str(text);
        let mut documents = 0;
        while let Some(event) = parser.next_event() {
            let (event, span) = event.map_err(|e| self.scan_error(&e))?;
            let line = span.start.line();
            match event {
                Event::DocumentStart(_) => {
                    documents += 1;
                    if documents > 1 {
                        return Err(self.error(line, ManifestErrorKind::MultipleDocuments));
                    }
                }
                Event::Scalar(text, style, anchor, tag) => {
                    let node = self.scalar(text, style, tag.as_deref(), line)?;
                    self.finish_node(node, anchor)?;
                }
                Event::Alias(id) => {
                    let node = self.alias(id, line)?;
                    self.add(node)?;
                }
                Event::SequenceStart(anchor, tag) => {
                    self.open(line, anchor, tag.as_deref(), false)?;
                }
                Event::MappingStart(anchor, tag) => {
                    self.open(line, anchor, tag.as_deref(), true)?;
                }
                Event::SequenceEnd | Event::MappingEnd => {
                    // The parser balances collections; an unmatched end would be its bug,
                    // reported rather than panicked on.
                    let Some(frame) = self.stack.pop() else {
                        return Err(self.syntax(line, "end of a collection that was never opened"));
                    };
                    let anchor = frame.anchor;
                    let node = self.close(frame)?;
                    self.finish_node(node, anchor)?;
                }
                Event::StreamEnd => break,
                Event::StreamStart | Event::DocumentEnd | Event::Nothing => {}
            }
        }
        match self.root {
            Some(node)
                if !matches!(
                    node.kind,
                    Kind::Scalar {
                        value: ScalarValue::Null,
                        ..
                    }
                ) =>
            {
                Ok(node)
            }
            _ => Err(ManifestError::new(
                self.file,
                None,
                ManifestErrorKind::Empty,
            )),
        }
    }

    fn scan_error(&self, e: &ScanError) -> ManifestError {
        let marker = e.marker();
        let line = marker.line().max(1);
        // The scanner looks ahead through flow collections (`[[[...`) before the parser emits
        // their events, and stops on its own at 256 levels; that is our limit exceeded too.
        let error = if e.info() == "recursion limit exceeded" {
            self.error(
                line,
                ManifestErrorKind::TooDeep {
                    limit: MAX_NESTING_DEPTH,
                },
            )
        } else {
            self.syntax(line, e.info())
        };
        error.with_column(marker.col() + 1)
    }

    fn scalar(
        &self,
        text: Cow<'_, str>,
        style: ScalarStyle,
        tag: Option<&Tag>,
        line: usize,
    ) -> Result<Node, ManifestError> {
        let full_tag = tag.map(|tag| format!("{}{}", tag.handle, tag.suffix));
        let resolved = match full_tag.as_deref() {
            // PyYAML resolves plain untagged scalars, and anything tagged with the
            // non-specific `!` even when quoted.
            None if style == ScalarStyle::Plain => scalar::resolve_implicit(&text),
            None => Ok(ScalarValue::Str),
            Some("!") => scalar::resolve_implicit(&text),
            Some(full) => match full
                .strip_prefix(TAG_PREFIX)
                .and_then(|suffix| scalar::construct_tagged(suffix, &text))
            {
                Some(result) => result,
                None => return Err(self.unsupported_tag(full, "a scalar", line)),
            },
        };
        let value = resolved.map_err(|invalid| {
            let text = quote_for_message(&text);
            let expected = invalid.expected;
            self.syntax(
                line,
                match full_tag.as_deref() {
                    None | Some("!") => format!(
                        "{text} looks like {expected} but cannot be read as one \
                         (quote it to make it a string)"
                    ),
                    Some(full) => {
                        format!(
                            "{text} cannot be read as {expected} (tag `{}`)",
                            display_tag(full)
                        )
                    }
                },
            )
        })?;
        Ok(Node {
            kind: Kind::Scalar {
                value,
                text: text.into_owned(),
            },
            line,
        })
    }

    fn unsupported_tag(&self, full: &str, what: &str, line: usize) -> ManifestError {
        self.syntax(
            line,
            format!(
                "unsupported tag `{}` on {what} (PyYAML's safe loader cannot read it either)",
                display_tag(full)
            ),
        )
    }

    fn open(
        &mut self,
        line: usize,
        anchor: usize,
        tag: Option<&Tag>,
        is_map: bool,
    ) -> Result<(), ManifestError> {
        if self.stack.len() >= MAX_NESTING_DEPTH {
            return Err(self.error(
                line,
                ManifestErrorKind::TooDeep {
                    limit: MAX_NESTING_DEPTH,
                },
            ));
        }
        let full_tag = tag.map(|tag| format!("{}{}", tag.handle, tag.suffix));
        let suffix = full_tag.as_deref().map(|t| t.strip_prefix(TAG_PREFIX));
        let is_set = suffix == Some(Some("set"));
        let tag_fits = match suffix {
            None => true,
            Some(_) if full_tag.as_deref() == Some("!") => true,
            Some(Some("map" | "set")) => is_map,
            // `!!omap` and `!!pairs` are sequences of one-pair mappings; kept as such.
            Some(Some("seq" | "omap" | "pairs")) => !is_map,
            Some(Some("str" | "int" | "float" | "bool" | "null" | "timestamp" | "binary")) => false,
            Some(_) => {
                let full = full_tag.as_deref().unwrap_or_default();
                let what = if is_map { "a mapping" } else { "a sequence" };
                return Err(self.unsupported_tag(full, what, line));
            }
        };
        if !tag_fits {
            let what = if is_map { "a mapping" } else { "a sequence" };
            return Err(self.syntax(
                line,
                format!(
                    "tag `{}` cannot be applied to {what}",
                    display_tag(full_tag.as_deref().unwrap_or_default())
                ),
            ));
        }
        let shape = if is_map {
            Shape::Map {
                pairs: Vec::new(),
                pending_key: None,
            }
        } else {
            Shape::Seq(Vec::new())
        };
        self.stack.push(Frame {
            line,
            anchor,
            shape,
            is_set,
        });
        Ok(())
    }

    /// Builds the node of a collection that just ended.
    fn close(&self, frame: Frame) -> Result<Node, ManifestError> {
        let kind = match frame.shape {
            Shape::Seq(items) => Kind::Seq(items),
            Shape::Map { pairs, .. } => {
                let entries = self.build_mapping(pairs)?;
                if frame.is_set {
                    Kind::Seq(
                        entries
                            .into_iter()
                            .map(|entry| Node {
                                kind: Kind::Scalar {
                                    value: ScalarValue::Str,
                                    text: entry.key,
                                },
                                line: entry.key_line,
                            })
                            .collect(),
                    )
                } else {
                    Kind::Map(entries)
                }
            }
        };
        Ok(Node {
            kind,
            line: frame.line,
        })
    }

    /// Reduces key/value pairs to unique string keys, applying `<<` merges the way PyYAML's
    /// `flatten_mapping` does: merged entries come first and explicit keys override them; within
    /// a list of merged mappings the first one wins; a later `<<` overrides an earlier one.
    fn build_mapping(&self, pairs: Vec<(Node, Node)>) -> Result<Vec<Entry>, ManifestError> {
        let mut merged: Vec<Entry> = Vec::new();
        let mut explicit: Vec<Entry> = Vec::new();
        for (key, value) in pairs {
            let key_line = key.line;
            let key = match key.kind {
                Kind::Scalar {
                    value: ScalarValue::Merge,
                    ..
                } => {
                    merged.extend(self.merge_source(value, key_line)?);
                    continue;
                }
                Kind::Scalar { value, text } => key_string(&value, &text),
                Kind::Seq(_) | Kind::Map(_) => {
                    let found = key.describe();
                    return Err(self.syntax(
                        key_line,
                        format!("a mapping key must be a scalar, found {found}"),
                    ));
                }
            };
            explicit.push(Entry {
                key,
                key_line,
                value,
            });
        }
        let mut entries: Vec<Entry> = Vec::with_capacity(merged.len() + explicit.len());
        // Key -> (index in `entries`, whether it was written explicitly in this mapping).
        let mut index: HashMap<String, (usize, bool)> = HashMap::new();
        for entry in merged {
            match index.entry(entry.key.clone()) {
                MapEntry::Occupied(slot) => entries[slot.get().0] = entry,
                MapEntry::Vacant(slot) => {
                    slot.insert((entries.len(), false));
                    entries.push(entry);
                }
            }
        }
        for entry in explicit {
            match index.entry(entry.key.clone()) {
                MapEntry::Occupied(mut slot) => {
                    let (at, was_explicit) = *slot.get();
                    if was_explicit {
                        return Err(self.error(
                            entry.key_line,
                            ManifestErrorKind::DuplicateKey {
                                key: entry.key,
                                first_line: entries[at].key_line,
                            },
                        ));
                    }
                    slot.insert((at, true));
                    entries[at] = entry;
                }
                MapEntry::Vacant(slot) => {
                    slot.insert((entries.len(), true));
                    entries.push(entry);
                }
            }
        }
        Ok(entries)
    }

    /// The entries a `<<` value contributes, in the order PyYAML applies them (later wins).
    fn merge_source(&self, value: Node, key_line: usize) -> Result<Vec<Entry>, ManifestError> {
        let not_mapping = |node: &Node| {
            self.syntax(
                node.line,
                format!(
                    "a `<<` merge key needs a mapping or a list of mappings, found {}",
                    node.describe()
                ),
            )
        };
        match value.kind {
            Kind::Map(entries) => Ok(entries),
            Kind::Seq(items) => {
                let mut sources = Vec::with_capacity(items.len());
                for item in items {
                    match item.kind {
                        Kind::Map(entries) => sources.push(entries),
                        _ => return Err(not_mapping(&item)),
                    }
                }
                // PyYAML reverses the list so that the first mapping is applied last and wins.
                Ok(sources.into_iter().rev().flatten().collect())
            }
            Kind::Scalar { .. } => Err(not_mapping(&Node {
                line: key_line,
                ..value
            })),
        }
    }

    fn alias(&mut self, id: usize, line: usize) -> Result<Node, ManifestError> {
        let Some(anchored) = self.anchors.get(&id) else {
            return Err(self.syntax(
                line,
                "alias refers to a collection that contains it (recursive aliases are not allowed)",
            ));
        };
        if self.stack.len() + anchored.height > MAX_NESTING_DEPTH {
            return Err(self.error(
                line,
                ManifestErrorKind::TooDeep {
                    limit: MAX_NESTING_DEPTH,
                },
            ));
        }
        self.expanded = self.expanded.saturating_add(anchored.weight);
        if self.expanded > MAX_ALIAS_EXPANSION_BYTES {
            return Err(self.error(
                line,
                ManifestErrorKind::AliasBomb {
                    limit: MAX_ALIAS_EXPANSION_BYTES,
                },
            ));
        }
        let mut node = anchored.node.clone();
        node.line = line;
        Ok(node)
    }

    /// Registers a completed node's anchor, then adds the node to its parent.
    fn finish_node(&mut self, node: Node, anchor: usize) -> Result<(), ManifestError> {
        if anchor != 0 {
            let (weight, height) = measure(&node);
            self.anchors.insert(
                anchor,
                Anchored {
                    node: node.clone(),
                    weight,
                    height,
                },
            );
        }
        self.add(node)
    }

    fn add(&mut self, node: Node) -> Result<(), ManifestError> {
        let is_key = matches!(
            self.stack.last(),
            Some(Frame {
                shape: Shape::Map {
                    pending_key: None,
                    ..
                },
                ..
            })
        );
        if let (
            false,
            Kind::Scalar {
                value: ScalarValue::Merge | ScalarValue::Equals,
                text,
            },
        ) = (is_key, &node.kind)
        {
            return Err(self.syntax(
                node.line,
                format!(
                    "a plain `{text}` is only allowed as a mapping key (PyYAML cannot read it \
                     as a value; quote it to make it a string)"
                ),
            ));
        }
        match self.stack.last_mut() {
            None => self.root = Some(node),
            Some(Frame {
                shape: Shape::Seq(items),
                ..
            }) => items.push(node),
            Some(Frame {
                shape: Shape::Map { pairs, pending_key },
                ..
            }) => match pending_key.take() {
                None => *pending_key = Some(node),
                Some(key) => pairs.push((key, node)),
            },
        }
        Ok(())
    }
}

/// Weight (for the alias budget) and height (nesting levels) of a node. Recursion is bounded by
/// [`MAX_NESTING_DEPTH`], which every node in the tree respects.
fn measure(node: &Node) -> (usize, usize) {
    match &node.kind {
        Kind::Scalar { text, .. } => (NODE_WEIGHT + text.len(), 0),
        Kind::Seq(items) => items.iter().fold((NODE_WEIGHT, 1), |(w, h), item| {
            let (iw, ih) = measure(item);
            (w.saturating_add(iw), h.max(ih + 1))
        }),
        Kind::Map(entries) => entries.iter().fold((NODE_WEIGHT, 1), |(w, h), entry| {
            let (vw, vh) = measure(&entry.value);
            (
                w.saturating_add(NODE_WEIGHT + entry.key.len())
                    .saturating_add(vw),
                h.max(vh + 1),
            )
        }),
    }
}

/// Shows a core tag in its short form (`!!int`), others as written.
fn display_tag(full: &str) -> String {
    match full.strip_prefix(TAG_PREFIX) {
        Some(suffix) => format!("!!{suffix}"),
        None => full.to_owned(),
    }
}
