//! What a file's KV metadata looks like to C: the keys as NUL-terminated strings
//! and the values' text renderings, kept as long as the file.

use std::sync::OnceLock;

use hrry::file::HrryFile;

/// The KV keys as NUL-terminated strings and the text renderings made so far, kept
/// so that what C is handed lives as long as the file.
pub(crate) struct KvTable {
    /// Every key followed by a NUL, in file order.
    keys: Box<[u8]>,
    /// Where each key starts in `keys`.
    key_starts: Box<[usize]>,
    /// Each value as text, NUL-terminated, made when first asked for.
    texts: Box<[OnceLock<Box<[u8]>>]>,
}

impl KvTable {
    /// The table of `file`'s KV keys, with no text rendered yet.
    pub(crate) fn new(file: &HrryFile<'_>) -> Self {
        let mut keys = Vec::new();
        let mut key_starts = Vec::with_capacity(file.kv().len());
        for entry in file.kv() {
            key_starts.push(keys.len());
            keys.extend_from_slice(&entry.key);
            keys.push(0);
        }
        KvTable {
            keys: keys.into_boxed_slice(),
            key_starts: key_starts.into_boxed_slice(),
            texts: file.kv().iter().map(|_| OnceLock::new()).collect(),
        }
    }

    /// Key `i` followed by its NUL (`i` is in range: the caller found entry `i`).
    pub(crate) fn key(&self, i: usize) -> &[u8] {
        &self.keys[self.key_starts[i]..]
    }

    /// Value `i` as text followed by a NUL, rendered by `render` the first time it
    /// is asked for (`i` is in range, as for [`KvTable::key`]).
    pub(crate) fn text(&self, i: usize, render: impl FnOnce() -> String) -> &[u8] {
        self.texts[i].get_or_init(|| {
            let mut bytes = render().into_bytes();
            bytes.push(0);
            bytes.into_boxed_slice()
        })
    }
}
