//! The rule table, one module per area. Each module declares its rules with
//! `declare_rules!` (crate-private); [`TABLES`] lists the modules' `RULES` slices.

pub mod container;
pub mod holo;
pub mod layout;
pub mod quant;
pub mod stream;
pub mod transport;

/// Every area's rule slice, in the order `hrry rules` lists them.
pub static TABLES: &[&[&super::Rule]] = &[
    container::RULES,
    layout::RULES,
    quant::RULES,
    holo::RULES,
    stream::RULES,
    transport::RULES,
];
