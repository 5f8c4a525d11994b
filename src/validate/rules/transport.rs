//! Rules of transport conversations: message framing, payloads and the order of
//! messages on each stream (interchange.md § Network Transport Protocol and after).

crate::declare_rules! {
    TR_FRM_TRUNCATED: "TR-FRM-001", Spec,
        "every message has its 12-byte header and payload_length payload bytes",
        "interchange.md § Message Framing";
    TR_FRM_MAX_SIZE: "TR-FRM-002", Spec,
        "payload_length is at most the max_message_size the receiving side advertised",
        "interchange.md § Message Framing";
    TR_LIM: "TR-LIM-001", Limit,
        "payload_length is within the validator's configured maximum message size",
        "README.md § Limits";
    TR_MSG_TYPE: "TR-MSG-001", Spec,
        "message_type is a defined type (0x01-0x0D) or private (0xF0-0xFE)",
        "interchange.md § Message Types";
    TR_MSG_PRIVATE: "TR-MSG-002", Hardening,
        "no private message types (0xF0-0xFE), which need an out-of-band agreement",
        "interchange.md § Message Types";
    TR_MSG_STREAM_ID: "TR-MSG-003", Spec,
        "stream_id is not the reserved 0",
        "interchange.md § Message Framing";
    TR_MSG_DECODE: "TR-MSG-004", Spec,
        "the payload's fields decode within payload_length",
        "interchange.md § Message Framing";
    TR_MSG_TRAILING: "TR-MSG-005", Hardening,
        "no bytes follow the last field of a payload",
        "docs/interpretations.md § Rules and levels";
    TR_MSG_EMPTY: "TR-MSG-006", Spec,
        "TENSOR_DATA_END, TENSOR_PUT_ACK and RDMA_READY have payload_length 0",
        "interchange.md § TENSOR_DATA_END Payload, § TENSOR_PUT_ACK Payload, § RDMA_READY Payload (an empty payload)";
    TR_MSG_UTF8: "TR-MSG-007", Spec,
        "tensor keys and error messages are valid UTF-8",
        "interchange.md § TENSOR_REQUEST Payload";
    TR_HEL_FIRST: "TR-HEL-001", Spec,
        "the first message of a connection is CLIENT_HELLO",
        "interchange.md § Session Establishment";
    TR_HEL_SERVER: "TR-HEL-002", Spec,
        "the server answers with SERVER_HELLO (or ERROR) before any other message, and nothing follows a refused session",
        "interchange.md § Session Establishment";
    TR_HEL_VERSION: "TR-HEL-003", Spec,
        "protocol_version is not 0 and SERVER_HELLO's is at most CLIENT_HELLO's",
        "interchange.md § SERVER_HELLO Payload";
    TR_HEL_FLAGS: "TR-HEL-004", Spec,
        "reserved capability flag bits 4-63 are zero",
        "interchange.md § Capability Flags";
    TR_HEL_GPUDIRECT: "TR-HEL-005", Spec,
        "RDMA_GPUDIRECT is only advertised with RDMA_DATA_PLANE",
        "interchange.md § Capability Flags";
    TR_HEL_ONCE: "TR-HEL-006", Hardening,
        "each side sends its HELLO once per connection",
        "interchange.md § Session Establishment";
    TR_DEV_RESERVED: "TR-DEV-001", Spec,
        "device tags and memory classes on the wire are not reserved values (device 0x09-0xEF, 0xFF; class 0x04-0xEF, 0xFF)",
        "buffer-protocol.md § Device Tags, § Memory Class Values";
    TR_LAY_TAG: "TR-LAY-001", Hardening,
        "a non-extension layout entry names an assigned layout tag",
        "interchange.md § Layout Entry Encoding";
    TR_REQ_ALIGN: "TR-REQ-001", Spec,
        "min_alignment is a power of two",
        "interchange.md § TENSOR_REQUEST Payload";
    TR_REQ_FLAGS: "TR-REQ-002", Spec,
        "reserved request flag bits 2-31 are zero",
        "interchange.md § TENSOR_REQUEST Payload";
    TR_REQ_BUSY: "TR-REQ-003", Spec,
        "a TENSOR_REQUEST or TENSOR_PUT starts on a stream whose previous exchange has ended",
        "interchange.md § Overview";
    TR_ORD_DESCRIPTOR: "TR-ORD-001", Spec,
        "a TENSOR_DESCRIPTOR answers a TENSOR_REQUEST (or continues a composite or a parallel transfer) after the previous tensor's TENSOR_DATA_END",
        "interchange.md § Ordering Invariant";
    TR_ORD_DATA: "TR-ORD-002", Spec,
        "TENSOR_DATA frames come between a tensor's descriptor (or TENSOR_PUT) and its TENSOR_DATA_END",
        "interchange.md § Ordering Invariant";
    TR_ORD_OFFSET: "TR-ORD-003", Spec,
        "data frames are in ascending byte_offset_in_buffer order with no gaps or overlaps",
        "interchange.md § TENSOR_DATA Payload";
    TR_ORD_TOTAL: "TR-ORD-004", Spec,
        "the data frames' lengths sum to total_data_bytes",
        "interchange.md § TENSOR_DATA Payload";
    TR_ORD_END: "TR-ORD-005", Spec,
        "TENSOR_DATA_END ends a tensor whose descriptor (or TENSOR_PUT) came before it",
        "interchange.md § Ordering Invariant";
    TR_ORD_NO_FRAMES: "TR-ORD-006", Spec,
        "a tensor with total_data_bytes 0 sends no TENSOR_DATA frame",
        "interchange.md § Ordering Invariant";
    TR_ORD_UNFINISHED: "TR-ORD-007", Spec,
        "every tensor's exchange ends (TENSOR_DATA_END, then TENSOR_PUT_ACK for a put) before the conversation does",
        "interchange.md § Ordering Invariant";
    TR_DSC_TOTAL: "TR-DSC-001", Spec,
        "total_data_bytes is the sum of the descriptor's buffer sizes",
        "interchange.md § TENSOR_DESCRIPTOR Payload (the bytes that will follow for this tensor); docs/interpretations.md § Streams and the transport";
    TR_DSC_LENGTH: "TR-DSC-002", Spec,
        "a TENSOR_PUT's descriptor field holds exactly descriptor_length bytes",
        "interchange.md § TENSOR_PUT Payload";
    TR_DSC_SYNC: "TR-DSC-003", Spec,
        "every buffer handle on the wire declares sync_mode 0x00 (SYNC_PRODUCER_SYNCED): device events and streams do not cross machines",
        "interchange.md § Completion";
    TR_PUT_ACK: "TR-PUT-001", Spec,
        "TENSOR_PUT_ACK answers a TENSOR_PUT whose TENSOR_DATA_END has arrived",
        "interchange.md § TENSOR_PUT Flow";
    TR_CMP_TORN: "TR-CMP-001", Spec,
        "a composite head's members all arrive on its stream before the exchange ends (no torn composite)",
        "interchange.md § Composite Tensor Streaming";
    TR_SHD_INDEX: "TR-SHD-001", Spec,
        "total_shards is at least 1 and shard_index below it",
        "interchange.md § TENSOR_DESCRIPTOR Payload";
    TR_SHD_ALLOWED: "TR-SHD-002", Spec,
        "a parallel transfer (total_shards > 1) answers a request with PARALLEL_OK from a server advertising PARALLEL_STREAMS",
        "interchange.md § Parallel Transfers";
    TR_SHD_SECTION: "TR-SHD-003", Spec,
        "every shard of a parallel transfer carries a shard section",
        "interchange.md § Parallel Transfer Flow";
    TR_SHD_CONSISTENT: "TR-SHD-004", Spec,
        "the shards of a transfer share parent_shape, element type, layout tag and total_shards, each shard_index once, all arriving",
        "interchange.md § Shard Consistency";
    TR_SHD_COVER: "TR-SHD-005", Spec,
        "the shards cover parent_shape exactly, without overlap",
        "interchange.md § Shard Consistency";
    TR_RDM_ORDER: "TR-RDM-001", Spec,
        "RDMA_REGISTER and RDMA_READY follow the handshake: both peers advertised RDMA_DATA_PLANE, after the tensor's descriptor and before its TENSOR_DATA_END, READY after a REGISTER, no TENSOR_DATA frames",
        "interchange.md § RDMA Data Plane, § Handshake Flow, § Completion";
    TR_RDM_LENGTH: "TR-RDM-002", Spec,
        "RDMA_REGISTER's length equals total_data_bytes",
        "interchange.md § RDMA_REGISTER Payload";
    TR_RDM_GPUDIRECT: "TR-RDM-003", Spec,
        "a destination RDMA_REGISTER (the second of a transfer) needs RDMA_GPUDIRECT from both peers",
        "interchange.md § GPUDirect Destination Registration";
    TR_ERR_CLOSED: "TR-ERR-001", Spec,
        "after an ERROR the stream carries nothing but a new TENSOR_REQUEST or TENSOR_PUT",
        "interchange.md § Error Handling";
    TR_ERR_CODE: "TR-ERR-002", Hardening,
        "error_code is defined (0x01-0x08) or implementation-defined (0xF0-0xFE)",
        "interchange.md § ERROR Payload";
    TR_PNG_ANSWER: "TR-PNG-001", Hardening,
        "every PONG answers an earlier unanswered PING on its stream",
        "interchange.md § Message Types";
}
