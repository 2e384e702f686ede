//! The MERGE's source, without the rows delta-rs's MERGE cannot take when it
//! writes the change data feed: a delete of a key the table does not hold,
//! which no clause takes, comes out of it as an all-null feed row once
//! another row of the same MERGE is inserted, and the commit fails ("rows
//! failed validation check"). Without a sequence such a delete changes
//! nothing (no tombstone is kept for it), so it is left out. With a sequence
//! the clauses compare the table's sequence and delta-rs writes no such row.

use crate::error::LakeError;
use crate::schema::{arrow_type, TableName};
use crate::Lake;
use deltalake::arrow::array::{Array, ArrayRef, AsArray, BooleanArray};
use deltalake::arrow::compute::{cast, filter, filter_record_batch};
use deltalake::arrow::record_batch::RecordBatch;
use deltalake::arrow::row::{RowConverter, SortField};
use std::collections::HashSet;

impl Lake {
    /// `batch` (the MERGE's source: the dataset's columns, then its lineage
    /// columns, then the delete flag) without its deletes of keys the
    /// table does not hold, when dataset `ds` writes the change data feed and
    /// has no sequence; `batch` as it is otherwise. The rows left out, counted.
    pub(crate) async fn without_unknown_deletes(
        &self,
        ds: usize,
        batch: RecordBatch,
    ) -> Result<(RecordBatch, usize), LakeError> {
        let set = &self.sets[ds];
        let dataset = &set.dataset;
        let feed_without_sequence = dataset.change_data_feed && dataset.sequence_by.is_empty();
        if !feed_without_sequence || dataset.delete_when.is_none() {
            return Ok((batch, 0));
        }
        let label = dataset.name.as_str();
        let Some(flags) = batch.columns().last().and_then(|c| c.as_boolean_opt()) else {
            return Ok((batch, 0));
        };
        let deletes: BooleanArray = flags.iter().map(|f| Some(f == Some(true))).collect();
        if deletes.true_count() == 0 {
            return Ok((batch, 0));
        }
        let key_of = |b: &RecordBatch| -> Vec<ArrayRef> {
            dataset.keys.iter().map(|&k| b.column(k).clone()).collect()
        };
        let deleted: Vec<ArrayRef> = (dataset.keys.iter())
            .map(|&k| {
                let keys = filter(batch.column(k).as_ref(), &deletes)?;
                cast(&keys, &arrow_type(dataset.columns[k].ty))
            })
            .collect::<Result<_, _>>()
            .map_err(LakeError::arrow(label))?;
        let name = TableName::Target(dataset.clone());
        let held = self
            .keyed(dataset, &set.target, &name, &dataset.keys, deleted)
            .await?;
        let keep = held_or_not_deleted(&batch, &key_of(&batch), &held, &deletes)
            .map_err(LakeError::arrow(label))?;
        let left_out = batch.num_rows() - keep.true_count();
        let batch = filter_record_batch(&batch, &keep).map_err(LakeError::arrow(label))?;
        Ok((batch, left_out))
    }
}

/// Which rows to keep: those not `deletes`, and the deletes of a key one of
/// the `held` batches (the table's key columns) holds.
fn held_or_not_deleted(
    batch: &RecordBatch,
    keys: &[ArrayRef],
    held: &[RecordBatch],
    deletes: &BooleanArray,
) -> Result<BooleanArray, deltalake::arrow::error::ArrowError> {
    let fields = keys
        .iter()
        .map(|k| SortField::new(k.data_type().clone()))
        .collect();
    let converter = RowConverter::new(fields)?;
    let mut found = HashSet::new();
    for b in held {
        let columns = (b.columns().iter().zip(keys))
            .map(|(c, k)| cast(c, k.data_type()))
            .collect::<Result<Vec<_>, _>>()?;
        let rows = converter.convert_columns(&columns)?;
        found.extend(rows.iter().map(|r| r.owned()));
    }
    let rows = converter.convert_columns(keys)?;
    Ok((0..batch.num_rows())
        .map(|i| Some(!deletes.value(i) || found.contains(&rows.row(i).owned())))
        .collect())
}
