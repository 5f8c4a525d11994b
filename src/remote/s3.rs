//! `s3://bucket/key` objects: each request goes to a freshly presigned (SigV4)
//! `GET` URL, built from the standard AWS environment variables.

use std::time::Duration;

/// How long each presigned URL stays valid (each request signs a new one).
const SIGNATURE_LIFETIME: Duration = Duration::from_secs(15 * 60);

/// An object in an S3 (or S3-compatible) bucket, with what signing needs.
pub(crate) struct S3Object {
    bucket: rusty_s3::Bucket,
    credentials: Option<rusty_s3::Credentials>,
    key: String,
}

impl S3Object {
    /// The object `s3://bucket/key`, signed with `AWS_ACCESS_KEY_ID`,
    /// `AWS_SECRET_ACCESS_KEY` and `AWS_SESSION_TOKEN` (unsigned without them), in
    /// region `AWS_REGION` or `AWS_DEFAULT_REGION` (`us-east-1`), at
    /// `AWS_ENDPOINT_URL_S3` or `AWS_ENDPOINT_URL` (path-style URLs) or else AWS
    /// itself (virtual-hosted URLs).
    /// An error says what is wrong, without the URL (the caller names it).
    pub fn from_url(url: &str) -> Result<S3Object, String> {
        let invalid = |why: &str| why.to_string();
        let rest = url
            .get(5..)
            .filter(|_| url[..5].eq_ignore_ascii_case("s3://"))
            .ok_or_else(|| invalid("not an s3:// URL"))?;
        let (bucket, key) = rest
            .split_once('/')
            .filter(|(b, k)| !b.is_empty() && !k.is_empty())
            .ok_or_else(|| invalid("an S3 URL is s3://bucket/key"))?;
        let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        let region = env("AWS_REGION")
            .or_else(|| env("AWS_DEFAULT_REGION"))
            .unwrap_or_else(|| "us-east-1".into());
        let (endpoint, style) = match env("AWS_ENDPOINT_URL_S3").or_else(|| env("AWS_ENDPOINT_URL"))
        {
            Some(e) => (e, rusty_s3::UrlStyle::Path),
            None => (
                format!("https://s3.{region}.amazonaws.com"),
                rusty_s3::UrlStyle::VirtualHost,
            ),
        };
        let endpoint = url::Url::parse(&endpoint)
            .map_err(|e| invalid(&format!("the S3 endpoint {endpoint} is not a URL: {e}")))?;
        let bucket = rusty_s3::Bucket::new(endpoint, style, bucket.to_string(), region)
            .map_err(|e| invalid(&format!("bucket: {e}")))?;
        // Signing builds this URL again and assumes it builds: check it here.
        bucket
            .object_url(key)
            .map_err(|e| invalid(&format!("the key does not make a URL: {e}")))?;
        Ok(S3Object {
            bucket,
            credentials: rusty_s3::Credentials::from_env(),
            key: key.to_string(),
        })
    }

    /// A URL for one `GET` of the object (presigned when there are credentials).
    pub fn request_url(&self) -> String {
        use rusty_s3::S3Action;
        self.bucket
            .get_object(self.credentials.as_ref(), &self.key)
            .sign(SIGNATURE_LIFETIME)
            .to_string()
    }
}
