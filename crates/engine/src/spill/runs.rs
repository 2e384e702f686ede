//! The sorted runs of a file read in pieces: the pieces' changes held in
//! Arrow until the bytes they take (measured, `get_array_memory_size`)
//! reach the budget's share for them, then cut to the newest change per
//! key, laid out as the table's rows and written to a run.

use super::{run_batch_rows, write_run};
use crate::aligned::align;
use crate::changes::Changes;
use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use deltaload_core::Dataset;
use deltaload_ingest::DataError;
use deltaload_ingest::SpillDir;
use std::path::PathBuf;
use std::sync::Arc;

/// Where the pieces' changes go until they make a run.
pub(super) struct RunWriter<'a> {
    pub dataset: &'a Arc<Dataset>,
    /// The table's schema, which the runs' rows take.
    pub table: SchemaRef,
    pub location: &'a str,
    pub dir: &'a SpillDir,
    /// The bytes of changes held before a run is written.
    pub share: u64,
    held: Vec<RecordBatch>,
    held_bytes: u64,
    /// The runs written, in file order.
    pub runs: Vec<PathBuf>,
    /// The runs' schema, once one is written.
    pub schema: Option<SchemaRef>,
    /// Rows written to the runs, and their bytes in memory.
    pub written: (u64, u64),
    /// The most bytes of changes held at once.
    pub most_held: u64,
}

impl<'a> RunWriter<'a> {
    pub fn new(
        dataset: &'a Arc<Dataset>,
        table: SchemaRef,
        (location, dir): (&'a str, &'a SpillDir),
        share: u64,
    ) -> Self {
        Self {
            dataset,
            table,
            location,
            dir,
            share,
            held: Vec::new(),
            held_bytes: 0,
            runs: Vec::new(),
            schema: None,
            written: (0, 0),
            most_held: 0,
        }
    }

    /// Holds a piece's changes; writes a run once they reach the share.
    pub fn add(&mut self, batches: Vec<RecordBatch>) -> Result<(), DataError> {
        for batch in batches.into_iter().filter(|b| b.num_rows() > 0) {
            self.held_bytes += batch.get_array_memory_size() as u64;
            self.held.push(batch);
        }
        self.most_held = self.most_held.max(self.held_bytes);
        match self.held_bytes >= self.share {
            true => self.flush(),
            false => Ok(()),
        }
    }

    /// Writes what is held as a run: the newest change of each key, sorted.
    pub fn flush(&mut self) -> Result<(), DataError> {
        if self.held.is_empty() {
            return Ok(());
        }
        let label = self.dataset.name.as_str();
        let newest = crate::read::newest_of(self.dataset, &std::mem::take(&mut self.held))?;
        self.held_bytes = 0;
        let changes = Changes::of_file(newest, self.location);
        let aligned = align(self.table.clone(), self.dataset, &changes, 0, label)?;
        let run = self.dir.path.join(format!("run-{}.arrow", self.runs.len()));
        let (rows, bytes) = (
            aligned.changes.num_rows() as u64,
            aligned.changes.get_array_memory_size() as u64,
        );
        let batch_rows = run_batch_rows(self.share, bytes / rows.max(1));
        write_run(&run, &aligned.changes, batch_rows).map_err(|source| DataError::Spill {
            table: label.to_string(),
            path: run.display().to_string(),
            source,
        })?;
        self.schema = Some(aligned.changes.schema());
        self.written.0 += aligned.changes.num_rows() as u64;
        self.written.1 += aligned.changes.get_array_memory_size() as u64;
        self.runs.push(run);
        Ok(())
    }

    /// The runs' schema: the table's rows with the delete flag, also when
    /// no change was read.
    pub fn schema(&self) -> Result<SchemaRef, DataError> {
        if let Some(schema) = &self.schema {
            return Ok(schema.clone());
        }
        let none = RecordBatch::new_empty(deltaload_ingest::changes_schema(self.dataset));
        let changes = Changes::of_file(none, self.location);
        Ok(align(
            self.table.clone(),
            self.dataset,
            &changes,
            0,
            &self.dataset.name,
        )?
        .changes
        .schema())
    }
}
