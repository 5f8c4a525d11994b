//! How a command ends: its [`Outcome`], or a [`Failure`] (exit 2).

/// How a command ended.
pub enum Outcome {
    /// Success, or every file valid (exit 0).
    Ok,
    /// Some input was invalid (exit 1).
    Invalid,
    /// No input was invalid per the spec, but some was refused by the policy
    /// (exit 3).
    Refused,
    /// Some input could not be read; each was reported already (exit 2).
    Error,
}

/// A usage or I/O failure, printed as `hrry: <message>` with exit code 2.
pub struct Failure(pub String);

impl<E: std::fmt::Display> From<E> for Failure {
    fn from(e: E) -> Self {
        Failure(e.to_string())
    }
}
