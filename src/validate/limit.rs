//! Violations of `HF-LIM-001`, which name the limit exceeded.

use crate::limits::Limit;

use super::rules::container::HF_LIM;
use super::Violation;

impl Violation {
    /// A violation of `HF-LIM-001`: the input asks for more than `limit` allows.
    pub fn limit(limit: Limit, offset: u64, message: impl Into<String>) -> Self {
        Violation {
            limit: Some(limit),
            ..Violation::new(&HF_LIM, offset, message)
        }
    }
}
