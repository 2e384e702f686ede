//! The Delta Lake adapter of deltaload: it owns every Arrow and Delta call.
//!
//! A [`Lake`] is a root (a local directory or an object-store URI) holding four
//! Delta tables, created on first use:
//!
//! | table | one row per | written with |
//! |---|---|---|
//! | `orders` | order (its newest change) | MERGE, update only when newer |
//! | `rejected_orders` | record that did not parse | replace_where on the source file |
//! | `ledger` | file version (location + content) | replace_where on that key |
//! | `reconciliation` | load of a file version | replace_where on that key |
//!
//! [`Lake::load_batch`] loads [`SourceFile`]s with one commit per table per batch
//! ([`Lake::load`] one file); the CLI and the event handlers call it the same way,
//! whatever the files came from.

pub mod audit;
mod batches;
pub mod error;
mod ledger;
mod load;
pub mod location;
pub mod maintain;
mod merge;
mod outcome;
mod predicates;
mod retry;
mod schema;
mod show;
mod table;
mod writes;

pub use audit::{LakeStatus, LedgerFile, OrphanRejects};
pub use error::LakeError;
pub use ledger::{LedgerEntry, LedgerStatus};
pub use location::{lake_url, local_source, LakeRoot};
pub use maintain::{MaintainOptions, Maintained};
#[cfg(feature = "faults")]
pub use outcome::FaultPoint;
pub use outcome::{LoadOptions, LoadOutcome, Loaded, SourceFile};
pub use schema::{TableName, ORDERS_FILE_BYTES};
pub use show::{
    show, table_rows, table_version, ShowFormat, ShowOptions, Shown, DEFAULT_SHOW_LIMIT,
};

use deltalake::datafusion::prelude::SessionContext;
use deltalake::DeltaTable;

/// The four tables of a lake, opened (and created when missing) at `root`.
pub struct Lake {
    root: LakeRoot,
    ctx: SessionContext,
    orders: DeltaTable,
    rejected: DeltaTable,
    ledger: DeltaTable,
    reconciliation: DeltaTable,
    /// Load rounds run again after a commit conflict, since the lake was opened.
    commit_retries: u64,
    /// What the MERGEs into `orders` read and wrote, since the lake was opened.
    orders_files: OrdersFiles,
}

/// The `orders` data files MERGEs scanned, skipped by their statistics,
/// rewrote (removed) and added, summed over the MERGEs since the lake was opened.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OrdersFiles {
    pub scanned: u64,
    pub skipped: u64,
    pub rewritten: u64,
    pub added: u64,
}

impl Lake {
    /// Opens the lake at `root`, creating any missing table.
    pub async fn open(root: &LakeRoot) -> Result<Self, LakeError> {
        // The four tables are opened at once: on S3 each is a few round trips,
        // and a Lambda's cold start waits for all of them.
        let (orders, rejected, ledger, reconciliation) = futures::try_join!(
            table::open_or_create(root, TableName::Orders),
            table::open_or_create(root, TableName::RejectedOrders),
            table::open_or_create(root, TableName::Ledger),
            table::open_or_create(root, TableName::Reconciliation),
        )?;
        Ok(Self {
            root: root.clone(),
            ctx: deltalake::delta_datafusion::create_session().into_inner(),
            orders,
            rejected,
            ledger,
            reconciliation,
            commit_retries: 0,
            orders_files: OrdersFiles::default(),
        })
    }

    /// The lake's root.
    pub fn root(&self) -> &LakeRoot {
        &self.root
    }

    /// Load rounds run again after a commit conflict with another writer, since
    /// the lake was opened.
    pub fn commit_retries(&self) -> u64 {
        self.commit_retries
    }

    /// The `orders` files the MERGEs scanned, skipped, rewrote and added since
    /// the lake was opened.
    pub fn orders_files(&self) -> OrdersFiles {
        self.orders_files
    }

    /// The current version of the `orders` table.
    pub fn orders_version(&self) -> Option<u64> {
        self.orders.version()
    }
}
