//! A file's KV metadata from C: the count, each key, each value's type, the typed
//! getters, and any value rendered as text.

use std::ffi::{c_char, c_int, CStr};
use std::fmt::Write as _;
use std::ptr::null;

use hrry::schema::{KvEntry, KvScalar, KvValue};

use crate::error::{call, call_value, Failure};
use crate::file::hrry_file;
use crate::ptr;
use crate::HRRY_UNSUPPORTED;

/// KV entry `i` of the file, or `HRRY_NOT_FOUND`.
fn entry(handle: &hrry_file, i: usize) -> Result<&KvEntry, Failure> {
    let kv = handle.file.kv();
    kv.get(i).ok_or_else(|| {
        Failure::not_found(format!(
            "KV index {i} is out of range: the file has {} entries",
            kv.len()
        ))
    })
}

/// `HRRY_UNSUPPORTED`: entry `i` holds another type than the getter reads.
fn wrong_type(e: &KvEntry, wanted: &str) -> Failure {
    Failure::new(
        HRRY_UNSUPPORTED,
        format!(
            "KV {:?} holds a {}, not a {wanted}",
            String::from_utf8_lossy(&e.key),
            type_name(e.value.tag())
        ),
    )
}

/// The KV type name of a value tag, NUL-terminated.
fn type_c_name(tag: u8) -> Option<&'static CStr> {
    Some(match tag {
        0x01 => c"string",
        0x02 => c"int64",
        0x03 => c"uint64",
        0x04 => c"float64",
        0x05 => c"bool",
        0x06 => c"bytes",
        0x07 => c"array",
        _ => return None,
    })
}

/// The KV type name of a value tag (`unknown` for none).
fn type_name(tag: u8) -> &'static str {
    type_c_name(tag)
        .and_then(|name| name.to_str().ok())
        .unwrap_or("unknown")
}

/// A value as text: strings as they are, numbers in decimal, bools `true` /
/// `false`, bytes in lowercase hex, arrays `[a, b]` with strings quoted.
fn render(value: &KvValue) -> String {
    fn scalar(s: &KvScalar, quoted: bool, out: &mut String) {
        let _ = match s {
            KvScalar::String(b) if quoted => write!(out, "{:?}", String::from_utf8_lossy(&b.bytes)),
            KvScalar::String(b) => write!(out, "{}", String::from_utf8_lossy(&b.bytes)),
            KvScalar::Int64(v) => write!(out, "{v}"),
            KvScalar::Uint64(v) => write!(out, "{v}"),
            KvScalar::Float64(v) => write!(out, "{v}"),
            KvScalar::Bool(v) => write!(out, "{}", *v != 0),
            KvScalar::Bytes(b) => b.bytes.iter().try_for_each(|x| write!(out, "{x:02x}")),
        };
    }
    let mut out = String::new();
    match value {
        KvValue::String(b) => scalar(&KvScalar::String(b.clone()), false, &mut out),
        KvValue::Int64(v) => scalar(&KvScalar::Int64(*v), false, &mut out),
        KvValue::Uint64(v) => scalar(&KvScalar::Uint64(*v), false, &mut out),
        KvValue::Float64(v) => scalar(&KvScalar::Float64(*v), false, &mut out),
        KvValue::Bool(v) => scalar(&KvScalar::Bool(*v), false, &mut out),
        KvValue::Bytes(b) => scalar(&KvScalar::Bytes(b.clone()), false, &mut out),
        KvValue::Array(a) => {
            out.push('[');
            for (k, element) in a.iter().enumerate() {
                if k > 0 {
                    out.push_str(", ");
                }
                scalar(&element.to_scalar(), true, &mut out);
            }
            out.push(']');
        }
    }
    out
}

/// Number of KV metadata entries in the file; 0 when `f` is NULL.
///
/// # Safety
/// `f` is NULL or an open handle.
#[no_mangle]
pub unsafe extern "C" fn hrry_kv_count(f: *const hrry_file) -> usize {
    call_value(0, || {
        // SAFETY: the caller's contract above.
        unsafe { ptr::arg(f, "f") }.map_or(0, |h| h.file.kv().len())
    })
}

/// The key of KV entry `i` (file order): `*key` is NUL-terminated UTF-8 living as
/// long as the file, `*len` its length in bytes without the NUL (`len` may be
/// NULL). An index out of range is `HRRY_NOT_FOUND`; on failure `*key` is NULL.
///
/// # Safety
/// `f` is NULL or an open handle; `key` and `len` are NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hrry_kv_key(
    f: *const hrry_file,
    i: usize,
    key: *mut *const c_char,
    len: *mut usize,
) -> c_int {
    call(|| {
        // SAFETY: the caller's contract above.
        let key = unsafe { ptr::out(key, "key") }?;
        *key = null();
        // SAFETY: the caller's contract above.
        unsafe { ptr::write_opt(len, 0) };
        // SAFETY: the caller's contract above.
        let handle = unsafe { ptr::arg(f, "f") }?;
        let e = entry(handle, i)?;
        *key = handle.kv.key(i).as_ptr().cast();
        // SAFETY: the caller's contract above.
        unsafe { ptr::write_opt(len, e.key.len()) };
        Ok(())
    })
}

/// The value type of KV entry `i`: one of `HRRY_KV_STRING` … `HRRY_KV_ARRAY` (the
/// spec's value tags). On failure `*value_type` is 0.
///
/// # Safety
/// `f` is NULL or an open handle; `value_type` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hrry_kv_type(f: *const hrry_file, i: usize, value_type: *mut u8) -> c_int {
    call(|| {
        // SAFETY: the caller's contract above.
        let value_type = unsafe { ptr::out(value_type, "value_type") }?;
        *value_type = 0;
        // SAFETY: the caller's contract above.
        let handle = unsafe { ptr::arg(f, "f") }?;
        *value_type = entry(handle, i)?.value.tag();
        Ok(())
    })
}

/// Reads the scalar of KV entry `i` with `get`, which says whether the value has
/// the type asked for (`wanted`, for the message).
///
/// # Safety
/// `f` is NULL or an open handle; `out` is NULL or writable.
unsafe fn typed<T: Copy + Default>(
    f: *const hrry_file,
    i: usize,
    out: *mut T,
    wanted: &str,
    get: impl FnOnce(&KvValue) -> Option<T>,
) -> c_int {
    call(|| {
        // SAFETY: the caller's contract.
        let out = unsafe { ptr::out(out, "out") }?;
        *out = T::default();
        // SAFETY: the caller's contract.
        let handle = unsafe { ptr::arg(f, "f") }?;
        let e = entry(handle, i)?;
        *out = get(&e.value).ok_or_else(|| wrong_type(e, wanted))?;
        Ok(())
    })
}

/// The int64 value of KV entry `i`; another type is `HRRY_UNSUPPORTED`.
///
/// # Safety
/// `f` is NULL or an open handle; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hrry_kv_int64(f: *const hrry_file, i: usize, out: *mut i64) -> c_int {
    // SAFETY: the caller's contract above.
    unsafe {
        typed(f, i, out, "int64", |v| match v {
            KvValue::Int64(x) => Some(*x),
            _ => None,
        })
    }
}

/// The uint64 value of KV entry `i`; another type is `HRRY_UNSUPPORTED`.
///
/// # Safety
/// `f` is NULL or an open handle; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hrry_kv_uint64(f: *const hrry_file, i: usize, out: *mut u64) -> c_int {
    // SAFETY: the caller's contract above.
    unsafe {
        typed(f, i, out, "uint64", |v| match v {
            KvValue::Uint64(x) => Some(*x),
            _ => None,
        })
    }
}

/// The float64 value of KV entry `i`; another type is `HRRY_UNSUPPORTED`.
///
/// # Safety
/// `f` is NULL or an open handle; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hrry_kv_float64(f: *const hrry_file, i: usize, out: *mut f64) -> c_int {
    // SAFETY: the caller's contract above.
    unsafe {
        typed(f, i, out, "float64", |v| match v {
            KvValue::Float64(x) => Some(*x),
            _ => None,
        })
    }
}

/// The bool value of KV entry `i` as 0 or 1; another type is `HRRY_UNSUPPORTED`.
///
/// # Safety
/// `f` is NULL or an open handle; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hrry_kv_bool(f: *const hrry_file, i: usize, out: *mut c_int) -> c_int {
    // SAFETY: the caller's contract above.
    unsafe {
        typed(f, i, out, "bool", |v| match v {
            KvValue::Bool(x) => Some(c_int::from(*x != 0)),
            _ => None,
        })
    }
}

/// The bytes of a string or bytes KV entry `i`, as stored (a string is UTF-8, not
/// NUL-terminated: use `len`), living as long as the file; another type is
/// `HRRY_UNSUPPORTED`. On failure `*data` is NULL and `*len` 0.
///
/// # Safety
/// `f` is NULL or an open handle; `data` and `len` are NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hrry_kv_bytes(
    f: *const hrry_file,
    i: usize,
    data: *mut *const u8,
    len: *mut usize,
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
        let e = entry(handle, i)?;
        let bytes = match &e.value {
            KvValue::String(b) | KvValue::Bytes(b) => &b.bytes,
            _ => return Err(wrong_type(e, "string or bytes")),
        };
        *data = bytes.as_ptr();
        *len = bytes.len();
        Ok(())
    })
}

/// KV entry `i`'s value as text, whatever its type: a string as it is, numbers in
/// decimal, bools `true` / `false`, bytes in lowercase hex, arrays `[1, 2]` or
/// `["a", "b"]`. `*text` is NUL-terminated UTF-8 living as long as the file, `*len`
/// its length without the NUL (`len` may be NULL). On failure `*text` is NULL.
///
/// # Safety
/// `f` is NULL or an open handle; `text` and `len` are NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hrry_kv_text(
    f: *const hrry_file,
    i: usize,
    text: *mut *const c_char,
    len: *mut usize,
) -> c_int {
    call(|| {
        // SAFETY: the caller's contract above.
        let text = unsafe { ptr::out(text, "text") }?;
        *text = null();
        // SAFETY: the caller's contract above.
        unsafe { ptr::write_opt(len, 0) };
        // SAFETY: the caller's contract above.
        let handle = unsafe { ptr::arg(f, "f") }?;
        let e = entry(handle, i)?;
        let rendered = handle.kv.text(i, || render(&e.value));
        *text = rendered.as_ptr().cast();
        // SAFETY: the caller's contract above.
        unsafe { ptr::write_opt(len, rendered.len() - 1) };
        Ok(())
    })
}

/// The name of a KV value type (`"string"`, `"int64"`, …, `"array"`), a static
/// NUL-terminated string; NULL for a tag that is no value type.
#[no_mangle]
pub extern "C" fn hrry_kv_type_name(value_type: u8) -> *const c_char {
    type_c_name(value_type).map_or(null(), CStr::as_ptr)
}
