//! `docs/conformance.md` is the output of `hrry rules --markdown`, current with the
//! rule table.

use std::path::PathBuf;

#[test]
fn conformance_map_is_current() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/conformance.md");
    let on_disk = std::fs::read_to_string(&path).expect("docs/conformance.md");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_hrry"))
        .args(["rules", "--markdown"])
        .output()
        .expect("run hrry");
    assert!(out.status.success());
    let printed = String::from_utf8(out.stdout).expect("UTF-8");
    // Every rule of the table is in the map, so an empty or partial output fails.
    for rule in hrry::validate::all_rules() {
        assert!(
            printed.contains(&format!("`{}`", rule.id)),
            "{} missing",
            rule.id
        );
    }
    assert!(
        on_disk == printed,
        "docs/conformance.md is stale; run `cargo run -- rules --markdown > docs/conformance.md`"
    );
}
