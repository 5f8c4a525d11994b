//! Says what a file most likely is when it is not what we expected.

/// A one-line guess at what `bytes` are, for error messages about files that are not
/// HRRYFILEs (a Git LFS pointer, safetensors, GGUF, HTML, a `.holo` archive, …).
pub fn describe(bytes: &[u8]) -> String {
    describe_head(&bytes[..bytes.len().min(HEAD_LEN)], bytes.len() as u64)
}

/// Bytes [`describe_head`] looks at.
pub const HEAD_LEN: usize = 512;

/// [`describe`] for a file of `len` bytes of which `head` are the first
/// `min(len, HEAD_LEN)`.
pub fn describe_head(head: &[u8], len: u64) -> String {
    let bytes = head;
    let text = String::from_utf8_lossy(head);
    let lower = text.trim_start().to_ascii_lowercase();
    if len == 0 {
        return "the file is empty".into();
    }
    if len < 8 && FILE_MAGIC_PREFIX.starts_with(bytes) {
        return format!("the file is {len} bytes, a truncated start of a Hurray file");
    }
    if lower.starts_with("version https://git-lfs") {
        return "this is a Git LFS pointer, not the file itself: run `git lfs pull` to fetch the content".into();
    }
    if bytes.starts_with(b"GGUF") {
        return "this is a GGUF file; convert it with `hrry convert`".into();
    }
    if bytes.starts_with(b"HOLO") {
        return "this is a .holo compiled-model archive".into();
    }
    if bytes.starts_with(b"HRRY") {
        return "this starts with a bare tensor descriptor (a Hurray stream or descriptor), not a HRRYFILE container".into();
    }
    if lower.starts_with("<!doctype html") || lower.starts_with("<html") || lower.contains("<head>")
    {
        return "this is an HTML page (often an error or login page saved instead of the download)"
            .into();
    }
    if let Some(truncated) = truncated_safetensors(bytes, len) {
        return truncated;
    }
    if looks_like_safetensors(bytes, len) {
        return "this is a safetensors file; convert it with `hrry convert`".into();
    }
    if bytes.starts_with(b"PK\x03\x04") {
        return "this is a ZIP archive (a PyTorch checkpoint is one)".into();
    }
    if bytes.starts_with(b"\x93NUMPY") {
        return "this is a NumPy .npy array".into();
    }
    if lower.starts_with('{') || lower.starts_with('[') {
        return "this is JSON text".into();
    }
    if let Some(start) = plain_text_start(bytes) {
        return format!("this is a text file (it starts {start:?})");
    }
    format!(
        "unrecognised content (first bytes {:02x?})",
        &bytes[..bytes.len().min(8)]
    )
}

/// The first line of `bytes` (at most 40 characters) when they are plain text:
/// UTF-8 (a character cut at the end of the head allowed) without control
/// characters other than tabs, line and page breaks.
fn plain_text_start(bytes: &[u8]) -> Option<String> {
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => text,
        // A character cut by the end of the head.
        Err(e) if e.error_len().is_none() => std::str::from_utf8(&bytes[..e.valid_up_to()]).ok()?,
        Err(_) => return None,
    };
    let plain = text
        .chars()
        .all(|c| !c.is_control() || matches!(c, '\t' | '\n' | '\r' | '\x0c'));
    if !plain || text.trim().is_empty() {
        return None;
    }
    let first = text.trim_start().lines().next().unwrap_or_default();
    Some(first.chars().take(40).collect())
}

const FILE_MAGIC_PREFIX: &[u8] = b"HRRYFILE";

/// safetensors: an 8-byte little-endian JSON length, then a JSON object.
fn looks_like_safetensors(bytes: &[u8], file_len: u64) -> bool {
    let Some(len) = bytes.get(..8) else {
        return false;
    };
    let n = u64::from_le_bytes(len.try_into().unwrap_or_default());
    n >= 2 && n <= file_len - 8 && bytes.get(8) == Some(&b'{')
}

/// A safetensors file cut short, as by an interrupted download: its JSON header is
/// longer than the file, or (when the whole header is among the first bytes) a
/// tensor's `data_offsets` end past the file's end.
fn truncated_safetensors(bytes: &[u8], file_len: u64) -> Option<String> {
    let n = u64::from_le_bytes(bytes.get(..8)?.try_into().ok()?);
    if bytes.get(8) != Some(&b'{') || n < 2 {
        return None;
    }
    // A header of more than 100 MB is not a safetensors header (its own limit).
    if n > file_len - 8 && n <= 100_000_000 {
        return Some(format!(
            "this is a truncated safetensors file (an interrupted download?): its header \
             says {n} bytes of JSON, but the file ends {file_len} bytes in"
        ));
    }
    let header_end = n.checked_add(8)?;
    let header = bytes.get(8..usize::try_from(header_end).ok()?)?;
    let data_end = largest_data_offset(header)?;
    let needed = header_end.saturating_add(data_end);
    (needed > file_len).then(|| {
        format!(
            "this is a truncated safetensors file (an interrupted download?): its tensors \
             need {needed} bytes, the file has {file_len}"
        )
    })
}

/// The largest number inside the `"data_offsets": [start, end]` pairs of a
/// safetensors JSON header (scanned, not parsed: the core has no JSON parser).
fn largest_data_offset(header: &[u8]) -> Option<u64> {
    const KEY: &[u8] = b"\"data_offsets\"";
    let mut largest = None;
    let mut at = 0;
    while let Some(found) = header[at..].windows(KEY.len()).position(|w| w == KEY) {
        at += found + KEY.len();
        let rest = &header[at..];
        let open = rest.iter().position(|&b| b == b'[')?;
        let close = rest.iter().position(|&b| b == b']')?;
        if close < open {
            return None;
        }
        for number in rest[open + 1..close].split(|&b| b == b',') {
            let text = std::str::from_utf8(number).ok()?.trim();
            let value: u64 = text.parse().ok()?;
            largest = Some(largest.map_or(value, |l: u64| l.max(value)));
        }
        at += close;
    }
    largest
}

#[cfg(test)]
mod tests {
    use super::describe;

    #[test]
    fn recognises_common_impostors() {
        assert!(
            describe(b"version https://git-lfs.github.com/spec/v1\noid sha256:ab\n")
                .contains("Git LFS")
        );
        assert!(describe(b"GGUF\x03\x00\x00\x00").contains("GGUF"));
        let header = br#"{"w":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}}"#;
        let mut whole = (header.len() as u64).to_le_bytes().to_vec();
        whole.extend_from_slice(header);
        whole.extend_from_slice(&[0; 16]);
        assert!(describe(&whole).contains("a safetensors file"));
        assert!(describe(&whole[..whole.len() - 1]).contains("truncated safetensors"));
        assert!(describe(&whole[..20]).contains("truncated safetensors"));
        assert!(describe(b"<!DOCTYPE html><html>").contains("HTML"));
        assert!(describe(b"HOLO\x02\x00").contains(".holo"));
        let mut st = 4u64.to_le_bytes().to_vec();
        st.extend_from_slice(b"{}  ");
        assert!(describe(&st).contains("safetensors"));
        assert!(describe(b"").contains("empty"));
        assert!(describe(b"HRRYF").contains("truncated"));
        assert!(describe(&[1, 2, 3, 4, 5, 6, 7, 8, 9]).contains("unrecognised"));
        assert!(
            describe(b"hello notes\nline two\n").contains(r#"text file (it starts "hello notes")"#)
        );
        // A multi-byte character cut by the end of what is looked at is still text.
        assert!(describe("caf\u{e9}".as_bytes().split_last().unwrap().1).contains("text file"));
        assert!(!describe(b"text\x00with a NUL").contains("text file"));
    }
}
