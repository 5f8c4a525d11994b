//! The tensor server over loopback, against plain TCP in the same run.
//!
//! Run with `cargo bench --bench serve`. Two figures:
//!
//! - **Large tensor**: fetching one 1 GiB float32 tensor (`SERVE_BENCH_MIB` to
//!   change the size) with `hrry::serve::client::Client` from an in-process server,
//!   against sending the same bytes over a plain loopback TCP socket (one writer
//!   thread writing the file's mapped bytes, one reader reading them into a
//!   buffer of the same size). Both sides read the same file from the page cache;
//!   each figure is the best of several rounds. The ratio is plain-TCP time over
//!   fetch time (1.0: as fast as a bare socket; the target is at least 0.8).
//! - **Small tensors**: 16 clients on their own connections each fetching a 1 KiB
//!   tensor over and over, in requests per second, against 16 clients doing PING /
//!   PONG round trips over the same server (the protocol's floor: one round trip,
//!   no tensor work).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use hrry::file::{HrryWriter, WriterOptions};
use hrry::model::{build, ElementType};
use hrry::serve::client::{Client, ClientOptions, FetchOptions};
use hrry::serve::{Catalog, ServeOptions, Server};

const ROUNDS: usize = 3;
const CLIENTS: usize = 16;
const SMALL_SECONDS: f64 = 2.0;

fn write_model(path: &Path, big_bytes: u64) {
    let mut w = HrryWriter::create(path, WriterOptions::default()).unwrap();
    let big = build::dense(ElementType::Float32, &[big_bytes / 4]).unwrap();
    w.begin_tensor("big", &big).unwrap();
    let block: Vec<u8> = (0..1u32 << 20)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let mut left = big_bytes;
    while left > 0 {
        let n = left.min(block.len() as u64) as usize;
        w.write_data(&block[..n]).unwrap();
        left -= n as u64;
    }
    w.end_tensor().unwrap();
    let small = build::dense(ElementType::Float32, &[256]).unwrap();
    w.begin_tensor("small", &small).unwrap();
    w.write_data(&block[..1024]).unwrap();
    w.end_tensor().unwrap();
    w.finish_file().unwrap();
}

/// Sends `bytes` over a fresh loopback connection and reads them into a buffer.
fn plain_tcp(bytes: &[u8]) -> Duration {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::scope(|scope| {
        let start = Instant::now();
        scope.spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            s.write_all(bytes).unwrap();
        });
        let mut s = TcpStream::connect(addr).unwrap();
        let mut out = Vec::with_capacity(bytes.len());
        s.read_to_end(&mut out).unwrap();
        let t = start.elapsed();
        assert_eq!(out.len(), bytes.len());
        t
    })
}

fn best(mut f: impl FnMut() -> Duration) -> Duration {
    (0..ROUNDS).map(|_| f()).min().unwrap()
}

fn per_second(clients: usize, addr: std::net::SocketAddr, fetch: bool) -> f64 {
    let start = Instant::now();
    let threads: Vec<_> = (0..clients)
        .map(|_| {
            std::thread::spawn(move || {
                let mut c = Client::connect(addr).unwrap();
                let mut n = 0u64;
                let begin = Instant::now();
                while begin.elapsed().as_secs_f64() < SMALL_SECONDS {
                    if fetch {
                        let t = c.fetch("small", &FetchOptions::default()).unwrap();
                        assert_eq!(t[0].data.len(), 1024);
                    } else {
                        c.ping(b"ping").unwrap();
                    }
                    n += 1;
                }
                n
            })
        })
        .collect();
    let total: u64 = threads.into_iter().map(|t| t.join().unwrap()).sum();
    total as f64 / start.elapsed().as_secs_f64()
}

fn main() {
    let mib: u64 = std::env::var("SERVE_BENCH_MIB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1024);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("model.hrry");
    write_model(&path, mib << 20);
    let file = hrry::file::HrryFile::open(&path).unwrap();
    let big_tensor = file.tensor("big").unwrap().unwrap();
    let big = big_tensor.buffers[0];
    let catalog = Catalog::open(
        std::slice::from_ref(&path),
        &ServeOptions {
            store_limit: 0,
            ..ServeOptions::default()
        },
    )
    .unwrap();
    let server = Server::spawn(
        Arc::new(catalog),
        "127.0.0.1:0".parse().unwrap(),
        ServeOptions::default(),
    )
    .unwrap();
    let addr = server.local_addr();
    let options = ClientOptions {
        max_message_size: 64 << 20,
        ..ClientOptions::default()
    };
    // Warm the page cache and both paths once.
    std::hint::black_box(big.iter().step_by(4096).fold(0u8, |a, b| a ^ b));
    let tcp = best(|| plain_tcp(big));
    let fetched = best(|| {
        let mut c = Client::connect_with(addr, options.clone()).unwrap();
        let start = Instant::now();
        let t = c.fetch("big", &FetchOptions::default()).unwrap();
        let took = start.elapsed();
        assert_eq!(t[0].data.len() as u64, mib << 20);
        took
    });
    let gib_s = |d: Duration| (mib as f64 / 1024.0) / d.as_secs_f64();
    println!(
        "large tensor ({mib} MiB): fetch {:.3} s ({:.2} GiB/s), plain TCP {:.3} s ({:.2} GiB/s), ratio {:.2}x (target >= 0.8x)",
        fetched.as_secs_f64(),
        gib_s(fetched),
        tcp.as_secs_f64(),
        gib_s(tcp),
        tcp.as_secs_f64() / fetched.as_secs_f64()
    );
    let fetches = per_second(CLIENTS, addr, true);
    let pings = per_second(CLIENTS, addr, false);
    println!(
        "small tensors (1 KiB, {CLIENTS} clients): {fetches:.0} fetches/s, {pings:.0} PING round trips/s, ratio {:.2}x",
        fetches / pings
    );
    drop(server);
}
