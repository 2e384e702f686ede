//! How a file of a round is read: whole when that fits in the memory budget,
//! else a piece at a time into sorted runs on disk, else refused up front with
//! the reason (recorded in the ledger), never read into more memory than the
//! budget allows.

use crate::table::error::LakeError;
use crate::write::Engine;
use crate::write::Writer;
use deltaload_core::{pieces, Dataset, HeaderMismatch, Reject};
use deltaload_engine::read::FileChanges;
use deltaload_engine::spill::Spilled;
use deltaload_ingest::rules::{Check, NoRules};
use deltaload_ingest::{DataError, SourceFile, SpillDir};
use std::path::PathBuf;

/// A file of a round, read.
pub(crate) enum Intake {
    /// Read whole.
    Whole(FileChanges),
    /// Read in pieces: its changes in runs on disk, and its rejects.
    Spilled(Spilled, Vec<Reject>),
    /// Refused: its header breaks the contract, or it cannot be loaded within
    /// the memory budget.
    Refused(HeaderMismatch),
}

impl Writer<'_> {
    /// Reads `file` (of `size` bytes) for the dataset.
    pub(crate) fn intake(&mut self, file: &SourceFile, size: u64) -> Result<Intake, LakeError> {
        let dataset = &self.set.dataset.clone();
        if let Some(reason) = refused_unread(dataset, file) {
            let refused = HeaderMismatch::new(dataset, Vec::new(), reason);
            return Ok(Intake::Refused(refused));
        }
        let rules = self.set.rules.clone();
        let check: &dyn Check = match &rules {
            Some(rules) => rules.as_ref(),
            None => &NoRules,
        };
        if self.settings.budget.fits_whole(size) {
            return read_whole(dataset, file, check);
        }
        if let Some(why) = self.not_in_pieces()? {
            return Ok(Intake::Refused(self.too_large(dataset, size, &why)));
        }
        let on_disk;
        let path = match file.on_disk.as_ref().map(|d| &d.path) {
            Some(path) => path,
            None => {
                on_disk = self.spill_held(file)?;
                &on_disk.1
            }
        };
        let table = crate::write::upsert::arrow_schema(&self.set.target, &dataset.name)?;
        Ok(
            match deltaload_engine::spill::spill(
                dataset,
                table,
                path,
                &file.location,
                &self.settings.budget,
                check,
            )? {
                Ok((spilled, rejects)) => {
                    self.tally.spills.files_in_pieces += 1;
                    self.tally.spills.runs_written += spilled.runs_written;
                    self.tally.spills.most_held =
                        self.tally.spills.most_held.max(spilled.most_held);
                    Intake::Spilled(spilled, rejects)
                }
                Err(refused) => Intake::Refused(refused),
            },
        )
    }

    /// The refusal of a file of `size` bytes that neither fits the budget
    /// whole nor can be read in pieces (`why`).
    fn too_large(&self, dataset: &Dataset, size: u64, why: &str) -> HeaderMismatch {
        let budget = self.settings.budget.bytes.unwrap_or(u64::MAX);
        HeaderMismatch::new(
            dataset,
            Vec::new(),
            format!(
                "too large to load within the memory budget: the file is {size} bytes, \
                 reading it whole needs about {} bytes and the budget is {budget}, and \
                 it cannot be read in pieces because {why}",
                size.saturating_mul(deltaload_ingest::budget::WHOLE_FILE_FACTOR)
            ),
        )
        .with_remedy(
            "raise the memory budget (--memory-budget or DELTALOAD_MEMORY_BUDGET; on \
             Lambda, FunctionMemory) or split the file, then load it again",
        )
    }

    /// A file held in memory already (an embedding program's), written to
    /// the spill directory, so that its pieces are read like any large
    /// file's; the directory goes when dropped.
    fn spill_held(&self, file: &SourceFile) -> Result<(SpillDir, PathBuf), LakeError> {
        let dir = SpillDir::new(&self.settings.budget.spill_dir)
            .map_err(DataError::io(&self.settings.budget.spill_dir))?;
        let path = dir.path.join("source");
        std::fs::write(&path, file.bytes.as_slice()).map_err(DataError::io(&path))?;
        Ok((dir, path))
    }

    /// Why a file of the dataset too large to read whole cannot be read in
    /// pieces either; `None` when it can.
    fn not_in_pieces(&self) -> Result<Option<String>, LakeError> {
        let set = &*self.set;
        let dataset = &set.dataset;
        if !pieces::readable_in_pieces(dataset) {
            return Ok(Some(match dataset.format {
                deltaload_core::spec::Format::Parquet => "a Parquet file is read whole".to_string(),
                _ => "only UTF-8 text is read in pieces (the dataset's encoding is not UTF-8)"
                    .to_string(),
            }));
        }
        if dataset.snapshot.is_some() {
            return Ok(Some(
                "each file is a snapshot (mode = \"snapshot\"), compared whole with the table"
                    .to_string(),
            ));
        }
        if dataset.history.is_some() {
            return Ok(Some(
                "the dataset keeps history (history = true), made of every change of the file"
                    .to_string(),
            ));
        }
        if dataset.delete_when.is_some() {
            // A preset's deletes are its own (DMS's Op, Debezium's op).
            let whose = match dataset.preset {
                Some(_) => "its preset's",
                None => "delete_when",
            };
            return Ok(Some(format!(
                "the dataset has deletes ({whose}), whose files are read whole"
            )));
        }
        if !dataset.keep_on_null.is_empty() {
            return Ok(Some(
                "the dataset ignores null updates (ignore_null_updates), whose files are read \
                 whole"
                    .to_string(),
            ));
        }
        if self.settings.engine == Engine::Merge {
            return Ok(Some(
                "delta-rs's MERGE engine reads files whole".to_string(),
            ));
        }
        let unsupported = crate::write::upsert::unsupported(&set.target)
            .map_err(|e| LakeError::delta(&dataset.name, set.target.table_url())(e))?;
        Ok(unsupported.map(|why| format!("{why}, which only delta-rs's MERGE writes")))
    }
}

/// Why `file` is refused before it is read: refused unread by its fetch (too
/// large, no room to spill), or a snapshot whose key gives no order.
fn refused_unread(dataset: &Dataset, file: &SourceFile) -> Option<String> {
    match &file.refused {
        Some(unread) => Some(format!(
            "{} ({} bytes), refused unread",
            unread.reason, unread.size
        )),
        None => crate::snapshot::unordered(dataset, &file.location),
    }
}

/// `file` read whole, from memory or from its file on disk.
fn read_whole(
    dataset: &Dataset,
    file: &SourceFile,
    check: &dyn Check,
) -> Result<Intake, LakeError> {
    let read = |bytes: &[u8]| -> Result<Intake, LakeError> {
        Ok(
            match deltaload_engine::read::read_changes(dataset, &file.location, bytes, check)? {
                Ok(changes) => Intake::Whole(changes),
                Err(refused) => Intake::Refused(refused),
            },
        )
    };
    match file.on_disk.as_ref().map(|d| &d.path) {
        None => read(&file.bytes),
        Some(path) => {
            let bytes = std::fs::read(path).map_err(DataError::io(path))?;
            read(&bytes)
        }
    }
}
