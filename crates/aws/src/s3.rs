//! Objects read from S3 with the AWS SDK, with their ETag and version id.

use crate::error::AwsError;
use crate::event::ObjectRef;
use aws_sdk_s3::error::ProvideErrorMetadata;
use deltaload_lake::SourceFile;

/// What reading an announced object gave.
#[derive(Debug)]
pub enum Fetched {
    File(SourceFile),
    /// Deleted (or that version gone) before it was read: acknowledged, not retried.
    Missing,
    /// Larger than the configured limit: refused, not read.
    TooLarge(u64),
    /// Gzip content that is damaged or expands beyond the limit: refused.
    Unreadable(deltaload_core::compression::Unreadable),
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
        let read_err = |detail: String| AwsError::Read {
            bucket: obj.bucket.clone(),
            key: obj.key.clone(),
            detail,
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
                let code = e.code().unwrap_or_default();
                if matches!(
                    code,
                    "NoSuchKey" | "NoSuchVersion" | "NotFound" | "NoSuchBucket"
                ) {
                    return Ok(Fetched::Missing);
                }
                return Err(read_err(format!(
                    "{} ({code})",
                    aws_sdk_s3::error::DisplayErrorContext(&e)
                )));
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
            .map_err(|e| read_err(format!("body interrupted: {e}")))?
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
