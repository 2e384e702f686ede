//! Datasets and in-memory Parquet files for the reader's tests.
#![allow(dead_code)]

use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{Field, Schema};
use deltaload_core::{Dataset, Spec};
use parquet::arrow::ArrowWriter;
use parquet::file::properties::WriterProperties;
use std::sync::Arc;

mod columns;
mod corpus;
#[allow(unused_imports)]
pub use columns::*;
#[allow(unused_imports)]
pub use corpus::corpus;

/// The dataset of the issue: a composite key, a two-column sequence, deletes.
pub const INVENTORY: &str = r#"
[[dataset]]
name = "inventory"
format = "parquet"
keys = ["warehouse", "sku"]
sequence_by = ["event_time", "seq"]
delete_when = { column = "op", in = ["d", "delete"] }
EXTRA
columns = [
    { name = "warehouse", type = "string" },
    { name = "sku", type = "string" },
    { name = "event_time", type = "timestamp" },
    { name = "seq", type = "bigint" },
    { name = "qty", type = "int" },
    { name = "price", type = "decimal(10,2)" },
    { name = "active", type = "boolean" },
]
"#;

/// Doubles, dates, a zone for local times, a column that may not be null.
pub const READINGS: &str = r#"
[[dataset]]
name = "readings"
format = "parquet"
keys = ["id"]
extra_fields = "ignore"
columns = [
    { name = "id", type = "bigint" },
    { name = "score", type = "double" },
    { name = "day", type = "date" },
    { name = "at", type = "timestamp", timezone = "Europe/Berlin" },
    { name = "amount", type = "decimal(5,2)", nullable = false },
]
"#;

fn parse(text: &str) -> Arc<Dataset> {
    Spec::parse(text, "t.toml").unwrap().datasets.remove(0)
}

pub fn inventory() -> Arc<Dataset> {
    parse(&INVENTORY.replace("EXTRA", ""))
}

/// `inventory` with `extra_fields = "ignore"`.
pub fn inventory_ignoring_extras() -> Arc<Dataset> {
    parse(&INVENTORY.replace("EXTRA", "extra_fields = \"ignore\""))
}

pub fn readings() -> Arc<Dataset> {
    parse(READINGS)
}

/// A Parquet file of `columns`, `group` rows per row group.
pub fn parquet(columns: Vec<(&str, ArrayRef)>, group: usize) -> Vec<u8> {
    let fields: Vec<Field> = columns
        .iter()
        .map(|(name, a)| Field::new(*name, a.data_type().clone(), true))
        .collect();
    let arrays = columns.into_iter().map(|(_, a)| a).collect();
    let batch = RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays).unwrap();
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(group))
        .build();
    let mut out = Vec::new();
    let mut writer = ArrowWriter::try_new(&mut out, batch.schema(), Some(props)).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
    out
}
