//! Hurray streams (interchange.md): the bare streaming format and the transport
//! messages.
//!
//! - **Bare streams** (ADR-010's back-to-back encoding): each tensor is its
//!   descriptor followed by its buffers' bytes, back to back in buffer-table order,
//!   no padding, no names; a composite head binds the next `member_count` tensors
//!   (nested composites pre-order). [`StreamReader`] and [`StreamWriter`] work over
//!   any `Read` / `Write` without seeking, holding a fixed-size buffer whatever the
//!   data size; [`CheckedStreamReader`] hands out each tensor once it passed every
//!   rule; [`crate::Format::validate_reader`] with [`crate::Format::Stream`]
//!   applies every rule; [`pack`] / [`unpack`]
//!   convert from and to HRRYFILEs.
//! - **Transport messages**: [`message`] frames, decodes and encodes them, with a
//!   maximum payload size; [`Conversation`] checks a sequence of them one message at
//!   a time (ordering, framing, composites, shards), and
//!   [`crate::Format::validate_reader`] with [`crate::Format::Messages`] a whole
//!   captured conversation.

mod checked;
mod conversation;
mod error;
mod io;
pub mod message;
mod pack;
mod reader;
mod validate;
mod writer;

pub use checked::{tensor_too_large, CheckedStreamReader, CheckedTensor, Refusal};
pub(crate) use conversation::validate_messages;
pub use conversation::Conversation;
pub use error::Error;
pub use pack::{pack, pack_path, unpack, TensorNames, UnpackOptions, Unpacked};
pub use reader::{Piece, StreamReader, StreamTensor};
pub(crate) use validate::validate_stream;
pub use validate::TensorChecker;
pub use writer::StreamWriter;
