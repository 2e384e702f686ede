//! A round's changes as Arrow columns aligned on the table's schema, and the
//! rewritten rows joined back into one batch of it.

use crate::changes::Changes;
use crate::error::LakeError;
use deltalake::arrow::datatypes::SchemaRef;
use deltalake::arrow::record_batch::RecordBatch;
use deltaload_core::Dataset;
use std::sync::Arc;

/// The changes of a round aligned on the table: the batch in the table's
/// column order with the delete flag last, and each dataset column's position.
pub(crate) struct Aligned {
    pub changes: RecordBatch,
    pub position: Vec<usize>,
    pub schema: SchemaRef,
}

impl Aligned {
    /// Whether change `c` is a delete.
    pub fn is_delete(&self, c: usize) -> bool {
        use deltalake::arrow::array::AsArray;
        let flags = self.changes.column(self.changes.num_columns() - 1);
        flags.as_boolean_opt().is_some_and(|f| f.value(c))
    }

    /// The key of change `c`, as text (`null` for a null).
    pub fn key_text(&self, dataset: &Dataset, c: usize) -> Vec<String> {
        use deltalake::arrow::array::Array;
        dataset
            .keys
            .iter()
            .map(|&k| {
                let column = self.changes.column(self.position[k]);
                match column.is_null(c) {
                    true => "null".to_string(),
                    false => deltalake::arrow::util::display::array_value_to_string(column, c)
                        .unwrap_or_else(|e| format!("(not shown: {e})")),
                }
            })
            .collect()
    }
}

/// The changes as rows of the table, in its column order, with the delete flag last.
pub(crate) fn align(
    table: &deltalake::DeltaTable,
    dataset: &Arc<Dataset>,
    changes: &Changes<'_>,
    loaded_at: i64,
    label: &str,
) -> Result<Aligned, LakeError> {
    let url = table.table_url().clone();
    let schema = table
        .snapshot()
        .map_err(LakeError::delta(label, &url))?
        .snapshot()
        .arrow_schema();
    let changes = changes.target_batch(dataset, loaded_at)?;
    let source = changes.schema();
    let mut columns = Vec::with_capacity(schema.fields().len() + 1);
    for field in schema.fields() {
        let i = source
            .index_of(field.name())
            .map_err(|_| LakeError::Invariant {
                table: label.to_string(),
                detail: format!("column {:?} of the table is not in the spec", field.name()),
            })?;
        columns.push(changes.column(i).clone());
    }
    columns.push(changes.column(changes.num_columns() - 1).clone());
    let mut fields: Vec<_> = schema
        .fields()
        .iter()
        .map(|f| f.as_ref().clone().with_nullable(true))
        .collect();
    fields.push(source.field(source.fields().len() - 1).clone());
    let changes = RecordBatch::try_new(
        Arc::new(deltalake::arrow::datatypes::Schema::new(fields)),
        columns,
    )
    .map_err(LakeError::arrow(label))?;
    let position = positions(dataset, &schema, label)?;
    Ok(Aligned {
        changes,
        position,
        schema,
    })
}

/// Each dataset column's position in `schema` (a table's, or the changes' aligned on it).
pub(crate) fn positions(
    dataset: &Dataset,
    schema: &SchemaRef,
    label: &str,
) -> Result<Vec<usize>, LakeError> {
    dataset
        .columns
        .iter()
        .map(|c| schema.index_of(&c.name).map_err(LakeError::arrow(label)))
        .collect()
}

/// Per table column, whether an update sets it: the update columns and the lineage columns.
pub(crate) fn updated_mask(dataset: &Dataset, schema: &SchemaRef) -> Vec<bool> {
    let set: Vec<&str> = dataset
        .update
        .iter()
        .map(|&i| dataset.columns[i].name.as_str())
        .chain(deltaload_core::spec::LINEAGE_COLUMNS)
        .collect();
    schema
        .fields()
        .iter()
        .map(|f| set.contains(&f.name().as_str()))
        .collect()
}
