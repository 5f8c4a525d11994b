//! What a validation judges: the [`Judging`] and the resource limits.

use crate::limits::Limits;

use super::{Judging, Report};

/// How to validate.
#[derive(Clone, Copy, Debug, Default)]
pub struct Options {
    /// Which rules count and how far the input is read (every rule of
    /// [`Rules::Hardened`](super::Rules::Hardened), to [`Depth::Data`](super::Depth::Data),
    /// by default).
    pub judging: Judging,
    /// Resource limits.
    pub limits: Limits,
}

impl Options {
    /// An empty report judging as these options ask.
    pub fn report(&self) -> Report {
        Report::new(self.judging)
    }
}
