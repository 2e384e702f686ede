//! Change files of a dataset read straight into Arrow: each record that
//! parses becomes a row of record batches of the dataset's columns (no
//! [`deltaload_core::Value`] per field), each one that does not a
//! [`Reject`] with its line, raw text and reason, exactly as the core's
//! readers decide (they hold every parse rule; [`Columns`] only stores).
//!
//! - [`columns`]: the Arrow sink, a builder per column.
//! - [`parquet`]: the Parquet reader, its pages checked before the decoder
//!   reads them, the schema before any row.
//! - [`avro`]: the Avro reader, a block at a time, into the Parquet
//!   reader's conversions; `debezium` and `connect`: Debezium's events and
//!   Kafka Connect's annotated types in columnar files.
//! - [`read_changes`]: a whole file of any format of the dataset.
//! - [`rules`]: records that break the table's rules moved to the rejects.
//! - [`source`]: a file to load, in memory or on local disk; [`expand`]:
//!   gzip expanded into memory or onto disk.
//! - [`budget`]: the memory a load may use, and its spill directory.
//! - [`values`]: typed values as Arrow arrays, and back.
//! - [`error`]: what can fail on the data before any table.

#![warn(missing_docs)]

pub mod avro;
pub mod budget;
pub mod columns;
mod connect;
mod debezium;
pub mod error;
pub mod expand;
pub mod parquet;
pub mod rules;
pub mod source;
pub mod values;

pub use budget::{cap_allocator_arenas, peak_mib, MemoryBudget, SpillDir};
pub use columns::Columns;
pub use error::DataError;
pub use expand::{expand_gzip, ExpandError, Expanded};
pub use source::{OnDisk, SourceFile, Unread, UNREAD};

use arrow_array::RecordBatch;
use arrow_schema::{DataType, Field, Schema, SchemaRef, TimeUnit};
use deltaload_core::spec::Format;
use deltaload_core::{ColumnType, Dataset, HeaderMismatch, ParsedFile, Reject, Sink};
use std::sync::Arc;

/// The column after the dataset's, true for a change that deletes its key.
pub const DELETE_FLAG: &str = "__deltaload_delete";

/// Rows per record batch of changes: what a reader builds before it cuts.
pub const CHANGE_BATCH_ROWS: usize = 1 << 16;

/// The Arrow type of a column of type `ty`, as the tables hold it.
pub fn arrow_type(ty: ColumnType) -> DataType {
    match ty {
        ColumnType::String => DataType::Utf8,
        ColumnType::Boolean => DataType::Boolean,
        ColumnType::Int => DataType::Int32,
        ColumnType::Bigint => DataType::Int64,
        ColumnType::Double => DataType::Float64,
        ColumnType::Decimal { precision, scale } => DataType::Decimal128(precision, scale as i8),
        ColumnType::Date => DataType::Date32,
        ColumnType::Timestamp => DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
    }
}

/// The schema of a dataset's changes: its columns in declared order (every
/// one nullable: a delete holds its key and sequence only), then
/// [`DELETE_FLAG`] (null for an upsert that follows a delete of its key in
/// its file, when the dataset ignores null updates: it sets its row whole).
pub fn changes_schema(dataset: &Dataset) -> SchemaRef {
    let mut fields: Vec<Field> = dataset
        .columns
        .iter()
        .map(|c| Field::new(&c.name, arrow_type(c.ty), true))
        .collect();
    fields.push(Field::new(DELETE_FLAG, DataType::Boolean, true));
    Arc::new(Schema::new(fields))
}

/// A file read into Arrow: its changes in record order, and its rejects.
#[derive(Debug, Clone)]
pub struct Ingested {
    /// The records that parsed, in batches of [`changes_schema`].
    pub batches: Vec<RecordBatch>,
    /// The records that did not.
    pub rejects: Vec<Reject>,
    /// Batches taken whole from the file (Parquet of the dataset's own
    /// types), no value converted.
    pub whole_batches: usize,
    /// The line each change starts on, while the dataset has rules
    /// ([`rules::apply`] uses them, then drops them).
    pub lines: Option<Vec<u64>>,
    /// Per expectation of the dataset, in order: the records checked and
    /// those that broke it ([`rules::apply`] counts them; empty before).
    pub expectations: Vec<deltaload_core::ExpectationCount>,
}

impl Ingested {
    /// Records that parsed.
    pub fn changes(&self) -> u64 {
        self.batches.iter().map(|b| b.num_rows() as u64).sum()
    }

    /// Records read: those that parsed and the rejects.
    pub fn records(&self) -> u64 {
        self.changes() + self.rejects.len() as u64
    }
}

/// Why a file gave no changes.
#[derive(Debug, thiserror::Error)]
pub enum IngestError {
    /// The file breaks its dataset's contract: refused, with the reason.
    #[error("{}", .0.problem)]
    Refused(HeaderMismatch),
    /// The table's rules could not be evaluated on the file's records.
    #[error("checking the records of dataset {dataset} against its table's rules (CHECK constraints, invariants): {problem}")]
    Rules {
        /// The dataset.
        dataset: String,
        /// What went wrong.
        problem: String,
    },
    /// A reader gave the Arrow sink a value of the wrong type: a defect of
    /// deltaload, not of the file.
    #[error("reading dataset {dataset}: {problem} (a defect of deltaload: please report it)")]
    Defect {
        /// The dataset.
        dataset: String,
        /// What went wrong.
        problem: String,
    },
}

/// Reads `bytes` as a whole file of `dataset`, in its format.
pub fn read_changes(dataset: &Dataset, bytes: &[u8]) -> Result<Ingested, IngestError> {
    let parsed: ParsedFile<Columns> = match dataset.format {
        Format::Csv => deltaload_core::read_file_into(dataset, bytes),
        Format::Jsonl => deltaload_core::read_jsonl_into(dataset, bytes),
        Format::Parquet => read_parquet(dataset, bytes),
        Format::Avro => crate::avro::read_avro_into::<Columns>(dataset, bytes),
    }
    .map_err(IngestError::Refused)?;
    let mut changes = parsed.changes;
    let lines = changes.take_lines();
    let (batches, whole_batches) =
        changes
            .finish_counted()
            .map_err(|problem| IngestError::Defect {
                dataset: dataset.name.clone(),
                problem,
            })?;
    Ok(Ingested {
        batches,
        rejects: parsed.rejects,
        whole_batches,
        lines,
        expectations: Vec::new(),
    })
}

/// A Parquet file of `dataset`. The reader checks what the Parquet decoder
/// would panic on; should a file still reach one of its panics, the file is
/// refused, not the process killed (and the message redelivered for ever).
fn read_parquet(dataset: &Dataset, bytes: &[u8]) -> Result<ParsedFile<Columns>, HeaderMismatch> {
    let read = std::panic::AssertUnwindSafe(|| {
        crate::parquet::read_parquet_into::<Columns>(dataset, bytes)
    });
    std::panic::catch_unwind(read).unwrap_or_else(|_| {
        Err(HeaderMismatch::new(
            dataset,
            Vec::new(),
            "not a readable Parquet file: the Parquet decoder failed on it \
             (damaged, or written in a way it does not support)"
                .to_string(),
        ))
    })
}

/// Rows of values (each ending in its delete flag when the dataset has
/// `delete_when`) written into the Arrow sink.
pub fn from_rows(dataset: &Dataset, rows: &deltaload_core::Rows) -> Columns {
    let mut columns = Columns::empty(dataset);
    let width = dataset.columns.len();
    for (i, row) in rows.iter().enumerate() {
        for value in &row[..width] {
            columns.field(deltaload_core::Scalar::from(value));
        }
        let delete = dataset
            .delete_when
            .is_some()
            .then(|| dataset.is_delete(row));
        columns.end(delete, i as u64 + 1);
    }
    columns
}

#[cfg(test)]
mod parquet_tests;
#[cfg(test)]
mod tests;
