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

pub use container::Options;
pub(crate) use rule::declare_rules;
pub use rule::{Level, Mode, Report, Rule, Violation, MAX_VIOLATIONS_PER_RULE};

/// Validates a HRRYFILE held in memory and reports every violation found: the
/// header, trailer, index and KV metadata first, then the tensor region they
/// locate.
pub fn validate_file(bytes: &[u8], options: &Options) -> Report {
    let mut report = Report::new(options.mode);
    if let Some(frame) = container::check_frame(bytes, options.limits, &mut report) {
        region::check_region(&frame, &mut report);
    }
    report
}

/// Every rule of every area, in table order.
pub fn all_rules() -> impl Iterator<Item = &'static Rule> {
    rules::TABLES.iter().flat_map(|t| t.iter().copied())
}

/// The rule with `id`, if any.
pub fn rule_by_id(id: &str) -> Option<&'static Rule> {
    all_rules().find(|r| r.id == id)
}
