//! Errors of the file layer.

use std::io;

/// Why a file could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An I/O error from the underlying file or sink.
    #[error("I/O error: {0}")]
    Io(#[from] io::Error),
    /// The bytes break a rule that makes reading impossible or unsafe.
    #[error("{rule} at offset {offset}: {message}")]
    Invalid {
        /// The rule ID.
        rule: &'static str,
        /// Absolute byte offset of the offending field.
        offset: u64,
        /// What was expected and what was found.
        message: String,
    },
    /// The file goes past a configured [`crate::limits::Limits`] value.
    #[error("limit {limit} exceeded at offset {offset}: {value} > {max}")]
    Limit {
        /// Name of the `Limits` field.
        limit: &'static str,
        /// The value the file asks for.
        value: u64,
        /// The configured maximum.
        max: u64,
        /// Where the count was read.
        offset: u64,
    },
    /// The file is not a HRRYFILE; the text says what it most likely is.
    #[error("not a Hurray file: {0}")]
    NotHrry(String),
    /// A writer was used in a way that would produce an invalid file.
    #[error("cannot write: {0}")]
    Usage(String),
}

impl From<super::OutputError> for Error {
    fn from(e: super::OutputError) -> Self {
        Error::Io(e.into())
    }
}

impl Error {
    /// An [`Error::Invalid`] for `rule`.
    pub fn invalid(rule: &'static crate::validate::Rule, offset: u64, message: String) -> Self {
        Error::Invalid {
            rule: rule.id,
            offset,
            message,
        }
    }

    /// The rule ID this error reports, if any.
    pub fn rule(&self) -> Option<&'static str> {
        match self {
            Error::Invalid { rule, .. } => Some(rule),
            Error::Limit { .. } => Some("HF-LIM-001"),
            _ => None,
        }
    }
}
