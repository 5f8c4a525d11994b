//! Typed values users program against, built from validated schema values.

pub mod element_type;

pub use element_type::{element_count, packed_size, ElementType};
