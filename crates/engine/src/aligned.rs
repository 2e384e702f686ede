//! A round's changes laid out as rows of the table: the table's columns in
//! its order, every one nullable, and the delete flag last.

use crate::changes::Changes;
use arrow_array::{new_null_array, Array, BooleanArray, RecordBatch};
use arrow_schema::{ArrowError, Schema, SchemaRef};
use deltaload_core::Dataset;
use deltaload_ingest::DataError;
use std::sync::Arc;

/// The changes of a round aligned on the table: the batch in the table's
/// column order with the delete flag last, and each dataset column's position.
pub struct Aligned {
    /// The changes, one per key, sorted by key.
    pub changes: RecordBatch,
    /// Where each dataset column is among the table's columns.
    pub position: Vec<usize>,
    /// The table's schema.
    pub schema: SchemaRef,
}

impl Aligned {
    /// Whether change `c` is a delete.
    pub fn is_delete(&self, c: usize) -> bool {
        let flags = self.flags();
        flags.is_valid(c) && flags.value(c)
    }

    /// The changes' delete flags (null: an upsert that sets its row whole).
    pub fn flags(&self) -> &BooleanArray {
        use arrow_array::cast::AsArray;
        self.changes.column(self.delete_flag()).as_boolean()
    }

    /// The key of change `c`, as text (`null` for a null), for messages.
    pub fn key_text(&self, dataset: &Dataset, c: usize) -> String {
        dataset
            .keys
            .iter()
            .map(|&k| {
                let column = self.changes.column(self.position[k]);
                match column.is_null(c) {
                    true => "null".to_string(),
                    false => arrow_cast::display::array_value_to_string(column, c)
                        .unwrap_or_else(|e| format!("(not shown: {e})")),
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The changes' schema: the table's columns, then the delete flag.
    pub fn schema_with_flag(&self) -> SchemaRef {
        self.changes.schema()
    }

    /// The position of the delete flag.
    pub fn delete_flag(&self) -> usize {
        self.changes.num_columns() - 1
    }
}

/// `changes` laid out as rows of a table of `schema`: its columns in its
/// order, every one nullable, the delete flag last. `label` names the table
/// in errors.
pub fn align(
    schema: SchemaRef,
    dataset: &Arc<Dataset>,
    changes: &Changes<'_>,
    loaded_at: i64,
    label: &str,
) -> Result<Aligned, DataError> {
    let changes = changes.target_batch(dataset, loaded_at)?;
    let source = changes.schema();
    let mut columns = Vec::with_capacity(schema.fields().len() + 1);
    for field in schema.fields() {
        // A column of the table the spec does not declare (a table another
        // writer made): an insert writes it null, an update keeps the
        // table's value (`updated_mask` takes it from the table's row).
        columns.push(match source.index_of(field.name()) {
            Ok(i) => changes.column(i).clone(),
            Err(_) => new_null_array(field.data_type(), changes.num_rows()),
        });
    }
    columns.push(changes.column(changes.num_columns() - 1).clone());
    let mut fields: Vec<_> = schema
        .fields()
        .iter()
        .map(|f| f.as_ref().clone().with_nullable(true))
        .collect();
    fields.push(source.field(source.fields().len() - 1).clone());
    let changes = RecordBatch::try_new(Arc::new(Schema::new(fields)), columns)
        .map_err(DataError::arrow(label))?;
    let position = positions(dataset, &schema).map_err(DataError::arrow(label))?;
    Ok(Aligned {
        changes,
        position,
        schema,
    })
}

/// Each dataset column's position in `schema` (a table's, or the changes'
/// aligned on it).
pub fn positions(dataset: &Dataset, schema: &SchemaRef) -> Result<Vec<usize>, ArrowError> {
    dataset
        .columns
        .iter()
        .map(|c| schema.index_of(&c.name))
        .collect()
}
