//! Range requests over HTTP(S): each answer checked against what was asked, the
//! object pinned to the version first seen, failures retried with backoff.

use std::io::{self, Read};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use super::location::Location;
use super::multipart;
use super::options::{RemoteOptions, STALL_MIN_BYTES};
use super::ranges::{parse_content_range, range_header, ContentRange};

/// Room for a multipart body's delimiters and part headers, per part.
const PART_OVERHEAD: u64 = 256;

/// Shortest stall timeout used (a zero one would fail every read).
const MIN_STALL: Duration = Duration::from_millis(10);

/// The version of the object that the first answer described.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Pin {
    /// A strong entity tag, sent back as `If-Match`.
    ETag(String),
    /// A `Last-Modified` date (the object had no strong entity tag), sent back as
    /// `If-Unmodified-Since`.
    LastModified(String),
    /// The object had neither: only its length is compared.
    Length,
}

/// Why an attempt failed, and whether trying again may help.
enum Failure {
    /// A 5xx answer, a connection error, a timeout or a short body.
    Transient(String),
    /// Anything else: the message of the error to return.
    Final(io::ErrorKind, String),
}

/// Where requests go, what they were answered, and counters of what they cost.
pub(crate) struct HttpObject {
    agent: ureq::Agent,
    location: Location,
    options: RemoteOptions,
    pin: OnceLock<Pin>,
    /// The total length (from the first answer's `Content-Range`).
    total: OnceLock<u64>,
    /// Whether the server answered a multi-range request with one body (no
    /// `multipart/byteranges`): later prefetches then use single ranges.
    no_multi_range: AtomicBool,
    pub requests: AtomicU64,
    pub bytes: AtomicU64,
    pub retries: AtomicU64,
}

/// One part of an answer: the bytes at `start..start + bytes.len()`.
pub(crate) struct Piece {
    pub start: u64,
    pub bytes: Vec<u8>,
}

impl HttpObject {
    /// An object at `location`; nothing is requested yet.
    pub fn new(location: Location, mut options: RemoteOptions) -> HttpObject {
        // S3 answers one range per request.
        options.multi_range &= !location.is_s3();
        let stall = options.stall_timeout.min(options.timeout).max(MIN_STALL);
        let config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            // Redirects are followed here, each checked to stay on the origin.
            .max_redirects(0)
            .timeout_global(Some(options.timeout))
            .timeout_connect(Some(options.timeout.min(Duration::from_secs(30))))
            // A stalled answer: headers that do not come, a body read that waits.
            .timeout_recv_response(Some(stall))
            .timeout_per_read(Some(stall))
            .user_agent(concat!("hrry/", env!("CARGO_PKG_VERSION")))
            .build();
        HttpObject {
            agent: config.into(),
            location,
            options,
            pin: OnceLock::new(),
            total: OnceLock::new(),
            no_multi_range: AtomicBool::new(false),
            requests: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
            retries: AtomicU64::new(0),
        }
    }

    /// Whether the server answered a multi-range request with a single body.
    pub fn multi_range_refused(&self) -> bool {
        self.no_multi_range.load(Ordering::Relaxed)
    }

    /// The URL as messages show it.
    pub fn shown(&self) -> &str {
        &self.location.shown
    }

    /// An error about this object.
    fn error(&self, kind: io::ErrorKind, message: impl std::fmt::Display) -> io::Error {
        io::Error::new(kind, format!("{}: {message}", self.location.shown))
    }

    /// Asks for the last `n` bytes (the whole object when it is shorter): the total
    /// length and those bytes. This first request pins the object's version.
    pub fn suffix(&self, n: u64) -> io::Result<(u64, Piece)> {
        let header = format!("bytes=-{}", n.max(1));
        let piece = self.with_retries(|| self.attempt_suffix(&header, n.max(1)))?;
        let total = *self.total.get().expect("set by the first answer");
        Ok((total, piece))
    }

    /// Reads the bytes at `start..start + buf.len()` into `buf`.
    pub fn read_into(&self, start: u64, buf: &mut [u8]) -> io::Result<()> {
        if buf.is_empty() {
            return Ok(());
        }
        let end = start + buf.len() as u64;
        let header = range_header(&[(start, end)]);
        self.with_retries(|| {
            let mut response = self.send(&header)?;
            match response.status().as_u16() {
                206 => {}
                _ => return Err(self.unexpected(&response)),
            }
            let range = self.content_range(&response)?;
            if range.start != start || range.end != end {
                return Err(wrong_range(range, start, end));
            }
            self.read_body(&mut response, buf)
        })
    }

    /// Fetches `ranges` (sorted, disjoint, half-open), as one multi-range request
    /// when the server answers them with `multipart/byteranges`, else one request
    /// each. Returns what arrived; a range may come back in several pieces or
    /// merged with its neighbours.
    pub fn fetch_many(&self, ranges: &[(u64, u64)]) -> io::Result<Vec<Piece>> {
        if ranges.len() > 1
            && self.options.multi_range
            && !self.no_multi_range.load(Ordering::Relaxed)
        {
            if let Some(pieces) = self.with_retries(|| self.attempt_multi(ranges))? {
                return Ok(pieces);
            }
        }
        let mut out = Vec::with_capacity(ranges.len());
        for &(s, e) in ranges {
            let len = usize::try_from(e - s)
                .map_err(|_| self.error(io::ErrorKind::OutOfMemory, "range too long"))?;
            let mut bytes = vec![0; len];
            self.read_into(s, &mut bytes)?;
            out.push(Piece { start: s, bytes });
        }
        Ok(out)
    }

    /// One multi-range request: `None` when the server answered with a single
    /// range or the whole object (its body left unread), so single ranges follow.
    fn attempt_multi(&self, ranges: &[(u64, u64)]) -> Result<Option<Vec<Piece>>, Failure> {
        let response = self.send(&range_header(ranges));
        let mut response = match response {
            Ok(r) if r.status().as_u16() == 206 => r,
            // 200 (the whole object, left unread), 400 or 416 (S3 and others
            // refuse several ranges): single ranges from now on. 5xx and broken
            // connections were retried by `send`'s caller; the version check
            // (412, another ETag) fails for good.
            Ok(r) if matches!(r.status().as_u16(), 200 | 400 | 416 | 501) => {
                self.no_multi_range.store(true, Ordering::Relaxed);
                return Ok(None);
            }
            Ok(r) => return Err(self.unexpected(&r)),
            Err(e) => return Err(e),
        };
        let content_type = header(&response, "content-type").unwrap_or_default();
        let Some(boundary) = multipart::boundary(&content_type) else {
            // A single range: the server merged the ranges into one (allowed), or
            // answered only some. Take it if it is one of what was asked.
            let range = self.content_range(&response)?;
            let inside = ranges
                .iter()
                .any(|&(s, e)| range.start >= s && range.end <= e)
                || (range.start == ranges[0].0 && range.end == ranges[ranges.len() - 1].1);
            if !inside {
                return Err(wrong_range(range, ranges[0].0, ranges[ranges.len() - 1].1));
            }
            let mut bytes = vec![0; (range.end - range.start) as usize];
            self.read_body(&mut response, &mut bytes)?;
            self.no_multi_range.store(true, Ordering::Relaxed);
            return Ok(Some(vec![Piece {
                start: range.start,
                bytes,
            }]));
        };
        let wanted: u64 = ranges.iter().map(|&(s, e)| e - s).sum();
        let limit = wanted + PART_OVERHEAD * ranges.len() as u64 + 1024;
        let mut body = Vec::new();
        self.body(&mut response)
            .take(limit + 1)
            .read_to_end(&mut body)
            .map_err(|e| Failure::Transient(format!("reading a multipart answer: {e}")))?;
        self.bytes.fetch_add(body.len() as u64, Ordering::Relaxed);
        if body.len() as u64 > limit {
            return Err(Failure::Final(
                io::ErrorKind::InvalidData,
                "a multipart answer is longer than the ranges asked for".into(),
            ));
        }
        let parts = multipart::parts(&body, &boundary).map_err(Failure::Transient)?;
        let total = *self.total.get().expect("set by the first answer");
        let mut pieces = Vec::with_capacity(parts.len());
        for (range, at) in parts {
            if range.total.is_some_and(|t| t != total) {
                return Err(self.changed(format!("its length is now {}", range.total.unwrap_or(0))));
            }
            if !ranges
                .iter()
                .any(|&(s, e)| range.start >= s && range.end <= e)
            {
                return Err(Failure::Final(
                    io::ErrorKind::InvalidData,
                    format!(
                        "a multipart part holds bytes {}..{}, which were not asked for",
                        range.start, range.end
                    ),
                ));
            }
            pieces.push(Piece {
                start: range.start,
                bytes: body[at].to_vec(),
            });
        }
        Ok(Some(pieces))
    }

    /// The first request.
    fn attempt_suffix(&self, header: &str, n: u64) -> Result<Piece, Failure> {
        let mut response = self.send(header)?;
        let status = response.status().as_u16();
        let (start, total) = match status {
            206 => {
                let range = self.content_range(&response)?;
                let Some(total) = range.total else {
                    return Err(Failure::Final(
                        io::ErrorKind::InvalidData,
                        "the server does not say the object's length (Content-Range total `*`)"
                            .into(),
                    ));
                };
                if range.end != total || range.start != total.saturating_sub(n) {
                    return Err(wrong_range(range, total.saturating_sub(n), total));
                }
                (range.start, total)
            }
            // An empty object: no byte range can be satisfied.
            416 => match self.content_range(&response)? {
                r if r.total == Some(0) => (0, 0),
                _ => return Err(self.unexpected(&response)),
            },
            // The server ignores `Range` (nginx does for an empty file): the body
            // is the whole object, read only if it is no longer than what was
            // asked for anyway (at most n + 1 bytes are read to tell), else stop.
            200 => {
                let ignores_range = || {
                    Failure::Final(
                        io::ErrorKind::Unsupported,
                        "the server ignores Range requests (it answered 200 with the whole \
                         object); hrry reads remote files only through range requests"
                            .into(),
                    )
                };
                if response.body().content_length().is_some_and(|len| len > n) {
                    return Err(ignores_range());
                }
                let bytes = self.read_small_body(&mut response, n)?;
                if bytes.len() as u64 > n {
                    return Err(ignores_range());
                }
                self.pin_version(&response);
                let _ = self.total.set(bytes.len() as u64);
                return Ok(Piece { start: 0, bytes });
            }
            _ => return Err(self.unexpected(&response)),
        };
        self.pin_version(&response);
        let _ = self.total.set(total);
        let mut bytes = vec![0; (total - start) as usize];
        self.read_body(&mut response, &mut bytes)?;
        Ok(Piece { start, bytes })
    }

    /// Remembers the version the first answer described.
    fn pin_version(&self, response: &ureq::http::Response<ureq::Body>) {
        let pin = match (header(response, "etag"), header(response, "last-modified")) {
            (Some(tag), _) if !tag.starts_with("W/") => Pin::ETag(tag),
            (_, Some(date)) => Pin::LastModified(date),
            _ => Pin::Length,
        };
        let _ = self.pin.set(pin);
    }

    /// Sends a GET for `range`, with the version condition once one is pinned,
    /// following redirects to the same origin (at most `max_redirects`, all
    /// within the one request timeout); a redirect to another origin fails.
    fn send(&self, range: &str) -> Result<ureq::http::Response<ureq::Body>, Failure> {
        let started = Instant::now();
        let mut url = self.location.request_url();
        let origin = url::Url::parse(&url)
            .map_err(|e| Failure::Final(io::ErrorKind::InvalidInput, format!("not a URL: {e}")))?
            .origin();
        let mut hops = 0u32;
        loop {
            let remaining = self.options.timeout.saturating_sub(started.elapsed());
            if remaining.is_zero() {
                return Err(Failure::Transient(self.timed_out(ureq::Timeout::Global)));
            }
            let response = self.get(&url, range, remaining)?;
            let status = response.status().as_u16();
            if !matches!(status, 301 | 302 | 303 | 307 | 308) {
                return self.check_answer(response);
            }
            let next = self.redirect_target(&url, &response)?;
            let next_origin = next.origin();
            if next_origin != origin {
                return Err(Failure::Final(
                    io::ErrorKind::PermissionDenied,
                    format!(
                        "the server redirects ({status}) from origin {} to another origin, {}; \
                         hrry follows redirects only within the origin it was sent to",
                        origin.ascii_serialization(),
                        next_origin.ascii_serialization()
                    ),
                ));
            }
            hops += 1;
            if hops > self.options.max_redirects {
                return Err(Failure::Final(
                    io::ErrorKind::Other,
                    format!(
                        "more than {} redirects (the last one to {})",
                        self.options.max_redirects,
                        super::location::redact(next.as_str())
                    ),
                ));
            }
            url = next.into();
        }
    }

    /// Where a redirect answer sends the request (its `Location`, resolved
    /// against `url`).
    fn redirect_target(
        &self,
        url: &str,
        response: &ureq::http::Response<ureq::Body>,
    ) -> Result<url::Url, Failure> {
        let status = response.status().as_u16();
        let invalid = |why: String| Failure::Final(io::ErrorKind::InvalidData, why);
        let location = header(response, "location")
            .ok_or_else(|| invalid(format!("a redirect ({status}) without a Location")))?;
        url::Url::parse(url)
            .and_then(|base| base.join(&location))
            .map_err(|e| {
                invalid(format!(
                    "a redirect ({status}) to `{}`, which is not a URL: {e}",
                    super::location::redact(&location).escape_debug()
                ))
            })
    }

    /// One GET of `url` for `range`, within `limit`.
    fn get(
        &self,
        url: &str,
        range: &str,
        limit: Duration,
    ) -> Result<ureq::http::Response<ureq::Body>, Failure> {
        let mut request = self
            .agent
            .get(url)
            .config()
            .timeout_global(Some(limit))
            .build()
            .header("Range", range)
            .header("Accept-Encoding", "identity");
        if let Some(auth) = &self.location.basic_auth {
            request = request.header("Authorization", auth);
        }
        match self.pin.get() {
            Some(Pin::ETag(tag)) => request = request.header("If-Match", tag),
            Some(Pin::LastModified(date)) => request = request.header("If-Unmodified-Since", date),
            _ => {}
        }
        self.requests.fetch_add(1, Ordering::Relaxed);
        request.call().map_err(|e| match e {
            ureq::Error::Timeout(t) => Failure::Transient(self.timed_out(t)),
            ureq::Error::Io(_) | ureq::Error::ConnectionFailed | ureq::Error::Protocol(_) => {
                Failure::Transient(e.to_string())
            }
            e => Failure::Final(io::ErrorKind::Other, e.to_string()),
        })
    }

    /// What a timeout of ureq means, in words.
    fn timed_out(&self, which: ureq::Timeout) -> String {
        timeout_words(which, self.stall(), self.options.timeout)
    }

    /// The stall timeout in effect.
    fn stall(&self) -> Duration {
        self.options
            .stall_timeout
            .min(self.options.timeout)
            .max(MIN_STALL)
    }

    /// The body of `response`, read with the stall rule.
    fn body<'a>(&self, response: &'a mut ureq::http::Response<ureq::Body>) -> Paced<'a> {
        Paced {
            inner: response.body_mut().as_reader(),
            stall: self.stall(),
            timeout: self.options.timeout,
            span_start: Instant::now(),
            span_bytes: 0,
        }
    }

    /// Checks an answer that is not a redirect: the version still the pinned one,
    /// no server failure, no content encoding.
    fn check_answer(
        &self,
        response: ureq::http::Response<ureq::Body>,
    ) -> Result<ureq::http::Response<ureq::Body>, Failure> {
        let status = response.status().as_u16();
        if status == 412 {
            return Err(self.changed("the server says it no longer matches (412)".into()));
        }
        if status >= 500 || status == 429 {
            return Err(Failure::Transient(format!("the server answered {status}")));
        }
        if !(200..300).contains(&status) {
            return Ok(response);
        }
        if let Some(encoding) = header(&response, "content-encoding") {
            let encoding = encoding.trim();
            if !encoding.is_empty() && !encoding.eq_ignore_ascii_case("identity") {
                return Err(Failure::Final(
                    io::ErrorKind::InvalidData,
                    format!(
                        "the server sent the body with Content-Encoding `{}` although \
                         `Accept-Encoding: identity` asked for the bytes as they are; \
                         an encoded body is not read",
                        encoding.escape_debug()
                    ),
                ));
            }
        }
        if let (Some(Pin::ETag(pinned)), Some(tag)) = (self.pin.get(), header(&response, "etag")) {
            if &tag != pinned {
                return Err(self.changed(format!("its ETag went from {pinned} to {tag}")));
            }
        }
        Ok(response)
    }

    /// The failure for an object that changed while it was read.
    fn changed(&self, why: String) -> Failure {
        Failure::Final(
            io::ErrorKind::InvalidData,
            format!("the file changed while it was being read ({why}); no verdict"),
        )
    }

    /// The `Content-Range` of an answer, checked against the pinned length.
    fn content_range(
        &self,
        response: &ureq::http::Response<ureq::Body>,
    ) -> Result<ContentRange, Failure> {
        let value = header(response, "content-range").ok_or_else(|| {
            Failure::Final(
                io::ErrorKind::InvalidData,
                format!(
                    "a {} answer has no Content-Range",
                    response.status().as_u16()
                ),
            )
        })?;
        let range = parse_content_range(&value).ok_or_else(|| {
            Failure::Final(
                io::ErrorKind::InvalidData,
                format!("malformed Content-Range `{}`", value.escape_debug()),
            )
        })?;
        if let (Some(&pinned), Some(total)) = (self.total.get(), range.total) {
            if pinned != total {
                return Err(self.changed(format!("its length went from {pinned} to {total} bytes")));
            }
        }
        Ok(range)
    }

    /// Reads exactly `buf.len()` bytes of body into `buf`, and checks nothing follows.
    /// The body of `response`, read to its end but never past `n + 1` bytes (the
    /// caller refuses a body longer than `n`).
    fn read_small_body(
        &self,
        response: &mut ureq::http::Response<ureq::Body>,
        n: u64,
    ) -> Result<Vec<u8>, Failure> {
        let cap = n.saturating_add(1);
        let mut bytes = Vec::new();
        let read = self.body(response).take(cap).read_to_end(&mut bytes);
        self.bytes.fetch_add(bytes.len() as u64, Ordering::Relaxed);
        match read {
            Ok(_) => Ok(bytes),
            Err(e) => Err(Failure::Transient(format!(
                "the body broke off after {} bytes: {e}",
                bytes.len()
            ))),
        }
    }

    fn read_body(
        &self,
        response: &mut ureq::http::Response<ureq::Body>,
        buf: &mut [u8],
    ) -> Result<(), Failure> {
        if let Some(len) = response.body().content_length() {
            if len != buf.len() as u64 {
                return Err(Failure::Final(
                    io::ErrorKind::InvalidData,
                    format!(
                        "the answer's Content-Length is {len}, not the {} bytes of its range",
                        buf.len()
                    ),
                ));
            }
        }
        let mut reader = self.body(response);
        let mut filled = 0;
        while filled < buf.len() {
            match reader.read(&mut buf[filled..]) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.bytes.fetch_add(filled as u64, Ordering::Relaxed);
                    return Err(Failure::Transient(format!(
                        "the body broke off after {filled} of {} bytes: {e}",
                        buf.len()
                    )));
                }
            }
        }
        self.bytes.fetch_add(filled as u64, Ordering::Relaxed);
        if filled < buf.len() {
            return Err(Failure::Transient(format!(
                "short body: {filled} of {} bytes",
                buf.len()
            )));
        }
        let mut extra = [0u8; 1];
        if matches!(reader.read(&mut extra), Ok(n) if n > 0) {
            return Err(Failure::Final(
                io::ErrorKind::InvalidData,
                format!(
                    "the body is longer than the {} bytes of its range",
                    buf.len()
                ),
            ));
        }
        Ok(())
    }

    /// The failure for an answer with a status that does not fit the request.
    fn unexpected(&self, response: &ureq::http::Response<ureq::Body>) -> Failure {
        let status = response.status();
        let kind = match status.as_u16() {
            404 | 410 => io::ErrorKind::NotFound,
            401 | 403 => io::ErrorKind::PermissionDenied,
            200 => io::ErrorKind::Unsupported,
            _ => io::ErrorKind::Other,
        };
        let what = if status.as_u16() == 200 {
            "the server answered a range request with the whole object (200); it was not read"
                .to_string()
        } else {
            format!("the server answered {status}")
        };
        Failure::Final(kind, what)
    }

    /// Runs `attempt` until it succeeds, fails for good, or has been tried
    /// `1 + options.retries` times, waiting longer before each new try.
    fn with_retries<T>(&self, mut attempt: impl FnMut() -> Result<T, Failure>) -> io::Result<T> {
        let mut wait = self.options.backoff;
        let mut tries = 0;
        loop {
            match attempt() {
                Ok(v) => return Ok(v),
                Err(Failure::Final(kind, message)) => return Err(self.error(kind, message)),
                Err(Failure::Transient(message)) => {
                    tries += 1;
                    if tries > self.options.retries {
                        return Err(self.error(
                            io::ErrorKind::Other,
                            format!(
                                "{message} (gave up after {tries} {})",
                                if tries == 1 { "try" } else { "tries" }
                            ),
                        ));
                    }
                    self.retries.fetch_add(1, Ordering::Relaxed);
                    std::thread::sleep(wait);
                    wait = (wait * 2).min(Duration::from_secs(5));
                }
            }
        }
    }
}

/// The value of header `name`, when it is text.
fn header(response: &ureq::http::Response<ureq::Body>, name: &str) -> Option<String> {
    response
        .headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
}

/// The failure for a `Content-Range` other than the range asked for.
fn wrong_range(got: ContentRange, start: u64, end: u64) -> Failure {
    Failure::Final(
        io::ErrorKind::InvalidData,
        format!(
            "asked for bytes {start}..{end}, the server answered with bytes {}..{} \
             (Content-Range)",
            got.start, got.end
        ),
    )
}

/// What a timeout of ureq means, in words (`stall` and `timeout` the ones in
/// effect).
fn timeout_words(which: ureq::Timeout, stall: Duration, timeout: Duration) -> String {
    match which {
        ureq::Timeout::PerRead | ureq::Timeout::RecvResponse => format!(
            "stalled: nothing arrived for {} s (the stall timeout)",
            stall.as_secs_f64()
        ),
        ureq::Timeout::Connect => format!(
            "no connection within {} s",
            timeout.min(Duration::from_secs(30)).as_secs_f64()
        ),
        _ => format!(
            "no complete answer within {} s (the request timeout)",
            timeout.as_secs_f64()
        ),
    }
}

/// A body reader that fails a stalled transfer: a read that waits longer than the
/// stall timeout (ureq's per-read timeout), or a span of the stall timeout that
/// brings fewer than [`STALL_MIN_BYTES`].
struct Paced<'a> {
    inner: ureq::BodyReader<'a>,
    stall: Duration,
    timeout: Duration,
    span_start: Instant,
    span_bytes: u64,
}

impl Read for Paced<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = match self.inner.read(buf) {
            Ok(n) => n,
            Err(e) => {
                let which = e
                    .get_ref()
                    .and_then(|inner| inner.downcast_ref::<ureq::Error>())
                    .and_then(|u| match u {
                        ureq::Error::Timeout(t) => Some(*t),
                        _ => None,
                    });
                return Err(match which {
                    Some(t) => io::Error::new(
                        io::ErrorKind::TimedOut,
                        timeout_words(t, self.stall, self.timeout),
                    ),
                    None => e,
                });
            }
        };
        if n == 0 {
            return Ok(0);
        }
        self.span_bytes += n as u64;
        let spent = self.span_start.elapsed();
        if spent >= self.stall {
            if self.span_bytes < STALL_MIN_BYTES {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!(
                        "stalled: {} bytes arrived in {:.1} s, fewer than {STALL_MIN_BYTES} \
                         per {} s (the stall timeout)",
                        self.span_bytes,
                        spent.as_secs_f64(),
                        self.stall.as_secs_f64()
                    ),
                ));
            }
            self.span_start = Instant::now();
            self.span_bytes = 0;
        }
        Ok(n)
    }
}
