//! The tensor server of interchange.md's network transport (`hrry serve`) and its
//! blocking client (`hrry fetch`, `hrry put`).
//!
//! - [`Catalog`]: the tensors served — every tensor of the given HRRYFILEs under its
//!   name, and the tensors clients push (TENSOR_PUT) into a size-capped store.
//! - [`Session`]: one connection's protocol, without I/O. Every message from the
//!   client is checked by the conversation rules ([`crate::stream::Conversation`])
//!   before it is acted on; every failure is answered with the ERROR code
//!   interchange.md gives it, and the stream closed while the connection lives on.
//! - [`Server`]: the TCP server on tokio, one task per connection, with a
//!   connection cap, one budget for the incoming messages all connections hold
//!   ([`ServeOptions::inbound_memory`]), a handshake deadline, idle and slow-peer
//!   timeouts, and graceful shutdown.
//! - [`client::Client`]: a blocking client over `std::net`.
//!
//! What this server offers: protocol version 1; the CPU device and the STANDARD
//! memory class; every stored layout natively and row-major by transcoding
//! (TRANSCODING), from every dense layout and by densifying sparse ones and
//! composites, within [`ServeOptions::transcode_limit`]. It does not offer parallel
//! shard transfers or RDMA; requests for them are refused by the conversation rules.

pub mod catalog;
pub mod client;
mod net;
mod respond;
pub mod session;

use std::time::Duration;

pub use catalog::Catalog;
pub use net::{Server, ServerHandle, ServerStats};
pub use respond::{for_wire, standalone, ERROR_REFUSED, SERVED_LAYOUTS};
pub use session::Session;

/// Copies of a message's payload that may exist at once while the server handles
/// it, each charged to [`ServeOptions::inbound_memory`].
const PAYLOAD_COPIES: u64 = 3;

/// A server's limits and timeouts.
#[derive(Clone, Copy, Debug)]
pub struct ServeOptions {
    /// Largest payload accepted from a client (advertised in SERVER_HELLO); a larger
    /// `payload_length` is answered with MESSAGE_TOO_LARGE before anything is read.
    pub max_message_size: u32,
    /// Largest message accepted before the handshake (64 KiB): only a
    /// CLIENT_HELLO is, and a HELLO is small. A longer one, or another message, is
    /// refused (MESSAGE_TOO_LARGE, INVALID_MESSAGE) without its payload being
    /// read, and the connection closed.
    pub max_hello_size: u32,
    /// Bytes of incoming messages all connections may hold at once (256 MiB): a
    /// message's payload is read only once three times its length fits this
    /// budget (the payload and its decoded copies, or the reply made from it and
    /// its encoding), and the bytes stay charged until the reply is sent; a
    /// connection waits, within [`ServeOptions::io_timeout`], for others to
    /// finish theirs. `max_message_size` is lowered to a third of it when larger.
    /// Pushed tensors are held apart, within `store_limit`.
    pub inbound_memory: u64,
    /// Connections served at once; further clients wait in the listen backlog.
    pub max_connections: usize,
    /// A connection that has not completed its handshake (a CLIENT_HELLO
    /// received whole) this long after it was accepted is closed, freeing its
    /// slot (5 s).
    pub handshake_timeout: Duration,
    /// A connection with no message started for this long is closed.
    pub idle_timeout: Duration,
    /// A message must arrive whole, and each write to the client progress, within
    /// this: slow senders and stalled readers are cut off.
    pub io_timeout: Duration,
    /// Largest buffer one transcoding may materialise.
    pub transcode_limit: u64,
    /// Bytes all transcodings in flight may hold together, across connections
    /// (from when a tensor is transcoded until it is sent); a request that would
    /// pass it gets the stored layout.
    pub transcode_memory: u64,
    /// Capacity of the store of pushed tensors, in data bytes.
    pub store_limit: u64,
    /// Data bytes one connection may hold for pushes in progress.
    pub connection_memory: u64,
    /// Streams one connection may have open (or closed by an ERROR and not reused).
    pub max_open_streams: usize,
    /// Worker threads of the runtime (0: one per core).
    pub worker_threads: usize,
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions {
            max_message_size: crate::stream::message::DEFAULT_MAX_MESSAGE_SIZE,
            max_hello_size: 64 << 10,
            inbound_memory: 256 << 20,
            max_connections: 256,
            handshake_timeout: Duration::from_secs(5),
            idle_timeout: Duration::from_secs(120),
            io_timeout: Duration::from_secs(30),
            transcode_limit: 256 << 20,
            transcode_memory: 1 << 30,
            store_limit: 1 << 30,
            connection_memory: 1 << 30,
            max_open_streams: 1024,
            worker_threads: 0,
        }
    }
}

impl ServeOptions {
    /// These options as the server applies them: `max_message_size` no larger
    /// than a third of `inbound_memory` (a message must fit the budget to be read), and the
    /// HELLO cap no larger than `max_message_size`.
    pub fn effective(mut self) -> Self {
        let budget =
            u32::try_from((self.inbound_memory / PAYLOAD_COPIES).max(1)).unwrap_or(u32::MAX);
        self.max_message_size = self.max_message_size.min(budget);
        self.max_hello_size = self.max_hello_size.min(self.max_message_size);
        self
    }
}
