//! Errors of the AWS edges, folded into one enum.

use aws_sdk_s3::config::http::HttpResponse;
use aws_sdk_s3::error::{ProvideErrorMetadata, SdkError};

/// A failure at the AWS edge, with the object or queue it concerns.
#[derive(Debug, thiserror::Error)]
pub enum AwsError {
    #[error("configuration: {0}")]
    /// A setting is missing or wrong.
    Config(String),
    #[error("{0}; left for the dead-letter queue after maxReceiveCount deliveries")]
    /// A message body that is not an S3 event.
    Body(#[from] crate::event::NotAnEvent),
    #[error(
        "reading s3://{bucket}/{key}{}: {problem}; the message will be retried, and rests in \
         the dead-letter queue after maxReceiveCount deliveries",
        version.as_deref().map(|v| format!(" (version {v})")).unwrap_or_default()
    )]
    /// An object could not be read.
    Read {
        /// Its bucket.
        bucket: String,
        /// Its key.
        key: String,
        /// The version the event named.
        version: Option<String>,
        /// What went wrong, in a line: S3's code and message, or why no answer came.
        problem: String,
        /// The SDK's error, whole, for `{:?}` in debug logs.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    #[error("listing {at}: {detail}; check the bucket name and the credentials' s3:ListBucket permission")]
    /// A listing failed.
    List {
        /// The prefix listed.
        at: String,
        /// What S3 said.
        detail: String,
        /// The SDK's error, whole.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    #[error("queue {queue}: {detail}")]
    /// A queue call failed.
    Queue {
        /// The queue's URL.
        queue: String,
        /// What failed, and what SQS said.
        detail: String,
        /// The SDK's error, whole, when one caused it.
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
    },
    #[error(
        "handling the message panicked (a bug; please report it); the message will be retried"
    )]
    /// Handling a message panicked.
    Panicked,
    #[error(transparent)]
    /// A load failed.
    Lake(#[from] deltaload_lake::LakeError),
    #[error(transparent)]
    /// The spec does not parse or check.
    Spec(#[from] deltaload_core::SpecError),
}

/// An AWS SDK error in one line, for people: the service's code, HTTP status and
/// message (`AccessDenied (HTTP 403): Access Denied`), or why no answer came
/// (`dispatch failure: io error: Connection refused`). Never the SDK's debug dump
/// of the raw response; the error itself stays the source, for debug logs.
pub fn describe<E>(error: &SdkError<E, HttpResponse>) -> String
where
    E: ProvideErrorMetadata + std::error::Error + 'static,
{
    if let SdkError::ServiceError(service) = error {
        let status = service.raw().status().as_u16();
        let code = service.err().code().unwrap_or("no error code");
        return match service.err().message() {
            Some(message) => format!("{code} (HTTP {status}): {message}"),
            None => format!("{code} (HTTP {status})"),
        };
    }
    let mut text = error.to_string();
    let mut cause = std::error::Error::source(error);
    while let Some(c) = cause {
        let message = c.to_string();
        if !text.contains(&message) {
            text.push_str(": ");
            text.push_str(&message);
        }
        cause = c.source();
    }
    if text.len() > 300 {
        let cut = (0..=300)
            .rev()
            .find(|&i| text.is_char_boundary(i))
            .unwrap_or(0);
        text.truncate(cut);
        text.push('…');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::AwsError;
    use std::error::Error as _;

    #[test]
    fn listing_and_queue_errors_keep_the_sdk_error_as_their_source() {
        let cause = || Box::new(std::io::Error::other("throttled"));
        let list = AwsError::List {
            at: "s3://b/p".into(),
            detail: "SlowDown".into(),
            source: cause(),
        };
        assert_eq!(
            list.source().map(|s| s.to_string()).as_deref(),
            Some("throttled")
        );
        let queue = AwsError::Queue {
            queue: "q".into(),
            detail: "receive failed".into(),
            source: Some(cause()),
        };
        assert!(queue.source().is_some());
        assert!(queue.to_string().contains("receive failed"), "{queue}");
    }
}
