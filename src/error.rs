//! The one error type of reading and writing: every way a file, stream or message
//! can be refused is a [`Violation`] naming its rule.

use std::io;

use crate::limits::Limit;
use crate::validate::{Level, Rule, Violation};

/// Why a file, stream or message could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An I/O error from the underlying source or sink.
    #[error("I/O error: {0}")]
    Io(#[from] io::Error),
    /// The bytes break a rule: the rule, the absolute offset of the offending field,
    /// and what was expected and found. A limit exceeded is `HF-LIM-001`, with
    /// [`Violation::limit`] saying which. The message of a `hardening` or `limit`
    /// rule says the refusal is the policy's, not the spec's.
    #[error("{}", refusal(.0))]
    Invalid(Violation),
    /// A writer was used in a way that would produce invalid output.
    #[error("cannot write: {0}")]
    Usage(String),
}

/// The text of a violation as a reader's error: a rule of hrry's policy is named
/// as such, so that a refusal is never taken for the spec's verdict.
fn refusal(v: &Violation) -> String {
    match v.rule.level {
        Level::Spec => v.to_string(),
        Level::Hardening => format!("refused by the hardening policy (not a spec violation): {v}"),
        Level::Limit => format!("refused by a resource limit (not a spec violation): {v}"),
    }
}

impl Error {
    /// An [`Error::Invalid`] for `rule` at `offset`.
    pub fn invalid(rule: &'static Rule, offset: u64, message: impl Into<String>) -> Self {
        Error::Invalid(Violation::new(rule, offset, message))
    }

    /// An [`Error::Invalid`] for `HF-LIM-001`: the input asks for more than `limit`.
    pub fn limit(limit: Limit, offset: u64, message: impl Into<String>) -> Self {
        Error::Invalid(Violation::limit(limit, offset, message))
    }

    /// The violation, when the error is one.
    pub fn violation(&self) -> Option<&Violation> {
        match self {
            Error::Invalid(v) => Some(v),
            _ => None,
        }
    }

    /// The broken rule, when the error is a violation.
    pub fn rule(&self) -> Option<&'static Rule> {
        self.violation().map(|v| v.rule)
    }

    /// The limit exceeded, when the error is a violation of `HF-LIM-001`.
    pub fn exceeded_limit(&self) -> Option<Limit> {
        self.violation().and_then(|v| v.limit)
    }
}

impl From<Violation> for Error {
    fn from(v: Violation) -> Self {
        Error::Invalid(v)
    }
}
