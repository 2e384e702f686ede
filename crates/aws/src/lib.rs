//! The AWS edges of deltaload: S3 event notifications on SQS in, S3 objects read,
//! and every message handed to the same load as `deltaload load`.
//!
//! - [`event`]: an SQS body parsed into the objects it announces (S3 notifications,
//!   test events, SNS envelopes), keys decoded as S3 encodes them.
//! - [`settings`]: configuration read once from the environment, the lake root
//!   every command resolves the same way, and the AWS configuration.
//! - [`spec`]: the deployment's datasets, read once from a file or an S3 object.
//! - [`logging`]: the log filter of the CLI and the Lambda.
//! - [`s3`]: objects fetched from S3, refused when outside the allowed sources.
//! - [`report`]: what a batch did, in all and per dataset.
//! - [`handler`]: one batch of messages loaded; failures reported per message
//!   (its objects read by `reading`, several at once).
//! - [`deadline`]: the invocation's deadline and the margin kept before it.
//! - [`consumer`]: the `deltaload serve` loop over an SQS queue.
//! - [`listing`], [`enqueue`], [`backfill`], [`landing_sweep`]: existing objects listed,
//!   compared with the lake, and announced again on the queue.
//! - [`redrive`]: dead-letter messages sent back, or saved ones replayed.
//! - [`metrics`]: each batch's figures as CloudWatch Embedded Metric Format.
//! - [`catalog`]: the lake's tables registered in the AWS Glue Data Catalog
//!   after loads, and kept in step with their schemas.
//! - [`maintenance`]: an invocation's event (an SQS batch, or the scheduled
//!   maintenance event) and the lake's maintenance it runs.

#![warn(missing_docs)]
// The load's futures nest deeply: the default limit is not enough to type them.
#![recursion_limit = "256"]

pub mod backfill;
pub mod catalog;
pub mod consumer;
pub mod deadline;
pub mod enqueue;
pub mod error;
pub mod handler;
pub mod landing_sweep;
pub mod listing;
pub mod logging;
pub mod maintenance;
pub mod metrics;
mod opening;
pub mod redrive;
pub mod report;
pub mod s3;
pub mod settings;
pub mod spec;

pub use deltaload_event as event;
pub use deltaload_lake::budget::cap_allocator_arenas;
pub use error::AwsError;
pub use handler::{BatchReport, Handler, Message};
pub use settings::{Settings, Sources};
