//! Regenerates the conformance corpus: `cargo run -p hrry-tools --bin gen_corpus [DIR]`
//! (default `corpus/`).

fn main() -> std::io::Result<()> {
    let dir = std::env::args().nth(1).unwrap_or_else(|| "corpus".into());
    let cases = hrry_testkit::corpus::all_cases();
    hrry_testkit::corpus::write_corpus(std::path::Path::new(&dir), &cases)?;
    println!("wrote {} files and manifest.json to {dir}", cases.len());
    Ok(())
}
