//! Rows of a lake's tables as Arrow record batches, and a dataset's rows read back.

use crate::table::error::LakeError;
use deltalake::arrow::array::{
    ArrayRef, BooleanArray, Int64Array, StringArray, TimestampMicrosecondArray,
};
use deltalake::arrow::datatypes::{DataType, Field, Schema};
use deltalake::arrow::record_batch::RecordBatch;
use deltaload_core::{Dataset, Reconciliation, Reject, Row, Value};
use deltaload_engine::tables::TableName;
use deltaload_flow::LedgerRow;
use deltaload_ingest::values;
use std::sync::Arc;

fn utc(values: impl IntoIterator<Item = Option<i64>>) -> ArrayRef {
    Arc::new(TimestampMicrosecondArray::from_iter(values).with_timezone("UTC"))
}

fn strings<'a>(values: impl IntoIterator<Item = Option<&'a str>>) -> ArrayRef {
    Arc::new(StringArray::from_iter(values))
}

fn longs(values: impl IntoIterator<Item = Option<i64>>) -> ArrayRef {
    Arc::new(Int64Array::from_iter(values))
}

fn batch(name: &TableName, columns: Vec<ArrayRef>) -> Result<RecordBatch, LakeError> {
    RecordBatch::try_new(name.schema(), columns).map_err(LakeError::arrow(name.as_str()))
}

/// The name of the MERGE source's column that marks a delete.
pub(crate) const DELETE_FLAG: &str = deltaload_ingest::DELETE_FLAG;

/// A batch of `fields` and `columns` and one more column, [`DELETE_FLAG`], of `flags`.
fn flagged(
    fields: impl Iterator<Item = Field>,
    mut columns: Vec<ArrayRef>,
    flags: impl Iterator<Item = bool>,
    table: &str,
) -> Result<RecordBatch, LakeError> {
    let mut fields: Vec<Field> = fields.collect();
    fields.push(Field::new(DELETE_FLAG, DataType::Boolean, false));
    columns.push(Arc::new(BooleanArray::from_iter(flags.map(Some))));
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).map_err(LakeError::arrow(table))
}

/// Tombstones to write, as rows of `tombstones_<dataset>`, with [`DELETE_FLAG`]
/// false for those to forget.
pub(crate) fn tombstones(
    dataset: &Arc<Dataset>,
    rows: &[(&[Value], &str, bool)],
    loaded_at: i64,
) -> Result<RecordBatch, LakeError> {
    let name = TableName::Tombstones(dataset.clone());
    let n = rows.len();
    let mut columns: Vec<ArrayRef> = deltaload_engine::tables::tombstone_columns(dataset)
        .map(|i| values::array(dataset.columns[i].ty, rows.iter().map(|(r, _, _)| &r[i])))
        .collect();
    columns.push(strings(rows.iter().map(|(_, f, _)| Some(*f))));
    columns.push(utc(std::iter::repeat_n(Some(loaded_at), n)));
    let schema = name.schema();
    let fields = schema.fields().iter().map(|f| f.as_ref().clone());
    let flags = rows.iter().map(|(_, _, put)| *put);
    flagged(fields, columns, flags, &name.as_str())
}

/// Rows of `tombstones_<dataset>` read back as deletes: [`Dataset::width`]
/// values, the key and sequence columns set, the delete flag true.
pub(crate) fn tombstone_rows(
    dataset: &Dataset,
    batch: &RecordBatch,
) -> Result<Vec<Row>, LakeError> {
    let kept: Vec<usize> = deltaload_engine::tables::tombstone_columns(dataset).collect();
    let mut rows: Vec<Row> = (0..batch.num_rows())
        .map(|_| {
            let mut row = vec![Value::Null; dataset.width()];
            row[dataset.columns.len()] = Value::Bool(true);
            row
        })
        .collect();
    for (j, &i) in kept.iter().enumerate() {
        let values = values::read(batch.column(j), dataset.columns[i].ty, &dataset.name)?;
        for (row, value) in rows.iter_mut().zip(values) {
            row[i] = value;
        }
    }
    Ok(rows)
}

/// A file's rejects, as rows of `rejected_orders`.
pub(crate) fn rejects(
    dataset: &Arc<Dataset>,
    rejects: &[Reject],
    source_file: &str,
    content_id: &str,
    loaded_at: i64,
) -> Result<RecordBatch, LakeError> {
    let n = rejects.len();
    batch(
        &TableName::Rejected(dataset.clone()),
        vec![
            strings(std::iter::repeat_n(Some(source_file), n)),
            strings(std::iter::repeat_n(Some(content_id), n)),
            longs(rejects.iter().map(|r| Some(r.line as i64))),
            strings(rejects.iter().map(|r| r.key.as_deref())),
            strings(rejects.iter().map(|r| Some(r.raw.as_str()))),
            Arc::new(StringArray::from_iter_values(
                rejects.iter().map(|r| r.reason.to_string()),
            )),
            utc(std::iter::repeat_n(Some(loaded_at), n)),
        ],
    )
}

fn counts<'a, T: 'a>(rows: impl IntoIterator<Item = &'a T>, f: impl Fn(&T) -> u64) -> ArrayRef {
    longs(rows.into_iter().map(|r| Some(f(r) as i64)))
}

/// Rows of `ledger`.
pub(crate) fn ledger(entries: &[LedgerRow]) -> Result<RecordBatch, LakeError> {
    let e = entries;
    batch(
        &TableName::Ledger,
        vec![
            strings(e.iter().map(|e| Some(e.location.as_str()))),
            strings(e.iter().map(|e| Some(e.content_id.as_str()))),
            counts(e, |e| e.size),
            strings(e.iter().map(|e| e.etag.as_deref())),
            strings(e.iter().map(|e| e.version_id.as_deref())),
            strings(e.iter().map(|e| Some(e.status.as_str()))),
            strings(e.iter().map(|e| e.reason.as_deref())),
            counts(e, |e| e.figures.records),
            counts(e, |e| e.figures.rejected),
            counts(e, |e| e.figures.inserted),
            counts(e, |e| e.figures.updated),
            counts(e, |e| e.figures.stale),
            longs(e.iter().map(|e| e.orders_version.map(|v| v as i64))),
            longs(e.iter().map(|e| e.rejected_version.map(|v| v as i64))),
            utc(e.iter().map(|e| Some(e.loaded_at))),
            strings(e.iter().map(|e| Some(e.dataset.as_str()))),
            counts(e, |e| e.figures.deleted),
        ],
    )
}

/// One row of `reconciliation` per file version.
pub(crate) struct ReconciliationRow<'a> {
    pub dataset: &'a str,
    pub location: &'a str,
    pub content_id: &'a str,
    pub figures: Reconciliation,
}

/// Rows of `reconciliation`, all written by the load that reached `orders_version`.
pub(crate) fn reconciliation(
    rows: &[ReconciliationRow<'_>],
    orders_version: Option<u64>,
    loaded_at: i64,
) -> Result<RecordBatch, LakeError> {
    let n = rows.len();
    batch(
        &TableName::Reconciliation,
        vec![
            strings(rows.iter().map(|r| Some(r.location))),
            strings(rows.iter().map(|r| Some(r.content_id))),
            counts(rows, |r| r.figures.records),
            counts(rows, |r| r.figures.loaded),
            counts(rows, |r| r.figures.rejected),
            counts(rows, |r| r.figures.duplicates),
            counts(rows, |r| r.figures.inserted),
            counts(rows, |r| r.figures.updated),
            counts(rows, |r| r.figures.stale),
            Arc::new(BooleanArray::from_iter(
                rows.iter().map(|r| Some(r.figures.balances())),
            )),
            longs(std::iter::repeat_n(orders_version.map(|v| v as i64), n)),
            utc(std::iter::repeat_n(Some(loaded_at), n)),
            strings(rows.iter().map(|r| Some(r.dataset))),
            counts(rows, |r| r.figures.deleted),
            counts(rows, |r| r.figures.retired),
            counts(rows, |r| r.figures.opened),
            counts(rows, |r| r.figures.closed),
        ],
    )
}

/// One row of `expectations`: a file version's figures of one expectation.
pub(crate) struct ExpectationRow<'a> {
    pub dataset: &'a str,
    pub location: &'a str,
    pub content_id: &'a str,
    pub rule: &'a deltaload_core::spec::Rule,
    pub count: deltaload_core::ExpectationCount,
}

/// Rows of `expectations`, all written by one load.
pub(crate) fn expectations(
    rows: &[ExpectationRow<'_>],
    loaded_at: i64,
) -> Result<RecordBatch, LakeError> {
    let on_fail = |r: &ExpectationRow<'_>| r.rule.on_fail().map(|a| a.as_str());
    batch(
        &TableName::Expectations,
        vec![
            strings(rows.iter().map(|r| Some(r.location))),
            strings(rows.iter().map(|r| Some(r.content_id))),
            strings(rows.iter().map(|r| Some(r.dataset))),
            strings(rows.iter().map(|r| Some(r.rule.name.as_str()))),
            strings(rows.iter().map(|r| Some(r.rule.expression.as_str()))),
            strings(rows.iter().map(on_fail)),
            counts(rows, |r| r.count.checked),
            counts(rows, |r| r.count.failed),
            utc(std::iter::repeat_n(Some(loaded_at), rows.len())),
        ],
    )
}

/// Rows of a dataset's table (its declared columns, in order) read back as rows.
pub(crate) fn target_rows(dataset: &Dataset, batch: &RecordBatch) -> Result<Vec<Row>, LakeError> {
    let mut columns = Vec::with_capacity(dataset.columns.len());
    for (i, column) in dataset.columns.iter().enumerate() {
        columns.push(values::read(batch.column(i), column.ty, &dataset.name)?.into_iter());
    }
    let mut rows = Vec::with_capacity(batch.num_rows());
    for _ in 0..batch.num_rows() {
        rows.push(
            columns
                .iter_mut()
                .map(|c| c.next().unwrap_or(Value::Null))
                .collect(),
        );
    }
    Ok(rows)
}
