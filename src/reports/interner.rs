//! Range names stored once: rows carry a [`NameId`] instead of a `String`.
//!
//! A trace has millions of ranges but only a handful of distinct names, so rows stay small
//! (all-numeric) and comparing names is comparing integers.

use rustc_hash::FxHashMap;

/// The id of an interned name. Ids are dense (`0..interner.len()`), in order of first
/// appearance, so ordering by id is ordering by first appearance, not by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NameId(pub u32);

/// Maps names to [`NameId`]s and back.
#[derive(Debug, Default, Clone)]
pub struct Interner {
    /// Keyed by bytes, so that the readers can look a name up before checking that it is
    /// UTF-8 (only a new name needs the check). rustc's Fx hash: much faster than SipHash on
    /// short keys, and hash flooding is no concern for names from the user's own trace.
    ids: FxHashMap<Box<[u8]>, NameId>,
    names: Vec<Box<str>>,
}

/// Why [`Interner::intern_bytes`] failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum InternError {
    /// Not UTF-8; the offset of the first bad byte.
    NotUtf8(usize),
    /// More than `u32::MAX` distinct names.
    Full,
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
    pub(crate) fn intern_bytes(&mut self, name: &[u8]) -> Result<NameId, InternError> {
        if let Some(&id) = self.ids.get(name) {
            return Ok(id);
        }
        let text = std::str::from_utf8(name).map_err(|e| InternError::NotUtf8(e.valid_up_to()))?;
        let id = NameId(u32::try_from(self.names.len()).map_err(|_| InternError::Full)?);
        self.names.push(text.into());
        self.ids.insert(name.into(), id);
        Ok(id)
    }

    /// The id of `name` if it was interned.
    pub fn get(&self, name: &str) -> Option<NameId> {
        self.ids.get(name.as_bytes()).copied()
    }

    /// The name of `id`.
    ///
    /// # Panics
    /// When `id` did not come from this interner.
    pub fn resolve(&self, id: NameId) -> &str {
        &self.names[id.0 as usize]
    }

    /// The names, by id.
    pub fn names(&self) -> impl ExactSizeIterator<Item = &str> + '_ {
        self.names.iter().map(|n| &**n)
    }

    /// Number of distinct names.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
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
