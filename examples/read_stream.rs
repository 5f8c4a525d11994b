//! Reads a bare Hurray stream (descriptors and data back to back, as sent over a
//! pipe or socket) one tensor at a time, taking each tensor's data in pieces
//! without holding the whole stream.
//!
//! `cargo run --example read_stream [FILE.hrrys | -]` (`-`: standard input, e.g.
//! `hrry stream pack model.hrry -o - | cargo run --example read_stream -- -`;
//! default: a bundled stream).

use std::fs::File;
use std::io::{BufReader, Read};

use hrry::schema::layout_name;
use hrry::stream::StreamReader;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let arg = std::env::args().nth(1);
    let source: Box<dyn Read> = match arg.as_deref() {
        Some("-") => Box::new(std::io::stdin().lock()),
        Some(path) => Box::new(BufReader::new(File::open(path)?)),
        None => Box::new(BufReader::new(File::open(
            "corpus/stream/valid/quant-per-block-int4-f16.hrrys",
        )?)),
    };
    // The reader never seeks: it checks each descriptor's structure (and the
    // limits) as it arrives; `hrry::stream::validate_stream` applies every rule.
    let mut reader = StreamReader::new(source);
    let mut total = 0u64;
    while let Some(tensor) = reader.next_tensor()? {
        let d = &tensor.descriptor;
        let element_type = d.element_type().map_or("(extension type)", |t| t.name());
        // Streams carry no names: `hrry stream unpack` calls them t0, t1, …
        print!(
            "t{}: {element_type} {:?} {}, {} data bytes",
            tensor.index,
            d.shape,
            layout_name(d.layout_tag),
            tensor.data_length
        );
        // The data, in pieces borrowed from the read buffer (no copy); a program
        // would hand each piece to its own storage here.
        let mut checksum = 0u64;
        while let Some(piece) = reader.next_piece()? {
            checksum = piece
                .bytes
                .iter()
                .fold(checksum, |h, &b| h.rotate_left(5) ^ u64::from(b));
            total += piece.bytes.len() as u64;
        }
        println!(", checksum {checksum:016x}");
    }
    println!("{total} data bytes in all");
    Ok(())
}
