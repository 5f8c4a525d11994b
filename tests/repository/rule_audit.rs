//! `docs/rule-audit.md` lists every rule of the table under the sentence that makes
//! it binding, with the rule's current level: a new rule, or a level changed without
//! the audit saying why, fails here.

use std::collections::BTreeMap;
use std::path::Path;

use hrry::validate::all_rules;

/// The rows of the audit's last table: each listed rule ID and the level its row
/// names.
fn listed_levels(text: &str) -> BTreeMap<String, String> {
    let section = text
        .split("## Every rule by the sentence that makes it binding")
        .nth(1)
        .expect("the audit's table of every rule");
    let mut listed = BTreeMap::new();
    for line in section.lines().filter(|l| l.starts_with("| ")) {
        let cells: Vec<&str> = line.split(" | ").collect();
        if cells.len() != 3 {
            continue;
        }
        let level = cells[1].trim().to_string();
        for id in cells[2].split('`').skip(1).step_by(2) {
            let previous = listed.insert(id.to_string(), level.clone());
            assert!(previous.is_none(), "{id} is listed twice");
        }
    }
    listed
}

#[test]
fn the_audit_lists_every_rule_at_its_level() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("docs/rule-audit.md")).expect("the audit");
    let listed = listed_levels(&text);
    let mut wrong = Vec::new();
    for rule in all_rules() {
        match listed.get(rule.id) {
            Some(level) if level == rule.level.name() => {}
            Some(level) => wrong.push(format!(
                "{} is {} but the audit lists it as {level}",
                rule.id,
                rule.level.name()
            )),
            None => wrong.push(format!("{} is not in the audit", rule.id)),
        }
    }
    let known: Vec<&str> = all_rules().map(|r| r.id).collect();
    for id in listed.keys() {
        if !known.contains(&id.as_str()) {
            wrong.push(format!("the audit lists {id}, which is no rule"));
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
fn spec_rules_cite_the_spec() {
    // A spec rule cites a file of the spec (or the .holo archive layout), not only
    // hrry's own readings.
    let spec_files = [
        "file-format.md",
        "metadata.md",
        "element-types.md",
        "data-model.md",
        "memory-layout.md",
        "buffer-protocol.md",
        "interchange.md",
        "quantization.md",
        "quantization/",
        "layouts/",
        "versioning.md",
        "archive-format",
    ];
    let bare: Vec<&str> = all_rules()
        .filter(|r| r.level.name() == "spec")
        .filter(|r| !spec_files.iter().any(|f| r.spec.contains(f)))
        .map(|r| r.id)
        .collect();
    assert!(bare.is_empty(), "spec rules citing no spec file: {bare:?}");
}
