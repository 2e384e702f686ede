//! The change data feed of a keyed upsert (`delta.enableChangeDataFeed`):
//! the rows a commit changes, in Parquet files under `_change_data/` that
//! the commit's `cdc` actions name, each row with its `_change_type`: a
//! deleted row as it was (`delete`), an updated row before and after
//! (`update_preimage`, `update_postimage`), an inserted one (`insert`).
//!
//! The feed is made from the upsert's decisions ([`Met`]), not by comparing
//! the files a commit adds and removes, so copy-on-write and merge-on-read
//! write the same rows, and a reader never has to diff deletion vectors: a
//! commit holding `cdc` actions is read from them alone. Its rows are the
//! reconciliation's: as many `delete` rows as rows deleted, pre- and
//! post-images as rows updated, `insert` rows as rows inserted.

use super::aligned::updated_mask;
use super::read;
use super::rows_out::Outcome;
use crate::error::LakeError;
use deltalake::arrow::array::{ArrayRef, StringArray};
use deltalake::arrow::datatypes::{DataType, Field, Schema};
use deltalake::arrow::record_batch::RecordBatch;
use deltalake::kernel::{Action, AddCDCFile};
use deltalake::{DeltaTable, DeltaTableError, ObjectStore};
use deltaload_core::Dataset;
use deltaload_engine::{Action as Decision, Aligned, Picks};
use futures::StreamExt;
use std::sync::Arc;

/// The column of a feed row that says what the change was.
const CHANGE_TYPE: &str = "_change_type";

/// The directory of the feed's files, under the table's root.
const CHANGE_DATA: &str = "_change_data";

/// The table property that asks writers for a change data feed.
pub(crate) const ENABLE: &str = "delta.enableChangeDataFeed";

/// The change types, in the order a feed's rows come.
const TYPES: [&str; 4] = ["delete", "update_preimage", "update_postimage", "insert"];

/// Whether the table asks its writers for a change data feed: its property
/// is `true` and, on a table with table features (writer version 7), the
/// feature is listed (the protocol's rule; delta-rs's `should_write_cdc`).
pub(crate) fn writes_feed(table: &DeltaTable) -> Result<bool, DeltaTableError> {
    let snapshot = table.snapshot()?;
    let protocol = snapshot.protocol();
    if protocol.min_writer_version() == 7 {
        let listed = (protocol.writer_features())
            .is_some_and(|f| f.iter().any(|f| f.to_string() == "changeDataFeed"));
        if !listed {
            return Ok(false);
        }
    }
    let config = snapshot.metadata().configuration();
    Ok(config
        .get(ENABLE)
        .is_some_and(|v| v.eq_ignore_ascii_case("true")))
}

/// The feed of the decisions in `outcome`: deletes, pre-images, post-images,
/// inserts, in that order (a pre-image and its post-image at the same place
/// among their kind); `None` when nothing changes. The files where a row
/// changes are read whole, from `store`.
pub(super) async fn rows(
    store: Arc<dyn ObjectStore>,
    dataset: &Dataset,
    aligned: &Aligned,
    outcome: &Outcome<'_>,
    label: &str,
) -> Result<Option<RecordBatch>, LakeError> {
    let Outcome {
        met,
        candidates,
        rewritten,
        inserted,
    } = *outcome;
    let width = aligned.schema.fields().len();
    let all: Vec<usize> = (0..width).collect();
    let files_read = rewritten.iter().map(|&f| &candidates[f]);
    let mut reads = read::read_files(store, files_read, &aligned.schema, &all, label);
    let mut files = Vec::with_capacity(rewritten.len());
    while let Some(file) = reads.next().await {
        files.push(file?.batch);
    }
    drop(reads);
    let changes = files.len();
    let mut picks = Picks::default();
    picks.reborn_in(changes, aligned.flags());
    let mut counts = [0usize; 4];
    for (kind, decision) in [(0, Decision::Delete), (1, Decision::Update)] {
        for (source, &f) in rewritten.iter().enumerate() {
            let rows: Vec<u32> = (met.hits[f].iter())
                .filter(|h| h.2 == decision)
                .map(|h| h.0)
                .collect();
            counts[kind] += rows.len();
            picks.rows(source, &rows);
        }
    }
    for (source, &f) in rewritten.iter().enumerate() {
        picks.updates(source, changes, &met.hits[f]);
    }
    counts[2] = counts[1];
    picks.rows(changes, inserted);
    counts[3] = inserted.len();
    if counts.iter().all(|&n| n == 0) {
        return Ok(None);
    }
    let mut sources: Vec<&RecordBatch> = files.iter().collect();
    sources.push(&aligned.changes);
    let updated = updated_mask(dataset, &aligned.schema);
    let mut columns = picks
        .in_order(&sources, width, &updated)
        .map_err(LakeError::arrow(label))?;
    columns.push(change_types(counts));
    let mut fields: Vec<Field> = (aligned.schema.fields().iter())
        .map(|f| f.as_ref().clone().with_nullable(true))
        .collect();
    fields.push(Field::new(CHANGE_TYPE, DataType::Utf8, false));
    let batch = RecordBatch::try_new(Arc::new(Schema::new(fields)), columns);
    Ok(Some(batch.map_err(LakeError::arrow(label))?))
}

/// The `_change_type` column of a feed of `counts` rows of each of [`TYPES`].
fn change_types(counts: [usize; 4]) -> ArrayRef {
    let types: Vec<&str> = (TYPES.iter().zip(counts))
        .flat_map(|(t, n)| std::iter::repeat_n(*t, n))
        .collect();
    Arc::new(StringArray::from(types))
}

/// Writes `rows` (a feed) into new files under `_change_data/`, not yet
/// committed; returns their `cdc` actions.
async fn write(
    table: &DeltaTable,
    rows: &RecordBatch,
    label: &str,
) -> Result<Vec<Action>, LakeError> {
    let adds = super::commit::write_under(table, rows, CHANGE_DATA, label).await?;
    Ok(adds
        .into_iter()
        .map(|add| {
            Action::Cdc(AddCDCFile {
                path: format!("{CHANGE_DATA}/{}", add.path),
                size: add.size,
                partition_values: add.partition_values,
                data_change: false,
                tags: None,
            })
        })
        .collect())
}

impl crate::Lake {
    /// Sets dataset `ds`'s table to keep a change data feed, once (a
    /// metadata commit, with the protocol upgrade the feature needs).
    pub(crate) async fn enable_change_data_feed(&mut self, ds: usize) -> Result<(), LakeError> {
        let set = &mut self.sets[ds];
        let label = set.dataset.name.clone();
        let url = set.target.table_url().clone();
        if writes_feed(&set.target).map_err(LakeError::delta(&label, &url))? {
            return Ok(());
        }
        tracing::info!(table = %label, "enabling the change data feed");
        crate::table::set_property(&mut set.target, &label, ENABLE, "true").await
    }

    /// The `cdc` actions of the feed of an upsert's decisions, its files
    /// written; none when dataset `ds`'s table keeps no feed.
    pub(super) async fn feed(
        &self,
        ds: usize,
        aligned: &Aligned,
        outcome: &Outcome<'_>,
        label: &str,
    ) -> Result<Vec<Action>, LakeError> {
        let table = &self.sets[ds].target;
        let keeps = writes_feed(table).map_err(LakeError::delta(label, table.table_url()))?;
        if !keeps {
            return Ok(Vec::new());
        }
        let dataset = &self.sets[ds].dataset;
        match rows(table.object_store(), dataset, aligned, outcome, label).await? {
            Some(rows) => write(table, &rows, label).await,
            None => Ok(Vec::new()),
        }
    }
}
