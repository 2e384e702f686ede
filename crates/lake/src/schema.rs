//! The Arrow schemas of the four tables; Delta schemas are derived from them.

use deltalake::arrow::datatypes::{DataType, Field, Schema, SchemaRef, TimeUnit};
use std::sync::Arc;

/// The target size of a compacted or clustered `orders` data file (8 MiB,
/// about 300,000 orders), used by `maintain`. A MERGE rewrites every file
/// holding an order it changes, so this bounds what a change to one order of
/// a clustered table costs. (The MERGE's own output keeps Delta's default
/// size: it writes its two partitions side by side, so splitting it smaller
/// gives files that each span the whole range and are all rewritten next time;
/// see docs/performance.md.)
pub const ORDERS_FILE_BYTES: u64 = 8 << 20;

/// The tables of a lake.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableName {
    Orders,
    RejectedOrders,
    Ledger,
    Reconciliation,
}

impl TableName {
    /// Every table, in the order they are shown.
    pub const ALL: [TableName; 4] = [
        TableName::Orders,
        TableName::RejectedOrders,
        TableName::Ledger,
        TableName::Reconciliation,
    ];

    /// The table's folder name under the lake root.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Orders => "orders",
            Self::RejectedOrders => "rejected_orders",
            Self::Ledger => "ledger",
            Self::Reconciliation => "reconciliation",
        }
    }

    /// Parses a table name as users type it.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.as_str() == name)
    }

    /// The table's Arrow schema.
    pub fn schema(self) -> SchemaRef {
        match self {
            Self::Orders => orders(),
            Self::RejectedOrders => rejected(),
            Self::Ledger => ledger(),
            Self::Reconciliation => reconciliation(),
        }
    }

    /// The column `show --key` looks a value up in, and whether it holds whole
    /// numbers (else text).
    pub fn key_column(self) -> (&'static str, bool) {
        match self {
            Self::Orders => ("order_id", true),
            Self::RejectedOrders => ("source_file", false),
            Self::Ledger | Self::Reconciliation => ("location", false),
        }
    }

    /// Columns to order rows by when the table is shown.
    pub fn sort_columns(self) -> &'static str {
        match self {
            Self::Orders => "order_id",
            Self::RejectedOrders => "source_file, line_number",
            Self::Ledger | Self::Reconciliation => "loaded_at, location",
        }
    }
}

pub(crate) fn timestamp() -> DataType {
    DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))
}

fn string(name: &str, nullable: bool) -> Field {
    Field::new(name, DataType::Utf8, nullable)
}

fn long(name: &str, nullable: bool) -> Field {
    Field::new(name, DataType::Int64, nullable)
}

/// DECIMAL(10,2) as Arrow writes it.
pub(crate) const AMOUNT: DataType = DataType::Decimal128(10, 2);

fn orders() -> SchemaRef {
    Arc::new(Schema::new(vec![
        long("order_id", false),
        string("customer_id", true),
        string("status", true),
        Field::new("amount", AMOUNT, true),
        string("currency", true),
        Field::new("ordered_at", timestamp(), true),
        Field::new("updated_at", timestamp(), false),
        string("source_file", false),
        Field::new("loaded_at", timestamp(), false),
    ]))
}

fn rejected() -> SchemaRef {
    Arc::new(Schema::new(vec![
        string("source_file", false),
        string("content_id", false),
        long("line_number", false),
        string("order_id", true),
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
    ]))
}
