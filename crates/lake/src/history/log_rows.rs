//! The history log's rows of a file: which rows read back came from it,
//! its changes as rows of the log, and those of them the fold kept.

use super::{log_schema, DELETED};
use deltalake::arrow::array::{ArrayRef, AsArray, RecordBatch, StringArray};
use deltalake::arrow::array::{TimestampMicrosecondArray, UInt32Array};
use deltalake::arrow::compute::take_record_batch;
use deltalake::arrow::error::ArrowError;
use deltaload_core::Dataset;
use deltaload_flow::FileKey;
use std::sync::Arc;

/// Which rows of `changes` (of the log's schema) came from file version `key`.
pub(super) fn of_file(changes: &RecordBatch, key: &FileKey) -> Result<Vec<bool>, ArrowError> {
    let width = changes.num_columns();
    let text = |c: usize| changes.column(c).as_string_opt::<i32>().cloned();
    let (Some(files), Some(contents)) = (text(width - 3), text(width - 2)) else {
        return Err(ArrowError::SchemaError(
            "the log's file columns are not text".into(),
        ));
    };
    Ok((0..changes.num_rows())
        .map(|i| files.value(i) == key.location && contents.value(i) == key.content_id)
        .collect())
}

/// A file's changes (the dataset's columns, then the delete flag) as rows
/// of the log.
pub(super) fn logged(
    dataset: &Dataset,
    all: &RecordBatch,
    key: &FileKey,
    loaded_at: i64,
) -> Result<RecordBatch, ArrowError> {
    let width = dataset.columns.len();
    let n = all.num_rows();
    let mut columns: Vec<ArrayRef> = all.columns()[..width].to_vec();
    let position: Vec<usize> = (0..width).collect();
    let order = deltaload_engine::Order::new(dataset, &all.schema(), &position, Some(width))?;
    columns.push(Arc::new(order.deletes(all)?));
    columns.push(Arc::new(StringArray::new_repeated(&key.location, n)));
    columns.push(Arc::new(StringArray::new_repeated(&key.content_id, n)));
    let at = TimestampMicrosecondArray::from(vec![loaded_at; n]).with_timezone("UTC");
    columns.push(Arc::new(at));
    let schema = log_schema(dataset);
    debug_assert_eq!(schema.field(width).name(), DELETED);
    RecordBatch::try_new(schema, columns)
}

/// The rows `kept` (in key order) of `changes`, all from `from` on: those
/// rows as they are when none was left out (most files), without a copy.
pub(super) fn kept_rows(
    changes: &RecordBatch,
    from: usize,
    mut kept: Vec<u32>,
) -> Result<RecordBatch, ArrowError> {
    let all = changes.num_rows() - from;
    if kept.len() == all {
        return Ok(changes.slice(from, all));
    }
    kept.sort_unstable();
    take_record_batch(changes, &UInt32Array::from(kept))
}

#[cfg(test)]
mod tests {
    use super::*;
    use deltalake::arrow::array::Int64Array;

    /// The file's rows kept: all of them sliced off as they are, or those
    /// kept taken in position order; never a row before `from`.
    #[test]
    fn the_rows_kept_are_the_files_rows_kept() {
        let ids = Int64Array::from_iter_values(0..6);
        let changes = RecordBatch::try_from_iter([("id", Arc::new(ids) as ArrayRef)]).unwrap();
        let ids = |b: RecordBatch| -> Vec<i64> {
            b.column(0)
                .as_primitive::<deltalake::arrow::datatypes::Int64Type>()
                .values()
                .to_vec()
        };
        let all = kept_rows(&changes, 2, vec![5, 2, 4, 3]).unwrap();
        assert_eq!(ids(all), [2, 3, 4, 5]);
        assert_eq!(ids(kept_rows(&changes, 2, vec![5, 3]).unwrap()), [3, 5]);
    }
}
