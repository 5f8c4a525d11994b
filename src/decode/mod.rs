//! The decode layer: bytes to decoded structures, judged by the rules.
//!
//! One function per wire structure turns untrusted bytes (through
//! [`crate::source::ReadAt`]) into what the readers use — the file frame (header,
//! trailer, index, KV), each descriptor with its fixed header checked first, the
//! placement of its buffers, the per-tensor rule sequence, composite binding, a
//! `.holo` archive's header, section table and sections (`holo`) — and
//! reports every rule it finds broken as a [`Violation`](crate::validate::Violation)
//! into a [`Report`](crate::validate::Report), whose
//! [`Judging`](crate::validate::Judging) says which rules are judged and how far
//! the input is read: the contents of padding and data buffers only with the
//! consent (`input::DataReads`) a judging to
//! [`Depth::Data`](crate::validate::Depth::Data) gives. Every reader (`HrryFile`,
//! the sequential and stream readers, the conversation validator, the server,
//! `.holo`) and the validator call it; the rule table itself is
//! [`crate::validate`].

pub mod budget;
mod buffer;
pub mod composite;
mod container;
pub mod descriptor;
pub(crate) mod file;
pub mod header;
pub(crate) mod holo;
pub(crate) mod input;
pub mod layout;
pub mod quant;
mod region;
pub(crate) mod tensor;

pub(crate) use input::unread;
