//! Untrusted text made safe for a terminal.
//!
//! Tensor names, KV keys and values, file names and parser messages come from files
//! or users we do not trust. Printed raw, an ESC starts a terminal sequence (`ESC [2J`
//! clears the screen, others recolour it or set the window title), CR lets a name
//! overwrite its own line, and bidirectional-override characters reorder what the
//! reader sees. Everything printed for people passes through [`safe`]; JSON output
//! needs no such care (its encoder escapes control characters).

use std::borrow::Cow;
use std::fmt::Write;
use std::path::Path;

/// Whether `c` must not reach a terminal as is: control characters (C0, DEL, C1)
/// and the Unicode bidirectional controls.
fn unsafe_char(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `s` with every control character written as a visible escape (`\x1b`, `\r`,
/// `\n`, `\t`, `\u{202e}`); borrowed unchanged when there is none.
pub fn safe(s: &str) -> Cow<'_, str> {
    if !s.chars().any(unsafe_char) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if unsafe_char(c) && (c as u32) < 0x100 => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if unsafe_char(c) => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// A path for a message: lossily decoded, then made [`safe`].
pub fn path(p: &Path) -> String {
    safe(&crate::remote::shown(p)).into_owned()
}

/// `s` cut to at most `max` characters (with `…` and the full length in bytes when
/// cut), then made [`safe`].
pub fn cut(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((end, _)) => format!("{}… ({} bytes)", safe(&s[..end]), s.len()),
        None => safe(s).into_owned(),
    }
}

/// `s` as a quoted string for people: cut to at most `max` characters, quotes and
/// backslashes escaped (so a value holding `"` cannot pass for two), then made
/// [`safe`]; a cut value ends with `…` and its full length in bytes after the
/// closing quote.
pub fn quoted(s: &str, max: usize) -> String {
    let (shown, rest) = match s.char_indices().nth(max) {
        Some((end, _)) => (&s[..end], format!("… ({} bytes)", s.len())),
        None => (s, String::new()),
    };
    let mut escaped = String::with_capacity(shown.len() + 2);
    for c in shown.chars() {
        match c {
            '"' => escaped.push_str("\\\""),
            '\\' => escaped.push_str("\\\\"),
            c => escaped.push(c),
        }
    }
    format!("\"{}\"{rest}", safe(&escaped))
}

/// Display width of `s` as printed by [`safe`], counting characters (names are
/// mostly ASCII; wide characters only make a column a little wider).
pub fn width(s: &str) -> usize {
    safe(s).chars().count()
}

/// A count and the noun it counts: "1 tensor", "2 tensors", "0 violations".
pub fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_what_a_terminal_acts_on() {
        assert_eq!(safe("a.weight"), "a.weight");
        assert!(matches!(safe("plain"), Cow::Borrowed(_)));
        assert_eq!(safe("w\x1b[2J"), "w\\x1b[2J");
        assert_eq!(safe("a\rb\nc\td"), "a\\rb\\nc\\td");
        assert_eq!(safe("\u{7f}\u{9b}"), "\\x7f\\x9b");
        assert_eq!(safe("x\u{202e}y"), "x\\u{202e}y");
        assert_eq!(safe("émoji ✓"), "émoji ✓");
        assert_eq!(cut("abcdef", 3), "abc… (6 bytes)");
        assert_eq!(cut("abc", 3), "abc");
        assert_eq!(width("a\x1b"), 5);
        assert_eq!(quoted(r#"say "hi"\n"#, 80), r#""say \"hi\"\\n""#);
        assert_eq!(quoted("ab\x1bc", 80), r#""ab\x1bc""#);
        assert_eq!(quoted("abcdef", 3), r#""abc"… (6 bytes)"#);
    }
}
