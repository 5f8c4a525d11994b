//! Typed values of a `.holo` archive shared by the loader and the writer.

use std::collections::HashMap;

pub use crate::schema::holo::{SectionKind, ShapeEntry as ShapeDescriptor};

/// A 32-byte BLAKE3 content fingerprint.
pub type Fingerprint = [u8; 32];

/// Constants whose body is longer than this many bytes are stored by reference
/// into the Weights pool; shorter ones are inlined.
pub const INLINE_CONSTANT_LIMIT: usize = 4096;

/// One entry of the section table, with a known kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SectionRef {
    /// The section kind.
    pub kind: SectionKind,
    /// Absolute offset of the payload.
    pub offset: u64,
    /// Payload length in bytes.
    pub length: u64,
}

/// A model input or output: which workspace slot it maps to, its name, element
/// type and shape.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct PortDescriptor {
    /// Semantic name (`input_ids`, `logits`, …); empty for an unnamed port.
    pub name: String,
    /// Workspace slot.
    pub slot: u32,
    /// Total element count (the product of `shape` when the shape is known).
    pub element_count: u64,
    /// Element type code.
    pub dtype: u8,
    /// Row-major dimensions; empty when the rank is unknown.
    pub shape: Vec<u64>,
}

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

/// Lowercase hexadecimal of `bytes`.
#[doc(hidden)]
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(char::from(DIGITS[usize::from(b >> 4)]));
        s.push(char::from(DIGITS[usize::from(b & 0xF)]));
    }
    s
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

    #[test]
    fn hex_digits() {
        assert_eq!(hex(&[0x00, 0xAB, 0x7F]), "00ab7f");
    }
}
