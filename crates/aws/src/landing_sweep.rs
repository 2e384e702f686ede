//! `deltaload reconcile`: the landing zone's listing compared with the ledger and
//! the tables, file by file; the sweep that catches lost notifications.

use crate::backfill::announce;
use crate::enqueue::Enqueuer;
use crate::error::AwsError;
use crate::listing::{Listed, Lister, S3Prefix, Selection};
use deltaload_lake::{DuplicateKey, Lake, LedgerStatus, OrphanRejects, RecordedVersion};
use serde::Serialize;
use std::collections::{HashMap, HashSet};

/// How many doubled orders are listed at most.
const DUPLICATES_SHOWN: usize = 100;

/// What is wrong with one listed object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum Problem {
    /// No ledger row for this location: a missed event.
    NeverLoaded,
    /// Loaded, but the object's ETag is not one the ledger holds: changed since.
    ChangedSince {
        /// The ETag the ledger holds.
        loaded_etag: Option<String>,
    },
    /// Refused, with the reason.
    Refused {
        /// The ledger's reason.
        reason: Option<String>,
    },
    /// A load started and did not finish.
    Unfinished,
    /// Its reconciliation row does not balance.
    Unbalanced,
}

impl Problem {
    /// Whether loading the file again repairs it.
    pub fn reload_repairs(&self) -> bool {
        matches!(
            self,
            Self::NeverLoaded | Self::ChangedSince { .. } | Self::Unfinished
        )
    }
}

/// One object that is not consistent with the lake.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// The object's key.
    pub key: String,
    /// Its ETag.
    pub etag: Option<String>,
    #[serde(flatten)]
    /// What is wrong.
    pub problem: Problem,
}

/// The outcome of a sweep.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ReconcileReport {
    /// Objects listed.
    pub listed: u64,
    /// Objects the selection took.
    pub checked: u64,
    /// Of those, objects under no source of the spec's datasets (or, with
    /// `--dataset`, under another dataset's): not loaded by design, not checked.
    pub unrouted: u64,
    /// Objects the ledger holds as loaded with their ETag.
    pub consistent: u64,
    /// The others, each with its problem.
    pub findings: Vec<Finding>,
    /// Keys found more than once in a dataset's table (at most 100 per table), with how often.
    pub duplicate_keys: Vec<DuplicateKey>,
    /// Rejected rows whose file version the ledger does not hold as loaded.
    pub orphan_rejects: Vec<OrphanRejects>,
    /// Files sent to the queue for a reload (with `--enqueue`).
    pub enqueued: u64,
}

impl ReconcileReport {
    /// Whether nothing was found.
    pub fn is_consistent(&self) -> bool {
        self.findings.is_empty() && self.duplicate_keys.is_empty() && self.orphan_rejects.is_empty()
    }
}

/// What the ledger says of one listed object.
fn judge(
    rows: Option<&Vec<RecordedVersion>>,
    object: &Listed,
    unbalanced: &HashSet<String>,
    location: &str,
) -> Option<Problem> {
    let Some(rows) = rows.filter(|r| !r.is_empty()) else {
        return Some(Problem::NeverLoaded);
    };
    let same = rows
        .iter()
        .filter(|r| object.etag.is_some() && r.etag == object.etag)
        .max_by_key(|r| r.loaded_at);
    match same {
        Some(r) if r.status == LedgerStatus::Loaded => {
            unbalanced.contains(location).then_some(Problem::Unbalanced)
        }
        Some(r) if r.status == LedgerStatus::Refused => Some(Problem::Refused {
            reason: r.reason.clone(),
        }),
        Some(_) => Some(Problem::Unfinished),
        None => {
            let loaded = rows
                .iter()
                .filter(|r| r.status == LedgerStatus::Loaded)
                .max_by_key(|r| r.loaded_at);
            Some(match loaded {
                Some(r) => Problem::ChangedSince {
                    loaded_etag: r.etag.clone(),
                },
                None => Problem::NeverLoaded,
            })
        }
    }
}

/// Compares the listing under `at` (objects kept by `selection`) with the lake;
/// with `enqueue`, sends every file a reload repairs to that queue.
pub async fn reconcile(
    s3: &aws_sdk_s3::Client,
    lake: &mut Lake,
    at: &S3Prefix,
    selection: &Selection,
    enqueue: Option<(&aws_sdk_sqs::Client, &str, &str)>,
) -> Result<ReconcileReport, AwsError> {
    let root = at.location(&at.prefix);
    let ledger: HashMap<String, Vec<RecordedVersion>> = lake.ledger_files(&root).await?;
    let unbalanced: HashSet<String> = lake.unbalanced_files(&root).await?.into_iter().collect();
    let mut report = ReconcileReport::default();
    let mut enqueuer = enqueue.map(|(sqs, url, _)| Enqueuer::new(sqs, url, None));
    let mut lister = Lister::new(s3, at);
    // Only what a dataset of the lake loads, as backfill announces: the
    // handler refuses the rest unread, so no ledger row would ever hold it.
    let spec = lake.spec().clone();
    while let Some(page) = lister.next_page().await? {
        report.listed += page.len() as u64;
        let mut repairs = Vec::new();
        for object in page.iter().filter(|o| selection.keeps(o)) {
            if spec.route(&at.bucket, &object.key).is_none() {
                report.unrouted += 1;
                continue;
            }
            report.checked += 1;
            let location = at.location(&object.key);
            match judge(ledger.get(&location), object, &unbalanced, &location) {
                None => report.consistent += 1,
                Some(problem) => {
                    if let (true, Some((_, _, region))) = (problem.reload_repairs(), enqueue) {
                        repairs.push(announce(at, object, region, false, "reconcile"));
                    }
                    report.findings.push(Finding {
                        key: object.key.clone(),
                        etag: object.etag.clone(),
                        problem,
                    });
                }
            }
        }
        if let Some(enqueuer) = enqueuer.as_mut() {
            report.enqueued += enqueuer.send(&repairs).await?.sent;
        }
    }
    report.duplicate_keys = lake.duplicate_keys(DUPLICATES_SHOWN).await?;
    report.orphan_rejects = lake
        .orphan_rejects()
        .await?
        .into_iter()
        .filter(|o| o.location.starts_with(&root))
        .collect();
    Ok(report)
}
