//! JSON written as it is produced: objects and lists whose members are given one
//! at a time and printed at once, laid out exactly as `serde_json::to_string_pretty`
//! lays out the whole value, so that a large document (every tensor of a file,
//! every element of a KV array) is never held in memory.

use serde_json::Value;

/// One open object or list.
struct Open {
    /// Its first line (indent, key, bracket), printed with its first member.
    line: String,
    closing: char,
    has_members: bool,
}

/// A pretty JSON document written to standard output as it is built. Each member
/// is held until the next one (or the end of its container) says whether it takes
/// a comma.
pub struct PrettyWriter {
    stack: Vec<Open>,
    pending: Option<String>,
    emit: fn(&str),
}

/// Lines waiting to be written to standard output together.
const PENDING_OUTPUT: usize = 64 << 10;

thread_local! {
    static OUTPUT: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
}

/// Adds `line` to the output, written out in pieces of [`PENDING_OUTPUT`] bytes
/// (one write per line would cost a system call per array element).
fn print_line(line: &str) {
    OUTPUT.with(|o| {
        let mut o = o.borrow_mut();
        o.push_str(line);
        o.push('\n');
        if o.len() >= PENDING_OUTPUT {
            crate::write_stdout(o.as_bytes());
            o.clear();
        }
    });
}

/// Writes what [`print_line`] holds.
fn flush_output() {
    OUTPUT.with(|o| {
        let mut o = o.borrow_mut();
        if !o.is_empty() {
            crate::write_stdout(o.as_bytes());
            o.clear();
        }
    });
}

impl PrettyWriter {
    /// A document printed to standard output.
    pub fn stdout() -> Self {
        Self::to(print_line)
    }

    /// A document whose lines go to `emit`.
    pub fn to(emit: fn(&str)) -> Self {
        PrettyWriter {
            stack: Vec::new(),
            pending: None,
            emit,
        }
    }

    fn indent(&self) -> String {
        "  ".repeat(self.stack.len())
    }

    /// Starts a member of the innermost container: the previous member gets its
    /// comma, or the container's first line is printed.
    fn begin_member(&mut self) {
        let Some(top) = self.stack.last_mut() else {
            return;
        };
        if top.has_members {
            if let Some(p) = self.pending.take() {
                (self.emit)(&format!("{p},"));
            }
        } else {
            top.has_members = true;
            let line = std::mem::take(&mut top.line);
            (self.emit)(&line);
        }
    }

    fn key_prefix(&self, key: Option<&str>) -> String {
        match key {
            Some(k) => format!("{}{}: ", self.indent(), Value::from(k)),
            None => self.indent(),
        }
    }

    /// A member: `key: value` in an object, `value` in a list (`key` `None`).
    pub fn value(&mut self, key: Option<&str>, v: &Value) {
        self.begin_member();
        let mut line = self.key_prefix(key);
        if v.is_array() || v.is_object() {
            let text = serde_json::to_string_pretty(v).unwrap_or_default();
            let indent = format!("\n{}", self.indent());
            line.push_str(&text.replace('\n', &indent));
        } else {
            line.push_str(&v.to_string());
        }
        self.pending = Some(line);
    }

    /// A member of an object.
    pub fn field(&mut self, key: &str, v: &Value) {
        self.value(Some(key), v);
    }

    /// An element of a list.
    pub fn item(&mut self, v: &Value) {
        self.value(None, v);
    }

    /// Opens an object (`{`) or list (`[`) as a member (`key` for an object's).
    pub fn open(&mut self, key: Option<&str>, bracket: char) {
        self.begin_member();
        let line = format!("{}{bracket}", self.key_prefix(key));
        self.stack.push(Open {
            line,
            closing: if bracket == '{' { '}' } else { ']' },
            has_members: false,
        });
    }

    /// Closes the innermost container.
    pub fn close(&mut self) {
        let Some(top) = self.stack.pop() else {
            return;
        };
        if top.has_members {
            if let Some(p) = self.pending.take() {
                (self.emit)(&p);
            }
            self.pending = Some(format!("{}{}", self.indent(), top.closing));
        } else {
            self.pending = Some(format!("{}{}", top.line, top.closing));
        }
        if self.stack.is_empty() {
            if let Some(p) = self.pending.take() {
                (self.emit)(&p);
            }
            flush_output();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::PrettyWriter;
    use serde_json::json;
    use std::cell::RefCell;

    thread_local! {
        static OUT: RefCell<String> = const { RefCell::new(String::new()) };
    }

    fn collect(line: &str) {
        OUT.with(|o| {
            let mut o = o.borrow_mut();
            o.push_str(line);
            o.push('\n');
        });
    }

    #[test]
    fn written_piece_by_piece_as_serde_json_prints_the_whole() {
        let whole = json!({
            "a": 1,
            "empty": {},
            "list": [],
            "kv": {"k": {"type": "array", "value": [1, 2, {"x": [true]}]}, "e": []},
            "tensors": [{"name": "t", "shape": [2, 3]}, {"name": "u", "shape": []}],
            "z": "end",
        });
        OUT.with(|o| o.borrow_mut().clear());
        let mut w = PrettyWriter::to(collect);
        w.open(None, '{');
        w.field("a", &json!(1));
        w.open(Some("empty"), '{');
        w.close();
        w.field("list", &json!([]));
        w.open(Some("kv"), '{');
        w.open(Some("k"), '{');
        w.field("type", &json!("array"));
        w.open(Some("value"), '[');
        for v in [json!(1), json!(2), json!({"x": [true]})] {
            w.item(&v);
        }
        w.close();
        w.close();
        w.open(Some("e"), '[');
        w.close();
        w.close();
        w.open(Some("tensors"), '[');
        w.item(&json!({"name": "t", "shape": [2, 3]}));
        w.item(&json!({"name": "u", "shape": []}));
        w.close();
        w.field("z", &json!("end"));
        w.close();
        let got = OUT.with(|o| o.borrow().clone());
        assert_eq!(got, serde_json::to_string_pretty(&whole).unwrap() + "\n");
    }
}
