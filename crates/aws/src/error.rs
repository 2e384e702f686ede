//! Errors of the AWS edges, folded into one enum.

/// A failure at the AWS edge, with the object or queue it concerns.
#[derive(Debug, thiserror::Error)]
pub enum AwsError {
    #[error("configuration: {0}")]
    Config(String),
    #[error("{0}; left for the dead-letter queue after maxReceiveCount deliveries")]
    Body(#[from] crate::event::NotAnEvent),
    #[error("reading s3://{bucket}/{key}: {detail}; the message will be retried")]
    Read {
        bucket: String,
        key: String,
        detail: String,
    },
    #[error("listing {at}: {detail}; check the bucket name and the credentials' s3:ListBucket permission")]
    List { at: String, detail: String },
    #[error("queue {queue}: {detail}")]
    Queue { queue: String, detail: String },
    #[error(
        "handling the message panicked (a bug; please report it); the message will be retried"
    )]
    Panicked,
    #[error(transparent)]
    Lake(#[from] deltaload_lake::LakeError),
}
