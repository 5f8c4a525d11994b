//! Writes a model-sized HRRYFILE for measuring streaming: `cargo run --release
//! -p hrry-tools --bin big_model -- OUT.hrry [MIB]` (default 1024 MiB).
//!
//! A llama-like layout: one float16 embedding-sized tensor of a quarter of the
//! total (the largest), then layers of float16 weight matrices and float32 norms
//! until the size is reached. Data is a cheap deterministic pattern written in
//! 1 MiB pieces, so the generator holds almost nothing.

use hrry::file::{HrryWriter, WriterOptions};
use hrry::model::build::dense;
use hrry::model::ElementType;

const PIECE: usize = 1 << 20;

fn main() {
    let mut args = std::env::args().skip(1);
    let out = args.next().unwrap_or_else(|| {
        eprintln!("usage: big_model OUT.hrry [MIB]");
        std::process::exit(2)
    });
    let mib: u64 = args
        .next()
        .map_or(1024, |s| s.parse().expect("MIB is a number"));
    let total = mib << 20;
    let mut w =
        HrryWriter::create(std::path::Path::new(&out), WriterOptions::default()).expect("create");
    let mut piece = vec![0u8; PIECE];
    let mut written = 0u64;
    let mut write = |w: &mut HrryWriter<_>, name: &str, ty: ElementType, shape: &[u64]| {
        let d = dense(ty, shape).expect("descriptor");
        let size = d.buffers[0].byte_size;
        w.begin_tensor(name, &d).expect("begin");
        let mut left = size;
        let mut seed = name.len() as u8;
        while left > 0 {
            let n = left.min(PIECE as u64) as usize;
            for (i, b) in piece[..n].iter_mut().enumerate() {
                *b = (i as u8).wrapping_mul(31).wrapping_add(seed);
            }
            seed = seed.wrapping_add(1);
            w.write_data(&piece[..n]).expect("data");
            left -= n as u64;
        }
        w.end_tensor().expect("end");
        size
    };
    // The largest tensor: a quarter of the model.
    let cols = 4096u64;
    let rows = (total / 4) / (cols * 2);
    written += write(
        &mut w,
        "token_embd.weight",
        ElementType::Float16,
        &[rows, cols],
    );
    let mut layer = 0;
    while written + (48 << 20) <= total {
        let p = format!("blk.{layer}.");
        written += write(
            &mut w,
            &(p.clone() + "attn_norm.weight"),
            ElementType::Float32,
            &[cols],
        );
        written += write(
            &mut w,
            &(p.clone() + "attn_qkv.weight"),
            ElementType::Float16,
            &[3 * 1024, cols],
        );
        written += write(
            &mut w,
            &(p + "ffn_down.weight"),
            ElementType::Float16,
            &[cols, 2048],
        );
        layer += 1;
    }
    w.finish_file().expect("finish");
    println!("{out}: {written} bytes of tensor data in {} layers", layer);
}
