//! Decoding one tensor descriptor from untrusted bytes, naming the rule that stops
//! it: the one decoder of descriptors, shared by the tensor region walk of a file,
//! the sequential and bare stream readers, the transport conversation validator
//! and the server, which differ only in where the bytes come from and what it
//! means when there are too few.
//!
//! A descriptor is decoded in two steps so that a reader never trusts a length it
//! has not judged: [`fixed_header`] checks the 20-byte fixed header and hands out a
//! [`FixedHeader`] whose [`length`](FixedHeader::length) may be read; only that
//! value decodes the whole descriptor ([`FixedHeader::decode`]). [`descriptor`]
//! does both for bytes already in hand.

use crate::limits::{Limit, Limits};
use crate::schema::{
    descriptor_offsets as off, read_from, DescriptorHeader, TensorDescriptor,
    DESCRIPTOR_HEADER_LEN, DESCRIPTOR_MAGIC, MAX_RANK,
};

use crate::validate::rules::container::*;
use crate::validate::Violation;

/// A descriptor's fixed header that passed [`fixed_header`]: its
/// `descriptor_length` may be trusted to read the rest.
#[derive(Clone, Debug)]
pub struct FixedHeader {
    header: DescriptorHeader,
    at: u64,
}

impl FixedHeader {
    /// The descriptor's fixed header fields.
    pub fn header(&self) -> &DescriptorHeader {
        &self.header
    }

    /// `descriptor_length`: how many bytes the whole descriptor takes (at least 20,
    /// within `max_descriptor_bytes`).
    pub fn length(&self) -> u64 {
        u64::from(self.header.descriptor_length)
    }

    /// Decodes the whole descriptor from exactly its `descriptor_length` bytes
    /// (`bytes`, starting with this fixed header). Fields that do not fit are
    /// `TD-HDR-004`.
    pub fn decode(self, bytes: &[u8]) -> Result<TensorDescriptor, Violation> {
        read_from::<TensorDescriptor>(bytes)
            .map(|(d, _)| d)
            .map_err(|e| {
                Violation::new(
                    &TD_HDR_FIT,
                    self.at,
                    format!(
                        "descriptor fields do not fit in descriptor_length {}: {}",
                        bytes.len(),
                        crate::schema::error_text(&e)
                    ),
                )
            })
    }
}

/// Decodes and checks the fixed 20-byte header of a descriptor starting at
/// absolute offset `at` (`head` holds at least those 20 bytes) before anything it
/// announces is read: magic, major version, a `descriptor_length` of at least 20
/// and within `max_descriptor_bytes`, a rank the parser reads and `max_rank`
/// allows, and a layout tag whose fields can be located. The first fault is
/// returned; none of them can be read past. Fewer than 20 bytes break `TD-HDR-003`
/// (callers whose input names a better rule for a short read check first).
pub fn fixed_header(head: &[u8], at: u64, limits: &Limits) -> Result<FixedHeader, Violation> {
    let (header, _) = read_from::<DescriptorHeader>(head).map_err(|_| {
        Violation::new(
            &TD_HDR_LENGTH,
            at,
            format!(
                "descriptor is {} bytes, shorter than its 20-byte header",
                head.len()
            ),
        )
    })?;
    check_fixed_header(&header, at, limits)?;
    Ok(FixedHeader { header, at })
}

/// The `descriptor_length` the fixed header at the start of `head` states, not yet
/// judged (`None` for fewer than 20 bytes): for comparing it with the length a
/// container gives the same descriptor (an index entry, a message field).
pub fn stated_length(head: &[u8]) -> Option<u32> {
    read_from::<DescriptorHeader>(head)
        .ok()
        .map(|(h, _)| h.descriptor_length)
}

/// Decodes a descriptor from exactly its `descriptor_length` bytes starting at
/// absolute offset `at`: [`fixed_header`], then the fields.
pub fn descriptor(bytes: &[u8], at: u64, limits: &Limits) -> Result<TensorDescriptor, Violation> {
    fixed_header(bytes, at, limits)?.decode(bytes)
}

/// The checks of [`fixed_header`] on its decoded fields.
fn check_fixed_header(h: &DescriptorHeader, at: u64, limits: &Limits) -> Result<(), Violation> {
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
