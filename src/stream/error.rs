//! Errors of the stream layer.

use std::io;

use crate::validate::{Rule, Violation};

/// Why a stream or a message could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An I/O error from the underlying source or sink.
    #[error("I/O error: {0}")]
    Io(#[from] io::Error),
    /// The bytes break a rule that makes reading on impossible or unsafe: the rule,
    /// the absolute offset of the offending field, expected vs found.
    #[error("{0}")]
    Invalid(Violation),
    /// A writer was used in a way that would produce an invalid stream.
    #[error("cannot write: {0}")]
    Usage(String),
}

impl Error {
    /// An [`Error::Invalid`] for `rule` at `offset`.
    pub fn invalid(rule: &'static Rule, offset: u64, message: impl Into<String>) -> Self {
        Error::Invalid(Violation {
            rule,
            offset,
            message: message.into(),
        })
    }

    /// The broken rule, if the error is a rule violation.
    pub fn violation(&self) -> Option<&Violation> {
        match self {
            Error::Invalid(v) => Some(v),
            _ => None,
        }
    }
}

impl From<crate::file::Error> for Error {
    /// Keeps a file error's rule, so that packing a broken file names what broke.
    fn from(e: crate::file::Error) -> Self {
        use crate::file::Error as F;
        if let F::Limit { offset, .. } = &e {
            let offset = *offset;
            return Error::invalid(
                &crate::validate::rules::container::HF_LIM,
                offset,
                e.to_string(),
            );
        }
        match e {
            F::Io(e) => Error::Io(e),
            F::Invalid {
                rule,
                offset,
                message,
            } => match crate::validate::rule_by_id(rule) {
                Some(rule) => Error::invalid(rule, offset, message),
                None => Error::Usage(format!("{rule} at offset {offset}: {message}")),
            },
            other => Error::Usage(other.to_string()),
        }
    }
}
