//! The rules, layered on the schema.
//!
//! Every MUST / MUST NOT we enforce is one [`Rule`] with a stable ID, declared as
//! data in [`rules`]; checks report [`Violation`]s with absolute byte offsets into a
//! [`Report`], judged as a [`Judging`] says (which [`Rules`] count, to which
//! [`Depth`] the input is read). [`all_rules`] is the rule table `hrry rules`
//! prints.

pub mod conformance;
mod judging;
mod limit;
mod options;
mod rule;
pub mod rules;

pub use judging::{Depth, Judging, Rules};
pub use options::Options;
pub(crate) use rule::declare_rules;
pub(crate) use rule::Pass;
pub use rule::{Level, Reads, Report, Rule, Verdict, Violation, MAX_VIOLATIONS_PER_RULE};

/// Every rule of every area, in table order.
pub fn all_rules() -> impl Iterator<Item = &'static Rule> {
    rules::TABLES.iter().flat_map(|t| t.iter().copied())
}

/// The rule with `id`, if any (a lookup in a table built on first use).
pub fn rule_by_id(id: &str) -> Option<&'static Rule> {
    static BY_ID: std::sync::OnceLock<std::collections::HashMap<&'static str, &'static Rule>> =
        std::sync::OnceLock::new();
    BY_ID
        .get_or_init(|| all_rules().map(|r| (r.id, r)).collect())
        .get(id)
        .copied()
}
