//! The ports a load runs over: the object source, which names and reads the
//! files, and the tables, which hold the ledger, the rejects, the dataset's
//! rows and the figures. The Delta adapter implements both; the tests of this
//! crate implement them in memory.
//!
//! The traits are used through generics only (never `dyn`), so the futures of
//! their `async fn`s keep the auto traits (`Send`) of each implementation.
#![allow(async_fn_in_trait)]

use crate::ledger::{FileKey, LedgerRow, Recorded};
use crate::outcome::{Merged, Resume};
use deltaload_core::{ExpectationCount, HeaderMismatch, Reconciliation};
use std::collections::HashMap;
use std::time::Duration;

/// What both ports share: their error, the files they take and what a file
/// read becomes.
pub trait Port {
    /// The adapter's error.
    type Error: std::error::Error + 'static;
    /// A file to load, as the adapter holds it.
    type File;
    /// A file read: its changes and rejects, ready to upsert.
    type Read: ReadFile;
    /// Whether `error` is a lost commit race with another writer: the round
    /// runs again from its start, which is safe (see [`crate::load`]).
    fn is_conflict(error: &Self::Error) -> bool;
}

/// A file read, as the load sees it: its counts.
pub trait ReadFile {
    /// Its key.
    fn key(&self) -> &FileKey;
    /// Records that parsed into changes.
    fn records(&self) -> u64;
    /// Records rejected.
    fn rejected(&self) -> u64;
    /// Distinct keys among the changes (of a file read in pieces, known once
    /// its round's upsert has run).
    fn distinct(&self) -> u64;
    /// Per expectation of the dataset, in the spec's order: the records
    /// checked and those that broke it (none without expectations).
    fn expectations(&self) -> Vec<ExpectationCount> {
        Vec::new()
    }
}

/// A file's identity: its key in the ledger, its size and the store's names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identified {
    /// Its key in the ledger.
    pub key: FileKey,
    /// Its size in bytes.
    pub size: u64,
    /// The object's ETag, when the store has one.
    pub etag: Option<String>,
    /// The object's version id, when the store has one.
    pub version_id: Option<String>,
}

/// A file, read or refused.
#[derive(Debug)]
pub enum Intake<R> {
    /// Read (whole or in pieces).
    Read(R),
    /// Refused: it breaks the contract, or cannot be read within the limits.
    Refused(HeaderMismatch),
}

/// The object source: names the files and reads them.
pub trait Source: Port {
    /// The file's identity (its content hashed where it has no other name).
    fn identify(&self, file: &Self::File) -> Result<Identified, Self::Error>;
    /// Whether files of `bytes` bytes in all are read whole together.
    fn fits_whole(&self, bytes: u64) -> bool;
    /// Reads the file.
    fn read(
        &mut self,
        file: &Self::File,
        id: &Identified,
    ) -> Result<Intake<Self::Read>, Self::Error>;
}

/// A file's figures, for the reconciliation table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileFigures {
    /// The file version.
    pub key: FileKey,
    /// Its figures.
    pub figures: Reconciliation,
    /// Per expectation of the dataset: records checked, and those that broke it.
    pub expectations: Vec<ExpectationCount>,
}

/// The points of a load where a test may stop it dead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// The round's files are read; nothing is written yet.
    AfterRead,
    /// The rejects are replaced.
    AfterRejected,
    /// The dataset's table is written.
    AfterOrders,
    /// The figures are written.
    AfterReconciliation,
    /// The ledger marks the files loaded.
    AfterLedger,
}

impl Step {
    /// The step's name in logs.
    pub fn name(self) -> &'static str {
        match self {
            Step::AfterRead => "after-read",
            Step::AfterRejected => "after-rejected",
            Step::AfterOrders => "after-orders",
            Step::AfterReconciliation => "after-reconciliation",
            Step::AfterLedger => "after-ledger",
        }
    }
}

/// The tables of one dataset, with the shared ledger and reconciliation.
/// Each write replaces what an earlier attempt at the same files wrote, so
/// running it again is safe.
pub trait Tables: Port {
    /// The ledger's rows of these file versions.
    async fn recorded(
        &mut self,
        keys: &[FileKey],
    ) -> Result<HashMap<FileKey, Recorded>, Self::Error>;
    /// Records ledger rows in one commit, replacing each version's earlier
    /// row; writes nothing for none.
    async fn record(&mut self, rows: &[LedgerRow]) -> Result<(), Self::Error>;
    /// Brings the tables to their latest versions (another writer may have
    /// committed); returns the dataset table's version.
    async fn refresh(&mut self) -> Result<Option<u64>, Self::Error>;
    /// Replaces the files' rejects; returns the rejected table's version.
    async fn replace_rejects(
        &mut self,
        files: &[Self::Read],
        loaded_at: i64,
    ) -> Result<Option<u64>, Self::Error>;
    /// Upserts the files' newest changes into the dataset's table in one
    /// commit that names them, except those whose commit an interrupted
    /// load made (searched for where `resume` says); returns per file what
    /// it did, and the table's version after. `forced`: the files are
    /// loaded again on purpose (`--force`, or resuming what such a load
    /// left `loading`), which a history counts against what it holds.
    async fn upsert(
        &mut self,
        files: &[Self::Read],
        resume: (Resume, bool),
        loaded_at: i64,
    ) -> Result<(Vec<Merged>, Option<u64>), Self::Error>;
    /// Replaces the files' figures.
    async fn replace_figures(
        &mut self,
        figures: &[FileFigures],
        orders_version: Option<u64>,
        loaded_at: i64,
    ) -> Result<(), Self::Error>;
    /// The load finished `step` (where a test may stop the process).
    fn reached(&mut self, step: Step);
    /// Waits `wait` before attempt `attempt` of a round that lost a commit race.
    async fn pause(&mut self, attempt: u32, wait: Duration);
}
