//! The TCP server: a tokio runtime, one task per connection driving a [`Session`].

use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader, BufWriter};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, Semaphore};
use tokio::task::JoinSet;
use tokio::time::{timeout, timeout_at, Instant};

use crate::schema::transport::{
    message_type, MessageHeader, MESSAGE_HEADER_LEN, TENSOR_DATA_HEADER_LEN,
};
use crate::schema::{read_from, to_bytes};
use crate::stream::message::Frame;

use super::session::{Output, Reply, Session};
use super::{Catalog, ServeOptions};

/// Counters of a running server.
#[derive(Debug, Default)]
pub struct ServerStats {
    /// Connections accepted.
    pub connections: AtomicU64,
    /// Connections open now.
    pub active: AtomicU64,
    /// Messages received whole.
    pub messages: AtomicU64,
    /// ERROR messages sent.
    pub errors_sent: AtomicU64,
    /// Connections closed for a timeout.
    pub timeouts: AtomicU64,
}

/// The tensor server.
pub struct Server;

/// A server running on a background thread (see [`Server::spawn`]).
pub struct ServerHandle {
    addr: SocketAddr,
    stop: watch::Sender<bool>,
    thread: Option<std::thread::JoinHandle<io::Result<()>>>,
    stats: Arc<ServerStats>,
}

impl ServerHandle {
    /// The address the server listens on (with the port chosen when 0 was asked).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The server's counters.
    pub fn stats(&self) -> &ServerStats {
        &self.stats
    }

    /// Stops accepting, lets open connections finish what they are sending, and
    /// waits for the server to end.
    pub fn shutdown(mut self) -> io::Result<()> {
        self.stop_and_join()
    }

    fn stop_and_join(&mut self) -> io::Result<()> {
        let _ = self.stop.send(true);
        match self.thread.take() {
            Some(t) => t
                .join()
                .map_err(|_| io::Error::other("the server thread panicked"))?,
            None => Ok(()),
        }
    }
}

impl Drop for ServerHandle {
    fn drop(&mut self) {
        let _ = self.stop_and_join();
    }
}

fn runtime(options: &ServeOptions) -> io::Result<tokio::runtime::Runtime> {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    if options.worker_threads > 0 {
        builder.worker_threads(options.worker_threads);
    }
    builder.enable_all().build()
}

impl Server {
    /// Binds `listen` and serves `catalog` on a background thread until the handle
    /// is shut down or dropped.
    pub fn spawn(
        catalog: Arc<Catalog>,
        listen: SocketAddr,
        options: ServeOptions,
    ) -> io::Result<ServerHandle> {
        let rt = runtime(&options)?;
        let listener = rt.block_on(TcpListener::bind(listen))?;
        let addr = listener.local_addr()?;
        let (stop, stopped) = watch::channel(false);
        let stats = Arc::new(ServerStats::default());
        let s = Arc::clone(&stats);
        let thread = std::thread::Builder::new()
            .name("hrry-serve".into())
            .spawn(move || rt.block_on(serve(listener, catalog, options, stopped, s)))?;
        Ok(ServerHandle {
            addr,
            stop,
            thread: Some(thread),
            stats,
        })
    }

    /// Binds `listen`, calls `ready` with the bound address, and serves `catalog`
    /// until SIGINT or SIGTERM, then shuts down gracefully (the `hrry serve`
    /// command).
    pub fn run_until_signal(
        catalog: Arc<Catalog>,
        listen: SocketAddr,
        options: ServeOptions,
        ready: impl FnOnce(SocketAddr),
    ) -> io::Result<()> {
        let rt = runtime(&options)?;
        rt.block_on(async move {
            let listener = TcpListener::bind(listen).await?;
            ready(listener.local_addr()?);
            let (stop, stopped) = watch::channel(false);
            let mut interrupt =
                tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())?;
            let mut terminate =
                tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
            tokio::spawn(async move {
                tokio::select! {
                    _ = interrupt.recv() => {}
                    _ = terminate.recv() => {}
                }
                let _ = stop.send(true);
            });
            serve(
                listener,
                catalog,
                options,
                stopped,
                Arc::new(ServerStats::default()),
            )
            .await
        })
    }
}

/// How long open connections get to finish after a shutdown begins.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

async fn serve(
    listener: TcpListener,
    catalog: Arc<Catalog>,
    options: ServeOptions,
    mut stopped: watch::Receiver<bool>,
    stats: Arc<ServerStats>,
) -> io::Result<()> {
    let options = options.effective();
    let slots = Arc::new(Semaphore::new(options.max_connections.max(1)));
    // One budget, in bytes, for the payloads all connections are reading.
    let inbound = Arc::new(Semaphore::new(
        usize::try_from(options.inbound_memory)
            .unwrap_or(usize::MAX)
            .min(Semaphore::MAX_PERMITS),
    ));
    let mut tasks = JoinSet::new();
    loop {
        // Wait for a free slot before accepting: over the cap, clients wait in the
        // listen backlog instead of being dropped.
        let permit = tokio::select! {
            p = Arc::clone(&slots).acquire_owned() => p.map_err(io::Error::other)?,
            _ = stopped.changed() => break,
            Some(_) = tasks.join_next() => continue,
        };
        let socket = tokio::select! {
            r = listener.accept() => r,
            _ = stopped.changed() => break,
        };
        let socket = match socket {
            Ok((s, _)) => s,
            Err(_) => {
                // Out of descriptors or a connection reset before accept: retry soon.
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let _ = socket.set_nodelay(true);
        stats.connections.fetch_add(1, Ordering::Relaxed);
        let catalog = Arc::clone(&catalog);
        let stopped = stopped.clone();
        let stats = Arc::clone(&stats);
        let inbound = Arc::clone(&inbound);
        tasks.spawn(async move {
            stats.active.fetch_add(1, Ordering::Relaxed);
            let _ = connection(socket, catalog, options, &inbound, stopped, &stats).await;
            stats.active.fetch_sub(1, Ordering::Relaxed);
            drop(permit);
        });
    }
    drop(listener);
    let drain = async { while tasks.join_next().await.is_some() {} };
    if timeout(SHUTDOWN_GRACE, drain).await.is_err() {
        tasks.abort_all();
    }
    Ok(())
}

/// Why a connection ended early.
enum End {
    /// The peer closed, or reading / writing failed.
    Closed,
    /// A timeout.
    Timeout,
}

impl From<io::Error> for End {
    fn from(_: io::Error) -> Self {
        End::Closed
    }
}

async fn connection(
    socket: TcpStream,
    catalog: Arc<Catalog>,
    options: ServeOptions,
    inbound: &Arc<Semaphore>,
    mut stopped: watch::Receiver<bool>,
    stats: &ServerStats,
) -> Result<(), End> {
    let (read, write) = socket.into_split();
    let mut read = BufReader::with_capacity(64 << 10, read);
    let mut write = BufWriter::with_capacity(64 << 10, write);
    let mut session = Session::new(catalog, options);
    // Until its HELLO is in, a connection holds its slot only this long.
    let hello_deadline = Instant::now() + options.handshake_timeout;
    let result = async {
        loop {
            let awaits_hello = session.awaits_hello();
            let idle_until = if awaits_hello {
                hello_deadline
            } else {
                Instant::now() + options.idle_timeout
            };
            let mut head = [0u8; MESSAGE_HEADER_LEN as usize];
            // Idle: wait for the first byte of the next message (or the shutdown).
            let got = tokio::select! {
                r = timeout_at(idle_until, read.read(&mut head)) => r.map_err(|_| End::Timeout)??,
                _ = stopped.changed() => return Ok(()),
            };
            if got == 0 {
                return Ok(());
            }
            // From its first byte, a message must arrive whole within io_timeout
            // (and a HELLO by the handshake deadline).
            let mut deadline = Instant::now() + options.io_timeout;
            if awaits_hello {
                deadline = deadline.min(hello_deadline);
            }
            timeout_at(deadline, read.read_exact(&mut head[got..]))
                .await
                .map_err(|_| End::Timeout)??;
            let header = read_from::<MessageHeader>(&head)
                .map_err(|_| End::Closed)?
                .0;
            let length = u64::from(header.payload_length);
            if let Some(reply) = session.screen(&header) {
                send(&mut write, &mut session, &reply, &options, stats).await?;
                if reply.close {
                    return Ok(());
                }
                // Skip the payload without holding it.
                let mut rest = (&mut read).take(length);
                let skipped =
                    timeout_at(deadline, tokio::io::copy(&mut rest, &mut tokio::io::sink()))
                        .await
                        .map_err(|_| End::Timeout)??;
                if skipped < length {
                    return Ok(());
                }
                continue;
            }
            // The payload is read once the shared budget holds three times its
            // length: the payload and its decoded copies while it is checked and
            // acted on, or the reply built from it (a PONG), its encoding and the
            // conversation's check of it while it is sent. max_message_size is at
            // most a third of the budget.
            let permits =
                u32::try_from(length.saturating_mul(super::PAYLOAD_COPIES)).unwrap_or(u32::MAX);
            let held = timeout_at(deadline, Arc::clone(inbound).acquire_many_owned(permits))
                .await
                .map_err(|_| End::Timeout)?
                .map_err(|_| End::Closed)?;
            // Allocated whole (zeroed pages cost nothing until the bytes arrive)
            // and filled in place: no growth, no copy.
            let mut payload = vec![0u8; length as usize];
            match timeout_at(deadline, read.read_exact(&mut payload)).await {
                Err(_) => return Err(End::Timeout),
                Ok(Err(e)) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(()), // Closed mid-message.
                Ok(r) => r?,
            };
            stats.messages.fetch_add(1, Ordering::Relaxed);
            let reply = session.receive(&Frame { header, payload });
            send(&mut write, &mut session, &reply, &options, stats).await?;
            let close = reply.close;
            drop(reply);
            drop(held);
            if close {
                return Ok(());
            }
        }
    }
    .await;
    session.finish();
    if matches!(result, Err(End::Timeout)) {
        stats.timeouts.fetch_add(1, Ordering::Relaxed);
    }
    let _ = timeout(Duration::from_secs(1), write.shutdown()).await;
    result
}

/// Writes `reply`, each write bounded by `io_timeout`, and reports every message
/// to the session.
async fn send<W: AsyncWrite + Unpin>(
    write: &mut W,
    session: &mut Session,
    reply: &Reply,
    options: &ServeOptions,
    stats: &ServerStats,
) -> Result<(), End> {
    let limit = options.io_timeout;
    for output in reply.outputs(session.client_max_message_size()) {
        match &output {
            Output::Frame(frame) => {
                if frame.header.message_type == message_type::ERROR {
                    stats.errors_sent.fetch_add(1, Ordering::Relaxed);
                }
                // Header and payload written apart: no copy of a large payload.
                put(write, &to_bytes(&frame.header), limit).await?;
                put(write, &frame.payload, limit).await?;
            }
            Output::Data {
                stream_id,
                byte_offset_in_buffer,
                data,
            } => {
                let header = MessageHeader {
                    message_type: message_type::TENSOR_DATA,
                    stream_id: *stream_id,
                    payload_length: (TENSOR_DATA_HEADER_LEN + data.len() as u64) as u32,
                };
                let mut head = to_bytes(&header);
                head.extend_from_slice(&byte_offset_in_buffer.to_le_bytes());
                put(write, &head, limit).await?;
                put(write, data, limit).await?;
            }
        }
        session.sent(&output);
    }
    timeout(limit, write.flush())
        .await
        .map_err(|_| End::Timeout)??;
    Ok(())
}

/// Writes all of `bytes`, failing when the peer takes none of them for `limit`.
async fn put<W: AsyncWrite + Unpin>(
    write: &mut W,
    bytes: &[u8],
    limit: Duration,
) -> Result<(), End> {
    let mut rest = bytes;
    while !rest.is_empty() {
        let n = timeout(limit, write.write(rest))
            .await
            .map_err(|_| End::Timeout)??;
        if n == 0 {
            return Err(End::Closed);
        }
        rest = &rest[n..];
    }
    Ok(())
}
