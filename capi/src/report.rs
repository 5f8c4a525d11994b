//! `hrry_report`: the validator's verdict on a file, HRRYFILE or `.holo`.

use std::ffi::{c_char, c_int, CString};
use std::path::Path;
use std::ptr::null;

use hrry::limits::Limits;
use hrry::validate::{Options, Report, Rules, Verdict};
use hrry::Format;

use crate::error::{c_string, call, call_value, Failure};
use crate::{ptr, HRRY_ARGUMENT, HRRY_IO};

/// A validation report: whether the file is valid and every violation found.
pub struct hrry_report {
    violations: Box<[Entry]>,
    verdict: Verdict,
}

/// `policy` of `hrry_validate_path_policy`: the exact spec verdict, only the
/// spec's rules (and resource limits) count.
pub const HRRY_POLICY_SPEC: c_int = 0;
/// `policy` of `hrry_validate_path_policy`: the spec plus hrry's hardening rules
/// (what `hrry_validate_path` judges by in strict mode).
pub const HRRY_POLICY_HARDENED: c_int = 1;

/// `hrry_report_verdict`: no finding that counts.
pub const HRRY_VERDICT_VALID: c_int = 0;
/// `hrry_report_verdict`: a `spec` rule is broken.
pub const HRRY_VERDICT_INVALID: c_int = 1;
/// `hrry_report_verdict`: valid per the spec, refused by the policy (a
/// `hardening` rule, or a resource `limit`); the value `hrry validate` exits with.
pub const HRRY_VERDICT_REFUSED: c_int = 3;

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
        hrry_report {
            violations,
            verdict: report.verdict(),
        }
    }
}

/// Strict, or permissive when `permissive`, within `limits`, under `policy`
/// (`HRRY_POLICY_SPEC` or `HRRY_POLICY_HARDENED`).
fn options(permissive: bool, policy: c_int, limits: Limits) -> Result<Options, Failure> {
    let policy = match policy {
        HRRY_POLICY_SPEC => Rules::Spec,
        HRRY_POLICY_HARDENED => Rules::Hardened,
        other => {
            return Err(Failure::new(
                HRRY_ARGUMENT,
                format!("policy is HRRY_POLICY_SPEC (0) or HRRY_POLICY_HARDENED (1), not {other}"),
            ))
        }
    };
    Ok(Options {
        judging: Rules::from_switches(permissive, policy).into(),
        limits,
    })
}

/// The policy of the functions without one: hardened, unless permissive.
fn default_policy(permissive: c_int) -> c_int {
    if permissive != 0 {
        HRRY_POLICY_SPEC
    } else {
        HRRY_POLICY_HARDENED
    }
}

/// A new report on `bytes`.
pub(crate) fn produce(
    bytes: &[u8],
    permissive: c_int,
    policy: c_int,
    limits: Limits,
) -> Result<hrry_report, Failure> {
    let options = options(permissive != 0, policy, limits)?;
    let report = Format::detect(bytes, None).validate_bytes(bytes, &options);
    Ok(hrry_report::new(&report))
}

/// A new report on the file at `path`, read where the rules look.
pub(crate) fn produce_path(
    path: &Path,
    permissive: c_int,
    policy: c_int,
    limits: Limits,
) -> Result<hrry_report, Failure> {
    let options = options(permissive != 0, policy, limits)?;
    let (_, report) = hrry::validate_path(path, &options)
        .map_err(|e| Failure::new(HRRY_IO, format!("{}: cannot read: {e}", path.display())))?;
    Ok(hrry_report::new(&report))
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
    unsafe { hrry_validate_path_policy(path, permissive, default_policy(permissive), out) }
}

/// `hrry_validate_path` under `policy`: `HRRY_POLICY_SPEC` for the exact spec
/// verdict, `HRRY_POLICY_HARDENED` for hrry's hardening rules too (any other value
/// is `HRRY_ARGUMENT`). `hrry_report_verdict` then tells an invalid file from one
/// refused by the policy.
///
/// # Safety
/// `path` is NULL or a NUL-terminated string; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hrry_validate_path_policy(
    path: *const c_char,
    permissive: c_int,
    policy: c_int,
    out: *mut *mut hrry_report,
) -> c_int {
    // SAFETY: the caller's contract above.
    unsafe {
        ptr::call_new(out, || {
            produce_path(
                ptr::path(path, "path")?,
                permissive,
                policy,
                Limits::default(),
            )
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
    unsafe { hrry_validate_bytes_policy(data, len, permissive, default_policy(permissive), out) }
}

/// `hrry_validate_bytes` under `policy`, as `hrry_validate_path_policy`.
///
/// # Safety
/// `data` is NULL or points to `len` readable bytes; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hrry_validate_bytes_policy(
    data: *const u8,
    len: usize,
    permissive: c_int,
    policy: c_int,
    out: *mut *mut hrry_report,
) -> c_int {
    // SAFETY: the caller's contract above.
    unsafe {
        ptr::call_new(out, || {
            produce(
                ptr::bytes(data, len, "data")?,
                permissive,
                policy,
                Limits::default(),
            )
        })
    }
}

/// The report's verdict: `HRRY_VERDICT_VALID`, `HRRY_VERDICT_INVALID` (a spec
/// rule is broken) or `HRRY_VERDICT_REFUSED` (valid per the spec, refused by the
/// policy); `HRRY_VERDICT_INVALID` for NULL.
///
/// # Safety
/// `r` is NULL or a live report.
#[no_mangle]
pub unsafe extern "C" fn hrry_report_verdict(r: *const hrry_report) -> c_int {
    call_value(HRRY_VERDICT_INVALID, || {
        // SAFETY: the caller's contract above.
        unsafe { ptr::arg(r, "r") }.map_or(HRRY_VERDICT_INVALID, |r| match r.verdict {
            Verdict::Valid => HRRY_VERDICT_VALID,
            Verdict::Invalid => HRRY_VERDICT_INVALID,
            Verdict::Refused => HRRY_VERDICT_REFUSED,
        })
    })
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
