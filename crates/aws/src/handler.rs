//! One batch of SQS messages: each body parsed on its own, each announced object
//! loaded into the lake, and the messages that must come back reported.
//!
//! The files of all the messages are loaded together, with one commit per table
//! (see `Lake::load_batch`). A message succeeds when all its files loaded, were
//! skipped by the ledger, were refused (bad header, too large, outside the allowed
//! sources) or were deleted before they could be read. It fails, so that SQS delivers it again, when its
//! body is not an S3 event (after `maxReceiveCount` it rests in the dead-letter
//! queue) or when a read or a commit failed. A panic fails only its own message.

use crate::error::AwsError;
use crate::event::{parse_body, Body, ObjectRef};
use crate::s3::{s3_client, Fetched, S3Reader};
use crate::settings::{Settings, Sources};
use aws_lambda_events::event::sqs::{BatchItemFailure, SqsBatchResponse, SqsEvent};
use deltaload_lake::{Lake, LoadOptions, LoadOutcome, SourceFile};
use futures::FutureExt;
use std::panic::AssertUnwindSafe;
use std::time::{Duration, Instant};
use tokio::sync::Mutex;

/// Time kept in hand before an invocation's deadline: enough for one batch load
/// to finish its commits.
pub const DEFAULT_DEADLINE_MARGIN: Duration = Duration::from_secs(30);
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
    /// Figures of the files loaded (not of those skipped or refused).
    pub records: u64,
    pub rejected: u64,
    pub duplicates: u64,
    pub inserted: u64,
    pub updated: u64,
    pub stale: u64,
    /// Load rounds run again after a commit conflict with another writer.
    pub retries: usize,
    /// Time spent loading, in milliseconds.
    pub load_ms: u64,
}

impl BatchReport {
    /// The summary line of `serve --once`: messages and files, then the figures
    /// of the files loaded (records = rejected + duplicates + inserted + updated + stale).
    pub fn summary(&self) -> String {
        format!(
            "{} messages, {} files loaded, {} skipped, {} refused, {} missing, {} failed; \
             {} records: {} rejected, {} duplicates, {} inserted, {} updated, {} stale",
            self.messages,
            self.loaded,
            self.skipped,
            self.refused,
            self.missing,
            self.failures.len(),
            self.records,
            self.rejected,
            self.duplicates,
            self.inserted,
            self.updated,
            self.stale
        )
    }

    /// Adds another report's figures to this one.
    pub fn absorb(&mut self, other: BatchReport) {
        self.failures.extend(other.failures);
        self.messages += other.messages;
        self.loaded += other.loaded;
        self.skipped += other.skipped;
        self.refused += other.refused;
        self.missing += other.missing;
        self.ignored += other.ignored;
        self.records += other.records;
        self.rejected += other.rejected;
        self.duplicates += other.duplicates;
        self.inserted += other.inserted;
        self.updated += other.updated;
        self.stale += other.stale;
        self.retries += other.retries;
        self.load_ms += other.load_ms;
    }
}

/// Messages read and ready to load together, with the range of `files` each owns.
#[derive(Default)]
struct Group<'a> {
    files: Vec<SourceFile>,
    ready: Vec<(&'a Message, std::ops::Range<usize>)>,
}

/// Loads the files that messages announce.
pub struct Handler {
    lake: Mutex<Lake>,
    reader: S3Reader,
    sources: Sources,
    /// Print one EMF line per batch on stdout, in this namespace.
    metrics: Option<String>,
    /// No message is read and no load started with less than this left.
    deadline_margin: Duration,
    /// Where a test asked to abort the process.
    #[cfg(feature = "faults")]
    fault: Option<deltaload_lake::FaultPoint>,
}

impl Handler {
    pub fn new(lake: Lake, reader: S3Reader, sources: Sources) -> Self {
        Self {
            lake: Mutex::new(lake),
            reader,
            sources,
            metrics: None,
            deadline_margin: DEFAULT_DEADLINE_MARGIN,
            #[cfg(feature = "faults")]
            fault: None,
        }
    }

    /// Aborts the process at `fault` (tests only).
    #[cfg(feature = "faults")]
    pub fn with_fault(mut self, fault: Option<deltaload_lake::FaultPoint>) -> Self {
        self.fault = fault;
        self
    }

    /// Where a test asked to abort the process.
    #[cfg(feature = "faults")]
    pub(crate) fn fault(&self) -> Option<deltaload_lake::FaultPoint> {
        self.fault
    }

    /// Stops reading and loading when less than `margin` is left before a deadline.
    pub fn with_deadline_margin(mut self, margin: Duration) -> Self {
        self.deadline_margin = margin;
        self
    }

    /// Prints the figures of every batch as CloudWatch EMF on stdout.
    pub fn with_metrics(mut self, namespace: impl Into<String>) -> Self {
        self.metrics = Some(namespace.into());
        self
    }

    /// Builds the handler from settings: the lake opened (tables created when
    /// missing) and an S3 client from the standard AWS configuration.
    pub async fn from_settings(
        settings: &Settings,
        aws: &aws_config::SdkConfig,
    ) -> Result<Self, AwsError> {
        let lake = Lake::open(&settings.lake_root()?).await?;
        let client = s3_client(aws, settings.endpoint_url.as_deref());
        let handler = Self::new(
            lake,
            S3Reader::new(client, settings.max_object_bytes),
            settings.sources.clone(),
        );
        let handler = handler.with_deadline_margin(settings.deadline_margin);
        Ok(match &settings.metrics_namespace {
            Some(namespace) => handler.with_metrics(namespace.clone()),
            None => handler,
        })
    }

    /// Handles a batch; never fails as a whole. Every message's objects are read
    /// first, then all the files are loaded together (one commit per table; the
    /// files of messages marked `force` in a second load); when a load fails, each
    /// of its messages' files are loaded on their own, so that a failure stays
    /// with the message that caused it.
    pub async fn handle(&self, messages: &[Message]) -> BatchReport {
        self.handle_until(messages, None).await
    }

    /// Like [`Handler::handle`], for an invocation that ends at `deadline`: once
    /// less than the deadline margin is left (the configured margin, at most a
    /// quarter of the time left when the batch starts), no further message is
    /// read and no load is started; those messages are reported as failures, to
    /// come back, rather than being cut off in the middle of a commit.
    pub async fn handle_until(
        &self,
        messages: &[Message],
        deadline: Option<Instant>,
    ) -> BatchReport {
        let mut report = BatchReport {
            messages: messages.len(),
            ..BatchReport::default()
        };
        let margin = deadline.map_or(self.deadline_margin, |d| {
            crate::deadline::margin_for(
                self.deadline_margin,
                d.saturating_duration_since(Instant::now()),
            )
        });
        let near = || deadline.is_some_and(|d| Instant::now() + margin >= d);
        let retries_before = self.lake.lock().await.commit_retries();
        let mut groups = [Group::default(), Group::default()];
        for message in messages {
            let span = tracing::info_span!("message", message_id = %message.id);
            if near() {
                span.in_scope(|| {
                    tracing::warn!("invocation deadline near: message left for redelivery")
                });
                report.failures.push(message.id.clone());
                continue;
            }
            let outcome = AssertUnwindSafe(self.read_message(message, &mut report))
                .catch_unwind()
                .instrument(span.clone())
                .await;
            let _entered = span.enter();
            match settle(outcome) {
                Ok((read, _)) if read.is_empty() => {}
                Ok((read, force)) => {
                    let group = &mut groups[usize::from(force)];
                    let start = group.files.len();
                    group.files.extend(read);
                    group.ready.push((message, start..group.files.len()));
                }
                Err(e) => {
                    failed(&e);
                    report.failures.push(message.id.clone());
                }
            }
        }
        for (force, group) in [false, true].into_iter().zip(&groups) {
            if near() {
                for (message, _) in &group.ready {
                    tracing::warn!(message_id = %message.id, "invocation deadline near: load not started, message left for redelivery");
                    report.failures.push(message.id.clone());
                }
                continue;
            }
            let opts = LoadOptions {
                force,
                ..LoadOptions::default()
            };
            self.load_group(group, opts, &mut report).await;
        }
        let retries = self.lake.lock().await.commit_retries() - retries_before;
        report.retries += retries as usize;
        if let Some(namespace) = &self.metrics {
            let now = chrono::Utc::now().timestamp_millis();
            println!("{}", crate::metrics::emf(namespace, &report, now));
        }
        report
    }

    async fn load_group(&self, group: &Group<'_>, opts: LoadOptions, report: &mut BatchReport) {
        let Group { files, ready } = group;
        if ready.is_empty() {
            return;
        }
        let started = std::time::Instant::now();
        self.load_ready(files, ready, opts, report).await;
        report.load_ms += started.elapsed().as_millis() as u64;
    }

    async fn load_ready(
        &self,
        files: &[SourceFile],
        ready: &[(&Message, std::ops::Range<usize>)],
        opts: LoadOptions,
        report: &mut BatchReport,
    ) {
        let span = tracing::info_span!(
            "batch",
            messages = ready.len(),
            files = files.len(),
            force = opts.force
        );
        let together = AssertUnwindSafe(self.load(files, opts))
            .catch_unwind()
            .instrument(span.clone())
            .await;
        match settle(together) {
            Ok(outcomes) => tally(report, &outcomes),
            Err(e) if ready.len() == 1 => {
                let _entered = span.enter();
                failed(&e);
                report.failures.push(ready[0].0.id.clone());
            }
            Err(e) => {
                span.in_scope(|| {
                    tracing::warn!(error = %e, "batch load failed; loading each message on its own")
                });
                for (message, range) in ready {
                    let span = tracing::info_span!("message", message_id = %message.id);
                    let alone = AssertUnwindSafe(self.load(&files[range.clone()], opts))
                        .catch_unwind()
                        .instrument(span.clone())
                        .await;
                    let _entered = span.enter();
                    match settle(alone) {
                        Ok(outcomes) => tally(report, &outcomes),
                        Err(e) => {
                            failed(&e);
                            report.failures.push(message.id.clone());
                        }
                    }
                }
            }
        }
    }

    async fn load(
        &self,
        files: &[SourceFile],
        opts: LoadOptions,
    ) -> Result<Vec<LoadOutcome>, AwsError> {
        #[cfg(feature = "faults")]
        let opts = LoadOptions {
            fault: self.fault,
            ..opts
        };
        let mut lake = self.lake.lock().await;
        Ok(lake.load_batch(files, opts).await?)
    }

    /// The Lambda contract: an SQS event in, the messages to retry out.
    pub async fn respond(&self, event: SqsEvent) -> SqsBatchResponse {
        self.respond_until(event, None).await
    }

    /// [`Handler::respond`] for an invocation that ends at `deadline`.
    pub async fn respond_until(
        &self,
        event: SqsEvent,
        deadline: Option<Instant>,
    ) -> SqsBatchResponse {
        let messages: Vec<Message> = event
            .records
            .into_iter()
            .map(|m| Message {
                id: m.message_id.unwrap_or_default(),
                body: m.body.unwrap_or_default(),
            })
            .collect();
        batch_response(self.handle_until(&messages, deadline).await)
    }

    /// Reads the objects a message announces; the files to load come back, and
    /// whether the message asks to reprocess them.
    async fn read_message(
        &self,
        message: &Message,
        report: &mut BatchReport,
    ) -> Result<(Vec<SourceFile>, bool), AwsError> {
        let (objects, force) = match parse_body(&message.body) {
            Ok(Body::Test) => {
                tracing::info!("s3:TestEvent acknowledged");
                return Ok((Vec::new(), false));
            }
            Ok(Body::Objects {
                objects,
                ignored,
                force,
            }) => {
                report.ignored += ignored;
                (objects, force)
            }
            Err(e) => return Err(e.into()),
        };
        let mut files = Vec::with_capacity(objects.len());
        for object in &objects {
            let span = tracing::info_span!("object", bucket = %object.bucket, key = %object.key);
            if let Some(file) = self.read_object(object, report).instrument(span).await? {
                files.push(file);
            }
        }
        Ok((files, force))
    }

    async fn read_object(
        &self,
        object: &ObjectRef,
        report: &mut BatchReport,
    ) -> Result<Option<SourceFile>, AwsError> {
        if !self.sources.allows(&object.bucket, &object.key) {
            tracing::warn!("object outside the allowed sources: refused, not read");
            report.refused += 1;
            return Ok(None);
        }
        match self.reader.fetch(object).await? {
            Fetched::File(file) => Ok(Some(file)),
            Fetched::Missing(problem) => {
                tracing::warn!(
                    version = %object.version_id.as_deref().unwrap_or("-"),
                    %problem,
                    "object or version does not exist: acknowledged like a deleted object, not retried"
                );
                report.missing += 1;
                Ok(None)
            }
            Fetched::TooLarge(size) => {
                tracing::warn!(size, "object larger than the configured limit: refused");
                report.refused += 1;
                Ok(None)
            }
            Fetched::Unreadable(why) => {
                tracing::warn!(reason = %why, "compressed object refused");
                report.refused += 1;
                Ok(None)
            }
        }
    }
}

/// The response Lambda expects: the messages to deliver again.
pub fn batch_response(report: BatchReport) -> SqsBatchResponse {
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

/// Logs a message's failure: what failed in a line at ERROR, the error's full
/// structure (the SDK's, for S3) at DEBUG only.
fn failed(e: &AwsError) {
    tracing::error!(error = %e, "message failed, it will be delivered again");
    tracing::debug!(error = ?e, "the failure in full");
}

/// A panic becomes an error of its message.
fn settle<T>(
    outcome: Result<Result<T, AwsError>, Box<dyn std::any::Any + Send>>,
) -> Result<T, AwsError> {
    outcome.unwrap_or_else(|_| Err(AwsError::Panicked))
}

fn tally(report: &mut BatchReport, outcomes: &[LoadOutcome]) {
    for outcome in outcomes {
        match outcome {
            LoadOutcome::Loaded(done) => {
                let f = done.figures;
                report.loaded += 1;
                report.records += f.records;
                report.rejected += f.rejected;
                report.duplicates += f.duplicates;
                report.inserted += f.inserted;
                report.updated += f.updated;
                report.stale += f.stale;
            }
            LoadOutcome::Skipped { .. } => report.skipped += 1,
            LoadOutcome::Refused(_) => report.refused += 1,
        }
    }
}
