//! The Delta Lake adapter of deltaload: it owns every Arrow and Delta call.
//!
//! A [`Lake`] is a root (a local directory or an object-store URI) holding,
//! per dataset of its spec, two Delta tables, and two shared ones; all are
//! created on first use:
//!
//! | table | one row per | written with |
//! |---|---|---|
//! | `<dataset>` (e.g. `orders`) | key (its newest change) | MERGE, update only when newer |
//! | `rejected_<dataset>` | record that did not parse | replace_where on the source file |
//! | `ledger` | file version (location + content) | replace_where on that key |
//! | `reconciliation` | load of a file version | replace_where on that key |
//!
//! [`Lake::load_into`] loads [`SourceFile`]s into one dataset with one commit
//! per table per batch ([`Lake::load`] one file into the lake's only dataset);
//! the CLI and the event handlers call it the same way, whatever the files came from.

#![warn(missing_docs)]

mod arrow_rows;
pub mod audit;
pub mod budget;
mod changes;
pub mod error;
mod evolve;
mod exact_stats;
mod expand;
mod history;
mod intake;
mod keys;
mod ledger;
mod load;
pub mod location;
pub mod maintain;
mod merge;
mod merge_source;
mod outcome;
mod parsed;
mod predicates;
mod recovery;
mod replace;
mod retry;
mod round;
mod schema;
mod settle;
mod show;
mod snapshot;
mod spill;
mod table;
mod tombstones;
mod upsert;
mod values;
mod writes;

pub use audit::{DuplicateKey, LakeStatus, OrphanRejects, RecordedVersion};
pub use budget::MemoryBudget;
pub use deltaload_flow::{LedgerRow, LedgerStatus, LoadOutcome, Loaded};
pub use error::LakeError;
pub use expand::{expand_gzip, ExpandError, Expanded};
pub use location::{lake_url, local_source, LakeRoot};
pub use maintain::{MaintainOptions, Maintained};
#[cfg(feature = "faults")]
pub use outcome::FaultPoint;
pub use outcome::{LoadOptions, OnDisk, SourceFile, Unread, UNREAD};
pub use parsed::{read_changes, FileChanges};
pub use schema::{arrow_type, quoted, TableName, ORDERS_FILE_BYTES};
pub use show::{
    show, table_rows, table_version, ShowFormat, ShowOptions, Shown, DEFAULT_SHOW_LIMIT,
};
pub use upsert::Engine;
pub use upsert::REWRITE_GROUP_BYTES;

use deltalake::datafusion::prelude::SessionContext;
use deltalake::DeltaTable;
use deltaload_core::{Dataset, Spec};
use std::sync::Arc;

/// What loads did to stay within the memory budget.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Spills {
    /// Files too large to read whole, read in pieces into sorted runs.
    pub files_in_pieces: u64,
    /// Sorted runs written to the spill directory.
    pub runs_written: u64,
    /// The most bytes of parsed changes (measured Arrow arrays) a file read
    /// in pieces held in memory at once, before writing them to a run.
    pub most_held: u64,
    /// Slices of keys upserted one at a time (a file read in pieces, or a
    /// rewrite that would not fit at once).
    pub slices: u64,
}

/// The tables of a lake, opened (and created when missing) at `root`.
pub struct Lake {
    root: LakeRoot,
    ctx: SessionContext,
    /// The spec it was opened with (its datasets are `sets`').
    spec: Spec,
    /// Per dataset of the spec, in its order.
    sets: Vec<DatasetTables>,
    ledger: DeltaTable,
    reconciliation: DeltaTable,
    /// Load rounds run again after a commit conflict, since the lake was opened.
    commit_retries: u64,
    /// What went through the spill directory, since the lake was opened.
    spills: Spills,
    /// What the MERGEs into the datasets' tables read and wrote, since the lake was opened.
    orders_files: OrdersFiles,
    /// The engine writing the datasets' tables.
    engine: Engine,
    /// The memory a load may use, and where it spills.
    budget: MemoryBudget,
    /// Whether delta-rs's MERGE wrote since the keys were last checked for
    /// doubles (the keyed upsert checks them before it commits).
    merged_unchecked: bool,
    /// The version of the commit of the dataset table naming the files of
    /// the round being loaded (made, or found by recovery), if any: the
    /// `orders_version` the round records, rather than the version the
    /// table reached (another writer's, read when the load settled).
    round_commit: Option<u64>,
    /// Writes into datasets' tables by the keyed upsert and by delta-rs's
    /// MERGE, since the lake was opened.
    writes: EngineWrites,
    /// The Parquet bytes of rewritten files a copy-on-write upsert reads at
    /// once (fewer when the memory budget asks it).
    rewrite_group_bytes: u64,
    /// A snapshot's high-water marks, for the next keyed commit of its
    /// dataset's table to set ([`snapshot`]).
    snapshot_mark: Option<String>,
}

/// A dataset and its two tables.
pub(crate) struct DatasetTables {
    pub dataset: Arc<Dataset>,
    pub target: DeltaTable,
    pub rejected: DeltaTable,
    /// The remembered deletes, for datasets that keep them.
    pub tombstones: Option<DeltaTable>,
    /// The versions and the changes they were made of, for datasets that
    /// keep history.
    pub history: Option<history::HistoryTables>,
}

/// Writes into datasets' tables by each engine.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EngineWrites {
    /// By the keyed upsert.
    pub keyed: u64,
    /// By delta-rs's MERGE (chosen, or for a table the keyed upsert leaves to it).
    pub merge: u64,
    /// Groups of files a copy-on-write keyed upsert read, rewrote and wrote
    /// one after another (a write with inserts alone counts one).
    pub groups: u64,
    /// Changes replayed row by row against their keys' rows and tombstones
    /// before a write: every change of a round of several files; of one
    /// file with deletes, its deletes and the changes of keys with a tombstone.
    pub replayed: u64,
    /// Deletes of keys the table does not hold, left out of a MERGE that
    /// writes the change data feed with no sequence (see `merge_source.rs`).
    pub unknown_deletes_left_out: u64,
}

/// The data files MERGEs into the datasets' tables scanned, skipped by their
/// statistics, rewrote (removed) and added, summed since the lake was opened.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OrdersFiles {
    /// Files whose statistics could hold a changed key (read).
    pub scanned: u64,
    /// Files skipped by their statistics.
    pub skipped: u64,
    /// Files rewritten (removed).
    pub rewritten: u64,
    /// Files added.
    pub added: u64,
    /// Files read a second time, for their tie-break columns: a change met
    /// a row of its own sequence there (keyed upsert, read whole).
    pub reread: u64,
}

impl Lake {
    /// Opens the lake of the built-in `orders` dataset at `root`, creating any missing table.
    pub async fn open(root: &LakeRoot) -> Result<Self, LakeError> {
        Self::open_spec(root, &Spec::builtin()).await
    }

    /// Opens the lake of `spec`'s datasets at `root`, creating any missing
    /// table, adding the columns the spec added, and refusing a table whose
    /// definition the spec changed otherwise. A storage error that may pass
    /// (an S3 response cut off, a 5xx the store gave up on) opens it again,
    /// with backoff, up to [`deltaload_flow::retry::ATTEMPTS`] times in all.
    pub async fn open_spec(root: &LakeRoot, spec: &Spec) -> Result<Self, LakeError> {
        let mut attempt = 1;
        loop {
            match Self::open_spec_once(root, spec).await {
                Err(e) if attempt < retry::ATTEMPTS && retry::is_transient_storage(&e) => {
                    tracing::warn!(lake = %root, attempt, error = %e, "opening the lake again");
                    tokio::time::sleep(retry::backoff(attempt)).await;
                    attempt += 1;
                }
                opened => return opened,
            }
        }
    }

    async fn open_spec_once(root: &LakeRoot, spec: &Spec) -> Result<Self, LakeError> {
        // The tables are opened at once: on S3 each is a few round trips,
        // and a Lambda's cold start waits for all of them. Each opening runs
        // to its end before an error is returned: one still replaying its
        // log when the process exits panics in the Delta kernel's executor.
        let sets = futures::future::join_all(spec.datasets.iter().map(|d| async move {
            let (target, rejected) = (TableName::Target(d.clone()), TableName::Rejected(d.clone()));
            // Both at once; the table's own error first (a changed key also
            // renames the rejects' key column).
            let tombstones = TableName::Tombstones(d.clone());
            let (target, rejected, tombstones) = futures::join!(
                table::open_or_create(root, &target),
                table::open_or_create(root, &rejected),
                async {
                    match d.keeps_tombstones() {
                        true => table::open_or_create(root, &tombstones).await.map(Some),
                        false => Ok(None),
                    }
                },
            );
            let (target, rejected, tombstones) = (target?, rejected?, tombstones?);
            snapshot::check_marks(&target, d)?;
            let history = match d.history {
                Some(_) => Some(history::HistoryTables::open(root, d).await?),
                None => None,
            };
            Ok::<_, LakeError>(DatasetTables {
                dataset: d.clone(),
                target,
                rejected,
                tombstones,
                history,
            })
        }));
        let (sets, ledger, reconciliation) = futures::join!(
            sets,
            table::open_or_create(root, &TableName::Ledger),
            table::open_or_create(root, &TableName::Reconciliation),
        );
        let sets = sets.into_iter().collect::<Result<Vec<_>, _>>()?;
        let (ledger, reconciliation) = (ledger?, reconciliation?);
        Ok(Self {
            root: root.clone(),
            ctx: deltalake::delta_datafusion::create_session().into_inner(),
            spec: spec.clone(),
            sets,
            ledger,
            reconciliation,
            commit_retries: 0,
            spills: Spills::default(),
            orders_files: OrdersFiles::default(),
            engine: Engine::default(),
            budget: MemoryBudget::default(),
            merged_unchecked: false,
            round_commit: None,
            writes: EngineWrites::default(),
            rewrite_group_bytes: upsert::REWRITE_GROUP_BYTES,
            snapshot_mark: None,
        })
    }

    /// The lake's root.
    pub fn root(&self) -> &LakeRoot {
        &self.root
    }

    /// The spec the lake was opened with: its datasets, and those of the
    /// spec file it leaves alone, which still route their objects.
    pub fn spec(&self) -> &Spec {
        &self.spec
    }

    /// The datasets the lake was opened with.
    pub fn datasets(&self) -> Vec<Arc<Dataset>> {
        self.sets.iter().map(|s| s.dataset.clone()).collect()
    }

    /// Load rounds run again after a commit conflict with another writer, since
    /// the lake was opened.
    pub fn commit_retries(&self) -> u64 {
        self.commit_retries
    }

    /// What the loads read in pieces and upserted by slices within the
    /// memory budget, since the lake was opened.
    pub fn spills(&self) -> Spills {
        self.spills
    }

    /// The data files the MERGEs scanned, skipped, rewrote and added since
    /// the lake was opened.
    pub fn orders_files(&self) -> OrdersFiles {
        self.orders_files
    }

    /// Writes into datasets' tables by each engine since the lake was opened.
    pub fn writes_by_engine(&self) -> EngineWrites {
        self.writes
    }

    /// Sets the Parquet bytes of the table's files a copy-on-write upsert
    /// reads and rewrites at once (by default [`REWRITE_GROUP_BYTES`]; the
    /// memory budget may ask for fewer): less holds less memory, and the
    /// new files are the same.
    pub fn set_rewrite_group_bytes(&mut self, bytes: u64) {
        self.rewrite_group_bytes = bytes.max(1);
    }

    /// The current version of the first dataset's table (`orders` without a spec).
    pub fn orders_version(&self) -> Option<u64> {
        self.sets.first().and_then(|s| s.target.version())
    }

    /// The index of the dataset called `name`.
    pub(crate) fn set_index(&self, name: &str) -> Result<usize, LakeError> {
        self.sets
            .iter()
            .position(|s| s.dataset.name == name)
            .ok_or_else(|| LakeError::UnknownDataset {
                name: name.to_string(),
                known: self.dataset_names(),
            })
    }

    /// The names of the lake's datasets, in the spec's order.
    pub(crate) fn dataset_names(&self) -> Vec<String> {
        self.sets.iter().map(|s| s.dataset.name.clone()).collect()
    }
}

/// A pseudo-random number below `n`: a fixed sequence per `state` (tests).
#[cfg(test)]
pub(crate) fn test_random(state: &mut u64, n: u64) -> u64 {
    *state = state
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (*state >> 33) % n
}

/// A lake in a new temporary directory holding the datasets of spec `text`
/// (tests); the directory goes when the first value is dropped.
#[cfg(test)]
pub(crate) async fn test_lake(text: &str) -> (tempfile::TempDir, Lake) {
    let spec = Spec::parse(text, "test.toml").expect("a valid spec");
    let dir = tempfile::tempdir().expect("a temporary directory");
    let root = lake_url(dir.path().to_str().expect("a UTF-8 path")).expect("a lake URL");
    let lake = Lake::open_spec(&root, &spec).await.expect("the lake opens");
    (dir, lake)
}
