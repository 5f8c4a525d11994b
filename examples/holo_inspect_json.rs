//! Prints [`hrry::holo::inspect_json`] for a `.holo` archive, pretty JSON on stdout.
//!
//! usage: `cargo run --release --example holo_inspect_json -- FILE.holo`
//!
//! The Kaitai cross-check (`tests/kaitai/check.py`) compares `.holo` files with
//! this when `hrry inspect --json` does not print the archive's JSON itself.

fn main() {
    let Some(path) = std::env::args_os().nth(1) else {
        eprintln!("usage: holo_inspect_json FILE.holo");
        std::process::exit(2);
    };
    let bytes = std::fs::read(&path).unwrap_or_else(|e| {
        eprintln!("cannot read {}: {e}", path.to_string_lossy());
        std::process::exit(2);
    });
    match hrry::holo::inspect_json(&bytes) {
        Ok(v) => println!(
            "{}",
            serde_json::to_string_pretty(&v).expect("JSON values serialize")
        ),
        Err(e) => {
            eprintln!("{}: {e}", path.to_string_lossy());
            std::process::exit(1);
        }
    }
}
