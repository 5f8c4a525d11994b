//! Fetches tensors from a tensor server (`hrry serve`) with the blocking client.
//!
//! `cargo run --example fetch_from_server [HOST:PORT KEY]`: with an address,
//! fetches KEY from that server (start one with `hrry serve model.hrry`); without,
//! starts a server on loopback in this process, serving a bundled file, and fetches
//! from it.

use std::path::PathBuf;
use std::sync::Arc;

use hrry::schema::{layout_name, LAYOUT_ROW_MAJOR};
use hrry::serve::client::{Client, FetchOptions};
use hrry::serve::{Catalog, ServeOptions, Server};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // Keeps an in-process server alive until the end of `main`.
    let mut server = None;
    let (addr, key) = match &args[..] {
        [addr, key] => (addr.parse()?, key.clone()),
        [] => {
            let options = ServeOptions::default();
            let files = [PathBuf::from("corpus/valid/basic.hrry")];
            let catalog = Arc::new(Catalog::open(&files, &options)?);
            let handle = Server::spawn(catalog, "127.0.0.1:0".parse()?, options)?;
            let addr = handle.local_addr();
            println!("serving corpus/valid/basic.hrry on {addr}");
            server = Some(handle);
            (addr, "weights".to_string())
        }
        _ => return Err("usage: fetch_from_server [HOST:PORT KEY]".into()),
    };

    let mut client = Client::connect(addr)?;
    // Ask for row-major and let the server transcode other layouts to it; without
    // a preference the server sends the layout it stores.
    let how = FetchOptions {
        layouts: vec![LAYOUT_ROW_MAJOR],
        allow_transcode: true,
        ..Default::default()
    };
    // A composite comes as its head followed by its members; a plain tensor alone.
    let received = client.fetch(&key, &how)?;
    for t in &received {
        let d = &t.descriptor;
        let element_type = d.element_type().map_or("(extension type)", |t| t.name());
        println!(
            "{key}: {element_type} {:?} {}, {} data bytes",
            d.shape,
            layout_name(d.layout_tag),
            t.data.len()
        );
    }
    if let Some(handle) = server {
        handle.shutdown()?;
    }
    Ok(())
}
