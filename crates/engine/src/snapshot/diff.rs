//! A snapshot held against the table's rows of the scopes it applies to,
//! in Arrow: the rows to write (new keys, changed rows), the rows left as
//! they are, and the rows of keys it no longer holds, to delete.

use arrow_array::RecordBatch;
use arrow_array::{Array, ArrayRef, BooleanArray, UInt32Array};
use arrow_cast::cast;
use arrow_cast::display::{ArrayFormatter, FormatOptions};
use arrow_ord::sort::{lexsort_to_indices, SortColumn};
use arrow_row::{RowConverter, Rows, SortField};
use arrow_schema::ArrowError;
use arrow_select::concat::concat_batches;
use arrow_select::filter::filter_record_batch;
use arrow_select::take::take_record_batch;
use std::collections::HashMap;

/// What a snapshot changes in the table.
#[derive(Debug)]
pub struct Diff {
    /// The snapshot's new and changed rows, then the rows of the keys it no
    /// longer holds flagged deleted: a batch of the snapshot's schema.
    pub changes: RecordBatch,
    /// Snapshot rows equal to their table row in every column.
    pub unchanged: u64,
    /// Table rows whose key the snapshot no longer holds, deleted.
    pub retired: u64,
    /// Such rows kept, because the snapshot must not retire any.
    pub kept: u64,
}

/// `columns` (indexes) of `batch` in the row format, for comparing and hashing.
pub fn rows_of(batch: &RecordBatch, columns: &[usize]) -> Result<Rows, ArrowError> {
    let arrays: Vec<ArrayRef> = columns.iter().map(|&c| batch.column(c).clone()).collect();
    let fields = arrays
        .iter()
        .map(|a| SortField::new(a.data_type().clone()))
        .collect();
    RowConverter::new(fields)?.convert_columns(&arrays)
}

/// The distinct values of `columns` in `batch`, each as the JSON array of
/// its texts (a null is `null`), with the rows holding it.
pub fn scopes(
    batch: &RecordBatch,
    columns: &[usize],
) -> Result<Vec<(String, Vec<u32>)>, ArrowError> {
    let rows = rows_of(batch, columns)?;
    let options = FormatOptions::default();
    let formatters: Vec<ArrayFormatter> = columns
        .iter()
        .map(|&c| ArrayFormatter::try_new(batch.column(c).as_ref(), &options))
        .collect::<Result<_, _>>()?;
    let mut found: HashMap<&[u8], usize> = HashMap::new();
    let mut out: Vec<(String, Vec<u32>)> = Vec::new();
    for i in 0..batch.num_rows() {
        let at = *found.entry(rows.row(i).data()).or_insert_with(|| {
            let texts: Vec<serde_json::Value> = columns
                .iter()
                .zip(&formatters)
                .map(|(&c, f)| match batch.column(c).is_null(i) {
                    true => serde_json::Value::Null,
                    false => f.value(i).to_string().into(),
                })
                .collect();
            out.push((serde_json::Value::from(texts).to_string(), Vec::new()));
            out.len() - 1
        });
        out[at].1.push(i as u32);
    }
    Ok(out)
}

/// The rows of `held` whose values of `columns` are among those of a row
/// of `of`.
pub fn within(
    held: &RecordBatch,
    of: &RecordBatch,
    columns: &[usize],
) -> Result<RecordBatch, ArrowError> {
    if columns.is_empty() {
        return Ok(held.clone());
    }
    let arrays: Vec<ArrayRef> = columns.iter().map(|&c| held.column(c).clone()).collect();
    let mask = crate::matching::among(&arrays, std::slice::from_ref(of), columns)?;
    filter_record_batch(held, &mask)
}

/// `held` (the table's rows, the dataset's `width` columns in order) cast
/// to the types of `snapshot`'s first `width` columns.
pub fn aligned(
    held: &RecordBatch,
    snapshot: &RecordBatch,
    width: usize,
) -> Result<RecordBatch, ArrowError> {
    let schema = snapshot.schema().project(&(0..width).collect::<Vec<_>>())?;
    let columns = (0..width)
        .map(|c| cast(held.column(c), schema.field(c).data_type()))
        .collect::<Result<Vec<_>, _>>()?;
    RecordBatch::try_new(std::sync::Arc::new(schema), columns)
}

/// `snapshot` (one row per key, the dataset's columns then the delete flag)
/// held against `held` (the table's rows of the same scopes, aligned: the
/// dataset's columns): `keys` index both. The rows of keys the snapshot no
/// longer holds are deleted when `retire`, else kept.
pub fn diff(
    snapshot: &RecordBatch,
    held: &RecordBatch,
    keys: &[usize],
    retire: bool,
) -> Result<Diff, ArrowError> {
    let all: Vec<usize> = (0..held.num_columns()).collect();
    let (new_keys, old_keys) = (rows_of(snapshot, keys)?, rows_of(held, keys)?);
    let converter = |b: &RecordBatch| rows_of(b, &all);
    let (new_rows, old_rows) = (converter(snapshot)?, converter(held)?);
    let index: HashMap<&[u8], usize> = (0..held.num_rows())
        .map(|j| (old_keys.row(j).data(), j))
        .collect();
    let mut seen = vec![false; held.num_rows()];
    let mut written: Vec<u32> = Vec::new();
    let mut unchanged = 0u64;
    for i in 0..snapshot.num_rows() {
        match index.get(new_keys.row(i).data()) {
            Some(&j) => {
                seen[j] = true;
                match new_rows.row(i) == old_rows.row(j) {
                    true => unchanged += 1,
                    false => written.push(i as u32),
                }
            }
            None => written.push(i as u32),
        }
    }
    let mut gone: Vec<u32> = (0..held.num_rows() as u32)
        .filter(|&j| !seen[j as usize])
        .collect();
    let kept = match retire {
        true => 0,
        false => std::mem::take(&mut gone).len() as u64,
    };
    let upserts = take_rows(snapshot, &written)?;
    let mut deletes: Vec<ArrayRef> = take_rows(held, &gone)?.columns().to_vec();
    deletes.push(std::sync::Arc::new(BooleanArray::from(vec![
        true;
        gone.len()
    ])));
    let deletes = RecordBatch::try_new(snapshot.schema(), deletes)?;
    let changes = concat_batches(&snapshot.schema(), [&upserts, &deletes])?;
    Ok(Diff {
        changes: sorted(&changes, keys)?,
        unchanged,
        retired: gone.len() as u64,
        kept,
    })
}

/// `batch` sorted by the `keys` columns, as the upsert takes its changes.
fn sorted(batch: &RecordBatch, keys: &[usize]) -> Result<RecordBatch, ArrowError> {
    let by: Vec<SortColumn> = keys
        .iter()
        .map(|&k| SortColumn {
            values: batch.column(k).clone(),
            options: None,
        })
        .collect();
    let order = lexsort_to_indices(&by, None)?;
    take_rows(batch, order.values())
}

/// Rows `at` of `batch`.
pub fn take_rows(batch: &RecordBatch, at: &[u32]) -> Result<RecordBatch, ArrowError> {
    take_record_batch(batch, &UInt32Array::from(at.to_vec()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Int64Array, StringArray};
    use arrow_schema::{DataType, Field, Schema};
    use std::sync::Arc;

    fn snapshot(rows: &[(i64, &str)]) -> RecordBatch {
        let schema = Schema::new(vec![
            Field::new("id", DataType::Int64, true),
            Field::new("name", DataType::Utf8, true),
            Field::new("_deleted", DataType::Boolean, true),
        ]);
        let ids = Int64Array::from_iter_values(rows.iter().map(|r| r.0));
        let names = StringArray::from_iter_values(rows.iter().map(|r| r.1));
        let flags = BooleanArray::from(vec![None; rows.len()]);
        RecordBatch::try_new(
            Arc::new(schema),
            vec![Arc::new(ids), Arc::new(names), Arc::new(flags)],
        )
        .unwrap()
    }

    fn held(rows: &[(i64, &str)]) -> RecordBatch {
        let b = snapshot(rows);
        b.project(&[0, 1]).unwrap()
    }

    #[test]
    fn new_and_changed_rows_are_written_equal_ones_left_and_missing_keys_deleted() {
        let s = snapshot(&[(1, "a"), (2, "B"), (4, "d")]);
        let h = held(&[(1, "a"), (2, "b"), (3, "c")]);
        let d = diff(&s, &h, &[0], true).unwrap();
        assert_eq!((d.unchanged, d.retired), (1, 1));
        let ids = d.changes.column(0).as_any().downcast_ref::<Int64Array>();
        assert_eq!(ids.unwrap().values().to_vec(), vec![2, 3, 4]);
        let flags = d.changes.column(2).as_any().downcast_ref::<BooleanArray>();
        let flags: Vec<Option<bool>> = flags.unwrap().iter().collect();
        assert_eq!(flags, vec![None, Some(true), None]);
        let d = diff(&s, &h, &[0], false).unwrap();
        assert_eq!(
            (d.unchanged, d.retired, d.kept, d.changes.num_rows()),
            (1, 0, 1, 2)
        );
    }

    #[test]
    fn the_rows_of_other_scopes_are_not_held() {
        let s = snapshot(&[(1, "eu"), (2, "eu")]);
        let h = held(&[(1, "eu"), (3, "us"), (4, "eu")]);
        let scoped = within(&h, &s, &[1]).unwrap();
        let ids = scoped.column(0).as_any().downcast_ref::<Int64Array>();
        assert_eq!(ids.unwrap().values().to_vec(), vec![1, 4]);
        let found = scopes(&s, &[1]).unwrap();
        assert_eq!(found, vec![("[\"eu\"]".to_string(), vec![0, 1])]);
    }
}
