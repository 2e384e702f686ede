//! Parquet change files of a dataset, read into the same [`ParsedFile`] as
//! CSV files: typed rows, and rejects with their row number, the row as JSON
//! and a reason. [`read_changes`](crate::read_changes) reads a dataset's
//! Parquet files through [`read_parquet_into`], into the
//! [`Columns`](crate::Columns) sink.
//!
//! Columns are found by name. The file's schema is checked before any row
//! is read: a declared column missing, nested, or of a type its column
//! cannot hold without loss refuses the whole file (a [`HeaderMismatch`]),
//! as does a column the spec does not declare unless `extra_fields =
//! "ignore"` (then it is never decoded). Rows are read one record batch at a
//! time, each column converted as a whole.
//!
//! A damaged file is refused, never a panic: the parquet crate asserts on
//! some damage, so the metadata (`guard`) and each page (`pages`) are
//! checked before it decodes them, and the Arrow schema a writer may embed
//! is not read (arrow-ipc panics on a bad one): types come from the Parquet
//! schema.
//!
//! - `guard`: what the parquet crate would assert of the metadata, checked first.
//! - `pages`: the reader, its pages checked as they are read.
//! - `levels`: the level and index runs of a page, checked and counted.
//! - `schema`: the type check, and which file column feeds which.
//! - `exact`: a batch whose columns already hold the dataset's Arrow types,
//!   taken as it is (no value converted), for a sink of whole batches.
//! - `convert`: arrays converted to values, column by column.
//! - `rows`: a batch's rows assembled into changes and rejects.
//! - `raw`: a rejected row as JSON.

mod convert;
mod exact;
mod guard;
mod levels;
mod pages;
pub(crate) mod raw;
mod rows;
pub(crate) mod schema;
#[cfg(test)]
mod tests;

use arrow_array::RecordBatch;
use bytes::Bytes;
use deltaload_core::{Dataset, HeaderMismatch, ParsedFile, RejectReason, Rows, Sink};
use parquet::arrow::arrow_reader::{ArrowReaderMetadata, ArrowReaderOptions};
use schema::Plan;
use std::fmt::Display;
use std::sync::Arc;

/// Rows decoded at a time.
const BATCH_ROWS: usize = 8192;

/// Reads `bytes` as a Parquet file of `dataset`, one row group at a time.
///
/// A file that is not readable Parquet, or whose schema does not hold the
/// dataset's columns without loss, is refused before any row is read (or,
/// for damage found in a later page, once it is found).
pub fn read_parquet(dataset: &Dataset, bytes: &[u8]) -> Result<ParsedFile, HeaderMismatch> {
    read_parquet_into(dataset, bytes)
}

/// Where a Parquet file's records go: a field at a time, as every
/// [`Sink`] takes them, or, for a sink of whole record batches, a batch at a
/// time when its columns already hold the dataset's Arrow types.
pub trait ParquetSink: Sink {
    /// The schema of the record batches the sink takes whole (the
    /// dataset's columns, then the delete flag), if it takes any.
    fn batch_schema(&self) -> Option<arrow_schema::SchemaRef> {
        None
    }

    /// Takes `batch` (of [`ParquetSink::batch_schema`]) after what it holds.
    fn push_batch(&mut self, batch: arrow_array::RecordBatch) {
        let _ = batch;
    }
}

/// Values take every record a field at a time.
impl ParquetSink for Rows {}

/// [`read_parquet`] into any [`ParquetSink`].
pub fn read_parquet_into<S: ParquetSink>(
    dataset: &Dataset,
    bytes: &[u8],
) -> Result<ParsedFile<S>, HeaderMismatch> {
    let unreadable = |found: &[String], e: &dyn Display| {
        schema::refusal(
            dataset,
            found.to_vec(),
            format!("not a readable Parquet file: {e}"),
        )
    };
    let bytes = Bytes::copy_from_slice(bytes);
    let options = ArrowReaderOptions::new().with_skip_arrow_metadata(true);
    let meta = ArrowReaderMetadata::load(&bytes, options).map_err(|e| unreadable(&[], &e))?;
    guard::check_metadata(meta.metadata(), bytes.len()).map_err(|e| unreadable(&[], &e))?;
    let found: Vec<String> = meta
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    if dataset.preset == Some(deltaload_core::spec::Preset::Debezium) {
        let all: Vec<usize> = (0..found.len()).collect();
        let reader = pages::reader(bytes, Arc::clone(meta.metadata()), &all, BATCH_ROWS)
            .map_err(|e| unreadable(&found, &e))?;
        let annotated = crate::connect::annotated(meta.metadata(), meta.schema());
        let batches = reader.map(|b| {
            let batch = b.map_err(|e| e.to_string())?;
            crate::connect::with_schema(batch, &annotated)
        });
        return read_shaped(dataset, annotated.clone(), batches, &found);
    }
    let plan = schema::plan(dataset, meta.schema())?;
    let reader = pages::reader(bytes, Arc::clone(meta.metadata()), &plan.read, BATCH_ROWS)
        .map_err(|e| unreadable(&found, &e))?;
    let mut parsed: ParsedFile<S> = ParsedFile::empty(dataset);
    let mut rows = 0u64;
    for batch in reader {
        let batch = batch.map_err(|e| unreadable(&found, &e))?;
        take_batch(
            dataset,
            &plan,
            &batch,
            (rows, &Given::default()),
            &mut parsed,
        )
        .map_err(|e| unreadable(&found, &e))?;
        rows += batch.num_rows() as u64;
    }
    Ok(parsed)
}

/// What is known of a batch's rows before its columns are read: the batch
/// a reject shows (the record as the file holds it, when the batch read is
/// made from it; the batch itself otherwise), and per row why it is
/// rejected whatever its columns hold (none when empty).
#[derive(Debug, Default)]
pub(crate) struct Given<'a> {
    pub shown: Option<&'a RecordBatch>,
    pub problems: Vec<Option<RejectReason>>,
}

impl Given<'_> {
    /// Row `row`'s reason, if it has one.
    fn problem(&self, row: usize) -> Option<RejectReason> {
        self.problems.get(row).cloned().flatten()
    }

    /// `reason` with the given reasons first.
    fn first(&self, reason: &mut [Option<RejectReason>]) {
        for (r, given) in reason.iter_mut().zip(&self.problems) {
            if given.is_some() {
                r.clone_from(given);
            }
        }
    }

    /// The batch a reject shows.
    fn shown<'b>(&'b self, batch: &'b RecordBatch) -> &'b RecordBatch {
        self.shown.unwrap_or(batch)
    }
}

/// `batch` (the planned columns, its first row row `rows + 1` of the file)
/// into `parsed`: whole when the sink takes batches of its types, else a
/// row at a time. An error is a batch unlike the planned schema.
fn take_batch<S: ParquetSink>(
    dataset: &Dataset,
    plan: &Plan,
    batch: &RecordBatch,
    (rows, given): (u64, &Given<'_>),
    parsed: &mut ParsedFile<S>,
) -> Result<(), String> {
    let taken = match parsed.changes.batch_schema() {
        Some(schema) => exact::exact_batch(dataset, plan, batch, (rows, given), &schema)?,
        None => None,
    };
    match taken {
        Some((changes, rejects)) => {
            parsed.changes.push_batch(changes);
            parsed.rejects.extend(rejects);
            Ok(())
        }
        None => rows::read_batch(dataset, plan, batch, (rows, given), parsed),
    }
}

/// Record batches of a columnar file whose records are made flat first
/// (Debezium's shapes, Connect's annotations: [`crate::debezium::shaped`]),
/// `schema` theirs, checked against the dataset before any is read.
pub(crate) fn read_shaped<S: ParquetSink>(
    dataset: &Dataset,
    schema: arrow_schema::SchemaRef,
    batches: impl Iterator<Item = Result<RecordBatch, String>>,
    found: &[String],
) -> Result<ParsedFile<S>, HeaderMismatch> {
    let refused = |e: String| schema::refusal(dataset, found.to_vec(), e);
    let empty = RecordBatch::new_empty(schema);
    let flat = crate::debezium::shaped(dataset, empty).map_err(refused)?;
    let plan = schema::plan(dataset, &flat.batch.schema())?;
    let mut parsed: ParsedFile<S> = ParsedFile::empty(dataset);
    let mut rows = 0u64;
    let debezium = dataset.preset == Some(deltaload_core::spec::Preset::Debezium);
    for batch in batches {
        let batch = batch.map_err(refused)?;
        let flat = crate::debezium::shaped(dataset, batch.clone()).map_err(refused)?;
        let read = (flat.batch.project(&plan.read)).map_err(|e| refused(e.to_string()))?;
        let problems =
            with_values(dataset, &plan, &read, (flat.problems, flat.bad)).map_err(refused)?;
        // A reject shows the record as the file holds it: before it was made
        // flat, or its values before they were converted.
        let plain = match !debezium && problems.iter().any(Option::is_some) {
            true => Some(
                batch
                    .project(&plan.read)
                    .map_err(|e| refused(e.to_string()))?,
            ),
            false => None,
        };
        let given = Given {
            shown: if debezium {
                Some(&batch)
            } else {
                plain.as_ref()
            },
            problems,
        };
        take_batch(dataset, &plan, &read, (rows, &given), &mut parsed).map_err(refused)?;
        rows += batch.num_rows() as u64;
    }
    Ok(parsed)
}

/// Per row of `read` (the planned columns), its event's problem, else the
/// first of its bad values, in declared order, that the dataset reads: a
/// declared column, and for a delete its key or sequence only (as a text
/// file's reader reads them).
fn with_values(
    dataset: &Dataset,
    plan: &Plan,
    read: &RecordBatch,
    (mut problems, bad): (Vec<Option<RejectReason>>, Vec<crate::connect::Bad>),
) -> Result<Vec<Option<RejectReason>>, String> {
    if bad.is_empty() {
        return Ok(problems);
    }
    let deletes = match (&dataset.delete_when, plan.delete) {
        (Some(d), Some(at)) => convert::delete_flags(d, read.column(at).as_ref())?,
        _ => vec![false; read.num_rows()],
    };
    problems.resize(read.num_rows(), None);
    let declared = dataset.declared();
    let mut first: Vec<Option<(usize, RejectReason)>> = vec![None; read.num_rows()];
    for b in bad {
        let Some(i) = declared.iter().position(|c| c.name == b.column) else {
            continue;
        };
        let skipped =
            deletes.get(b.row).copied().unwrap_or(false) && !dataset.is_key_or_sequence(i);
        let slot = first.get_mut(b.row).filter(|_| !skipped);
        if let Some(slot) = slot.filter(|s| s.as_ref().is_none_or(|(at, _)| i < *at)) {
            let reason = RejectReason::Column {
                name: b.column,
                detail: b.detail,
            };
            *slot = Some((i, reason));
        }
    }
    for (p, f) in problems.iter_mut().zip(first) {
        if p.is_none() {
            *p = f.map(|(_, reason)| reason);
        }
    }
    Ok(problems)
}
