//! The history log's rows of a file: which rows read back came from it,
//! its changes as the fold takes them and as rows of the log, and where
//! each change came from. The fold's batch holds the dataset's columns
//! and the delete flag only: the file and load columns, the same for
//! every change of a file, are written once into the log's rows and taken
//! into the versions' rows ([`Origin`]), not copied along with the changes.

use super::{log_schema, DELETED};
use arrow_array::cast::AsArray;
use arrow_array::types::TimestampMicrosecondType;
use arrow_array::{new_empty_array, Array, ArrayRef, RecordBatch};
use arrow_array::{StringArray, TimestampMicrosecondArray, UInt32Array};
use arrow_schema::ArrowError;
use arrow_schema::SchemaRef;
use arrow_select::concat::concat;
use arrow_select::interleave::interleave;
use arrow_select::take::take_record_batch;
use deltaload_core::Dataset;
use deltaload_flow::FileKey;
use std::sync::Arc;

/// Which rows of `changes` (of the log's schema) came from file version `key`.
pub fn of_file(changes: &RecordBatch, key: &FileKey) -> Result<Vec<bool>, ArrowError> {
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

/// The schema of the fold's batch: the log's columns up to the delete flag.
pub fn folded_schema(dataset: &Dataset) -> Result<SchemaRef, ArrowError> {
    let width = dataset.columns.len();
    let schema = log_schema(dataset);
    debug_assert_eq!(schema.field(width).name(), DELETED);
    Ok(Arc::new(schema.project(&(0..=width).collect::<Vec<_>>())?))
}

/// A file's changes (`all`, of `deltaload_ingest::changes_schema`) as the
/// fold takes them: the dataset's columns, then the delete flag.
pub fn flagged(dataset: &Dataset, all: &RecordBatch) -> Result<RecordBatch, ArrowError> {
    let width = dataset.columns.len();
    let mut columns: Vec<ArrayRef> = all.columns()[..width].to_vec();
    let position: Vec<usize> = (0..width).collect();
    let order = crate::order::Order::new(dataset, &all.schema(), &position, Some(width))?;
    columns.push(Arc::new(order.deletes(all)?));
    RecordBatch::try_new(folded_schema(dataset)?, columns)
}

/// The rows `kept` (in key order) of `changes` (the fold's batch), all
/// from `from` on, as rows of the log from file version `key`.
pub fn log_rows(
    dataset: &Dataset,
    changes: &RecordBatch,
    (from, kept): (usize, Vec<u32>),
    key: &FileKey,
    loaded_at: i64,
) -> Result<RecordBatch, ArrowError> {
    let rows = kept_rows(changes, from, kept)?;
    let n = rows.num_rows();
    let mut columns = rows.columns().to_vec();
    columns.push(Arc::new(StringArray::new_repeated(&key.location, n)));
    columns.push(Arc::new(StringArray::new_repeated(&key.content_id, n)));
    columns.push(Arc::new(loaded(loaded_at, n)));
    RecordBatch::try_new(log_schema(dataset), columns)
}

/// `n` times the load time `at`.
fn loaded(at: i64, n: usize) -> TimestampMicrosecondArray {
    TimestampMicrosecondArray::from(vec![at; n]).with_timezone("UTC")
}

/// The rows `kept` (in key order) of `changes`, all from `from` on: those
/// rows as they are when none was left out (most files), without a copy.
fn kept_rows(
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

/// Where the fold's changes came from (`source_file`, `loaded_at`): those
/// of the log's rows read back (the first `from` changes), then the file's.
pub struct Origin {
    from: usize,
    files: [ArrayRef; 2],
    loads: [ArrayRef; 2],
}

impl Origin {
    /// The origin of the log's rows `read` (of the log's schema), then of
    /// the file version `key` loaded at `loaded_at`.
    pub fn of(
        dataset: &Dataset,
        read: &[RecordBatch],
        key: &FileKey,
        loaded_at: i64,
    ) -> Result<Self, ArrowError> {
        let width = dataset.columns.len();
        let schema = log_schema(dataset);
        let column = |c: usize| -> Result<ArrayRef, ArrowError> {
            let parts: Vec<&dyn Array> = read.iter().map(|b| b.column(c).as_ref()).collect();
            match parts.is_empty() {
                true => Ok(new_empty_array(schema.field(c).data_type())),
                false => concat(&parts),
            }
        };
        let own: ArrayRef = Arc::new(StringArray::from(vec![key.location.as_str()]));
        Ok(Self {
            from: read.iter().map(RecordBatch::num_rows).sum(),
            files: [column(width + 1)?, own],
            loads: [column(width + 3)?, Arc::new(loaded(loaded_at, 1))],
        })
    }

    /// The load time of each of the first `n` changes, in microseconds.
    pub fn arrival(&self, n: usize) -> Result<Vec<i64>, ArrowError> {
        let logged = (self.loads[0].as_primitive_opt::<TimestampMicrosecondType>())
            .ok_or_else(|| ArrowError::SchemaError("the log's loaded_at is not a time".into()))?;
        let own = self.loads[1]
            .as_primitive::<TimestampMicrosecondType>()
            .value(0);
        Ok((0..n)
            .map(|r| match r < self.from {
                true => logged.value(r),
                false => own,
            })
            .collect())
    }

    /// The `source_file` and `loaded_at` of the changes at `rows`.
    pub fn of_rows(&self, rows: impl Iterator<Item = u32>) -> Result<[ArrayRef; 2], ArrowError> {
        let at: Vec<(usize, usize)> = rows
            .map(|r| match (r as usize).checked_sub(self.from) {
                None => (0, r as usize),
                Some(_) => (1, 0),
            })
            .collect();
        let pick = |parts: &[ArrayRef; 2]| interleave(&[parts[0].as_ref(), parts[1].as_ref()], &at);
        Ok([pick(&self.files)?, pick(&self.loads)?])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::Int64Array;

    /// The file's rows kept: all of them sliced off as they are, or those
    /// kept taken in position order; never a row before `from`.
    #[test]
    fn the_rows_kept_are_the_files_rows_kept() {
        let ids = Int64Array::from_iter_values(0..6);
        let changes = RecordBatch::try_from_iter([("id", Arc::new(ids) as ArrayRef)]).unwrap();
        let ids = |b: RecordBatch| -> Vec<i64> {
            b.column(0)
                .as_primitive::<arrow_array::types::Int64Type>()
                .values()
                .to_vec()
        };
        let all = kept_rows(&changes, 2, vec![5, 2, 4, 3]).unwrap();
        assert_eq!(ids(all), [2, 3, 4, 5]);
        assert_eq!(ids(kept_rows(&changes, 2, vec![5, 3]).unwrap()), [3, 5]);
    }

    /// A dataset of `id` and `at`.
    fn dataset() -> Arc<Dataset> {
        let text = "[[dataset]]\nname = \"p\"\nkeys = [\"id\"]\nsequence_by = [\"at\"]\n\
                    history = true\n[[dataset.columns]]\nname = \"id\"\ntype = \"bigint\"\n\
                    [[dataset.columns]]\nname = \"at\"\ntype = \"bigint\"\n";
        deltaload_core::Spec::parse(text, "p.toml")
            .unwrap()
            .datasets
            .remove(0)
    }

    /// Changes of `ids`, as the fold takes them.
    fn changes(d: &Dataset, ids: &[i64]) -> RecordBatch {
        let column = |v: Vec<i64>| Arc::new(Int64Array::from(v)) as ArrayRef;
        let flags = arrow_array::BooleanArray::from(vec![false; ids.len()]);
        let columns = vec![
            column(ids.to_vec()),
            column(vec![1; ids.len()]),
            Arc::new(flags),
        ];
        RecordBatch::try_new(folded_schema(d).unwrap(), columns).unwrap()
    }

    fn file(name: &str) -> FileKey {
        FileKey {
            location: name.into(),
            content_id: format!("{name}-content"),
        }
    }

    /// A file's rows kept become rows of the log naming it; the versions
    /// take the file and load of each change: a logged row's own, the
    /// file's past `from`.
    #[test]
    fn each_change_keeps_the_file_and_load_it_came_from() {
        let d = dataset();
        let logged = |ids: &[i64], kept: Vec<u32>, name: &str, at: i64| {
            log_rows(&d, &changes(&d, ids), (0, kept), &file(name), at).unwrap()
        };
        let a = logged(&[1, 2], vec![1, 0], "a", 100);
        let b = logged(&[3, 4], vec![1], "b", 200);
        assert_eq!(b.num_rows(), 1);
        assert_eq!(of_file(&a, &file("a")).unwrap(), [true, true]);
        assert_eq!(of_file(&b, &file("a")).unwrap(), [false]);
        let origin = Origin::of(&d, &[a, b], &file("c"), 300).unwrap();
        let [files, loads] = origin.of_rows([4, 0, 2, 3, 1].into_iter()).unwrap();
        let files: Vec<&str> = files.as_string::<i32>().iter().flatten().collect();
        assert_eq!(files, ["c", "a", "b", "c", "a"]);
        let loads = loads.as_primitive::<arrow_array::types::TimestampMicrosecondType>();
        assert_eq!(loads.values().to_vec(), [300, 100, 200, 300, 100]);
        let empty = Origin::of(&d, &[], &file("c"), 300).unwrap();
        let [files, _] = empty.of_rows([0, 1].into_iter()).unwrap();
        assert_eq!(files.as_string::<i32>().value(1), "c");
    }
}
