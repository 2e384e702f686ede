//! The pure side of a dataset's history (SCD type 2, `history = true`):
//! the schemas of `history_<name>` and `history_log_<name>`, the log's rows
//! of a file ([`log_rows`]), the changes in arrival order ([`arrival`]) and
//! the fold of a key's changes into its versions ([`fold`]). The Delta
//! adapter reads the touched keys' changes and versions and commits what
//! the fold gives.

pub mod arrival;
pub mod fold;
pub mod log_rows;

use crate::tables::{arrow_type, target, timestamp};
use arrow_array::types::Int64Type;
use arrow_array::{cast::AsArray, Int64Array, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use deltaload_core::spec::{END_AT, START_AT};
use deltaload_core::Dataset;
use std::sync::Arc;

/// The flag of a deleting change in the log.
pub const DELETED: &str = "__deleted";

/// The values of `batch`'s column of the key when the key is one bigint
/// column (most keys): compared as numbers, not in the row format.
pub fn bigint_key<'a>(dataset: &Dataset, batch: &'a RecordBatch) -> Option<&'a Int64Array> {
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
pub fn schema(d: &Dataset) -> SchemaRef {
    let target = target(d);
    let mut fields: Vec<Field> = target.fields().iter().map(|f| f.as_ref().clone()).collect();
    fields.push(Field::new(START_AT, bound_type(d), false));
    fields.push(Field::new(END_AT, bound_type(d), true));
    Arc::new(Schema::new(fields))
}

/// `history_log_<name>`: the dataset's columns (null where a delete
/// carries none, but the keys and the sequence), whether the change was a
/// delete, and the file version and load it came from.
pub fn log_schema(d: &Dataset) -> SchemaRef {
    let mut fields: Vec<Field> = (d.columns.iter().enumerate())
        .map(|(i, c)| Field::new(&c.name, arrow_type(c.ty), !d.is_key_or_sequence(i)))
        .collect();
    fields.push(Field::new(DELETED, DataType::Boolean, false));
    fields.push(Field::new("source_file", DataType::Utf8, false));
    fields.push(Field::new("content_id", DataType::Utf8, false));
    fields.push(Field::new("loaded_at", timestamp(), false));
    Arc::new(Schema::new(fields))
}
