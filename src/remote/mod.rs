//! Files read over the network: a [`ReadAt`] over HTTP(S) range requests, and S3
//! objects (`s3://bucket/key`) through presigned range requests.
//!
//! [`RemoteSource::open`] asks for the last [`RemoteOptions::suffix_len`] bytes
//! (`Range: bytes=-N`, no `HEAD`): the answer's `Content-Range` gives the length,
//! and its bytes usually hold a HRRYFILE's trailer, index and KV. Later reads are
//! served from a cache of what was fetched; a miss fetches the
//! [`RemoteOptions::block_size`] block around it, and [`ReadAt::prefetch`] (which
//! the validator calls with every descriptor's range) fetches the ranges it is
//! given in few requests: merged when close, as one `multipart/byteranges`
//! request where the server answers those, else in parallel single ranges.
//!
//! Every answer is checked: its `Content-Range` must be the range asked for, its
//! body exactly that long (a server that ignores `Range` is never read whole),
//! and the object the version the first answer described (its strong `ETag`,
//! sent back as `If-Match`, else its `Last-Modified` date as
//! `If-Unmodified-Since`, and its length): a file that changes while it is read is
//! an error saying so, never a verdict. 5xx answers, broken connections, timeouts
//! and short bodies are retried with exponential backoff, a bounded number of
//! times; every request has a timeout. Errors name the URL without its
//! credentials ([`redact`]).
//!
//! ```no_run
//! use hrry::remote::{RemoteOptions, RemoteSource};
//!
//! let source = RemoteSource::open("https://example.com/model.hrry", &RemoteOptions::default())?;
//! let (format, report) = hrry::validate_source(&source, &Default::default())?;
//! println!("{}: {} ({} requests)", source.url(), report.is_valid(), source.stats().requests);
//! # Ok::<(), std::io::Error>(())
//! ```

mod cache;
mod http;
mod location;
mod multipart;
mod options;
mod ranges;
mod s3;

use std::io;
use std::sync::atomic::Ordering;
use std::sync::Mutex;

pub use location::{is_url, redact};
pub use options::{RemoteOptions, STALL_MIN_BYTES};

use crate::source::ReadAt;

/// What reading a [`RemoteSource`] has cost so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Requests sent (retries included).
    pub requests: u64,
    /// Body bytes received.
    pub bytes: u64,
    /// Requests that were tries after a failure.
    pub retries: u64,
}

/// A file on an HTTP(S) server, read with range requests (see the module docs).
pub struct RemoteSource {
    object: http::HttpObject,
    len: u64,
    cache: Mutex<cache::Cache>,
    options: RemoteOptions,
}

impl std::fmt::Debug for RemoteSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteSource")
            .field("url", &self.url())
            .field("len", &self.len)
            .finish()
    }
}

impl RemoteSource {
    /// Opens the file at `url` with one suffix request: `http://` or `https://`
    /// (user information in it sent as basic authentication), or `s3://bucket/key`
    /// (signed with the standard `AWS_*` environment variables, `AWS_ENDPOINT_URL`
    /// naming an S3-compatible store).
    pub fn open(url: &str, options: &RemoteOptions) -> io::Result<RemoteSource> {
        let object = http::HttpObject::new(location::Location::parse(url)?, options.clone());
        let (len, tail) = object.suffix(options.suffix_len)?;
        let mut cache = cache::Cache::new(options.cache_bytes.max(options.suffix_len));
        cache.insert(tail.start, tail.bytes);
        Ok(RemoteSource {
            object,
            len,
            cache: Mutex::new(cache),
            options: options.clone(),
        })
    }

    /// The URL, as messages may show it (without credentials).
    pub fn url(&self) -> &str {
        self.object.shown()
    }

    /// Requests made and bytes received so far.
    pub fn stats(&self) -> Stats {
        Stats {
            requests: self.object.requests.load(Ordering::Relaxed),
            bytes: self.object.bytes.load(Ordering::Relaxed),
            retries: self.object.retries.load(Ordering::Relaxed),
        }
    }

    fn cache(&self) -> std::sync::MutexGuard<'_, cache::Cache> {
        self.cache.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The block-aligned range around `start..end`, inside the file.
    fn block_around(&self, start: u64, end: u64) -> (u64, u64) {
        let b = self.options.block_size.max(1);
        let from = start / b * b;
        let to = end.div_ceil(b).saturating_mul(b).min(self.len);
        (from, to)
    }
}

impl ReadAt for RemoteSource {
    fn len(&self) -> u64 {
        self.len
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        let end = offset
            .checked_add(buf.len() as u64)
            .filter(|&e| e <= self.len)
            .ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!(
                        "{}: read of {} bytes at offset {offset} runs past the end of the {}-byte file",
                        self.url(),
                        buf.len(),
                        self.len
                    ),
                )
            })?;
        if buf.is_empty() || self.cache().read(offset, buf) {
            return Ok(());
        }
        if buf.len() as u64 > self.options.cache_bytes / 4 {
            return self.object.read_into(offset, buf);
        }
        let (from, to) = self.block_around(offset, end);
        let mut block = vec![0; (to - from) as usize];
        self.object.read_into(from, &mut block)?;
        let at = (offset - from) as usize;
        buf.copy_from_slice(&block[at..at + buf.len()]);
        self.cache().insert(from, block);
        Ok(())
    }

    fn prefetch(&self, ranges: &[(u64, u64)]) {
        let wanted: Vec<(u64, u64)> = {
            let cache = self.cache();
            ranges
                .iter()
                .filter_map(|&(s, n)| {
                    let e = s.saturating_add(n).min(self.len);
                    (s < e && !cache.holds(s, e)).then_some((s, e))
                })
                .collect()
        };
        let mut merged = ranges::coalesce(
            wanted,
            self.options.coalesce_gap,
            self.options.block_size.max(1) * 64,
        );
        // Never more than the cache holds (it would only push out what came first).
        let mut budget = self.options.cache_bytes;
        merged.retain(|&(s, e)| {
            let keep = e - s <= budget;
            budget = budget.saturating_sub(e - s);
            keep
        });
        let per_request = if self.options.multi_range && !self.object.multi_range_refused() {
            self.options.max_ranges_per_request.max(1)
        } else {
            1
        };
        let batches: Vec<&[(u64, u64)]> = merged.chunks(per_request).collect();
        let next = std::sync::atomic::AtomicUsize::new(0);
        let workers = self.options.concurrency.clamp(1, batches.len().max(1));
        // A hint: a failed fetch is left for the read that needs the bytes to
        // report (after its own retries).
        crate::workers::run_on_threads("hrry-prefetch", workers.saturating_sub(1), || loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(batch) = batches.get(i) else { break };
            let Ok(pieces) = self.object.fetch_many(batch) else {
                continue;
            };
            let mut cache = self.cache();
            for p in pieces {
                cache.insert(p.start, p.bytes);
            }
        });
    }
}
