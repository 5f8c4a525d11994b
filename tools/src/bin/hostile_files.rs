//! Writes the hostile-file set of `hrry_testkit::hostile` into a directory, for
//! the memory-bound checks of the Python and C bindings and for measuring by
//! hand: `cargo run -p hrry-tools --bin hostile_files DIR [SCALE]`. Prints one
//! line per file: its path, its apparent size and the bytes present on disk.

use std::path::PathBuf;

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(dir) = args.next().map(PathBuf::from) else {
        eprintln!("usage: hostile_files DIR [SCALE]");
        std::process::exit(2);
    };
    let scale = args.next().and_then(|s| s.parse().ok()).unwrap_or(1);
    let files = match hrry_testkit::hostile::write_set(&dir, scale) {
        Ok(files) => files,
        Err(e) => {
            eprintln!("hostile_files: {e}");
            std::process::exit(1);
        }
    };
    for f in files {
        let size = std::fs::metadata(&f.path).map_or(0, |m| m.len());
        let disk = hrry_testkit::hostile::bytes_on_disk(&f.path).unwrap_or(0);
        println!("{}\t{size}\t{disk}", f.path.display());
    }
}
