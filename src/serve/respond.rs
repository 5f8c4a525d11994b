//! Answering a TENSOR_REQUEST: layout selection in the client's order
//! (interchange.md § Server Layout Selection), element-preserving transcoding to
//! row-major under the transcoding memory limit, and the tensors to send (a
//! composite head with its members, forward-adjacent).

use std::sync::Arc;

use crate::export::{assemble_tensors, composite_members};
use crate::file::{HrryFile, Tensor};
use crate::layout::dense::{is_dense, row_major_len};
use crate::layout::logical_row_major;
use crate::layout::sparse::is_sparse;
use crate::schema::transport::{error_code, TensorRequest};
use crate::schema::{
    to_bytes, BufferHandle, LayoutFields, TensorDescriptor, LAYOUT_COMPOSITE, LAYOUT_ROW_MAJOR,
};

use super::catalog::{Budget, Chunk, LeasedBytes, Owner, Source};

/// One tensor of a response: its descriptor's bytes and its data, buffers back to
/// back in buffer-table order.
pub struct Outgoing {
    /// The encoded descriptor.
    pub descriptor: Vec<u8>,
    /// `total_data_bytes`.
    pub total_data_bytes: u64,
    /// The data, in pieces.
    pub data: Vec<Chunk>,
}

/// A refusal: the ERROR code and message.
#[derive(Debug)]
pub struct Refusal {
    /// `error_code`.
    pub code: u32,
    /// `message`.
    pub message: String,
}

impl Refusal {
    /// A refusal with `code`.
    pub fn new(code: u32, message: impl Into<String>) -> Self {
        Refusal {
            code,
            message: message.into(),
        }
    }
}

/// Implementation-defined ERROR code: the server refuses for a resource or policy
/// reason (store full, too many open streams, a message that cannot fit the
/// client's maximum size, a push onto a key served from a file).
pub const ERROR_REFUSED: u32 = 0xF0;

/// The layout tags this server can put on the wire (SERVER_HELLO
/// `supported_layouts`): every named layout natively, and row-major by
/// transcoding. A stored extension layout is not among them, so it is refused
/// with LAYOUT_UNAVAILABLE.
pub const SERVED_LAYOUTS: &[u8] = &[
    0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A, 0x0B, 0x40,
];

/// What [`respond`] needs beyond the request.
pub struct Context<'a> {
    /// Largest buffer a transcoding may materialise.
    pub transcode_limit: u64,
    /// The memory all transcodings in flight share.
    pub transcoding: &'a Arc<Budget>,
}

/// The tensors answering `request` for the tensor of `source`: the chosen layout
/// and every descriptor and data piece, or the ERROR to send instead.
pub fn respond(
    source: &Source,
    request: &TensorRequest,
    context: &Context<'_>,
) -> Result<Vec<Outgoing>, Refusal> {
    match source {
        Source::File { file, position } => {
            let owner = Owner::File(Arc::clone(file));
            let entry = file
                .entry(*position)
                .ok_or_else(|| Refusal::new(error_code::UNKNOWN_TENSOR, "no such index entry"))?;
            let tensor = file.tensor_at(entry).map_err(unreadable)?;
            // Streamed: the whole subtree, pre-order. Assembled: the direct members.
            let (subtree, direct) = if tensor.descriptor.layout_tag == LAYOUT_COMPOSITE {
                let direct = composite_members(file, &tensor).unwrap_or_default();
                (subtree(file, &tensor)?, direct)
            } else {
                (Vec::new(), Vec::new())
            };
            let members = Members {
                subtree: &subtree,
                direct: &direct,
            };
            answer(
                &owner,
                tensor.descriptor,
                &tensor.buffers,
                &members,
                request,
                context,
            )
        }
        Source::Stored(stored) => {
            let owner = Owner::Memory(Arc::clone(&stored.data));
            let buffers = stored.buffers();
            let none = Members {
                subtree: &[],
                direct: &[],
            };
            answer(
                &owner,
                &stored.descriptor,
                &buffers,
                &none,
                request,
                context,
            )
        }
    }
}

/// A composite head's members.
struct Members<'a, 'f> {
    /// Every tensor the head binds on a stream, nested members included, pre-order.
    subtree: &'a [Tensor<'f>],
    /// Its own `member_count` members.
    direct: &'a [Tensor<'f>],
}

/// The tensors a composite head binds on a stream, pre-order: the tensors after
/// it in file order, a nested head's own members included, until every member
/// count is met.
fn subtree<'f>(file: &'f HrryFile<'f>, head: &Tensor<'f>) -> Result<Vec<Tensor<'f>>, Refusal> {
    let mut order: Vec<_> = file.entries().collect();
    order.sort_by_key(|e| e.index_entry().descriptor_offset);
    let start = order
        .iter()
        .position(|e| e.position() == head.entry.position())
        .ok_or_else(|| Refusal::new(error_code::UNKNOWN_TENSOR, "no such index entry"))?;
    let mut pending = member_count(head.descriptor);
    let mut out = Vec::new();
    for &entry in &order[start + 1..] {
        if pending == 0 {
            break;
        }
        let member = file.tensor_at(entry).map_err(unreadable)?;
        pending = pending - 1 + member_count(member.descriptor);
        out.push(member);
    }
    if pending > 0 {
        return Err(Refusal::new(
            ERROR_REFUSED,
            "the composite is torn: fewer tensors follow its head than it binds",
        ));
    }
    Ok(out)
}

fn member_count(d: &TensorDescriptor) -> u64 {
    match &d.layout {
        LayoutFields::Composite(c) => u64::from(c.member_count),
        _ => 0,
    }
}

fn unreadable(e: crate::file::Error) -> Refusal {
    Refusal::new(ERROR_REFUSED, format!("the tensor cannot be read: {e}"))
}

fn answer(
    owner: &Owner,
    desc: &TensorDescriptor,
    buffers: &[&[u8]],
    members: &Members<'_, '_>,
    request: &TensorRequest,
    context: &Context<'_>,
) -> Result<Vec<Outgoing>, Refusal> {
    let allow = request.request_flags.allow_transcode();
    for entry in &request.preferred_layouts.entries {
        let tag = entry.layout_tag;
        if tag == desc.layout_tag {
            break; // Native: served below.
        }
        if tag != LAYOUT_ROW_MAJOR || !allow {
            continue;
        }
        // Over the limit, busy or impossible: the next preference, then the native
        // layout (§ On-the-Fly Transcoding).
        if let Some(bytes) = to_row_major(desc, buffers, members.direct, context) {
            return Ok(vec![row_major_tensor(desc, bytes, request.min_alignment)]);
        }
    }
    // No preference satisfied: the native layout, whatever the CLIENT_HELLO listed
    // (a client must take any layout the SERVER_HELLO advertised). Only a stored
    // layout this server does not advertise is refused.
    let unadvertised = std::iter::once(desc)
        .chain(members.subtree.iter().map(|m| m.descriptor))
        .find(|d| !SERVED_LAYOUTS.contains(&d.layout_tag));
    if let Some(d) = unadvertised {
        return Err(Refusal::new(
            error_code::LAYOUT_UNAVAILABLE,
            format!(
                "no preferred layout can be served, and the stored layout {:#04x} is not \
                 among the SERVER_HELLO's supported_layouts",
                d.layout_tag
            ),
        ));
    }
    let mut out = vec![native(
        owner,
        &standalone(desc),
        buffers,
        request.min_alignment,
    )?];
    for m in members.subtree {
        out.push(native(
            owner,
            m.descriptor,
            &m.buffers,
            request.min_alignment,
        )?);
    }
    Ok(out)
}

/// A tensor as stored, its buffer handles made true of the bytes on the wire
/// ([`for_wire`]).
fn native(
    owner: &Owner,
    desc: &TensorDescriptor,
    buffers: &[&[u8]],
    min_alignment: u32,
) -> Result<Outgoing, Refusal> {
    let mut d = desc.clone();
    for_wire(&mut d, min_alignment);
    let mut data = Vec::new();
    let mut total = 0u64;
    for b in buffers.iter().filter(|b| !b.is_empty()) {
        let chunk = Chunk::of_slice(owner, b)
            .ok_or_else(|| Refusal::new(ERROR_REFUSED, "a buffer lies outside its source"))?;
        total += b.len() as u64;
        data.push(chunk);
    }
    Ok(Outgoing {
        descriptor: to_bytes(&d),
        total_data_bytes: total,
        data,
    })
}

/// `desc` sent on its own: a composite member requested by its key leaves its
/// composite behind, so its composite member section goes (a tensor outside any
/// composite may not carry one, HF-CMP-004). Everything else is kept.
pub fn standalone(desc: &TensorDescriptor) -> TensorDescriptor {
    let mut d = desc.clone();
    if d.composite_member.is_some() {
        d.composite_member = None;
        d.sync_sections();
    }
    d
}

/// The buffer handles of a descriptor sent from this server: the data is in CPU
/// host memory (`device_tag` 0, STANDARD memory class), producer-synced as every
/// cross-machine buffer must be (`sync_mode` 0, interchange.md § Completion), and
/// aligned at least as the request asks. A file may record other placements for
/// its tensors; they describe where the writer kept them, not these bytes.
pub fn for_wire(d: &mut TensorDescriptor, min_alignment: u32) {
    for b in &mut d.buffers {
        b.device_tag = crate::schema::DEVICE_CPU;
        b.memory_class = 0;
        b.sync_mode = crate::schema::SYNC_PRODUCER_SYNCED;
        if b.byte_size > 0 && b.alignment < min_alignment {
            b.alignment = min_alignment;
        }
    }
}

/// The element-preserving row-major form of a tensor: its elements, in its own
/// element type, packed in logical order. `None` when there is none (quantized and
/// block-paged tensors: their blocks and pools follow the stored order), when it
/// would exceed the transcoding limit, or when it does not fit beside the
/// transcodings other requests hold now. The result's size is leased from the
/// transcoding budget before anything is built.
fn to_row_major(
    desc: &TensorDescriptor,
    buffers: &[&[u8]],
    members: &[Tensor<'_>],
    context: &Context<'_>,
) -> Option<LeasedBytes> {
    let composite = desc.layout_tag == LAYOUT_COMPOSITE;
    let transcodable = is_dense(desc.layout_tag) || is_sparse(desc.layout_tag) || composite;
    if desc.quantization.is_some() || !transcodable {
        return None;
    }
    // The size the transcoders allocate, checked against the limit as they check it.
    let width = desc.element_bits()?;
    let limit = context.transcode_limit;
    let size = row_major_len(desc, width, limit).ok()? as u64;
    let lease = context.transcoding.lease(size)?;
    let bytes = if composite {
        assemble_tensors(desc, members, limit)
    } else {
        logical_row_major(desc, buffers, limit)
    };
    Some(LeasedBytes::new(bytes.ok()?, lease))
}

/// The row-major tensor carrying `bytes`, described as `desc` with the layout
/// replaced: same type, shape and optional sections, one CPU buffer.
fn row_major_tensor(desc: &TensorDescriptor, bytes: LeasedBytes, min_alignment: u32) -> Outgoing {
    let mut d = standalone(desc);
    d.layout_tag = LAYOUT_ROW_MAJOR;
    d.layout = LayoutFields::Implicit;
    d.byte_offset = 0;
    d.buffers = vec![BufferHandle {
        byte_size: bytes.len() as u64,
        alignment: min_alignment.max(crate::model::build::DEFAULT_BUFFER_ALIGNMENT),
        ..BufferHandle::default()
    }];
    d.sync_sections();
    let total = bytes.len() as u64;
    let owner = Owner::Leased(Arc::new(bytes));
    let data = Chunk::new(owner, 0..total as usize).into_iter().collect();
    Outgoing {
        descriptor: to_bytes(&d),
        total_data_bytes: total,
        data,
    }
}
