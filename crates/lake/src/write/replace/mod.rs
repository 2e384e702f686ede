//! Replacing the rows of some file versions in a side table (the ledger,
//! rejects, reconciliation) in one commit, without delta-rs's `replaceWhere`.
//!
//! `replaceWhere` plans and runs a DataFusion query for each write: 6-14 ms
//! for a handful of rows, most of a small file's load. This reads only the
//! files whose statistics on the location column may hold one of the
//! locations, keeps their rows the selection does not select (compared in
//! Arrow), and commits the new rows and those kept in place of the files
//! that held a selected row, as the same `WRITE` (an overwrite whose read
//! predicate is the selection) that `replaceWhere` commits, so a concurrent
//! writer conflicts with it exactly as before. A table with a feature this
//! does not write (partitions, column mapping, ...) or a file with a
//! deletion vector goes to `replaceWhere`.

use crate::table::error::LakeError;
use crate::write::upsert::{candidates, read_columns, KeyBounds, TargetFile};
use deltalake::arrow::array::{Array, AsArray, BooleanArray};
use deltalake::arrow::compute::{cast, concat_batches, filter_record_batch};
use deltalake::arrow::datatypes::{DataType, Schema, SchemaRef};
use deltalake::arrow::record_batch::RecordBatch;
use deltalake::datafusion::prelude::{Expr, SessionContext};
use deltalake::kernel::Action;
use deltalake::protocol::{DeltaOperation, SaveMode};
use deltalake::DeltaTable;
use deltaload_engine::tables::TableName;
use std::collections::HashMap;

/// What a replacement selects: the rows whose text `column` holds one of
/// the wanted values (with, when `paired` names a second text column, one
/// of that value's wanted values there). `predicate` says the same for the
/// commit and for delta-rs.
#[derive(Debug, Clone)]
pub(crate) struct Selection<'a> {
    column: &'a str,
    paired: Option<&'a str>,
    wanted: HashMap<String, Vec<String>>,
    predicate: Expr,
}

impl<'a> Selection<'a> {
    /// The rows of these file versions (location, content id): the ledger's
    /// and reconciliation's.
    pub fn file_versions(versions: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        let versions: Vec<(&str, &str)> = versions.into_iter().collect();
        let mut wanted: HashMap<String, Vec<String>> = HashMap::new();
        for (location, content_id) in &versions {
            let ids = wanted.entry(location.to_string()).or_default();
            ids.push(content_id.to_string());
        }
        Selection {
            column: "location",
            paired: Some("content_id"),
            wanted,
            predicate: crate::table::file_versions(versions),
        }
    }

    /// The rows whose text `column` holds one of `values`.
    pub fn is_in(column: &'a str, values: impl IntoIterator<Item = &'a str>) -> Self {
        let values: Vec<&str> = values.into_iter().collect();
        Selection {
            column,
            paired: None,
            wanted: values.iter().map(|v| (v.to_string(), Vec::new())).collect(),
            predicate: crate::table::is_in(column, values),
        }
    }

    /// Whether the table's schema has the columns, as text.
    fn fits(&self, schema: &Schema) -> bool {
        let text = |c: &str| {
            schema.field_with_name(c).is_ok_and(|f| {
                matches!(
                    f.data_type(),
                    DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View
                )
            })
        };
        text(self.column) && self.paired.is_none_or(text)
    }

    /// Which rows of `batch` it selects (none where a column is null or missing).
    fn selected(&self, batch: &RecordBatch) -> BooleanArray {
        let first = Texts::of(batch, self.column);
        let second = self.paired.map(|c| Texts::of(batch, c));
        (0..batch.num_rows())
            .map(|i| {
                let ids = first.get(i).and_then(|v| self.wanted.get(v));
                Some(match (ids, &second) {
                    (None, _) => false,
                    (Some(_), None) => true,
                    (Some(ids), Some(second)) => {
                        second.get(i).is_some_and(|c| ids.iter().any(|w| w == c))
                    }
                })
            })
            .collect()
    }
}

/// A text column of a batch, whichever of Arrow's text types it has.
enum Texts<'b> {
    Plain(&'b deltalake::arrow::array::StringArray),
    Large(&'b deltalake::arrow::array::LargeStringArray),
    View(&'b deltalake::arrow::array::StringViewArray),
    Missing,
}

impl<'b> Texts<'b> {
    fn of(batch: &'b RecordBatch, column: &str) -> Self {
        let Some(array) = batch.column_by_name(column) else {
            return Texts::Missing;
        };
        if let Some(a) = array.as_string_opt::<i32>() {
            Texts::Plain(a)
        } else if let Some(a) = array.as_string_opt::<i64>() {
            Texts::Large(a)
        } else if let Some(a) = array.as_string_view_opt() {
            Texts::View(a)
        } else {
            Texts::Missing
        }
    }

    fn get(&self, i: usize) -> Option<&'b str> {
        match self {
            Texts::Plain(a) => a.is_valid(i).then(|| a.value(i)),
            Texts::Large(a) => a.is_valid(i).then(|| a.value(i)),
            Texts::View(a) => a.is_valid(i).then(|| a.value(i)),
            Texts::Missing => None,
        }
    }
}

/// How a replacement was written (for the tests, and the debug log).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Written {
    /// By this module: the files it read, and whether it committed.
    Own { read: usize, committed: bool },
    /// By delta-rs's `replaceWhere` (or its delete, for no rows).
    DeltaRs,
}

/// Replaces the rows of `table` that `selection` selects with `rows`, in
/// one commit; none is made when nothing is selected and `rows` is empty.
pub(crate) async fn replace_rows(
    table: &DeltaTable,
    name: &TableName,
    rows: Vec<RecordBatch>,
    selection: Selection<'_>,
) -> Result<(DeltaTable, Written), LakeError> {
    let label = name.as_str();
    let (table, written) = replace(table, name, &label, rows, selection).await?;
    tracing::debug!(table = %label, ?written, "rows replaced");
    Ok((table, written))
}

/// [`replace_rows`], by this module or by delta-rs.
async fn replace(
    table: &DeltaTable,
    name: &TableName,
    label: &str,
    rows: Vec<RecordBatch>,
    selection: Selection<'_>,
) -> Result<(DeltaTable, Written), LakeError> {
    let Some((files, schema)) = own_files(table, &selection, label).await? else {
        return delta_rs(table, name, rows, selection.predicate).await;
    };
    let (removed, kept) = unselected(table, &files, &schema, &selection, label).await?;
    let read = files.len();
    let rows: Vec<RecordBatch> = (kept.into_iter().chain(rows))
        .filter(|r| r.num_rows() > 0)
        .collect();
    if removed.is_empty() && rows.is_empty() {
        return Ok((
            table.clone(),
            Written::Own {
                read,
                committed: false,
            },
        ));
    }
    let mut actions: Vec<Action> = removed.into_iter().map(Action::Remove).collect();
    if !rows.is_empty() {
        let batch = as_table_rows(&schema, &rows, label)?;
        let adds = crate::write::upsert::write_files(
            table,
            &batch,
            crate::table::ORDERS_FILE_BYTES,
            label,
        );
        actions.extend(adds.await?.into_iter().map(Action::Add));
    }
    let table = commit(table, actions, &selection.predicate, label).await?;
    Ok((
        table,
        Written::Own {
            read,
            committed: true,
        },
    ))
}

/// The files that may hold a selected row, and the table's schema; `None`
/// when the replacement is delta-rs's to make (a feature of the table this
/// does not write, columns that are not text, or a deletion vector).
async fn own_files(
    table: &DeltaTable,
    selection: &Selection<'_>,
    label: &str,
) -> Result<Option<(Vec<TargetFile>, SchemaRef)>, LakeError> {
    let url = table.table_url().clone();
    let delta = || LakeError::delta(label, &url);
    let schema = table.snapshot().map_err(delta())?.snapshot().arrow_schema();
    let unsupported = crate::write::upsert::unsupported(table).map_err(delta())?;
    if unsupported.is_some() || !selection.fits(&schema) {
        return Ok(None);
    }
    let mut values: Vec<String> = selection.wanted.keys().cloned().collect();
    values.sort_unstable();
    // Whole text statistics: deltaload alone writes these tables, and
    // delta-rs's writer (as Delta Spark's) keeps a cut maximum an upper
    // bound (it raises it).
    let bounds = KeyBounds::Texts(values);
    let (files, _) = candidates(table, selection.column, &bounds, usize::MAX)
        .await
        .map_err(delta())?;
    match files.iter().any(|f| f.add.deletion_vector.is_some()) {
        true => Ok(None),
        false => Ok(Some((files, schema))),
    }
}

/// Commits `actions` as delta-rs's `replaceWhere` does: an overwrite that
/// read the rows of `predicate`. Returns the table at that commit.
async fn commit(
    table: &DeltaTable,
    actions: Vec<Action>,
    predicate: &Expr,
    label: &str,
) -> Result<DeltaTable, LakeError> {
    let operation = DeltaOperation::Write {
        mode: SaveMode::Overwrite,
        partition_by: None,
        predicate: Some(crate::table::predicates::sql_of(predicate)?),
    };
    let properties = crate::table::commit_properties();
    crate::write::upsert::commit_actions(table, actions, operation, properties, label).await
}

/// The removes of the `files` holding a row `selection` selects, and the
/// rows of those files it does not select.
async fn unselected(
    table: &DeltaTable,
    files: &[TargetFile],
    schema: &SchemaRef,
    selection: &Selection<'_>,
    label: &str,
) -> Result<(Vec<deltalake::kernel::Remove>, Vec<RecordBatch>), LakeError> {
    let (mut removed, mut kept) = (Vec::new(), Vec::new());
    for (file, rows, selected) in holding(table, files, schema, selection, label).await? {
        let keep = deltalake::arrow::compute::not(&selected).map_err(LakeError::arrow(label))?;
        kept.push(filter_record_batch(&rows, &keep).map_err(LakeError::arrow(label))?);
        removed.push(file.remove.clone());
    }
    Ok((removed, kept))
}

/// The `columns` of the rows of `table` (registered in `ctx` as `name`)
/// that `selection` selects: read by [`own_rows`], or by DataFusion where
/// that leaves them to it.
pub(crate) async fn select_rows(
    ctx: &SessionContext,
    table: &DeltaTable,
    name: &TableName,
    columns: &[&str],
    selection: &Selection<'_>,
) -> Result<Vec<RecordBatch>, LakeError> {
    match own_rows(table, name, columns, selection).await? {
        Some(rows) => Ok(rows),
        None => {
            let filter = selection.predicate.clone();
            crate::table::select_where(ctx, table, name, columns, filter).await
        }
    }
}

/// The `columns` of the rows of `table` that `selection` selects, read from
/// the files whose statistics may hold them; `None` when they are for
/// DataFusion to read (a table or file [`replace_rows`] leaves to delta-rs).
async fn own_rows(
    table: &DeltaTable,
    name: &TableName,
    columns: &[&str],
    selection: &Selection<'_>,
) -> Result<Option<Vec<RecordBatch>>, LakeError> {
    let label = name.as_str();
    let Some((files, schema)) = own_files(table, selection, &label).await? else {
        return Ok(None);
    };
    let indexes = (columns.iter())
        .map(|c| schema.index_of(c))
        .collect::<Result<Vec<_>, _>>()
        .map_err(LakeError::arrow(&label))?;
    let mut found = Vec::new();
    for (_, rows, selected) in holding(table, &files, &schema, selection, &label).await? {
        let rows = filter_record_batch(&rows, &selected).map_err(LakeError::arrow(&label))?;
        found.push(rows.project(&indexes).map_err(LakeError::arrow(&label))?);
    }
    Ok(Some(found))
}

/// Each of `files` that holds a row `selection` selects, with its rows and
/// which of them it selects.
async fn holding<'f>(
    table: &DeltaTable,
    files: &'f [TargetFile],
    schema: &SchemaRef,
    selection: &Selection<'_>,
    label: &str,
) -> Result<Vec<(&'f TargetFile, RecordBatch, BooleanArray)>, LakeError> {
    let all: Vec<usize> = (0..schema.fields().len()).collect();
    let store = table.object_store();
    let mut holding = Vec::new();
    for file in files {
        let rows = read_columns(store.clone(), &file.path, None, schema, &all, label).await?;
        let selected = selection.selected(&rows.batch);
        if selected.true_count() > 0 {
            holding.push((file, rows.batch, selected));
        }
    }
    Ok(holding)
}

/// `batches` (read rows, their fields nullable, and new rows) as one batch
/// of the table's schema.
fn as_table_rows(
    schema: &SchemaRef,
    batches: &[RecordBatch],
    label: &str,
) -> Result<RecordBatch, LakeError> {
    let arrow = |e| LakeError::arrow(label)(e);
    let mut same = Vec::with_capacity(batches.len());
    for b in batches {
        let mut columns = Vec::with_capacity(b.num_columns());
        for (column, field) in b.columns().iter().zip(schema.fields()) {
            columns.push(match column.data_type() == field.data_type() {
                true => column.clone(),
                false => cast(column, field.data_type()).map_err(arrow)?,
            });
        }
        same.push(RecordBatch::try_new(schema.clone(), columns).map_err(arrow)?);
    }
    concat_batches(schema, &same).map_err(arrow)
}

/// The same replacement by delta-rs: `replaceWhere`, or a delete for no rows.
async fn delta_rs(
    table: &DeltaTable,
    name: &TableName,
    rows: Vec<RecordBatch>,
    predicate: Expr,
) -> Result<(DeltaTable, Written), LakeError> {
    let table = match rows.iter().all(|r| r.num_rows() == 0) {
        true => {
            let url = table.table_url().clone();
            let deleted = (table.clone().delete())
                .with_predicate(predicate)
                .with_commit_properties(crate::table::commit_properties())
                .await;
            deleted.map_err(LakeError::delta(name.as_str(), &url))?.0
        }
        false => crate::table::replace_where(table, name, rows, predicate).await?,
    };
    Ok((table, Written::DeltaRs))
}

#[cfg(test)]
mod tests;
