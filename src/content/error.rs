//! The errors of opening a model file or reading a tensor's values: the crate's one
//! [`Error`].
//!
//! A file that cannot be read is [`Error::Io`] (naming the path), [`Error::Format`]
//! (not a model file, or a malformed safetensors or GGUF one) or a HRRYFILE's own
//! error. One tensor whose values cannot be read (an element type that is not
//! numbers, a layout with no logical order) is [`Error::Unsupported`]: the caller
//! asked for that tensor, so the message says why, not which; the other tensors
//! can still be read.

pub use crate::error::Error;

/// The text of [`stopped`].
const STOPPED: &str = "not read: the reading was stopped (an earlier read failed)";

/// A reading stopped by its consumer, or a tensor not read because an earlier
/// read of the file failed: an interrupted operation.
pub(crate) fn stopped() -> Error {
    Error::Io(std::io::Error::new(
        std::io::ErrorKind::Interrupted,
        STOPPED,
    ))
}

/// Whether `e` is [`stopped`].
pub(crate) fn is_stopped(e: &Error) -> bool {
    matches!(e, Error::Io(io) if io.kind() == std::io::ErrorKind::Interrupted && io.to_string() == STOPPED)
}
