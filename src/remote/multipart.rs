//! `multipart/byteranges` bodies: the answer of a server to a request for several
//! ranges at once (RFC 9110 §14.6), split into its parts.

use std::ops::Range;

use super::ranges::{parse_content_range, ContentRange};

/// The boundary of a `multipart/byteranges` `Content-Type`, or `None` when the
/// type is another one.
pub(crate) fn boundary(content_type: &str) -> Option<String> {
    let mut params = content_type.split(';');
    let media = params.next()?.trim();
    if !media.eq_ignore_ascii_case("multipart/byteranges") {
        return None;
    }
    params.find_map(|p| {
        let (k, v) = p.split_once('=')?;
        if !k.trim().eq_ignore_ascii_case("boundary") {
            return None;
        }
        let v = v.trim().trim_matches('"');
        (!v.is_empty() && v.len() <= 70).then(|| v.to_string())
    })
}

/// Splits `body` into its parts: each part's `Content-Range` and where its bytes
/// are in `body`. Every part must have a `Content-Range` whose length is the
/// length of its bytes; anything malformed is an error naming what is wrong.
pub(crate) fn parts(
    body: &[u8],
    boundary: &str,
) -> Result<Vec<(ContentRange, Range<usize>)>, String> {
    let delimiter = format!("--{boundary}");
    let delimiter = delimiter.as_bytes();
    let mut at = find(body, delimiter, 0).ok_or("no boundary in the multipart body")?;
    let mut out = Vec::new();
    loop {
        at += delimiter.len();
        if body[at..].starts_with(b"--") {
            return Ok(out);
        }
        // Transport padding, then the line break ending the delimiter line.
        while body.get(at).is_some_and(|&b| b == b' ' || b == b'\t') {
            at += 1;
        }
        if !body[at..].starts_with(b"\r\n") {
            return Err("a multipart delimiter line does not end with CRLF".into());
        }
        at += 2;
        let headers_end = if body[at..].starts_with(b"\r\n") {
            at
        } else {
            find(body, b"\r\n\r\n", at)
                .map(|e| e + 2)
                .ok_or("a multipart part's headers do not end")?
        };
        let headers = std::str::from_utf8(&body[at..headers_end])
            .map_err(|_| "a multipart part's headers are not text")?;
        let range = headers
            .split("\r\n")
            .find_map(|line| {
                let (name, value) = line.split_once(':')?;
                name.trim()
                    .eq_ignore_ascii_case("content-range")
                    .then(|| value.trim())
            })
            .ok_or("a multipart part has no Content-Range")?;
        let range = parse_content_range(range)
            .filter(|r| r.end > r.start)
            .ok_or_else(|| format!("a multipart part has a malformed Content-Range `{range}`"))?;
        let data_start = headers_end + 2;
        let len = usize::try_from(range.end - range.start).map_err(|_| "a part is too long")?;
        let data_end = data_start
            .checked_add(len)
            .filter(|&e| e <= body.len())
            .ok_or("a multipart part is shorter than its Content-Range")?;
        let next = data_end + 2;
        if !body[data_end..].starts_with(b"\r\n")
            || !body
                .get(next..)
                .is_some_and(|rest| rest.starts_with(delimiter))
        {
            return Err("a multipart part is longer than its Content-Range".into());
        }
        out.push((range, data_start..data_end));
        at = next;
    }
}

/// The first position of `needle` in `haystack` at or after `from`.
fn find(haystack: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    haystack
        .get(from..)?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|p| p + from)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(parts: &[(&str, &[u8])]) -> Vec<u8> {
        let mut b = Vec::new();
        for (range, data) in parts {
            b.extend_from_slice(b"\r\n--XyZ\r\nContent-Type: application/octet-stream\r\n");
            b.extend_from_slice(format!("Content-Range: {range}\r\n\r\n").as_bytes());
            b.extend_from_slice(data);
        }
        b.extend_from_slice(b"\r\n--XyZ--\r\n");
        b
    }

    #[test]
    fn parts_are_split_by_their_ranges() {
        assert_eq!(
            boundary("multipart/byteranges; boundary=XyZ").as_deref(),
            Some("XyZ")
        );
        assert_eq!(boundary("application/octet-stream"), None);
        let b = body(&[("bytes 0-2/10", b"abc"), ("bytes 7-9/10", b"\r\n-")]);
        let got = parts(&b, "XyZ").expect("parses");
        assert_eq!(got.len(), 2);
        assert_eq!(&b[got[0].1.clone()], b"abc");
        assert_eq!((got[1].0.start, got[1].0.end), (7, 10));
        assert_eq!(&b[got[1].1.clone()], b"\r\n-");
    }

    #[test]
    fn malformed_bodies_are_errors() {
        let short = body(&[("bytes 0-3/10", b"abc")]);
        assert!(parts(&short, "XyZ").is_err());
        let long = body(&[("bytes 0-1/10", b"abc")]);
        assert!(parts(&long, "XyZ").is_err());
        let no_range = b"\r\n--XyZ\r\nContent-Type: x\r\n\r\nabc\r\n--XyZ--".to_vec();
        assert!(parts(&no_range, "XyZ").is_err());
        assert!(parts(b"nothing", "XyZ").is_err());
        let mut cut = body(&[("bytes 0-2/10", b"abc")]);
        cut.truncate(20);
        assert!(parts(&cut, "XyZ").is_err());
    }
}
