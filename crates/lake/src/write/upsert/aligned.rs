//! A round's changes laid out as rows of the table ([`Aligned`], the
//! engine's): the table's columns in its order, from the table's schema.

use crate::table::error::LakeError;
use deltalake::arrow::datatypes::SchemaRef;
use deltaload_core::Dataset;
use deltaload_engine::changes::Changes;
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
    let schema = arrow_schema(table, label)?;
    Ok(deltaload_engine::aligned::align(
        schema, dataset, changes, loaded_at, label,
    )?)
}

/// The Arrow schema of `table` at its loaded version.
pub(crate) fn arrow_schema(
    table: &deltalake::DeltaTable,
    label: &str,
) -> Result<SchemaRef, LakeError> {
    let url = table.table_url().clone();
    Ok(table
        .snapshot()
        .map_err(LakeError::delta(label, &url))?
        .snapshot()
        .arrow_schema())
}

/// Each dataset column's position in `schema` (a table's, or the changes' aligned on it).
pub(crate) fn positions(
    dataset: &Dataset,
    schema: &SchemaRef,
    label: &str,
) -> Result<Vec<usize>, LakeError> {
    deltaload_engine::positions(dataset, schema).map_err(LakeError::arrow(label))
}
