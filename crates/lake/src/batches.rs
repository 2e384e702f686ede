//! Rows of the four tables as Arrow record batches.

use crate::error::LakeError;
use crate::ledger::LedgerEntry;
use crate::schema::{TableName, AMOUNT};
use crate::table::{longs_of, strings_of};
use deltalake::arrow::array::{
    ArrayRef, BooleanArray, Decimal128Array, Int64Array, StringArray, TimestampMicrosecondArray,
};
use deltalake::arrow::datatypes::DataType;
use deltalake::arrow::record_batch::RecordBatch;
use deltaload_core::{OrderChange, Reconciliation, Reject};
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

fn batch(name: TableName, columns: Vec<ArrayRef>) -> Result<RecordBatch, LakeError> {
    RecordBatch::try_new(name.schema(), columns).map_err(LakeError::arrow(name.as_str()))
}

/// Changes, each with the file it comes from, as rows of `orders`.
pub(crate) fn orders(
    rows: &[(&OrderChange, &str)],
    loaded_at: i64,
) -> Result<RecordBatch, LakeError> {
    let n = rows.len();
    let changes = || rows.iter().map(|(c, _)| *c);
    let amount = Decimal128Array::from_iter(changes().map(|c| c.amount_cents.map(i128::from)))
        .with_data_type(AMOUNT);
    batch(
        TableName::Orders,
        vec![
            longs(changes().map(|c| Some(c.order_id))),
            strings(changes().map(|c| c.customer_id.as_deref())),
            strings(changes().map(|c| c.status.as_deref())),
            Arc::new(amount),
            strings(changes().map(|c| c.currency.as_deref())),
            utc(changes().map(|c| c.ordered_at)),
            utc(changes().map(|c| Some(c.updated_at))),
            strings(rows.iter().map(|(_, f)| Some(*f))),
            utc(std::iter::repeat_n(Some(loaded_at), n)),
        ],
    )
}

/// A file's rejects, as rows of `rejected_orders`.
pub(crate) fn rejects(
    rejects: &[Reject],
    source_file: &str,
    content_id: &str,
    loaded_at: i64,
) -> Result<RecordBatch, LakeError> {
    let n = rejects.len();
    batch(
        TableName::RejectedOrders,
        vec![
            strings(std::iter::repeat_n(Some(source_file), n)),
            strings(std::iter::repeat_n(Some(content_id), n)),
            longs(rejects.iter().map(|r| Some(r.line as i64))),
            strings(rejects.iter().map(|r| r.order_id.as_deref())),
            strings(rejects.iter().map(|r| Some(r.raw.as_str()))),
            strings(rejects.iter().map(|r| Some(r.reason.as_str()))),
            utc(std::iter::repeat_n(Some(loaded_at), n)),
        ],
    )
}

fn counts<'a, T: 'a>(rows: impl IntoIterator<Item = &'a T>, f: impl Fn(&T) -> u64) -> ArrayRef {
    longs(rows.into_iter().map(|r| Some(f(r) as i64)))
}

/// Rows of `ledger`.
pub(crate) fn ledger(entries: &[LedgerEntry]) -> Result<RecordBatch, LakeError> {
    let e = entries;
    batch(
        TableName::Ledger,
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
        ],
    )
}

/// One row of `reconciliation` per file version.
pub(crate) struct ReconciliationRow<'a> {
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
        TableName::Reconciliation,
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
        ],
    )
}

/// Rows of `orders` (its first seven columns, in order) read back as changes.
/// A row without an `updated_at` (only another engine could write one) loses
/// against every change, as it does in the MERGE condition.
pub(crate) fn order_changes(batch: &RecordBatch) -> Result<Vec<OrderChange>, LakeError> {
    let ts = crate::schema::timestamp();
    let ids = longs_of(batch.column(0), &DataType::Int64)?;
    let customers = strings_of(batch.column(1))?;
    let statuses = strings_of(batch.column(2))?;
    let amounts = longs_of(batch.column(3), &AMOUNT)?;
    let currencies = strings_of(batch.column(4))?;
    let ordered = longs_of(batch.column(5), &ts)?;
    let updated = longs_of(batch.column(6), &ts)?;
    let mut out = Vec::with_capacity(batch.num_rows());
    let columns = customers
        .into_iter()
        .zip(statuses)
        .zip(amounts)
        .zip(currencies);
    let times = ordered.into_iter().zip(updated);
    for ((id, (((customer_id, status), amount_cents), currency)), (ordered_at, updated_at)) in
        ids.into_iter().zip(columns).zip(times)
    {
        let Some(order_id) = id else { continue };
        out.push(OrderChange {
            order_id,
            customer_id,
            status,
            amount_cents,
            currency,
            ordered_at,
            updated_at: updated_at.unwrap_or(i64::MIN),
        });
    }
    Ok(out)
}
