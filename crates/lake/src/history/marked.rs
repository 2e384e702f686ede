//! The versions of a merge-on-read dataset's history put in place as its
//! table's rows are: every version of the keys a file touches marked
//! deleted in a deletion vector, their versions folded again appended, in
//! one commit (made ready while the log takes the file's changes, committed
//! after it). Only the key columns of the history's files are read, and
//! only the new versions written (copy-on-write rewrites the touched keys'
//! range: [`super::write`]).

use super::write::{aligned, next_of, HistoryWriter, WRITER};
use crate::table::error::LakeError;
use crate::write::merge::MergedFile;
use crate::write::upsert::{candidates, delta_error, read_files, stats_prefix, write_files};
use crate::write::upsert::{KeyBounds, Replacement, TargetFile};
use deltalake::arrow::array::{Array, AsArray, RecordBatch};
use deltalake::arrow::datatypes::Int64Type;
use deltalake::arrow::datatypes::SchemaRef;
use deltalake::arrow::error::ArrowError;
use deltalake::DeltaTable;
use deltaload_core::Dataset;
use deltaload_engine::snapshot::diff::rows_of;
use deltaload_engine::tables::TableName;
use deltaload_flow::FileKey;
use futures::StreamExt;
use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};

/// A file's versions made ready to put in place merge-on-read.
pub(super) enum Marks {
    /// The history's table has a feature this write does not handle: its
    /// versions are replaced by range instead.
    ByRange,
    /// No version to mark nor to write.
    Nothing,
    /// The new versions written and the old ones marked, to commit.
    Ready(Box<Replacement>),
}

impl HistoryWriter {
    /// Makes `versions` (in key order) ready to put in place of every
    /// version of the keys of `touched` (the file `file`'s newest change per
    /// key), merge-on-read: the versions of those keys marked deleted, the
    /// new ones written into files not yet committed ([`Self::commit_marks`]).
    pub(super) async fn prepare_marks(
        &mut self,
        touched: &RecordBatch,
        versions: RecordBatch,
        file: &FileKey,
    ) -> Result<Marks, LakeError> {
        let dataset = self.dataset.clone();
        let label = TableName::History(dataset.clone()).as_str();
        let table = &mut self.tables.versions;
        if let Some(reason) =
            crate::write::upsert::unsupported(table).map_err(delta_error(table, &label))?
        {
            tracing::debug!(table = %label, reason, "the history's versions replaced by range");
            return Ok(Marks::ByRange);
        }
        crate::write::upsert::allow_deletion_vectors(table, &label).await?;
        let key = &dataset.columns[dataset.keys[0]].name;
        let bounds = KeyBounds::of_column(touched.column(dataset.keys[0]));
        let (files, _) = candidates(table, key, &bounds, stats_prefix(table))
            .await
            .map_err(delta_error(table, &label))?;
        let snapshot = table.snapshot().map_err(delta_error(table, &label))?;
        let schema = snapshot.snapshot().arrow_schema();
        let changed = touched_rows(table, &files, (&dataset, &schema), touched, &label).await?;
        let which: Vec<usize> = (0..files.len())
            .filter(|&f| !changed[f].1.is_empty())
            .collect();
        if which.is_empty() && versions.num_rows() == 0 {
            return Ok(Marks::Nothing);
        }
        let store = table.object_store();
        let (removes, kept, dv_file) =
            crate::write::upsert::marked(&store, &files, &which, &changed, &label).await?;
        let rows = aligned(&schema, &[versions]).map_err(LakeError::arrow(&label))?;
        let written = write_files(table, &rows, crate::table::ORDERS_FILE_BYTES, &label).await?;
        let named = MergedFile {
            location: &file.location,
            content_id: &file.content_id,
            counts: None,
        };
        Ok(Marks::Ready(Box::new(Replacement {
            rows: None,
            written,
            removes,
            kept,
            dv_file,
            cdc: Vec::new(),
            predicate: bounds.predicate(key),
            metadata: serde_json::json!({ "files": [named.to_json()] }),
            app: Some(next_of(WRITER, table)),
        })))
    }

    /// Commits the versions [`Self::prepare_marks`] made ready.
    pub(super) async fn commit_marks(&mut self, ready: Replacement) -> Result<(), LakeError> {
        let label = TableName::History(self.dataset.clone()).as_str();
        let table = &mut self.tables.versions;
        let sizes = (crate::table::ORDERS_FILE_BYTES, None);
        let (written, _) = crate::write::upsert::commit(table, ready, sizes, &label).await?;
        *table = written;
        Ok(())
    }
}

/// For each of `files` (of the history `table`, whose Arrow schema is
/// `schema`): its rows, and the positions of its live rows whose key is
/// one of `touched`'s.
async fn touched_rows(
    table: &DeltaTable,
    files: &[TargetFile],
    (dataset, schema): (&Dataset, &SchemaRef),
    touched: &RecordBatch,
    label: &str,
) -> Result<Vec<(u64, Vec<u64>)>, LakeError> {
    let arrow = || LakeError::arrow(label);
    let wanted = (dataset.keys.iter())
        .map(|&k| schema.index_of(&dataset.columns[k].name))
        .collect::<Result<Vec<usize>, _>>()
        .map_err(arrow())?;
    let keys = Touched::of(dataset, touched).map_err(arrow())?;
    let store = table.object_store();
    let mut reads = read_files(store, files.iter(), schema, &wanted, label);
    let mut changed = Vec::with_capacity(files.len());
    while let Some(file) = reads.next().await {
        let file = file?;
        let held = keys.held(&file.batch).map_err(arrow())?;
        let positions = held.into_iter().map(|r| file.physical(r)).collect();
        changed.push((file.rows, positions));
    }
    Ok(changed)
}

/// The keys a file touches: one bigint column (most keys) as numbers, any
/// other in the row format.
pub(super) enum Touched {
    Ints(HashSet<i64, BuildHasherDefault<Spread>>),
    Rows(HashSet<Box<[u8]>>),
}

impl Touched {
    /// The keys of `touched` (the dataset's columns).
    pub(super) fn of(dataset: &Dataset, touched: &RecordBatch) -> Result<Self, ArrowError> {
        if let Some(ints) = deltaload_engine::history::bigint_key(dataset, touched) {
            return Ok(Self::Ints(ints.iter().flatten().collect()));
        }
        let rows = rows_of(touched, &dataset.keys)?;
        Ok(Self::Rows(rows.iter().map(|r| r.data().into()).collect()))
    }

    /// The rows of `batch` (of the key columns only) whose key is touched.
    pub(super) fn held(&self, batch: &RecordBatch) -> Result<Vec<u32>, ArrowError> {
        let n = batch.num_rows() as u32;
        match self {
            Self::Ints(set) => {
                let ints = (batch.column(0).as_primitive_opt::<Int64Type>()).ok_or_else(|| {
                    ArrowError::SchemaError("the history's key column is not a bigint".into())
                })?;
                Ok((0..n)
                    .filter(|&r| ints.is_valid(r as usize))
                    .filter(|&r| set.contains(&ints.value(r as usize)))
                    .collect())
            }
            Self::Rows(set) => {
                let all: Vec<usize> = (0..batch.num_columns()).collect();
                let found = rows_of(batch, &all)?;
                Ok((0..n)
                    .filter(|&r| set.contains(found.row(r as usize).data()))
                    .collect())
            }
        }
    }
}

/// A hash of numbers that spreads them with one multiplication (the
/// standard hasher, built against collisions an attacker makes, is several
/// times slower; keys here are the table's own).
#[derive(Default)]
pub(super) struct Spread(u64);

impl Hasher for Spread {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.write_u64(u64::from(*b) ^ self.0.rotate_left(8));
        }
    }

    fn write_u64(&mut self, i: u64) {
        let x = (i ^ self.0).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.0 = x ^ (x >> 29);
    }

    fn write_i64(&mut self, i: i64) {
        self.write_u64(i as u64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use deltalake::arrow::array::{ArrayRef, Int32Array, Int64Array, StringArray};
    use deltaload_core::Spec;
    use std::sync::Arc;

    /// A dataset keyed by `id` of type `key` and `region`, or `id` alone.
    fn dataset(key: &str, composite: bool) -> Arc<Dataset> {
        let keys = match composite {
            true => "[\"id\", \"region\"]",
            false => "[\"id\"]",
        };
        let text = format!(
            "[[dataset]]\nname = \"p\"\nkeys = {keys}\nsequence_by = [\"at\"]\n\
             [[dataset.columns]]\nname = \"id\"\ntype = \"{key}\"\n\
             [[dataset.columns]]\nname = \"region\"\ntype = \"string\"\n\
             [[dataset.columns]]\nname = \"at\"\ntype = \"bigint\"\n"
        );
        Spec::parse(&text, "p.toml").unwrap().datasets.remove(0)
    }

    fn ids(key: &str, values: &[i64]) -> ArrayRef {
        match key {
            "int" => Arc::new(Int32Array::from_iter_values(
                values.iter().map(|&v| v as i32),
            )),
            _ => Arc::new(Int64Array::from_iter_values(values.iter().copied())),
        }
    }

    /// A batch of `id`, `region` (and `at`, when `with_at`).
    fn rows(key: &str, keys: &[(i64, &str)], with_at: bool) -> RecordBatch {
        let values: Vec<i64> = keys.iter().map(|k| k.0).collect();
        let mut columns = vec![
            ("id", ids(key, &values)),
            (
                "region",
                Arc::new(StringArray::from_iter_values(keys.iter().map(|k| k.1))) as ArrayRef,
            ),
        ];
        if with_at {
            columns.push((
                "at",
                Arc::new(Int64Array::from(vec![0; keys.len()])) as ArrayRef,
            ));
        }
        RecordBatch::try_from_iter(columns).unwrap()
    }

    /// The history's rows of the touched keys are found whatever the key:
    /// a bigint as numbers, an int and a composite key in the row format.
    #[test]
    fn the_rows_of_the_touched_keys_are_found_for_every_key_shape() {
        let table = [
            (1, "eu"),
            (2, "eu"),
            (3, "us"),
            (2, "us"),
            (1, "eu"),
            (9, "eu"),
        ];
        for (key, composite, want) in [
            ("bigint", false, vec![0, 1, 3, 4]),
            ("int", false, vec![0, 1, 3, 4]),
            ("bigint", true, vec![0, 1, 4]),
        ] {
            let d = dataset(key, composite);
            let touched = rows(key, &[(2, "eu"), (1, "eu"), (7, "eu")], true);
            let keys = Touched::of(&d, &touched).unwrap();
            assert_eq!(
                matches!(keys, Touched::Ints(_)),
                key == "bigint" && !composite
            );
            let width = d.keys.len();
            let held = rows(key, &table, false).project(&(0..width).collect::<Vec<_>>());
            assert_eq!(
                keys.held(&held.unwrap()).unwrap(),
                want,
                "{key} {composite}"
            );
        }
    }
}
