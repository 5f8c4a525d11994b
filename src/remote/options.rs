//! The settings of remote reading.

use std::time::Duration;

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
    /// Time allowed for each request, body included (2 minutes).
    pub timeout: Duration,
    /// Tries after the first for a request that failed in a way that may pass:
    /// a 5xx or 429 answer, a broken connection, a timeout, a short body (4).
    pub retries: u32,
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
            retries: 4,
            backoff: Duration::from_millis(100),
        }
    }
}
