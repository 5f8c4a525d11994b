//! The tensor server over loopback: every corpus tensor fetched natively and
//! transcoded, the stored layout for a client whose HELLO lists only row-major,
//! pushes, every ERROR code the server sends provoked, hostile clients, and a load
//! and fault test. Servers run in-process on 127.0.0.1:0.

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use hrry::export::{composite_members, export_npy, ExportOptions};
use hrry::file::{HrryFile, HrryWriter, WriterOptions};
use hrry::model::{build, packed_size, ElementType};
use hrry::schema::transport::{
    error_code, CapabilityFlags, Hello, LayoutEntry, LayoutList, MessageHeader, RequestFlags,
    ShortBytes, TensorPut, TensorRequest,
};
use hrry::schema::{to_bytes, LenBytes, LAYOUT_COMPOSITE, LAYOUT_ROW_MAJOR};
use hrry::serve::client::{Client, ClientError, ClientOptions, FetchOptions, Received};
use hrry::serve::session::{Output, Reply};
use hrry::serve::{Catalog, ServeOptions, Server, ServerHandle, Session, ERROR_REFUSED};
use hrry::stream::message::{read_frame, Frame, Payload};

fn options() -> ServeOptions {
    ServeOptions {
        worker_threads: 2,
        ..ServeOptions::default()
    }
}

fn start(paths: &[PathBuf], options: ServeOptions) -> ServerHandle {
    let catalog = Catalog::open(paths, &options).expect("catalog");
    Server::spawn(Arc::new(catalog), "127.0.0.1:0".parse().unwrap(), options).expect("server")
}

fn corpus(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("corpus/valid")
        .join(name)
}

fn row_major() -> FetchOptions {
    FetchOptions {
        layouts: vec![LAYOUT_ROW_MAJOR],
        allow_transcode: true,
        ..FetchOptions::default()
    }
}

/// The received tensors as an in-memory HRRYFILE, the first named `key`.
fn as_file(key: &str, tensors: &[Received]) -> Vec<u8> {
    let mut w = HrryWriter::new(Vec::new(), WriterOptions::default()).unwrap();
    for (i, t) in tensors.iter().enumerate() {
        let name = if i == 0 {
            key.to_string()
        } else {
            format!("{key}.{}", i - 1)
        };
        w.begin_tensor(&name, &t.descriptor).unwrap();
        w.write_data(&t.data).unwrap();
        w.end_tensor().unwrap();
    }
    w.finish().unwrap()
}

#[test]
fn every_corpus_tensor_arrives_as_stored_and_as_exported() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/valid");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "hrry"))
        .collect();
    paths.sort();
    let (mut native, mut transcoded) = (0, 0);
    for path in &paths {
        let Ok(file) = HrryFile::open(path) else {
            continue;
        };
        let server = start(std::slice::from_ref(path), options());
        let mut client = Client::connect(server.local_addr()).unwrap();
        for entry in file.entries() {
            let name = entry.name();
            let what = format!("{}: {name}", path.display());
            let tensor = file.tensor_at(entry).unwrap();
            let mut expected = vec![(
                hrry::serve::standalone(tensor.descriptor),
                tensor.buffers.concat(),
            )];
            if tensor.descriptor.layout_tag == LAYOUT_COMPOSITE {
                // The head binds the next tensors in file order, nested members too.
                let mut order: Vec<_> = file.entries().collect();
                order.sort_by_key(|e| e.index_entry().descriptor_offset);
                let at = order.iter().position(|e| e.name() == name).unwrap();
                let mut pending = composite_members(&file, &tensor).unwrap().len();
                for e in &order[at + 1..] {
                    if pending == 0 {
                        break;
                    }
                    let m = file.tensor_at(*e).unwrap();
                    pending -= 1;
                    if m.descriptor.layout_tag == LAYOUT_COMPOSITE {
                        pending += composite_members(&file, &m).unwrap().len();
                    }
                    expected.push((m.descriptor.clone(), m.buffers.concat()));
                }
            }
            let got = client.fetch(name, &FetchOptions::default()).expect(&what);
            assert_eq!(got.len(), expected.len(), "{what}: tensor count");
            for (g, (d, data)) in got.iter().zip(&expected) {
                let mut d = d.clone();
                hrry::serve::for_wire(&mut d, 64);
                assert_eq!(g.descriptor, d, "{what}: descriptor");
                assert!(g.data == *data, "{what}: data");
                native += 1;
            }
            // Row-major: the same array `hrry export` writes.
            let Ok(reference) = export_npy(&file, name, Vec::new(), &ExportOptions::default())
            else {
                continue;
            };
            let got = client.fetch(name, &row_major()).expect(&what);
            let bytes = as_file(name, &got);
            let received = HrryFile::from_bytes(&bytes).expect(&what);
            let npy =
                export_npy(&received, name, Vec::new(), &ExportOptions::default()).expect(&what);
            assert!(
                npy == reference,
                "{what}: row-major differs from hrry export"
            );
            if got[0].descriptor.layout_tag == LAYOUT_ROW_MAJOR
                && tensor.descriptor.layout_tag != LAYOUT_ROW_MAJOR
            {
                transcoded += 1;
            }
        }
    }
    eprintln!("{native} tensors compared as stored, {transcoded} transcoded to row-major");
    assert!(native > 50 && transcoded > 10, "{native} / {transcoded}");
}

fn dense_file(dir: &Path, name: &str, tensors: &[(&str, &[u64])]) -> PathBuf {
    let path = dir.join(name);
    let mut w = HrryWriter::create(&path, WriterOptions::default()).unwrap();
    for (i, (key, shape)) in tensors.iter().enumerate() {
        let d = build::dense(ElementType::Float32, shape).unwrap();
        w.begin_tensor(key, &d).unwrap();
        w.write_data(&pattern(i, d.buffers[0].byte_size as usize))
            .unwrap();
        w.end_tensor().unwrap();
    }
    w.finish_file().unwrap();
    path
}

fn pattern(seed: usize, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (i.wrapping_mul(31).wrapping_add(seed * 7) % 251) as u8)
        .collect()
}

#[test]
fn a_pushed_tensor_is_served_and_pushes_are_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let model = dense_file(dir.path(), "m.hrry", &[("w", &[4, 4])]);
    let server = start(
        &[model],
        ServeOptions {
            store_limit: 4096,
            ..options()
        },
    );
    let mut client = Client::connect(server.local_addr()).unwrap();
    let d = build::dense(ElementType::Float32, &[16, 8]).unwrap();
    let data = pattern(3, 512);
    client.put("pushed", &d, &[&data]).unwrap();
    let got = client.fetch("pushed", &FetchOptions::default()).unwrap();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].descriptor, d);
    assert_eq!(got[0].data, data);
    // Replacing frees the old bytes; a push past the cap is refused.
    client.put("pushed", &d, &[&data]).unwrap();
    let big = build::dense(ElementType::Float32, &[1024, 2]).unwrap();
    assert_refused(client.put("big", &big, &[&pattern(1, 8192)]));
    // A file's key cannot be replaced.
    assert_refused(client.put("w", &d, &[&data]));
    // The connection lives on.
    client.ping(b"still here").unwrap();
    assert_eq!(
        server_store_used(&client, &mut Client::connect(server.local_addr()).unwrap()),
        512
    );
}

/// The call failed with the server's implementation-defined REFUSED.
fn assert_refused(r: Result<(), ClientError>) {
    match r {
        Err(ClientError::Server { code, .. }) if code == ERROR_REFUSED => {}
        other => panic!("expected ERROR 0xF0, got {other:?}"),
    }
}

/// What the store holds, seen by fetching the one pushed tensor from another
/// connection.
fn server_store_used(_: &Client, other: &mut Client) -> usize {
    other
        .fetch("pushed", &FetchOptions::default())
        .unwrap()
        .iter()
        .map(|t| t.data.len())
        .sum()
}

/// A raw connection: bytes as written, messages as read.
struct Raw {
    socket: TcpStream,
}

impl Raw {
    fn connect(addr: SocketAddr) -> Raw {
        let socket = TcpStream::connect(addr).unwrap();
        socket
            .set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        Raw { socket }
    }

    fn send(&mut self, stream: u32, payload: &Payload) -> Vec<u8> {
        let bytes = Frame::new(stream, payload).unwrap().to_bytes();
        self.socket.write_all(&bytes).unwrap();
        bytes
    }

    fn recv(&mut self) -> Option<Frame> {
        read_frame(&mut self.socket, 0, u32::MAX).ok().flatten()
    }

    fn hello(&mut self) {
        self.send(1, &Payload::ClientHello(client_hello(1)));
        let f = self.recv().expect("SERVER_HELLO");
        assert!(matches!(f.decode(0).unwrap().0, Payload::ServerHello(_)));
    }

    /// True once the server closed the connection.
    fn closed(&mut self) -> bool {
        let mut b = [0u8; 1];
        matches!(self.socket.read(&mut b), Ok(0) | Err(_))
    }
}

fn client_hello(version: u32) -> Hello {
    Hello {
        protocol_version: version,
        max_message_size: 1 << 20,
        capability_flags: CapabilityFlags::new(),
        supported_layouts: LayoutList::default(),
        supported_devices: ShortBytes { bytes: vec![0] },
        supported_memory_classes: None,
    }
}

/// A layout list of `layouts`, without extension metadata.
fn layout_list(layouts: &[u8]) -> LayoutList {
    LayoutList {
        entries: layouts
            .iter()
            .map(|&layout_tag| LayoutEntry {
                layout_tag,
                ext_metadata: None,
            })
            .collect(),
    }
}

fn request(key: &str, layouts: &[u8], flags: RequestFlags) -> Payload {
    Payload::TensorRequest(TensorRequest {
        tensor_key: LenBytes {
            bytes: key.as_bytes().to_vec(),
        },
        preferred_layouts: layout_list(layouts),
        preferred_device: 0,
        min_alignment: 64,
        request_flags: flags,
    })
}

/// The ERROR code of a frame (panics when it is not an ERROR).
fn code(frame: Option<Frame>) -> u32 {
    match frame.expect("a message").decode(0).unwrap().0 {
        Payload::Error(e) => e.error_code,
        other => panic!("expected ERROR, got {other:?}"),
    }
}

fn server_error(r: Result<Vec<Received>, ClientError>) -> u32 {
    match r {
        Err(ClientError::Server { code, .. }) => code,
        Err(e) => panic!("expected a server ERROR, got {e}"),
        Ok(_) => panic!("expected a server ERROR, got a tensor"),
    }
}

#[test]
fn each_error_code_is_answered_and_the_connection_lives_on() {
    let server = start(&[corpus("layout-csr.hrry")], options());
    let addr = server.local_addr();

    // PROTOCOL_VERSION_MISMATCH: ERROR, then the connection closes.
    let mut raw = Raw::connect(addr);
    raw.send(1, &Payload::ClientHello(client_hello(0)));
    assert_eq!(code(raw.recv()), error_code::PROTOCOL_VERSION_MISMATCH);
    assert!(raw.closed());

    let mut client = Client::connect(addr).unwrap();
    // UNKNOWN_TENSOR.
    assert_eq!(
        server_error(client.fetch("missing", &FetchOptions::default())),
        error_code::UNKNOWN_TENSOR
    );
    // DEVICE_UNAVAILABLE: this server has the CPU only.
    let cuda = FetchOptions {
        device: 1,
        ..FetchOptions::default()
    };
    assert_eq!(
        server_error(client.fetch("t", &cuda)),
        error_code::DEVICE_UNAVAILABLE
    );
    client.ping(b"alive").unwrap();

    drop(server);

    // LAYOUT_UNAVAILABLE: a file's tensor whose stored layout (an extension layout)
    // is not among the layouts the SERVER_HELLO advertised.
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/invalid/TD-LAY-003.hrry");
    let file = HrryFile::open(&path).unwrap();
    let key = file.entries().next().unwrap().name().to_string();
    let server = start(&[path], options());
    let mut client = Client::connect(server.local_addr()).unwrap();
    assert_eq!(
        server_error(client.fetch(&key, &FetchOptions::default())),
        error_code::LAYOUT_UNAVAILABLE
    );
    client.ping(b"alive").unwrap();
}

/// The client that lists only row-major in its CLIENT_HELLO.
fn row_major_only() -> ClientOptions {
    ClientOptions {
        supported_layouts: vec![LAYOUT_ROW_MAJOR],
        ..ClientOptions::default()
    }
}

#[test]
fn a_client_listing_only_row_major_gets_the_stored_layout_when_no_preference_is_met() {
    // Strided, column-major, tiled, sparse, block-paged and composites.
    let files = [
        ("layout-strided-reversed.hrry", true),
        ("layout-column-major-int4.hrry", true),
        ("layout-tiled.hrry", true),
        ("layout-csr.hrry", true),
        ("layout-csc.hrry", true),
        ("layout-coo.hrry", true),
        ("layout-partition-2x2.hrry", true),
        ("composite_nested_group.hrry", false),
        ("layout-block-paged.hrry", false),
    ];
    let tight = ServeOptions {
        transcode_limit: 1,
        ..options()
    };
    let mut layouts = std::collections::BTreeSet::new();
    for (name, transcodable) in files {
        let path = corpus(name);
        let file = HrryFile::open(&path).unwrap();
        let server = start(std::slice::from_ref(&path), options());
        let over_limit = start(std::slice::from_ref(&path), tight);
        let mut client = Client::connect_with(server.local_addr(), row_major_only()).unwrap();
        let mut limited = Client::connect_with(over_limit.local_addr(), row_major_only()).unwrap();
        let no_transcode = FetchOptions {
            allow_transcode: false,
            ..row_major()
        };
        for entry in file.entries() {
            let key = entry.name();
            let stored = file.tensor_at(entry).unwrap().descriptor.layout_tag;
            if stored == LAYOUT_ROW_MAJOR {
                continue;
            }
            layouts.insert(stored);
            let what = format!("{name}: {key}");
            // No preference; row-major without ALLOW_TRANSCODE; row-major over the
            // transcoding limit: the stored layout, its data as stored.
            for (over_limit, fetch) in [
                (false, FetchOptions::default()),
                (false, no_transcode.clone()),
                (true, row_major()),
            ] {
                let c = if over_limit {
                    &mut limited
                } else {
                    &mut client
                };
                let got = c.fetch(key, &fetch).expect(&what);
                assert_eq!(got[0].descriptor.layout_tag, stored, "{what}");
                let t = file.tensor_at(entry).unwrap();
                assert!(got[0].data == t.buffers.concat(), "{what}: data");
            }
            // Asked for row-major with ALLOW_TRANSCODE: transcoded where it can be.
            let got = client.fetch(key, &row_major()).expect(&what);
            let expected = if transcodable {
                LAYOUT_ROW_MAJOR
            } else {
                stored
            };
            assert_eq!(got[0].descriptor.layout_tag, expected, "{what}");
        }
    }
    // Every stored layout of the list came natively.
    assert_eq!(
        layouts.into_iter().collect::<Vec<_>>(),
        [0x02, 0x03, 0x04, 0x06, 0x07, 0x08, 0x0A, 0x0B],
        "stored layouts exercised"
    );
}

/// The first ERROR of a session's reply: its code and message.
fn reply_error(session: &mut Session, reply: &Reply) -> Option<(u32, String)> {
    let max = session.client_max_message_size();
    reply.outputs(max).find_map(|o| match o {
        Output::Frame(f) => match f.decode(0).unwrap().0 {
            Payload::Error(e) => Some((
                e.error_code,
                String::from_utf8_lossy(&e.message.bytes).into(),
            )),
            _ => None,
        },
        Output::Data { .. } => None,
    })
}

/// The layout tag of the first TENSOR_DESCRIPTOR of a reply.
fn reply_layout(session: &Session, reply: &Reply) -> Option<u8> {
    reply
        .outputs(session.client_max_message_size())
        .find_map(|o| match o {
            Output::Frame(f) => match f.decode(0).unwrap().0 {
                Payload::TensorDescriptor(d) => Some(
                    hrry::schema::read_from::<hrry::schema::TensorDescriptor>(&d.descriptor)
                        .unwrap()
                        .0
                        .layout_tag,
                ),
                _ => None,
            },
            Output::Data { .. } => None,
        })
}

#[test]
fn transcodings_in_flight_share_one_budget_across_connections() {
    // A budget of exactly one transcoded CSR tensor: while one connection's
    // transcoded answer is unsent, another's must wait for it.
    let path = corpus("layout-csr.hrry");
    let file = HrryFile::open(&path).unwrap();
    let t = file.tensor("t").unwrap().unwrap();
    let count: u64 = t.descriptor.shape.iter().product();
    let size = packed_size(t.descriptor.element_bits().unwrap(), count).unwrap();
    let options = ServeOptions {
        transcode_memory: size,
        ..options()
    };
    let catalog = Arc::new(Catalog::open(&[path], &options).unwrap());
    let session = |layouts: &[u8]| {
        let mut s = Session::new(Arc::clone(&catalog), options);
        let mut hello = client_hello(1);
        hello.supported_layouts = layout_list(layouts);
        let reply = s.receive(&Frame::new(1, &Payload::ClientHello(hello)).unwrap());
        assert!(!reply.close);
        s
    };
    let ask = |s: &mut Session, stream: u32| {
        let flags = RequestFlags::new().with_allow_transcode(true);
        s.receive(&Frame::new(stream, &request("t", &[LAYOUT_ROW_MAJOR], flags)).unwrap())
    };
    let mut first = session(&[]);
    let held = ask(&mut first, 3);
    assert_eq!(reply_layout(&first, &held), Some(LAYOUT_ROW_MAJOR));
    assert_eq!(catalog.transcoding().in_use(), size);
    // A client that consumes row-major only gets the stored CSR (interchange.md
    // § On-the-Fly Transcoding: fall through to the native layout).
    let mut picky = session(&[LAYOUT_ROW_MAJOR]);
    let native = ask(&mut picky, 3);
    assert_eq!(reply_error(&mut picky, &native), None);
    assert_eq!(reply_layout(&picky, &native), Some(0x07));
    // So does any other client.
    let mut other = session(&[]);
    let native = ask(&mut other, 3);
    assert_eq!(reply_layout(&other, &native), Some(0x07));
    assert_eq!(catalog.transcoding().in_use(), size);
    // Once the first answer is gone (sent), the budget is free again.
    drop(held);
    assert_eq!(catalog.transcoding().in_use(), 0);
    let again = ask(&mut picky, 5);
    assert_eq!(reply_layout(&picky, &again), Some(LAYOUT_ROW_MAJOR));
    drop(again);
    assert_eq!(catalog.transcoding().in_use(), 0);
}

#[test]
fn malformed_and_oversize_messages_close_only_their_stream() {
    let server = start(
        &[corpus("layout-csr.hrry")],
        ServeOptions {
            max_message_size: 8192,
            ..options()
        },
    );
    let mut raw = Raw::connect(server.local_addr());
    raw.hello();
    // INVALID_MESSAGE: TENSOR_DATA_END with nothing begun on the stream.
    raw.send(3, &Payload::TensorDataEnd);
    assert_eq!(code(raw.recv()), error_code::INVALID_MESSAGE);
    // INVALID_MESSAGE: a payload that does not decode.
    let mut bad = to_bytes(&MessageHeader {
        message_type: 0x03,
        stream_id: 5,
        payload_length: 3,
    });
    bad.extend_from_slice(&[9, 9, 9]);
    raw.socket.write_all(&bad).unwrap();
    assert_eq!(code(raw.recv()), error_code::INVALID_MESSAGE);
    // INVALID_MESSAGE: an undefined message type.
    let mut bad = to_bytes(&MessageHeader {
        message_type: 0x77,
        stream_id: 7,
        payload_length: 0,
    });
    raw.socket.write_all(&bad).unwrap();
    assert_eq!(code(raw.recv()), error_code::INVALID_MESSAGE);
    // INVALID_MESSAGE: a message only servers send.
    raw.send(9, &Payload::TensorPutAck);
    assert_eq!(code(raw.recv()), error_code::INVALID_MESSAGE);
    // MESSAGE_TOO_LARGE: the payload is skipped, the connection goes on.
    bad = to_bytes(&MessageHeader {
        message_type: 0x0A,
        stream_id: 11,
        payload_length: 20_000,
    });
    bad.extend_from_slice(&vec![0xAB; 20_000]);
    raw.socket.write_all(&bad).unwrap();
    assert_eq!(code(raw.recv()), error_code::MESSAGE_TOO_LARGE);
    // And the same connection still serves.
    raw.send(13, &Payload::Ping(b"after".to_vec()));
    let pong = raw.recv().unwrap().decode(0).unwrap().0;
    assert_eq!(pong, Payload::Pong(b"after".to_vec()));
    raw.send(15, &request("t", &[], RequestFlags::new()));
    assert!(matches!(
        raw.recv().unwrap().decode(0).unwrap().0,
        Payload::TensorDescriptor(_)
    ));
}

#[test]
fn a_captured_session_passes_the_conversation_rules() {
    let dir = tempfile::tempdir().unwrap();
    let model = dense_file(dir.path(), "m.hrry", &[("big", &[300, 100])]);
    let server = start(
        &[
            model,
            corpus("composite_partition.hrry"),
            corpus("layout-csr.hrry"),
        ],
        options(),
    );
    let mut raw = Raw::connect(server.local_addr());
    let mut capture = Vec::new();
    let exchange = |raw: &mut Raw, sent: Vec<u8>, replies: usize, capture: &mut Vec<u8>| {
        capture.extend_from_slice(&sent);
        for _ in 0..replies {
            capture.extend_from_slice(&raw.recv().expect("a reply").to_bytes());
        }
    };
    let mut small = client_hello(1);
    small.max_message_size = 4096; // Forces many data frames.
    let sent = raw.send(1, &Payload::ClientHello(small));
    exchange(&mut raw, sent, 1, &mut capture);
    // The composite: head, then two members (descriptor, data, end each).
    let sent = raw.send(1, &request("head", &[], RequestFlags::new()));
    exchange(&mut raw, sent, 2 + 3 + 3, &mut capture);
    // CSR transcoded: descriptor, one frame, end.
    let sent = raw.send(
        2,
        &request(
            "t",
            &[LAYOUT_ROW_MAJOR],
            RequestFlags::new().with_allow_transcode(true),
        ),
    );
    exchange(&mut raw, sent, 3, &mut capture);
    // 120000 bytes in frames of at most 4088.
    let sent = raw.send(3, &request("big", &[], RequestFlags::new()));
    exchange(
        &mut raw,
        sent,
        2 + 120_000usize.div_ceil(4088),
        &mut capture,
    );
    // A push, in two frames.
    let d = build::dense(ElementType::Float32, &[4]).unwrap();
    let mut sent = raw.send(
        4,
        &Payload::TensorPut(TensorPut {
            tensor_key: LenBytes {
                bytes: b"p".to_vec(),
            },
            descriptor: LenBytes {
                bytes: to_bytes(&d),
            },
            total_data_bytes: 16,
        }),
    );
    for (offset, part) in [(0u64, [1u8; 10].as_slice()), (10, [2u8; 6].as_slice())] {
        sent.extend(raw.send(
            4,
            &Payload::TensorData(hrry::schema::transport::TensorData {
                byte_offset_in_buffer: offset,
                data: part.to_vec(),
            }),
        ));
    }
    sent.extend(raw.send(4, &Payload::TensorDataEnd));
    exchange(&mut raw, sent, 1, &mut capture);
    let sent = raw.send(4, &Payload::Ping(vec![1, 2, 3]));
    exchange(&mut raw, sent, 1, &mut capture);
    let report =
        hrry::Format::Messages.validate_bytes(&capture, &hrry::validate::Options::default());
    assert!(
        report.violations.is_empty(),
        "{:?}",
        report
            .violations
            .iter()
            .map(|v| (v.rule.id, &v.message))
            .collect::<Vec<_>>()
    );
}

#[test]
fn hostile_clients_do_not_stop_the_server() {
    let server = start(
        &[corpus("layout-csr.hrry")],
        ServeOptions {
            io_timeout: Duration::from_millis(300),
            idle_timeout: Duration::from_secs(2),
            max_message_size: 8192,
            ..options()
        },
    );
    let addr = server.local_addr();
    // Garbage before any HELLO: ERROR (the first message must be CLIENT_HELLO or is
    // undefined) and the connection closes.
    let mut raw = Raw::connect(addr);
    raw.socket.write_all(&[0xFF; 64]).unwrap();
    let c = code(raw.recv());
    assert!(
        [error_code::INVALID_MESSAGE, error_code::MESSAGE_TOO_LARGE].contains(&c),
        "{c}"
    );
    assert!(raw.closed());
    // Wrong order: a request before the HELLO.
    let mut raw = Raw::connect(addr);
    raw.send(1, &request("t", &[], RequestFlags::new()));
    assert_eq!(code(raw.recv()), error_code::INVALID_MESSAGE);
    assert!(raw.closed());
    // An oversize length before the HELLO: MESSAGE_TOO_LARGE, then closed.
    let mut raw = Raw::connect(addr);
    raw.socket
        .write_all(&to_bytes(&MessageHeader {
            message_type: 1,
            stream_id: 1,
            payload_length: u32::MAX,
        }))
        .unwrap();
    assert_eq!(code(raw.recv()), error_code::MESSAGE_TOO_LARGE);
    assert!(raw.closed());
    // A slow sender: half a header, then nothing; cut off after io_timeout.
    let mut raw = Raw::connect(addr);
    raw.hello();
    raw.socket.write_all(&[0x03, 0, 0]).unwrap();
    let t = Instant::now();
    assert!(raw.closed());
    assert!(t.elapsed() < Duration::from_secs(10));
    // Half a payload, then stall.
    let mut raw = Raw::connect(addr);
    raw.hello();
    let whole = Frame::new(3, &request("t", &[], RequestFlags::new()))
        .unwrap()
        .to_bytes();
    raw.socket.write_all(&whole[..whole.len() - 2]).unwrap();
    assert!(raw.closed());
    // A half-closed socket still gets its answer.
    let mut raw = Raw::connect(addr);
    raw.hello();
    raw.send(3, &request("t", &[], RequestFlags::new()));
    raw.socket.shutdown(Shutdown::Write).unwrap();
    let mut replies = 0;
    while let Some(f) = raw.recv() {
        replies += 1;
        if f.header.message_type == 0x06 {
            break;
        }
    }
    assert!(replies >= 2);
    // Disconnect mid-frame and mid-response.
    for cut in [5usize, 14] {
        let mut raw = Raw::connect(addr);
        raw.hello();
        raw.socket.write_all(&whole[..cut]).unwrap();
        drop(raw);
    }
    let mut raw = Raw::connect(addr);
    raw.hello();
    raw.send(3, &request("t", &[], RequestFlags::new()));
    drop(raw);
    // The server still answers.
    let mut client = Client::connect(addr).unwrap();
    assert_eq!(
        client.fetch("t", &FetchOptions::default()).unwrap().len(),
        1
    );
    let stats = server.stats();
    assert!(stats.timeouts.load(std::sync::atomic::Ordering::Relaxed) >= 2);
}

#[test]
fn connections_over_the_cap_wait_for_a_slot() {
    let server = start(
        &[corpus("layout-csr.hrry")],
        ServeOptions {
            max_connections: 1,
            ..options()
        },
    );
    let addr = server.local_addr();
    let mut first = Client::connect(addr).unwrap();
    let waiting = std::thread::spawn(move || {
        let mut c = Client::connect(addr).unwrap();
        c.fetch("t", &FetchOptions::default()).unwrap().len()
    });
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        !waiting.is_finished(),
        "the second client is served beside the first"
    );
    first.ping(b"x").unwrap();
    drop(first);
    assert_eq!(waiting.join().unwrap(), 1);
}

/// Resident memory of this process, in KiB (Linux).
fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

#[test]
fn load_and_faults_64_clients() {
    let dir = tempfile::tempdir().unwrap();
    let shapes: Vec<(String, Vec<u64>)> = (0..24)
        .map(|i| (format!("layer.{i}"), vec![16 + 8 * i as u64, 64]))
        .collect();
    let list: Vec<(&str, &[u64])> = shapes
        .iter()
        .map(|(n, s)| (n.as_str(), s.as_slice()))
        .collect();
    let model = dense_file(dir.path(), "model.hrry", &list);
    // A CSR tensor ("t") for the clients whose HELLO lists only row-major.
    let csr = corpus("layout-csr.hrry");
    let stored_csr: Arc<Vec<u8>> = Arc::new({
        let file = HrryFile::open(&csr).unwrap();
        file.tensor("t").unwrap().unwrap().buffers.concat()
    });
    let server = start(
        &[model.clone(), csr],
        ServeOptions {
            io_timeout: Duration::from_millis(500),
            idle_timeout: Duration::from_secs(3),
            max_message_size: 1 << 16,
            ..options()
        },
    );
    let addr = server.local_addr();
    let expected: Arc<Vec<(String, Vec<u8>)>> = Arc::new({
        let file = HrryFile::open(&model).unwrap();
        file.entries()
            .map(|e| {
                (
                    e.name().to_string(),
                    file.tensor_at(e).unwrap().buffers.concat(),
                )
            })
            .collect()
    });
    let rss_before = rss_kib();
    let started = Instant::now();
    let mut threads = Vec::new();
    for i in 0..64usize {
        let expected = Arc::clone(&expected);
        let stored_csr = Arc::clone(&stored_csr);
        threads.push(std::thread::spawn(move || -> (bool, u64) {
            match i % 4 {
                // Well-behaved: every tensor, natively.
                0 => {
                    let mut c = Client::connect(addr).unwrap();
                    let mut bytes = 0;
                    for (name, data) in expected.iter() {
                        let got = c.fetch(name, &FetchOptions::default()).unwrap();
                        assert!(got[0].data == *data, "{name}");
                        bytes += data.len() as u64;
                    }
                    (true, bytes)
                }
                // Well-behaved, its HELLO listing only row-major: the model, then the
                // CSR tensor as stored (no preference given).
                1 => {
                    let mut c = Client::connect_with(addr, row_major_only()).unwrap();
                    let mut bytes = 0;
                    for (name, data) in expected.iter() {
                        let got = c.fetch(name, &FetchOptions::default()).unwrap();
                        assert!(got[0].data == *data, "{name}");
                        bytes += data.len() as u64;
                    }
                    let got = c.fetch("t", &FetchOptions::default()).unwrap();
                    assert_eq!(got[0].descriptor.layout_tag, 0x07);
                    assert!(got[0].data == *stored_csr, "t");
                    bytes += stored_csr.len() as u64;
                    (true, bytes)
                }
                // Garbage, then oversize lengths.
                2 => {
                    let mut s = TcpStream::connect(addr).unwrap();
                    let _ = s.write_all(&pattern(i, 4096));
                    let mut s = TcpStream::connect(addr).unwrap();
                    let mut hello = Frame::new(1, &Payload::ClientHello(client_hello(1)))
                        .unwrap()
                        .to_bytes();
                    hello.extend(to_bytes(&MessageHeader {
                        message_type: 7,
                        stream_id: 3,
                        payload_length: u32::MAX,
                    }));
                    let _ = s.write_all(&hello);
                    let mut sink = Vec::new();
                    let _ = s.read_to_end(&mut sink);
                    (false, 0)
                }
                // Half a message then stall, or disconnect mid-frame.
                _ => {
                    let mut raw = Raw::connect(addr);
                    raw.hello();
                    let whole = Frame::new(3, &request("layer.0", &[], RequestFlags::new()))
                        .unwrap()
                        .to_bytes();
                    raw.socket.write_all(&whole[..whole.len() / 2]).unwrap();
                    if i % 8 == 3 {
                        let _ = raw.closed(); // Waits to be cut off.
                    }
                    (false, 0)
                }
            }
        }));
    }
    let mut good = 0;
    let mut bytes = 0;
    for t in threads {
        let (ok, b) = t.join().expect("a client thread");
        good += ok as u32;
        bytes += b;
    }
    let elapsed = started.elapsed();
    let rss_after = rss_kib();
    // The server still answers.
    let mut c = Client::connect(addr).unwrap();
    assert_eq!(
        c.fetch("layer.3", &FetchOptions::default()).unwrap()[0].data,
        expected[3].1
    );
    let stats = server.stats();
    use std::sync::atomic::Ordering::Relaxed;
    eprintln!(
        "load: 64 clients ({good} well-behaved fetched {bytes} bytes correctly) in {:.2?}; \
         {} connections, {} messages, {} ERRORs sent, {} timeouts; RSS {} -> {} KiB",
        elapsed,
        stats.connections.load(Relaxed),
        stats.messages.load(Relaxed),
        stats.errors_sent.load(Relaxed),
        stats.timeouts.load(Relaxed),
        rss_before,
        rss_after
    );
    assert_eq!(good, 32);
    assert!(
        rss_after.saturating_sub(rss_before) < 512 * 1024,
        "memory grew from {rss_before} to {rss_after} KiB"
    );
}

#[test]
fn before_the_handshake_only_a_small_client_hello_is_read() {
    let options = options();
    let catalog = Arc::new(Catalog::open(&[corpus("layout-csr.hrry")], &options).unwrap());
    let header = |message_type, payload_length| MessageHeader {
        message_type,
        stream_id: 1,
        payload_length,
    };
    // Another message type first: refused from its header, the connection closed.
    let mut s = Session::new(Arc::clone(&catalog), options);
    let reply = s.screen(&header(0x0A, 16)).expect("refused");
    assert!(reply.close && s.is_closed());
    let (code, text) = reply_error(&mut s, &reply).unwrap();
    assert_eq!(code, error_code::INVALID_MESSAGE);
    assert!(text.contains("expected CLIENT_HELLO"), "{text}");
    // A CLIENT_HELLO over the HELLO cap (64 KiB), far under max_message_size.
    let mut s = Session::new(Arc::clone(&catalog), options);
    assert_eq!(options.max_hello_size, 64 << 10);
    let reply = s.screen(&header(0x01, (64 << 10) + 1)).expect("refused");
    assert!(reply.close);
    assert_eq!(
        reply_error(&mut s, &reply).unwrap().0,
        error_code::MESSAGE_TOO_LARGE
    );
    // A small CLIENT_HELLO is read; after the handshake, any message within
    // max_message_size is.
    let mut s = Session::new(Arc::clone(&catalog), options);
    assert!(s.screen(&header(0x01, 64)).is_none());
    let hello = Frame::new(1, &Payload::ClientHello(client_hello(1))).unwrap();
    assert!(s.screen(&hello.header).is_none());
    let reply = s.receive(&hello);
    assert!(!reply.close && !s.awaits_hello());
    assert!(s.screen(&header(0x0A, 1 << 20)).is_none());
    assert!(s
        .screen(&header(0x0A, options.max_message_size + 1))
        .is_some());
}

#[test]
fn the_inbound_budget_bounds_the_message_size() {
    let o = ServeOptions {
        inbound_memory: 96 << 20,
        ..options()
    }
    .effective();
    assert_eq!(o.max_message_size, 32 << 20);
    let o = ServeOptions::default().effective();
    assert_eq!(o.max_message_size, 64 << 20);
    assert_eq!(o.inbound_memory, 256 << 20);
}
