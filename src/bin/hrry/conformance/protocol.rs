//! The testee protocol, version 1 (`docs/conformance-protocol.md`): the requests the
//! harness sends, the `hello` answer that says what a testee can do, and what one
//! exchange gave.

use serde_json::{json, Map, Value};

/// The protocol version this harness speaks.
pub const PROTOCOL: u64 = 1;

/// The operations of the protocol a testee may offer.
pub const OPS: &[&str] = &["validate", "read", "write"];

/// The formats a testee may say it reads.
pub const FORMATS: &[&str] = &["hrryfile", "holo", "stream", "messages"];

/// A testee's answer to `hello`: who it is and what it can do.
#[derive(Clone, Debug)]
pub struct Hello {
    /// The answer as received, reported in the results.
    pub raw: Value,
    /// The operations it offers (only these are run; the rest are `skip`).
    pub ops: Vec<String>,
    /// The formats it reads.
    pub formats: Vec<String>,
    /// Whether its `validate` answers name hrry's rule IDs.
    pub rule_ids: bool,
}

impl Hello {
    /// Reads a `hello` answer; the error says what is wrong with it.
    pub fn parse(v: Value) -> Result<Hello, String> {
        let obj = v
            .as_object()
            .ok_or("the hello answer is not a JSON object")?;
        match obj.get("protocol").and_then(Value::as_u64) {
            Some(PROTOCOL) => {}
            Some(p) => return Err(format!("the testee speaks protocol {p}, not {PROTOCOL}")),
            None => return Err("the hello answer has no numeric \"protocol\"".into()),
        }
        let names = |key: &str| -> Vec<String> {
            obj.get(key)
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default()
        };
        Ok(Hello {
            ops: names("ops"),
            formats: names("formats"),
            rule_ids: obj.get("rule_ids").and_then(Value::as_bool) == Some(true),
            raw: v,
        })
    }

    /// Whether the testee offers `op`.
    pub fn offers(&self, op: &str) -> bool {
        self.ops.iter().any(|o| o == op)
    }

    /// Whether the testee reads `format`.
    pub fn reads(&self, format: &str) -> bool {
        self.formats.iter().any(|f| f == format)
    }
}

/// The `hello` request.
pub fn hello_request() -> Value {
    json!({"op": "hello", "protocol": PROTOCOL})
}

/// The `bye` request.
pub fn bye_request() -> Value {
    json!({"op": "bye"})
}

/// What one request gave.
#[derive(Clone, Debug)]
pub enum Reply {
    /// An answer with the request's id (the object, `id` included).
    Answer(Map<String, Value>),
    /// `{"id", "skipped": why}`.
    Skipped(String),
    /// `{"id", "error": why}`: the testee could not carry the request out.
    Error(String),
    /// The testee died (or could not be started again); the detail says how.
    Crash(String),
    /// No answer within the timeout; the testee was ended.
    Timeout,
    /// An answer out of protocol (not JSON, not an object, the wrong id); the
    /// testee was ended.
    OutOfProtocol(String),
}

/// Reads one answer line to the request numbered `id`.
pub fn parse_answer(line: &str, id: u64) -> Reply {
    let value: Value = match serde_json::from_str(line) {
        Ok(v) => v,
        Err(e) => return Reply::OutOfProtocol(format!("not JSON ({e}): {}", excerpt(line))),
    };
    let Value::Object(obj) = value else {
        return Reply::OutOfProtocol(format!("not a JSON object: {}", excerpt(line)));
    };
    match obj.get("id").and_then(Value::as_u64) {
        Some(got) if got == id => {}
        Some(got) => {
            return Reply::OutOfProtocol(format!("answered id {got} to request {id}"));
        }
        None => return Reply::OutOfProtocol(format!("answer without an id: {}", excerpt(line))),
    }
    if let Some(why) = obj.get("skipped") {
        return Reply::Skipped(text_of(why));
    }
    if let Some(why) = obj.get("error") {
        return Reply::Error(text_of(why));
    }
    Reply::Answer(obj)
}

fn text_of(v: &Value) -> String {
    v.as_str().map_or_else(|| v.to_string(), str::to_string)
}

/// At most 120 characters of `line`, for a detail.
pub fn excerpt(line: &str) -> String {
    let mut s: String = line.chars().take(120).collect();
    if s.len() < line.len() {
        s.push('…');
    }
    s
}
