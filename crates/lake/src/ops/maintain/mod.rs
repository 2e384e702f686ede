//! Table maintenance, off the load path: small files compacted (and, when
//! asked, `orders` clustered by order_id, so that the ranges a MERGE's file
//! pruning tests are narrow), a checkpoint written, expired log entries and
//! unreferenced data files removed after a retention period.
//!
//! Safe beside running loads: compaction commits like any writer, and a commit
//! that loses to a load (both touched the same files) is planned again from the
//! new version, with the loads' backoff. Vacuum deletes only files no version
//! newer than the retention period refers to.

use crate::ops::Ops;
use crate::table::error::LakeError;
use crate::table::refresh;
use crate::table::retry::{backoff, is_conflict, ATTEMPTS};
use deltalake::checkpoints::{cleanup_metadata, create_checkpoint};
use deltalake::operations::optimize::OptimizeType;
use deltalake::operations::vacuum::VacuumMode;
use deltalake::DeltaTable;
use deltaload_engine::tables::TableName;
use std::num::NonZeroU64;

/// Default target size of a compacted file of the tables other than `orders`
/// (64 MiB): large enough to keep the file count low.
pub const DEFAULT_TARGET_FILE_BYTES: u64 = 64 << 20;
/// Default retention of unreferenced files: 7 days, Delta's own default.
pub const DEFAULT_RETENTION_HOURS: u64 = 7 * 24;
/// Default age after which a remembered delete is forgotten: 30 days.
pub const DEFAULT_TOMBSTONE_RETENTION_DAYS: u64 = 30;

/// What `maintain` does.
#[derive(Debug, Clone, Copy)]
pub struct MaintainOptions {
    /// Target size of compacted files of `rejected_orders`, `ledger` and `reconciliation`.
    pub target_file_bytes: u64,
    /// Target size of compacted (or clustered) `orders` files: smaller, since a
    /// MERGE rewrites each file holding an order it changes.
    pub orders_file_bytes: u64,
    /// Unreferenced files younger than this many hours are kept by vacuum.
    pub retention_hours: u64,
    /// Allow a retention below the tables' `deletedFileRetentionDuration` (7
    /// days): only when no reader or writer can hold an older snapshot.
    pub allow_short_retention: bool,
    /// Rewrite all of `orders` sorted by order_id (Z-order on one column) instead
    /// of compacting only its small files: every file then covers a narrow range
    /// of orders. Costs a rewrite of the whole table; run it now and then.
    pub cluster: bool,
    /// Report what vacuum would delete; compact and checkpoint nothing.
    pub dry_run: bool,
    /// Tombstones loaded longer ago than this many days are forgotten: a
    /// change older than a forgotten delete can then bring its row back.
    pub tombstone_retention_days: u64,
}

impl Default for MaintainOptions {
    fn default() -> Self {
        Self {
            target_file_bytes: DEFAULT_TARGET_FILE_BYTES,
            orders_file_bytes: crate::table::ORDERS_FILE_BYTES,
            retention_hours: DEFAULT_RETENTION_HOURS,
            allow_short_retention: false,
            cluster: false,
            dry_run: false,
            tombstone_retention_days: DEFAULT_TOMBSTONE_RETENTION_DAYS,
        }
    }
}

/// What maintenance did to one table.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Maintained {
    /// The table.
    pub table: String,
    /// Data files before, and after compaction.
    pub files_before: usize,
    /// Data files after the maintenance.
    pub files_after: usize,
    /// Data files the compaction removed.
    pub files_removed: u64,
    /// Data files the compaction added.
    pub files_added: u64,
    /// The version checkpointed (none on a dry run).
    pub checkpoint: Option<u64>,
    /// Log files past the log retention removed.
    pub logs_removed: usize,
    /// Data files vacuum deleted (or would delete, on a dry run).
    pub vacuumed: usize,
    /// Compactions planned again after losing to a concurrent commit.
    pub conflicts_retried: u32,
    /// The compaction lost to concurrent commits at every attempt and was
    /// left for the next run (the checkpoint and the vacuum still ran).
    pub compaction_skipped: bool,
    /// Tombstones expired (a tombstones table, not on a dry run).
    pub tombstones_expired: Option<u64>,
    /// The expiry of tombstones lost to concurrent commits at every attempt
    /// and was left for the next run.
    pub expiry_skipped: bool,
}

impl Ops<'_> {
    /// Maintains the lake's tables in turn.
    pub(crate) async fn maintain(
        &mut self,
        opts: MaintainOptions,
    ) -> Result<Vec<Maintained>, LakeError> {
        let names = TableName::all(&self.datasets());
        let mut out = Vec::with_capacity(names.len());
        for name in names {
            let Some(table) = self.tables.table_mut(&name) else {
                continue;
            };
            out.push(maintain_table(table, &name, opts).await?);
        }
        Ok(out)
    }
}

fn file_count(table: &DeltaTable) -> usize {
    table.get_file_uris().map_or(0, |files| files.count())
}

async fn maintain_table(
    table: &mut DeltaTable,
    name: &TableName,
    opts: MaintainOptions,
) -> Result<Maintained, LakeError> {
    let url = table.table_url().clone();
    let label = name.as_str();
    let err = || LakeError::delta(&label, &url);
    refresh(table, name).await?;
    let mut done = Maintained {
        table: label.clone(),
        files_before: file_count(table),
        ..Maintained::default()
    };
    if let (TableName::Tombstones(_), false) = (name, opts.dry_run) {
        expire_tombstones(table, name, opts, &mut done).await?;
    }
    if !opts.dry_run {
        compact(table, name, opts, &mut done, ATTEMPTS).await?;
        checkpoint(table, name, &mut done).await?;
    }
    let retention = chrono::Duration::hours(
        i64::try_from(opts.retention_hours).unwrap_or(i64::MAX / 3_600_000),
    );
    let (vacuumed, metrics) = table
        .clone()
        .vacuum()
        .with_mode(VacuumMode::Full)
        .with_retention_period(retention)
        .with_enforce_retention_duration(!opts.allow_short_retention)
        .with_dry_run(opts.dry_run)
        .await
        .map_err(err())?;
    *table = vacuumed;
    done.vacuumed = metrics.files_deleted.len();
    done.files_after = file_count(table);
    Ok(done)
}

/// Compacts `table`'s small files (or clusters a dataset's table), planned
/// again when a concurrent commit wins, up to `attempts` times: a table whose
/// loads commit faster than it compacts is left as it is, for the next run,
/// rather than failing the maintenance of every table after it. The files
/// removed and added, the conflicts retried and a skip, in `done`.
async fn compact(
    table: &mut DeltaTable,
    name: &TableName,
    opts: MaintainOptions,
    done: &mut Maintained,
    attempts: u32,
) -> Result<(), LakeError> {
    let url = table.table_url().clone();
    let label = name.as_str();
    let bytes = match name {
        TableName::Target(_) => opts.orders_file_bytes,
        _ => opts.target_file_bytes,
    };
    let target = NonZeroU64::new(bytes.max(1 << 20)).unwrap_or(NonZeroU64::MIN);
    let kind = || match name {
        TableName::Target(d) if opts.cluster => {
            OptimizeType::ZOrder(vec![d.columns[d.keys[0]].name.clone()])
        }
        _ => OptimizeType::Compact,
    };
    let optimize = |t: DeltaTable| {
        let built = (t.optimize().with_type(kind()).with_target_size(target))
            .with_commit_properties(crate::table::commit_properties());
        let failed = LakeError::delta(&label, &url);
        async move { built.await.map_err(failed) }
    };
    let retried = &mut done.conflicts_retried;
    match committed(table, name, attempts, retried, "compaction", optimize).await? {
        Some(metrics) => {
            done.files_removed = metrics.num_files_removed;
            done.files_added = metrics.num_files_added;
        }
        None => done.compaction_skipped = true,
    }
    Ok(())
}

/// Runs `step`, a commit on `table`, until it commits: when a concurrent
/// commit wins, again from the table's new version after the loads'
/// backoff (counted in `retried`), at most `attempts` times. `None` when
/// it lost every attempt: `what` is left for the next run (a warning says
/// so) and the table is read anew.
async fn committed<T, Step, Fut>(
    table: &mut DeltaTable,
    name: &TableName,
    attempts: u32,
    retried: &mut u32,
    what: &str,
    mut step: Step,
) -> Result<Option<T>, LakeError>
where
    Step: FnMut(DeltaTable) -> Fut,
    Fut: std::future::Future<Output = Result<(DeltaTable, T), LakeError>>,
{
    let label = name.as_str();
    let mut attempt = 0;
    loop {
        let error = match step(table.clone()).await {
            Ok((after, out)) => {
                *table = after;
                return Ok(Some(out));
            }
            Err(e) if is_conflict(&e) => e,
            Err(e) => return Err(e),
        };
        attempt += 1;
        if attempt >= attempts {
            tracing::warn!(table = %label, attempts, %error, what, "lost to concurrent commits at every attempt: left for the next run");
            refresh(table, name).await?;
            return Ok(None);
        }
        *retried += 1;
        tracing::info!(table = %label, attempt = attempt + 1, of = attempts, what, "lost to a concurrent commit: planned again");
        tokio::time::sleep(backoff(attempt)).await;
        refresh(table, name).await?;
    }
}

/// Writes a checkpoint and removes the log entries past the retention, then
/// reads the table anew: the entries removed may hold the checkpoint it was
/// read from (a table idle past the log retention), which the vacuum would
/// read next.
async fn checkpoint(
    table: &mut DeltaTable,
    name: &TableName,
    done: &mut Maintained,
) -> Result<(), LakeError> {
    let url = table.table_url().clone();
    let err = || LakeError::delta(name.as_str(), &url);
    set_checkpoint_interval(table, name).await?;
    create_checkpoint(table, None).await.map_err(err())?;
    done.checkpoint = table.version();
    done.logs_removed = cleanup_metadata(table, None).await.map_err(err())?;
    let mut fresh = DeltaTable::new(table.log_store());
    fresh.load().await.map_err(err())?;
    *table = fresh;
    Ok(())
}

/// Gives a table created before deltaload set `delta.checkpointInterval` the
/// interval new tables get (one commit, once), so its opening stays short.
async fn set_checkpoint_interval(
    table: &mut DeltaTable,
    name: &TableName,
) -> Result<(), LakeError> {
    use crate::table::evolve::{CHECKPOINT_INTERVAL, CHECKPOINT_INTERVAL_PROPERTY as KEY};
    let label = name.as_str();
    if crate::table::properties::property(table, &label, KEY)?.is_some() {
        return Ok(());
    }
    tracing::info!(table = %label, interval = CHECKPOINT_INTERVAL, "setting the checkpoint interval");
    crate::table::properties::set_property(table, &label, KEY, &CHECKPOINT_INTERVAL.to_string())
        .await
}

/// Deletes the tombstones loaded more than the retention ago, how many in
/// `done`; left for the next run, as a compaction is, when loads writing
/// tombstones win every attempt.
async fn expire_tombstones(
    table: &mut DeltaTable,
    name: &TableName,
    opts: MaintainOptions,
    done: &mut Maintained,
) -> Result<(), LakeError> {
    let days = i64::try_from(opts.tombstone_retention_days).unwrap_or(i64::MAX / 86_400_000_000);
    let cutoff = chrono::Utc::now() - chrono::Duration::days(days.min(1_000_000));
    // An expression rather than SQL text: the commit records the predicate
    // as text, which delta-rs writes for a timestamp literal of this type only.
    use deltalake::datafusion::prelude::{col, lit};
    use deltalake::datafusion::scalar::ScalarValue;
    let at = ScalarValue::TimestampMicrosecond(Some(cutoff.timestamp_micros()), Some("UTC".into()));
    let predicate = col("loaded_at").lt(lit(at));
    let (url, label) = (table.table_url().clone(), name.as_str());
    let delete = |t: DeltaTable| {
        let built = t.delete().with_predicate(predicate.clone());
        let failed = LakeError::delta(&label, &url);
        async move { built.await.map_err(failed) }
    };
    let mut retried = 0;
    let expiry = committed(
        table,
        name,
        ATTEMPTS,
        &mut retried,
        "tombstone expiry",
        delete,
    );
    match expiry.await? {
        Some(metrics) => {
            done.tombstones_expired = Some(metrics.num_deleted_rows.unwrap_or(0) as u64)
        }
        None => done.expiry_skipped = true,
    }
    Ok(())
}

pub mod auto;

#[cfg(test)]
mod tests;
