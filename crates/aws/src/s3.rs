//! Objects read from S3 with the AWS SDK, with their ETag and version id.

use crate::error::{describe, AwsError};
use crate::event::ObjectRef;
use aws_sdk_s3::error::ProvideErrorMetadata;
use deltaload_lake::SourceFile;

/// What reading an announced object gave.
#[derive(Debug)]
pub enum Fetched {
    File(SourceFile),
    /// Deleted, or the version the event names does not exist (S3's words are
    /// kept): acknowledged, not retried.
    Missing(String),
    /// Larger than the configured limit: refused, not read.
    TooLarge(u64),
    /// Gzip content that is damaged or expands beyond the limit: refused.
    Unreadable(deltaload_core::compression::Unreadable),
}

/// Whether S3's error `code` says the object, or the version the event names,
/// does not exist, so that no retry can ever read it: the object or bucket was
/// deleted (`NoSuchKey`, `NoSuchBucket`, `NotFound`), the version was deleted
/// (`NoSuchVersion`), or S3 rejects the version id itself (`InvalidArgument`,
/// which for a GetObject naming a version means "Invalid version id
/// specified": a made-up event, such as AWS's example with
/// `versionId: "version"`). Such a message is acknowledged like a deleted
/// object, with a warning; `deltaload reconcile` still finds any object of the
/// landing prefix that the lake never loaded.
fn gone(code: Option<&str>, names_version: bool) -> bool {
    match code {
        Some("NoSuchKey" | "NoSuchVersion" | "NotFound" | "NoSuchBucket") => true,
        Some("InvalidArgument") => names_version,
        _ => false,
    }
}

/// Reads objects from S3.
#[derive(Debug, Clone)]
pub struct S3Reader {
    client: aws_sdk_s3::Client,
    max_bytes: u64,
}

/// An S3 client from the standard AWS configuration; path-style addressing when
/// a custom endpoint is set (S3-compatible stores rarely serve virtual hosts).
pub fn s3_client(config: &aws_config::SdkConfig, endpoint_url: Option<&str>) -> aws_sdk_s3::Client {
    let conf = aws_sdk_s3::config::Builder::from(config)
        .force_path_style(endpoint_url.is_some())
        .build();
    aws_sdk_s3::Client::from_conf(conf)
}

impl S3Reader {
    pub fn new(client: aws_sdk_s3::Client, max_bytes: u64) -> Self {
        Self { client, max_bytes }
    }

    /// The S3 client, for listing and tests.
    pub fn client(&self) -> &aws_sdk_s3::Client {
        &self.client
    }

    /// Reads the announced object (the announced version when the event names one).
    pub async fn fetch(&self, obj: &ObjectRef) -> Result<Fetched, AwsError> {
        if let Some(size) = obj.size.filter(|s| *s > self.max_bytes) {
            return Ok(Fetched::TooLarge(size));
        }
        let read_err =
            |problem: String, source: Box<dyn std::error::Error + Send + Sync>| AwsError::Read {
                bucket: obj.bucket.clone(),
                key: obj.key.clone(),
                version: obj.version_id.clone(),
                problem,
                source,
            };
        let response = self
            .client
            .get_object()
            .bucket(&obj.bucket)
            .key(&obj.key)
            .set_version_id(obj.version_id.clone())
            .send()
            .await;
        let response = match response {
            Ok(r) => r,
            Err(e) => {
                let problem = format!("S3 GetObject: {}", describe(&e));
                if gone(e.code(), obj.version_id.is_some()) {
                    return Ok(Fetched::Missing(problem));
                }
                return Err(read_err(problem, Box::new(e)));
            }
        };
        let size = response.content_length().unwrap_or(0).max(0) as u64;
        if size > self.max_bytes {
            return Ok(Fetched::TooLarge(size));
        }
        let etag = response.e_tag().map(|e| e.trim_matches('"').to_string());
        let version_id = response.version_id().map(str::to_string);
        let bytes = response
            .body
            .collect()
            .await
            .map_err(|e| read_err(format!("S3 GetObject: body interrupted: {e}"), Box::new(e)))?
            .into_bytes()
            .to_vec();
        let bytes = match deltaload_core::compression::expand(bytes, self.max_bytes) {
            Ok(bytes) => bytes,
            Err(why) => return Ok(Fetched::Unreadable(why)),
        };
        Ok(Fetched::File(SourceFile {
            location: format!("s3://{}/{}", obj.bucket, obj.key),
            bytes,
            etag,
            version_id,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::gone;

    #[test]
    fn only_objects_and_versions_that_cannot_exist_are_gone() {
        for code in ["NoSuchKey", "NoSuchVersion", "NotFound", "NoSuchBucket"] {
            assert!(gone(Some(code), false), "{code}");
        }
        assert!(gone(Some("InvalidArgument"), true));
        assert!(!gone(Some("InvalidArgument"), false));
        for code in ["AccessDenied", "SlowDown", "InternalError"] {
            assert!(!gone(Some(code), true), "{code}");
        }
        assert!(!gone(None, true), "no answer at all is retried");
    }
}
