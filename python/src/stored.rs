//! Tensors in their stored element type, for consumers with dtypes NumPy lacks
//! (ml_dtypes' `bfloat16` and `float8_*`, PyTorch's): `get_tensor(widen=False)`
//! and `File._stored`, on which `hrry.torch` is built.
//!
//! A type NumPy lacks travels as its raw codes in a NumPy integer array of the same
//! width (a view into the mapping when buffer 0 already holds the tensor in
//! row-major order, else the codes gathered in logical row-major order), which the
//! consumer reinterprets without copying.

use hrry::export;
use hrry::file::{HrryFile, Tensor};
use hrry::layout::bits::read_bits;
use hrry::layout::dense::{is_dense, DenseView};
use hrry::layout::sparse::is_sparse;
use hrry::layout::{densify, element_bits};
use hrry::limits::Limit;
use hrry::model::ElementType;
use hrry::schema::LAYOUT_COMPOSITE;
use hrry::Error;
use pyo3::exceptions::PyImportError;
use pyo3::prelude::*;

use crate::array::{mapped_array, owned_array};
use crate::errors::{detached, HrryError};
use crate::mapping::{copy_budget, tensor_array, tensor_error, Mapping};

/// How the codes of an element type NumPy lacks are carried.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Carrier {
    /// The NumPy dtype of the carrying array (`<i2`, `|u1`).
    descr: &'static str,
    /// Bytes per carried element.
    item_size: usize,
    /// True for a type narrower than a byte: each code is widened to one byte
    /// (ml_dtypes keeps one such element per byte); otherwise the stored bits.
    unpacked: bool,
}

/// The carrier of `ty` when NumPy lacks it and some consumer keeps it as it is.
fn carrier(ty: ElementType) -> Option<Carrier> {
    use ElementType::*;
    let (descr, item_size, unpacked) = match ty {
        Bfloat16 => ("<i2", 2, false),
        Float8E4m3 | Float8E5m2 | Float8E8m0 => ("|u1", 1, false),
        Float4E2m1 | Float6E2m3 | Float6E3m2 => ("|u1", 1, true),
        _ => return None,
    };
    Some(Carrier {
        descr,
        item_size,
        unpacked,
    })
}

/// The `ml_dtypes` dtype that holds the stored codes of the element type named
/// `kind` (as `File._stored` names it).
fn ml_dtypes_name(kind: &str) -> Option<&'static str> {
    Some(match kind {
        "bfloat16" => "bfloat16",
        "float8_e4m3" => "float8_e4m3fn",
        "float8_e5m2" => "float8_e5m2",
        "float8_e8m0" => "float8_e8m0fnu",
        "float4_e2m1" => "float4_e2m1fn",
        "float6_e2m3" => "float6_e2m3fn",
        "float6_e3m2" => "float6_e3m2fn",
        _ => return None,
    })
}

/// Tensor `name` of the mapping `this` in its stored element type: the element
/// type's name (`"quantized"` for a quantized tensor, `"extension"` for an
/// extension type) and an array. For a type NumPy lacks (see [`carrier`]) the
/// array carries its codes; for every other the array is what `get_tensor` gives
/// (sub-byte integers widened to int8/uint8, booleans unpacked, quantized tensors
/// dequantized to float32).
pub(crate) fn stored_array<'py>(
    this: &Bound<'py, Mapping>,
    what: &str,
    name: &str,
) -> PyResult<(&'static str, Bound<'py, PyAny>)> {
    let py = this.py();
    let mapping = this.get();
    let tensor = mapping.tensor(py, what, name)?;
    let desc = tensor.descriptor;
    if desc.quantization.is_some() {
        return Ok(("quantized", tensor_array(this, what, name)?));
    }
    let Some(ty) =
        ElementType::from_tag(desc.type_tag).filter(|t| !matches!(t, ElementType::Extension(_)))
    else {
        return Ok(("extension", tensor_array(this, what, name)?));
    };
    let Some(carrier) = carrier(ty) else {
        return Ok((ty.name(), tensor_array(this, what, name)?));
    };
    if !carrier.unpacked && is_dense(desc.layout_tag) {
        if let Some(bytes) = DenseView::new(desc, &tensor.buffers)
            .ok()
            .and_then(|v| v.contiguous())
        {
            // SAFETY: `bytes` is the data of a dense row-major tensor inside the
            // mapping `this` owns (the array's base object, which keeps it alive);
            // the mapping is writeable only when private (see `crate::memory`).
            let array = unsafe {
                mapped_array(
                    this.clone().into_any(),
                    carrier.descr,
                    &desc.shape,
                    bytes,
                    mapping.writeable(),
                )
            }?;
            return Ok((ty.name(), array));
        }
    }
    let file = mapping.file();
    let codes = detached(py, || carried_codes(file, &tensor, carrier))?
        .map_err(|e| tensor_error(py, what, name, e))?;
    Ok((
        ty.name(),
        owned_array(py, codes, carrier.descr, &desc.shape)?,
    ))
}

/// The codes of `tensor` in logical row-major order as `carrier` carries them.
fn carried_codes(
    file: &HrryFile<'_>,
    tensor: &Tensor<'_>,
    carrier: Carrier,
) -> Result<Vec<u8>, Error> {
    let desc = tensor.descriptor;
    let count = desc
        .shape
        .iter()
        .try_fold(1u64, |n, &d| n.checked_mul(d))
        .ok_or_else(|| Error::limit(Limit::Allocation, 0, "element count overflows"))?;
    let width = element_bits(desc)?;
    let limit = copy_budget(file.size());
    let needed = u128::from(count) * (carrier.item_size as u128);
    if needed > u128::from(limit) {
        return Err(Error::Unsupported(format!(
            "output of {needed} bytes exceeds the limit of {limit} bytes"
        )));
    }
    let packed = packed_row_major(file, tensor, limit)?;
    if !carrier.unpacked {
        // `needed` fits the limit checked above.
        let len = usize::try_from(needed)
            .map_err(|_| Error::limit(Limit::Allocation, 0, "byte length overflows"))?;
        let mut packed = packed;
        if packed.len() < len {
            return Err(Error::Unsupported(format!(
                "{} bytes gathered for {count} elements",
                packed.len()
            )));
        }
        packed.truncate(len);
        return Ok(packed);
    }
    (0..count)
        .map(|i| {
            read_bits(&packed, i * u64::from(width), width)
                .map(|code| code as u8)
                .ok_or_else(|| {
                    Error::Unsupported(format!(
                        "element {i} lies past the {} bytes gathered",
                        packed.len()
                    ))
                })
        })
        .collect()
}

/// The packed row-major bytes of `tensor` (dense, sparse or a composite head), at
/// most `limit` bytes assembled.
fn packed_row_major(
    file: &HrryFile<'_>,
    tensor: &Tensor<'_>,
    limit: u64,
) -> Result<Vec<u8>, Error> {
    let desc = tensor.descriptor;
    if desc.layout_tag == LAYOUT_COMPOSITE {
        return export::assemble_composite(file, tensor, limit);
    }
    if is_dense(desc.layout_tag) {
        return DenseView::new(desc, &tensor.buffers)?.stream_row_major(Vec::new());
    }
    if is_sparse(desc.layout_tag) {
        return densify(desc, &tensor.buffers, limit);
    }
    Err(Error::Unsupported(format!(
        "layout {:#04x} has no logical-order export",
        desc.layout_tag
    )))
}

/// `array` (of the element type named `kind`, from [`stored_array`]) as NumPy
/// holds it without widening: codes viewed as their `ml_dtypes` dtype (no copy),
/// any other array as it is. `ImportError` naming ml_dtypes when a tensor needs it
/// and it is not installed; `HrryError` for float128, which NumPy cannot hold
/// portably.
pub(crate) fn unwidened<'py>(
    py: Python<'py>,
    name: &str,
    kind: &str,
    array: Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    if kind == "float128" {
        return Err(HrryError::new_err(format!(
            "tensor {name:?}: NumPy has no portable float128 (widen=True narrows it to float64)"
        )));
    }
    let Some(dtype) = ml_dtypes_name(kind) else {
        return Ok(array);
    };
    let ml_dtypes = py.import("ml_dtypes").map_err(|_| {
        PyImportError::new_err(format!(
            "tensor {name:?} is {kind}: widen=False needs the ml_dtypes package for it \
             (pip install ml_dtypes), or widen=True for float32"
        ))
    })?;
    array.call_method1("view", (ml_dtypes.getattr(dtype)?,))
}
