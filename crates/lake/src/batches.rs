//! Rows of the four tables as Arrow record batches.

use crate::error::LakeError;
use crate::ledger::LedgerEntry;
use crate::schema::{TableName, AMOUNT};
use deltalake::arrow::array::{
    ArrayRef, BooleanArray, Decimal128Array, Int64Array, StringArray, TimestampMicrosecondArray,
};
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

/// The newest changes of a file, as rows of `orders`.
pub(crate) fn orders(
    changes: &[OrderChange],
    source_file: &str,
    loaded_at: i64,
) -> Result<RecordBatch, LakeError> {
    let n = changes.len();
    let amount = Decimal128Array::from_iter(changes.iter().map(|c| c.amount_cents.map(i128::from)))
        .with_data_type(AMOUNT);
    batch(
        TableName::Orders,
        vec![
            longs(changes.iter().map(|c| Some(c.order_id))),
            strings(changes.iter().map(|c| c.customer_id.as_deref())),
            strings(changes.iter().map(|c| c.status.as_deref())),
            Arc::new(amount),
            strings(changes.iter().map(|c| c.currency.as_deref())),
            utc(changes.iter().map(|c| c.ordered_at)),
            utc(changes.iter().map(|c| Some(c.updated_at))),
            strings(std::iter::repeat_n(Some(source_file), n)),
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

fn one(v: u64) -> ArrayRef {
    longs([Some(v as i64)])
}

/// One row of `ledger`.
pub(crate) fn ledger(entry: &LedgerEntry) -> Result<RecordBatch, LakeError> {
    let r = &entry.figures;
    batch(
        TableName::Ledger,
        vec![
            strings([Some(entry.location.as_str())]),
            strings([Some(entry.content_id.as_str())]),
            one(entry.size),
            strings([entry.etag.as_deref()]),
            strings([entry.version_id.as_deref()]),
            strings([Some(entry.status.as_str())]),
            strings([entry.reason.as_deref()]),
            one(r.records),
            one(r.rejected),
            one(r.inserted),
            one(r.updated),
            one(r.stale),
            longs([entry.orders_version.map(|v| v as i64)]),
            longs([entry.rejected_version.map(|v| v as i64)]),
            utc([Some(entry.loaded_at)]),
        ],
    )
}

/// One row of `reconciliation`.
pub(crate) fn reconciliation(
    location: &str,
    content_id: &str,
    r: &Reconciliation,
    orders_version: Option<u64>,
    loaded_at: i64,
) -> Result<RecordBatch, LakeError> {
    batch(
        TableName::Reconciliation,
        vec![
            strings([Some(location)]),
            strings([Some(content_id)]),
            one(r.records),
            one(r.loaded),
            one(r.rejected),
            one(r.duplicates),
            one(r.inserted),
            one(r.updated),
            one(r.stale),
            Arc::new(BooleanArray::from(vec![r.balances()])),
            longs([orders_version.map(|v| v as i64)]),
            utc([Some(loaded_at)]),
        ],
    )
}
