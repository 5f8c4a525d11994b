//! `hrry_limits`: the resource limits a caller sets for opening and validating,
//! and the functions that take them.

use std::ffi::{c_char, c_int};

use hrry::limits::Limits;

use crate::error::{call, Failure};
use crate::file::hrry_file;
use crate::ptr;
use crate::report::hrry_report;

/// Resource limits for `hrry_open_limits` and the other `_limits` functions, set
/// up by `hrry_limits_init`. Versioned by its size: fields are only ever added at
/// the end, and the library reads only those the caller's `size` covers.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hrry_limits {
    /// `sizeof(hrry_limits)` as the caller's header declares it (written by
    /// `hrry_limits_init`).
    pub size: usize,
    /// Most memory, in bytes, one operation (opening or validating a file) may
    /// hold for what the file describes: the cap of its budget, which otherwise
    /// grows as 16 MiB + 16 x the bytes read (what `hrry validate --max-memory`
    /// and Python's `max_memory=` set). A file that needs more is refused with
    /// `HF-LIM-001` naming `max_memory` (`HRRY_INVALID` from `hrry_open_limits`,
    /// `HRRY_VERDICT_REFUSED` from a validation). Default 2 GiB.
    pub max_memory: u64,
}

/// The size of the first `hrry_limits` (ABI version 1: `size`, `max_memory`).
const FIRST_SIZE: usize = std::mem::size_of::<hrry_limits>();

/// The limits `limits` points to; the defaults for NULL. `HRRY_ARGUMENT` for a
/// `size` this library does not know.
///
/// # Safety
/// `limits` is NULL or points to a readable `hrry_limits` of its stated `size`.
pub(crate) unsafe fn read(limits: *const hrry_limits) -> Result<Limits, Failure> {
    if limits.is_null() {
        return Ok(Limits::default());
    }
    // SAFETY: non-NULL; a readable `hrry_limits` is the caller's contract.
    let given = unsafe { ptr::arg(limits, "limits") }?;
    check_size(given.size)?;
    Ok(Limits {
        max_memory: given.max_memory,
        ..Limits::default()
    })
}

/// `HRRY_ARGUMENT` unless `size` is that of a `hrry_limits` this library reads.
fn check_size(size: usize) -> Result<(), Failure> {
    if size == FIRST_SIZE {
        return Ok(());
    }
    Err(Failure::argument(format!(
        "limits->size is {size}: this library reads a hrry_limits of {FIRST_SIZE} bytes \
         (call hrry_limits_init(&limits, sizeof limits) first)"
    )))
}

/// Sets `*limits` to the default limits (`max_memory` 2 GiB) and its `size` to
/// `size`, which must be `sizeof(hrry_limits)`: `HRRY_ARGUMENT` for any other
/// size (a header newer than the library), or a NULL `limits`.
///
/// ```c
/// hrry_limits limits;
/// hrry_limits_init(&limits, sizeof limits);
/// limits.max_memory = 256u << 20;
/// ```
///
/// # Safety
/// `limits` is NULL or points to `size` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn hrry_limits_init(limits: *mut hrry_limits, size: usize) -> c_int {
    call(|| {
        // The size first: a `hrry_limits` of another size is not written to.
        check_size(size)?;
        // SAFETY: the caller's contract above, for `size` bytes, a whole
        // `hrry_limits` (checked just above).
        let limits = unsafe { ptr::out(limits, "limits") }?;
        *limits = hrry_limits {
            size,
            max_memory: Limits::default().max_memory,
        };
        Ok(())
    })
}

/// `hrry_open` within `limits` (NULL: the defaults, as `hrry_open`). A file
/// whose metadata needs more memory than `limits->max_memory` allows is
/// `HRRY_INVALID`, the message naming `HF-LIM-001` and `max_memory`.
///
/// # Safety
/// As for `hrry_open`; `limits` is NULL or points to a `hrry_limits` set up by
/// `hrry_limits_init`.
#[no_mangle]
pub unsafe extern "C" fn hrry_open_limits(
    path: *const c_char,
    limits: *const hrry_limits,
    out: *mut *mut hrry_file,
) -> c_int {
    // SAFETY: the caller's contract above.
    unsafe {
        ptr::call_new(out, || {
            let limits = read(limits)?;
            crate::file::open_path(ptr::path(path, "path")?, limits)
        })
    }
}

/// `hrry_open_bytes` within `limits`, as `hrry_open_limits`.
///
/// # Safety
/// As for `hrry_open_bytes`; `limits` as for `hrry_open_limits`.
#[no_mangle]
pub unsafe extern "C" fn hrry_open_bytes_limits(
    data: *const u8,
    len: usize,
    limits: *const hrry_limits,
    out: *mut *mut hrry_file,
) -> c_int {
    // SAFETY: the caller's contract above: the bytes outlive the handle, which is
    // the only holder of this `'static` borrow.
    unsafe {
        ptr::call_new(out, || {
            let limits = read(limits)?;
            crate::file::open_bytes(ptr::bytes(data, len, "data")?, limits)
        })
    }
}

/// `hrry_validate_path_policy` within `limits` (NULL: the defaults). A file
/// whose metadata needs more memory than `limits->max_memory` allows gets a
/// report with `HF-LIM-001` naming `max_memory`, verdict `HRRY_VERDICT_REFUSED`.
///
/// # Safety
/// As for `hrry_validate_path_policy`; `limits` as for `hrry_open_limits`.
#[no_mangle]
pub unsafe extern "C" fn hrry_validate_path_limits(
    path: *const c_char,
    permissive: c_int,
    policy: c_int,
    limits: *const hrry_limits,
    out: *mut *mut hrry_report,
) -> c_int {
    // SAFETY: the caller's contract above.
    unsafe {
        ptr::call_new(out, || {
            let limits = read(limits)?;
            crate::report::produce_path(ptr::path(path, "path")?, permissive, policy, limits)
        })
    }
}

/// `hrry_validate_bytes_policy` within `limits`, as `hrry_validate_path_limits`.
///
/// # Safety
/// As for `hrry_validate_bytes_policy`; `limits` as for `hrry_open_limits`.
#[no_mangle]
pub unsafe extern "C" fn hrry_validate_bytes_limits(
    data: *const u8,
    len: usize,
    permissive: c_int,
    policy: c_int,
    limits: *const hrry_limits,
    out: *mut *mut hrry_report,
) -> c_int {
    // SAFETY: the caller's contract above.
    unsafe {
        ptr::call_new(out, || {
            let limits = read(limits)?;
            crate::report::produce(ptr::bytes(data, len, "data")?, permissive, policy, limits)
        })
    }
}
