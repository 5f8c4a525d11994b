//! Typed values users program against: element types ([`ElementType`]), Rust
//! numbers for them ([`Element`]) and typed views of tensor data ([`view`]), KV
//! values from and to Rust values ([`kv`]), and constructors for common
//! descriptors ([`build`]).

pub mod build;
pub mod element_type;
pub mod kv;
pub mod quant;
pub mod view;

pub use element_type::{element_count, packed_size, ElementType, BUILTIN_TYPES};
pub use view::Element;
