//! The one count a table another writer made takes before deltaload
//! writes into it: no null in its key and sequence columns. The columns
//! counted are recorded in a table property, so later opens skip the count.

use crate::table::error::LakeError;
use crate::table::properties::property;
use deltalake::DeltaTable;
use deltaload_engine::tables::{quoted, TableName};

/// The table property marking a table another writer made that deltaload
/// took over: its columns are held against the spec by the rules of
/// adoption ([`adopt::plan`](crate::table::adopt::plan)) from then on.
pub(crate) const ADOPTED: &str = "io.deltaload.adopted";

/// The table property listing the columns found free of nulls, comma-separated.
// (Not under `delta`: Delta readers parse every property named so.)
pub(crate) const NULLS_COUNTED: &str = "io.deltaload.nullsCounted";

/// Counts the nulls of `columns` not counted before: refused when a row
/// holds one, else the new value of [`NULLS_COUNTED`] to record (`None`
/// when nothing was counted).
pub(crate) async fn count_nulls(
    table: &DeltaTable,
    name: &TableName,
    columns: &[String],
) -> Result<Option<String>, LakeError> {
    let label = name.as_str();
    let counted = property(table, &label, NULLS_COUNTED)?.unwrap_or_default();
    let counted: Vec<&str> = counted.split(',').filter(|c| !c.is_empty()).collect();
    let todo: Vec<&String> = columns
        .iter()
        .filter(|c| !counted.contains(&c.as_str()))
        .collect();
    if todo.is_empty() {
        return Ok(None);
    }
    tracing::info!(table = %label, columns = ?todo, "counting nulls in the key and sequence columns of a table deltaload did not make (once)");
    let nulls: Vec<String> = todo
        .iter()
        .map(|c| format!("count(*) - count({})", quoted(c)))
        .collect();
    let sql = format!("SELECT {} FROM {}", nulls.join(", "), name.sql());
    let ctx = deltalake::delta_datafusion::create_session().into_inner();
    let batches = crate::table::query(&ctx, table, name, &sql).await?;
    for (i, column) in todo.iter().enumerate() {
        let count = crate::table::first_row_long(&batches, i)?;
        if count > 0 {
            return Err(LakeError::NullKeys {
                table: label,
                column: column.to_string(),
                count: count.unsigned_abs(),
            });
        }
    }
    let mut all: Vec<&str> = counted;
    all.extend(todo.iter().map(|c| c.as_str()));
    Ok(Some(all.join(",")))
}
