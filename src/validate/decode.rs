//! Decoding one tensor descriptor from untrusted bytes, naming the rule that stops
//! it: shared by the tensor region walk of a file, the bare stream reader and the
//! transport conversation validator, which differ only in where the bytes come
//! from and what it means when there are too few.

use crate::limits::{Limit, Limits};
use crate::schema::{
    descriptor_offsets as off, read_from, DescriptorHeader, TensorDescriptor,
    DESCRIPTOR_HEADER_LEN, DESCRIPTOR_MAGIC, MAX_RANK,
};

use super::rules::container::*;
use super::Violation;

/// Checks the fixed 20-byte header of a descriptor starting at absolute offset `at`
/// before anything it announces is read: magic, major version, a
/// `descriptor_length` of at least 20 and within `max_descriptor_bytes`, a rank the
/// parser reads and `max_rank` allows, and a layout tag whose fields can be
/// located. The first fault is returned; none of them can be read past.
pub fn check_fixed_header(h: &DescriptorHeader, at: u64, limits: &Limits) -> Result<(), Violation> {
    let fault = |rule, rel: u64, message: String| Err(Violation::new(rule, at + rel, message));
    if h.magic != DESCRIPTOR_MAGIC {
        return fault(
            &TD_HDR_MAGIC,
            0,
            format!("descriptor magic is {:02x?}, expected \"HRRY\"", h.magic),
        );
    }
    if h.version_major != 1 {
        return fault(
            &TD_HDR_VERSION,
            off::VERSION_MAJOR,
            format!(
                "descriptor version_major {} is not supported (1)",
                h.version_major
            ),
        );
    }
    let length = u64::from(h.descriptor_length);
    if length < DESCRIPTOR_HEADER_LEN {
        return fault(
            &TD_HDR_LENGTH,
            off::DESCRIPTOR_LENGTH,
            format!("descriptor_length {length} is below 20"),
        );
    }
    if h.descriptor_length > limits.max_descriptor_bytes {
        return Err(Violation::limit(
            Limit::DescriptorBytes,
            at + off::DESCRIPTOR_LENGTH,
            format!(
                "descriptor_length {length} exceeds max_descriptor_bytes {}",
                limits.max_descriptor_bytes
            ),
        ));
    }
    if h.rank > MAX_RANK {
        return fault(
            &TD_SHP_RANK,
            off::RANK,
            format!("rank {} exceeds 64", h.rank),
        );
    }
    if h.rank > limits.max_rank {
        return Err(Violation::limit(
            Limit::Rank,
            at + off::RANK,
            format!("rank {} exceeds max_rank {}", h.rank, limits.max_rank),
        ));
    }
    if !crate::schema::layout_tag_known(h.layout_tag) {
        return fault(
            &TD_LAY_TAG,
            off::LAYOUT_TAG,
            format!("layout_tag {:#04x} is not an assigned layout", h.layout_tag),
        );
    }
    Ok(())
}

/// Decodes a descriptor from exactly its `descriptor_length` bytes (`bytes`,
/// starting at absolute offset `at`), whose fixed header
/// [`check_fixed_header`] accepted. Fields that do not fit are `TD-HDR-004`.
pub fn decode_body(bytes: &[u8], at: u64) -> Result<TensorDescriptor, Violation> {
    read_from::<TensorDescriptor>(bytes)
        .map(|(d, _)| d)
        .map_err(|e| {
            Violation::new(
                &TD_HDR_FIT,
                at,
                format!(
                    "descriptor fields do not fit in descriptor_length {}: {}",
                    bytes.len(),
                    crate::schema::error_text(&e)
                ),
            )
        })
}
