//! The bottom of the adapter: a Delta table opened, created, evolved and
//! queried, its properties, the lake's location, its errors and retries,
//! and the rows of the shared tables. Nothing here names a layer above.
//!
//! - [`sets`]: the tables of a lake, opened together; `open`: one table
//!   opened, or created, or refused ([`features`], [`adopt`], [`nulls`]);
//!   [`rules`]: its CHECK constraints and invariants, kept on every record.
//! - [`evolve`], [`stats`], [`properties`]: a table's definition kept in step with the spec.
//! - [`arrow_rows`]: the Arrow rows of the rejects, ledger, reconciliation and tombstones.
//! - [`predicates`]: the SQL predicates the writers and look-ups share.

pub(crate) mod adopt;
pub(crate) mod arrow_rows;
pub mod error;
pub(crate) mod evolve;
pub(crate) mod expectations;
pub(crate) mod features;
pub mod location;
pub(crate) mod nulls;
pub(crate) mod open;
pub(crate) mod predicates;
pub(crate) mod properties;
pub(crate) mod retry;
pub(crate) mod rules;
pub(crate) mod sets;
pub(crate) mod stats;

use crate::table::error::LakeError;
use deltalake::arrow::array::{Array, ArrayRef, AsArray};
use deltalake::arrow::compute::cast;
use deltalake::arrow::datatypes::{DataType, Decimal128Type, Int64Type};
use deltalake::arrow::record_batch::RecordBatch;
use deltalake::datafusion::common::ScalarValue;
use deltalake::datafusion::execution::SendableRecordBatchStream;
use deltalake::datafusion::prelude::{lit, Expr, SessionContext};
use deltalake::protocol::SaveMode;
use deltalake::DeltaTable;
use deltaload_engine::tables::TableName;

/// The target size of a compacted or clustered data file of a dataset's table
/// (8 MiB, about 300,000 orders), used by `maintain`. A MERGE rewrites every
/// file holding a key it changes, so this bounds what a change to one row of
/// a clustered table costs. (The MERGE's own output keeps Delta's default
/// size: it writes its two partitions side by side, so splitting it smaller
/// gives files that each span the whole range and are all rewritten next time;
/// see docs/performance.md.)
pub const ORDERS_FILE_BYTES: u64 = 8 << 20;

/// Registers the table as `name` in `ctx` (its storage too), replacing an earlier one.
async fn register(
    ctx: &SessionContext,
    table: &DeltaTable,
    name: &TableName,
) -> Result<(), LakeError> {
    let label = name.as_str();
    table
        .update_datafusion_session(&ctx.state())
        .map_err(LakeError::delta(label.clone(), table.table_url()))?;
    let provider = table
        .table_provider()
        .await
        .map_err(LakeError::query(&label))?;
    // As a bare name: a folder name of capitals or dots is not parsed as SQL.
    let reference = deltalake::datafusion::common::TableReference::bare(label.clone());
    ctx.deregister_table(reference.clone())
        .map_err(LakeError::query(&label))?;
    ctx.register_table(reference, provider)
        .map_err(LakeError::query(&label))?;
    Ok(())
}

/// The table, registered as `name`, as a DataFrame to filter and aggregate
/// with expressions (no value of a file is ever written into SQL).
pub(crate) async fn frame(
    ctx: &SessionContext,
    table: &DeltaTable,
    name: &TableName,
) -> Result<deltalake::datafusion::dataframe::DataFrame, LakeError> {
    register(ctx, table, name).await?;
    let label = name.as_str();
    ctx.table(deltalake::datafusion::common::TableReference::bare(
        label.clone(),
    ))
    .await
    .map_err(LakeError::query(&label))
}

/// The `columns` of the rows of the table (registered as `name`) that
/// `filter` selects.
pub(crate) async fn select_where(
    ctx: &SessionContext,
    table: &DeltaTable,
    name: &TableName,
    columns: &[&str],
    filter: deltalake::datafusion::prelude::Expr,
) -> Result<Vec<RecordBatch>, LakeError> {
    let label = name.as_str();
    let selected: Vec<deltalake::datafusion::prelude::Expr> = columns
        .iter()
        .map(|c| crate::table::predicates::column(c))
        .collect();
    frame(ctx, table, name)
        .await?
        .filter(filter)
        .and_then(|f| f.select(selected))
        .map_err(LakeError::query(&label))?
        .collect()
        .await
        .map_err(LakeError::query(&label))
}

/// Runs `sql` with the table registered as `name`, and collects the result.
pub(crate) async fn query(
    ctx: &SessionContext,
    table: &DeltaTable,
    name: &TableName,
    sql: &str,
) -> Result<Vec<RecordBatch>, LakeError> {
    query_with(ctx, table, name, sql, Vec::new()).await
}

/// [`query`] of `sql` with placeholders `$1`, `$2`, ... bound to `params`:
/// a value never becomes SQL text.
pub(crate) async fn query_with(
    ctx: &SessionContext,
    table: &DeltaTable,
    name: &TableName,
    sql: &str,
    params: Vec<ScalarValue>,
) -> Result<Vec<RecordBatch>, LakeError> {
    let label = name.as_str();
    prepared(ctx, table, name, sql, params)
        .await?
        .collect()
        .await
        .map_err(LakeError::query(&label))
}

/// Runs `sql` (its placeholders bound to `params`) with the table
/// registered as `name`, as a stream of batches (never all held at once).
pub(crate) async fn query_stream(
    ctx: &SessionContext,
    table: &DeltaTable,
    name: &TableName,
    sql: &str,
    params: Vec<ScalarValue>,
) -> Result<SendableRecordBatchStream, LakeError> {
    let label = name.as_str();
    prepared(ctx, table, name, sql, params)
        .await?
        .execute_stream()
        .await
        .map_err(LakeError::query(&label))
}

/// The plan of `sql` over the table registered as `name`, its placeholders
/// bound to `params`.
pub(crate) async fn prepared(
    ctx: &SessionContext,
    table: &DeltaTable,
    name: &TableName,
    sql: &str,
    params: Vec<ScalarValue>,
) -> Result<deltalake::datafusion::dataframe::DataFrame, LakeError> {
    register(ctx, table, name).await?;
    let label = name.as_str();
    let df = ctx.sql(sql).await.map_err(LakeError::query(&label))?;
    match params.is_empty() {
        true => Ok(df),
        false => df
            .with_param_values(params)
            .map_err(LakeError::query(&label)),
    }
}

/// Reloads the table to its latest version.
pub(crate) async fn refresh(table: &mut DeltaTable, name: &TableName) -> Result<(), LakeError> {
    let url = table.table_url().clone();
    table
        .update_incremental(None)
        .await
        .map_err(LakeError::delta(name.as_str(), &url))
}

/// The values of a string column (Utf8, LargeUtf8 or Utf8View), as text.
pub(crate) fn strings_of(column: &ArrayRef) -> Result<Vec<Option<String>>, LakeError> {
    let text = cast(column, &DataType::Utf8).map_err(LakeError::arrow("query result"))?;
    let text = text
        .as_string_opt::<i32>()
        .ok_or_else(|| LakeError::Invariant {
            table: "query result".into(),
            detail: format!("expected text, found {}", column.data_type()),
        })?;
    Ok(text.iter().map(|v| v.map(str::to_string)).collect())
}

/// The values of a numeric column cast to `to` (an integer, decimal or timestamp
/// type backed by i64 or i128), as i64.
pub(crate) fn longs_of(column: &ArrayRef, to: &DataType) -> Result<Vec<Option<i64>>, LakeError> {
    let cast_to = cast(column, to).map_err(LakeError::arrow("query result"))?;
    let unexpected = || LakeError::Invariant {
        table: "query result".into(),
        detail: format!("expected {to}, found {}", column.data_type()),
    };
    if let DataType::Decimal128(..) = to {
        let values = cast_to
            .as_primitive_opt::<Decimal128Type>()
            .ok_or_else(unexpected)?;
        return values
            .iter()
            .map(|v| v.map(i64::try_from).transpose().map_err(|_| unexpected()))
            .collect();
    }
    let longs = cast(&cast_to, &DataType::Int64).map_err(LakeError::arrow("query result"))?;
    let longs = longs
        .as_primitive_opt::<Int64Type>()
        .ok_or_else(unexpected)?;
    Ok(longs.iter().collect())
}

/// The first value of an integer column, as i64.
pub(crate) fn first_long(column: &ArrayRef) -> Result<Option<i64>, LakeError> {
    Ok(longs_of(column, &DataType::Int64)?
        .into_iter()
        .next()
        .flatten())
}

/// Column `at`'s first value in the first batch that has a row (0 for none).
pub(crate) fn first_row_long(batches: &[RecordBatch], at: usize) -> Result<i64, LakeError> {
    match batches.iter().find(|b| b.num_rows() > 0) {
        Some(batch) => Ok(first_long(batch.column(at))?.unwrap_or(0)),
        None => Ok(0),
    }
}

/// The predicate selecting the rows of these file versions (ledger and reconciliation).
pub(crate) fn file_versions<'a>(keys: impl IntoIterator<Item = (&'a str, &'a str)>) -> Expr {
    crate::table::predicates::any(keys.into_iter().map(|(l, c)| file_version(l, c)))
}

/// `column` holds one of `values` (FALSE for none).
pub(crate) fn is_in<'a>(column: &str, values: impl IntoIterator<Item = &'a str>) -> Expr {
    let list: Vec<Expr> = values.into_iter().map(lit).collect();
    match list.is_empty() {
        true => lit(false),
        false => crate::table::predicates::column(column).in_list(list, false),
    }
}

/// The predicate selecting one file version's rows (ledger and reconciliation).
pub(crate) fn file_version(location: &str, content_id: &str) -> Expr {
    let column = crate::table::predicates::column;
    column("location")
        .eq(lit(location))
        .and(column("content_id").eq(lit(content_id)))
}

/// The properties of a load's commits. Expired log entries are not cleaned
/// at each commit: delta-rs lists the whole `_delta_log` to do it, a cost
/// that grows with the log (measured: bench/sweep.py --steps, docs/scaling.md),
/// so `maintain` cleans them (the deployment schedules it).
pub(crate) fn commit_properties() -> deltalake::kernel::transaction::CommitProperties {
    deltalake::kernel::transaction::CommitProperties::default()
        .with_cleanup_expired_logs(Some(false))
}

/// Replaces the rows matching `predicate` with `batches`, in one commit.
pub(crate) async fn replace_where(
    table: &DeltaTable,
    name: &TableName,
    batches: Vec<RecordBatch>,
    predicate: Expr,
) -> Result<DeltaTable, LakeError> {
    let url = table.table_url().clone();
    table
        .clone()
        .write(batches)
        .with_save_mode(SaveMode::Overwrite)
        .with_replace_where(predicate)
        .with_commit_properties(commit_properties())
        .await
        .map_err(LakeError::delta(name.as_str(), &url))
}
