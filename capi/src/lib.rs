//! The C ABI of `hrry`: `libhrry` and `include/hrry.h`.
//!
//! Opens, validates, reads and dequantizes Hurray tensor files from C, C++ or any
//! language with a C foreign-function interface. The functions translate types and
//! errors and call the core library; no rule, layout or kernel lives here.
//!
//! Every function catches panics (none crosses into C), checks every pointer and
//! length it is given and reports failure through its return value, with a message in
//! [`hrry_last_error`]. Nothing aborts on bad input.

#![allow(non_camel_case_types)]

mod error;
mod file;
mod kv;
mod kv_table;
mod limits;
mod names;
mod ptr;
mod report;

use std::ffi::c_char;

pub use error::{hrry_last_error, hrry_status_name};
pub use file::{
    hrry_close, hrry_dequantize, hrry_file, hrry_find, hrry_open, hrry_open_bytes,
    hrry_read_row_major, hrry_row_major_size, hrry_tensor_buffer, hrry_tensor_count,
    hrry_tensor_info, hrry_tensor_info_get, hrry_tensor_name,
};
pub use kv::{
    hrry_kv_bool, hrry_kv_bytes, hrry_kv_count, hrry_kv_float64, hrry_kv_int64, hrry_kv_key,
    hrry_kv_text, hrry_kv_type, hrry_kv_type_name, hrry_kv_uint64,
};
pub use limits::{
    hrry_limits, hrry_limits_init, hrry_open_bytes_limits, hrry_open_limits,
    hrry_validate_bytes_limits, hrry_validate_path_limits,
};
pub use names::{hrry_element_type_name, hrry_layout_name};
pub use report::{
    hrry_report, hrry_report_count, hrry_report_free, hrry_report_valid, hrry_report_verdict,
    hrry_report_violation, hrry_validate_bytes, hrry_validate_bytes_policy, hrry_validate_path,
    hrry_validate_path_policy, HRRY_POLICY_HARDENED, HRRY_POLICY_SPEC, HRRY_VERDICT_INVALID,
    HRRY_VERDICT_REFUSED, HRRY_VERDICT_VALID,
};

/// Version of this ABI: the names, signatures and status codes of `hrry.h`. Raised
/// whenever a change could break a program compiled against an older header; compare
/// it with `hrry_abi_version()` to check that the library loaded at run time matches.
pub const HRRY_ABI_VERSION: u32 = 1;

/// KV value type (`hrry_kv_type`): a UTF-8 string (`hrry_kv_bytes`, `hrry_kv_text`).
pub const HRRY_KV_STRING: u8 = 0x01;
/// KV value type: int64 (`hrry_kv_int64`).
pub const HRRY_KV_INT64: u8 = 0x02;
/// KV value type: uint64 (`hrry_kv_uint64`).
pub const HRRY_KV_UINT64: u8 = 0x03;
/// KV value type: float64 (`hrry_kv_float64`).
pub const HRRY_KV_FLOAT64: u8 = 0x04;
/// KV value type: bool (`hrry_kv_bool`).
pub const HRRY_KV_BOOL: u8 = 0x05;
/// KV value type: a byte sequence (`hrry_kv_bytes`).
pub const HRRY_KV_BYTES: u8 = 0x06;
/// KV value type: an array of one scalar type (`hrry_kv_text` renders it).
pub const HRRY_KV_ARRAY: u8 = 0x07;

/// Success.
pub const HRRY_OK: i32 = 0;
/// The file breaks a rule of the format (the rule ID starts the message).
pub const HRRY_INVALID: i32 = 1;
/// The file could not be read (missing, unreadable).
pub const HRRY_IO: i32 = 2;
/// No tensor, buffer or violation has that index or name.
pub const HRRY_NOT_FOUND: i32 = 3;
/// Not something this call handles (e.g. dequantizing a tensor that is not
/// quantized, an element type with no row-major export, a `.holo` archive or a
/// bare stream given to `hrry_open`).
pub const HRRY_UNSUPPORTED: i32 = 4;
/// A bad argument: a NULL or misaligned required pointer, a zero or wrong length.
pub const HRRY_ARGUMENT: i32 = 5;
/// A bug in hrry: a panic was caught at the boundary. Please report it.
pub const HRRY_INTERNAL: i32 = 6;

/// The ABI version the library was built with (the `HRRY_ABI_VERSION` of its header).
#[no_mangle]
pub extern "C" fn hrry_abi_version() -> u32 {
    HRRY_ABI_VERSION
}

/// The library version (`"0.1.0"`), a static NUL-terminated string.
#[no_mangle]
pub extern "C" fn hrry_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}

#[cfg(test)]
mod tests;
