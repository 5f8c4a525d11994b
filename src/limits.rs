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
    /// Largest transport message payload a validator or peer reads, in bytes
    /// (`TR-LIM-001` beyond it; interchange.md § Limits).
    pub max_message_size: u32,
    /// Most memory one operation (opening, validating, inspecting, loading,
    /// exporting a file) may hold for what the input describes, in bytes: the cap
    /// of its budget, which otherwise grows with the bytes read (see
    /// `hrry::decode::budget`). Beyond it, `HF-LIM-001` naming `max_memory`.
    pub max_memory: u64,
}

/// Default cap of an operation's memory budget (2 GiB): [`Limits::max_memory`].
pub const DEFAULT_MAX_MEMORY: u64 = 2 << 30;

/// Default largest transport message payload (64 MiB): [`Limits::max_message_size`].
pub const DEFAULT_MAX_MESSAGE_SIZE: u32 = 64 << 20;

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
            max_message_size: DEFAULT_MAX_MESSAGE_SIZE,
            max_memory: DEFAULT_MAX_MEMORY,
        }
    }
}

/// One of the [`Limits`], named in a violation of `HF-LIM-001` so that a caller can
/// tell which limit a file went past (and raise it, if the file is trusted).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Limit {
    /// [`Limits::max_tensors`].
    Tensors,
    /// [`Limits::max_name_length`].
    NameLength,
    /// [`Limits::max_rank`].
    Rank,
    /// [`Limits::max_kv_entries`].
    KvEntries,
    /// [`Limits::max_index_bytes`].
    IndexBytes,
    /// [`Limits::max_kv_bytes`].
    KvBytes,
    /// [`Limits::max_descriptor_bytes`].
    DescriptorBytes,
    /// [`Limits::max_tiled_depth`].
    TiledDepth,
    /// [`Limits::max_composite_depth`].
    CompositeDepth,
    /// A size the reader would have to allocate at once (a tensor's data, a message).
    Allocation,
    /// [`Limits::max_memory`]: the operation's memory budget.
    Memory,
}

impl Limit {
    /// The name of the [`Limits`] field (`max_tensors`, …).
    pub fn name(self) -> &'static str {
        match self {
            Limit::Tensors => "max_tensors",
            Limit::NameLength => "max_name_length",
            Limit::Rank => "max_rank",
            Limit::KvEntries => "max_kv_entries",
            Limit::IndexBytes => "max_index_bytes",
            Limit::KvBytes => "max_kv_bytes",
            Limit::DescriptorBytes => "max_descriptor_bytes",
            Limit::TiledDepth => "max_tiled_depth",
            Limit::CompositeDepth => "max_composite_depth",
            Limit::Allocation => "allocation",
            Limit::Memory => "max_memory",
        }
    }
}

impl std::fmt::Display for Limit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
