//! The MERGE's source, without the rows delta-rs's MERGE cannot take when it
//! writes the change data feed: a delete of a key the table does not hold,
//! which no clause takes, comes out of it as an all-null feed row once
//! another row of the same MERGE is inserted, and the commit fails ("rows
//! failed validation check"). Without a sequence such a delete changes
//! nothing (no tombstone is kept for it), so it is left out. With a sequence
//! the clauses compare the table's sequence and delta-rs writes no such row.

use crate::table::arrow_rows::DELETE_FLAG;
use crate::table::error::LakeError;
use crate::write::Writer;
use deltalake::arrow::array::{ArrayRef, AsArray, BooleanArray};
use deltalake::arrow::compute::{cast, filter, filter_record_batch};
use deltalake::arrow::record_batch::RecordBatch;
use deltaload_engine::tables::{arrow_type, TableName};

impl Writer<'_> {
    /// `batch` (the MERGE's source: the dataset's columns, then its lineage
    /// columns, then the delete flag) without its deletes of keys the
    /// table does not hold, when the dataset writes the change data feed and
    /// has no sequence; `batch` as it is otherwise.
    pub(crate) async fn without_unknown_deletes(
        &mut self,
        batch: RecordBatch,
    ) -> Result<RecordBatch, LakeError> {
        let dataset = self.set.dataset.clone();
        let feed_without_sequence = dataset.change_data_feed && dataset.sequence_by.is_empty();
        if !feed_without_sequence || dataset.delete_when.is_none() {
            return Ok(batch);
        }
        let label = dataset.name.as_str();
        let flags = (batch.column_by_name(DELETE_FLAG)).and_then(|c| c.as_boolean_opt());
        let Some(flags) = flags else {
            return Err(LakeError::Invariant {
                table: label.to_string(),
                detail: format!("the MERGE's source has no boolean {DELETE_FLAG} column"),
            });
        };
        let deletes: BooleanArray = flags.iter().map(|f| Some(f == Some(true))).collect();
        if deletes.true_count() == 0 {
            return Ok(batch);
        }
        let deleted: Vec<ArrayRef> = (dataset.keys.iter())
            .map(|&k| {
                let keys = filter(batch.column(k).as_ref(), &deletes)?;
                cast(&keys, &arrow_type(dataset.columns[k].ty))
            })
            .collect::<Result<_, _>>()
            .map_err(LakeError::arrow(label))?;
        let (name, table) = (TableName::Target(dataset.clone()), &self.set.target);
        let held = self
            .keyed(&dataset, table, &name, &dataset.keys, deleted)
            .await?;
        let keys: Vec<ArrayRef> = dataset
            .keys
            .iter()
            .map(|&k| batch.column(k).clone())
            .collect();
        let keep = held_or_not_deleted(&keys, &held, &deletes).map_err(LakeError::arrow(label))?;
        let left_out = (batch.num_rows() - keep.true_count()) as u64;
        self.tally.writes.unknown_deletes_left_out += left_out;
        if left_out > 0 {
            tracing::debug!(table = %label, left_out, "deletes of keys the table does not hold left out of the MERGE");
        }
        filter_record_batch(&batch, &keep).map_err(LakeError::arrow(label))
    }
}

/// Which rows to keep: those not `deletes`, and the deletes of a key one of
/// the `held` batches (the table's key columns) holds. `keys` are the key
/// columns of every row; `held` is cast to their types.
fn held_or_not_deleted(
    keys: &[ArrayRef],
    held: &[RecordBatch],
    deletes: &BooleanArray,
) -> Result<BooleanArray, deltalake::arrow::error::ArrowError> {
    let at: Vec<usize> = (0..keys.len()).collect();
    let in_table = deltaload_engine::matching::among(keys, held, &at)?;
    Ok((deletes.iter().zip(in_table.iter()))
        .map(|(delete, held)| Some(delete != Some(true) || held == Some(true)))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use deltalake::arrow::array::{Decimal128Array, StringArray, StringViewArray};
    use deltalake::arrow::array::{TimestampMicrosecondArray, TimestampNanosecondArray};
    use deltalake::arrow::datatypes::{Field, Schema};
    use std::sync::Arc;

    /// A composite key of text, time and decimal, the table's side read
    /// back in other types (a string view, nanoseconds in another zone):
    /// only the delete of the key it does not hold is left out.
    #[test]
    fn a_composite_key_held_in_other_types_is_found() {
        let keys: Vec<ArrayRef> = vec![
            Arc::new(StringArray::from(vec!["a", "b", "c", "a"])),
            Arc::new(TimestampMicrosecondArray::from(vec![1, 2, 3, 9]).with_timezone("UTC")),
            Arc::new(
                Decimal128Array::from(vec![100, 200, 300, 100])
                    .with_precision_and_scale(10, 2)
                    .unwrap(),
            ),
        ];
        let held_columns: Vec<ArrayRef> = vec![
            Arc::new(StringViewArray::from(vec!["b", "a"])),
            Arc::new(
                TimestampNanosecondArray::from(vec![2_000, 1_000]).with_timezone("Europe/Berlin"),
            ),
            Arc::new(
                Decimal128Array::from(vec![200, 100])
                    .with_precision_and_scale(12, 2)
                    .unwrap(),
            ),
        ];
        let fields: Vec<Field> = (held_columns.iter().enumerate())
            .map(|(i, c)| Field::new(format!("k{i}"), c.data_type().clone(), true))
            .collect();
        let held = RecordBatch::try_new(Arc::new(Schema::new(fields)), held_columns).unwrap();
        // Rows 0, 1 and 3 are deletes; row 2 an upsert; row 3's key is not held.
        let deletes = BooleanArray::from(vec![true, true, false, true]);
        let keep = held_or_not_deleted(&keys, &[held], &deletes).unwrap();
        assert_eq!(keep, BooleanArray::from(vec![true, true, true, false]));
    }
}
