//! Status codes and the thread-local last error: how a failure of the core becomes
//! a return value and a message for C.

use std::cell::RefCell;
use std::ffi::{c_char, c_int, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::{
    HRRY_ARGUMENT, HRRY_INTERNAL, HRRY_INVALID, HRRY_IO, HRRY_NOT_FOUND, HRRY_OK, HRRY_UNSUPPORTED,
};

/// A failed call: its status code and the message [`hrry_last_error`] returns.
#[derive(Debug)]
pub(crate) struct Failure {
    pub status: c_int,
    pub message: String,
}

impl Failure {
    pub fn new(status: c_int, message: impl Into<String>) -> Self {
        Failure {
            status,
            message: message.into(),
        }
    }

    /// A bad argument (`HRRY_ARGUMENT`).
    pub fn argument(message: impl Into<String>) -> Self {
        Self::new(HRRY_ARGUMENT, message)
    }

    /// An index or name with nothing behind it (`HRRY_NOT_FOUND`).
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(HRRY_NOT_FOUND, message)
    }
}

/// The status of each kind of the core's one error: I/O is `HRRY_IO`; a call the
/// input cannot serve or output the writer cannot write is `HRRY_ARGUMENT`; a
/// valid input an operation does not handle (a layout with no logical order, a
/// tensor that is not quantized, an output over its bound) or an input of another
/// format is `HRRY_UNSUPPORTED`; a broken rule is `HRRY_INVALID`.
impl From<hrry::Error> for Failure {
    fn from(e: hrry::Error) -> Self {
        let status = match e {
            hrry::Error::Io(_) => HRRY_IO,
            hrry::Error::Usage(_) | hrry::Error::Write(_) => HRRY_ARGUMENT,
            hrry::Error::Unsupported(_) | hrry::Error::Format(_) => HRRY_UNSUPPORTED,
            hrry::Error::Invalid(_) => HRRY_INVALID,
        };
        Failure::new(status, e.to_string())
    }
}

thread_local! {
    /// The message of the last failure on this thread.
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

/// `text` as a C string. A NUL inside it (a tensor name may hold one) is shown as
/// `\0`, so that C sees the whole text.
pub(crate) fn c_string(text: &str) -> CString {
    CString::new(text.replace('\0', "\\0")).unwrap_or_default()
}

/// Stores `message` as this thread's last error.
pub(crate) fn set_last_error(message: &str) {
    let text = c_string(message);
    LAST_ERROR.with(|e| *e.borrow_mut() = text);
}

/// Runs the body of an exported function: its `Ok` is `HRRY_OK`; a failure or a
/// caught panic sets the last error and returns its status.
pub(crate) fn call(body: impl FnOnce() -> Result<(), Failure>) -> c_int {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => HRRY_OK,
        Ok(Err(f)) => {
            set_last_error(&f.message);
            f.status
        }
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            set_last_error(&format!("internal error (a bug in hrry): {what}"));
            HRRY_INTERNAL
        }
    }
}

/// Runs `body` for an exported function that returns a value rather than a status;
/// a panic gives `fallback`.
pub(crate) fn call_value<T>(fallback: T, body: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or(fallback)
}

/// The message of the last failed call on the calling thread: UTF-8, NUL-terminated,
/// never NULL (empty before any failure). A successful call leaves it unchanged. The
/// pointer stays valid until the next failing call on this thread.
#[no_mangle]
pub extern "C" fn hrry_last_error() -> *const c_char {
    call_value(c"".as_ptr(), || {
        LAST_ERROR
            .try_with(|e| e.borrow().as_ptr())
            .unwrap_or(c"".as_ptr())
    })
}

/// The name of a status code (`"HRRY_INVALID"`), a static NUL-terminated string;
/// `"HRRY_UNKNOWN"` for a value that is not one.
#[no_mangle]
pub extern "C" fn hrry_status_name(status: c_int) -> *const c_char {
    let name = match status {
        HRRY_OK => c"HRRY_OK",
        HRRY_INVALID => c"HRRY_INVALID",
        HRRY_IO => c"HRRY_IO",
        HRRY_NOT_FOUND => c"HRRY_NOT_FOUND",
        HRRY_UNSUPPORTED => c"HRRY_UNSUPPORTED",
        HRRY_ARGUMENT => c"HRRY_ARGUMENT",
        HRRY_INTERNAL => c"HRRY_INTERNAL",
        _ => c"HRRY_UNKNOWN",
    };
    name.as_ptr()
}
