//! What a URL names: where requests go, the credentials they carry, and how the URL
//! is shown in messages (never with its credentials).

use std::io;
use std::sync::Arc;

use super::s3::S3Object;

/// Where requests go.
#[derive(Clone)]
enum Target {
    /// One URL, without user information.
    Fixed(String),
    /// An S3 object: each request gets a newly signed URL.
    S3(Arc<S3Object>),
}

/// An `http://`, `https://` or `s3://` URL split into what requests use and what
/// people see.
#[derive(Clone)]
pub(crate) struct Location {
    target: Target,
    /// `Authorization: Basic …` from the URL's user information, if it had any.
    pub basic_auth: Option<String>,
    /// The URL as messages show it (see [`redact`]).
    pub shown: String,
}

/// Whether `text` is a URL that [`super::RemoteSource::open`] reads: `http://`,
/// `https://` or `s3://` (scheme matched without regard to case).
pub fn is_url(text: &str) -> bool {
    scheme(text).is_some_and(|s| matches!(s.as_str(), "http" | "https" | "s3"))
}

/// The lower-cased scheme of `text`, when it starts with `scheme://`.
pub(crate) fn scheme(text: &str) -> Option<String> {
    let (scheme, _) = text.split_once("://")?;
    let ok = !scheme.is_empty()
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    ok.then(|| scheme.to_ascii_lowercase())
}

/// Query parameter names whose values are secrets (presigned URLs, tokens).
fn is_secret_parameter(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    name.starts_with("x-amz-")
        || [
            "signature",
            "sig",
            "token",
            "key",
            "secret",
            "password",
            "auth",
        ]
        .iter()
        .any(|s| name.contains(s))
}

/// `url` without its user information, and with the values of secret-looking query
/// parameters (`X-Amz-Signature`, `token`, `sig`, …) replaced by `REDACTED`: what
/// messages and reports may show.
pub fn redact(url: &str) -> String {
    let (before_query, query) = match url.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (url, None),
    };
    let mut out = strip_userinfo(before_query).0;
    if let Some(query) = query {
        out.push('?');
        let (query, fragment) = match query.split_once('#') {
            Some((q, f)) => (q, Some(f)),
            None => (query, None),
        };
        let parts: Vec<String> = query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((k, _)) if is_secret_parameter(k) => format!("{k}=REDACTED"),
                _ => pair.to_string(),
            })
            .collect();
        out.push_str(&parts.join("&"));
        if let Some(f) = fragment {
            out.push('#');
            out.push_str(f);
        }
    }
    out
}

/// `url` (without its query) with the user information removed, and that
/// information (`user[:password]`) if there was any.
fn strip_userinfo(url: &str) -> (String, Option<String>) {
    let Some((scheme, rest)) = url.split_once("://") else {
        return (url.to_string(), None);
    };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    let (authority, path) = rest.split_at(authority_end);
    match authority.rsplit_once('@') {
        Some((userinfo, host)) => (
            format!("{scheme}://{host}{path}"),
            Some(userinfo.to_string()),
        ),
        None => (url.to_string(), None),
    }
}

/// Decodes `%XX` escapes (user information in URLs is percent-encoded).
fn percent_decode(text: &str) -> Vec<u8> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    out
}

impl Location {
    /// Whether this is an S3 object.
    pub fn is_s3(&self) -> bool {
        matches!(self.target, Target::S3(_))
    }

    /// The URL for the next request.
    pub fn request_url(&self) -> String {
        match &self.target {
            Target::Fixed(url) => url.clone(),
            Target::S3(object) => object.request_url(),
        }
    }

    /// Parses an `http://`, `https://` or `s3://` URL.
    pub fn parse(url: &str) -> io::Result<Location> {
        let shown = redact(url);
        if scheme(url).as_deref() == Some("s3") {
            return Ok(Location {
                target: Target::S3(Arc::new(S3Object::from_url(url).map_err(|why| {
                    io::Error::new(io::ErrorKind::InvalidInput, format!("{shown}: {why}"))
                })?)),
                basic_auth: None,
                shown,
            });
        }
        if !matches!(scheme(url).as_deref(), Some("http" | "https")) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{shown}: not an http://, https:// or s3:// URL"),
            ));
        }
        let (without_query, query) = match url.split_once('?') {
            Some((b, q)) => (b, Some(q)),
            None => (url, None),
        };
        let (mut request_url, userinfo) = strip_userinfo(without_query);
        if let Some(q) = query {
            request_url.push('?');
            request_url.push_str(q);
        }
        let basic_auth = userinfo.map(|u| {
            use base64::Engine;
            let decoded = percent_decode(&u);
            format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD.encode(decoded)
            )
        });
        Ok(Location {
            target: Target::Fixed(request_url),
            basic_auth,
            shown,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_never_show() {
        assert_eq!(
            redact("https://alice:s3cret@example.com/a/b.hrry"),
            "https://example.com/a/b.hrry"
        );
        assert_eq!(
            redact("https://h/x?X-Amz-Signature=abc&part=1&token=t"),
            "https://h/x?X-Amz-Signature=REDACTED&part=1&token=REDACTED"
        );
        assert_eq!(redact("http://h:8080/f"), "http://h:8080/f");
        // An `@` in the path is not user information.
        assert_eq!(redact("http://h/a@b"), "http://h/a@b");
        let l = Location::parse("http://u%40x:p%3Aw@h/f?q=1").expect("parses");
        assert_eq!(l.request_url(), "http://h/f?q=1");
        assert!(!l.shown.contains("p%3Aw"));
        // base64("u@x:p:w")
        assert_eq!(l.basic_auth.as_deref(), Some("Basic dUB4OnA6dw=="));
    }

    #[test]
    fn urls_are_recognised_by_scheme() {
        assert!(is_url("HTTPS://h/f"));
        assert!(is_url("s3://bucket/key"));
        assert!(!is_url("corpus/valid/basic.hrry"));
        assert!(!is_url("ftp://h/f"));
        assert!(!is_url("c:\\dir\\f"));
        assert!(Location::parse("ftp://b/k").is_err());
        assert!(Location::parse("s3://bucket-only").is_err());
    }
}
