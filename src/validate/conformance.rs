//! The requirements of the spec no rule checks, each with the reason ([`UNCHECKED`]):
//! with the rule table, what the conformance map `hrry rules --markdown` prints
//! (`docs/conformance.md`, kept current by a test) is made of.

/// Why a requirement has no rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Reason {
    /// It binds what a program does with the bytes (a reader's or consumer's
    /// behaviour at run time), not the bytes themselves. Where hrry is that program,
    /// its own code keeps it.
    Runtime,
    /// It binds a writer's intent or knowledge, which the bytes do not record.
    WriterOnly,
    /// It binds a transport conversation (interchange.md), not a file.
    Transport,
    /// It holds by construction of the encoding: no byte sequence can break it.
    ByConstruction,
    /// It binds the specification's own evolution, not implementations' data.
    SpecProcess,
    /// The project's reading of the spec (docs/interpretations.md) decides that it
    /// is not a rejection.
    Reading,
}

impl Reason {
    /// The heading the doc lists these requirements under.
    pub fn title(self) -> &'static str {
        match self {
            Reason::Runtime => "Behaviour at run time",
            Reason::WriterOnly => "A writer's intent, not recorded in the bytes",
            Reason::Transport => "Transport conversations",
            Reason::ByConstruction => "True of every encodable file",
            Reason::SpecProcess => "The specification's own evolution",
            Reason::Reading => "Settled by the project's reading",
        }
    }
}

/// A requirement of the spec that no rule checks.
#[derive(Clone, Copy, Debug)]
pub struct Unchecked {
    /// Spec file and section, as in [`super::Rule::spec`].
    pub spec: &'static str,
    /// What is required, in our words.
    pub requirement: &'static str,
    /// Why no rule checks it.
    pub reason: Reason,
    /// Detail on the reason (what covers it instead, if anything).
    pub note: &'static str,
}

macro_rules! unchecked {
    ($($reason:ident, $spec:literal, $req:literal, $note:literal;)+) => {
        &[$(Unchecked { spec: $spec, requirement: $req, reason: Reason::$reason, note: $note }),+]
    };
}

/// Every requirement deliberately left without a rule.
pub static UNCHECKED: &[Unchecked] = unchecked! {
    ByConstruction, "file-format.md § File Layout; metadata.md § Overall Descriptor Structure; element-types.md § Byte Order",
        "multi-byte fields and element data are little-endian",
        "every byte sequence has a little-endian reading; hrry reads and writes little-endian only";
    ByConstruction, "metadata.md § shape; data-model.md § Shape",
        "every dimension is at least 0",
        "dimensions are unsigned";
    ByConstruction, "metadata.md § byte_offset; memory-layout.md § byte_offset; element-types.md § Type Properties Summary",
        "sub-byte data starts on a byte boundary",
        "byte_offset counts bytes";
    ByConstruction, "metadata.md § Shard Section",
        "parent_shape has the tensor's rank",
        "the section holds exactly rank entries of each array";
    ByConstruction, "layouts/row-major.md § Description; layouts/column-major.md § Description",
        "row- and column-major descriptors carry no strides",
        "the layout has no stride field; extra bytes inside descriptor_length are minor-version growth";
    ByConstruction, "memory-layout.md § Extension Layouts",
        "an extension layout descriptor holds an id and length-prefixed data",
        "the schema reads exactly those fields; a descriptor too short for them breaks TD-HDR-004";
    ByConstruction, "quantization.md § Descriptor Header",
        "quantization_length covers header, scheme fields and writer padding",
        "it is the length of what follows by definition; shorter than the scheme's fields is QZ-LEN-001";
    ByConstruction, "metadata.md § Buffer Table",
        "more than 255 buffers need several descriptors",
        "buffer_count is one byte";
    WriterOnly, "file-format.md § File Header",
        "a writer that does not know the tensor count writes 0xFFFFFFFFFFFFFFFF as tensor_count_hint",
        "whether the writer knew is not recorded; the hint is advisory and never judged (docs/interpretations.md § Container)";
    WriterOnly, "metadata.md § Statistics Section",
        "a streaming writer omits statistics it has not computed, and marks fields it did not compute as not valid",
        "the bytes do not say what the writer computed; statistics are advisory, only their encoded ranges are checked (TD-STA-*)";
    WriterOnly, "quantization/per-tensor-affine.md § Binary Encoding",
        "a symmetric per-tensor tensor has zero_point 0",
        "per-tensor affine has no SYMMETRIC flag, so symmetry is not recorded; the zero point's range is QT-ZPT-001";
    WriterOnly, "versioning.md § Writer Requirements",
        "a writer emits the lowest versions whose features it uses",
        "which features a writer meant to use is not recorded; readers skip unknown trailing bytes";
    WriterOnly, "file-format.md § Writer Protocol",
        "a writer never seeks backward",
        "a property of how the file was produced; hrry's writer is single-pass";
    WriterOnly, "layouts/block-paged.md § Framework Compliance",
        "a producer transposes kernel-internal caches to the interchange layout",
        "the bytes of either arrangement are a valid pool";
    WriterOnly, "buffer-protocol.md § Page Alignment for GPU and IPC",
        "writers targeting GPU, IPC or RDMA transport declare alignment of at least 4096",
        "a file does not say which transport it targets; in a file every buffer sits on a data_buffer_alignment (>= 4096) boundary anyway";
    WriterOnly, "metadata.md § Extension Type Section",
        "a portable non-power-of-two sub-byte type is requested as a built-in tag",
        "a process requirement; an extension type of such a width breaks TD-EXT-003";
    Runtime, "file-format.md § Sequential Reader (No Seek)",
        "a sequential reader follows offsets, never data content, and never treats the trailer as tensor data",
        "hrry's SequentialReader does so; nothing in a file can break it";
    Runtime, "file-format.md § Composite Tensors; layouts/composite.md § Torn composite",
        "a permissive reader never presents a torn composite as complete",
        "hrry's reader API reports the composite incomplete; a torn composite is HF-CMP-001 in every mode";
    Runtime, "metadata.md § Fixed Header; quantization.md § Descriptor Header",
        "a reader never reads past descriptor_length or quantization_length",
        "hrry parses each from a slice of exactly that length; fields that do not fit are TD-HDR-004 or QZ-LEN-001";
    Runtime, "data-model.md § Dynamic Dimensions; metadata.md § shape",
        "a reader computes no size from a dynamic dimension, and the value is resolved before data moves",
        "hrry never does; a stored dynamic dimension is TD-SHP-002 (hardening), on a quantization axis QC/QB/QN/QM-AXS-002";
    Runtime, "element-types.md § Type Identifier Encoding; memory-layout.md § Layout Taxonomy; quantization.md § Descriptor Header; layouts/composite.md § Head Descriptor",
        "in permissive mode a reader does not interpret data of unknown types, layouts or schemes",
        "hrry's permissive allowances skip such data (QZ-TAG-003 becomes a note)";
    Runtime, "element-types.md § Tier 1 -- Core Types; quantization.md § Scheme Tag Space",
        "implementations support every Tier 1 type and scheme",
        "hrry reads every built-in type, layout and scheme";
    Runtime, "element-types.md § Float8 Variants (and every type's section)",
        "bit patterns are preserved exactly in zero-copy interchange",
        "hrry returns buffers as borrowed bytes; its writer copies bytes unchanged";
    Runtime, "element-types.md § Sub-Byte Floating-Point Types",
        "hardware clamps float4_e2m1 values outside [-6, 6]",
        "a property of computation, not of stored codes";
    Runtime, "metadata.md § computed_mask; metadata.md § Statistics Section",
        "a reader uses a statistic only when its bit is set, and never for correctness",
        "hrry uses statistics for nothing but the LY-SPR-002 cross-check";
    Runtime, "metadata.md § Extension Type Section",
        "a reader sizes buffers of extension types from bit_width and packing_factor",
        "hrry does (TD-BUF-005 and the layout size rules use them)";
    Runtime, "memory-layout.md § Sub-Byte Types; layouts/hilbert.md § Normative Index Mapping; layouts/tiled.md § Boundary Padding",
        "addressing follows the normative formulas (6-bit types by group, Hilbert by the reference algorithm) and never reads tile padding",
        "implementation properties, tested against the spec's examples (tests/layout/dense.rs, tests/layout/properties.rs)";
    Runtime, "layouts/coo.md § Storage Order; layouts/csf.md § Mode Ordering",
        "unsorted COO is searched linearly; any valid mode_order is honoured and not rejected",
        "reader behaviour; hrry's sparse readers do both (tests/layout/sparse.rs)";
    Runtime, "layouts/block-paged.md § Storage Invariants",
        "a reader never reads past a sequence's valid token count",
        "token counts are not stored, so hrry exposes the page pool (dequantization included) and no logical view";
    Runtime, "quantization.md § Partial Block Policy; quantization/per-block-affine.md § Dequantization Formula; quantization/nf4.md § Lookup Table",
        "dequantization applies each scheme's formula, partial-block rule, scale widening and NF4 table exactly",
        "properties of hrry's dequantizer, tested against the scalar reference and the upstream vectors";
    Runtime, "buffer-protocol.md § Empty Buffers; § Per-Device Memory Model",
        "empty buffers and device pointers are never dereferenced from the host",
        "pointer handling in a process, not file content";
    Runtime, "buffer-protocol.md § Buffer Ownership and Lifetime; § Release Callback; § Reference Counting; § Zero-Copy Invariants",
        "ownership, release callbacks, immutability and pointer stability during a handoff",
        "in-process and IPC handoff semantics (the C ABI's concern), not file content";
    Runtime, "buffer-protocol.md § Producer Requirement; § Consumer Requirement; § Relationship to the Release Callback",
        "producers synchronise device writes before handoff; consumers honour sync_mode",
        "run-time synchronisation; the declared sync_mode is checked (TD-BUF-007, TD-BUF-008)";
    Runtime, "buffer-protocol.md § Backward Compatibility; § Per-Device Validity",
        "consumers never treat an unknown memory class as STANDARD; producers verify hardware before declaring UNIFIED",
        "run-time decisions; unknown classes are rejected (TD-BUF-009, TD-BUF-010)";
    Runtime, "metadata.md § Version Compatibility; versioning.md § Compatibility Matrix",
        "a reader of an older minor version ignores later optional fields",
        "hrry keeps bytes after the known fields as trailing data and interprets none of them";
    Transport, "interchange.md § Server Layout Selection; § On-the-Fly Transcoding; § Device Negotiation",
        "a server serves the first satisfiable preferred layout, transcodes element-preserving within its memory limit, and places buffers on the preferred device or refuses",
        "server decisions that depend on what it stores and can do; a conversation shows only their outcome, whose messages the TR- rules check";
    Transport, "interchange.md § Message Framing; § Message Types; § Error Handling",
        "a receiver answers an oversized, unknown or malformed message with ERROR and closes the stream",
        "receiver behaviour; the conversation validator reports the fault (TR-LIM-001, TR-FRM-002, TR-MSG-001, TR-MSG-004) and stream::message::error_code_for names the code to send";
    Transport, "interchange.md § GPUDirect Destination Registration; § TENSOR_PUT with RDMA",
        "a registered region's memory is on the device the descriptor names; RDMA completes before TENSOR_DATA_END",
        "facts of the peers' memory and RDMA hardware, absent from the messages; their order and lengths are TR-RDM-001 to TR-RDM-003";
    Transport, "buffer-protocol.md § Device Colocation; § Per-Transport Constraints",
        "a server never moves a TENSOR_PUT's buffers to another device",
        "server behaviour; within a descriptor colocation is TD-BUF-013, and cross-machine sync_mode 0 is TR-DSC-003";
    SpecProcess, "versioning.md (amendment, stability and registry sections); quantization.md § Version Compatibility",
        "how future versions allocate tags, fields and version numbers",
        "binds the specification's authors";
    SpecProcess, "element-types.md § Type Identifier Encoding; versioning.md § Stability Commitments",
        "implementations assign no meaning to reserved tag ranges",
        "reserved tags in a file are rejected by their rules (TD-TYP-001, TD-LAY-001, QZ-TAG-002, HF-KV-006, TD-BUF-009, TD-BUF-011)";
    SpecProcess, "memory-layout.md § Custom Layouts",
        "opaque custom layouts use extension tags with an out-of-band agreement",
        "a design rule; unrecognised extension layouts are TD-LAY-003";
    Reading, "element-types.md § Type Identifier Encoding",
        "tensors with private element types are not exchanged without agreement",
        "docs/interpretations.md § Descriptor: a private type described by an extension type section is accepted";
    Reading, "layouts/morton.md § Buffer Size; layouts/block-paged.md § Storage Invariants; layouts/*.md § Buffer Size",
        "buffers hold the stated number of elements",
        "read as minimums (docs/interpretations.md § Descriptor, docs/interpretations.md § Layouts), except Hilbert's \"exactly\" (LY-HIL-005) and parameter buffers";
    ByConstruction, "layouts/block-paged.md § Storage Invariants",
        "seq_ptr[num_seqs] equals the total logical pages",
        "total_logical_pages is defined by seq_ptr[num_seqs]; what is checkable is LY-BP-008 to LY-BP-011 and LY-BP-014";
};
