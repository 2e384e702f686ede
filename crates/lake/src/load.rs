//! The load of one file version, in an order that makes every step safe to repeat:
//! rejects (replaced), orders (MERGE, only newer), reconciliation (replaced),
//! and the ledger last, so the ledger never claims work that did not finish.

use crate::batches;
use crate::error::LakeError;
use crate::ledger::{LedgerEntry, LedgerStatus, Seen};
use crate::schema::TableName;
use crate::table::{file_version, refresh, replace_where, sql_string};
use crate::Lake;
use deltaload_core::{newest_per_order, read_changes, ContentId, HeaderMismatch, Reconciliation};
use tracing::Instrument;

/// A file to load, wherever it came from.
#[derive(Debug, Clone)]
pub struct SourceFile {
    /// Canonical location: an absolute path, or `s3://bucket/key`.
    pub location: String,
    /// The whole content.
    pub bytes: Vec<u8>,
    /// The object's ETag, when the store has one.
    pub etag: Option<String>,
    /// The object's version id, when the store has one.
    pub version_id: Option<String>,
}

/// A file that was loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loaded {
    pub figures: Reconciliation,
    /// The `orders` version after this file (no commit is made when nothing changed).
    pub orders_version: Option<u64>,
    /// The orders commit was found from an earlier, interrupted load of the same file.
    pub recovered: bool,
}

/// What became of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadOutcome {
    Loaded(Loaded),
    /// The ledger already holds this file version as loaded.
    Skipped {
        orders_version: Option<u64>,
    },
    /// The header breaks the contract; nothing but the ledger row was written.
    Refused(HeaderMismatch),
}

/// Where a test can stop a load dead (compiled only with the `faults` feature).
#[cfg(feature = "faults")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultPoint {
    AfterRead,
    AfterRejected,
    AfterOrders,
    AfterReconciliation,
    AfterLedger,
}

#[cfg(feature = "faults")]
impl FaultPoint {
    /// Parses the names used by `DELTALOAD_FAULT`.
    pub fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "after-read" => Self::AfterRead,
            "after-rejected" => Self::AfterRejected,
            "after-orders" => Self::AfterOrders,
            "after-reconciliation" => Self::AfterReconciliation,
            "after-ledger" => Self::AfterLedger,
            _ => return None,
        })
    }
}

/// Options of a load.
#[derive(Debug, Clone, Copy, Default)]
pub struct LoadOptions {
    /// Reprocess files the ledger has seen.
    pub force: bool,
    /// Abort the process at this point (tests only).
    #[cfg(feature = "faults")]
    pub fault: Option<FaultPoint>,
}

/// Marks the end of a step: logs its time at debug level and, in test builds with
/// the `faults` feature, aborts the process when a test asked for it.
macro_rules! step {
    ($opts:expr, $started:expr, $point:ident, $name:literal) => {
        tracing::debug!(
            step = $name,
            elapsed_ms = $started.elapsed().as_millis() as u64,
            "step done"
        );
        #[cfg(feature = "faults")]
        if $opts.fault == Some(FaultPoint::$point) {
            eprintln!("fault injected: {:?}", FaultPoint::$point);
            std::process::abort();
        }
    };
}

fn now_micros() -> i64 {
    chrono::Utc::now().timestamp_micros()
}

impl Lake {
    /// Loads one file version; see the module docs for the order of writes.
    pub async fn load(
        &mut self,
        file: &SourceFile,
        opts: LoadOptions,
    ) -> Result<LoadOutcome, LakeError> {
        let span = tracing::info_span!("load", file = %file.location, size = file.bytes.len());
        let outcome = self.load_file(file, opts).instrument(span.clone()).await;
        let _entered = span.enter();
        match &outcome {
            Ok(LoadOutcome::Loaded(done)) => tracing::info!(
                records = done.figures.records,
                rejected = done.figures.rejected,
                inserted = done.figures.inserted,
                updated = done.figures.updated,
                stale = done.figures.stale,
                orders_version = ?done.orders_version,
                recovered = done.recovered,
                "loaded"
            ),
            Ok(LoadOutcome::Skipped { .. }) => tracing::info!("already loaded, skipped"),
            Ok(LoadOutcome::Refused(m)) => tracing::warn!(reason = %m.problem, "refused"),
            Err(e) => tracing::error!(error = %e, "load failed"),
        }
        outcome
    }

    async fn load_file(
        &mut self,
        file: &SourceFile,
        opts: LoadOptions,
    ) -> Result<LoadOutcome, LakeError> {
        let started = std::time::Instant::now();
        let content_id = ContentId::of(&file.bytes);
        let cid = content_id.to_string();
        let location = file.location.as_str();
        let seen = if opts.force {
            None
        } else {
            self.seen(location, &cid).await?
        };
        let entry = |status, reason, figures, orders_version, rejected_version| LedgerEntry {
            location: location.to_string(),
            content_id: cid.clone(),
            size: content_id.size,
            etag: file.etag.clone(),
            version_id: file.version_id.clone(),
            status,
            reason,
            figures,
            orders_version,
            rejected_version,
            loaded_at: now_micros(),
        };
        if let Some(Seen {
            status: LedgerStatus::Loaded,
            orders_version,
            ..
        }) = seen
        {
            return Ok(LoadOutcome::Skipped { orders_version });
        }
        let parsed = match read_changes(&file.bytes) {
            Ok(parsed) => parsed,
            Err(mismatch) => {
                if seen.is_none() {
                    let reason = Some(mismatch.to_string());
                    self.record(&entry(
                        LedgerStatus::Refused,
                        reason,
                        Reconciliation::default(),
                        None,
                        None,
                    ))
                    .await?;
                }
                return Ok(LoadOutcome::Refused(mismatch));
            }
        };
        step!(opts, started, AfterRead, "after-read");
        // Start from the tables' latest versions: another writer may have committed
        // since the last load, and a stale snapshot turns every commit into a conflict.
        self.refresh_writes().await?;
        let loaded_at = now_micros();
        let rejected_version = self
            .replace_rejects(&parsed.rejects, location, &cid, loaded_at)
            .await?;
        step!(opts, started, AfterRejected, "after-rejected");

        let loaded = parsed.changes.len() as u64;
        let rejected = parsed.rejects.len() as u64;
        let newest = newest_per_order(parsed.changes);
        let recovered = if opts.force {
            None
        } else {
            let floor = self.ledger_orders_floor().await?;
            self.find_merge_commit(floor, location, &cid).await?
        };
        let (counts, _) = match recovered {
            Some(commit) => (commit.counts, Some(commit.version)),
            None => {
                self.merge_orders(&newest, location, &cid, loaded_at)
                    .await?
            }
        };
        step!(opts, started, AfterOrders, "after-orders");
        if let (Some(first), Some(last)) = (newest.first(), newest.last()) {
            self.check_unique_orders(first.order_id, last.order_id)
                .await?;
        }
        let figures =
            Reconciliation::build(location, loaded, rejected, newest.len() as u64, counts)?;
        let orders_version = self.orders.version();
        self.replace_reconciliation(location, &cid, &figures, orders_version, loaded_at)
            .await?;
        step!(opts, started, AfterReconciliation, "after-reconciliation");
        self.record(&entry(
            LedgerStatus::Loaded,
            None,
            figures,
            orders_version,
            rejected_version,
        ))
        .await?;
        step!(opts, started, AfterLedger, "after-ledger");
        Ok(LoadOutcome::Loaded(Loaded {
            figures,
            orders_version,
            recovered: recovered.is_some(),
        }))
    }

    /// Reloads the tables a load writes to their latest versions.
    async fn refresh_writes(&mut self) -> Result<(), LakeError> {
        refresh(&mut self.orders, TableName::Orders).await?;
        refresh(&mut self.rejected, TableName::RejectedOrders).await?;
        refresh(&mut self.reconciliation, TableName::Reconciliation).await
    }

    /// Replaces this file's rejects in one commit (none is made when there is nothing
    /// to replace or delete). Returns the table's version afterwards.
    async fn replace_rejects(
        &mut self,
        rejects: &[deltaload_core::Reject],
        location: &str,
        cid: &str,
        loaded_at: i64,
    ) -> Result<Option<u64>, LakeError> {
        let url = self.rejected.table_url().clone();
        let err = LakeError::delta("rejected_orders", &url);
        let predicate = format!("source_file = {}", sql_string(location));
        self.rejected = if rejects.is_empty() {
            self.rejected
                .clone()
                .delete()
                .with_predicate(predicate)
                .await
                .map_err(err)?
                .0
        } else {
            let batch = batches::rejects(rejects, location, cid, loaded_at)?;
            replace_where(&self.rejected, TableName::RejectedOrders, batch, predicate).await?
        };
        Ok(self.rejected.version())
    }

    /// Replaces the reconciliation row of this file version.
    async fn replace_reconciliation(
        &mut self,
        location: &str,
        cid: &str,
        figures: &Reconciliation,
        orders_version: Option<u64>,
        loaded_at: i64,
    ) -> Result<(), LakeError> {
        let batch = batches::reconciliation(location, cid, figures, orders_version, loaded_at)?;
        let predicate = file_version(location, cid);
        self.reconciliation = replace_where(
            &self.reconciliation,
            TableName::Reconciliation,
            batch,
            predicate,
        )
        .await?;
        Ok(())
    }
}
