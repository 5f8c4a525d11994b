//! The rules, layered on the schema.
//!
//! Every MUST / MUST NOT we enforce is one [`Rule`] with a stable ID, declared as
//! data in [`rules`]; checks report [`Violation`]s with absolute byte offsets into a
//! [`Report`]. [`all_rules`] is the rule table `hrry rules` prints.

pub mod budget;
mod buffer;
pub mod composite;
pub mod conformance;
mod container;
pub mod decode;
pub(crate) mod decoded;
pub mod descriptor;
pub(crate) mod input;

pub(crate) use input::unread;
pub mod layout;
mod limit;
pub mod quant;
mod region;
mod rule;
pub mod rules;

use std::io;

use crate::source::ReadAt;

pub use container::Options;
pub(crate) use rule::declare_rules;
pub(crate) use rule::Pass;
pub use rule::{
    Level, Mode, Policy, Reads, Report, Rule, Verdict, Violation, MAX_VIOLATIONS_PER_RULE,
};

/// Validates the HRRYFILE `source` and reports every violation found, reading only
/// what the rules look at: the header, trailer, index, KV, every descriptor and the
/// padding around it, quantization parameters, sparse index structures and the few
/// data bytes a rule inspects (packing tails, padding elements, `float8_e8m0`
/// codes), never whole dense data buffers; a failed read is returned instead.
pub(crate) fn validate_source(source: &dyn ReadAt, options: &Options) -> io::Result<Report> {
    let pass = Pass {
        spec_only: !options.hardening(),
        ..Pass::default()
    };
    let (mut report, _) = decoded::decode_file(
        source,
        options.limits,
        options.mode,
        pass,
        decoded::Depth::Region,
    )?;
    report.policy = options.policy;
    Ok(report)
}

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
