//! Checks on the pointers and lengths C passes in, and the objects handed out to C.
//! Each check turns a raw pointer into a reference or slice only after checking it
//! is non-NULL, aligned and of a size Rust can address; what cannot be checked (that
//! it points to live memory of that size) is the caller's side of the contract,
//! stated in `hrry.h`.

use std::ffi::{c_char, c_int, CStr};

use crate::error::{call, call_value, Failure};

/// Runs the body of an exported constructor: `*out` is NULL until `make` succeeds,
/// then the new object, which C gives back to [`free`].
///
/// # Safety
/// `out` is NULL or writable.
pub(crate) unsafe fn call_new<T>(
    out: *mut *mut T,
    make: impl FnOnce() -> Result<T, Failure>,
) -> c_int {
    call(|| {
        // SAFETY: forwarded to the caller.
        let out = unsafe { self::out(out, "out") }?;
        *out = std::ptr::null_mut();
        *out = Box::into_raw(Box::new(make()?));
        Ok(())
    })
}

/// Drops an object made by [`call_new`]; NULL is a no-op.
///
/// # Safety
/// `object` is NULL or came from [`call_new`] and was not freed yet.
pub(crate) unsafe fn free<T>(object: *mut T) {
    if !object.is_null() {
        // SAFETY: the caller's contract: `object` came from `Box::into_raw`.
        let object = unsafe { Box::from_raw(object) };
        call_value((), || drop(object));
    }
}

/// `ptr` as a shared reference, or `HRRY_ARGUMENT` naming `what`.
///
/// # Safety
/// A non-NULL, aligned `ptr` must point to a live `T` for `'a`.
pub(crate) unsafe fn arg<'a, T>(ptr: *const T, what: &str) -> Result<&'a T, Failure> {
    if !ptr.is_aligned() {
        return Err(Failure::argument(format!("{what} is misaligned")));
    }
    // SAFETY: aligned; non-NULL checked by `as_ref`; liveness is the caller's contract.
    unsafe { ptr.as_ref() }.ok_or_else(|| Failure::argument(format!("{what} is NULL")))
}

/// `ptr` as a mutable reference (an output parameter), or `HRRY_ARGUMENT`.
///
/// # Safety
/// A non-NULL, aligned `ptr` must point to writable memory for a `T`, for `'a`.
pub(crate) unsafe fn out<'a, T>(ptr: *mut T, what: &str) -> Result<&'a mut T, Failure> {
    if !ptr.is_aligned() {
        return Err(Failure::argument(format!("{what} is misaligned")));
    }
    // SAFETY: as for `arg`.
    unsafe { ptr.as_mut() }.ok_or_else(|| Failure::argument(format!("{what} is NULL")))
}

/// Writes `value` through an optional output pointer (NULL: nothing is written).
///
/// # Safety
/// As for [`out`].
pub(crate) unsafe fn write_opt<T>(ptr: *mut T, value: T) {
    if ptr.is_aligned() {
        // SAFETY: as for `out`.
        if let Some(slot) = unsafe { ptr.as_mut() } {
            *slot = value;
        }
    }
}

/// Bytes at `data` of length `len`, which must be non-zero; `HRRY_ARGUMENT` otherwise.
///
/// # Safety
/// A non-NULL `data` must point to `len` readable bytes that stay unchanged for `'a`.
pub(crate) unsafe fn bytes<'a>(
    data: *const u8,
    len: usize,
    what: &str,
) -> Result<&'a [u8], Failure> {
    if data.is_null() {
        return Err(Failure::argument(format!("{what} is NULL")));
    }
    if len == 0 {
        return Err(Failure::argument(format!("{what} has length 0")));
    }
    if len > isize::MAX as usize {
        return Err(Failure::argument(format!(
            "{what}: length {len} is too large"
        )));
    }
    // SAFETY: non-NULL, u8 needs no alignment, len <= isize::MAX; the bytes being
    // live and unchanged is the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts(data, len) })
}

/// A writable array of `count` values of `T` at `data`, which may be NULL only when
/// `count` is 0; `HRRY_ARGUMENT` otherwise.
///
/// # Safety
/// A non-NULL `data` must point to `count` writable values of `T` for `'a`.
pub(crate) unsafe fn out_slice<'a, T>(
    data: *mut T,
    count: u64,
    what: &str,
) -> Result<&'a mut [T], Failure> {
    if count == 0 {
        return Ok(&mut []);
    }
    if data.is_null() {
        return Err(Failure::argument(format!("{what} is NULL")));
    }
    if !data.is_aligned() {
        return Err(Failure::argument(format!("{what} is misaligned")));
    }
    let fits = usize::try_from(count).ok().filter(|&n| {
        n.checked_mul(size_of::<T>())
            .is_some_and(|b| b <= isize::MAX as usize)
    });
    let n =
        fits.ok_or_else(|| Failure::argument(format!("{what}: length {count} is too large")))?;
    // SAFETY: non-NULL, aligned, n * size_of::<T>() <= isize::MAX; writability is the
    // caller's contract.
    Ok(unsafe { std::slice::from_raw_parts_mut(data, n) })
}

/// The NUL-terminated string at `s`, which must be non-empty; `HRRY_ARGUMENT`
/// otherwise.
///
/// # Safety
/// A non-NULL `s` must point to a NUL-terminated string that stays live for `'a`.
pub(crate) unsafe fn c_str<'a>(s: *const c_char, what: &str) -> Result<&'a CStr, Failure> {
    if s.is_null() {
        return Err(Failure::argument(format!("{what} is NULL")));
    }
    // SAFETY: non-NULL; NUL termination and liveness are the caller's contract.
    let text = unsafe { CStr::from_ptr(s) };
    if text.is_empty() {
        return Err(Failure::argument(format!("{what} is empty")));
    }
    Ok(text)
}

/// The path named by the NUL-terminated string at `s` (any bytes on Unix, UTF-8
/// elsewhere); `HRRY_ARGUMENT` when NULL, empty or not representable.
///
/// # Safety
/// As for [`c_str`].
pub(crate) unsafe fn path<'a>(
    s: *const c_char,
    what: &str,
) -> Result<&'a std::path::Path, Failure> {
    // SAFETY: forwarded to the caller.
    let text = unsafe { c_str(s, what) }?;
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        Ok(std::path::Path::new(std::ffi::OsStr::from_bytes(
            text.to_bytes(),
        )))
    }
    #[cfg(not(unix))]
    {
        text.to_str()
            .map(std::path::Path::new)
            .map_err(|_| Failure::argument(format!("{what} is not UTF-8")))
    }
}
