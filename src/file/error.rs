//! Errors of the file layer: the crate's one [`Error`].

pub use crate::error::Error;

impl From<super::OutputError> for Error {
    fn from(e: super::OutputError) -> Self {
        Error::Io(e.into())
    }
}
