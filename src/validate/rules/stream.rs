//! Rules of bare Hurray streams (interchange.md § Scope, the back-to-back encoding of the
//! Hurray spec's ADR-010; docs/interpretations.md § Streams and the transport).
//! Descriptor, layout and composite rules apply to a stream's tensors as they do in a
//! file.

crate::declare_rules! {
    ST_TRN_HEADER: "ST-TRN-001", Spec,
        "bytes after the last tensor hold a whole 20-byte descriptor header (no trailing partial bytes)",
        "interchange.md § Scope";
    ST_TRN_DESCRIPTOR: "ST-TRN-002", Spec,
        "the stream does not end inside a descriptor (descriptor_length bytes are present)",
        "interchange.md § Scope";
    ST_TRN_DATA: "ST-TRN-003", Spec,
        "the stream does not end inside a tensor's data (every buffer's byte_size bytes follow its descriptor)",
        "interchange.md § Scope";
    ST_CMP_TORN: "ST-CMP-001", Spec,
        "a composite head is followed by member_count members before the stream ends (no torn composite)",
        "interchange.md § Composite Tensor Streaming";
}
