//! `hrry_report`: the validator's verdict on a file, HRRYFILE or `.holo`.

use std::ffi::{c_char, c_int, CString};
use std::path::Path;
use std::ptr::null;

use hrry::validate::{Mode, Options, Report};
use hrry::Format;

use crate::error::{c_string, call, call_value, Failure};
use crate::{ptr, HRRY_IO};

/// A validation report: whether the file is valid and every violation found.
pub struct hrry_report {
    violations: Box<[Entry]>,
}

/// One violation, its strings NUL-terminated for C.
struct Entry {
    rule: CString,
    offset: u64,
    message: CString,
}

impl hrry_report {
    fn new(report: &Report) -> Self {
        let violations = report
            .violations
            .iter()
            .map(|v| Entry {
                rule: c_string(v.rule.id),
                offset: v.offset,
                message: c_string(&v.message),
            })
            .collect();
        hrry_report { violations }
    }
}

/// Strict, or permissive when `permissive`, with the default limits.
fn options(permissive: bool) -> Options {
    Options {
        mode: if permissive {
            Mode::Permissive
        } else {
            Mode::Strict
        },
        ..Options::default()
    }
}

/// Validates `bytes` as the format their magic (or `path`'s extension) says.
pub(crate) fn validate(bytes: &[u8], path: Option<&Path>, permissive: bool) -> (Format, Report) {
    let format = Format::detect(bytes, path);
    (format, format.validate_bytes(bytes, &options(permissive)))
}

/// A new report on `bytes`.
fn produce(bytes: &[u8], path: Option<&Path>, permissive: c_int) -> hrry_report {
    let (_, report) = validate(bytes, path, permissive != 0);
    hrry_report::new(&report)
}

/// Validates the file at `path` (a HRRYFILE or a `.holo` archive, recognised by its
/// magic), strictly or, when `permissive` is non-zero, following the spec's
/// permissive allowances. Only what the rules look at is read (never tensor data),
/// so memory stays small whatever the file's size. Returns `HRRY_OK` whenever a
/// report was produced, valid or not (free it with `hrry_report_free`); `HRRY_IO`
/// when the file cannot be read or is not a regular file (a directory, pipe or
/// device); `HRRY_ARGUMENT` for a NULL or empty `path` or a NULL `out`. On failure
/// `*out` is NULL.
///
/// # Safety
/// `path` is NULL or a NUL-terminated string; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hrry_validate_path(
    path: *const c_char,
    permissive: c_int,
    out: *mut *mut hrry_report,
) -> c_int {
    // SAFETY: the caller's contract above.
    unsafe {
        ptr::call_new(out, || {
            let path = ptr::path(path, "path")?;
            let (_, report) =
                hrry::validate_path(path, &options(permissive != 0)).map_err(|e| {
                    Failure::new(HRRY_IO, format!("{}: cannot read: {e}", path.display()))
                })?;
            Ok(hrry_report::new(&report))
        })
    }
}

/// Validates `data[0..len]` as `hrry_validate_path` validates a file (the bytes are
/// only read during the call). NULL `data` or `len` 0 is `HRRY_ARGUMENT`.
///
/// # Safety
/// `data` is NULL or points to `len` readable bytes; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hrry_validate_bytes(
    data: *const u8,
    len: usize,
    permissive: c_int,
    out: *mut *mut hrry_report,
) -> c_int {
    // SAFETY: the caller's contract above.
    unsafe {
        ptr::call_new(out, || {
            Ok(produce(ptr::bytes(data, len, "data")?, None, permissive))
        })
    }
}

/// 1 when the report lists no violation, 0 otherwise (and for NULL).
///
/// # Safety
/// `r` is NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn hrry_report_valid(r: *const hrry_report) -> c_int {
    call_value(0, || {
        // SAFETY: the caller's contract above.
        unsafe { ptr::arg(r, "r") }.map_or(0, |r| c_int::from(r.violations.is_empty()))
    })
}

/// Number of violations listed; 0 for NULL.
///
/// # Safety
/// `r` is NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn hrry_report_count(r: *const hrry_report) -> usize {
    call_value(0, || {
        // SAFETY: the caller's contract above.
        unsafe { ptr::arg(r, "r") }.map_or(0, |r| r.violations.len())
    })
}

/// Violation `k` (in the order found): its rule ID (e.g. `"HF-HDR-001"`), the
/// absolute byte offset of the offending field and a message saying what was
/// expected and found. The strings are NUL-terminated UTF-8 living as long as the
/// report. Any of `rule`, `offset`, `message` may be NULL (not written). `k` out of
/// range is `HRRY_NOT_FOUND`; on failure the string outputs are set to NULL.
///
/// # Safety
/// `r` is NULL or a live report; each output is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hrry_report_violation(
    r: *const hrry_report,
    k: usize,
    rule: *mut *const c_char,
    offset: *mut u64,
    message: *mut *const c_char,
) -> c_int {
    call(|| {
        // SAFETY: the caller's contract above (for all three outputs).
        unsafe {
            ptr::write_opt(rule, null());
            ptr::write_opt(message, null());
        }
        // SAFETY: the caller's contract above.
        let report = unsafe { ptr::arg(r, "r") }?;
        let count = report.violations.len();
        let v = report.violations.get(k).ok_or_else(|| {
            Failure::not_found(format!(
                "violation index {k} is out of range: the report lists {count}"
            ))
        })?;
        // SAFETY: the caller's contract above (for all three outputs).
        unsafe {
            ptr::write_opt(rule, v.rule.as_ptr());
            ptr::write_opt(offset, v.offset);
            ptr::write_opt(message, v.message.as_ptr());
        }
        Ok(())
    })
}

/// Frees a report; its strings become invalid. NULL is a no-op.
///
/// # Safety
/// `r` is NULL or a report from `hrry_validate_*` not yet freed.
#[no_mangle]
pub unsafe extern "C" fn hrry_report_free(r: *mut hrry_report) {
    // SAFETY: the caller's contract above.
    unsafe { ptr::free(r) }
}
