//! One batch of SQS messages: each body parsed on its own, each announced object
//! loaded into the lake, and the messages that must come back reported.
//!
//! A message succeeds when all its files loaded, were skipped by the ledger, were
//! refused (bad header, too large, outside the allowed sources) or were deleted
//! before they could be read. It fails, so that SQS delivers it again, when its
//! body is not an S3 event (after `maxReceiveCount` it rests in the dead-letter
//! queue) or when a read or a commit failed. A panic fails only its own message.

use crate::error::AwsError;
use crate::event::{parse_body, Body, ObjectRef};
use crate::s3::{s3_client, Fetched, S3Reader};
use crate::settings::{Settings, Sources};
use aws_lambda_events::event::sqs::{BatchItemFailure, SqsBatchResponse, SqsEvent};
use deltaload_lake::{Lake, LoadOptions, LoadOutcome};
use futures::FutureExt;
use std::panic::AssertUnwindSafe;
use tokio::sync::Mutex;
use tracing::Instrument;

/// One SQS message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    pub id: String,
    pub body: String,
}

/// What a batch did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BatchReport {
    /// Ids of the messages to deliver again.
    pub failures: Vec<String>,
    pub messages: usize,
    pub loaded: usize,
    pub skipped: usize,
    pub refused: usize,
    pub missing: usize,
    pub ignored: usize,
}

impl BatchReport {
    /// Adds another report's figures to this one.
    pub fn absorb(&mut self, other: BatchReport) {
        self.failures.extend(other.failures);
        self.messages += other.messages;
        self.loaded += other.loaded;
        self.skipped += other.skipped;
        self.refused += other.refused;
        self.missing += other.missing;
        self.ignored += other.ignored;
    }
}

/// Loads the files that messages announce.
pub struct Handler {
    lake: Mutex<Lake>,
    reader: S3Reader,
    sources: Sources,
}

impl Handler {
    pub fn new(lake: Lake, reader: S3Reader, sources: Sources) -> Self {
        Self {
            lake: Mutex::new(lake),
            reader,
            sources,
        }
    }

    /// Builds the handler from settings: the lake opened (tables created when
    /// missing) and an S3 client from the standard AWS configuration.
    pub async fn from_settings(
        settings: &Settings,
        aws: &aws_config::SdkConfig,
    ) -> Result<Self, AwsError> {
        let lake = Lake::open(&settings.lake_root()?).await?;
        let client = s3_client(aws, settings.endpoint_url.as_deref());
        Ok(Self::new(
            lake,
            S3Reader::new(client, settings.max_object_bytes),
            settings.sources.clone(),
        ))
    }

    /// Handles a batch; never fails as a whole.
    pub async fn handle(&self, messages: &[Message]) -> BatchReport {
        let mut report = BatchReport {
            messages: messages.len(),
            ..BatchReport::default()
        };
        for message in messages {
            let span = tracing::info_span!("message", message_id = %message.id);
            let outcome = AssertUnwindSafe(self.handle_message(message, &mut report))
                .catch_unwind()
                .instrument(span.clone())
                .await;
            let _entered = span.enter();
            match outcome {
                Ok(Ok(())) => {}
                Ok(Err(e)) => {
                    tracing::error!(error = %e, "message failed, it will be delivered again");
                    report.failures.push(message.id.clone());
                }
                Err(_) => {
                    tracing::error!("message handling panicked, it will be delivered again");
                    report.failures.push(message.id.clone());
                }
            }
        }
        report
    }

    /// The Lambda contract: an SQS event in, the messages to retry out.
    pub async fn respond(&self, event: SqsEvent) -> SqsBatchResponse {
        let messages: Vec<Message> = event
            .records
            .into_iter()
            .map(|m| Message {
                id: m.message_id.unwrap_or_default(),
                body: m.body.unwrap_or_default(),
            })
            .collect();
        let report = self.handle(&messages).await;
        let mut response = SqsBatchResponse::default();
        response.batch_item_failures = report
            .failures
            .into_iter()
            .map(|id| {
                let mut failure = BatchItemFailure::default();
                failure.item_identifier = id;
                failure
            })
            .collect();
        response
    }

    async fn handle_message(
        &self,
        message: &Message,
        report: &mut BatchReport,
    ) -> Result<(), AwsError> {
        let objects = match parse_body(&message.body) {
            Ok(Body::Test) => {
                tracing::info!("s3:TestEvent acknowledged");
                return Ok(());
            }
            Ok(Body::Objects { objects, ignored }) => {
                report.ignored += ignored;
                objects
            }
            Err(e) => return Err(e.into()),
        };
        for object in &objects {
            self.handle_object(object, report)
                .instrument(
                    tracing::info_span!("object", bucket = %object.bucket, key = %object.key),
                )
                .await?;
        }
        Ok(())
    }

    async fn handle_object(
        &self,
        object: &ObjectRef,
        report: &mut BatchReport,
    ) -> Result<(), AwsError> {
        if !self.sources.allows(&object.bucket, &object.key) {
            tracing::warn!("object outside the allowed sources: refused, not read");
            report.refused += 1;
            return Ok(());
        }
        let file = match self.reader.fetch(object).await? {
            Fetched::File(file) => file,
            Fetched::Missing => {
                tracing::warn!("object no longer exists: acknowledged");
                report.missing += 1;
                return Ok(());
            }
            Fetched::TooLarge(size) => {
                tracing::warn!(size, "object larger than the configured limit: refused");
                report.refused += 1;
                return Ok(());
            }
        };
        let outcome = self
            .lake
            .lock()
            .await
            .load(&file, LoadOptions::default())
            .await?;
        match outcome {
            LoadOutcome::Loaded(_) => report.loaded += 1,
            LoadOutcome::Skipped { .. } => report.skipped += 1,
            LoadOutcome::Refused(_) => report.refused += 1,
        }
        Ok(())
    }
}
