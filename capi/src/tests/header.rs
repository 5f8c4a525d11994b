//! The committed `include/hrry.h` is what cbindgen generates from the sources.

use std::path::Path;

#[test]
fn header_is_current() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(dir.join("cbindgen.toml")).unwrap();
    let mut generated = Vec::new();
    cbindgen::Builder::new()
        .with_crate(dir)
        .with_config(config)
        .generate()
        .expect("cbindgen cannot read the sources")
        .write(&mut generated);
    let path = dir.join("include/hrry.h");
    if std::env::var_os("HRRY_CAPI_BLESS").is_some() {
        std::fs::write(&path, &generated).unwrap();
    }
    let committed = std::fs::read(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "include/hrry.h is stale: run `HRRY_CAPI_BLESS=1 cargo test -p hrry-capi header` and commit it"
    );
}
