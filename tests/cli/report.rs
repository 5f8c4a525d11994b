//! `hrry report` of every format hrry validates — HRRYFILEs, `.holo` archives
//! (with the HRRYFILEs inside them), bare streams, captured conversations — from
//! a path or a URL: the byte map's regions and one mark per violation. (The page
//! in a real browser: tests/report/run.sh.)

use crate::hrry;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use hrry::file::HrryWriter;
use hrry::holo::{HoloWriter, WeightStore};

/// The page `hrry report INPUT` writes (into `dir`), failing the test on an error.
fn report(input: &str, dir: &Path) -> String {
    let page = dir.join("page.html");
    let (code, _, err) = hrry(&[
        std::ffi::OsStr::new("report"),
        input.as_ref(),
        "-o".as_ref(),
        page.as_os_str(),
    ]);
    assert_eq!(code, 0, "report {input}: {err}");
    std::fs::read_to_string(&page).expect("page")
}

/// How many violations `hrry validate --json` finds in `input`.
fn violations(input: &str) -> usize {
    let (_, out, err) = hrry(&["validate", "--json", input]);
    let doc: serde_json::Value =
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out} {err}"));
    doc["files"][0]["violations"]
        .as_array()
        .expect("violations")
        .len()
}

fn count(page: &str, what: &str) -> usize {
    page.matches(what).count()
}

fn corpus(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("corpus")
        .join(rel)
}

/// A HRRYFILE of one float32 tensor `name` holding `values`.
pub fn hrryfile(name: &str, values: &[f32]) -> Vec<u8> {
    let mut w = HrryWriter::new(Vec::new(), Default::default()).expect("writer");
    w.write_row_major::<f32>(name, &[values.len() as u64], values)
        .expect("tensor");
    w.finish().expect("file")
}

/// An archive holding a HRRYFILE as a Weights body and another as an Extension
/// value, an opaque weight, and an Extension whose key is markup.
pub fn archive(weight_values: &[f32]) -> Vec<u8> {
    let mut weights = WeightStore::new();
    weights.insert(hrryfile("w", weight_values));
    weights.insert(vec![7u8; 100]);
    let mut writer = HoloWriter::new();
    writer
        .set_kernel_calls(b"calls".to_vec())
        .set_weights(weights)
        .add_extension("model", hrryfile("bias", &[0.5, -0.5]))
        .add_extension("<script>document.title='pwned'</script>", b"{}".to_vec());
    writer.finish().expect("archive")
}

#[test]
fn report_draws_an_archive_and_the_hrryfiles_inside_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("model.holo");
    std::fs::write(&path, archive(&[1.0, 2.0, 3.0])).expect("write");
    let page = report(path.to_str().expect("utf-8"), dir.path());
    // The top row: header, table, sections, footer.
    assert!(page.contains("archive header"), "{page}");
    assert!(page.contains("section table"));
    assert!(page.contains("Weights section"));
    assert!(page.contains("footer (BLAKE3)"));
    // The second row: Weights entries, and the structure of each HRRYFILE inside.
    assert!(page.contains("weight 1 body"));
    assert!(page.contains("Weights[0]: descriptor of w"));
    assert!(page.contains("Weights[0]: tensor index"));
    assert!(page.contains("Extension[model]: descriptor of bias"));
    // Their tensors in the table, with statistics.
    assert!(page.contains(r#"<td class="mono">Weights[0]/w</td>"#));
    assert!(page.contains(r#"<td class="mono">Extension[model]/bias</td>"#));
    assert!(
        page.contains(">holo<") || page.contains("<p>holo,"),
        "format named"
    );
    // The key that is markup is text.
    assert!(!page.contains("<script>document"));
    assert!(page.contains("&lt;script&gt;document.title="));
    assert_eq!(count(&page, "class=\"violation-mark\""), 0);
}

#[test]
fn report_marks_every_violation_of_archives_streams_and_conversations() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut inputs = Vec::new();
    for (folder, extension) in [
        ("invalid", "holo"),
        ("stream/invalid", "hrrys"),
        ("messages/invalid", "hrrymsg"),
    ] {
        let mut found: Vec<PathBuf> = std::fs::read_dir(corpus(folder))
            .expect("corpus folder")
            .map(|e| e.expect("entry").path())
            .filter(|p| p.extension().is_some_and(|e| e == extension))
            .collect();
        found.sort();
        assert!(!found.is_empty(), "no .{extension} in {folder}");
        inputs.extend(found.into_iter().take(6));
    }
    for input in inputs {
        let input = input.to_str().expect("utf-8");
        let page = report(input, dir.path());
        let expected = violations(input);
        assert!(expected > 0, "{input} is invalid");
        assert_eq!(
            count(&page, "class=\"violation-mark\""),
            expected,
            "{input}"
        );
        assert!(
            page.contains(r#"class="verdict invalid""#)
                || page.contains(r#"class="verdict refused""#),
            "{input}"
        );
    }
}

#[test]
fn report_draws_a_stream_s_tensors_and_a_conversation_s_frames() {
    let dir = tempfile::tempdir().expect("temp dir");
    let stream = corpus("stream/valid/composite_nested_group.hrrys");
    let page = report(stream.to_str().expect("utf-8"), dir.path());
    let (_, listing, _) = hrry(&[
        "stream".as_ref(),
        "validate".as_ref(),
        "--json".as_ref(),
        stream.as_os_str(),
    ]);
    let tensors = count(&page, "<title>descriptor of t");
    assert!(tensors >= 3, "{tensors} descriptors drawn: {listing}");
    // Composite heads hold no data.
    let data = count(&page, "<title>data of t");
    assert!((1..tensors).contains(&data), "{data} data regions");
    // The tensors, named as `hrry stream unpack` names them, in the table.
    assert!(page.contains(r#"<td class="mono">t0</td>"#), "{page}");
    assert!(page.contains(r#"class="verdict valid""#));

    let messages = corpus("messages/valid/composite.hrrymsg");
    let page = report(messages.to_str().expect("utf-8"), dir.path());
    assert!(count(&page, " header (stream ") >= 2, "{page}");
    assert!(page.contains("CLIENT_HELLO") || page.contains("HELLO"));
    assert!(
        !page.contains("class=\"region unread\""),
        "every frame is drawn"
    );
}

/// A loopback HTTP server answering single-range requests for `files` (URL path
/// to bytes), counting requests; one connection at a time, each closed after its
/// answer.
fn range_server(files: Vec<(&'static str, Vec<u8>)>) -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    let requests = Arc::new(AtomicUsize::new(0));
    let counter = requests.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            counter.fetch_add(1, Ordering::SeqCst);
            let _ = answer(stream, &files);
        }
    });
    (base, requests)
}

fn answer(mut stream: TcpStream, files: &[(&str, Vec<u8>)]) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let path = line.split_whitespace().nth(1).unwrap_or("/").to_string();
    let mut range = None;
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header)? == 0 || header == "\r\n" {
            break;
        }
        if let Some((k, v)) = header.split_once(':') {
            if k.eq_ignore_ascii_case("range") {
                range = Some(v.trim().to_string());
            }
        }
    }
    let Some((_, bytes)) = files.iter().find(|(p, _)| *p == path) else {
        return stream.write_all(
            b"HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n",
        );
    };
    let len = bytes.len() as u64;
    let (start, end) = range
        .as_deref()
        .and_then(|r| r.strip_prefix("bytes="))
        .and_then(|r| r.split_once('-'))
        .map(|(a, b)| match (a.parse::<u64>(), b.parse::<u64>()) {
            (Ok(a), Ok(b)) => (a.min(len), (b + 1).min(len)),
            (Ok(a), Err(_)) => (a.min(len), len),
            (Err(_), Ok(n)) => (len.saturating_sub(n), len),
            _ => (0, len),
        })
        .unwrap_or((0, len));
    let head = format!(
        "HTTP/1.1 206 Partial Content\r\nConnection: close\r\nContent-Length: {}\r\nContent-Range: bytes {start}-{}/{len}\r\nETag: \"v1\"\r\n\r\n",
        end - start,
        end.max(1) - 1
    );
    stream.write_all(head.as_bytes())?;
    stream.write_all(&bytes[start as usize..end as usize])
}

#[test]
fn report_reads_a_url_as_it_reads_a_path() {
    let dir = tempfile::tempdir().expect("temp dir");
    let holo = archive(&[1.0, 2.0, 3.0]);
    let stream = std::fs::read(corpus("stream/valid/basic.hrrys")).expect("stream");
    let invalid = std::fs::read(corpus("invalid/HF-IDX-010.hrry")).expect("invalid");
    let (base, requests) = range_server(vec![
        ("/model.holo", holo.clone()),
        ("/basic.hrrys", stream.clone()),
        ("/bad.hrry", invalid.clone()),
    ]);
    for (name, bytes) in [
        ("model.holo", holo),
        ("basic.hrrys", stream),
        ("bad.hrry", invalid),
    ] {
        let local = dir.path().join(name);
        std::fs::write(&local, bytes).expect("write");
        let local = local.to_str().expect("utf-8");
        let url = format!("{base}/{name}");
        let from_disk = report(local, dir.path()).replace(local, "INPUT");
        let from_url = report(&url, dir.path()).replace(&url, "INPUT");
        assert_eq!(from_disk, from_url, "{name}");
        assert!(from_url.contains("id=\"bytemap\""));
    }
    assert!(requests.load(Ordering::SeqCst) >= 3);
}
