//! The lake as the load's ports ([`deltaload_flow::Source`] and
//! [`deltaload_flow::Tables`]): one dataset's tables, the shared ledger and
//! reconciliation, and the files read within the memory budget. The protocol
//! itself (the write order, rounds, retries, recovery) is
//! [`deltaload_flow::load`].

use crate::arrow_rows::ReconciliationRow;
use crate::error::LakeError;
use crate::intake::Intake;
#[cfg(feature = "faults")]
use crate::outcome::FaultPoint;
use crate::outcome::{LoadOptions, SourceFile};
use crate::parsed::Parsed;
use crate::writes::FileRejects;
use crate::Lake;
use deltalake::arrow::record_batch::RecordBatch;
use deltaload_flow::{FileFigures, FileKey, Identified, LedgerRow, LoadOutcome, Merged};
use deltaload_flow::{Recorded, Resume, Step};
use std::collections::HashMap;
use std::time::Duration;
use tracing::Instrument;

impl Lake {
    /// Loads one file version into the lake's only dataset; see [`Lake::load_into`].
    pub async fn load(
        &mut self,
        file: &SourceFile,
        opts: LoadOptions,
    ) -> Result<LoadOutcome, LakeError> {
        let mut outcomes = self.load_batch(vec![file.clone()], opts).await?;
        outcomes.pop().ok_or_else(|| LakeError::Invariant {
            table: "ledger".into(),
            detail: format!("the load of {} gave no outcome", file.location),
        })
    }

    /// Loads files into the lake's only dataset; see [`Lake::load_into`].
    pub async fn load_batch(
        &mut self,
        files: Vec<SourceFile>,
        opts: LoadOptions,
    ) -> Result<Vec<LoadOutcome>, LakeError> {
        let name = match self.sets.as_slice() {
            [only] => only.dataset.name.clone(),
            _ => {
                return Err(LakeError::DatasetNeeded {
                    known: self.dataset_names(),
                })
            }
        };
        self.load_into(&name, files, opts).await
    }

    /// Loads files into dataset `dataset` together (see
    /// [`deltaload_flow::load`]): one commit per table for each round, one
    /// outcome per file, in the order given. A file given twice with the same
    /// content is loaded once and reported skipped the second time. On error
    /// nothing is recorded in the ledger for the round that failed, and
    /// running the same files again completes the load. Each file's content
    /// is let go once it is read (unless a copy of the file still holds it).
    pub async fn load_into(
        &mut self,
        dataset: &str,
        files: Vec<SourceFile>,
        opts: LoadOptions,
    ) -> Result<Vec<LoadOutcome>, LakeError> {
        let ds = self.set_index(dataset)?;
        let bytes: u64 = files.iter().map(SourceFile::size).sum();
        let locations: Vec<String> = files.iter().map(|f| f.location.clone()).collect();
        let span = tracing::info_span!("load", dataset, files = files.len(), bytes);
        let mut port = DatasetPort {
            lake: self,
            ds,
            opts,
        };
        let outcomes = deltaload_flow::load(&mut port, dataset, files, opts.force)
            .instrument(span.clone())
            .await
            .map_err(LakeError::from);
        let _entered = span.enter();
        match &outcomes {
            Ok(outcomes) => {
                for (location, outcome) in locations.iter().zip(outcomes) {
                    deltaload_flow::log_outcome(location, outcome);
                }
            }
            Err(e) => tracing::error!(error = %e, "load failed"),
        }
        outcomes
    }
}

/// One dataset of a lake, as the load's ports.
struct DatasetPort<'a> {
    lake: &'a mut Lake,
    ds: usize,
    opts: LoadOptions,
}

impl deltaload_flow::Port for DatasetPort<'_> {
    type Error = LakeError;
    type File = SourceFile;
    type Read = Parsed;

    fn is_conflict(error: &LakeError) -> bool {
        crate::retry::is_conflict(error)
    }
}

impl deltaload_flow::Source for DatasetPort<'_> {
    fn identify(&self, file: &SourceFile) -> Result<Identified, LakeError> {
        let content = file.content_id()?;
        Ok(Identified {
            key: FileKey {
                location: file.location.clone(),
                content_id: file.content_key(&content),
            },
            size: content.size,
            etag: file.etag.clone(),
            version_id: file.version_id.clone(),
        })
    }

    /// A snapshot is a round of its own: each commits its own high-water
    /// mark. So is a file of a dataset that keeps history: its figures are
    /// the versions it opened and closed.
    fn fits_whole(&self, bytes: u64) -> bool {
        let d = &self.lake.sets[self.ds].dataset;
        d.snapshot.is_none() && d.history.is_none() && self.lake.budget.fits_whole(bytes)
    }

    fn read(
        &mut self,
        file: &SourceFile,
        id: &Identified,
    ) -> Result<deltaload_flow::Intake<Parsed>, LakeError> {
        let dataset = self.lake.sets[self.ds].dataset.clone();
        let key = id.key.clone();
        Ok(deltaload_flow::Intake::Read(
            match self.lake.intake(self.ds, file, id.size)? {
                Intake::Whole(file) => Parsed {
                    key,
                    changes: file.newest,
                    rejects: file.rejects,
                    loaded: file.loaded,
                    spilled: None,
                    all: file.all,
                },
                Intake::Spilled(spilled, rejects) => Parsed {
                    key,
                    changes: RecordBatch::new_empty(deltaload_ingest::changes_schema(&dataset)),
                    rejects,
                    loaded: spilled.loaded,
                    spilled: Some(spilled),
                    all: None,
                },
                Intake::Refused(mismatch) => return Ok(deltaload_flow::Intake::Refused(mismatch)),
            },
        ))
    }
}

impl deltaload_flow::Tables for DatasetPort<'_> {
    async fn recorded(
        &mut self,
        keys: &[FileKey],
    ) -> Result<HashMap<FileKey, Recorded>, LakeError> {
        self.lake.recorded(keys).await
    }

    async fn record(&mut self, rows: &[LedgerRow]) -> Result<(), LakeError> {
        self.lake.record(rows).await
    }

    async fn refresh(&mut self) -> Result<Option<u64>, LakeError> {
        self.lake.refresh_writes(self.ds).await?;
        Ok(self.lake.sets[self.ds].target.version())
    }

    async fn replace_rejects(
        &mut self,
        files: &[Parsed],
        loaded_at: i64,
    ) -> Result<Option<u64>, LakeError> {
        let rejects: Vec<FileRejects> = files
            .iter()
            .map(|p| FileRejects {
                location: &p.key.location,
                content_id: &p.key.content_id,
                rejects: &p.rejects,
            })
            .collect();
        self.lake
            .replace_rejects(self.ds, &rejects, loaded_at)
            .await
    }

    async fn upsert(
        &mut self,
        files: &[Parsed],
        (resume, forced): (Resume, bool),
        loaded_at: i64,
    ) -> Result<(Vec<Merged>, Option<u64>), LakeError> {
        let (ds, mut opts) = (self.ds, self.opts);
        opts.force = forced;
        let merged = self
            .lake
            .merge_round(ds, files, resume, loaded_at, opts)
            .await?;
        if std::mem::take(&mut self.lake.merged_unchecked) {
            let changes: Vec<&RecordBatch> = files.iter().map(|p| &p.changes).collect();
            self.lake.check_unique_keys(ds, &changes).await?;
        }
        let version = self.lake.round_commit.take();
        Ok((merged, version.or(self.lake.sets[ds].target.version())))
    }

    async fn replace_figures(
        &mut self,
        figures: &[FileFigures],
        orders_version: Option<u64>,
        loaded_at: i64,
    ) -> Result<(), LakeError> {
        let dataset = self.lake.sets[self.ds].dataset.clone();
        let rows: Vec<ReconciliationRow> = figures
            .iter()
            .map(|f| ReconciliationRow {
                dataset: &dataset.name,
                location: &f.key.location,
                content_id: &f.key.content_id,
                figures: f.figures,
            })
            .collect();
        self.lake
            .replace_reconciliation(&rows, orders_version, loaded_at)
            .await
    }

    /// In test builds with the `faults` feature, aborts the process when a
    /// test asked for it at `step`.
    fn reached(&mut self, step: Step) {
        #[cfg(feature = "faults")]
        match self.opts.fault {
            Some(FaultPoint::StallAfterRead) if step == Step::AfterRead => {
                eprintln!(
                    "fault injected: the thread stalls for {:?}",
                    FaultPoint::STALL
                );
                std::thread::sleep(FaultPoint::STALL);
            }
            Some(fault) if fault.step() == Some(step) => {
                eprintln!("fault injected: {fault:?}");
                std::process::abort();
            }
            _ => {}
        }
        #[cfg(not(feature = "faults"))]
        let _ = step;
    }

    async fn pause(&mut self, _attempt: u32, wait: Duration) {
        self.lake.commit_retries += 1;
        tokio::time::sleep(wait).await;
    }
}
