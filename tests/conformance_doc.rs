//! `docs/conformance.md` is the output of `hrry rules --markdown`, current with the
//! rule table.

use std::path::PathBuf;

#[test]
fn conformance_map_is_current() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/conformance.md");
    let on_disk = std::fs::read_to_string(&path).expect("docs/conformance.md");
    let expected = hrry::validate::conformance::markdown();
    assert!(
        on_disk == expected,
        "docs/conformance.md is stale; run `cargo run -- rules --markdown > docs/conformance.md`"
    );
}

#[test]
fn the_cli_prints_the_same_map() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_hrry"))
        .args(["rules", "--markdown"])
        .output()
        .expect("run hrry");
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        hrry::validate::conformance::markdown()
    );
}
