//! What a load takes besides its files: the options, and (in test builds)
//! where a fault stops it.

/// Where a test can stop a load dead (compiled only with the `faults` feature).
#[cfg(feature = "faults")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultPoint {
    /// After the files are read, before anything is written.
    AfterRead,
    /// After the rejects are replaced.
    AfterRejected,
    /// After the dataset's table is written.
    AfterOrders,
    /// After the figures are written.
    AfterReconciliation,
    /// After the ledger marks the files loaded.
    AfterLedger,
    /// Between the new tombstones' MERGE and the dataset table's (datasets with deletes).
    AfterTombstones,
    /// After the batch loaded and before its messages are deleted (`serve`).
    BeforeDelete,
    /// After the files are read, the thread held for [`FaultPoint::STALL`]
    /// without yielding, as a long parse holds it (the load then goes on).
    StallAfterRead,
}

#[cfg(feature = "faults")]
impl FaultPoint {
    /// How long [`FaultPoint::StallAfterRead`] holds the thread.
    pub const STALL: std::time::Duration = std::time::Duration::from_secs(8);

    /// The load's step this point is at the end of (`None`: a point of the
    /// upsert or of `serve`).
    pub fn step(self) -> Option<deltaload_flow::Step> {
        use deltaload_flow::Step;
        Some(match self {
            Self::AfterRead => Step::AfterRead,
            Self::AfterRejected => Step::AfterRejected,
            Self::AfterOrders => Step::AfterOrders,
            Self::AfterReconciliation => Step::AfterReconciliation,
            Self::AfterLedger => Step::AfterLedger,
            Self::AfterTombstones | Self::BeforeDelete | Self::StallAfterRead => return None,
        })
    }

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
            "stall-after-read" => Self::StallAfterRead,
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
