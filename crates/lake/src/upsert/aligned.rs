//! A round's changes laid out as rows of the table ([`Aligned`], the
//! engine's): the table's columns in its order, from the table's schema.

use crate::changes::Changes;
use crate::error::LakeError;
use deltalake::arrow::datatypes::SchemaRef;
use deltalake::arrow::record_batch::RecordBatch;
use deltaload_core::Dataset;
pub(crate) use deltaload_engine::{updated_mask, Aligned};
use std::sync::Arc;

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
    deltaload_engine::positions(dataset, schema).map_err(LakeError::arrow(label))
}
