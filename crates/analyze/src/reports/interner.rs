//! Range names stored once: rows carry a [`NameId`] instead of a `String`.
//!
//! A trace has millions of ranges but only a handful of distinct names, so rows stay small
//! (all-numeric) and comparing names is comparing integers.

use std::hash::BuildHasher;

use hashbrown::HashTable;
use rustc_hash::FxBuildHasher;

/// The id of an interned name. Ids are dense (`0..interner.len()`), in order of first
/// appearance, so ordering by id is ordering by first appearance, not by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NameId(pub u32);

/// Maps names to [`NameId`]s and back.
///
/// Names are stored once, one after another in a single buffer (a trace can have hundreds
/// of thousands of distinct names, such as `iteration 123456`: no allocation each), and the
/// table holds ids, hashed and compared by the bytes they point to. rustc's Fx hash: much
/// faster than SipHash on short keys, and hash flooding is no concern for names from the
/// user's own trace.
#[derive(Default, Clone)]
pub struct Interner {
    text: String,
    /// Where each name ends in `text` (it starts where the one before it ends).
    ends: Vec<usize>,
    table: HashTable<u32>,
}

/// Why [`Interner::intern_bytes`] failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InternError {
    /// Not UTF-8; the offset of the first bad byte.
    NotUtf8(usize),
    /// More than `u32::MAX` distinct names.
    Full,
}

fn hash(name: &[u8]) -> u64 {
    FxBuildHasher.hash_one(name)
}

impl Interner {
    pub fn new() -> Self {
        Self::default()
    }

    /// The id of `name`, adding it when new.
    ///
    /// # Panics
    /// When more than `u32::MAX` distinct names are interned (billions of distinct range
    /// names; the report readers use [`Interner::try_intern`] and return an error instead).
    pub fn intern(&mut self, name: &str) -> NameId {
        self.try_intern(name)
            .expect("more than u32::MAX distinct names interned")
    }

    /// Like [`Interner::intern`], but `None` instead of a panic when the ids run out.
    pub fn try_intern(&mut self, name: &str) -> Option<NameId> {
        self.intern_bytes(name.as_bytes()).ok()
    }

    /// Interns a name given as bytes, checking that it is UTF-8 only when it is new.
    pub fn intern_bytes(&mut self, name: &[u8]) -> Result<NameId, InternError> {
        let h = hash(name);
        let (text, ends) = (&self.text, &self.ends);
        if let Some(&id) = self.table.find(h, |&id| bytes_of(text, ends, id) == name) {
            return Ok(NameId(id));
        }
        let name = std::str::from_utf8(name).map_err(|e| InternError::NotUtf8(e.valid_up_to()))?;
        let id = u32::try_from(self.ends.len()).map_err(|_| InternError::Full)?;
        self.text.push_str(name);
        self.ends.push(self.text.len());
        let (text, ends) = (&self.text, &self.ends);
        self.table
            .insert_unique(h, id, |&id| hash(bytes_of(text, ends, id)));
        Ok(NameId(id))
    }

    /// Makes room for the names of `other`, to be interned next.
    pub fn reserve_for(&mut self, other: &Interner) {
        let names = other.len();
        self.text.reserve(other.text.len());
        self.ends.reserve(names);
        let (text, ends) = (&self.text, &self.ends);
        self.table
            .reserve(names, |&id| hash(bytes_of(text, ends, id)));
    }

    /// The id of `name` if it was interned.
    pub fn get(&self, name: &str) -> Option<NameId> {
        let (text, ends) = (&self.text, &self.ends);
        self.table
            .find(hash(name.as_bytes()), |&id| {
                bytes_of(text, ends, id) == name.as_bytes()
            })
            .map(|&id| NameId(id))
    }

    /// The name of `id`.
    ///
    /// # Panics
    /// When `id` did not come from this interner.
    pub fn resolve(&self, id: NameId) -> &str {
        let (start, end) = span(&self.ends, id.0);
        &self.text[start..end]
    }

    /// The names, by id.
    pub fn names(&self) -> impl ExactSizeIterator<Item = &str> + '_ {
        (0..self.ends.len()).map(|i| self.resolve(NameId(i as u32)))
    }

    /// Number of distinct names.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }
}

impl std::fmt::Debug for Interner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}

/// Where name `id` is in the text.
fn span(ends: &[usize], id: u32) -> (usize, usize) {
    let i = id as usize;
    let start = if i == 0 { 0 } else { ends[i - 1] };
    (start, ends[i])
}

fn bytes_of<'a>(text: &'a str, ends: &[usize], id: u32) -> &'a [u8] {
    let (start, end) = span(ends, id);
    &text.as_bytes()[start..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interns_once_and_resolves() {
        let mut interner = Interner::new();
        assert!(interner.is_empty());
        let a = interner.intern("a");
        let b = interner.intern("b,\"\n");
        assert_eq!(interner.intern("a"), a);
        assert_ne!(a, b);
        assert_eq!(interner.len(), 2);
        assert_eq!(interner.resolve(a), "a");
        assert_eq!(interner.resolve(b), "b,\"\n");
        assert_eq!(interner.get("b,\"\n"), Some(b));
        assert_eq!(interner.get("c"), None);
        assert_eq!(a, NameId(0));
        assert_eq!(b, NameId(1));
        // Prefixes of one another and strings differing only past 8 bytes stay distinct.
        let long1 = interner.intern("12345678x");
        let long2 = interner.intern("12345678y");
        let short = interner.intern("12345678");
        assert_ne!(long1, long2);
        assert_ne!(long1, short);
        assert_eq!(interner.resolve(short), "12345678");
        assert_eq!(
            interner.intern_bytes(b"ok\xff"),
            Err(InternError::NotUtf8(2))
        );
        assert_eq!(interner.intern_bytes(b"a"), Ok(a));
    }
}

#[cfg(test)]
mod spread {
    use std::hash::BuildHasher;

    /// Names that differ only in a trailing number (`iteration 0` .. `iteration 999`) must
    /// not share the low hash bits the table indexes by: a hand-written Fx hash without a
    /// final mix did exactly that, and interning went quadratic.
    #[test]
    fn numbered_names_spread_over_buckets() {
        let hasher = rustc_hash::FxBuildHasher;
        let buckets: std::collections::HashSet<u64> = (0..1000)
            .map(|i| hasher.hash_one(format!("iteration {i}").as_bytes()) & 1023)
            .collect();
        assert!(buckets.len() > 500, "{} distinct buckets", buckets.len());
    }
}
