//! Typed access to a tensor's values as Rust numbers.
//!
//! A row-major, unquantized tensor whose element type has a Rust counterpart
//! ([`Element`]: `f32`, `f64`, `half::f16`, `half::bf16` and the fixed-width
//! integers) stores exactly the bytes of a `[T]` in little-endian order, from
//! `byte_offset` in buffer 0. [`typed_slice`] borrows them as `&[T]` without copying
//! when the bytes are suitably aligned; [`typed_vec`] copies them at any alignment.
//! Anything else is an [`Error`] that says what the tensor holds and where to go
//! instead: asking for another element type is [`Error::Usage`]; another layout,
//! quantized codes, a dynamic dimension, misaligned bytes or a big-endian target
//! are [`Error::Unsupported`]; a buffer 0 too short for the elements breaks
//! `TD-BUF-005` ([`Error::Invalid`], located at offset 0: a view has no file
//! position).

use std::mem::{align_of, size_of};

use crate::error::{Broken, Error};
use crate::schema::{TensorDescriptor, LAYOUT_ROW_MAJOR};

use super::element_type::{element_count, ElementType};

/// A Rust type that holds one element of a Hurray element type, with the same
/// size and little-endian byte order as its stored form.
///
/// Implemented for `f32` (float32), `f64` (float64), [`half::f16`] (float16),
/// [`half::bf16`] (bfloat16), `i8`, `u8`, `i16`, `u16`, `i32`, `u32`, `i64` and
/// `u64`. Sub-byte, packed and complex types have no such counterpart; read them
/// through [`crate::layout`] or [`crate::quant`].
pub trait Element: Copy + std::fmt::Debug + sealed::Sealed + 'static {
    /// The element type whose values this Rust type holds.
    const TYPE: ElementType;
}

mod sealed {
    /// Keeps [`super::Element`] to the types whose byte casts are sound, and holds
    /// the conversions the crate needs without making them public API.
    pub trait Sealed: bytemuck::Pod {
        /// The value stored in `bytes` (exactly `size_of::<Self>()` little-endian
        /// bytes).
        fn from_le(bytes: &[u8]) -> Self;
        /// Appends the value's little-endian bytes to `out`.
        fn push_le(self, out: &mut Vec<u8>);
    }
}

macro_rules! element {
    ($($t:ty => $ty:ident),+ $(,)?) => {$(
        impl Element for $t {
            const TYPE: ElementType = ElementType::$ty;
        }
        impl sealed::Sealed for $t {
            fn from_le(bytes: &[u8]) -> Self {
                let mut b = [0u8; size_of::<$t>()];
                b.copy_from_slice(bytes);
                <$t>::from_le_bytes(b)
            }
            fn push_le(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
        }
    )+};
}

element! {
    f32 => Float32,
    f64 => Float64,
    half::f16 => Float16,
    half::bf16 => Bfloat16,
    i8 => Int8,
    u8 => Uint8,
    i16 => Int16,
    u16 => Uint16,
    i32 => Int32,
    u32 => Uint32,
    i64 => Int64,
    u64 => Uint64,
}

/// The bytes of the elements of a row-major, unquantized tensor of type `ty`:
/// `count * size` bytes from `byte_offset` in `buffer0`.
fn row_major_bytes<'b>(
    desc: &TensorDescriptor,
    buffer0: &'b [u8],
    ty: ElementType,
    size: usize,
) -> Result<&'b [u8], Error> {
    let found = desc.element_type();
    // A quantized tensor's type is its storage type: the bytes are codes whose
    // meaning is the scheme's, so reading them as values would be wrong.
    if desc.quantization.is_some() {
        return Err(Error::Unsupported(format!(
            "the tensor is quantized: its {} bytes are codes, not values (dequantize it with hrry::quant::Dequantizer)",
            found.map_or("unknown", ElementType::name)
        )));
    }
    if found != Some(ty) {
        return Err(Error::Usage(format!(
            "the tensor holds {} (type tag {:#04x}), not {}",
            found.map_or("unknown", ElementType::name),
            desc.type_tag,
            ty.name()
        )));
    }
    if desc.layout_tag != LAYOUT_ROW_MAJOR {
        return Err(Error::Unsupported(format!(
            "layout tag {:#04x} is not row-major; read it in logical order with hrry::layout::to_row_major",
            desc.layout_tag
        )));
    }
    let count = element_count(&desc.shape).ok_or_else(|| {
        Error::Unsupported(format!("shape {:?} has no fixed element count", desc.shape))
    })?;
    let needed = u128::from(desc.byte_offset) + u128::from(count) * size as u128;
    let too_short = || {
        Error::broken(
            Broken::BufferSize,
            0,
            format!(
                "buffer 0 holds {} bytes; byte_offset {} plus {count} elements need {needed}",
                buffer0.len(),
                desc.byte_offset
            ),
        )
    };
    let start = usize::try_from(desc.byte_offset).map_err(|_| too_short())?;
    let end = usize::try_from(needed).map_err(|_| too_short())?;
    buffer0.get(start..end).ok_or_else(too_short)
}

/// Borrows the elements of a row-major, unquantized tensor of `T`'s element type
/// from its buffer 0, in row-major order, without copying.
///
/// Fails, saying why, when the tensor holds another type, uses another layout, is
/// quantized, has a dynamic dimension, when buffer 0 is too short, when the data is
/// not aligned for `T`, or on a big-endian target.
pub fn typed_slice<'b, T: Element>(
    desc: &TensorDescriptor,
    buffer0: &'b [u8],
) -> Result<&'b [T], Error> {
    let bytes = row_major_bytes(desc, buffer0, T::TYPE, size_of::<T>())?;
    if cfg!(target_endian = "big") && size_of::<T>() > 1 {
        return Err(Error::Unsupported(
            "this target is big-endian: the little-endian data cannot be borrowed as numbers (copy it instead)".into(),
        ));
    }
    if bytes.is_empty() {
        // An empty slice may sit at any address (a dangling one for `&[]`).
        return Ok(&[]);
    }
    bytemuck::try_cast_slice(bytes).map_err(|_| {
        Error::Unsupported(format!(
            "the data starts at address {:#x}, not a multiple of the {}-byte alignment of the Rust type (copy it instead with typed_vec)",
            bytes.as_ptr() as usize,
            align_of::<T>()
        ))
    })
}

/// Copies the elements of a row-major, unquantized tensor of `T`'s element type
/// out of its buffer 0, in row-major order: like [`typed_slice`], but at any
/// alignment and byte order.
pub fn typed_vec<T: Element>(desc: &TensorDescriptor, buffer0: &[u8]) -> Result<Vec<T>, Error> {
    let bytes = row_major_bytes(desc, buffer0, T::TYPE, size_of::<T>())?;
    Ok(bytes.chunks_exact(size_of::<T>()).map(T::from_le).collect())
}

/// The stored (little-endian) bytes of `values`: borrowed on a little-endian
/// target, converted on a big-endian one.
pub(crate) fn le_bytes<T: Element>(values: &[T]) -> std::borrow::Cow<'_, [u8]> {
    if cfg!(target_endian = "little") {
        std::borrow::Cow::Borrowed(bytemuck::cast_slice(values))
    } else {
        let mut out = Vec::with_capacity(std::mem::size_of_val(values));
        for &v in values {
            v.push_le(&mut out);
        }
        std::borrow::Cow::Owned(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_element_has_its_types_width() {
        fn check<T: Element>() {
            assert_eq!(
                T::TYPE.bit_width(),
                Some(8 * size_of::<T>() as u32),
                "{:?}",
                T::TYPE
            );
        }
        check::<f32>();
        check::<f64>();
        check::<half::f16>();
        check::<half::bf16>();
        check::<i8>();
        check::<u8>();
        check::<i16>();
        check::<u16>();
        check::<i32>();
        check::<u32>();
        check::<i64>();
        check::<u64>();
    }

    #[test]
    fn stored_bytes_are_little_endian() {
        assert_eq!(&*le_bytes(&[0x0102_0304u32, 5]), &[4, 3, 2, 1, 5, 0, 0, 0]);
        assert_eq!(&*le_bytes(&[1.0f32]), &1.0f32.to_le_bytes());
        assert_eq!(<i16 as sealed::Sealed>::from_le(&[0xFE, 0xFF]), -2);
    }
}
