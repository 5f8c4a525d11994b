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

/// The `validate --json` object of a source (with a fixed name).
fn report_json(source: &dyn ReadAt, name: &Path) -> String {
    let format = hrry::Format::detect_source(source, Some(name)).expect("detect");
    let report = format
        .validate_source(source, &Default::default())
        .expect("validate");
    hrry::report::validate_json("f", format.name(), &report).to_string()
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
    let Ok(base) = std::env::var("HRRY_TEST_HTTP_BASE") else {
        eprintln!("HRRY_TEST_HTTP_BASE is not set: tests/remote/run.sh runs this test with nginx");
        return;
    };
    let mut most_requests = 0;
    let mut checked = 0;
    for path in corpus_files() {
        let rel = path.strip_prefix(root()).expect("under the root");
        let url = format!("{base}{}", rel.display());
        let local = hrry::source::FileSource::open(&path).expect("open");
        let expected = report_json(&local, &path);
        for (label, options) in [
            ("default", RemoteOptions::default()),
            ("tiny blocks, multi-range", tiny(true)),
            ("tiny blocks, single ranges", tiny(false)),
        ] {
            let remote = RemoteSource::open(&url, &options).expect("open over http");
            assert_eq!(remote.len(), local.len());
            let got = report_json(&remote, &path);
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
        let expected = report_json(&local, &path);
        // s3s-fs 0.14 fails (500) a suffix range longer than the object, which S3
        // answers with the whole object: ask for at most the object's length.
        let options = RemoteOptions {
            suffix_len: local.len().clamp(1, 4096),
            block_size: 4096,
            ..Default::default()
        };
        let remote = RemoteSource::open(&url, &options).expect("open over s3");
        assert_eq!(report_json(&remote, &path), expected, "{url}");
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
    let Ok(base) = std::env::var("HRRY_TEST_HTTP_BASE") else {
        eprintln!("HRRY_TEST_HTTP_BASE is not set: tests/remote/run.sh runs this test with nginx");
        return;
    };
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
            stream.write_all(head("206 Partial Content", &headers).as_bytes())?;
            let body = &bytes[s as usize..e as usize];
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
    let expected = report_json(&bytes, &path);
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
    Ok(hrry::report::validate_json("f", format.name(), &report).to_string())
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
fn a_multi_range_refusal_falls_back_to_single_ranges() {
    // The fault server answers multi-range requests with 200 and the whole body.
    let (bytes, expected, options) = sample();
    let server = fault_server(bytes, |_| Answer::Right);
    let source = RemoteSource::open(&server.url, &options).expect("open");
    let report = hrry::Format::HrryFile
        .validate_source(&source, &Default::default())
        .expect("validates");
    assert_eq!(
        hrry::report::validate_json("f", "hrryfile", &report).to_string(),
        expected
    );
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
    let Ok(base) = std::env::var("HRRY_TEST_HTTP_BASE") else {
        eprintln!("HRRY_TEST_HTTP_BASE is not set: tests/remote/run.sh runs this test with nginx");
        return;
    };
    let rel = "target/remote-test/llama-7b-f32.hrry";
    let path = root().join(rel);
    write_sparse_7b(&path);
    let local = hrry::source::FileSource::open(&path).expect("open");
    let expected = report_json(&local, &path);
    assert!(expected.contains("\"valid\":true"), "{expected}");
    let url = format!("{base}{rel}");
    for multi_range in [true, false] {
        let options = RemoteOptions {
            multi_range,
            ..Default::default()
        };
        let remote = RemoteSource::open(&url, &options).expect("open");
        assert_eq!(report_json(&remote, &path), expected);
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
    // inspect does not read URLs yet, and says so.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_hrry"))
        .args(["inspect", &good.url])
        .output()
        .expect("run hrry");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("does not read URLs"));
}
