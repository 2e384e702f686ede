//! The keyed upsert's work on Arrow batches, with no I/O: which target row
//! each change meets, what the change does to it, and the rows that replace
//! a rewritten file.

use deltalake::arrow::array::{Array, ArrayRef, UInt32Array};
use deltalake::arrow::compute::{interleave, take};
use deltalake::arrow::error::ArrowError;
use deltalake::arrow::record_batch::RecordBatch;
use deltalake::arrow::row::{RowConverter, Rows, SortField};
use deltaload_core::{Dataset, Value};
use std::cmp::Ordering;
use std::collections::HashMap;

/// What a change does to the target row of its key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Action {
    /// The change is newer: the row takes its values.
    Update,
    /// The row is as new or newer: it stays.
    Stale,
    /// A delete at least as new as the row: the row goes.
    Delete,
}

impl Action {
    /// Whether the file holding the row must be rewritten.
    pub fn changes(self) -> bool {
        self != Action::Stale
    }
}

/// What change `change` (a row of the dataset, with its delete flag) does to a
/// target row of its key (`target`: the table's columns; only the sequence and
/// tie-break columns are read). The rule of the MERGE's clauses: a delete
/// removes a row it is not older than; an upsert updates a row it is newer
/// than by [`Dataset::compare`]; without a sequence, the change always wins.
pub(crate) fn decide(dataset: &Dataset, change: &[Value], target: &[Value]) -> Action {
    let delete = dataset.is_delete(change);
    if dataset.sequence_by.is_empty() {
        return if delete {
            Action::Delete
        } else {
            Action::Update
        };
    }
    if delete {
        let by_sequence = dataset
            .sequence_by
            .iter()
            .map(|&i| change[i].cmp(&target[i]))
            .find(|o| o.is_ne())
            .unwrap_or(Ordering::Equal);
        return match by_sequence {
            Ordering::Less => Action::Stale,
            _ => Action::Delete,
        };
    }
    match dataset.compare(change, target) {
        Ordering::Greater => Action::Update,
        _ => Action::Stale,
    }
}

/// The changes by key: their key columns in Arrow's row format.
pub(crate) struct ChangeKeys {
    converter: RowConverter,
    rows: Rows,
}

impl ChangeKeys {
    /// The keys of `columns` (the changes' key columns, in key order).
    pub fn new(columns: &[ArrayRef]) -> Result<Self, ArrowError> {
        let fields = columns
            .iter()
            .map(|c| SortField::new(c.data_type().clone()))
            .collect();
        let converter = RowConverter::new(fields)?;
        let rows = converter.convert_columns(columns)?;
        Ok(Self { converter, rows })
    }

    /// Each change by its key. A key given twice is an error of the caller
    /// (changes come one per key): its first index is returned as `Err`.
    pub fn index(&self) -> Result<HashMap<&[u8], u32>, u32> {
        let mut index = HashMap::with_capacity(self.rows.num_rows());
        for (i, row) in self.rows.iter().enumerate() {
            if let Some(first) = index.insert(row.data(), i as u32) {
                return Err(first);
            }
        }
        Ok(index)
    }

    /// The rows of a target file whose key is a change's: (row, change) pairs
    /// in row order. `columns` are the file's key columns, in key order.
    pub fn matches(
        &self,
        index: &HashMap<&[u8], u32>,
        columns: &[ArrayRef],
    ) -> Result<Vec<(u32, u32)>, ArrowError> {
        let rows = self.converter.convert_columns(columns)?;
        Ok(rows
            .iter()
            .enumerate()
            .filter_map(|(r, row)| index.get(row.data()).map(|&c| (r as u32, c)))
            .collect())
    }
}

/// The rows that replace a rewritten file: its rows in order, less those
/// deleted, with those updated taking the change's values in the columns an
/// update sets (`updated[i]` for column `i`; the others keep the row's).
/// `file` has the table's columns, `changes` the same columns first.
pub(crate) fn rewrite(
    file: &RecordBatch,
    changes: &RecordBatch,
    hits: &[(u32, u32, Action)],
    updated: &[bool],
) -> Result<Vec<ArrayRef>, ArrowError> {
    let mut by_row: HashMap<u32, (u32, Action)> = HashMap::with_capacity(hits.len());
    for &(r, c, a) in hits {
        by_row.insert(r, (c, a));
    }
    let n = file.num_rows();
    let mut kept: Vec<(usize, usize)> = Vec::with_capacity(n);
    let mut set: Vec<(usize, usize)> = Vec::with_capacity(n);
    for r in 0..n {
        match by_row.get(&(r as u32)) {
            Some((_, Action::Delete)) => {}
            Some((c, Action::Update)) => {
                kept.push((0, r));
                set.push((1, *c as usize));
            }
            _ => {
                kept.push((0, r));
                set.push((0, r));
            }
        }
    }
    (0..file.num_columns())
        .map(|i| {
            let sources: [&dyn Array; 2] = [file.column(i).as_ref(), changes.column(i).as_ref()];
            interleave(&sources, if updated[i] { &set } else { &kept })
        })
        .collect()
}

/// Columns `0..width` of the changes at `indices`: the rows an upsert inserts.
pub(crate) fn inserts(
    changes: &RecordBatch,
    width: usize,
    indices: &[u32],
) -> Result<Vec<ArrayRef>, ArrowError> {
    let indices = UInt32Array::from(indices.to_vec());
    (0..width)
        .map(|i| take(changes.column(i).as_ref(), &indices, None))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use deltalake::arrow::array::{Int64Array, StringArray};
    use std::sync::Arc;

    fn orders() -> Arc<Dataset> {
        deltaload_core::Dataset::orders()
    }

    /// An orders row with `status` and `updated_at` (microseconds) set.
    fn row(status: &str, at: i64) -> Vec<Value> {
        let d = orders();
        let mut r = vec![Value::Null; d.columns.len()];
        let col = |n: &str| d.columns.iter().position(|c| c.name == n).unwrap();
        r[col("order_id")] = Value::Int(1);
        r[col("status")] = Value::Text(status.into());
        r[col("updated_at")] = Value::Timestamp(at);
        r
    }

    #[test]
    fn newer_updates_older_is_stale_and_ties_go_by_content() {
        let d = orders();
        assert_eq!(
            decide(&d, &row("paid", 2), &row("placed", 1)),
            Action::Update
        );
        assert_eq!(
            decide(&d, &row("paid", 1), &row("placed", 2)),
            Action::Stale
        );
        let (a, b) = (row("shipped", 1), row("paid", 1));
        assert_eq!(
            decide(&d, &a, &b),
            Action::Update,
            "shipped > paid by bytes"
        );
        assert_eq!(decide(&d, &b, &a), Action::Stale);
        assert_eq!(
            decide(&d, &a, &a),
            Action::Stale,
            "an equal change changes nothing"
        );
    }

    #[test]
    fn keys_given_twice_are_found_and_matches_come_in_row_order() {
        let keys: ArrayRef = Arc::new(Int64Array::from(vec![3, 1, 2]));
        let k = ChangeKeys::new(&[keys]).unwrap();
        let index = k.index().unwrap();
        let file: ArrayRef = Arc::new(Int64Array::from(vec![9, 2, 3, 8]));
        assert_eq!(k.matches(&index, &[file]).unwrap(), vec![(1, 2), (2, 0)]);
        let twice: ArrayRef = Arc::new(Int64Array::from(vec![3, 1, 3]));
        assert_eq!(ChangeKeys::new(&[twice]).unwrap().index().err(), Some(0));
    }

    #[test]
    fn a_rewrite_keeps_order_drops_deletes_and_updates_only_the_set_columns() {
        let batch = |ids: Vec<i64>, names: Vec<&str>| {
            RecordBatch::try_from_iter([
                ("id", Arc::new(Int64Array::from(ids)) as ArrayRef),
                ("name", Arc::new(StringArray::from(names)) as ArrayRef),
            ])
            .unwrap()
        };
        let file = batch(vec![1, 2, 3], vec!["a", "b", "c"]);
        let changes = batch(vec![3, 1], vec!["C", "A"]);
        let hits = [(0, 1, Action::Delete), (2, 0, Action::Update)];
        let out = rewrite(&file, &changes, &hits, &[true, false]).unwrap();
        let ids = out[0].as_any().downcast_ref::<Int64Array>().unwrap();
        let names = out[1].as_any().downcast_ref::<StringArray>().unwrap();
        assert_eq!(ids.values().to_vec(), vec![2, 3]);
        assert_eq!(names.iter().collect::<Vec<_>>(), vec![Some("b"), Some("c")]);
        let out = rewrite(&file, &changes, &hits[1..], &[true, true]).unwrap();
        let names = out[1].as_any().downcast_ref::<StringArray>().unwrap();
        assert_eq!(
            names.iter().collect::<Vec<_>>(),
            vec![Some("a"), Some("b"), Some("C")]
        );
    }
}
