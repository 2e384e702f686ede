//! The rows of `inventory` the tests start from, and single columns to swap in.

use arrow_array::builder::{Int32Builder, StructBuilder};
use arrow_array::*;
use arrow_schema::{DataType, Field};
use deltaload_core::{HeaderMismatch, ParsedFile, Value};
use deltaload_ingest::parquet::read_parquet;
use std::sync::Arc;

use super::{inventory, parquet};

/// 2026-10-01T09:15:00Z in microseconds.
pub const T0: i64 = 1_790_846_100_000_000;

pub fn text(s: &str) -> Value {
    Value::Text(s.to_string())
}

pub fn strings(v: &[Option<&str>]) -> ArrayRef {
    Arc::new(StringArray::from(v.to_vec()))
}

/// Five good rows of `inventory`, each column as the writers of the issue would type it.
pub fn columns() -> Vec<(&'static str, ArrayRef)> {
    vec![
        (
            "warehouse",
            strings(&[Some("W1"), Some("W1"), Some("W2"), Some("W2"), Some("W3")]),
        ),
        (
            "sku",
            strings(&[Some("A"), Some("B"), Some("A"), Some("B"), Some("C")]),
        ),
        (
            "event_time",
            Arc::new(
                TimestampMicrosecondArray::from(vec![T0, T0 + 1, T0 + 2, T0 + 3, T0 + 4])
                    .with_timezone("UTC"),
            ),
        ),
        (
            "seq",
            Arc::new(Int64Array::from(vec![1, 2, 3, 4, i64::MAX])),
        ),
        (
            "qty",
            Arc::new(Int32Array::from(vec![
                Some(5),
                None,
                Some(-7),
                Some(0),
                Some(i32::MAX),
            ])),
        ),
        (
            "price",
            Arc::new(
                Decimal128Array::from(vec![
                    Some(2550),
                    Some(-1),
                    None,
                    Some(9_999_999_999),
                    Some(0),
                ])
                .with_precision_and_scale(10, 2)
                .unwrap(),
            ),
        ),
        (
            "active",
            Arc::new(BooleanArray::from(vec![
                Some(true),
                Some(false),
                None,
                Some(true),
                Some(true),
            ])),
        ),
        (
            "op",
            strings(&[None, Some("u"), Some("i"), None, Some("x")]),
        ),
    ]
}

/// `columns()` with `name` replaced by `array` (or added at the end).
pub fn with(name: &'static str, array: ArrayRef) -> Vec<(&'static str, ArrayRef)> {
    let mut cols = columns();
    match cols.iter_mut().find(|(n, _)| *n == name) {
        Some(c) => c.1 = array,
        None => cols.push((name, array)),
    }
    cols
}

pub fn without(name: &str) -> Vec<(&'static str, ArrayRef)> {
    columns().into_iter().filter(|(n, _)| *n != name).collect()
}

pub fn read(cols: Vec<(&str, ArrayRef)>) -> Result<ParsedFile, HeaderMismatch> {
    read_parquet(&inventory(), &parquet(cols, 2))
}

pub fn refusal(cols: Vec<(&str, ArrayRef)>) -> HeaderMismatch {
    read(cols).expect_err("the file is refused")
}

/// A struct column.
pub fn nested() -> ArrayRef {
    let mut b = StructBuilder::from_fields(vec![Field::new("a", DataType::Int32, true)], 5);
    for i in 0..5 {
        b.field_builder::<Int32Builder>(0).unwrap().append_value(i);
        b.append(true);
    }
    Arc::new(b.finish())
}
