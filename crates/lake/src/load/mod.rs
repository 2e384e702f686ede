//! The load of a dataset's files: the lake as the load's ports ([`deltaload_flow::Source`] and
//! [`deltaload_flow::Tables`]): one dataset's tables, the shared ledger and
//! reconciliation, and the files read within the memory budget. The protocol
//! itself (the write order, rounds, retries, recovery) is
//! [`deltaload_flow::load`].

pub(crate) mod intake;
pub(crate) mod ledger;
pub(crate) mod options;
pub(crate) mod recovery;
pub(crate) mod round;

use crate::load::intake::Intake;
#[cfg(feature = "faults")]
use crate::load::options::FaultPoint;
use crate::load::options::LoadOptions;
use crate::table::arrow_rows::{ExpectationRow, ReconciliationRow};
use crate::table::error::LakeError;
use crate::table::refresh;
use crate::write::rejects::{replace_expectations, replace_reconciliation, FileRejects};
use crate::write::Writer;
use deltalake::arrow::record_batch::RecordBatch;
use deltalake::DeltaTable;
use deltaload_engine::parsed::Parsed;
use deltaload_engine::TableName;
use deltaload_flow::{FileFigures, FileKey, Identified, LedgerRow, LoadOutcome, Merged};
use deltaload_flow::{Recorded, Resume, Step};
use deltaload_ingest::SourceFile;
use std::collections::HashMap;
use std::time::Duration;
use tracing::Instrument;

/// The shared tables a dataset's load records in, and the lake's count of
/// rounds run again.
pub(crate) struct Shared<'a> {
    /// `ledger`.
    pub ledger: &'a mut DeltaTable,
    /// `reconciliation`.
    pub reconciliation: &'a mut DeltaTable,
    /// `expectations`, when a dataset of the spec declares any.
    pub expectations: Option<&'a mut DeltaTable>,
    /// Load rounds run again after a commit conflict, since the lake was opened.
    pub commit_retries: &'a mut u64,
}

/// Loads `files` into the dataset `writer` writes, recording them in
/// `shared` (see `Lake::load_into`): one outcome per file, in the order given.
pub(crate) async fn load_into(
    writer: Writer<'_>,
    shared: Shared<'_>,
    files: Vec<SourceFile>,
    opts: LoadOptions,
) -> Result<Vec<LoadOutcome>, LakeError> {
    let dataset = writer.set.dataset.name.clone();
    let bytes: u64 = files.iter().map(SourceFile::size).sum();
    let locations: Vec<String> = files.iter().map(|f| f.location.clone()).collect();
    let span = tracing::info_span!("load", dataset, files = files.len(), bytes);
    let mut port = DatasetPort {
        writer,
        shared,
        opts,
        steps: Steps::default(),
    };
    let outcomes = deltaload_flow::load(&mut port, &dataset, files, opts.force)
        .instrument(span.clone())
        .await
        .map_err(LakeError::from);
    let _entered = span.enter();
    port.steps.log();
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

/// One dataset of a lake, as the load's ports.
struct DatasetPort<'a> {
    writer: Writer<'a>,
    shared: Shared<'a>,
    opts: LoadOptions,
    /// Where this load's time went.
    steps: Steps,
}

/// The milliseconds a load spent in each step, logged at DEBUG when it ends
/// (`load steps`): what shows which step grows as the lake does.
#[derive(Default)]
struct Steps {
    /// Reading and parsing the files.
    read: u128,
    /// The ledger's look-up of the batch's files.
    recorded: u128,
    /// The ledger's rows written.
    record: u128,
    /// Tables read again after a lost race or before a round.
    refresh: u128,
    /// The rejects replaced.
    rejects: u128,
    /// The upsert into the dataset's table.
    upsert: u128,
    /// The reconciliation's rows written.
    figures: u128,
}

impl Steps {
    fn log(&self) {
        tracing::debug!(
            read_ms = self.read,
            ledger_lookup_ms = self.recorded,
            ledger_write_ms = self.record,
            refresh_ms = self.refresh,
            rejects_ms = self.rejects,
            upsert_ms = self.upsert,
            reconciliation_ms = self.figures,
            "load steps"
        );
    }
}

/// Adds the time since `started` to `step`.
fn spent(step: &mut u128, started: std::time::Instant) {
    *step += started.elapsed().as_millis();
}

impl deltaload_flow::Port for DatasetPort<'_> {
    type Error = LakeError;
    type File = SourceFile;
    type Read = Parsed;

    fn is_conflict(error: &LakeError) -> bool {
        crate::table::retry::is_conflict(error)
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
        let d = &self.writer.set.dataset;
        let budget = &self.writer.settings.budget;
        d.snapshot.is_none() && d.history.is_none() && budget.fits_whole(bytes)
    }

    fn read(
        &mut self,
        file: &SourceFile,
        id: &Identified,
    ) -> Result<deltaload_flow::Intake<Parsed>, LakeError> {
        let dataset = self.writer.set.dataset.clone();
        let key = id.key.clone();
        let started = std::time::Instant::now();
        let intake = self.writer.intake(file, id.size);
        spent(&mut self.steps.read, started);
        Ok(deltaload_flow::Intake::Read(match intake? {
            Intake::Whole(file) => Parsed {
                key,
                changes: file.newest,
                rejects: file.rejects,
                loaded: file.loaded,
                spilled: None,
                all: file.all,
                expectations: file.expectations,
            },
            Intake::Spilled(spilled, rejects) => Parsed {
                key,
                changes: RecordBatch::new_empty(deltaload_ingest::changes_schema(&dataset)),
                rejects,
                loaded: spilled.loaded,
                expectations: spilled.expectations.clone(),
                spilled: Some(spilled),
                all: None,
            },
            Intake::Refused(mismatch) => return Ok(deltaload_flow::Intake::Refused(mismatch)),
        }))
    }
}

impl DatasetPort<'_> {
    /// Replaces the files' rows of `expectations` with their figures per
    /// expectation of the dataset (when the lake keeps the table).
    async fn replace_expectations(
        &mut self,
        figures: &[FileFigures],
        loaded_at: i64,
    ) -> Result<(), LakeError> {
        let Some(table) = self.shared.expectations.as_deref_mut() else {
            return Ok(());
        };
        let dataset = self.writer.set.dataset.clone();
        let files: Vec<(&str, &str)> = (figures.iter())
            .map(|f| (f.key.location.as_str(), f.key.content_id.as_str()))
            .collect();
        let rows: Vec<ExpectationRow<'_>> = (figures.iter())
            .flat_map(|f| {
                (dataset.expectations.iter().zip(&f.expectations)).map(|(rule, count)| {
                    ExpectationRow {
                        dataset: &dataset.name,
                        location: &f.key.location,
                        content_id: &f.key.content_id,
                        rule,
                        count: *count,
                    }
                })
            })
            .collect();
        replace_expectations(table, &files, &rows, loaded_at).await
    }
}

impl deltaload_flow::Tables for DatasetPort<'_> {
    async fn recorded(
        &mut self,
        keys: &[FileKey],
    ) -> Result<HashMap<FileKey, Recorded>, LakeError> {
        let ctx = self.writer.ctx;
        let started = std::time::Instant::now();
        let recorded = ledger::recorded(self.shared.ledger, ctx, keys).await;
        spent(&mut self.steps.recorded, started);
        recorded
    }

    async fn record(&mut self, rows: &[LedgerRow]) -> Result<(), LakeError> {
        let started = std::time::Instant::now();
        let recorded = ledger::record(self.shared.ledger, rows).await;
        spent(&mut self.steps.record, started);
        recorded
    }

    async fn refresh(&mut self) -> Result<Option<u64>, LakeError> {
        let started = std::time::Instant::now();
        self.writer.refresh_writes().await?;
        refresh(self.shared.reconciliation, &TableName::Reconciliation).await?;
        // Another process's commits, or every commit of this one is checked
        // against all of them (and may conflict).
        if let Some(expectations) = self.shared.expectations.as_deref_mut() {
            refresh(expectations, &TableName::Expectations).await?;
        }
        spent(&mut self.steps.refresh, started);
        Ok(self.writer.set.target.version())
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
        let started = std::time::Instant::now();
        let replaced = self.writer.replace_rejects(&rejects, loaded_at).await;
        spent(&mut self.steps.rejects, started);
        replaced
    }

    async fn upsert(
        &mut self,
        files: &[Parsed],
        (resume, forced): (Resume, bool),
        loaded_at: i64,
    ) -> Result<(Vec<Merged>, Option<u64>), LakeError> {
        let mut opts = self.opts;
        opts.force = forced;
        let started = std::time::Instant::now();
        let (merged, made) = (self.writer)
            .merge_round(files, resume, loaded_at, opts)
            .await?;
        if made.unchecked {
            let changes: Vec<&RecordBatch> = files.iter().map(|p| &p.changes).collect();
            self.writer.check_unique_keys(&changes).await?;
        }
        spent(&mut self.steps.upsert, started);
        Ok((merged, made.commit.or(self.writer.set.target.version())))
    }

    async fn replace_figures(
        &mut self,
        figures: &[FileFigures],
        orders_version: Option<u64>,
        loaded_at: i64,
    ) -> Result<(), LakeError> {
        let dataset = self.writer.set.dataset.clone();
        let rows: Vec<ReconciliationRow> = figures
            .iter()
            .map(|f| ReconciliationRow {
                dataset: &dataset.name,
                location: &f.key.location,
                content_id: &f.key.content_id,
                figures: f.figures,
            })
            .collect();
        let reconciliation = &mut *self.shared.reconciliation;
        let started = std::time::Instant::now();
        replace_reconciliation(reconciliation, &rows, orders_version, loaded_at).await?;
        self.replace_expectations(figures, loaded_at).await?;
        spent(&mut self.steps.figures, started);
        Ok(())
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
        *self.shared.commit_retries += 1;
        tokio::time::sleep(wait).await;
    }
}
