//! `hrry::remote`: files validated over HTTP give the reports they give from disk,
//! in few requests, and every fault of a server is an error (or retried), never a
//! verdict.
//!
//! The fault tests run against a small server of this file's own (std sockets,
//! one fault each). The corpus tests need a real server: `tests/remote/run.sh`
//! starts nginx on loopback serving the repository and sets `HRRY_TEST_HTTP_BASE`
//! to its URL; without that variable they say so and do nothing.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hrry::remote::{RemoteOptions, RemoteSource};
use hrry::source::ReadAt;

/// The folder the test server serves (`HRRY_TEST_HTTP_ROOT`, which
/// tests/remote/run.sh sets), else this checkout: files written for the server go
/// there, even when the test binary was built in another clone of the repository.
fn root() -> PathBuf {
    std::env::var_os("HRRY_TEST_HTTP_ROOT")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")))
}

/// The test server's URL (`HRRY_TEST_HTTP_BASE`), or `None`, saying so, when the
/// test runs without one (tests/remote/run.sh starts nginx and sets it).
fn http_base() -> Option<String> {
    let base = std::env::var("HRRY_TEST_HTTP_BASE").ok();
    if base.is_none() {
        eprintln!("HRRY_TEST_HTTP_BASE is not set: tests/remote/run.sh runs this test with nginx");
    }
    base
}

/// Every `.hrry` and `.holo` file of the corpus, sorted.
fn corpus_files() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for dir in ["corpus/valid", "corpus/invalid"] {
        for e in std::fs::read_dir(root().join(dir)).expect("corpus dir") {
            let p = e.expect("entry").path();
            if p.extension().is_some_and(|x| x == "hrry" || x == "holo") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// What a report says, as text to compare: the format, the verdict, every
/// violation (rule, offset, message) and every note.
fn report_text(format: hrry::Format, report: &hrry::Report) -> String {
    format!(
        "{} {} {:?} {:?}",
        format.name(),
        report.verdict().name(),
        report.violations,
        report.notes
    )
}

/// [`report_text`] of a source.
fn report_of(source: &dyn ReadAt, name: &Path) -> String {
    let format = hrry::Format::detect_source(source, Some(name)).expect("detect");
    let report = format
        .validate_source(source, &Default::default())
        .expect("validate");
    report_text(format, &report)
}

/// Options that make even small files take several requests: a short suffix,
/// small blocks, no merging.
fn tiny(multi_range: bool) -> RemoteOptions {
    RemoteOptions {
        suffix_len: 256,
        block_size: 512,
        coalesce_gap: 0,
        multi_range,
        ..Default::default()
    }
}

#[test]
fn the_corpus_validates_over_http_as_from_disk() {
    let Some(base) = http_base() else { return };
    let mut most_requests = 0;
    let mut checked = 0;
    for path in corpus_files() {
        let rel = path.strip_prefix(root()).expect("under the root");
        let url = format!("{base}{}", rel.display());
        let local = hrry::source::FileSource::open(&path).expect("open");
        let expected = report_of(&local, &path);
        for (label, options) in [
            ("default", RemoteOptions::default()),
            ("tiny blocks, multi-range", tiny(true)),
            ("tiny blocks, single ranges", tiny(false)),
        ] {
            let remote = RemoteSource::open(&url, &options).expect("open over http");
            assert_eq!(remote.len(), local.len());
            let got = report_of(&remote, &path);
            assert_eq!(got, expected, "{url} ({label})");
            if label == "default" {
                // A corpus file is smaller than the suffix: one request.
                assert_eq!(remote.stats().requests, 1, "{url}");
                assert_eq!(remote.stats().bytes, local.len(), "{url}");
            }
            most_requests = most_requests.max(remote.stats().requests);
        }
        checked += 1;
    }
    assert!(checked > 100, "only {checked} corpus files");
    eprintln!("{checked} corpus files: at most {most_requests} requests with tiny blocks");
}

/// nginx answers a range request for an empty file with 200 and an empty body: the
/// whole object, no longer than the suffix asked for, so it is read (a body longer
/// than the suffix would be refused, see `a_server_ignoring_range_is_not_downloaded`).
#[test]
fn an_empty_file_over_http_gives_the_local_report() {
    let Some(base) = http_base() else { return };
    let dir = root().join("target/remote-test");
    std::fs::create_dir_all(&dir).expect("test dir");
    let path = dir.join("empty.hrry");
    std::fs::write(&path, b"").expect("write");
    let url = format!("{base}target/remote-test/empty.hrry");
    let local = hrry::source::FileSource::open(&path).expect("open");
    let remote = RemoteSource::open(&url, &RemoteOptions::default()).expect("open over http");
    assert_eq!(remote.len(), 0);
    assert_eq!(report_of(&remote, &path), report_of(&local, &path));
    assert_eq!(remote.stats().requests, 1);
}

/// nginx (tests/remote/nginx.conf.in, under /faults/) as a server that redirects
/// to another origin, redirects within its own, sends an encoded body, and
/// trickles: each refused or bounded as over the fault server below.
#[test]
fn nginx_redirects_encodings_and_trickles_are_bounded() {
    let Some(base) = http_base() else { return };
    let other = std::env::var("HRRY_TEST_HTTP_OTHER_BASE").expect("set with HRRY_TEST_HTTP_BASE");
    let options = RemoteOptions {
        backoff: Duration::from_millis(5),
        ..RemoteOptions::default()
    };
    // Another origin: refused, both origins named.
    let e = RemoteSource::open(&format!("{base}faults/away.hrry"), &options)
        .expect_err("a cross-origin redirect is refused");
    let text = e.to_string();
    assert!(text.contains(base.trim_end_matches('/')), "{text}");
    assert!(text.contains(other.trim_end_matches('/')), "{text}");
    assert!(text.contains("another origin"), "{text}");
    // Five same-origin redirects are followed (to the local report), six are not.
    let path = root().join("corpus/valid/basic.hrry");
    let local = hrry::source::FileSource::open(&path).expect("open");
    let five = RemoteSource::open(&format!("{base}faults/hops/1.hrry"), &options)
        .expect("five redirects are followed");
    assert_eq!(report_of(&five, &path), report_of(&local, &path));
    let e = RemoteSource::open(&format!("{base}faults/hops/0.hrry"), &options)
        .expect_err("six redirects are too many");
    assert!(e.to_string().contains("more than 5 redirects"), "{e}");
    // A body sent with Content-Encoding: gzip.
    let dir = root().join("target/remote-test");
    std::fs::create_dir_all(&dir).expect("test dir");
    std::fs::write(dir.join("basic.hrry.gz"), std::fs::read(&path).unwrap()).expect("write");
    let e = RemoteSource::open(&format!("{base}faults/basic.hrry.gz"), &options)
        .expect_err("an encoded body is refused");
    assert!(e.to_string().contains("Content-Encoding `gzip`"), "{e}");
    // A trickle (limit_rate 1): stalled within a 1 s stall timeout, two tries.
    let (spent, e) = stalled_open(&format!("{base}faults/trickle/corpus/valid/basic.hrry"));
    assert!(e.to_string().contains("stalled"), "{e}");
    assert!(spent < Duration::from_secs(30), "{spent:?}");
    eprintln!("nginx limit_rate 1: failed after {spent:.1?}: {e}");
}

#[test]
fn the_corpus_validates_over_s3_as_from_disk() {
    // tests/remote/run.sh serves the repository as bucket `repo` of s3s-fs, with
    // AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_ENDPOINT_URL set for it.
    let Ok(bucket) = std::env::var("HRRY_TEST_S3_BUCKET") else {
        eprintln!("HRRY_TEST_S3_BUCKET is not set: tests/remote/run.sh runs this test with s3s-fs");
        return;
    };
    let mut checked = 0;
    for path in corpus_files() {
        let rel = path.strip_prefix(root()).expect("under the root");
        let url = format!("s3://{bucket}/{}", rel.display());
        let local = hrry::source::FileSource::open(&path).expect("open");
        let expected = report_of(&local, &path);
        // s3s-fs 0.14 fails (500) a suffix range longer than the object, which S3
        // answers with the whole object: ask for at most the object's length.
        let options = RemoteOptions {
            suffix_len: local.len().clamp(1, 4096),
            block_size: 4096,
            ..Default::default()
        };
        let remote = RemoteSource::open(&url, &options).expect("open over s3");
        assert_eq!(report_of(&remote, &path), expected, "{url}");
        checked += 1;
    }
    assert!(checked > 100, "only {checked} corpus files");
    // A wrong secret is refused, naming the object.
    let url = format!("s3://{bucket}/corpus/valid/basic.hrry");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_hrry"))
        .args(["validate", &url])
        .env("AWS_SECRET_ACCESS_KEY", "not-the-secret")
        .env("HRRY_REMOTE_SUFFIX_BYTES", "4096")
        .output()
        .expect("run hrry");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(&url) && stderr.contains("403"), "{stderr}");
    eprintln!("{checked} corpus files over S3: same reports as from disk");
}

#[test]
fn nginx_answers_multi_range_prefetches_in_one_request() {
    let Some(base) = http_base() else { return };
    let path = root().join("corpus/valid/basic.hrry");
    let bytes = std::fs::read(&path).expect("read");
    let url = format!("{base}corpus/valid/basic.hrry");
    let remote = RemoteSource::open(&url, &tiny(true)).expect("open");
    let before = remote.stats().requests;
    let ranges = [(0u64, 10u64), (1000, 20), (3000, 5), (5000, 100)];
    remote.prefetch(&ranges);
    assert_eq!(remote.stats().requests, before + 1, "one multipart request");
    for (s, n) in ranges {
        let mut buf = vec![0; n as usize];
        remote.read_at(s, &mut buf).expect("read");
        assert_eq!(buf, bytes[s as usize..(s + n) as usize]);
    }
    assert_eq!(
        remote.stats().requests,
        before + 1,
        "reads served from the cache"
    );
}

// --- a server with faults -------------------------------------------------------

/// What the fault server does with request `n` (from 0) for `range`.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Answer {
    /// The bytes asked for, correctly.
    Right,
    /// This status, no body.
    Status(u16),
    /// A `Content-Range` one byte off from what was asked.
    WrongRange,
    /// The right headers, half the body, then the connection closes.
    Short,
    /// 200 with a 1 GiB body of zeros (a server ignoring `Range`).
    IgnoreRange,
    /// The object changed: another ETag, 412 when the request is conditional.
    Changed,
    /// 302 to the same path on another loopback port (another origin).
    RedirectAway(u16),
    /// A chain of same-origin redirects: `/model.hrry` to `/h1/model.hrry`, …,
    /// up to `/hN/model.hrry`, which is answered right.
    Hops(u32),
    /// The right range, sent with `Content-Encoding: gzip` (the bytes unchanged).
    Gzip,
    /// The right headers, then the body one byte a second.
    Trickle,
    /// The right headers, then nothing (the connection held open).
    Silent,
}

struct FaultServer {
    url: String,
    requests: Arc<AtomicUsize>,
}

/// Serves `bytes` (ETag `"v1"`) on a loopback port, answering request `n` as
/// `plan(n)` says; one connection at a time, each closed after its answer.
fn fault_server(bytes: Vec<u8>, plan: impl Fn(usize) -> Answer + Send + 'static) -> FaultServer {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}/model.hrry", listener.local_addr().expect("addr"));
    let requests = Arc::new(AtomicUsize::new(0));
    let counter = requests.clone();
    let bytes = Arc::new(bytes);
    let plan = Arc::new(Mutex::new(plan));
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            let n = counter.fetch_add(1, Ordering::SeqCst);
            let answer = (plan.lock().unwrap())(n);
            let bytes = bytes.clone();
            std::thread::spawn(move || {
                let _ = answer_one(stream, &bytes, answer);
            });
        }
    });
    FaultServer { url, requests }
}

/// The half-open range of a `Range` header (one range or a suffix).
fn parse_range(value: &str, len: u64) -> Option<(u64, u64)> {
    let spec = value.strip_prefix("bytes=")?;
    if spec.contains(',') {
        return None;
    }
    let (a, b) = spec.split_once('-')?;
    if a.is_empty() {
        let n: u64 = b.parse().ok()?;
        return Some((len.saturating_sub(n), len));
    }
    Some((a.parse().ok()?, (b.parse::<u64>().ok()? + 1).min(len)))
}

fn answer_one(mut stream: TcpStream, bytes: &[u8], answer: Answer) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut range = None;
    let mut if_match = None;
    let mut request_line = String::new();
    reader.read_line(&mut request_line)?;
    let path = request_line
        .split_whitespace()
        .nth(1)
        .unwrap_or("/")
        .to_string();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 || line == "\r\n" {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            match k.to_ascii_lowercase().as_str() {
                "range" => range = Some(v.trim().to_string()),
                "if-match" => if_match = Some(v.trim().to_string()),
                _ => {}
            }
        }
    }
    let len = bytes.len() as u64;
    let head = |status: &str, headers: &str| {
        format!("HTTP/1.1 {status}\r\nConnection: close\r\n{headers}\r\n")
    };
    let etag = if answer == Answer::Changed {
        "\"v2\""
    } else {
        "\"v1\""
    };
    if answer == Answer::Changed && if_match.is_some_and(|m| m != etag) {
        stream.write_all(head("412 Precondition Failed", "Content-Length: 0\r\n").as_bytes())?;
        return Ok(());
    }
    match answer {
        Answer::RedirectAway(port) => {
            let to =
                format!("Location: http://127.0.0.1:{port}/model.hrry\r\nContent-Length: 0\r\n");
            return stream.write_all(head("302 Found", &to).as_bytes());
        }
        Answer::Hops(n) => {
            let at: u32 = path
                .strip_prefix("/h")
                .and_then(|p| p.split('/').next())
                .and_then(|h| h.parse().ok())
                .unwrap_or(0);
            if at < n {
                let to = format!("Location: /h{}/model.hrry\r\nContent-Length: 0\r\n", at + 1);
                return stream.write_all(head("301 Moved Permanently", &to).as_bytes());
            }
        }
        _ => {}
    }
    match answer {
        Answer::Status(code) => {
            stream.write_all(head(&format!("{code} Fault"), "Content-Length: 0\r\n").as_bytes())
        }
        Answer::IgnoreRange => {
            let total = 1u64 << 30;
            stream.write_all(
                head(
                    "200 OK",
                    &format!("Content-Length: {total}\r\nETag: {etag}\r\n"),
                )
                .as_bytes(),
            )?;
            let zeros = vec![0u8; 1 << 16];
            for _ in 0..total / zeros.len() as u64 {
                stream.write_all(&zeros)?;
            }
            Ok(())
        }
        _ => {
            let Some((s, e)) = range.as_deref().and_then(|r| parse_range(r, len)) else {
                // A multi-range request: answered whole, as by a server that
                // speaks single ranges only (the client must not read it).
                stream.write_all(
                    head(
                        "200 OK",
                        &format!("Content-Length: {len}\r\nETag: {etag}\r\n"),
                    )
                    .as_bytes(),
                )?;
                return stream.write_all(bytes);
            };
            let shown = if answer == Answer::WrongRange {
                (s + 1, e)
            } else {
                (s, e)
            };
            let headers = format!(
                "Content-Length: {}\r\nContent-Range: bytes {}-{}/{len}\r\nETag: {etag}\r\n",
                e - s,
                shown.0,
                shown.1 - 1 + (shown.0 - s)
            );
            let headers = if answer == Answer::Gzip {
                format!("{headers}Content-Encoding: gzip\r\n")
            } else {
                headers
            };
            stream.write_all(head("206 Partial Content", &headers).as_bytes())?;
            let body = &bytes[s as usize..e as usize];
            if answer == Answer::Trickle {
                for b in body {
                    stream.write_all(std::slice::from_ref(b))?;
                    std::thread::sleep(Duration::from_secs(1));
                }
                return Ok(());
            }
            if answer == Answer::Silent {
                std::thread::sleep(Duration::from_secs(60));
                return Ok(());
            }
            let body = if answer == Answer::Short {
                &body[..body.len() / 2]
            } else {
                body
            };
            stream.write_all(body)
        }
    }
}

/// A corpus file, its local report, and options that need several requests.
fn sample() -> (Vec<u8>, String, RemoteOptions) {
    let path = root().join("corpus/valid/basic.hrry");
    let bytes = std::fs::read(&path).expect("read");
    let expected = report_of(&bytes, &path);
    let options = RemoteOptions {
        backoff: Duration::from_millis(5),
        timeout: Duration::from_secs(20),
        ..tiny(true)
    };
    (bytes, expected, options)
}

fn validate_remote(url: &str, options: &RemoteOptions) -> std::io::Result<String> {
    let source = RemoteSource::open(url, options)?;
    let format = hrry::Format::detect_source(&source, None)?;
    let report = format.validate_source(&source, &Default::default())?;
    Ok(report_text(format, &report))
}

#[test]
fn a_correct_server_gives_the_local_report() {
    let (bytes, expected, options) = sample();
    let server = fault_server(bytes, |_| Answer::Right);
    assert_eq!(
        validate_remote(&server.url, &options).expect("validates"),
        expected
    );
    assert!(
        server.requests.load(Ordering::SeqCst) > 1,
        "the options need several requests"
    );
}

#[test]
fn two_503s_are_retried_to_the_right_verdict() {
    let (bytes, expected, options) = sample();
    let server = fault_server(bytes, |n| {
        if n < 2 {
            Answer::Status(503)
        } else {
            Answer::Right
        }
    });
    assert_eq!(
        validate_remote(&server.url, &options).expect("validates"),
        expected
    );
}

#[test]
fn endless_503s_give_up_naming_the_url() {
    let (bytes, _, options) = sample();
    let server = fault_server(bytes, |_| Answer::Status(503));
    let e = validate_remote(&server.url, &options).expect_err("an error");
    assert!(e.to_string().contains(&server.url), "{e}");
    assert_eq!(
        server.requests.load(Ordering::SeqCst),
        1 + options.retries as usize
    );
}

#[test]
fn a_changed_file_is_an_error_saying_so() {
    let (bytes, _, options) = sample();
    let server = fault_server(bytes, |n| {
        if n == 0 {
            Answer::Right
        } else {
            Answer::Changed
        }
    });
    let e = validate_remote(&server.url, &options).expect_err("an error");
    assert!(e.to_string().contains("changed"), "{e}");
}

#[test]
fn a_wrong_content_range_is_an_error() {
    let (bytes, _, options) = sample();
    let server = fault_server(bytes, |n| {
        if n == 0 {
            Answer::Right
        } else {
            Answer::WrongRange
        }
    });
    let e = validate_remote(&server.url, &options).expect_err("an error");
    assert!(e.to_string().contains("Content-Range"), "{e}");
    let first = fault_server(
        std::fs::read(root().join("corpus/valid/basic.hrry")).unwrap(),
        |_| Answer::WrongRange,
    );
    assert!(RemoteSource::open(&first.url, &options).is_err());
}

#[test]
fn a_short_body_is_retried_or_an_error() {
    let (bytes, expected, options) = sample();
    let options = RemoteOptions {
        multi_range: false,
        ..options
    };
    let once = fault_server(bytes.clone(), |n| {
        if n == 1 {
            Answer::Short
        } else {
            Answer::Right
        }
    });
    assert_eq!(
        validate_remote(&once.url, &options).expect("retried"),
        expected
    );
    let always = fault_server(
        bytes,
        |n| if n == 0 { Answer::Right } else { Answer::Short },
    );
    let e = validate_remote(&always.url, &options).expect_err("an error");
    assert!(e.to_string().contains("bytes"), "{e}");
}

#[test]
fn a_server_ignoring_range_is_not_downloaded() {
    let (bytes, _, options) = sample();
    let server = fault_server(bytes, |_| Answer::IgnoreRange);
    let e = RemoteSource::open(&server.url, &options).expect_err("an error");
    assert_eq!(e.kind(), std::io::ErrorKind::Unsupported, "{e}");
    assert!(e.to_string().contains("ignores Range"), "{e}");
}

#[test]
fn a_redirect_to_another_origin_is_refused_naming_both() {
    let (bytes, _, options) = sample();
    let elsewhere = fault_server(bytes.clone(), |_| Answer::Right);
    let port = elsewhere
        .url
        .split(':')
        .nth(2)
        .unwrap()
        .split('/')
        .next()
        .unwrap();
    let port: u16 = port.parse().unwrap();
    let server = fault_server(bytes, move |_| Answer::RedirectAway(port));
    let e = RemoteSource::open(&server.url, &options).expect_err("refused");
    let origin = |url: &str| url.trim_end_matches("/model.hrry").to_string();
    let text = e.to_string();
    assert!(text.contains(&origin(&server.url)), "{text}");
    assert!(text.contains(&origin(&elsewhere.url)), "{text}");
    assert!(text.contains("another origin"), "{text}");
    assert_eq!(e.kind(), std::io::ErrorKind::PermissionDenied, "{text}");
    // Refused at once, not retried, and the other origin never asked.
    assert_eq!(server.requests.load(Ordering::SeqCst), 1);
    assert_eq!(elsewhere.requests.load(Ordering::SeqCst), 0);
}

#[test]
fn same_origin_redirects_are_followed_up_to_the_bound() {
    let (bytes, expected, options) = sample();
    assert_eq!(options.max_redirects, 5);
    let five = fault_server(bytes.clone(), |_| Answer::Hops(5));
    assert_eq!(
        validate_remote(&five.url, &options).expect("five hops are followed"),
        expected
    );
    let six = fault_server(bytes, |_| Answer::Hops(6));
    let e = validate_remote(&six.url, &options).expect_err("six hops are too many");
    assert!(e.to_string().contains("more than 5 redirects"), "{e}");
    assert_eq!(six.requests.load(Ordering::SeqCst), 6);
}

#[test]
fn an_encoded_body_is_an_error_naming_the_encoding() {
    let (bytes, _, options) = sample();
    let server = fault_server(bytes, |_| Answer::Gzip);
    let e = RemoteSource::open(&server.url, &options).expect_err("refused");
    assert!(e.to_string().contains("Content-Encoding `gzip`"), "{e}");
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidData, "{e}");
}

/// How long opening `url` takes to fail with a 1 s stall timeout and one retry,
/// against a request timeout of two minutes; the error.
fn stalled_open(url: &str) -> (Duration, std::io::Error) {
    let options = RemoteOptions {
        stall_timeout: Duration::from_secs(1),
        timeout: Duration::from_secs(120),
        retries: 1,
        backoff: Duration::from_millis(5),
        ..RemoteOptions::default()
    };
    let started = std::time::Instant::now();
    let e = RemoteSource::open(url, &options).expect_err("stalls");
    (started.elapsed(), e)
}

#[test]
fn a_trickling_or_silent_server_fails_within_the_stall_timeout() {
    let (bytes, _, _) = sample();
    for answer in [Answer::Trickle, Answer::Silent] {
        let server = fault_server(bytes.clone(), move |_| answer);
        let (spent, e) = stalled_open(&server.url);
        assert!(e.to_string().contains("stalled"), "{answer:?}: {e}");
        assert!(
            e.to_string().contains("gave up after 2 tries"),
            "{answer:?}: {e}"
        );
        assert_eq!(server.requests.load(Ordering::SeqCst), 2, "{answer:?}");
        // Two tries of about a second each, far from the two-minute request
        // timeout (a trickle moves a byte a second, so only the stall rule ends it).
        assert!(spent < Duration::from_secs(30), "{answer:?}: {spent:?}");
        eprintln!("{answer:?}: failed after {spent:.1?}: {e}");
    }
}

#[test]
fn the_cli_takes_the_network_options_and_refuses_cross_origin_s3_endpoints() {
    let (bytes, _, _) = sample();
    let server = fault_server(bytes.clone(), |_| Answer::Trickle);
    let started = std::time::Instant::now();
    let out = hrry_run(
        &a(["validate", &server.url, "--timeout", "2", "--retries", "0"]),
        &[],
    );
    let spent = started.elapsed();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("stalled") || err.contains("within 2 s"),
        "{err}"
    );
    assert_eq!(server.requests.load(Ordering::SeqCst), 1, "{err}");
    assert!(spent < Duration::from_secs(30), "{spent:?}");
    eprintln!("validate --timeout 2 --retries 0 of a trickle: {spent:.1?}: {err}");
    // An S3 endpoint that redirects to another origin: refused, both named.
    let elsewhere = fault_server(bytes.clone(), |_| Answer::Right);
    let port: u16 = elsewhere
        .url
        .split(':')
        .nth(2)
        .unwrap()
        .split('/')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let endpoint = fault_server(bytes, move |_| Answer::RedirectAway(port));
    let endpoint_origin = endpoint.url.trim_end_matches("/model.hrry");
    let out = hrry_run(
        &a(["validate", "s3://bucket/model.hrry"]),
        &[
            ("AWS_ENDPOINT_URL", endpoint_origin),
            ("AWS_ACCESS_KEY_ID", "k"),
            ("AWS_SECRET_ACCESS_KEY", "s"),
            ("AWS_REGION", "us-east-1"),
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(endpoint_origin), "{err}");
    assert!(err.contains(&format!("http://127.0.0.1:{port}")), "{err}");
    assert!(err.contains("another origin"), "{err}");
    assert_eq!(elsewhere.requests.load(Ordering::SeqCst), 0);
    // Bad values are usage errors.
    let out = hrry_run(&a(["validate", &elsewhere.url, "--timeout", "0"]), &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("seconds"));
}

#[test]
fn a_multi_range_refusal_falls_back_to_single_ranges() {
    // The fault server answers multi-range requests with 200 and the whole body.
    let (bytes, expected, options) = sample();
    let server = fault_server(bytes, |_| Answer::Right);
    let source = RemoteSource::open(&server.url, &options).expect("open");
    let report = hrry::Format::HrryFile
        .validate_source(&source, &Default::default())
        .expect("validates");
    assert_eq!(report_text(hrry::Format::HrryFile, &report), expected);
}

#[test]
fn cli_errors_exit_2_naming_the_url_without_credentials() {
    let (bytes, _, _) = sample();
    let missing = fault_server(bytes.clone(), |_| Answer::Status(404));
    let url = missing.url.replace("http://", "http://alice:s3cret@");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_hrry"))
        .args(["validate", "--json", &url])
        .output()
        .expect("run hrry");
    assert_eq!(out.status.code(), Some(2));
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(all.contains(&missing.url), "{all}");
    assert!(!all.contains("s3cret"), "{all}");
    let changed = fault_server(bytes, |n| {
        if n == 0 {
            Answer::Right
        } else {
            Answer::Changed
        }
    });
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_hrry"))
        .args(["validate", &changed.url])
        .env("HRRY_REMOTE_SUFFIX_BYTES", "256")
        .env("HRRY_REMOTE_BLOCK_BYTES", "512")
        .output()
        .expect("run hrry");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("changed") && stderr.contains(&changed.url),
        "{stderr}"
    );
}

#[test]
fn reads_past_the_end_are_errors() {
    let (bytes, _, options) = sample();
    let len = bytes.len() as u64;
    let server = fault_server(bytes, |_| Answer::Right);
    let source = RemoteSource::open(&server.url, &options).expect("open");
    let mut buf = [0u8; 4];
    let e = source.read_at(len - 2, &mut buf).expect_err("past the end");
    assert_eq!(e.kind(), std::io::ErrorKind::UnexpectedEof);
}

// --- a 7B model's worth of tensors ----------------------------------------------

/// A writer that seeks over all-zero 4 KiB blocks, so a file of any size costs only
/// its metadata on disk.
struct Holes(std::fs::File);

impl Write for Holes {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        use std::io::{Seek, SeekFrom};
        for block in buf.chunks(4096) {
            if block.iter().all(|&b| b == 0) {
                self.0.seek(SeekFrom::Current(block.len() as i64))?;
            } else {
                self.0.write_all(block)?;
            }
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

/// The 291 float32 tensors of a 7B llama-style model (32 layers of 4096×4096 and
/// 11008×4096 matrices, a 32000×4096 embedding and output): about 25 GiB.
fn llama_7b() -> Vec<(String, Vec<u64>)> {
    let mut out = vec![("token_embd.weight".to_string(), vec![32000, 4096])];
    for l in 0..32 {
        for (part, shape) in [
            ("attn_norm.weight", vec![4096]),
            ("attn_q.weight", vec![4096, 4096]),
            ("attn_k.weight", vec![4096, 4096]),
            ("attn_v.weight", vec![4096, 4096]),
            ("attn_output.weight", vec![4096, 4096]),
            ("ffn_norm.weight", vec![4096]),
            ("ffn_gate.weight", vec![11008, 4096]),
            ("ffn_up.weight", vec![11008, 4096]),
            ("ffn_down.weight", vec![4096, 11008]),
        ] {
            out.push((format!("blk.{l}.{part}"), shape));
        }
    }
    out.push(("output_norm.weight".to_string(), vec![4096]));
    out.push(("output.weight".to_string(), vec![32000, 4096]));
    out
}

/// Writes the 7B model (zeros as holes, a 32000-token tokenizer in its KV) to
/// `path` unless it is there.
fn write_sparse_7b(path: &Path) {
    if path.exists() {
        return;
    }
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    let partial = path.with_extension("partial");
    let file = std::fs::File::create(&partial).expect("create");
    let sink = std::io::BufWriter::with_capacity(1 << 20, Holes(file));
    let mut w = hrry::file::HrryWriter::new(sink, Default::default()).expect("writer");
    w.add_kv("general.architecture", "llama").expect("kv");
    w.add_kv(
        "tokenizer.ggml.tokens",
        hrry_testkit::tokenizer_tokens(32000),
    )
    .expect("kv");
    let zeros = vec![0u8; 1 << 20];
    for (name, shape) in llama_7b() {
        let d =
            hrry::model::build::dense(hrry::model::ElementType::Float32, &shape).expect("dense");
        w.begin_tensor(&name, &d).expect("begin");
        let mut left: u64 = d.buffers.iter().map(|b| b.byte_size).sum();
        while left > 0 {
            let n = left.min(zeros.len() as u64) as usize;
            w.write_data(&zeros[..n]).expect("data");
            left -= n as u64;
        }
        w.end_tensor().expect("end");
    }
    let sink = w.finish().expect("finish");
    let mut file = sink
        .into_inner()
        .map_err(|e| e.into_error())
        .expect("flush")
        .0;
    use std::io::Seek;
    let len = file.stream_position().expect("position");
    file.set_len(len).expect("length");
    drop(file);
    std::fs::rename(&partial, path).expect("rename");
}

#[test]
fn a_7b_model_validates_over_http_in_few_requests() {
    let Some(base) = http_base() else { return };
    let rel = "target/remote-test/llama-7b-f32.hrry";
    let path = root().join(rel);
    write_sparse_7b(&path);
    let local = hrry::source::FileSource::open(&path).expect("open");
    let expected = report_of(&local, &path);
    assert!(expected.starts_with("hrryfile valid "), "{expected}");
    let url = format!("{base}{rel}");
    for multi_range in [true, false] {
        let options = RemoteOptions {
            multi_range,
            ..Default::default()
        };
        let remote = RemoteSource::open(&url, &options).expect("open");
        assert_eq!(report_of(&remote, &path), expected);
        let s = remote.stats();
        eprintln!(
            "validate {url} ({:.1} GiB, 291 tensors), {}: {} requests, {} bytes ({:.2} MiB)",
            local.len() as f64 / (1u64 << 30) as f64,
            if multi_range {
                "multi-range"
            } else {
                "single ranges"
            },
            s.requests,
            s.bytes,
            s.bytes as f64 / (1 << 20) as f64
        );
        assert!(s.bytes <= 8 << 20, "{s:?}");
        if multi_range {
            assert!(s.requests <= 16, "{s:?}");
        }
    }
}

#[test]
fn validate_checks_many_urls_in_parallel_as_json_lines() {
    let (bytes, _, _) = sample();
    let good = fault_server(bytes.clone(), |_| Answer::Right);
    let missing = fault_server(bytes, |_| Answer::Status(404));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_hrry"))
        .args([
            "validate",
            "--jobs",
            "2",
            "--jsonl",
            &good.url,
            &missing.url,
            &good.url,
        ])
        .output()
        .expect("run hrry");
    assert_eq!(out.status.code(), Some(2), "one URL cannot be read");
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(lines.len(), 3);
    let valid = lines
        .iter()
        .filter(|v| v["valid"] == true && v["file"] == good.url.as_str());
    assert_eq!(valid.count(), 2);
    assert!(lines.iter().any(|v| v["file"] == missing.url.as_str()
        && v["error"].as_str().is_some_and(|e| e.contains("404"))));
}

// --- HrryFile over any source ----------------------------------------------------

/// A source over bytes that records every range read from it.
struct Recording {
    bytes: Vec<u8>,
    reads: Arc<Mutex<Vec<(u64, u64)>>>,
}

impl ReadAt for Recording {
    fn len(&self) -> u64 {
        self.bytes.len() as u64
    }
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
        let end = offset + buf.len() as u64;
        self.reads.lock().unwrap().push((offset, end));
        self.bytes.as_slice().read_at(offset, buf)
    }
}

/// Whether the union of `reads` covers `start..end`.
fn covered(reads: &[(u64, u64)], start: u64, end: u64) -> bool {
    let mut sorted = reads.to_vec();
    sorted.sort_unstable();
    let mut at = start;
    for (s, e) in sorted {
        if s <= at && e > at {
            at = e;
        }
    }
    at >= end
}

#[test]
fn a_file_over_a_source_reads_as_from_disk_and_hands_out_only_fetched_bytes() {
    use hrry::file::OpenOptions;
    use hrry::validate::Depth;
    let mut checked = 0;
    for path in corpus_files() {
        if path.extension().is_some_and(|x| x == "holo") {
            continue;
        }
        let bytes = std::fs::read(&path).expect("read");
        for check in [Depth::Metadata, Depth::Index, Depth::Data] {
            let options = OpenOptions::new().depth(check);
            let local = options.open_bytes(&bytes);
            let reads = Arc::new(Mutex::new(Vec::new()));
            let source = Recording {
                bytes: bytes.clone(),
                reads: reads.clone(),
            };
            let remote = options.open_source(source);
            let (local, remote) = match (local, remote) {
                (Ok(l), Ok(r)) => (l, r),
                (Err(l), Err(r)) => {
                    // The same refusal, naming the same rule.
                    assert_eq!(l.to_string(), r.to_string(), "{}", path.display());
                    continue;
                }
                (l, r) => panic!(
                    "{}: local {:?} remote {:?}",
                    path.display(),
                    l.err().map(|e| e.to_string()),
                    r.err().map(|e| e.to_string())
                ),
            };
            assert!(remote.bytes().is_none());
            assert_eq!(remote.size(), bytes.len() as u64);
            for entry in local.entries() {
                let name = entry.name();
                let l = local.tensor_at(entry);
                // By position: a trusted open does not refuse duplicate names.
                let r = remote.tensor_at(remote.entry(entry.position()).expect("entry"));
                let (l, r) = match (l, r) {
                    (Ok(l), Ok(r)) => (l, r),
                    (Err(l), Err(r)) => {
                        assert_eq!(l.to_string(), r.to_string());
                        continue;
                    }
                    (l, r) => panic!(
                        "{} {name}: {:?} vs {:?}",
                        path.display(),
                        l.err().map(|e| e.to_string()),
                        r.err().map(|e| e.to_string())
                    ),
                };
                assert_eq!(l.buffers, r.buffers, "{} {name}", path.display());
                let reads = reads.lock().unwrap().clone();
                for (lb, b) in l.buffers.iter().zip(&r.buffers) {
                    let at = remote.offset_of(b).expect("a slice of the file");
                    assert_eq!(local.offset_of(lb), Some(at));
                    assert!(
                        covered(&reads, at, at + ReadAt::len(*b)),
                        "{} {name}: bytes {at}+{} handed out unfetched",
                        path.display(),
                        b.len()
                    );
                }
            }
            let r = remote.read_range(0, 64).expect("the header");
            assert_eq!(r, &bytes[..64]);
            assert!(covered(&reads.lock().unwrap(), 0, 64));
            assert!(remote.read_range(bytes.len() as u64 - 1, 2).is_err());
            checked += 1;
        }
    }
    assert!(checked > 50, "{checked} opens compared");
}

#[test]
fn files_over_sources_can_be_shared_between_threads() {
    fn shared<T: Send + Sync>() {}
    shared::<hrry::file::HrryFile<'static>>();
}

#[test]
fn a_file_over_a_source_fetches_only_the_tensors_asked_for() {
    // Three 4 MiB tensors: opening reads metadata, one tensor reads its 4 MiB.
    let mut w = hrry::file::HrryWriter::new(Vec::new(), Default::default()).expect("writer");
    let values: Vec<f32> = (0..1 << 20).map(|i| i as f32).collect();
    for name in ["a", "b", "c"] {
        w.write_row_major::<f32>(name, &[1 << 20], &values)
            .expect("tensor");
    }
    let bytes = w.finish().expect("finish");
    let reads = Arc::new(Mutex::new(Vec::new()));
    let file = hrry::file::OpenOptions::new()
        .open_source(Recording {
            bytes,
            reads: reads.clone(),
        })
        .expect("opens");
    let total = |reads: &Arc<Mutex<Vec<(u64, u64)>>>| -> u64 {
        reads.lock().unwrap().iter().map(|&(s, e)| e - s).sum()
    };
    let opened = total(&reads);
    assert!(opened < 256 << 10, "the open read {opened} bytes");
    let b = file.tensor("b").expect("reads").expect("present");
    assert_eq!(b.as_slice::<f32>().expect("f32")[12345], 12345.0);
    let after = total(&reads);
    assert!(
        after - opened <= (4 << 20) + 4096,
        "{} bytes",
        after - opened
    );
    // Asked again: nothing more is read.
    let again = file.tensor("b").expect("reads").expect("present");
    assert_eq!(again.buffers, b.buffers);
    assert_eq!(total(&reads), after);
    assert_eq!(file.fetched_len(), Some(after));
}

// --- every command over URLs -----------------------------------------------------

/// Runs `hrry` with `args` and the environment `env`.
fn hrry_run(args: &[&std::ffi::OsStr], env: &[(&str, &str)]) -> std::process::Output {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_hrry"));
    cmd.args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("run hrry")
}

/// `hrry_run` that must succeed; its standard output.
fn hrry_ok(args: &[&std::ffi::OsStr], env: &[(&str, &str)]) -> std::process::Output {
    let out = hrry_run(args, env);
    assert!(
        out.status.success(),
        "hrry {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// `&str`s as arguments.
fn a<const N: usize>(args: [&str; N]) -> [&std::ffi::OsStr; N] {
    args.map(std::ffi::OsStr::new)
}

/// The `N requests (R retries), B bytes fetched` line `HRRY_REMOTE_STATS` prints
/// for `url`: (requests, bytes).
fn remote_stats(stderr: &[u8], url: &str) -> (u64, u64) {
    let text = String::from_utf8_lossy(stderr);
    let line = text
        .lines()
        .find(|l| l.starts_with(&format!("{url}: ")) && l.contains("requests"))
        .unwrap_or_else(|| panic!("no statistics for {url} in {text}"));
    let words: Vec<&str> = line[url.len() + 2..].split_whitespace().collect();
    (
        words[0].parse().expect("requests"),
        words[4].parse().expect("bytes"),
    )
}

/// The URLs of corpus file `rel` the real servers serve (none without them), each
/// with the environment the CLI needs for it.
fn served(rel: &str) -> Vec<(String, Vec<(&'static str, &'static str)>)> {
    let mut out = Vec::new();
    if let Ok(base) = std::env::var("HRRY_TEST_HTTP_BASE") {
        out.push((format!("{base}{rel}"), vec![]));
    }
    if let Ok(bucket) = std::env::var("HRRY_TEST_S3_BUCKET") {
        // s3s-fs fails a suffix range longer than the object (see above).
        out.push((
            format!("s3://{bucket}/{rel}"),
            vec![("HRRY_REMOTE_SUFFIX_BYTES", "4096")],
        ));
    }
    if out.is_empty() {
        eprintln!("no test servers: tests/remote/run.sh runs this test with nginx and s3s-fs");
    }
    out
}

#[test]
fn every_command_reads_urls_as_it_reads_paths() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = |name: &str| dir.path().join(name);
    let basic = "corpus/valid/basic.hrry";
    let quant = "corpus/valid/quant-per-block-int4-f16.hrry";
    let holo = "corpus/valid/full.holo";
    for (rel, url_env) in [basic, quant, holo]
        .iter()
        .flat_map(|rel| served(rel).into_iter().map(move |u| (*rel, u)))
    {
        let (url, env) = url_env;
        let local = root().join(rel);
        let local = local.to_str().expect("utf-8 path");
        let json = |file: &str| -> serde_json::Value {
            let out = hrry_ok(&a(["inspect", "--json", file]), &env);
            serde_json::from_slice(&out.stdout).expect("JSON")
        };
        let (mut l, mut r) = (json(local), json(&url));
        if !l["file"].is_null() {
            assert_eq!(r["file"], url.as_str());
        }
        l["file"] = serde_json::Value::Null;
        r["file"] = serde_json::Value::Null;
        assert_eq!(l, r, "{url}");
        if rel == holo {
            let (lo, ro) = (d("local-w.bin"), d("remote-w.bin"));
            for (input, out) in [(local, &lo), (url.as_str(), &ro)] {
                hrry_ok(
                    &[
                        a(["holo", "extract", input, "--section", "Weights", "-o"]).as_slice(),
                        &[out.as_os_str()],
                    ]
                    .concat(),
                    &env,
                );
            }
            assert_eq!(std::fs::read(&lo).ok(), std::fs::read(&ro).ok(), "{url}");
            continue;
        }
        let tensor = if rel == quant { "q" } else { "weights" };
        let same = |command: &[&str], output: &str| {
            let (lo, ro) = (
                d(&format!("local-{output}")),
                d(&format!("remote-{output}")),
            );
            for (input, out) in [(local, &lo), (url.as_str(), &ro)] {
                // The input follows the (sub)command.
                let words = if command[0] == "stream" { 2 } else { 1 };
                let mut args: Vec<&std::ffi::OsStr> =
                    command[..words].iter().map(std::ffi::OsStr::new).collect();
                args.push(std::ffi::OsStr::new(input));
                args.extend(command[words..].iter().map(std::ffi::OsStr::new));
                args.push(out.as_os_str());
                hrry_ok(&args, &env);
            }
            assert_eq!(
                std::fs::read(&lo).expect("local output"),
                std::fs::read(&ro).expect("remote output"),
                "{command:?} of {url}"
            );
        };
        same(&["export", tensor, "-o"], "t.npy");
        same(&["convert", "--quiet"], "c.safetensors");
        same(&["stream", "pack", "-o"], "s.hrrys");
        if rel == quant {
            same(&["dequant", tensor, "-o"], "q.npy");
        }
        // export --all: the same files, the index naming the URL.
        let all = d("all");
        hrry_ok(
            &[a(["export", &url, "--all"]).as_slice(), &[all.as_os_str()]].concat(),
            &env,
        );
        let index: serde_json::Value =
            serde_json::from_slice(&std::fs::read(all.join("index.json")).expect("index"))
                .expect("JSON");
        assert_eq!(index["source"], url.as_str());
        std::fs::remove_dir_all(&all).expect("clean");
        serve_serves(&url, &env, tensor, &d(&format!("export-{tensor}.npy")));
    }
}

/// `hrry serve URL` serves the tensor as `hrry export` writes it.
fn serve_serves(url: &str, env: &[(&str, &str)], tensor: &str, exported: &Path) {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_hrry"));
    cmd.args(["serve", "--listen", "127.0.0.1:0", url])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut server = cmd.spawn().expect("serve");
    let mut line = String::new();
    BufReader::new(server.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("a line");
    let addr = line
        .trim()
        .strip_prefix("listening on ")
        .map(str::to_string);
    let fetched = exported.with_extension("fetched.npy");
    let result = addr.as_deref().map(|addr| {
        hrry_run(
            &[
                a(["fetch", addr, tensor, "-o"]).as_slice(),
                &[fetched.as_os_str()],
            ]
            .concat(),
            &[],
        )
    });
    hrry_ok(
        &[
            a(["export", url, tensor, "-o"]).as_slice(),
            &[exported.as_os_str()],
        ]
        .concat(),
        env,
    );
    let _ = server.kill();
    let _ = server.wait();
    let out = result.unwrap_or_else(|| panic!("serve {url} printed {line:?}"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read(&fetched).expect("fetched"),
        std::fs::read(exported).expect("exported"),
        "served {url}"
    );
}

#[test]
fn a_7b_model_inspects_and_exports_one_tensor_over_http_in_bounded_fetches() {
    let Some(base) = http_base() else { return };
    let rel = "target/remote-test/llama-7b-f32.hrry";
    let path = root().join(rel);
    write_sparse_7b(&path);
    let url = format!("{base}{rel}");
    let stats = [("HRRY_REMOTE_STATS", "1")];
    let out = hrry_ok(&a(["inspect", "--json", &url]), &stats);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["tensors"].as_array().map(Vec::len), Some(291));
    let (requests, bytes) = remote_stats(&out.stderr, &url);
    eprintln!(
        "inspect {url}: {requests} requests, {bytes} bytes ({:.2} MiB)",
        bytes as f64 / (1 << 20) as f64
    );
    assert!(
        requests <= 16 && bytes <= 8 << 20,
        "{requests} requests, {bytes} bytes"
    );

    let dir = tempfile::tempdir().expect("temp dir");
    let tensor = "blk.7.attn_q.weight"; // 4096×4096 float32: 64 MiB
    let (lo, ro) = (dir.path().join("l.npy"), dir.path().join("r.npy"));
    hrry_ok(
        &[
            a(["export", path.to_str().unwrap(), tensor, "-o"]).as_slice(),
            &[lo.as_os_str()],
        ]
        .concat(),
        &[],
    );
    let out = hrry_ok(
        &[
            a(["export", &url, tensor, "-o"]).as_slice(),
            &[ro.as_os_str()],
        ]
        .concat(),
        &stats,
    );
    let (requests, bytes) = remote_stats(&out.stderr, &url);
    eprintln!(
        "export {tensor} (64 MiB) of {url}: {requests} requests, {bytes} bytes ({:.2} MiB)",
        bytes as f64 / (1 << 20) as f64
    );
    let tensor_bytes = 4096 * 4096 * 4;
    assert!(bytes >= tensor_bytes, "the tensor was fetched: {bytes}");
    assert!(bytes <= tensor_bytes + (8 << 20), "{bytes} bytes");
    assert!(requests <= 24, "{requests} requests");
    assert!(
        std::fs::read(&lo).expect("local") == std::fs::read(&ro).expect("remote"),
        "the same export"
    );
}

#[test]
fn a_file_changed_mid_read_is_an_error_for_every_command() {
    let (bytes, _, _) = sample();
    let dir = tempfile::tempdir().expect("temp dir");
    let out_path = dir.path().join("out");
    let out = out_path.to_str().unwrap();
    let small = [
        ("HRRY_REMOTE_SUFFIX_BYTES", "256"),
        ("HRRY_REMOTE_BLOCK_BYTES", "512"),
    ];
    for command in [
        vec!["inspect"],
        vec!["export", "weights", "-o", out],
        vec!["stream", "pack", "-o", out],
        vec!["convert", "--quiet", out],
    ] {
        let server = fault_server(bytes.clone(), |n| {
            if n == 0 {
                Answer::Right
            } else {
                Answer::Changed
            }
        });
        let mut args: Vec<&str> = command.clone();
        let at = if command[0] == "stream" { 2 } else { 1 };
        args.insert(at, &server.url);
        let args: Vec<&std::ffi::OsStr> = args.iter().map(std::ffi::OsStr::new).collect();
        let run = hrry_run(&args, &small);
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(2), "{command:?}: {stderr}");
        assert!(
            stderr.contains("changed") && stderr.contains(&server.url),
            "{command:?}: {stderr}"
        );
        assert!(!out_path.exists(), "{command:?} left an output");
    }
}

#[test]
fn credentials_are_never_printed_by_any_command() {
    let (bytes, _, _) = sample();
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("out");
    let out = out.to_str().unwrap();
    for (answer, code) in [(Answer::Status(404), 2), (Answer::Right, 0)] {
        let server = fault_server(bytes.clone(), move |_| answer);
        let url = server.url.replace("http://", "http://alice:s3cret@");
        for command in [
            vec!["validate", "--json", &url],
            vec!["validate", "--verbose", &url],
            vec!["inspect", "--json", &url],
            vec!["inspect", &url],
            vec!["export", &url, "weights", "-o", out],
            vec!["export", &url, "--all", out],
            vec!["dequant", &url, "weights", "--stats"],
            vec!["stream", "pack", &url, "-o", out],
            vec!["convert", "--quiet", "--to", "safetensors", &url, out],
        ] {
            let _ = std::fs::remove_dir_all(out);
            let _ = std::fs::remove_file(out);
            let args: Vec<&std::ffi::OsStr> = command.iter().map(std::ffi::OsStr::new).collect();
            let run = hrry_run(&args, &[("HRRY_REMOTE_STATS", "1")]);
            let all = format!(
                "{}{}",
                String::from_utf8_lossy(&run.stdout),
                String::from_utf8_lossy(&run.stderr)
            );
            assert!(
                !all.contains("s3cret") && !all.contains("alice"),
                "{command:?}: {all}"
            );
            assert!(
                all.contains(&server.url),
                "{command:?} names the URL: {all}"
            );
            assert_eq!(run.status.code(), Some(code), "{command:?}: {all}");
        }
    }
}

#[test]
fn validate_reads_its_urls_from_a_list_and_reports_what_they_cost() {
    let (bytes, _, _) = sample();
    let dir = tempfile::tempdir().expect("temp dir");
    let local = dir.path().join("basic.hrry");
    std::fs::write(&local, &bytes).expect("write");
    // The local file's object, as `--jsonl` prints it.
    let local_run = hrry_run(
        &[a(["validate", "--jsonl"]).as_slice(), &[local.as_os_str()]].concat(),
        &[],
    );
    let expected: serde_json::Value =
        serde_json::from_slice(&local_run.stdout).expect("the local object");
    let good = fault_server(bytes.clone(), |_| Answer::Right);
    let missing = fault_server(bytes, |_| Answer::Status(404));
    let list = dir.path().join("urls.txt");
    std::fs::write(
        &list,
        format!(
            "# the list\n{}\n\n{}\n{}\n",
            good.url, missing.url, good.url
        ),
    )
    .expect("write");
    let run = hrry_run(
        &[
            a(["validate", "--jobs", "3", "--jsonl", "--from"]).as_slice(),
            &[list.as_os_str()],
        ]
        .concat(),
        &[],
    );
    assert_eq!(run.status.code(), Some(2), "one URL cannot be read");
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&run.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(lines.len(), 3);
    for v in &lines {
        if v["file"] == good.url.as_str() {
            // The local document, with `file` the URL and what reading cost.
            let mut same = v.clone();
            let remote = same
                .as_object_mut()
                .and_then(|m| m.remove("remote"))
                .expect("a remote object");
            assert!(
                remote["requests"].as_u64().is_some_and(|n| n >= 1),
                "{remote}"
            );
            assert!(remote["bytes"].as_u64().is_some_and(|n| n > 0), "{remote}");
            same["file"] = expected["file"].clone();
            assert_eq!(same, expected);
        } else {
            assert_eq!(v["file"], missing.url.as_str());
            assert!(
                v["error"].as_str().is_some_and(|e| e.contains("404")),
                "{v}"
            );
        }
    }
    // From standard input, with --verbose saying what it cost.
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_hrry"))
        .args(["validate", "--verbose", "--from", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("run hrry");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(format!("{}\n", good.url).as_bytes())
        .expect("write");
    let run = child.wait_with_output().expect("wait");
    assert_eq!(run.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(stdout.contains(&format!("{}: VALID", good.url)), "{stdout}");
    assert!(
        stdout.contains("  remote: ") && stdout.contains("bytes fetched"),
        "{stdout}"
    );
}

#[test]
fn dequant_of_one_remote_tensor_fetches_that_tensor_only() {
    let Some(base) = http_base() else { return };
    // Four int4 tensors of 2048×2048 (2.25 MiB each, codes and scales).
    let rel = "target/remote-test/int4-x4.hrry";
    let path = root().join(rel);
    if !path.exists() {
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        let partial = path.with_extension("partial");
        let mut w = hrry::file::HrryWriter::create(&partial, Default::default()).expect("create");
        for t in 0..4u32 {
            let values: Vec<f32> = (0..2048 * 2048u32)
                .map(|i| {
                    ((i.wrapping_mul(2654435761).wrapping_add(t) >> 20) as f32 - 2048.0) / 512.0
                })
                .collect();
            let q = hrry::quant::quantize_per_block(&values, &[2048, 2048], &Default::default())
                .expect("quantize");
            w.write_tensor(&format!("t{t}"), &q.descriptor, &q.buffer_slices())
                .expect("tensor");
        }
        w.finish_file().expect("finish");
        std::fs::rename(&partial, &path).expect("rename");
    }
    let file = hrry::file::HrryFile::open(&path).expect("open");
    let one = file.find("t2").expect("t2").index_entry().data_length;
    let url = format!("{base}{rel}");
    let local = hrry_ok(
        &a(["dequant", path.to_str().unwrap(), "t2", "--stats", "--json"]),
        &[],
    );
    let out = hrry_ok(
        &a(["dequant", &url, "t2", "--stats", "--json"]),
        &[("HRRY_REMOTE_STATS", "1")],
    );
    assert_eq!(local.stdout, out.stdout, "the same statistics");
    let (requests, bytes) = remote_stats(&out.stderr, &url);
    eprintln!(
        "dequant t2 ({one} bytes of {}) of {url}: {requests} requests, {bytes} bytes",
        file.size()
    );
    assert!(bytes >= one, "the tensor was fetched: {bytes}");
    // Opening checks every tensor's quantization parameters (its scales, as a
    // local open does); besides those, the suffix (256 KiB) and the descriptors'
    // blocks: never the other tensors' codes.
    let other_scales: u64 = ["t0", "t1", "t3"]
        .iter()
        .map(|n| {
            file.tensor(n)
                .expect("reads")
                .expect("present")
                .descriptor
                .buffers[1]
                .byte_size
        })
        .sum();
    let codes = file
        .tensor("t0")
        .expect("reads")
        .expect("present")
        .descriptor
        .buffers[0]
        .byte_size;
    assert!(
        bytes <= one + other_scales + (1 << 20) && bytes < one + codes,
        "{bytes} bytes for a {one}-byte tensor ({other_scales} bytes of other scales)"
    );
    assert!(requests <= 8, "{requests} requests");
}

// --- hrry diff over URLs -------------------------------------------------------------

/// A model of `layers` float32 matrices of 512 × 512 (1 MiB each) with a
/// tokenizer in its KV; `bump` changes one element of the last matrix.
fn diff_model(layers: usize, bump: bool) -> Vec<u8> {
    let mut w = hrry::file::HrryWriter::new(Vec::new(), Default::default()).expect("writer");
    w.add_kv("general.architecture", "llama").expect("kv");
    w.add_kv(
        "tokenizer.ggml.tokens",
        hrry_testkit::tokenizer_tokens(2000),
    )
    .expect("kv");
    for l in 0..layers {
        let mut values: Vec<f32> = (0..512 * 512).map(|i| ((i + l) % 97) as f32).collect();
        if bump && l + 1 == layers {
            values[1000] += 1.0;
        }
        w.write_row_major::<f32>(&format!("blk.{l}.weight"), &[512, 512], &values)
            .expect("tensor");
    }
    w.finish().expect("finish")
}

#[test]
fn diff_of_two_remote_models_reads_only_metadata_when_asked() {
    let (a_bytes, b_bytes) = (diff_model(16, false), diff_model(16, true));
    let len = a_bytes.len() as u64;
    let (sa, sb) = (
        fault_server(a_bytes, |_| Answer::Right),
        fault_server(b_bytes, |_| Answer::Right),
    );
    let stats = [("HRRY_REMOTE_STATS", "1")];
    let out = hrry_run(
        &a(["diff", "--metadata-only", "--json", &sa.url, &sb.url]),
        &stats,
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let requests = (
        sa.requests.load(Ordering::SeqCst),
        sb.requests.load(Ordering::SeqCst),
    );
    let (_, bytes_a) = remote_stats(&out.stderr, &sa.url);
    eprintln!(
        "diff --metadata-only of two {:.1} MiB models (16 tensors each) over HTTP without multi-range: {requests:?} requests, {bytes_a} bytes of the first",
        len as f64 / (1 << 20) as f64
    );
    // No more than inspecting each file costs (a descriptor per request when the
    // server refuses multi-range prefetches), and a small part of the bytes.
    let inspect = fault_server(diff_model(16, false), |_| Answer::Right);
    hrry_ok(&a(["inspect", "--json", &inspect.url]), &[]);
    let alone = inspect.requests.load(Ordering::SeqCst);
    assert!(
        requests.0 <= alone && requests.1 <= alone,
        "{requests:?} vs {alone}"
    );
    assert!(bytes_a < len / 8, "{bytes_a} of {len}");
    // A server that answers multi-range requests (nginx) takes a few requests.
    if let Ok(base) = std::env::var("HRRY_TEST_HTTP_BASE") {
        let dir = root().join("target/remote-test");
        std::fs::create_dir_all(&dir).expect("mkdir");
        std::fs::write(dir.join("diff-a.hrry"), diff_model(16, false)).expect("write");
        std::fs::write(dir.join("diff-b.hrry"), diff_model(16, true)).expect("write");
        let (ua, ub) = (
            format!("{base}target/remote-test/diff-a.hrry"),
            format!("{base}target/remote-test/diff-b.hrry"),
        );
        let out = hrry_ok(&a(["diff", "--metadata-only", &ua, &ub]), &stats);
        let (ra, ba) = remote_stats(&out.stderr, &ua);
        let (rb, _) = remote_stats(&out.stderr, &ub);
        eprintln!("diff --metadata-only of the two models over nginx: {ra} + {rb} requests, {ba} bytes of the first");
        assert!(ra <= 4 && rb <= 4, "{ra} {rb}");
    }

    // Comparing the values reads the files and finds the changed element.
    let out = hrry_run(&a(["diff", "--json", &sa.url, &sb.url]), &stats);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(doc["tensors"][0]["name"], "blk.15.weight");
    assert_eq!(doc["tensors"][0]["values"]["first_index"], 1000);
    assert_eq!(doc["equal_tensors"], 15);
    let (requests, bytes) = remote_stats(&out.stderr, &sb.url);
    eprintln!("diff of the same two models, values compared: {requests} requests, {bytes} bytes of the second");
    assert!(bytes >= len - (1 << 20), "{bytes} of {len}");
}
