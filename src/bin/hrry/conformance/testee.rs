//! The testees the harness talks to: a program speaking the protocol over its
//! standard input and output (restarted when it dies, hangs or answers out of
//! protocol), a one-shot validator run once per file, and hrry itself in process.

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::protocol::{self, Hello, Reply, FORMATS};
use super::reference;

/// Longest answer line read, in bytes: a longer one is out of protocol.
const MAX_LINE: u64 = 64 << 20;

/// Something that answers protocol requests.
pub trait Testee {
    /// Its `hello` answer.
    fn hello(&self) -> &Hello;
    /// Sends `request` (an object without `id`) numbered `id` and returns what came
    /// back.
    fn call(&mut self, id: u64, request: Value) -> Reply;
    /// Ends the session.
    fn finish(&mut self) {}
}

/// `request` with its `id`.
fn numbered(id: u64, mut request: Value) -> Value {
    request["id"] = json!(id);
    request
}

/// A running testee process.
struct Running {
    child: Child,
    /// Lines to write to the testee's standard input, by a thread of their own (a
    /// testee that stops reading blocks that thread, never the harness); `None`
    /// once the input is closed.
    input: Option<SyncSender<Vec<u8>>>,
    lines: Receiver<Result<String, String>>,
}

/// A testee program speaking the protocol, started once and restarted after a crash,
/// a timeout or an answer out of protocol.
pub struct ProcessTestee {
    argv: Vec<String>,
    timeout: Duration,
    log: Option<PathBuf>,
    running: Option<Running>,
    hello: Hello,
    /// How many times the program was started.
    pub starts: u64,
}

impl ProcessTestee {
    /// Starts `argv` and exchanges `hello`; the error says why that failed.
    pub fn start(
        argv: Vec<String>,
        timeout: Duration,
        log: Option<PathBuf>,
    ) -> Result<Self, String> {
        let placeholder = Hello::parse(json!({"protocol": protocol::PROTOCOL}))?;
        let mut t = ProcessTestee {
            argv,
            timeout,
            log,
            running: None,
            hello: placeholder,
            starts: 0,
        };
        let (running, hello) = t.spawn()?;
        t.running = Some(running);
        t.hello = hello;
        Ok(t)
    }

    /// Starts the program and exchanges `hello`.
    fn spawn(&mut self) -> Result<(Running, Hello), String> {
        let (program, args) = self.argv.split_first().ok_or("no testee command given")?;
        let mut cmd = Command::new(program);
        cmd.args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(match &self.log {
                Some(path) => Stdio::from(
                    File::options()
                        .create(true)
                        .append(true)
                        .open(path)
                        .map_err(|e| format!("cannot open the log {}: {e}", path.display()))?,
                ),
                None => Stdio::inherit(),
            });
        #[cfg(unix)]
        {
            // Its own process group, so that ending it ends what it started too.
            use std::os::unix::process::CommandExt;
            cmd.process_group(0);
        }
        let mut child = cmd
            .spawn()
            .map_err(|e| format!("cannot start {program}: {e}"))?;
        self.starts += 1;
        let input = Some(writer(child.stdin.take().expect("piped stdin")));
        let stdout = child.stdout.take().expect("piped stdout");
        // Bounded, so that a testee printing without end fills no memory: the
        // reader waits until the harness takes a line (or drops the receiver).
        let (send, lines) = mpsc::sync_channel(4);
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            loop {
                let mut line = Vec::new();
                let result = reader.by_ref().take(MAX_LINE).read_until(b'\n', &mut line);
                let item = match result {
                    Ok(0) => break,
                    Ok(_) if line.last() != Some(&b'\n') && line.len() as u64 == MAX_LINE => {
                        Err(format!("an answer line longer than {MAX_LINE} bytes"))
                    }
                    Ok(_) => Ok(String::from_utf8_lossy(&line).trim_end().to_string()),
                    Err(e) => Err(format!("cannot read the testee's output: {e}")),
                };
                let stop = item.is_err();
                if send.send(item).is_err() || stop {
                    break;
                }
            }
        });
        let mut running = Running {
            child,
            input,
            lines,
        };
        // `hello` has no id; its answer is read as is.
        let answer = exchange(&mut running, &protocol::hello_request(), self.timeout);
        let hello = match answer {
            Ok(line) => serde_json::from_str(&line)
                .map_err(|e| format!("the hello answer is not JSON ({e}): {line}"))
                .and_then(Hello::parse),
            Err(reply) => Err(format!("no answer to hello: {}", describe(&reply))),
        };
        match hello {
            Ok(h) => Ok((running, h)),
            Err(e) => {
                end(running);
                Err(e)
            }
        }
    }
}

/// A thread writing each line it is sent to `stdin`, until a write fails or the
/// sender is dropped (which closes `stdin`).
fn writer(mut stdin: ChildStdin) -> SyncSender<Vec<u8>> {
    let (send, lines) = mpsc::sync_channel::<Vec<u8>>(1);
    std::thread::spawn(move || {
        for line in lines {
            if stdin.write_all(&line).and_then(|()| stdin.flush()).is_err() {
                break;
            }
        }
    });
    send
}

/// Writes `request` as a line and waits for one line of answer.
fn exchange(running: &mut Running, request: &Value, timeout: Duration) -> Result<String, Reply> {
    let line = request.to_string() + "\n";
    let sent = match &running.input {
        Some(input) => input.try_send(line.into_bytes()),
        None => Err(TrySendError::Disconnected(Vec::new())),
    };
    match sent {
        Ok(()) => {}
        Err(TrySendError::Full(_)) => {
            let why = "the testee stopped reading its input";
            return Err(Reply::OutOfProtocol(why.into()));
        }
        Err(TrySendError::Disconnected(_)) => {
            let what = "its input closed";
            return Err(Reply::Crash(exit_detail(&mut running.child, what)));
        }
    }
    match running.lines.recv_timeout(timeout) {
        Ok(Ok(line)) => Ok(line),
        Ok(Err(e)) => Err(Reply::OutOfProtocol(e)),
        Err(RecvTimeoutError::Timeout) => Err(Reply::Timeout),
        Err(RecvTimeoutError::Disconnected) => Err(Reply::Crash(exit_detail(
            &mut running.child,
            "its output ended",
        ))),
    }
}

/// How the child ended, waiting a moment for it to do so.
fn exit_detail(child: &mut Child, what: &str) -> String {
    let deadline = Instant::now() + Duration::from_millis(500);
    while Instant::now() < deadline {
        if let Ok(Some(status)) = child.try_wait() {
            return format!("{what}: the testee exited ({status})");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    format!("{what}: the testee is still running")
}

/// Ends a testee and everything in its process group.
fn end(mut running: Running) {
    #[cfg(target_os = "linux")]
    if let Ok(pid) = i32::try_from(running.child.id()) {
        // SAFETY: kill(2) on the process group the child leads; no memory involved.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
    let _ = running.child.kill();
    let _ = running.child.wait();
}

fn describe(reply: &Reply) -> String {
    match reply {
        Reply::Crash(d) | Reply::OutOfProtocol(d) | Reply::Error(d) | Reply::Skipped(d) => {
            d.clone()
        }
        Reply::Timeout => "timed out".into(),
        Reply::Answer(_) => "answered".into(),
    }
}

impl Testee for ProcessTestee {
    fn hello(&self) -> &Hello {
        &self.hello
    }

    fn call(&mut self, id: u64, request: Value) -> Reply {
        let mut running = match self.running.take() {
            Some(r) => r,
            None => match self.spawn() {
                Ok((r, _)) => r,
                Err(e) => return Reply::Crash(format!("cannot restart the testee: {e}")),
            },
        };
        match exchange(&mut running, &numbered(id, request), self.timeout) {
            Ok(line) => {
                let reply = protocol::parse_answer(&line, id);
                if matches!(reply, Reply::OutOfProtocol(_)) {
                    end(running);
                } else {
                    self.running = Some(running);
                }
                reply
            }
            Err(reply) => {
                end(running);
                reply
            }
        }
    }

    fn finish(&mut self) {
        if let Some(mut running) = self.running.take() {
            let line = protocol::bye_request().to_string() + "\n";
            if let Some(input) = running.input.take() {
                // Then the input closes, for a testee that ends at its end.
                let _ = input.try_send(line.into_bytes());
            }
            let deadline = Instant::now() + Duration::from_secs(1);
            while Instant::now() < deadline {
                if let Ok(Some(_)) = running.child.try_wait() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            end(running);
        }
    }
}

/// A validator run once per file: `CMD ... {path} ...`, exit 0 accepts, 1 rejects,
/// anything else (a signal included) is a crash. Verdict tier only.
pub struct OneshotTestee {
    words: Vec<String>,
    timeout: Duration,
    log: Option<PathBuf>,
    hello: Hello,
}

impl OneshotTestee {
    /// A one-shot testee from a command template (words split on white space, each
    /// `{path}` replaced by the file's path; no shell is involved).
    pub fn new(template: &str, timeout: Duration, log: Option<PathBuf>) -> Result<Self, String> {
        let words: Vec<String> = template.split_whitespace().map(str::to_string).collect();
        if words.is_empty() {
            return Err("--oneshot needs a command".into());
        }
        if !words.iter().any(|w| w.contains("{path}")) {
            return Err("the --oneshot command must contain {path}".into());
        }
        let hello = Hello::parse(json!({
            "protocol": protocol::PROTOCOL,
            "name": words[0],
            "version": "",
            "ops": ["validate"],
            "formats": FORMATS,
            "rule_ids": false,
        }))?;
        Ok(OneshotTestee {
            words,
            timeout,
            log,
            hello,
        })
    }
}

impl Testee for OneshotTestee {
    fn hello(&self) -> &Hello {
        &self.hello
    }

    fn call(&mut self, id: u64, request: Value) -> Reply {
        let Some(path) = request["path"].as_str() else {
            return Reply::Skipped("a one-shot testee only validates".into());
        };
        let argv: Vec<String> = self
            .words
            .iter()
            .map(|w| w.replace("{path}", path))
            .collect();
        let stderr = match &self.log {
            Some(p) => File::options()
                .create(true)
                .append(true)
                .open(p)
                .map_or_else(|_| Stdio::null(), Stdio::from),
            None => Stdio::inherit(),
        };
        let child = Command::new(&argv[0])
            .args(&argv[1..])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn();
        let mut child = match child {
            Ok(c) => c,
            Err(e) => return Reply::Crash(format!("cannot start {}: {e}", argv[0])),
        };
        let deadline = Instant::now() + self.timeout;
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if Instant::now() >= deadline => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Reply::Timeout;
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(2)),
                Err(e) => return Reply::Crash(format!("cannot wait for the testee: {e}")),
            }
        };
        // Exit 3 is `hrry validate`'s "refused by the policy": a rejection.
        let valid = match status.code() {
            Some(0) => true,
            Some(1) | Some(3) => false,
            _ => return Reply::Crash(format!("the validator ended with {status}")),
        };
        let answer = json!({"id": id, "valid": valid, "rules": []});
        Reply::Answer(answer.as_object().expect("object").clone())
    }
}

/// hrry itself, answering in process (`--self`).
pub struct SelfTestee {
    hello: Hello,
}

impl SelfTestee {
    /// The in-process testee.
    pub fn new() -> Self {
        SelfTestee {
            hello: Hello::parse(reference::hello()).expect("hrry's own hello"),
        }
    }
}

impl Testee for SelfTestee {
    fn hello(&self) -> &Hello {
        &self.hello
    }

    fn call(&mut self, id: u64, request: Value) -> Reply {
        let request = numbered(id, request);
        match std::panic::catch_unwind(|| reference::answer(&request)) {
            Ok(answer) => protocol::parse_answer(&answer.to_string(), id),
            Err(_) => Reply::Crash("hrry panicked".into()),
        }
    }
}

/// Starts the testee the options name: hrry itself (`--self`), a command run once
/// per case (`--oneshot 'CMD {path}'`), or a process speaking the protocol
/// (`-- CMD ARGS...`).
pub fn start(
    self_testee: bool,
    oneshot: Option<&str>,
    command: &[String],
    timeout: std::time::Duration,
    log: Option<std::path::PathBuf>,
) -> Result<Box<dyn Testee>, crate::Failure> {
    use crate::Failure;
    Ok(if self_testee {
        Box::new(SelfTestee::new())
    } else if let Some(template) = oneshot {
        Box::new(OneshotTestee::new(template, timeout, log).map_err(Failure)?)
    } else if !command.is_empty() {
        let t = ProcessTestee::start(command.to_vec(), timeout, log)
            .map_err(|e| Failure(format!("the testee did not start: {e}")))?;
        Box::new(t)
    } else {
        return Err(Failure(
            "give a testee: --self, --oneshot 'CMD {path}', or -- CMD ARGS...".into(),
        ));
    })
}
