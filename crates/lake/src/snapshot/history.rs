//! The history of a snapshot dataset (`history = true`): the changes a
//! snapshot made to its table (new and changed rows at their sequence,
//! retired keys deleted at the snapshot's) go to the history once the
//! table's commit holds them. A snapshot that changed nothing (older than
//! the newest loaded) adds nothing to it.
//!
//! The table first: what a snapshot changes depends on the table it is held
//! against, so only a committed snapshot's changes are the table's. A load
//! stopped after that commit finds it again ([`Writer::recovered_snapshot_history`])
//! and holds the snapshot against the version before it, which gives the
//! same changes; the history takes a file's changes once.

use crate::history::FileChanges;
use crate::table::error::LakeError;
use crate::write::merge::MergeCommit;
use crate::write::Writer;
use deltalake::arrow::array::{AsArray, Int64Array, RecordBatch};
use deltalake::arrow::compute::cast;
use deltalake::arrow::compute::kernels::zip::zip;
use deltalake::arrow::datatypes::DataType;
use deltalake::arrow::error::ArrowError;
use deltaload_core::Dataset;
use deltaload_engine::parsed::Parsed;
use deltaload_flow::FileKey;
use std::collections::HashMap;

impl Writer<'_> {
    /// Writes `changes`, what the snapshot `p` of sequence `at` changed in
    /// the dataset's table, into its history, at `loaded_at`. Returns the
    /// versions opened and closed. A snapshot loaded again on purpose
    /// (`forced`) changed the table again: its changes are logged again, at
    /// their new load time, which ranks them above those of the snapshots
    /// loaded before at the same sequence, as in the table.
    pub(super) async fn snapshot_history(
        &mut self,
        p: &Parsed,
        changes: RecordBatch,
        at: i64,
        (loaded_at, forced): (i64, bool),
    ) -> Result<(u64, u64), LakeError> {
        let dataset = self.set.dataset.clone();
        if dataset.history.is_none() {
            return Ok((0, 0));
        }
        let changes = retired_at(&dataset, changes, at)
            .map_err(LakeError::arrow(&dataset.history_table()))?;
        let file = FileChanges {
            key: &p.key,
            touched: &changes,
            all: &changes,
            forced,
        };
        self.write_changes_history(file, loaded_at).await
    }

    /// Writes the history of each file of a snapshot dataset's round whose
    /// commit was `recovered` (a snapshot's history follows its commit, so
    /// it may be missing). Returns each file's versions opened and closed.
    pub(crate) async fn recovered_snapshot_histories(
        &mut self,
        parsed: &[Parsed],
        recovered: &HashMap<FileKey, MergeCommit>,
        load: (i64, bool),
    ) -> Result<Vec<(u64, u64)>, LakeError> {
        let snapshot = self.set.dataset.snapshot.is_some();
        let mut versions = vec![(0, 0); parsed.len()];
        for (p, written) in parsed.iter().zip(&mut versions) {
            if let (Some(c), true) = (recovered.get(&p.key), snapshot) {
                *written = (self.recovered_snapshot_history(p, c.version, load)).await?;
            }
        }
        Ok(versions)
    }

    /// The history of the snapshot `p` whose commit of the dataset's
    /// table, `version`, a load stopped after: the snapshot held against
    /// the version before, as it was when it committed.
    async fn recovered_snapshot_history(
        &mut self,
        p: &Parsed,
        version: u64,
        load: (i64, bool),
    ) -> Result<(u64, u64), LakeError> {
        let dataset = self.set.dataset.clone();
        let (true, Some(before)) = (dataset.history.is_some(), version.checked_sub(1)) else {
            return Ok((0, 0));
        };
        let mut table = self.set.target.clone();
        let url = table.table_url().clone();
        (table.load_version(before as _).await).map_err(LakeError::delta(&dataset.name, &url))?;
        let Some(held) = self.hold(p, &table).await? else {
            return Ok((0, 0));
        };
        match held.mark {
            Some(_) => (self.snapshot_history(p, held.diff.changes, held.at, load)).await,
            None => Ok((0, 0)),
        }
    }
}

/// `changes` (of `deltaload_ingest::changes_schema`) with the sequence of
/// its deletes, the rows of keys the snapshot no longer holds as the table
/// held them, set to the snapshot's: `at`, in the sequence column's type.
fn retired_at(dataset: &Dataset, changes: RecordBatch, at: i64) -> Result<RecordBatch, ArrowError> {
    let Some(&sequence) = dataset.sequence_by.first() else {
        return Ok(changes);
    };
    // A null flag (an upsert) keeps the row's sequence.
    let deleted = (changes.column(dataset.columns.len()).as_boolean_opt()).ok_or_else(|| {
        ArrowError::SchemaError("a snapshot's delete flag is not a boolean".into())
    })?;
    let column = changes.column(sequence);
    let ats = Int64Array::from_value(at, changes.num_rows());
    let ats = match column.data_type() {
        // A date's sequence is its days since the epoch.
        DataType::Date32 => cast(&cast(&ats, &DataType::Int32)?, &DataType::Date32)?,
        other => cast(&ats, other)?,
    };
    let mut columns = changes.columns().to_vec();
    columns[sequence] = zip(deleted, &ats, column)?;
    RecordBatch::try_new(changes.schema(), columns)
}
