//! Auto-compaction: after a load, each table holding [`AutoCompact::min_files`]
//! files or more under [`AutoCompact::file_bytes`] has them compacted into
//! files of about that size, in the loading process. Each load adds a small
//! file to its dataset's table, the ledger and the reconciliation; without
//! this, every later load replays, checkpoints and prunes a file list that
//! grows with the lake. Files already at the size are never read again, so
//! one run reads and writes at most `min_files` small files and the files
//! being filled: a cost bounded by the settings, not by the lake.
//!
//! It never fails a load: the load has committed before it runs. A
//! compaction that loses to a concurrent writer is left for the next load
//! (one attempt, no backoff), and one that fails is tried again only once
//! `min_files` more small files have come.

use super::{compact, file_count, MaintainOptions, Maintained};
use crate::table::sets::Tables;
use deltalake::DeltaTable;
use deltaload_engine::tables::TableName;
use std::collections::HashMap;

/// Default number of small files that starts a table's compaction: Delta
/// Lake's `autoCompact.minNumFiles`.
pub const DEFAULT_AUTO_COMPACT_FILES: usize = 50;
/// Default size of the files auto-compaction writes (1 MiB): a run reads at
/// most its small files and one file being filled to this size, so its time
/// and memory stay those of the first runs however large the table grows,
/// and 100,000 one-row loads still end in a handful of files per table.
/// `maintain` compacts them further.
pub const DEFAULT_AUTO_COMPACT_BYTES: u64 = 1 << 20;

/// When and how far loads compact the tables they wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AutoCompact {
    /// A table is compacted once it holds this many files under
    /// `file_bytes`; 0 turns auto-compaction off.
    pub min_files: usize,
    /// The size of the files it writes; files of this size or more are left alone.
    pub file_bytes: u64,
}

impl Default for AutoCompact {
    fn default() -> Self {
        Self {
            min_files: DEFAULT_AUTO_COMPACT_FILES,
            file_bytes: DEFAULT_AUTO_COMPACT_BYTES,
        }
    }
}

impl AutoCompact {
    /// Auto-compaction at `min_files` small files (0: never), of the default size.
    pub fn at(min_files: usize) -> Self {
        Self {
            min_files,
            ..Self::default()
        }
    }

    /// No auto-compaction.
    pub const OFF: Self = Self {
        min_files: 0,
        file_bytes: DEFAULT_AUTO_COMPACT_BYTES,
    };
}

/// What auto-compaction did since the lake was opened.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AutoCompactions {
    /// Compactions committed.
    pub runs: u64,
    /// Small files they removed.
    pub files_removed: u64,
    /// Files they added.
    pub files_added: u64,
    /// Compactions left for a later load: lost to a concurrent commit, or failed.
    pub skipped: u64,
}

/// The small-file count at which each table's last compaction failed or
/// found nothing to merge (small files too large to share a file): it is
/// tried again once `min_files` more have come.
pub(crate) type Deferred = HashMap<String, usize>;

/// Compacts the tables among `names` that hold `opts.min_files` small files
/// or more, adding what it did to `done`. Never fails: errors are logged.
pub(crate) async fn after_load(
    tables: &mut Tables,
    names: &[TableName],
    opts: AutoCompact,
    (done, deferred): (&mut AutoCompactions, &mut Deferred),
) {
    if opts.min_files == 0 {
        return;
    }
    for name in names {
        let Some(table) = tables.table_mut(name) else {
            continue;
        };
        let label = name.as_str();
        let small = match small_files(table, opts.file_bytes) {
            Ok(n) => n,
            Err(error) => {
                tracing::warn!(table = %label, %error, "auto-compaction could not count the table's files");
                continue;
            }
        };
        if !due(small, deferred.get(&label).copied(), opts.min_files) {
            continue;
        }
        run(table, name, small, opts, (done, deferred)).await;
    }
}

/// Whether a table of `small` small files is compacted: `min_files` of
/// them (0: never), and after a run deferred at `deferred_at` files,
/// `min_files` more than then.
fn due(small: usize, deferred_at: Option<usize>, min_files: usize) -> bool {
    let since = deferred_at.map_or(small, |at| small.saturating_sub(at));
    min_files > 0 && small >= min_files && since >= min_files
}

/// One table's compaction, logged and counted.
async fn run(
    table: &mut DeltaTable,
    name: &TableName,
    small: usize,
    opts: AutoCompact,
    (done, deferred): (&mut AutoCompactions, &mut Deferred),
) {
    let label = name.as_str();
    let started = std::time::Instant::now();
    let sizes = MaintainOptions {
        target_file_bytes: opts.file_bytes,
        orders_file_bytes: opts.file_bytes,
        cluster: false,
        ..MaintainOptions::default()
    };
    let mut made = Maintained::default();
    match compact(table, name, sizes, &mut made, 1).await {
        Ok(()) if made.compaction_skipped => done.skipped += 1,
        Ok(()) if made.files_removed == 0 => {
            deferred.insert(label.clone(), small);
            tracing::debug!(table = %label, small_files = small, "auto-compaction found no files to merge");
        }
        Ok(()) => {
            deferred.remove(&label);
            done.runs += 1;
            done.files_removed += made.files_removed;
            done.files_added += made.files_added;
            tracing::info!(
                table = %label,
                small_files = small,
                files_removed = made.files_removed,
                files_added = made.files_added,
                files_now = file_count(table),
                compact_ms = started.elapsed().as_millis() as u64,
                "auto-compacted"
            );
        }
        Err(error) => {
            deferred.insert(label.clone(), small);
            done.skipped += 1;
            tracing::warn!(table = %label, %error, "auto-compaction failed: the loads are not affected; tried again after more files");
        }
    }
}

/// The table's data files under `bytes`, from the file list its snapshot
/// holds in memory (nothing read).
fn small_files(table: &DeltaTable, bytes: u64) -> Result<usize, deltalake::DeltaTableError> {
    let files = table.snapshot()?.snapshot().try_log_data()?;
    Ok(files
        .iter()
        .filter(|v| u64::try_from(v.size()).map_or(true, |s| s < bytes))
        .count())
}

#[cfg(test)]
#[path = "auto_tests.rs"]
mod tests;
