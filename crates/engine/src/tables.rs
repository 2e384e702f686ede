//! The tables of a lake, named, and their Arrow schemas (Delta schemas are
//! derived from them).
//! A dataset's table has its declared columns then the lineage columns; its
//! rejects, the ledger and the reconciliation have fixed columns.

use arrow_schema::{DataType, Field, Schema, SchemaRef, TimeUnit};
use deltaload_core::{ColumnType, Dataset};
use std::sync::Arc;

/// A table of a lake.
#[derive(Debug, Clone, PartialEq)]
pub enum TableName {
    /// A dataset's table, named as the dataset.
    Target(Arc<Dataset>),
    /// `rejected_<dataset>`.
    Rejected(Arc<Dataset>),
    /// `tombstones_<dataset>`: the deleted keys with their delete's sequence
    /// (datasets with `delete_when` and `sequence_by`).
    Tombstones(Arc<Dataset>),
    /// `history_<dataset>`: a row per version of a key (`history = true`).
    History(Arc<Dataset>),
    /// `history_log_<dataset>`: every change the history was made of.
    HistoryLog(Arc<Dataset>),
    /// `ledger`: a row per file version.
    Ledger,
    /// `reconciliation`: each file's figures.
    Reconciliation,
    /// `expectations`: each file's figures per expectation (when a dataset
    /// of the lake's spec declares any).
    Expectations,
}

impl TableName {
    /// Every table of a lake holding `datasets`, in the order they are shown.
    pub fn all(datasets: &[Arc<Dataset>]) -> Vec<TableName> {
        let mut all = Vec::with_capacity(datasets.len() * 2 + 2);
        for d in datasets {
            all.push(Self::Target(d.clone()));
            all.push(Self::Rejected(d.clone()));
            if d.keeps_tombstones() {
                all.push(Self::Tombstones(d.clone()));
            }
            if d.history.is_some() {
                all.push(Self::History(d.clone()));
                all.push(Self::HistoryLog(d.clone()));
            }
        }
        all.extend([Self::Ledger, Self::Reconciliation]);
        if datasets.iter().any(|d| !d.expectations.is_empty()) {
            all.push(Self::Expectations);
        }
        all
    }

    /// The table's name in SQL (it is registered under [`TableName::as_str`]).
    pub fn sql(&self) -> String {
        quoted(&self.as_str())
    }

    /// The table's folder name under the lake root.
    pub fn as_str(&self) -> String {
        match self {
            Self::Target(d) => d.table_name().to_string(),
            Self::Rejected(d) => d.rejected_table(),
            Self::Tombstones(d) => d.tombstones_table(),
            Self::History(d) => d.history_table(),
            Self::HistoryLog(d) => d.history_log_table(),
            Self::Ledger => "ledger".to_string(),
            Self::Reconciliation => "reconciliation".to_string(),
            Self::Expectations => "expectations".to_string(),
        }
    }

    /// Parses a table name as users type it, among the tables of `datasets`.
    pub fn parse(name: &str, datasets: &[Arc<Dataset>]) -> Option<Self> {
        Self::all(datasets).into_iter().find(|t| t.as_str() == name)
    }

    /// The table's Arrow schema.
    pub fn schema(&self) -> SchemaRef {
        match self {
            Self::Target(d) => target(d),
            Self::Rejected(d) => rejected(d.reject_key_column()),
            Self::Tombstones(d) => tombstones(d),
            Self::History(d) => crate::history::schema(d),
            Self::HistoryLog(d) => crate::history::log_schema(d),
            Self::Ledger => ledger(),
            Self::Reconciliation => reconciliation(),
            Self::Expectations => expectations(),
        }
    }

    /// The column `show --key` looks a value up in, and whether it holds whole
    /// numbers (else it is compared as text).
    pub fn key_column(&self) -> (String, bool) {
        match self {
            Self::Target(d) | Self::Tombstones(d) | Self::History(d) | Self::HistoryLog(d) => {
                let first = &d.columns[d.keys[0]];
                let whole = matches!(first.ty, ColumnType::Int | ColumnType::Bigint);
                (first.name.clone(), whole)
            }
            Self::Rejected(_) => ("source_file".to_string(), false),
            Self::Ledger | Self::Reconciliation | Self::Expectations => {
                ("location".to_string(), false)
            }
        }
    }

    /// The table's partition columns, as the spec declares them (only a
    /// dataset's own table is partitioned).
    pub fn partition_columns(&self) -> Vec<String> {
        match self {
            Self::Target(d) => d
                .names(&d.partition_by)
                .iter()
                .map(|s| s.to_string())
                .collect(),
            _ => Vec::new(),
        }
    }

    /// Columns to order rows by when the table is shown, as SQL.
    pub fn sort_columns(&self) -> String {
        match self {
            Self::Target(d) | Self::Tombstones(d) => d
                .keys
                .iter()
                .map(|&k| quoted(&d.columns[k].name))
                .collect::<Vec<_>>()
                .join(", "),
            Self::History(d) | Self::HistoryLog(d) => {
                let mut columns: Vec<String> = d.names(&d.keys).iter().map(|n| quoted(n)).collect();
                match self {
                    Self::History(_) => columns.push(deltaload_core::spec::START_AT.to_string()),
                    _ => columns.extend(d.names(&d.sequence_by).iter().map(|n| quoted(n))),
                }
                columns.join(", ")
            }
            Self::Rejected(_) => "source_file, line_number".to_string(),
            Self::Ledger | Self::Reconciliation => "loaded_at, location".to_string(),
            Self::Expectations => "loaded_at, location, dataset, expectation".to_string(),
        }
    }
}

/// Words SQL reserves, which a plain lower-case name may still be.
const RESERVED: [&str; 64] = [
    "all",
    "and",
    "any",
    "array",
    "as",
    "asc",
    "between",
    "both",
    "by",
    "case",
    "cast",
    "check",
    "collate",
    "constraint",
    "create",
    "cross",
    "current_date",
    "current_time",
    "current_timestamp",
    "date",
    "default",
    "delete",
    "desc",
    "distinct",
    "drop",
    "else",
    "end",
    "except",
    "exists",
    "false",
    "fetch",
    "filter",
    "for",
    "from",
    "full",
    "group",
    "having",
    "in",
    "inner",
    "insert",
    "intersect",
    "interval",
    "into",
    "is",
    "join",
    "lateral",
    "left",
    "like",
    "limit",
    "natural",
    "not",
    "null",
    "offset",
    "on",
    "or",
    "order",
    "outer",
    "right",
    "select",
    "table",
    "time",
    "timestamp",
    "union",
    "where",
];

/// A column or table name as an SQL identifier: as is when plain lower-case
/// and not a reserved word, else in double quotes.
pub fn quoted(name: &str) -> String {
    let plain = name.starts_with(|c: char| c.is_ascii_lowercase() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && !RESERVED.contains(&name);
    if plain {
        name.to_string()
    } else {
        format!("\"{}\"", name.replace('"', "\"\""))
    }
}

/// The type of the lineage and load timestamps: microseconds, UTC.
pub fn timestamp() -> DataType {
    DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))
}

/// The Arrow type a column of `ty` is stored as.
pub use deltaload_ingest::arrow_type;

fn string(name: &str, nullable: bool) -> Field {
    Field::new(name, DataType::Utf8, nullable)
}

fn long(name: &str, nullable: bool) -> Field {
    Field::new(name, DataType::Int64, nullable)
}

/// A dataset's table: its declared columns, then `source_file` and `loaded_at`.
pub fn target(d: &Dataset) -> SchemaRef {
    let mut fields: Vec<Field> = d
        .columns
        .iter()
        .map(|c| Field::new(&c.name, arrow_type(c.ty), c.nullable))
        .collect();
    fields.push(string("source_file", false));
    fields.push(Field::new("loaded_at", timestamp(), false));
    Arc::new(Schema::new(fields))
}

/// The key and sequence columns, then where and when the delete was loaded.
fn tombstones(d: &Dataset) -> SchemaRef {
    let mut fields: Vec<Field> = tombstone_columns(d)
        .map(|i| {
            let c = &d.columns[i];
            Field::new(&c.name, arrow_type(c.ty), false)
        })
        .collect();
    fields.push(string("source_file", false));
    fields.push(Field::new("loaded_at", timestamp(), false));
    Arc::new(Schema::new(fields))
}

/// The dataset's columns a tombstone keeps: its keys, then its sequence columns.
pub fn tombstone_columns(d: &Dataset) -> impl Iterator<Item = usize> + '_ {
    d.keys.iter().chain(&d.sequence_by).copied()
}

fn rejected(key_column: &str) -> SchemaRef {
    Arc::new(Schema::new(vec![
        string("source_file", false),
        string("content_id", false),
        long("line_number", false),
        string(key_column, true),
        string("raw_line", false),
        string("reason", false),
        Field::new("loaded_at", timestamp(), false),
    ]))
}

fn ledger() -> SchemaRef {
    Arc::new(Schema::new(vec![
        string("location", false),
        string("content_id", false),
        long("size", false),
        string("etag", true),
        string("version_id", true),
        string("status", false),
        string("reason", true),
        long("records", false),
        long("rejected", false),
        long("inserted", false),
        long("updated", false),
        long("stale", false),
        long("orders_version", true),
        long("rejected_version", true),
        Field::new("loaded_at", timestamp(), false),
        string("dataset", true),
        long("deleted", true),
    ]))
}

/// `expectations`: a row per file version and expectation.
fn expectations() -> SchemaRef {
    Arc::new(Schema::new(vec![
        string("location", false),
        string("content_id", false),
        string("dataset", false),
        string("expectation", false),
        string("rule", false),
        string("on_fail", false),
        long("records", false),
        long("failed", false),
        Field::new("loaded_at", timestamp(), false),
    ]))
}

fn reconciliation() -> SchemaRef {
    Arc::new(Schema::new(vec![
        string("location", false),
        string("content_id", false),
        long("records", false),
        long("loaded", false),
        long("rejected", false),
        long("duplicates", false),
        long("inserted", false),
        long("updated", false),
        long("stale", false),
        Field::new("balanced", DataType::Boolean, false),
        long("orders_version", true),
        Field::new("loaded_at", timestamp(), false),
        string("dataset", true),
        long("deleted", true),
        long("retired", true),
        long("versions_opened", true),
        long("versions_closed", true),
    ]))
}
