//! `hrry serve`, `hrry fetch` and `hrry put` as commands: the address printed on
//! start, fetches equal to `hrry export`, a push served back, a name in two files
//! refused, and a graceful stop on SIGTERM.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn hrry() -> Command {
    Command::new(env!("CARGO_BIN_EXE_hrry"))
}

fn corpus(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("corpus/valid")
        .join(name)
}

fn run(cmd: &mut Command) -> std::process::Output {
    let out = cmd.output().expect("hrry runs");
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

#[test]
fn serve_fetch_put_and_stop_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = hrry()
        .args(["serve", "--listen", "127.0.0.1:0"])
        .arg(corpus("layout-csr.hrry"))
        .arg(corpus("composite_partition.hrry"))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(server.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let addr = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("first line {line:?}"))
        .to_string();
    assert!(
        addr.starts_with("127.0.0.1:") && !addr.ends_with(":0"),
        "{addr}"
    );

    for (file, key) in [
        ("layout-csr.hrry", "t"),
        ("composite_partition.hrry", "head"),
    ] {
        let fetched = dir.path().join(format!("{key}.npy"));
        let exported = dir.path().join(format!("{key}-export.npy"));
        run(hrry().args(["fetch", &addr, key, "-o"]).arg(&fetched));
        run(hrry()
            .arg("export")
            .arg(corpus(file))
            .arg(key)
            .arg("-o")
            .arg(&exported));
        assert_eq!(
            std::fs::read(&fetched).unwrap(),
            std::fs::read(&exported).unwrap()
        );
    }
    // As stored: the CSR tensor in a HRRYFILE, which validates.
    let stored = dir.path().join("t.hrry");
    run(hrry().args(["fetch", &addr, "t", "-o"]).arg(&stored));
    run(hrry().arg("validate").arg(&stored));
    // A push, served back under its new key; the message names the tensor once
    // and the key it is stored under.
    let pushed = run(hrry()
        .args(["put", &addr])
        .arg(corpus("layout-csr.hrry"))
        .args(["t", "--as", "copy"]));
    let said = String::from_utf8_lossy(&pushed.stderr);
    assert!(
        said.contains("t stored on") && said.contains("as \"copy\""),
        "{said}"
    );
    // Fetching to a name whose format cannot be told is refused, as convert
    // refuses one, and writes nothing.
    let text = dir.path().join("t.txt");
    let out = hrry()
        .args(["fetch", &addr, "t", "-o"])
        .arg(&text)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains(".npy or .hrry"));
    assert!(!text.exists());
    // The fetch summary counts in words, without "(s)".
    let out = hrry()
        .args(["fetch", &addr, "t", "-o"])
        .arg(dir.path().join("t2.hrry"))
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("(1 tensor, ") && !said.contains("(s)"),
        "{said}"
    );
    let copy = dir.path().join("copy.npy");
    run(hrry().args(["fetch", &addr, "copy", "-o"]).arg(&copy));
    assert_eq!(
        std::fs::read(&copy).unwrap(),
        std::fs::read(dir.path().join("t.npy")).unwrap()
    );
    // An unknown key fails with the server's ERROR.
    let out = hrry()
        .args(["fetch", &addr, "nope", "-o"])
        .arg(dir.path().join("x.npy"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("UNKNOWN_TENSOR"));

    let status = Command::new("kill")
        .args(["-TERM", &server.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let status = server.wait().unwrap();
    assert!(status.success(), "graceful stop: {status:?}");
}

#[test]
fn a_name_in_two_files_refuses_to_start() {
    let out = hrry()
        .arg("serve")
        .arg(corpus("layout-csr.hrry"))
        .arg(corpus("layout-coo.hrry"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("layout-csr.hrry") && err.contains("layout-coo.hrry"),
        "{err}"
    );
}

// --- bounds: one inbound budget, a handshake deadline -----------------------------

/// A running `hrry serve`, killed (by its own process id) when dropped.
struct Served {
    child: std::process::Child,
    addr: String,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `hrry serve` on the CSR corpus file with `extra` options.
fn serve(extra: &[&str]) -> Served {
    let mut child = hrry()
        .args(["serve", "--listen", "127.0.0.1:0"])
        .args(extra)
        .arg(corpus("layout-csr.hrry"))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let addr = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap()
        .to_string();
    Served { child, addr }
}

/// Peak resident memory (VmHWM) of process `pid`, in MiB.
fn peak_mib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kib: u64 = status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        .unwrap();
    kib / 1024
}

/// A message header: type, stream, payload length.
fn header(message_type: u32, stream_id: u32, payload_length: u32) -> Vec<u8> {
    hrry::schema::to_bytes(&hrry::schema::transport::MessageHeader {
        message_type,
        stream_id,
        payload_length,
    })
}

/// A CLIENT_HELLO accepting messages of up to `max` bytes.
fn hello(max: u32) -> Vec<u8> {
    use hrry::schema::transport::{CapabilityFlags, Hello, LayoutList, ShortBytes};
    let hello = Hello {
        protocol_version: 1,
        max_message_size: max,
        capability_flags: CapabilityFlags::new(),
        supported_layouts: LayoutList::default(),
        supported_devices: ShortBytes { bytes: vec![0] },
        supported_memory_classes: None,
    };
    hrry::stream::message::Frame::new(1, &hrry::stream::message::Payload::ClientHello(hello))
        .unwrap()
        .to_bytes()
}

/// Sends `head` then `len` bytes of payload in 1 MiB writes, stopping at the first
/// failed write (the server closed the connection), and reads what comes back.
fn flood(addr: &str, head: &[u8], len: usize) {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(std::time::Duration::from_secs(60)))
        .unwrap();
    let chunk = vec![0x5A; 1 << 20];
    let mut sent = 0;
    let mut ok = s.write_all(head).is_ok();
    while ok && sent < len {
        let n = chunk.len().min(len - sent);
        ok = s.write_all(&chunk[..n]).is_ok();
        sent += n;
    }
    let _ = s.shutdown(std::net::Shutdown::Write);
    let mut sink = Vec::new();
    let _ = s.read_to_end(&mut sink);
}

#[test]
fn eight_floods_before_the_handshake_leave_the_server_small() {
    let served = serve(&[]);
    let start = peak_mib(served.child.id());
    // Each client claims a 60 MiB CLIENT_HELLO, or a 60 MiB PING before any
    // HELLO, and sends it: both are refused from their header, unread.
    let threads: Vec<_> = (0..8u32)
        .map(|i| {
            let addr = served.addr.clone();
            std::thread::spawn(move || {
                let ty = if i % 2 == 0 { 0x01 } else { 0x0A };
                flood(&addr, &header(ty, 1, 60 << 20), 60 << 20);
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let peak = peak_mib(served.child.id());
    eprintln!("hrry serve: 8 x 60 MiB before the handshake: VmHWM {start} MiB -> {peak} MiB");
    // Nothing of the floods is held: the server stays at its fixed allowance.
    assert!(peak < 64, "peak {peak} MiB");
    // And it still serves.
    let dir = tempfile::tempdir().unwrap();
    run(hrry()
        .args(["fetch", &served.addr, "t", "-o"])
        .arg(dir.path().join("t.npy")));
}

#[test]
fn eight_maximal_messages_after_the_handshake_share_one_budget() {
    // A 96 MiB budget: messages of up to 32 MiB (a third), one in flight at a
    // time.
    let budget_mib = 96;
    let served = serve(&["--inbound-memory", &(budget_mib << 20).to_string()]);
    let start = peak_mib(served.child.id());
    let threads: Vec<_> = (0..8)
        .map(|_| {
            let addr = served.addr.clone();
            std::thread::spawn(move || {
                let len = 32usize << 20;
                let mut head = hello(64 << 20);
                head.extend(header(0x0A, 3, len as u32));
                flood(&addr, &head, len);
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let peak = peak_mib(served.child.id());
    eprintln!(
        "hrry serve --inbound-memory {budget_mib}MiB: 8 x 32 MiB PINGs: VmHWM {start} MiB -> {peak} MiB"
    );
    // The budget plus a fixed allowance for the program and its buffers; eight
    // messages at once would take 3 x 256 MiB.
    assert!(peak < budget_mib + 64, "peak {peak} MiB");
    // A message over a third of the budget is refused (MESSAGE_TOO_LARGE), unread.
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(&served.addr).unwrap();
    s.write_all(&hello(1 << 20)).unwrap();
    s.write_all(&header(0x0A, 3, (32 << 20) + 1)).unwrap();
    s.shutdown(std::net::Shutdown::Write).unwrap();
    s.set_read_timeout(Some(std::time::Duration::from_secs(20)))
        .unwrap();
    let mut got = Vec::new();
    let _ = s.read_to_end(&mut got);
    let text = String::from_utf8_lossy(&got);
    assert!(
        text.contains("exceeds this server's max_message_size"),
        "{text}"
    );
}

#[test]
fn silent_sockets_lose_their_slots_and_a_client_without_one_says_so() {
    let dir = tempfile::tempdir().unwrap();
    // Two slots, both taken by sockets that never send a HELLO: they are closed
    // after the 2 s handshake deadline, and a waiting fetch is served then (its
    // own timeout, 30 s, is far from the 120 s idle timeout they would otherwise
    // hold their slots for).
    let served = serve(&["--max-connections", "2", "--handshake-timeout", "2"]);
    let silent: Vec<_> = (0..2)
        .map(|_| std::net::TcpStream::connect(&served.addr).unwrap())
        .collect();
    std::thread::sleep(std::time::Duration::from_millis(200));
    let started = std::time::Instant::now();
    run(hrry()
        .args(["fetch", &served.addr, "t", "--timeout", "30", "-o"])
        .arg(dir.path().join("t.npy")));
    eprintln!(
        "fetch with both slots silent (2 s handshake deadline): served after {:.1?}",
        started.elapsed()
    );
    for mut s in silent {
        use std::io::Read;
        s.set_read_timeout(Some(std::time::Duration::from_secs(20)))
            .unwrap();
        assert!(matches!(s.read(&mut [0u8; 1]), Ok(0) | Err(_)));
    }
    drop(served);
    // With a long handshake deadline the slot stays taken: the client gives up
    // after its timeout, saying so in words, not with an errno.
    let served = serve(&["--max-connections", "1", "--handshake-timeout", "60"]);
    let _silent = std::net::TcpStream::connect(&served.addr).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(200));
    let out = hrry()
        .args(["fetch", &served.addr, "t", "--timeout", "1", "-o"])
        .arg(dir.path().join("u.npy"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("timed out after 1 s waiting for the server's SERVER_HELLO")
            && err.contains("at capacity"),
        "{err}"
    );
    assert!(!err.contains("os error"), "{err}");
}
