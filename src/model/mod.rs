//! Typed values users program against, and constructors for common descriptors.

pub mod build;
pub mod element_type;

pub use element_type::{element_count, packed_size, ElementType, BUILTIN_TYPES};
