//! Parquet change files of a dataset, read into the same [`ParsedFile`] as
//! CSV files: typed rows, and rejects with their row number, the row as JSON
//! and a reason.
//!
//! Columns are found by name. The file's schema is checked before any row
//! is read: a declared column missing, nested, or of a type its column
//! cannot hold without loss refuses the whole file (a [`HeaderMismatch`]),
//! as does a column the spec does not declare unless `extra_fields =
//! "ignore"` (then it is never decoded). Rows are read one record batch at a
//! time, each column converted as a whole.
//!
//! - `guard`: what the parquet crate would assert of the metadata, checked first.
//! - `schema`: the type check, and which file column feeds which.
//! - `convert`: arrays converted to values, column by column.
//! - `rows`: a batch's rows assembled into changes and rejects.
//! - `raw`: a rejected row as JSON.

mod convert;
mod guard;
mod raw;
mod rows;
mod schema;
#[cfg(test)]
mod tests;

use bytes::Bytes;
use deltaload_core::{Dataset, HeaderMismatch, ParsedFile, Rows};
use parquet::arrow::arrow_reader::{ArrowReaderOptions, ParquetRecordBatchReaderBuilder};
use parquet::arrow::ProjectionMask;
use std::fmt::Display;

/// Rows decoded at a time.
const BATCH_ROWS: usize = 8192;

/// Reads `bytes` as a Parquet file of `dataset`, one row group at a time.
///
/// A file that is not readable Parquet, or whose schema does not hold the
/// dataset's columns without loss, is refused before any row is read (or,
/// for damage found in a later row group, once it is found).
pub fn read_parquet(dataset: &Dataset, bytes: &[u8]) -> Result<ParsedFile, HeaderMismatch> {
    let unreadable = |found: &[String], e: &dyn Display| {
        schema::refusal(
            dataset,
            found.to_vec(),
            format!("not a readable Parquet file: {e}"),
        )
    };
    // The Arrow schema a writer may embed is not read: arrow-ipc panics on a bad one.
    let options = ArrowReaderOptions::new().with_skip_arrow_metadata(true);
    let builder =
        ParquetRecordBatchReaderBuilder::try_new_with_options(Bytes::copy_from_slice(bytes), options)
            .map_err(|e| unreadable(&[], &e))?;
    guard::check_metadata(builder.metadata(), bytes.len()).map_err(|e| unreadable(&[], &e))?;
    let found: Vec<String> = builder
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    let plan = schema::plan(dataset, builder.schema())?;
    let root = builder.parquet_schema().root_schema();
    if !root.is_group() || root.get_fields().len() != found.len() {
        return Err(unreadable(&found, &"its schema's top-level columns do not match its Arrow schema"));
    }
    let mask = ProjectionMask::roots(builder.parquet_schema(), plan.read.iter().copied());
    let reader = builder
        .with_projection(mask)
        .with_batch_size(BATCH_ROWS)
        .build()
        .map_err(|e| unreadable(&found, &e))?;
    let mut parsed = ParsedFile {
        changes: Rows::new(dataset.width()),
        rejects: Vec::new(),
    };
    let mut rows = 0u64;
    for batch in reader {
        let batch = batch.map_err(|e| unreadable(&found, &e))?;
        rows::read_batch(dataset, &plan, &batch, rows, &mut parsed)
            .map_err(|e| unreadable(&found, &e))?;
        rows += batch.num_rows() as u64;
    }
    Ok(parsed)
}
