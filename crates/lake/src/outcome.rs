//! What a load takes and gives: the files, the options, the outcomes.

use deltaload_core::{HeaderMismatch, Reconciliation};

/// A file to load, wherever it came from.
#[derive(Debug, Clone)]
pub struct SourceFile {
    /// Canonical location: an absolute path, or `s3://bucket/key`.
    pub location: String,
    /// The whole content.
    pub bytes: Vec<u8>,
    /// The object's ETag, when the store has one.
    pub etag: Option<String>,
    /// The object's version id, when the store has one.
    pub version_id: Option<String>,
}

/// A file that was loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loaded {
    pub figures: Reconciliation,
    /// The `orders` version after this file's load (no commit is made when nothing
    /// changed; files loaded together share one).
    pub orders_version: Option<u64>,
    /// The orders commit was found from an earlier, interrupted load of the same file.
    pub recovered: bool,
}

/// What became of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadOutcome {
    Loaded(Loaded),
    /// The ledger already holds this file version as loaded.
    Skipped {
        orders_version: Option<u64>,
    },
    /// The header breaks the contract; nothing but the ledger row was written.
    Refused(HeaderMismatch),
}

/// Where a test can stop a load dead (compiled only with the `faults` feature).
#[cfg(feature = "faults")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultPoint {
    AfterRead,
    AfterRejected,
    AfterOrders,
    AfterReconciliation,
    AfterLedger,
    /// Between the new tombstones' MERGE and the dataset table's (datasets with deletes).
    AfterTombstones,
    /// After the batch loaded and before its messages are deleted (`serve`).
    BeforeDelete,
}

#[cfg(feature = "faults")]
impl FaultPoint {
    /// Parses the names used by `DELTALOAD_FAULT`.
    pub fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "after-read" => Self::AfterRead,
            "after-rejected" => Self::AfterRejected,
            "after-orders" => Self::AfterOrders,
            "after-reconciliation" => Self::AfterReconciliation,
            "after-ledger" => Self::AfterLedger,
            "after-tombstones" => Self::AfterTombstones,
            "before-delete" => Self::BeforeDelete,
            _ => return None,
        })
    }
}

/// Options of a load.
#[derive(Debug, Clone, Copy, Default)]
pub struct LoadOptions {
    /// Reprocess files the ledger has seen.
    pub force: bool,
    /// Abort the process at this point (tests only).
    #[cfg(feature = "faults")]
    pub fault: Option<FaultPoint>,
}
