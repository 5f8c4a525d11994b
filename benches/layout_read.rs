//! Reading a float32 [2048, 2048] tensor (16 MiB) in logical row-major order from
//! each dense layout, against copying the same 16 MiB in the same run.
//!
//! Run with `cargo bench --bench layout_read`. Each figure is the best of several
//! rounds; both sides write into a buffer allocated beforehand, so page faults of
//! fresh memory are not timed. Row-major is a straight copy; the other layouts are
//! gathered a slab of rows at a time in 64-column blocks (`DenseView`).

use std::time::{Duration, Instant};

use hrry::layout::{from_row_major, DenseView};
use hrry::model::build::descriptor;
use hrry::schema::{
    HilbertFields, LayoutFields, TiledFields, LAYOUT_COLUMN_MAJOR, LAYOUT_HILBERT, LAYOUT_MORTON,
    LAYOUT_ROW_MAJOR, LAYOUT_STRIDED, LAYOUT_TILED,
};

const ROUNDS: usize = 5;

fn best(mut f: impl FnMut()) -> Duration {
    let mut best = Duration::MAX;
    for _ in 0..ROUNDS {
        let start = Instant::now();
        f();
        best = best.min(start.elapsed());
    }
    best
}

fn main() {
    let side = 2048u64;
    let shape = [side, side];
    let n = (side * side) as usize;
    let src: Vec<u8> = (0..n * 4).map(|i| (i * 7) as u8).collect();
    let mut out = vec![0u8; n * 4];
    let base = best(|| {
        out.copy_from_slice(std::hint::black_box(&src));
        std::hint::black_box(&out);
    });
    let tiled = |inner: u8| {
        LayoutFields::Tiled(TiledFields {
            tile_shape: vec![32, 32],
            outer_layout: 1,
            inner_layout: inner,
            reserved: [0; 2],
            outer_strides: None,
            inner_strides: None,
            inner_tiled: None,
        })
    };
    let cases: Vec<(&str, u8, LayoutFields)> = vec![
        ("row-major", LAYOUT_ROW_MAJOR, LayoutFields::Implicit),
        ("column-major", LAYOUT_COLUMN_MAJOR, LayoutFields::Implicit),
        (
            "strided (reversed)",
            LAYOUT_STRIDED,
            LayoutFields::Strided {
                strides: vec![-(side as i64), -1],
            },
        ),
        ("tiled 32x32", LAYOUT_TILED, tiled(1)),
        ("tiled, col-major tiles", LAYOUT_TILED, tiled(2)),
        (
            "morton",
            LAYOUT_MORTON,
            LayoutFields::Morton {
                morton_bits: vec![11, 11],
            },
        ),
        (
            "hilbert",
            LAYOUT_HILBERT,
            LayoutFields::Hilbert(HilbertFields {
                hilbert_order: 11,
                hilbert_rank: 2,
            }),
        ),
    ];
    println!(
        "float32 [{side}, {side}], 16 MiB; copy baseline {:.2} ms",
        base.as_secs_f64() * 1e3
    );
    for (name, tag, fields) in cases {
        let mut d = descriptor(0x03, tag, &shape, fields, &[0]);
        if tag == LAYOUT_STRIDED {
            d.byte_offset = (n as u64 - 1) * 4;
        }
        let buf = from_row_major(&d, &src, u64::MAX).expect("layout");
        let view = DenseView::new(&d, &[&buf]).expect("view");
        let t = best(|| {
            let mut sink = std::io::Cursor::new(&mut out[..]);
            view.stream_row_major(&mut sink).expect("read");
        });
        assert_eq!(out, src, "{name}");
        println!(
            "{name:<24} {:8.2} ms  {:5.1}x the copy",
            t.as_secs_f64() * 1e3,
            t.as_secs_f64() / base.as_secs_f64()
        );
    }
}
