//! Element width and count of a descriptor, as the layouts need them.

use crate::schema::TensorDescriptor;

use super::error;
use crate::error::Error;

/// Bits per stored element of `desc`: the built-in width of `type_tag`, or for an
/// extension type the `bit_width` of its extension section when it packs like a
/// built-in type (1, 2, 4 bits, or a whole number of bytes up to 128 bits).
pub fn element_bits(desc: &TensorDescriptor) -> Result<u32, Error> {
    let width = desc
        .element_bits()
        .ok_or_else(|| error::element_width(desc.type_tag))?;
    match width {
        1 | 2 | 4 | 6 => Ok(width),
        w if w % 8 == 0 && (8..=128).contains(&w) => Ok(w),
        _ => Err(error::element_width(desc.type_tag)),
    }
}

/// Product of `shape` as `u64`, or an overflow error.
pub(crate) fn checked_count(shape: &[u64]) -> Result<u64, Error> {
    crate::model::element_count(shape).ok_or_else(|| error::overflow("element count"))
}
