//! The rules, layered on the schema.
//!
//! Every MUST / MUST NOT we enforce is one [`Rule`] with a stable ID, declared as
//! data in [`rules`]; checks report [`Violation`]s with absolute byte offsets into a
//! [`Report`]. [`all_rules`] is the rule table `hrry rules` prints.

mod buffer;
pub mod composite;
pub mod conformance;
mod container;
pub mod decode;
pub mod descriptor;
pub mod layout;
pub mod quant;
mod region;
mod rule;
pub mod rules;

pub use container::{validate_file, Options};
pub use rule::{Level, Mode, Report, Rule, Violation, MAX_VIOLATIONS_PER_RULE};

/// Every rule of every area, in table order.
pub fn all_rules() -> impl Iterator<Item = &'static Rule> {
    rules::TABLES.iter().flat_map(|t| t.iter().copied())
}

/// The rule with `id`, if any.
pub fn rule_by_id(id: &str) -> Option<&'static Rule> {
    all_rules().find(|r| r.id == id)
}
