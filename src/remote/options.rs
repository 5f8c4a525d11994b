//! The settings of remote reading.

use std::time::Duration;

/// Fewest body bytes every [`RemoteOptions::stall_timeout`] of a transfer must
/// bring (unless the body ends first): below it the transfer counts as stalled.
pub const STALL_MIN_BYTES: u64 = 1024;

/// How a [`super::RemoteSource`] talks to the server.
#[derive(Clone, Debug)]
pub struct RemoteOptions {
    /// Bytes asked for by the first request, from the end of the file (256 KiB):
    /// enough for the trailer, index and KV of most files.
    pub suffix_len: u64,
    /// Bytes fetched around a read that misses the cache (64 KiB).
    pub block_size: u64,
    /// Most bytes the cache holds (64 MiB); a read larger than a quarter of it is
    /// fetched into the caller's buffer, not cached.
    pub cache_bytes: u64,
    /// Ranges of a prefetch closer than this are fetched as one (64 KiB).
    pub coalesce_gap: u64,
    /// Whether a prefetch may ask for several ranges in one request (true).
    pub multi_range: bool,
    /// Most ranges in one multi-range request (128).
    pub max_ranges_per_request: usize,
    /// Most requests of one prefetch in flight at once (8).
    pub concurrency: usize,
    /// Time allowed for each request, body included, redirects followed
    /// included (2 minutes).
    pub timeout: Duration,
    /// A request that makes no progress for this long fails as stalled (15 s):
    /// its answer's headers must arrive within it, no read of its body may wait
    /// longer for a byte, and every span of this length must bring at least
    /// [`STALL_MIN_BYTES`] of body (or its end), so a server trickling a few bytes
    /// a second cannot hold a read for long. Counted as a failure that may pass
    /// (retried). Never longer than [`RemoteOptions::timeout`] in effect.
    pub stall_timeout: Duration,
    /// Tries after the first for a request that failed in a way that may pass:
    /// a 5xx or 429 answer, a broken connection, a timeout, a stall, a short body
    /// (4).
    pub retries: u32,
    /// Redirects followed for one request (5), each to the same origin (scheme,
    /// host and port) as the URL opened: a redirect to another origin is an
    /// error naming both, never followed, so a file is read only from where it
    /// was asked for.
    pub max_redirects: u32,
    /// Wait before the first retry, doubled for each next one (100 ms).
    pub backoff: Duration,
}

impl Default for RemoteOptions {
    fn default() -> Self {
        RemoteOptions {
            suffix_len: 256 << 10,
            block_size: 64 << 10,
            cache_bytes: 64 << 20,
            coalesce_gap: 64 << 10,
            multi_range: true,
            max_ranges_per_request: 128,
            concurrency: 8,
            timeout: Duration::from_secs(120),
            stall_timeout: Duration::from_secs(15),
            retries: 4,
            max_redirects: 5,
            backoff: Duration::from_millis(100),
        }
    }
}
