//! `hrry serve`, `hrry fetch`, `hrry put`: the tensor server of interchange.md's
//! network transport and its client.

use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use hrry::export::{export_npy, ExportOptions};
use hrry::file::HrryFile;
use hrry::schema::{layout_name, LAYOUT_ROW_MAJOR};
use hrry::serve::client::{write_received, Client, ClientOptions, FetchOptions};
use hrry::serve::{Catalog, ServeOptions, Server};

use crate::{text, Failure, Outcome};

/// Arguments of `hrry serve`.
#[derive(clap::Args)]
#[command(after_long_help = concat!("\
Serves every tensor of the given files under its name as the TENSOR_REQUEST key
(a name present in two files refuses to start). Tensors pushed with TENSOR_PUT
(`hrry put`) are kept in memory, up to --store-limit bytes, and served too. The
server offers the CPU, every stored layout as is, and row-major by transcoding
(from every dense layout, densifying sparse ones and composites) up to
--transcode-limit bytes per tensor and --transcode-memory bytes for all transcoded
tensors not yet sent. It prints `listening on ADDR` once ready and stops
gracefully on SIGINT or SIGTERM.

Before its handshake a connection may send only a CLIENT_HELLO of at most 64 KiB,
within --handshake-timeout seconds of connecting; the payloads of all clients'
messages share --inbound-memory bytes.

Examples:
  hrry serve model.hrry
  hrry serve --listen 0.0.0.0:7070 a.hrry b.hrry

", see_exit_codes!()))]
pub struct ServeArgs {
    /// The HRRYFILEs to serve.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Address to listen on: HOST:PORT, or HOST (port 0: any free port).
    #[arg(long, default_value = "127.0.0.1:0")]
    listen: String,
    /// Largest message payload accepted from a client, in bytes.
    #[arg(long, value_name = "BYTES")]
    max_message_size: Option<u32>,
    /// Clients served at once (more wait in the backlog).
    #[arg(long, value_name = "N")]
    max_connections: Option<usize>,
    /// Bytes of incoming messages all clients together may have in flight
    /// (default 256 MiB), each counted three times (its copies while handled); a
    /// message waits for room before it is read, and --max-message-size is
    /// lowered to a third of it.
    #[arg(long, value_name = "BYTES")]
    inbound_memory: Option<u64>,
    /// Seconds a new connection has to send its CLIENT_HELLO before it is closed
    /// and its slot freed (default 5).
    #[arg(long, value_name = "SECONDS", value_parser = crate::remote::parse_seconds)]
    handshake_timeout: Option<Duration>,
    /// Largest buffer one transcoding may build, in bytes.
    #[arg(long, value_name = "BYTES")]
    transcode_limit: Option<u64>,
    /// Bytes all transcoded tensors not yet sent may hold together, across clients
    /// (default 1 GiB); a request past it gets the stored layout.
    #[arg(long, value_name = "BYTES")]
    transcode_memory: Option<u64>,
    /// Capacity of the in-memory store of pushed tensors, in bytes.
    #[arg(long, value_name = "BYTES")]
    store_limit: Option<u64>,
    /// Seconds a connection may stay silent between messages.
    #[arg(long, value_name = "SECONDS")]
    idle_timeout: Option<u64>,
    /// Seconds a message may take to arrive whole (and a write to progress).
    #[arg(long, value_name = "SECONDS")]
    io_timeout: Option<u64>,
    #[command(flatten)]
    pub net: crate::remote::NetArgs,
}

/// Arguments of `hrry fetch`.
#[derive(clap::Args)]
#[command(after_long_help = concat!("\
Requests a tensor from a server. To a .npy file the tensor is asked in row-major
layout (the server transcodes) and written in logical order as `hrry export`
would; to a .hrry file (or `-`) it is stored as received (a composite with its
members, named KEY.0, KEY.1, ...); another extension is refused. The bytes of
buffer data reported are those received for the tensor's buffers in the layout the
server sent, without the padding a file puts between buffers (which `hrry inspect`
counts in BYTES) and before any widening `.npy` output does.

Examples:
  hrry fetch 127.0.0.1:7070 tok_embd.weight -o emb.npy
  hrry fetch 127.0.0.1:7070 sparse.w -o w.hrry --layout csr

", see_exit_codes!()))]
pub struct FetchArgs {
    /// The server, HOST:PORT.
    addr: String,
    /// The tensor's key.
    key: String,
    /// Where to write it: a .npy array, or a .hrry file.
    #[arg(short = 'o', long = "output", value_name = "OUT.npy|OUT.hrry")]
    output: PathBuf,
    /// Preferred layout, by name (row-major, column-major, csr, ...); the server
    /// transcodes to row-major, and serves the stored layout otherwise.
    #[arg(long, value_name = "NAME")]
    layout: Option<String>,
    /// Seconds to wait to connect, and for each answer of the server (default 60).
    #[arg(long, value_name = "SECONDS", value_parser = crate::remote::parse_seconds)]
    timeout: Option<Duration>,
}

/// Arguments of `hrry put`.
#[derive(clap::Args)]
#[command(after_long_help = concat!("\
Pushes tensor KEY of a HRRYFILE to a server, which stores it in memory and serves
it under KEY (or the name given with --as).

Example:
  hrry put 127.0.0.1:7070 adapter.hrry lora.a

", see_exit_codes!()))]
pub struct PutArgs {
    /// The server, HOST:PORT.
    addr: String,
    /// The HRRYFILE holding the tensor.
    file: PathBuf,
    /// The tensor's name in the file, and its key on the server.
    key: String,
    /// Push under this key instead.
    #[arg(long = "as", value_name = "KEY")]
    as_key: Option<String>,
    #[command(flatten)]
    pub net: crate::remote::NetArgs,
    /// Whether hrry's hardening rules refuse the file too (`hardened`), or only the
    /// spec's rules and resource limits (`spec`).
    #[arg(long, value_enum, value_name = "POLICY", default_value = "hardened")]
    policy: crate::PolicyArg,
}

fn resolve(addr: &str) -> Result<SocketAddr, Failure> {
    let with_port = if addr.parse::<std::net::IpAddr>().is_ok() {
        format!("{addr}:0")
    } else {
        addr.to_string()
    };
    with_port
        .to_socket_addrs()
        .map_err(|e| Failure(format!("cannot resolve {addr:?}: {e}")))?
        .next()
        .ok_or_else(|| Failure(format!("{addr:?} names no address")))
}

pub fn serve(args: ServeArgs) -> Result<Outcome, Failure> {
    let mut options = ServeOptions::default();
    if let Some(n) = args.max_message_size {
        options.max_message_size = n;
    }
    if let Some(n) = args.max_connections {
        options.max_connections = n.max(1);
    }
    if let Some(n) = args.inbound_memory {
        options.inbound_memory = n.max(1);
    }
    if let Some(t) = args.handshake_timeout {
        options.handshake_timeout = t;
    }
    if let Some(n) = args.transcode_limit {
        options.transcode_limit = n;
    }
    if let Some(n) = args.transcode_memory {
        options.transcode_memory = n;
    }
    if let Some(n) = args.store_limit {
        options.store_limit = n;
        options.connection_memory = options.connection_memory.min(n);
    }
    if let Some(s) = args.idle_timeout {
        options.idle_timeout = Duration::from_secs(s);
    }
    if let Some(s) = args.io_timeout {
        options.io_timeout = Duration::from_secs(s);
    }
    let listen = resolve(&args.listen)?;
    let catalog = if args.files.iter().any(|p| crate::remote::url(p).is_some()) {
        // URLs among the files: each remote one is opened over its source, its
        // tensors fetched when first asked for.
        let mut files = Vec::new();
        for path in &args.files {
            let file = match crate::remote::url(path) {
                Some(url) => match crate::remote::open_file(url, &hrry::file::OpenOptions::new()) {
                    Ok(file) => file,
                    Err(crate::remote::OpenFailure::Read(message)) => return Err(Failure(message)),
                    Err(crate::remote::OpenFailure::Invalid(e)) => {
                        return Err(Failure(format!("{}: {e}", text::path(path))))
                    }
                },
                None => hrry::file::HrryFile::open(path)
                    .map_err(|e| Failure(format!("{}: {e}", text::path(path))))?,
            };
            files.push((text::path(path), file));
        }
        Catalog::from_files(files, &options)?
    } else {
        Catalog::open(&args.files, &options)?
    };
    let count = catalog.file_tensor_count();
    Server::run_until_signal(Arc::new(catalog), listen, options, |addr| {
        // The address line is what scripts wait for: print it at once.
        println!("listening on {addr}");
        eprintln!(
            "hrry: serving {}",
            text::plural(count as u64, "tensor", "tensors")
        );
        use std::io::Write;
        let _ = std::io::stdout().flush();
    })
    .map_err(|e| Failure(format!("cannot serve on {listen}: {e}")))?;
    Ok(Outcome::Ok)
}

/// The layout tag named `name` (a spec name, or a number).
fn layout_tag(name: &str) -> Result<u8, Failure> {
    if let Some(hex) = name.strip_prefix("0x") {
        return u8::from_str_radix(hex, 16).map_err(|_| Failure(format!("bad layout {name:?}")));
    }
    (0..=u8::MAX)
        .find(|&t| layout_name(t) == name && !matches!(name, "extension" | "unknown"))
        .ok_or_else(|| Failure(format!("unknown layout {name:?} (try row-major, csr, ...)")))
}

/// Whether `fetch` writes `output` as a `.npy` array (else as a HRRYFILE), from its
/// extension; `-` (standard output) is a HRRYFILE. Any other name is refused, as
/// `convert` refuses one, rather than guessed.
fn writes_npy(output: &std::path::Path) -> Result<bool, Failure> {
    if crate::is_dash(output) {
        return Ok(false);
    }
    match output.extension().and_then(|e| e.to_str()) {
        Some("npy") => Ok(true),
        Some("hrry" | "hrryfile") => Ok(false),
        _ => Err(Failure(format!(
            "cannot tell the output format from {:?}: use a .npy or .hrry extension",
            text::path(output)
        ))),
    }
}

pub fn fetch(args: FetchArgs) -> Result<Outcome, Failure> {
    let npy = writes_npy(&args.output)?;
    let mut how = FetchOptions::default();
    match &args.layout {
        Some(name) => how.layouts = vec![layout_tag(name)?],
        None if npy => how.layouts = vec![LAYOUT_ROW_MAJOR],
        None => {}
    }
    how.allow_transcode = how.layouts.contains(&LAYOUT_ROW_MAJOR);
    let mut client = connect(&args.addr, args.timeout)?;
    let tensors = client
        .fetch(&args.key, &how)
        .map_err(|e| Failure(format!("{}: {e}", args.key)))?;
    crate::output_folder(&args.output)?;
    if npy {
        let mut file = Vec::new();
        write_received(&args.key, &tensors, &mut file)?;
        let opened = HrryFile::from_bytes(&file)?;
        let out = crate::output::create(&args.output, &[])?;
        let out = export_npy(&opened, &args.key, out, &ExportOptions::default())?;
        out.commit()?;
    } else {
        let out = crate::output::create(&args.output, &[])?;
        let out = write_received(&args.key, &tensors, out)?;
        out.commit()?;
    }
    eprintln!(
        "hrry: {} -> {} ({}, {} received)",
        text::safe(&args.key),
        text::path(&args.output),
        text::plural(tensors.len() as u64, "tensor", "tensors"),
        text::plural(
            tensors.iter().map(|t| t.data.len() as u64).sum::<u64>(),
            "byte of buffer data",
            "bytes of buffer data"
        )
    );
    Ok(Outcome::Ok)
}

/// Connects to the server at `addr` (the client's default timeout unless
/// `timeout` is given).
fn connect(addr: &str, timeout: Option<Duration>) -> Result<Client, Failure> {
    let mut options = ClientOptions::default();
    if let Some(t) = timeout {
        options.timeout = Some(t);
    }
    Client::connect_with(addr, options).map_err(|e| Failure(format!("{addr}: {e}")))
}

pub fn put(args: PutArgs) -> Result<Outcome, Failure> {
    let Some(file) = crate::open_hrry(&args.file, args.policy)? else {
        return Ok(Outcome::Invalid);
    };
    let tensor = file.tensor(&args.key)?.ok_or_else(|| {
        Failure(format!(
            "{} has no tensor {:?}",
            text::path(&args.file),
            args.key
        ))
    })?;
    let key = args.as_key.as_deref().unwrap_or(&args.key);
    let mut client = connect(&args.addr, args.net.timeout)?;
    client
        .put(key, tensor.descriptor, &tensor.buffers)
        .map_err(|e| Failure(format!("{key}: {e}")))?;
    eprintln!(
        "hrry: {} stored on {} as {:?}",
        text::safe(&args.key),
        args.addr,
        text::safe(key).as_ref()
    );
    Ok(Outcome::Ok)
}
