//! Typed values of a `.holo` archive shared by the loader and the writer (those the
//! decoder makes are the decode layer's, re-exported here).

use std::collections::HashMap;

pub use crate::decode::holo::{hex, Fingerprint, PortDescriptor, SectionRef};
pub use crate::schema::holo::{SectionKind, ShapeEntry as ShapeDescriptor};

/// Constants whose body is longer than this many bytes are stored by reference
/// into the Weights pool; shorter ones are inlined.
pub const INLINE_CONSTANT_LIMIT: usize = 4096;

/// Weight bodies keyed by their BLAKE3 hash, each stored once, kept in
/// first-insertion order so equal inputs encode to equal bytes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WeightStore {
    entries: Vec<(Fingerprint, Vec<u8>)>,
    index: HashMap<Fingerprint, usize>,
}

impl WeightStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a body and returns its fingerprint; a body already present is not
    /// stored again.
    pub fn insert(&mut self, body: Vec<u8>) -> Fingerprint {
        let fingerprint = *blake3::hash(&body).as_bytes();
        if !self.index.contains_key(&fingerprint) {
            self.index.insert(fingerprint, self.entries.len());
            self.entries.push((fingerprint, body));
        }
        fingerprint
    }

    /// The body with `fingerprint`, if stored.
    pub fn get(&self, fingerprint: &Fingerprint) -> Option<&[u8]> {
        let i = *self.index.get(fingerprint)?;
        self.entries.get(i).map(|(_, b)| b.as_slice())
    }

    /// Whether a body with `fingerprint` is stored.
    pub fn contains(&self, fingerprint: &Fingerprint) -> bool {
        self.index.contains_key(fingerprint)
    }

    /// The stored `(fingerprint, body)` pairs in insertion order.
    pub fn iter(&self) -> impl Iterator<Item = (&Fingerprint, &[u8])> {
        self.entries.iter().map(|(f, b)| (f, b.as_slice()))
    }

    /// Number of distinct bodies.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when no body is stored.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// A constant as the writer takes it: the slot it fills, its element type and its
/// bytes. The writer decides whether the body is inlined or stored by reference.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Constant {
    /// Workspace slot.
    pub slot: u32,
    /// Element type code.
    pub dtype: u8,
    /// The constant's bytes.
    pub bytes: Vec<u8>,
}

/// A constant as the loader gives it: its bytes are borrowed from the archive
/// (from the Constants section when inline, from Weights when by reference).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConstantView<'a> {
    /// Workspace slot.
    pub slot: u32,
    /// Element type code.
    pub dtype: u8,
    /// The Weights fingerprint when the constant is stored by reference.
    pub fingerprint: Option<Fingerprint>,
    /// The constant's bytes.
    pub bytes: &'a [u8],
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_deduplicates_in_insertion_order() {
        let mut s = WeightStore::new();
        let a = s.insert(b"alpha".to_vec());
        let b = s.insert(b"beta".to_vec());
        assert_eq!(s.insert(b"alpha".to_vec()), a);
        assert_eq!(s.len(), 2);
        let order: Vec<_> = s.iter().map(|(f, _)| *f).collect();
        assert_eq!(order, vec![a, b]);
        assert_eq!(s.get(&b), Some(&b"beta"[..]));
        assert_eq!(a, *blake3::hash(b"alpha").as_bytes());
    }
}
