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

mod history;
mod load;
mod ops;
mod snapshot;
mod table;
mod write;

pub use deltaload_engine::catalog::{self, CatalogColumn, CatalogRefusal, CatalogTable};
pub use deltaload_engine::read::{read_changes, FileChanges};
pub use deltaload_engine::tables::{arrow_type, quoted, TableName};
pub use deltaload_flow::{LedgerRow, LedgerStatus, LoadOutcome, Loaded};
pub use deltaload_ingest::budget;
pub use deltaload_ingest::rules::NoRules;
pub use deltaload_ingest::{expand_gzip, ExpandError, Expanded};
pub use deltaload_ingest::{DataError, MemoryBudget, OnDisk, SourceFile, Unread, UNREAD};
#[cfg(feature = "faults")]
pub use load::options::FaultPoint;
pub use load::options::LoadOptions;
pub use ops::audit::{self, DuplicateKey, LakeStatus, OrphanRejects, RecordedVersion};
pub use ops::catalog::{tables_under, Described};
pub use ops::maintain::auto::{AutoCompact, AutoCompactions};
pub use ops::maintain::{self, MaintainOptions, Maintained};
pub use ops::show::{
    show, table_rows, table_rules, table_version, undeclared_columns, ShowFormat, ShowOptions,
    Shown, DEFAULT_SHOW_LIMIT,
};
pub use table::error::{self, LakeError};
pub use table::expectations::{expectation_problems, expectations_check};
pub use table::location::{self, lake_url, local_source, LakeRoot};
pub use table::ORDERS_FILE_BYTES;
pub use write::REWRITE_GROUP_BYTES;
pub use write::{Engine, EngineWrites, OrdersFiles, Spills};

use deltalake::datafusion::prelude::SessionContext;
use deltaload_core::{Dataset, Spec};
use std::sync::Arc;
use table::retry;
use table::sets::Tables;
use write::{Settings, Tally, Writer};

/// The tables of a lake, opened (and created when missing) at `root`.
pub struct Lake {
    root: LakeRoot,
    ctx: SessionContext,
    /// The spec it was opened with (its datasets are `tables.sets`').
    spec: Spec,
    tables: Tables,
    /// The engine, the memory budget, what a rewrite reads at once.
    settings: Settings,
    /// What the writes did since the lake was opened.
    tally: Tally,
    /// Load rounds run again after a commit conflict, since the lake was opened.
    commit_retries: u64,
    /// When loads compact the tables they wrote.
    auto_compact: AutoCompact,
    /// What auto-compaction did since the lake was opened.
    compactions: AutoCompactions,
    /// Where auto-compaction was last deferred, by table.
    compaction_deferred: ops::maintain::auto::Deferred,
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
        Ok(Self {
            root: root.clone(),
            ctx: deltalake::delta_datafusion::create_session().into_inner(),
            spec: spec.clone(),
            tables: Tables::open(root, spec).await?,
            settings: Settings::default(),
            tally: Tally::default(),
            commit_retries: 0,
            auto_compact: AutoCompact::default(),
            compactions: AutoCompactions::default(),
            compaction_deferred: Default::default(),
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
        self.tables.sets.iter().map(|s| s.dataset.clone()).collect()
    }

    /// Load rounds run again after a commit conflict with another writer, since
    /// the lake was opened.
    pub fn commit_retries(&self) -> u64 {
        self.commit_retries
    }

    /// What the loads read in pieces and upserted by slices within the
    /// memory budget, since the lake was opened.
    pub fn spills(&self) -> Spills {
        self.tally.spills
    }

    /// The data files the MERGEs scanned, skipped, rewrote and added since
    /// the lake was opened.
    pub fn orders_files(&self) -> OrdersFiles {
        self.tally.orders_files
    }

    /// Writes into datasets' tables by each engine since the lake was opened.
    pub fn writes_by_engine(&self) -> EngineWrites {
        self.tally.writes
    }

    /// Sets the Parquet bytes of the table's files a copy-on-write upsert
    /// reads and rewrites at once (by default [`REWRITE_GROUP_BYTES`]; the
    /// memory budget may ask for fewer): less holds less memory, and the
    /// new files are the same.
    pub fn set_rewrite_group_bytes(&mut self, bytes: u64) {
        self.settings.rewrite_group_bytes = bytes.max(1);
    }

    /// Selects the engine of later loads (the keyed upsert by default).
    pub fn set_engine(&mut self, engine: Engine) {
        self.settings.engine = engine;
    }

    /// Sets the memory budget of later loads (none by default).
    pub fn set_memory_budget(&mut self, budget: MemoryBudget) {
        self.settings.budget = budget;
    }

    /// Sets when later loads compact the tables they wrote (by default
    /// [`AutoCompact::default`]; [`AutoCompact::OFF`] never).
    pub fn set_auto_compact(&mut self, auto: AutoCompact) {
        self.auto_compact = auto;
    }

    /// What auto-compaction did since the lake was opened.
    pub fn auto_compactions(&self) -> AutoCompactions {
        self.compactions
    }

    /// Every table of the lake, by its folder name, as a data catalog would
    /// hold it (its schema and partitioning as the table has them now), or
    /// why it cannot, or why the table could not be read.
    pub fn catalog_tables(&mut self) -> Vec<(String, Result<Described, LakeError>)> {
        self.tables.described()
    }

    /// The memory budget of loads.
    pub fn memory_budget(&self) -> &MemoryBudget {
        &self.settings.budget
    }

    /// The current version of the first dataset's table (`orders` without a spec).
    pub fn orders_version(&self) -> Option<u64> {
        self.tables.sets.first().and_then(|s| s.target.version())
    }

    /// The index of the dataset called `name`.
    fn set_index(&self, name: &str) -> Result<usize, LakeError> {
        (self.tables.sets.iter())
            .position(|s| s.dataset.name == name)
            .ok_or_else(|| LakeError::UnknownDataset {
                name: name.to_string(),
                known: self.dataset_names(),
            })
    }

    /// The names of the lake's datasets, in the spec's order.
    fn dataset_names(&self) -> Vec<String> {
        self.tables
            .sets
            .iter()
            .map(|s| s.dataset.name.clone())
            .collect()
    }

    /// The lake borrowed in its two parts for a load into dataset `ds`: the
    /// writer of the dataset's tables, and the tables every dataset shares.
    fn split(&mut self, ds: usize) -> (Writer<'_>, load::Shared<'_>) {
        let writer = Writer {
            set: &mut self.tables.sets[ds],
            ctx: &self.ctx,
            root: &self.root,
            settings: &self.settings,
            tally: &mut self.tally,
        };
        let shared = load::Shared {
            ledger: &mut self.tables.ledger,
            reconciliation: &mut self.tables.reconciliation,
            expectations: self.tables.expectations.as_mut(),
            commit_retries: &mut self.commit_retries,
        };
        (writer, shared)
    }

    /// The writer of dataset `ds`'s tables (tests).
    #[cfg(test)]
    pub(crate) fn writer(&mut self, ds: usize) -> Writer<'_> {
        self.split(ds).0
    }
}

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
        let name = match self.tables.sets.as_slice() {
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
        let (writer, shared) = self.split(ds);
        let outcomes = load::load_into(writer, shared, files, opts).await?;
        let names = TableName::all(&[self.tables.sets[ds].dataset.clone()]);
        let deferred = &mut self.compaction_deferred;
        let done = (&mut self.compactions, deferred);
        let auto = self.auto_compact;
        ops::maintain::auto::after_load(&mut self.tables, &names, auto, done).await;
        Ok(outcomes)
    }
}

impl Lake {
    /// What the operator's commands work on.
    fn ops(&mut self) -> ops::Ops<'_> {
        ops::Ops {
            tables: &mut self.tables,
            ctx: &self.ctx,
            spec: &self.spec,
        }
    }

    /// Maintains the lake's tables in turn: compaction, checkpoints, vacuum
    /// and the tombstones' expiry, as `opts` asks ([`maintain`]).
    pub async fn maintain(&mut self, opts: MaintainOptions) -> Result<Vec<Maintained>, LakeError> {
        self.ops().maintain(opts).await
    }

    /// The ledger's rows for locations starting with `prefix`, by location.
    pub async fn ledger_files(
        &mut self,
        prefix: &str,
    ) -> Result<std::collections::HashMap<String, Vec<RecordedVersion>>, LakeError> {
        self.ops().ledger_files(prefix).await
    }

    /// File versions under `prefix` whose reconciliation row does not balance
    /// (checked again from its figures, not from its `balanced` column).
    pub async fn unbalanced_files(&mut self, prefix: &str) -> Result<Vec<String>, LakeError> {
        self.ops().unbalanced_files(prefix).await
    }

    /// Keys found more than once in each dataset's table, with how often
    /// (at most `limit` per table).
    pub async fn duplicate_keys(&mut self, limit: usize) -> Result<Vec<DuplicateKey>, LakeError> {
        self.ops().duplicate_keys(limit).await
    }

    /// Rejected rows whose file version the ledger does not hold as loaded.
    pub async fn orphan_rejects(&mut self) -> Result<Vec<OrphanRejects>, LakeError> {
        self.ops().orphan_rejects().await
    }

    /// Files per day and status, table sizes and versions, the last load, the
    /// oldest refused file and the loads that did not finish (of the
    /// datasets of the lake's spec, when it was narrowed to some).
    pub async fn status(&mut self) -> Result<LakeStatus, LakeError> {
        self.ops().status().await
    }
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
