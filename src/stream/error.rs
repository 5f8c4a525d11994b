//! Errors of the stream layer: the crate's one [`Error`].

pub use crate::error::Error;
