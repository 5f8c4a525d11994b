//! The error of every layout operation.

/// Why a layout operation could not be carried out.
#[derive(Clone, Debug, thiserror::Error, PartialEq, Eq)]
pub enum LayoutError {
    /// The layout tag is not one this operation handles.
    #[error("layout tag {tag:#04x} is not supported by this operation")]
    Unsupported {
        /// The descriptor's `layout_tag`.
        tag: u8,
    },
    /// The element type has no known bit width (unassigned tag, or an extension
    /// type without a usable extension section).
    #[error("element type tag {tag:#04x} has no known bit width")]
    ElementWidth {
        /// The descriptor's `type_tag`.
        tag: u8,
    },
    /// A layout field makes the mapping undefined.
    #[error("invalid layout field {field}: {detail}")]
    Field {
        /// The field's spec name.
        field: &'static str,
        /// Expected and found value.
        detail: String,
    },
    /// A size or offset does not fit the integer types used for addressing.
    #[error("{what} overflows")]
    Overflow {
        /// What was being computed.
        what: &'static str,
    },
    /// A buffer the layout needs is missing from the buffer table or the slice list.
    #[error("buffer {index} is missing")]
    MissingBuffer {
        /// Buffer table index.
        index: usize,
    },
    /// An element or entry lies outside its buffer.
    #[error("buffer {buffer}: bit {bit} (width {width}) lies outside its {len} bytes")]
    OutOfBounds {
        /// Buffer table index.
        buffer: usize,
        /// Bit address of the element (may be negative for reversed strides).
        bit: i128,
        /// Element width in bits.
        width: u32,
        /// Buffer length in bytes.
        len: usize,
    },
    /// Stored sparse structure is inconsistent (pointer, coordinate, count).
    #[error("buffer {buffer} entry {entry}: {detail}")]
    Structure {
        /// Buffer table index holding the offending entry.
        buffer: usize,
        /// Entry index in that buffer.
        entry: u64,
        /// What is wrong.
        detail: String,
    },
    /// The result would exceed the caller's size limit.
    #[error("output of {needed} bytes exceeds the limit of {limit} bytes")]
    TooLarge {
        /// Bytes the output needs.
        needed: u128,
        /// The caller's limit.
        limit: u64,
    },
    /// Writing the output failed.
    #[error("write failed: {0}")]
    Io(String),
}

impl From<std::io::Error> for LayoutError {
    fn from(e: std::io::Error) -> Self {
        LayoutError::Io(e.to_string())
    }
}
