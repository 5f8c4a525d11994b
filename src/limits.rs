//! Resource limits a reader enforces on untrusted files, checked before allocating.

/// Upper bounds on what a file may make the reader hold or walk. A file beyond a
/// limit is refused with an error naming the limit (rule `HF-LIM-001`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Most tensors (index entries) a file may declare.
    pub max_tensors: u64,
    /// Longest tensor name or KV key, in bytes.
    pub max_name_length: u16,
    /// Highest descriptor rank (the spec's cap is 64).
    pub max_rank: u32,
    /// Most KV entries.
    pub max_kv_entries: u32,
    /// Largest index section, in bytes.
    pub max_index_bytes: u64,
    /// Largest KV section, in bytes.
    pub max_kv_bytes: u64,
    /// Largest single descriptor, in bytes.
    pub max_descriptor_bytes: u32,
    /// Deepest tiled nesting (the spec recommends 8).
    pub max_tiled_depth: u32,
    /// Deepest composite nesting (the spec requires 8).
    pub max_composite_depth: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_tensors: 10_000_000,
            max_name_length: u16::MAX,
            max_rank: 64,
            max_kv_entries: 1_000_000,
            max_index_bytes: 1 << 30,
            max_kv_bytes: u32::MAX as u64,
            max_descriptor_bytes: 16 << 20,
            max_tiled_depth: 8,
            max_composite_depth: 8,
        }
    }
}
