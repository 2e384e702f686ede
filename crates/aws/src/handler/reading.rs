//! A batch's messages read: each body parsed, the objects it announces fetched
//! (several messages at once, the outcomes kept in message order) and grouped by
//! dataset for the loads.

use super::message::{failed, settle, Message};
use crate::error::AwsError;
use crate::event::{parse_body, Body, ObjectRef};
use crate::report::{BatchReport, DatasetFigures, UNROUTED};
use crate::s3::{Fetched, S3Reader};
use crate::settings::Sources;
use deltaload_core::Spec;
use deltaload_lake::SourceFile;
use futures::{FutureExt, StreamExt};
use std::collections::BTreeMap;
use std::panic::AssertUnwindSafe;
use tracing::Instrument;

/// Messages whose objects are fetched at the same time: small objects cost a
/// round trip each, which a batch of hundreds would otherwise pay one by one.
const READS_AT_ONCE: usize = 16;

/// Messages read and ready to load together, with the range of `files` each owns.
#[derive(Default)]
pub(crate) struct Group<'a> {
    pub files: Vec<SourceFile>,
    pub ready: Vec<(&'a Message, std::ops::Range<usize>)>,
}

impl<'a> Group<'a> {
    fn add(&mut self, message: &'a Message, files: Vec<SourceFile>) {
        let start = self.files.len();
        self.files.extend(files);
        self.ready.push((message, start..self.files.len()));
    }
}

/// The files a message announces, each with its dataset, and whether the
/// message asks to reprocess them.
type Read = (Vec<(usize, SourceFile)>, bool);

/// What reading a batch's messages needs of its handler.
pub(crate) struct Reading<'h> {
    /// Reads the announced objects.
    pub reader: &'h S3Reader,
    /// Where objects may be read from.
    pub sources: &'h Sources,
    /// The lake's datasets: where each object goes.
    pub spec: &'h Spec,
}

impl Reading<'_> {
    /// Reads every message's objects (none once the deadline is near), by
    /// (force, dataset): the files of messages marked `force` load apart.
    pub(crate) async fn read_all<'m>(
        &self,
        messages: &'m [Message],
        near: &dyn Fn() -> bool,
        report: &mut BatchReport,
    ) -> BTreeMap<(bool, usize), Group<'m>> {
        let mut reads = futures::stream::iter(messages)
            .map(|message| self.read_one(message, near))
            .buffered(READS_AT_ONCE);
        let mut groups: BTreeMap<(bool, usize), Group> = BTreeMap::new();
        while let Some((message, own, outcome, span)) = reads.next().await {
            report.absorb(own);
            let _entered = span.enter();
            match outcome {
                None => {
                    tracing::warn!("invocation deadline near: message left for redelivery");
                    report.fail(&message.id);
                }
                Some(Ok((read, force))) => {
                    let mut by_dataset: BTreeMap<usize, Vec<SourceFile>> = BTreeMap::new();
                    for (ds, file) in read {
                        by_dataset.entry(ds).or_default().push(file);
                    }
                    for (ds, files) in by_dataset {
                        groups.entry((force, ds)).or_default().add(message, files);
                    }
                }
                Some(Err(e)) => {
                    failed(&e);
                    report.fail(&message.id);
                }
            }
        }
        groups
    }

    /// Reads one message, unless the deadline is near: the message, its own
    /// figures, what it read (a panic becomes its error) and its span.
    async fn read_one<'m>(
        &self,
        message: &'m Message,
        near: &dyn Fn() -> bool,
    ) -> (
        &'m Message,
        BatchReport,
        Option<Result<Read, AwsError>>,
        tracing::Span,
    ) {
        let span = tracing::info_span!("message", message_id = %message.id);
        let mut own = BatchReport::default();
        if near() {
            return (message, own, None, span);
        }
        let outcome = AssertUnwindSafe(self.read_message(message, &mut own))
            .catch_unwind()
            .instrument(span.clone())
            .await;
        (message, own, Some(settle(outcome)), span)
    }

    /// Reads the objects a message announces; the files to load come back, each
    /// with the index of its dataset, and whether the message asks to reprocess them.
    pub(crate) async fn read_message(
        &self,
        message: &Message,
        report: &mut BatchReport,
    ) -> Result<Read, AwsError> {
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
    ) -> Result<Option<(usize, SourceFile)>, AwsError> {
        let Some(ds) = self.dataset_of(object, report) else {
            return Ok(None);
        };
        let fetched = self.reader.fetch(object).await?;
        Ok(self.received(ds, object, fetched, report))
    }

    /// The dataset (its index) `object` loads into; none, the object
    /// refused unread and counted, when it lies outside the allowed
    /// sources or under no dataset's source.
    fn dataset_of(&self, object: &ObjectRef, report: &mut BatchReport) -> Option<usize> {
        let one_refused = DatasetFigures {
            refused: 1,
            ..DatasetFigures::default()
        };
        // Refused before reaching a dataset: counted under the only one, if so.
        let unrouted = match self.spec.datasets.as_slice() {
            [only] => only.name.as_str(),
            _ => UNROUTED,
        };
        if !self.sources.allows(&object.bucket, &object.key) {
            tracing::warn!("object outside the allowed sources: refused, not read");
            report.add(unrouted, &one_refused);
            return None;
        }
        let ds = self
            .spec
            .route(&object.bucket, &object.key)
            .and_then(|d| self.spec.datasets.iter().position(|o| o.name == d.name));
        if ds.is_none() {
            tracing::warn!("object under no dataset's source: refused, not read");
            report.add(unrouted, &one_refused);
        }
        ds
    }

    /// What a fetch of `object` gave, for dataset `ds`: its file to load, a
    /// file refused unread (the load records the version refused in the
    /// ledger), or nothing for an object that no longer exists.
    fn received(
        &self,
        ds: usize,
        object: &ObjectRef,
        fetched: Fetched,
        report: &mut BatchReport,
    ) -> Option<(usize, SourceFile)> {
        let unread = |size: u64, reason: String| {
            let location = format!("s3://{}/{}", object.bucket, object.key);
            let (etag, version) = (object.etag.clone(), object.version_id.clone());
            let file = SourceFile::refused_unread(location, size, etag, version, reason);
            Some((ds, file))
        };
        match fetched {
            Fetched::File(file) => Some((ds, file)),
            Fetched::Missing(problem) => {
                tracing::warn!(
                    version = %object.version_id.as_deref().unwrap_or("-"),
                    %problem,
                    "object or version does not exist: acknowledged like a deleted object, not retried"
                );
                report.missing += 1;
                None
            }
            Fetched::TooLarge(size) => {
                tracing::warn!(size, "object larger than the configured limit: refused");
                let limit = self.reader.max_bytes();
                unread(
                    size,
                    format!("larger than the configured limit of {limit} bytes (MaxObjectBytes, --max-object-bytes)"),
                )
            }
            Fetched::NoRoom { size, space } => {
                tracing::warn!(
                    size,
                    space,
                    "object too large for the spill directory: refused"
                );
                unread(
                    size,
                    format!(
                        "too large to load within the memory budget with a spill directory of \
                         {space} bytes (it needs about {} bytes there; raise EphemeralStorage \
                         or --spill-space, or the memory budget)",
                        size.saturating_mul(deltaload_lake::budget::SPILL_FACTOR)
                    ),
                )
            }
            Fetched::Unreadable(why) => {
                tracing::warn!(reason = %why, "compressed object refused");
                unread(
                    object.size.unwrap_or(0),
                    format!("compressed object refused: {why}"),
                )
            }
        }
    }
}
