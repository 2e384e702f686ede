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
use super::read::Hit;
use super::rows_out::{decided_rows, Appended, Outcome};
use crate::table::error::LakeError;
use deltalake::arrow::array::{ArrayRef, StringArray};
use deltalake::arrow::datatypes::{DataType, Field, Schema};
use deltalake::arrow::record_batch::RecordBatch;
use deltalake::kernel::{Action, AddCDCFile};
use deltalake::{DeltaTable, DeltaTableError, ObjectStore};
use deltaload_core::Dataset;
use deltaload_engine::{Action as Decision, Aligned, Picks};
use std::sync::Arc;

/// The column of a feed row that says what the change was.
const CHANGE_TYPE: &str = "_change_type";

/// The directory of the feed's files, under the table's root.
const CHANGE_DATA: &str = "_change_data";

/// The table property that asks writers for a change data feed.
pub(crate) use crate::table::properties::CHANGE_DATA_FEED as ENABLE;

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

/// The feed of the decisions in `outcome`, in batches: deletes and
/// pre-images, then post-images and inserts; none when nothing changes.
/// The rows a change deletes or updates are read from `store` (those rows
/// only). The post-images and inserts are picked from the changes (a
/// pre-image and its post-image at the same place among their kind) or,
/// given the rows a merge-on-read upsert appends (`appended`), are those
/// rows, in key order.
pub(super) async fn rows(
    store: Arc<dyn ObjectStore>,
    dataset: &Dataset,
    aligned: &Aligned,
    outcome: &Outcome<'_>,
    appended: Option<&Appended>,
    label: &str,
) -> Result<Vec<RecordBatch>, LakeError> {
    let changing = |h: &Hit| h.2 != Decision::Stale;
    let (files, hits) = decided_rows(store, aligned, outcome, changing, label).await?;
    let changes = files.len();
    let mut picks = Picks::default();
    picks.reborn_in(changes, aligned.flags());
    let mut counts = [0usize; 4];
    for (kind, decision) in [(0, Decision::Delete), (1, Decision::Update)] {
        for (source, hits) in hits.iter().enumerate() {
            let rows: Vec<u32> = (hits.iter())
                .filter(|h| h.2 == decision)
                .map(|h| h.0)
                .collect();
            counts[kind] += rows.len();
            picks.rows(source, &rows);
        }
    }
    if appended.is_none() {
        for (source, hits) in hits.iter().enumerate() {
            picks.updates(source, changes, hits);
        }
        picks.rows(changes, outcome.inserted);
        (counts[2], counts[3]) = (counts[1], outcome.inserted.len());
    }
    let mut sources: Vec<&RecordBatch> = files.iter().collect();
    sources.push(&aligned.changes);
    let updated = updated_mask(dataset, &aligned.schema);
    let mut columns = picks
        .in_order(&sources, aligned.schema.fields().len(), &updated)
        .map_err(LakeError::arrow(label))?;
    columns.push(change_types(counts));
    let schema = feed_schema(&aligned.schema);
    let picked = RecordBatch::try_new(schema.clone(), columns).map_err(LakeError::arrow(label))?;
    let mut batches = vec![picked];
    if let Some(appended) = appended {
        let expected = (counts[1], outcome.inserted.len());
        batches.push(appended_rows(schema, appended, expected, label)?);
    }
    batches.retain(|b| b.num_rows() > 0);
    Ok(batches)
}

/// The feed's columns: the table's, each nullable, and [`CHANGE_TYPE`].
fn feed_schema(table: &Schema) -> Arc<Schema> {
    let mut fields: Vec<Field> = (table.fields().iter())
        .map(|f| f.as_ref().clone().with_nullable(true))
        .collect();
    fields.push(Field::new(CHANGE_TYPE, DataType::Utf8, false));
    Arc::new(Schema::new(fields))
}

/// The rows a merge-on-read upsert appends as feed rows, each a
/// post-image or an insert; an error unless they are as many of each as
/// `expected` (the upsert's updates and inserts).
fn appended_rows(
    schema: Arc<Schema>,
    appended: &Appended,
    expected: (usize, usize),
    label: &str,
) -> Result<RecordBatch, LakeError> {
    let updates = appended.updated.iter().filter(|&&u| u).count();
    let inserts = appended.updated.len() - updates;
    if (updates, inserts) != expected || appended.rows.num_rows() != appended.updated.len() {
        return Err(LakeError::Invariant {
            table: label.to_string(),
            detail: format!(
                "the change data feed has {updates} post-images and {inserts} inserts \
                 among {} rows appended, where the upsert updated {} rows and inserted {}",
                appended.rows.num_rows(),
                expected.0,
                expected.1
            ),
        });
    }
    let types = (appended.updated.iter()).map(|&u| TYPES[if u { 2 } else { 3 }]);
    let mut columns = appended.rows.columns().to_vec();
    columns.push(Arc::new(StringArray::from_iter_values(types)));
    RecordBatch::try_new(schema, columns).map_err(LakeError::arrow(label))
}

/// The `_change_type` column of a feed of `counts` rows of each of [`TYPES`].
fn change_types(counts: [usize; 4]) -> ArrayRef {
    let types: Vec<&str> = (TYPES.iter().zip(counts))
        .flat_map(|(t, n)| std::iter::repeat_n(*t, n))
        .collect();
    Arc::new(StringArray::from(types))
}

/// Writes `batches` (a feed) into new files under `_change_data/`, not yet
/// committed; returns their `cdc` actions.
async fn write(
    table: &DeltaTable,
    batches: &[RecordBatch],
    label: &str,
) -> Result<Vec<Action>, LakeError> {
    let adds = super::commit::write_under(table, batches, CHANGE_DATA, label).await?;
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

impl crate::write::Writer<'_> {
    /// Sets the dataset's table to keep a change data feed, once (a
    /// metadata commit, with the protocol upgrade the feature needs).
    pub(crate) async fn enable_change_data_feed(&mut self) -> Result<(), LakeError> {
        let set = &mut *self.set;
        let label = set.dataset.name.clone();
        let url = set.target.table_url().clone();
        if writes_feed(&set.target).map_err(LakeError::delta(&label, &url))? {
            return Ok(());
        }
        tracing::info!(table = %label, "enabling the change data feed");
        crate::table::properties::set_property(&mut set.target, &label, ENABLE, "true").await
    }

    /// The `cdc` actions of the feed of an upsert's decisions, its files
    /// written; none when the dataset's table keeps no feed. `appended`:
    /// the rows a merge-on-read upsert appends.
    pub(super) async fn feed(
        &self,
        aligned: &Aligned,
        outcome: &Outcome<'_>,
        appended: Option<&Appended>,
        label: &str,
    ) -> Result<Vec<Action>, LakeError> {
        let table = &self.set.target;
        let keeps = writes_feed(table).map_err(LakeError::delta(label, table.table_url()))?;
        if !keeps {
            return Ok(Vec::new());
        }
        let dataset = &self.set.dataset;
        let store = table.object_store();
        let batches = rows(store, dataset, aligned, outcome, appended, label).await?;
        match batches.is_empty() {
            true => Ok(Vec::new()),
            false => write(table, &batches, label).await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use deltalake::arrow::array::{Array, Int64Array};

    fn appended(updated: Vec<bool>) -> Appended {
        let ids = Int64Array::from_iter_values(0..updated.len() as i64);
        let rows = RecordBatch::try_from_iter([("id", Arc::new(ids) as ArrayRef)]).unwrap();
        Appended { rows, updated }
    }

    // Each appended row is a post-image or an insert as its flag says, and a
    // feed whose rows disagree with the upsert's figures is never written.
    #[test]
    fn appended_rows_are_post_images_and_inserts_as_the_upsert_counted() {
        let schema = feed_schema(&Schema::new(vec![Field::new("id", DataType::Int64, false)]));
        let rows = appended(vec![true, false, true]);
        let feed = appended_rows(schema.clone(), &rows, (2, 1), "t").unwrap();
        let types = feed
            .column(1)
            .as_any()
            .downcast_ref::<StringArray>()
            .unwrap();
        let types: Vec<_> = types.iter().map(Option::unwrap).collect();
        assert_eq!(types, ["update_postimage", "insert", "update_postimage"]);
        let wrong = appended_rows(schema, &rows, (1, 2), "t").unwrap_err();
        assert!(matches!(wrong, LakeError::Invariant { .. }), "{wrong}");
    }
}
