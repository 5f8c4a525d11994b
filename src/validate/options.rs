//! What a validation judges: the spec's reader mode, hrry's policy and the
//! resource limits.

use crate::limits::Limits;

use super::{Mode, Policy, Report};

/// How to validate.
#[derive(Clone, Copy, Debug, Default)]
pub struct Options {
    /// The spec's strict reading, or its permissive allowances.
    pub mode: Mode,
    /// Resource limits.
    pub limits: Limits,
    /// Whether `hardening` rules count ([`Policy::Hardened`], the default) or only
    /// the spec's ([`Policy::Spec`]).
    pub policy: Policy,
}

impl Options {
    /// An empty report judging as these options ask.
    pub fn report(&self) -> Report {
        Report::judging(self.mode, self.policy)
    }

    /// Whether `hardening` rules are judged: strict mode under the hardened
    /// policy.
    pub(crate) fn hardening(&self) -> bool {
        self.mode == Mode::Strict && self.policy == Policy::Hardened
    }
}
