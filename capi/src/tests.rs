//! Unit tests of the exported functions, called from Rust as C would call them.

mod ffi;
mod header;
#[cfg(target_os = "linux")]
mod memory;
