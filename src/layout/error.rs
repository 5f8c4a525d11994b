//! The errors of layout operations, as the crate's one [`Error`].
//!
//! A layout function has a descriptor and its buffers but no file position: its
//! violations are located at offset 0, and their message names the buffer, entry or
//! field at fault. A descriptor that passed the validator never breaks one of these
//! rules; the checks are there because the functions take any descriptor.

use crate::error::{Broken, Error};
use crate::limits::Limit;

/// The layout tag is not one this operation handles.
pub(crate) fn unsupported_layout(tag: u8) -> Error {
    Error::Unsupported(format!(
        "layout tag {tag:#04x} is not supported by this operation"
    ))
}

/// The element type has no known bit width (unassigned tag, or an extension type
/// without a usable extension section).
pub(crate) fn element_width(tag: u8) -> Error {
    Error::Unsupported(format!(
        "element type tag {tag:#04x} has no known bit width"
    ))
}

/// A layout field breaks `rule`: `detail` says which field, what was expected and
/// what was found.
pub(crate) fn field(rule: Broken, field: &str, detail: impl std::fmt::Display) -> Error {
    Error::broken(rule, 0, format!("layout field {field}: {detail}"))
}

/// A size or offset does not fit the integer types used for addressing: a limit of
/// this reader (`HF-LIM-001`, an allocation it cannot make).
pub(crate) fn overflow(what: &str) -> Error {
    Error::limit(Limit::Allocation, 0, format!("{what} overflows"))
}

/// A buffer the layout needs is missing from the buffer table or the slice list.
pub(crate) fn missing_buffer(index: usize) -> Error {
    Error::broken(Broken::BufferCount, 0, format!("buffer {index} is missing"))
}

/// An element lies outside its buffer.
pub(crate) fn out_of_bounds(buffer: usize, bit: i128, width: u32, len: usize) -> Error {
    Error::broken(
        Broken::BufferSize,
        0,
        format!("buffer {buffer}: bit {bit} (width {width}) lies outside its {len} bytes"),
    )
}

/// Stored sparse structure breaks `rule` at `entry` of buffer `buffer`.
pub(crate) fn structure(rule: Broken, buffer: usize, entry: u64, detail: &str) -> Error {
    Error::broken(rule, 0, format!("buffer {buffer} entry {entry}: {detail}"))
}

/// The result would exceed the caller's size limit.
pub(crate) fn too_large(needed: u128, limit: u64) -> Error {
    Error::Unsupported(format!(
        "output of {needed} bytes exceeds the limit of {limit} bytes"
    ))
}
