//! The spec's names of element types and layouts, for C programs that print them.

use std::ffi::{c_char, CString};
use std::ptr::null;
use std::sync::OnceLock;

use hrry::model::ElementType;

/// `name` as a NUL-terminated string kept for the life of the program in `slot`.
fn static_c_str(slot: &'static OnceLock<CString>, name: &str) -> *const c_char {
    slot.get_or_init(|| CString::new(name).unwrap_or_default())
        .as_ptr()
}

/// The spec's name of element type `type_tag` (`"float32"`, `"int4"`,
/// `"float8_e4m3"`; `"extension"` for the private tags 0xF0-0xFE), a static
/// NUL-terminated string; NULL for a tag the spec does not define.
#[no_mangle]
pub extern "C" fn hrry_element_type_name(type_tag: u8) -> *const c_char {
    static NAMES: [OnceLock<CString>; 256] = [const { OnceLock::new() }; 256];
    match ElementType::from_tag(type_tag) {
        Some(ty) => static_c_str(&NAMES[usize::from(type_tag)], ty.name()),
        None => null(),
    }
}

/// The spec's name of layout `layout_tag` (`"row-major"`, `"csr"`, `"composite"`;
/// `"extension"` for the private tags 0xF0-0xFE), a static NUL-terminated string;
/// NULL for a tag the spec does not define.
#[no_mangle]
pub extern "C" fn hrry_layout_name(layout_tag: u8) -> *const c_char {
    static NAMES: [OnceLock<CString>; 256] = [const { OnceLock::new() }; 256];
    match hrry::schema::layout_name(layout_tag) {
        "unknown" => null(),
        name => static_c_str(&NAMES[usize::from(layout_tag)], name),
    }
}
