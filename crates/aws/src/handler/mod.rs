//! One batch of SQS messages: each body parsed on its own, each announced object
//! loaded into the lake, and the messages that must come back reported.
//!
//! Each object goes to the dataset whose source prefix holds it; the files of
//! all the messages are loaded together, one load per dataset, with one commit
//! per table (see `Lake::load_into`). A message succeeds when all its files
//! loaded, were skipped by the ledger, were refused (bad header, too large,
//! outside the allowed sources or under no dataset's source) or were deleted
//! before they could be read. It fails, so that SQS delivers it again, when its
//! body is not an S3 event (after `maxReceiveCount` it rests in the dead-letter
//! queue) or when a read or a commit failed. A panic fails only its own message.

mod figures;
mod message;
mod reading;

use crate::catalog::Catalog;
pub use crate::deadline::DEFAULT_DEADLINE_MARGIN;
use crate::error::AwsError;
use crate::opening::{LakeSlot, Opening};
pub use crate::report::{BatchReport, DatasetFigures, UNROUTED};
use crate::s3::{s3_client, S3Reader};
use crate::settings::{Settings, Sources};
use aws_lambda_events::event::sqs::{SqsBatchResponse, SqsEvent};
use deltaload_core::Spec;
use deltaload_lake::{Lake, LoadOptions, LoadOutcome, SourceFile};
use futures::FutureExt;
pub use message::{batch_response, Message};
use message::{failed, settle};
use reading::{Group, Reading};
use std::panic::AssertUnwindSafe;
use std::time::{Duration, Instant};
use tracing::Instrument;

/// Loads the files that messages announce.
pub struct Handler {
    lake: LakeSlot,
    reader: S3Reader,
    sources: Sources,
    /// The lake's datasets: where each object goes.
    spec: Spec,
    /// Print one EMF line per batch on stdout, in this namespace.
    metrics: Option<String>,
    /// No message is read and no load started with less than this left.
    deadline_margin: Duration,
    /// The Glue database the lake's tables are registered in after loads.
    catalog: Option<Catalog>,
    /// Where a test asked to abort the process.
    #[cfg(feature = "faults")]
    fault: Option<deltaload_lake::FaultPoint>,
}

impl Handler {
    /// A handler of an open lake, reading objects with `reader` from `sources`.
    pub fn new(lake: Lake, reader: S3Reader, sources: Sources) -> Self {
        let spec = lake.spec().clone();
        Self::with_slot(LakeSlot::open(lake), spec, reader, sources)
    }

    fn with_slot(lake: LakeSlot, spec: Spec, reader: S3Reader, sources: Sources) -> Self {
        Self {
            spec,
            lake,
            reader,
            sources,
            metrics: None,
            deadline_margin: DEFAULT_DEADLINE_MARGIN,
            catalog: None,
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

    /// Registers the lake's tables in `catalog` after each batch that loaded
    /// (a call only for a table this process has not registered as it is).
    pub fn with_catalog(mut self, catalog: Catalog) -> Self {
        self.catalog = Some(catalog);
        self
    }

    /// Prints the figures of every batch as CloudWatch EMF on stdout.
    pub fn with_metrics(mut self, namespace: impl Into<String>) -> Self {
        self.metrics = Some(namespace.into());
        self
    }

    /// Builds the handler from settings: the lake of `spec` opened (tables
    /// created when missing) and an S3 client from the standard AWS configuration.
    pub async fn from_settings(
        settings: &Settings,
        spec: &Spec,
        aws: &aws_config::SdkConfig,
    ) -> Result<Self, AwsError> {
        let lake = opening(settings, spec)?.open().await?;
        Ok(Self::configured(LakeSlot::open(lake), settings, spec, aws))
    }

    /// Like [`Handler::from_settings`], with the lake opened in the background
    /// from now on (the Lambda's cold start): the first batch reads its
    /// objects meanwhile and waits for the lake only to load them. A lake that
    /// cannot be opened fails the batch's messages, with the reason logged,
    /// and the next batch tries again.
    pub fn opening_in_background(
        settings: &Settings,
        spec: &Spec,
        aws: &aws_config::SdkConfig,
    ) -> Result<Self, AwsError> {
        Ok(Self::configured(
            LakeSlot::in_background(opening(settings, spec)?),
            settings,
            spec,
            aws,
        ))
    }

    fn configured(
        lake: LakeSlot,
        settings: &Settings,
        spec: &Spec,
        aws: &aws_config::SdkConfig,
    ) -> Self {
        let client = s3_client(aws, settings.endpoint_url.as_deref());
        let reader = S3Reader::new(client, settings.max_object_bytes)
            .with_budget(settings.memory_budget.clone());
        let mut handler = Self::with_slot(lake, spec.clone(), reader, settings.sources.clone())
            .with_deadline_margin(settings.deadline_margin);
        if let Some(database) = &settings.glue_database {
            handler = handler.with_catalog(Catalog::new(aws, database));
        }
        match &settings.metrics_namespace {
            Some(namespace) => handler.with_metrics(namespace.clone()),
            None => handler,
        }
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
        self.reader.new_batch();
        let margin = deadline.map_or(self.deadline_margin, |d| {
            crate::deadline::margin_for(
                self.deadline_margin,
                d.saturating_duration_since(Instant::now()),
            )
        });
        let near = || deadline.is_some_and(|d| Instant::now() + margin >= d);
        let started = Instant::now();
        let groups = self.reading().read_all(messages, &near, &mut report).await;
        tracing::debug!(
            fetch_ms = started.elapsed().as_millis() as u64,
            messages = messages.len(),
            "batch read"
        );
        let loads = groups.values().any(|g| !g.ready.is_empty());
        for ((force, ds), group) in groups {
            if near() {
                for (message, _) in &group.ready {
                    tracing::warn!(message_id = %message.id, "invocation deadline near: load not started, message left for redelivery");
                    report.fail(&message.id);
                }
                continue;
            }
            let opts = LoadOptions {
                force,
                ..LoadOptions::default()
            };
            self.load_group(ds, group, opts, &mut report).await;
        }
        if loads && !near() {
            let left = deadline.map(|d| d.saturating_duration_since(Instant::now() + margin));
            report.catalog_failed = self.sync_catalog(left).await;
        }
        self.publish(&mut report);
        report
    }

    /// What reading the batch's messages needs: the reader, the allowed
    /// sources and the datasets.
    fn reading(&self) -> Reading<'_> {
        Reading {
            reader: &self.reader,
            sources: &self.sources,
            spec: &self.spec,
        }
    }

    async fn load_group(
        &self,
        ds: usize,
        group: Group<'_>,
        opts: LoadOptions,
        report: &mut BatchReport,
    ) {
        let Group { files, ready } = group;
        if ready.is_empty() {
            return;
        }
        let started = std::time::Instant::now();
        let retries_before = self.lake.commit_retries().await;
        self.load_ready(ds, files, &ready, opts, report).await;
        let elapsed = started.elapsed().as_millis() as u64;
        let retries = self.lake.commit_retries().await - retries_before;
        let spent = DatasetFigures {
            load_ms: elapsed,
            retries: retries as usize,
            ..DatasetFigures::default()
        };
        report.add(&self.spec.datasets[ds].name, &spent);
    }

    /// Loads the messages' files together, else each message's alone (kept,
    /// shared without a copy, only when there are several messages).
    async fn load_ready(
        &self,
        ds: usize,
        files: Vec<SourceFile>,
        ready: &[(&Message, std::ops::Range<usize>)],
        opts: LoadOptions,
        report: &mut BatchReport,
    ) {
        let dataset = self.spec.datasets[ds].name.as_str();
        let span = tracing::info_span!(
            "batch",
            dataset,
            messages = ready.len(),
            files = files.len(),
            force = opts.force
        );
        let (all, kept) = match ready.len() {
            1 => (files, Vec::new()),
            _ => (files.clone(), files),
        };
        let together = AssertUnwindSafe(self.load(dataset, all, opts))
            .catch_unwind()
            .instrument(span.clone())
            .await;
        match settle(together) {
            Ok(outcomes) => self.tally(report, ds, &outcomes),
            Err(e) if ready.len() == 1 => {
                let _entered = span.enter();
                failed(&e);
                report.fail(&ready[0].0.id);
            }
            Err(e) => {
                span.in_scope(|| {
                    tracing::warn!(error = %e, "batch load failed; loading each message on its own")
                });
                for (message, range) in ready {
                    let span = tracing::info_span!("message", message_id = %message.id);
                    let alone =
                        AssertUnwindSafe(self.load(dataset, kept[range.clone()].to_vec(), opts))
                            .catch_unwind()
                            .instrument(span.clone())
                            .await;
                    let _entered = span.enter();
                    match settle(alone) {
                        Ok(outcomes) => self.tally(report, ds, &outcomes),
                        Err(e) => {
                            failed(&e);
                            report.fail(&message.id);
                        }
                    }
                }
            }
        }
    }

    /// The lake, once open, held by this caller alone.
    pub(crate) async fn lake_mut(
        &self,
    ) -> Result<tokio::sync::MappedMutexGuard<'_, Lake>, AwsError> {
        self.lake.get().await
    }

    /// The namespace of the EMF lines, when metrics are on.
    pub(crate) fn metrics_namespace(&self) -> Option<&str> {
        self.metrics.as_deref()
    }

    async fn load(
        &self,
        dataset: &str,
        files: Vec<SourceFile>,
        opts: LoadOptions,
    ) -> Result<Vec<LoadOutcome>, AwsError> {
        #[cfg(feature = "faults")]
        let opts = LoadOptions {
            fault: self.fault,
            ..opts
        };
        let mut lake = self.lake.get().await?;
        Ok(lake.load_into(dataset, files, opts).await?)
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
}

/// What the settings open: their lake, with `spec`'s datasets and their engine.
fn opening(settings: &Settings, spec: &Spec) -> Result<Opening, AwsError> {
    Ok(Opening {
        root: settings.lake_root()?,
        spec: spec.clone(),
        engine: settings.engine,
        budget: settings.memory_budget.clone(),
        auto_compact: settings.auto_compact,
    })
}

#[cfg(test)]
mod tests;
