//! `hrry_file`: an opened, validated HRRYFILE, and the functions that read it.

use std::ffi::{c_char, c_int, c_void};
use std::path::Path;
use std::ptr::null;
use std::sync::OnceLock;

use hrry::export::{export_row_major, row_major_len, ExportOptions};
use hrry::file::{HrryFile, OpenOptions, Tensor, TensorEntry};
use hrry::limits::Limits;
use hrry::quant::Dequantizer;
use hrry::schema::TensorDescriptor;
use hrry::validate::{Depth, Judging, Rules};
use hrry::Format;

use crate::error::{call, call_value, Failure};
use crate::ptr;
use crate::{HRRY_INTERNAL, HRRY_INVALID, HRRY_UNSUPPORTED};

/// An opened HRRYFILE that passed strict validation. Read-only: one `hrry_file` may
/// be used from many threads at once.
pub struct hrry_file {
    pub(crate) file: HrryFile<'static>,
    /// The KV keys and values as handed to C.
    pub(crate) kv: crate::kv_table::KvTable,
    /// Every tensor name followed by a NUL, in index order, so that names can be
    /// handed to C as NUL-terminated strings that live as long as the file.
    names: Box<[u8]>,
    /// Where each name starts in `names`.
    name_starts: Box<[usize]>,
    /// Each tensor's shape, kept once asked for, so that `hrry_tensor_info::shape`
    /// lives as long as the file.
    shapes: Box<[OnceLock<Box<[u64]>>]>,
}

// The ABI promises that one handle may be read from many threads.
const _: () = {
    const fn shareable<T: Send + Sync>() {}
    shareable::<hrry_file>()
};

/// What `hrry_tensor_info_get` reports about one tensor.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hrry_tensor_info {
    /// Element type tag (element-types.md: 0x03 float32, 0x01 float16, 0x02
    /// bfloat16, ...).
    pub type_tag: u8,
    /// Layout tag (0x01 row-major, 0x02 column-major, ..., 0x0B composite).
    pub layout_tag: u8,
    /// Number of dimensions.
    pub rank: u32,
    /// `rank` dimensions, outermost first; NULL when `rank` is 0. Lives as long as
    /// the file.
    pub shape: *const u64,
    /// Number of entries in the descriptor's buffer table (`hrry_tensor_buffer`).
    pub buffer_count: u32,
    /// 1 when the tensor carries a quantization section (`hrry_dequantize`), else 0.
    pub is_quantized: u8,
    /// Product of the shape (1 for rank 0).
    pub element_count: u64,
}

impl hrry_file {
    fn new(file: HrryFile<'static>) -> Self {
        let mut names = Vec::with_capacity(file.name_text().len() + file.len());
        let mut name_starts = Vec::with_capacity(file.len());
        for entry in file.entries() {
            name_starts.push(names.len());
            names.extend_from_slice(entry.name().as_bytes());
            names.push(0);
        }
        let shapes = (0..file.len()).map(|_| OnceLock::new()).collect();
        hrry_file {
            kv: crate::kv_table::KvTable::new(&file),
            file,
            names: names.into_boxed_slice(),
            name_starts: name_starts.into_boxed_slice(),
            shapes,
        }
    }

    /// The entry at index position `i`, or `HRRY_NOT_FOUND`.
    fn entry(&self, i: usize) -> Result<TensorEntry<'_>, Failure> {
        self.file.entry(i).ok_or_else(|| {
            Failure::not_found(format!(
                "tensor index {i} is out of range: the file has {} tensors",
                self.file.len()
            ))
        })
    }

    /// The tensor at index position `i` with its borrowed buffers.
    fn tensor(&self, i: usize) -> Result<Tensor<'_>, Failure> {
        Ok(self.file.tensor_at(self.entry(i)?)?)
    }

    /// The descriptor of the tensor at index position `i`.
    fn descriptor(&self, i: usize) -> Result<&TensorDescriptor, Failure> {
        Ok(self.file.descriptor(self.entry(i)?)?)
    }
}

/// How `hrry_open` opens: refusing, at the first broken rule, exactly what strict
/// validation rejects, in one decode pass, within `limits`.
fn strict(limits: Limits) -> OpenOptions {
    OpenOptions::new()
        .judging(Judging::new(Rules::Hardened, Depth::Data))
        .limits(limits)
}

/// For input of another format (a `.holo` archive, a bare stream, a captured
/// conversation), recognised as everywhere in `hrry` by its magic or `path`'s
/// extension (`Format::recognise`): `HRRY_UNSUPPORTED`, naming the format and
/// where to check it, without reading it further. Bytes of no recognised format
/// are left to the HRRYFILE decoder, which says what they most likely are.
fn refuse_other_formats(bytes: &[u8], path: Option<&Path>) -> Result<(), Failure> {
    let what = match Format::recognise(bytes, path) {
        None | Some(Format::HrryFile) => return Ok(()),
        Some(Format::Holo) => "a .holo archive",
        Some(Format::Stream) => "a bare Hurray stream",
        Some(Format::Messages) => "a captured transport conversation",
    };
    Err(Failure::new(
        HRRY_UNSUPPORTED,
        format!("{what}, not a HRRYFILE: hrry_open reads tensor files; check it with hrry_validate_path"),
    ))
}

/// Opens the file at `path` as `hrry_open` does, within `limits`.
pub(crate) fn open_path(path: &Path, limits: Limits) -> Result<hrry_file, Failure> {
    let shown = path.display();
    let io = |e: std::io::Error| Failure::new(crate::HRRY_IO, format!("{shown}: cannot read: {e}"));
    // Mapped for the tensors; the decode pass (which reads every byte, for the
    // data rules) reads the file with positioned reads, so that opening makes no
    // page of the mapping resident.
    let source = hrry::source::FileSource::open(path).map_err(io)?;
    let map = source.map().map_err(io)?;
    refuse_other_formats(&map, Some(path)).map_err(|f| prefix(f, &shown))?;
    match strict(limits).open_mmap_read(map, &source) {
        Ok(file) => Ok(hrry_file::new(file)),
        Err(hrry::Error::Io(e)) => Err(io(e)),
        Err(refused) => Err(prefix(refused.into(), &shown)),
    }
}

/// Opens `bytes` as `hrry_open_bytes` does, within `limits`.
pub(crate) fn open_bytes(bytes: &'static [u8], limits: Limits) -> Result<hrry_file, Failure> {
    refuse_other_formats(bytes, None)?;
    Ok(hrry_file::new(strict(limits).open_bytes(bytes)?))
}

/// `failure` with its message after `path: `.
fn prefix(failure: Failure, path: &impl std::fmt::Display) -> Failure {
    Failure::new(failure.status, format!("{path}: {}", failure.message))
}

/// Opens and strictly validates the HRRYFILE at `path` (mapped, not copied; judged
/// with positioned reads, so that opening makes no page of the mapping resident).
/// On success `*out` is a handle to free with `hrry_close`; on failure `*out` is
/// NULL.
///
/// Returns `HRRY_INVALID` when the file breaks a rule (the message starts with the
/// first rule ID and its offset, e.g. `"... HF-HDR-001 at offset 0: ..."`),
/// `HRRY_IO` when it cannot be read, `HRRY_UNSUPPORTED` for input of another format
/// (a `.holo` archive, a bare stream or a capture, by magic or extension),
/// `HRRY_ARGUMENT` when `path` or `out` is NULL or `path` is empty.
///
/// # Safety
/// `path` is NULL or a NUL-terminated string; `out` is NULL or points to writable
/// memory for one pointer.
#[no_mangle]
pub unsafe extern "C" fn hrry_open(path: *const c_char, out: *mut *mut hrry_file) -> c_int {
    // SAFETY: the caller's contract above.
    unsafe {
        ptr::call_new(out, || {
            let path = ptr::path(path, "path")?;
            open_path(path, Limits::default())
        })
    }
}

/// Opens and strictly validates the HRRYFILE held in `data[0..len]`, borrowing it:
/// the bytes must stay valid and unchanged until `hrry_close`. Statuses as for
/// `hrry_open` (a truncated or damaged buffer is `HRRY_INVALID`); NULL `data` or
/// `len` 0 is `HRRY_ARGUMENT`.
///
/// # Safety
/// `data` is NULL or points to `len` readable bytes that outlive the handle and are
/// not modified while it is open; `out` as for `hrry_open`.
#[no_mangle]
pub unsafe extern "C" fn hrry_open_bytes(
    data: *const u8,
    len: usize,
    out: *mut *mut hrry_file,
) -> c_int {
    // SAFETY: the caller's contract above: the bytes outlive the handle, which is
    // the only holder of this `'static` borrow.
    unsafe {
        ptr::call_new(out, || {
            open_bytes(ptr::bytes(data, len, "data")?, Limits::default())
        })
    }
}

/// Closes a file opened by `hrry_open` or `hrry_open_bytes`; every string and shape
/// it gave out becomes invalid. NULL is a no-op.
///
/// # Safety
/// `f` is NULL or a handle from `hrry_open*` not yet closed, no longer in use by any
/// thread.
#[no_mangle]
pub unsafe extern "C" fn hrry_close(f: *mut hrry_file) {
    // SAFETY: the caller's contract above.
    unsafe { ptr::free(f) }
}

/// Number of tensors in the file; 0 when `f` is NULL.
///
/// # Safety
/// `f` is NULL or an open handle.
#[no_mangle]
pub unsafe extern "C" fn hrry_tensor_count(f: *const hrry_file) -> usize {
    call_value(0, || {
        // SAFETY: the caller's contract above.
        unsafe { ptr::arg(f, "f") }.map_or(0, |h| h.file.len())
    })
}

/// The name of tensor `i` (index order): `*name` is NUL-terminated UTF-8 living as
/// long as the file, `*len` its length in bytes without the NUL (`len` may be NULL).
/// An index out of range is `HRRY_NOT_FOUND`; on failure `*name` is NULL.
///
/// # Safety
/// `f` is NULL or an open handle; `name` and `len` are NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hrry_tensor_name(
    f: *const hrry_file,
    i: usize,
    name: *mut *const c_char,
    len: *mut usize,
) -> c_int {
    call(|| {
        // SAFETY: the caller's contract above.
        let name = unsafe { ptr::out(name, "name") }?;
        *name = null();
        // SAFETY: the caller's contract above.
        unsafe { ptr::write_opt(len, 0) };
        // SAFETY: the caller's contract above.
        let handle = unsafe { ptr::arg(f, "f") }?;
        let entry = handle.entry(i)?;
        let start = handle.name_starts[i];
        *name = handle.names[start..].as_ptr().cast();
        // SAFETY: the caller's contract above.
        unsafe { ptr::write_opt(len, entry.name().len()) };
        Ok(())
    })
}

/// Looks tensor `name[0..len]` up (no NUL needed) and stores its index in
/// `*index`. No tensor with that name is `HRRY_NOT_FOUND`; a name that is not
/// UTF-8, NULL or of length 0 is `HRRY_ARGUMENT`. On failure `*index` is `SIZE_MAX`.
///
/// # Safety
/// `f` is NULL or an open handle; `name` is NULL or points to `len` readable bytes;
/// `index` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hrry_find(
    f: *const hrry_file,
    name: *const c_char,
    len: usize,
    index: *mut usize,
) -> c_int {
    call(|| {
        // SAFETY: the caller's contract above.
        let index = unsafe { ptr::out(index, "index") }?;
        *index = usize::MAX;
        // SAFETY: the caller's contract above.
        let handle = unsafe { ptr::arg(f, "f") }?;
        // SAFETY: the caller's contract above.
        let raw = unsafe { ptr::bytes(name.cast(), len, "name") }?;
        let name = std::str::from_utf8(raw)
            .map_err(|e| Failure::argument(format!("name is not UTF-8: {e}")))?;
        let entry = handle
            .file
            .find(name)
            .ok_or_else(|| Failure::not_found(format!("no tensor named {name:?}")))?;
        *index = entry.position();
        Ok(())
    })
}

/// Fills `*out` with what tensor `i` is: type, layout, shape, buffer count, whether
/// it is quantized and its element count. `out->shape` lives as long as the file.
///
/// # Safety
/// `f` is NULL or an open handle; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hrry_tensor_info_get(
    f: *const hrry_file,
    i: usize,
    out: *mut hrry_tensor_info,
) -> c_int {
    call(|| {
        // SAFETY: the caller's contract above.
        let out = unsafe { ptr::out(out, "out") }?;
        // SAFETY: the caller's contract above.
        let handle = unsafe { ptr::arg(f, "f") }?;
        let desc = handle.descriptor(i)?;
        let element_count = hrry::model::element_count(&desc.shape).ok_or_else(|| {
            Failure::new(
                HRRY_INVALID,
                format!(
                    "tensor {i}: the element count of shape {:?} overflows",
                    desc.shape
                ),
            )
        })?;
        let too_many =
            |what: &str| Failure::new(HRRY_INVALID, format!("tensor {i}: too many {what}"));
        let rank = u32::try_from(desc.shape.len()).map_err(|_| too_many("dimensions"))?;
        let buffer_count = u32::try_from(desc.buffers.len()).map_err(|_| too_many("buffers"))?;
        let shape = handle.shapes[i].get_or_init(|| desc.shape.clone().into_boxed_slice());
        *out = hrry_tensor_info {
            type_tag: desc.type_tag,
            layout_tag: desc.layout_tag,
            rank,
            shape: if shape.is_empty() {
                null()
            } else {
                shape.as_ptr()
            },
            buffer_count,
            is_quantized: u8::from(desc.quantization.is_some()),
            element_count,
        };
        Ok(())
    })
}

/// Buffer `b` of tensor `i`'s buffer table, as stored (zero-copy: `*data` points
/// into the file and lives as long as it). A tensor or buffer index out of range is
/// `HRRY_NOT_FOUND`; on failure `*data` is NULL and `*len` 0.
///
/// # Safety
/// `f` is NULL or an open handle; `data` and `len` are NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hrry_tensor_buffer(
    f: *const hrry_file,
    i: usize,
    b: u32,
    data: *mut *const u8,
    len: *mut u64,
) -> c_int {
    call(|| {
        // SAFETY: the caller's contract above.
        let data = unsafe { ptr::out(data, "data") }?;
        *data = null();
        // SAFETY: the caller's contract above.
        let len = unsafe { ptr::out(len, "len") }?;
        *len = 0;
        // SAFETY: the caller's contract above.
        let handle = unsafe { ptr::arg(f, "f") }?;
        let tensor = handle.tensor(i)?;
        let count = tensor.buffers.len();
        let bytes = usize::try_from(b)
            .ok()
            .and_then(|b| tensor.buffers.get(b))
            .ok_or_else(|| {
                Failure::not_found(format!(
                    "buffer index {b} is out of range: tensor {i} has {count} buffers"
                ))
            })?;
        *data = bytes.as_ptr();
        *len = bytes.len() as u64;
        Ok(())
    })
}

/// The number of bytes `hrry_read_row_major` writes for tensor `i`: its element
/// count times the size of an exported element. `HRRY_UNSUPPORTED` for an element
/// type with no row-major export (a private extension type); a layout that cannot be
/// assembled (block-paged, an overlay that is not a plain copy) is only found out by
/// `hrry_read_row_major`, which then returns `HRRY_UNSUPPORTED`.
///
/// # Safety
/// `f` is NULL or an open handle; `len` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hrry_row_major_size(
    f: *const hrry_file,
    i: usize,
    len: *mut u64,
) -> c_int {
    call(|| {
        // SAFETY: the caller's contract above.
        let len = unsafe { ptr::out(len, "len") }?;
        *len = 0;
        // SAFETY: the caller's contract above.
        let handle = unsafe { ptr::arg(f, "f") }?;
        *len = row_major_len(handle.descriptor(i)?)?;
        Ok(())
    })
}

/// Writes tensor `i` in logical row-major order into `out[0..len]`: the bytes
/// `hrry export` stores after the `.npy` header. Elements widen as export widens
/// them (bfloat16 and the 8-, 6- and 4-bit floats to float32, sub-byte integers to
/// one byte, float128 to float64; a quantized tensor gives its dequantized float32
/// values); sparse and composite tensors are assembled. `len` must equal
/// `hrry_row_major_size` (else `HRRY_ARGUMENT`); `out` may be NULL only when it is 0.
///
/// # Safety
/// `f` is NULL or an open handle; `out` is NULL or points to `len` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn hrry_read_row_major(
    f: *const hrry_file,
    i: usize,
    out: *mut c_void,
    len: u64,
) -> c_int {
    call(|| {
        // SAFETY: the caller's contract above.
        let handle = unsafe { ptr::arg(f, "f") }?;
        let entry = handle.entry(i)?;
        let expected = row_major_len(handle.file.descriptor(entry)?)?;
        if len != expected {
            return Err(Failure::argument(format!(
                "len is {len} bytes; tensor {:?} has {expected} row-major bytes",
                entry.name()
            )));
        }
        // SAFETY: the caller's contract above.
        let out = unsafe { ptr::out_slice(out.cast::<u8>(), len, "out") }?;
        let rest = export_row_major(&handle.file, entry.name(), out, &ExportOptions::default())?;
        if !rest.is_empty() {
            return Err(Failure::new(
                HRRY_INTERNAL,
                format!("export wrote {} bytes fewer than announced", rest.len()),
            ));
        }
        Ok(())
    })
}

/// Dequantizes tensor `i` into `out[0..count]` (float32, logical row-major order).
/// `count` must equal the element count (else `HRRY_ARGUMENT`); `out` may be NULL
/// only when it is 0. A tensor that is not quantized is `HRRY_UNSUPPORTED`.
///
/// # Safety
/// `f` is NULL or an open handle; `out` is NULL or points to `count` writable,
/// aligned floats.
#[no_mangle]
pub unsafe extern "C" fn hrry_dequantize(
    f: *const hrry_file,
    i: usize,
    out: *mut f32,
    count: u64,
) -> c_int {
    call(|| {
        // SAFETY: the caller's contract above.
        let handle = unsafe { ptr::arg(f, "f") }?;
        let tensor = handle.tensor(i)?;
        let dequantizer = Dequantizer::new(tensor.descriptor, &tensor.buffers)?;
        if count != dequantizer.len() {
            return Err(Failure::argument(format!(
                "count is {count}; tensor {:?} has {} elements",
                tensor.entry.name(),
                dequantizer.len()
            )));
        }
        // SAFETY: the caller's contract above.
        let out = unsafe { ptr::out_slice(out, count, "out") }?;
        dequantizer.dequantize_into(out)?;
        Ok(())
    })
}
