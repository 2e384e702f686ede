//! A file of a load round once read: the newest change of each key in Arrow
//! and its rejects, whole or in spilled runs ([`Parsed`], the lake's
//! [`deltaload_flow::ReadFile`]).

use crate::error::LakeError;
use deltalake::arrow::array::AsArray;
use deltalake::arrow::record_batch::RecordBatch;
use deltaload_core::{Dataset, HeaderMismatch, Reject};
use deltaload_flow::{FileKey, ReadFile};
use deltaload_ingest::IngestError;

/// A file read whole: the newest change of each key, and its rejects.
pub struct FileChanges {
    /// The newest change of each key, sorted by key, of
    /// `deltaload_ingest::changes_schema`.
    pub newest: RecordBatch,
    /// Records that parsed.
    pub loaded: u64,
    /// Of those, the deletes.
    pub deletes: u64,
    /// Records that did not parse.
    pub rejects: Vec<Reject>,
}

/// Reads a change file of `dataset` in its format (CSV, JSON Lines or
/// Parquet) into Arrow: the newest change of each key and the rejects, or
/// why the whole file is refused (the inner `Err`).
pub fn read_changes(
    dataset: &Dataset,
    bytes: &[u8],
) -> Result<Result<FileChanges, HeaderMismatch>, LakeError> {
    let started = std::time::Instant::now();
    let ingested = match ingest(dataset, bytes)? {
        Ok(ingested) => ingested,
        Err(refused) => return Ok(Err(refused)),
    };
    let read_ms = started.elapsed().as_millis() as u64;
    let width = dataset.columns.len();
    let deletes = ingested
        .batches
        .iter()
        .map(|b| b.column(width).as_boolean().true_count() as u64)
        .sum();
    let newest = newest_of(dataset, &ingested.batches)?;
    tracing::debug!(
        read_ms,
        newest_ms = started.elapsed().as_millis() as u64 - read_ms,
        records = ingested.records(),
        distinct = newest.num_rows(),
        peak_mib = crate::budget::peak_mib(),
        "file read into Arrow"
    );
    Ok(Ok(FileChanges {
        newest,
        loaded: ingested.changes(),
        deletes,
        rejects: ingested.rejects,
    }))
}

/// `bytes` read into Arrow, or why the whole file is refused (the inner `Err`).
pub(crate) fn ingest(
    dataset: &Dataset,
    bytes: &[u8],
) -> Result<Result<deltaload_ingest::Ingested, HeaderMismatch>, LakeError> {
    match deltaload_ingest::read_changes(dataset, bytes) {
        Ok(ingested) => Ok(Ok(ingested)),
        Err(IngestError::Refused(refused)) => Ok(Err(refused)),
        Err(e @ IngestError::Defect { .. }) => Err(LakeError::Invariant {
            table: dataset.name.clone(),
            detail: e.to_string(),
        }),
    }
}

/// The newest change of each key among `batches` (changes in file order, of
/// `deltaload_ingest::changes_schema`), sorted by key.
pub(crate) fn newest_of(
    dataset: &Dataset,
    batches: &[RecordBatch],
) -> Result<RecordBatch, LakeError> {
    let label = dataset.name.as_str();
    let schema = deltaload_ingest::changes_schema(dataset);
    let batch = match batches {
        [one] => one.clone(),
        many => deltalake::arrow::compute::concat_batches(&schema, many)
            .map_err(LakeError::arrow(label))?,
    };
    let width = dataset.columns.len();
    let position: Vec<usize> = (0..width).collect();
    let order = deltaload_engine::Order::new(dataset, &schema, &position, Some(width))
        .map_err(LakeError::arrow(label))?;
    let winners =
        deltaload_engine::newest_indices(&order, &batch).map_err(LakeError::arrow(label))?;
    match winners.len() == batch.num_rows() && is_identity(&winners) {
        true => Ok(batch),
        false => deltalake::arrow::compute::take_record_batch(&batch, &winners)
            .map_err(LakeError::arrow(label)),
    }
}

/// Whether `winners` is `0, 1, 2, ...`: the file held each key once, in order.
fn is_identity(winners: &deltalake::arrow::array::UInt32Array) -> bool {
    winners
        .values()
        .iter()
        .enumerate()
        .all(|(i, &w)| i as u32 == w)
}

/// A file of a round that parsed: its rejects and its newest change per key.
pub(crate) struct Parsed {
    pub key: FileKey,
    /// The newest change of each key, sorted by key (empty when the file
    /// was read in pieces).
    pub changes: RecordBatch,
    pub rejects: Vec<Reject>,
    pub loaded: u64,
    /// The changes, when the file was read in pieces.
    pub spilled: Option<crate::spill::Spilled>,
}

impl ReadFile for Parsed {
    fn key(&self) -> &FileKey {
        &self.key
    }

    fn records(&self) -> u64 {
        self.loaded
    }

    fn rejected(&self) -> u64 {
        self.rejects.len() as u64
    }

    /// Distinct keys among the changes (of a spilled file: once merged).
    fn distinct(&self) -> u64 {
        match &self.spilled {
            None => self.changes.num_rows() as u64,
            Some(s) => s.distinct.get().copied().unwrap_or(0),
        }
    }
}
