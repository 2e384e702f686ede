//! `deltaload backfill`: existing objects re-announced on the queue as S3
//! notifications, so that the Lambda and `serve` load them with no second path.

use crate::enqueue::{Enqueuer, Sent};
use crate::error::AwsError;
use crate::event::{created_body, ObjectRef};
use crate::listing::{Listed, Lister, S3Prefix, Selection};
use deltaload_lake::{Lake, LedgerStatus, RecordedVersion};
use std::collections::HashMap;

/// What to backfill.
#[derive(Debug, Clone)]
pub struct BackfillOptions {
    /// The bucket and prefix listed.
    pub at: S3Prefix,
    /// Which listed objects are taken.
    pub selection: Selection,
    /// The queue the notifications are sent to.
    pub queue_url: String,
    /// List and count, send nothing.
    pub dry_run: bool,
    /// Messages per second at most.
    pub rate: Option<u32>,
    /// Enqueue files the ledger holds too, marked to be reprocessed.
    pub force: bool,
    /// Written into the notifications, as S3 does.
    pub region: String,
}

/// The figures of a backfill, also reported as it goes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct BackfillReport {
    /// Objects listed under the prefix.
    pub listed: u64,
    /// Listed objects the selection (--since, --until, --match) kept, and
    /// the lake's datasets would load (under a dataset's source).
    pub selected: u64,
    /// Selected objects the ledger holds with the same ETag (loaded or refused).
    pub already_loaded: u64,
    /// Messages enqueued (or, in a dry run, that would have been).
    pub enqueued: u64,
    /// Messages SQS refused.
    pub failed: u64,
}

/// Whether the ledger holds this object, with this ETag, as loaded or refused
/// after reading it. An object refused unread (too large for the limits of
/// the time, content id `unread:...`) is not held: a backfill after the limits
/// were raised offers it again.
pub fn held(
    ledger: &HashMap<String, Vec<RecordedVersion>>,
    location: &str,
    etag: Option<&str>,
) -> bool {
    let Some(etag) = etag else { return false };
    ledger.get(location).is_some_and(|rows| {
        rows.iter().any(|r| {
            r.etag.as_deref() == Some(etag)
                && match r.status {
                    LedgerStatus::Loaded => true,
                    LedgerStatus::Refused => !r.content_id.starts_with(deltaload_lake::UNREAD),
                    _ => false,
                }
        })
    })
}

/// The notification announcing a listed object.
pub fn announce(at: &S3Prefix, object: &Listed, region: &str, force: bool, origin: &str) -> String {
    let object = ObjectRef {
        bucket: at.bucket.clone(),
        key: object.key.clone(),
        size: Some(object.size),
        etag: object.etag.clone(),
        version_id: None,
    };
    created_body(&object, region, force, origin)
}

/// Lists the prefix page by page and enqueues what the ledger does not hold;
/// `progress` sees the figures after every page.
pub async fn backfill(
    s3: &aws_sdk_s3::Client,
    sqs: &aws_sdk_sqs::Client,
    lake: &mut Lake,
    opts: &BackfillOptions,
    progress: &mut dyn FnMut(&BackfillReport),
) -> Result<BackfillReport, AwsError> {
    let ledger = if opts.force {
        HashMap::new()
    } else {
        lake.ledger_files(&opts.at.location(&opts.at.prefix))
            .await?
    };
    // Only what some dataset of the lake loads: the handler refuses the rest
    // unread, and with --dataset the lake holds that dataset alone.
    let spec = lake.spec().clone();
    let routed = |o: &&Listed| spec.route(&opts.at.bucket, &o.key).is_some();
    let mut report = BackfillReport::default();
    let mut lister = Lister::new(s3, &opts.at);
    let mut enqueuer = Enqueuer::new(sqs, &opts.queue_url, opts.rate);
    while let Some(page) = lister.next_page().await? {
        report.listed += page.len() as u64;
        let mut bodies = Vec::new();
        for object in page
            .iter()
            .filter(|o| opts.selection.keeps(o))
            .filter(routed)
        {
            report.selected += 1;
            if !opts.force
                && held(
                    &ledger,
                    &opts.at.location(&object.key),
                    object.etag.as_deref(),
                )
            {
                report.already_loaded += 1;
                continue;
            }
            bodies.push(announce(
                &opts.at,
                object,
                &opts.region,
                opts.force,
                "backfill",
            ));
        }
        let sent = if opts.dry_run {
            Sent {
                sent: bodies.len() as u64,
                failed: 0,
            }
        } else {
            enqueuer.send(&bodies).await?
        };
        report.enqueued += sent.sent;
        report.failed += sent.failed;
        progress(&report);
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(content_id: &str, status: LedgerStatus) -> RecordedVersion {
        RecordedVersion {
            content_id: content_id.to_string(),
            etag: Some("e1".to_string()),
            status,
            reason: None,
            loaded_at: 0,
        }
    }

    #[test]
    fn an_object_refused_unread_is_offered_again_one_refused_once_read_is_not() {
        let at = |r: RecordedVersion| HashMap::from([("s3://b/k".to_string(), vec![r])]);
        let unread = at(row("unread:etag:e1", LedgerStatus::Refused));
        assert!(!held(&unread, "s3://b/k", Some("e1")));
        let read = at(row("sha256:ab", LedgerStatus::Refused));
        assert!(held(&read, "s3://b/k", Some("e1")));
        let loaded = at(row("sha256:ab", LedgerStatus::Loaded));
        assert!(held(&loaded, "s3://b/k", Some("e1")));
        assert!(!held(&loaded, "s3://b/k", Some("e2")));
    }
}
