//! History (SCD type 2) of a dataset with `history = true`: every change a
//! file brings is kept in `history_log_<name>`, and the versions of the
//! keys it touches are folded again from all their changes ([`fold`]) into
//! `history_<name>`, while the dataset's own table is written ([`task`]; a
//! snapshot's changes after it: `crate::snapshot::history`). A version
//! is a row of the dataset's columns with `__start_at` and `__end_at` (the
//! first sequence column of the changes that opened and closed it).
//!
//! Both writes can run again and change nothing: the log takes a file's
//! changes once, and the versions are a function of the log. So a load
//! stopped at any point loads again to the same tables, and any load order
//! of the same files gives the same history. Every history commit carries
//! the same application transaction: two processes writing the history at
//! once conflict, and the later one's round runs again on the newer log.

mod arrival;
mod fold;
mod log_rows;
mod marked;
mod task;
mod write;

pub(crate) use write::FileChanges;

use crate::error::LakeError;
use crate::location::LakeRoot;
use crate::schema::{arrow_type, TableName};
use deltalake::arrow::array::{AsArray, Int64Array, RecordBatch};
use deltalake::arrow::datatypes::{DataType, Field, Int64Type, Schema, SchemaRef};
use deltalake::DeltaTable;
use deltaload_core::spec::{END_AT, START_AT};
use deltaload_core::Dataset;
use std::sync::Arc;

/// The flag of a deleting change in the log.
pub(crate) const DELETED: &str = "__deleted";

/// A dataset's versions and the changes they were made of.
pub(crate) struct HistoryTables {
    /// `history_<name>`.
    pub versions: DeltaTable,
    /// `history_log_<name>`.
    pub log: DeltaTable,
}

impl HistoryTables {
    /// Opens both tables of `dataset`, creating them when missing.
    pub(crate) async fn open(root: &LakeRoot, dataset: &Arc<Dataset>) -> Result<Self, LakeError> {
        let names = (
            TableName::History(dataset.clone()),
            TableName::HistoryLog(dataset.clone()),
        );
        // Both to their end, as the lake's other tables (`Lake::open_spec`).
        let (versions, log) = futures::join!(
            crate::table::open_or_create(root, &names.0),
            crate::table::open_or_create(root, &names.1),
        );
        Ok(Self {
            versions: versions?,
            log: log?,
        })
    }

    /// Reloads both to their latest versions.
    pub(crate) async fn refresh(&mut self, dataset: &Arc<Dataset>) -> Result<(), LakeError> {
        crate::table::refresh(&mut self.versions, &TableName::History(dataset.clone())).await?;
        crate::table::refresh(&mut self.log, &TableName::HistoryLog(dataset.clone())).await
    }
}

/// The values of `batch`'s column of the key when the key is one bigint
/// column (most keys): compared as numbers, not in the row format.
fn bigint_key<'a>(dataset: &Dataset, batch: &'a RecordBatch) -> Option<&'a Int64Array> {
    let [only] = dataset.keys.as_slice() else {
        return None;
    };
    batch.column(*only).as_primitive_opt::<Int64Type>()
}

/// The type of `__start_at` and `__end_at`: the first sequence column's.
fn bound_type(d: &Dataset) -> DataType {
    d.sequence_by
        .first()
        .map_or(DataType::Int64, |&i| arrow_type(d.columns[i].ty))
}

/// `history_<name>`: the dataset's table's columns, then `__start_at` and
/// `__end_at` (null: the key's current version).
pub(crate) fn schema(d: &Dataset) -> SchemaRef {
    let target = crate::schema::target(d);
    let mut fields: Vec<Field> = target.fields().iter().map(|f| f.as_ref().clone()).collect();
    fields.push(Field::new(START_AT, bound_type(d), false));
    fields.push(Field::new(END_AT, bound_type(d), true));
    Arc::new(Schema::new(fields))
}

/// `history_log_<name>`: the dataset's columns (null where a delete
/// carries none, but the keys and the sequence), whether the change was a
/// delete, and the file version and load it came from.
pub(crate) fn log_schema(d: &Dataset) -> SchemaRef {
    let mut fields: Vec<Field> = (d.columns.iter().enumerate())
        .map(|(i, c)| Field::new(&c.name, arrow_type(c.ty), !d.is_key_or_sequence(i)))
        .collect();
    fields.push(Field::new(DELETED, DataType::Boolean, false));
    fields.push(Field::new("source_file", DataType::Utf8, false));
    fields.push(Field::new("content_id", DataType::Utf8, false));
    fields.push(Field::new("loaded_at", crate::schema::timestamp(), false));
    Arc::new(Schema::new(fields))
}
