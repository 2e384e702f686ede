//! What a load gives: per file, its outcome; per round, what its upsert did.

use deltaload_core::{HeaderMismatch, MergeCounts, Reconciliation};

/// A file that was loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loaded {
    /// The file's reconciliation figures.
    pub figures: Reconciliation,
    /// The dataset table's version after this file's load (no commit is made
    /// when nothing changed; files loaded together share one).
    pub orders_version: Option<u64>,
    /// The table's commit was found from an earlier, interrupted load of the same file.
    pub recovered: bool,
    /// Per expectation of the dataset, in the spec's order: the records
    /// checked and those that broke it.
    pub expectations: Vec<deltaload_core::ExpectationCount>,
}

/// What became of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadOutcome {
    /// Loaded, with its figures.
    Loaded(Loaded),
    /// The ledger already holds this file version as loaded.
    Skipped {
        /// The table's version when it was loaded.
        orders_version: Option<u64>,
    },
    /// The file breaks the contract (or cannot be read within the limits);
    /// nothing but the ledger row was written.
    Refused(HeaderMismatch),
}

/// What the upsert of a round did for one of its files.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Merged {
    /// Rows inserted, updated and deleted for the file.
    pub counts: MergeCounts,
    /// Recovered from the commit of an earlier, interrupted load.
    pub recovered: bool,
}

/// Where a round looks for a commit it made before a crash.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resume {
    /// No file of the round was left `loading`: nothing to look for.
    Fresh,
    /// A file was left `loading`: its commit, if made, is among the table's
    /// versions after this one (`None`: after none, from the first).
    After(Option<u64>),
}

impl Resume {
    /// Also a file left `loading` when the table was at `version`: the
    /// search starts from the earliest.
    pub fn and_after(self, version: Option<u64>) -> Self {
        match self {
            Resume::Fresh => Resume::After(version),
            Resume::After(from) => Resume::After(from.min(version)),
        }
    }
}

/// Logs what became of the file at `location`.
pub fn log_outcome(location: &str, outcome: &LoadOutcome) {
    match outcome {
        LoadOutcome::Loaded(done) => tracing::info!(
            file = %location,
            records = done.figures.records,
            rejected = done.figures.rejected,
            inserted = done.figures.inserted,
            updated = done.figures.updated,
            stale = done.figures.stale,
            deleted = done.figures.deleted,
            retired = done.figures.retired,
            versions_opened = done.figures.opened,
            versions_closed = done.figures.closed,
            orders_version = ?done.orders_version,
            recovered = done.recovered,
            "loaded"
        ),
        LoadOutcome::Skipped { .. } => {
            tracing::info!(file = %location, "already loaded, skipped")
        }
        LoadOutcome::Refused(m) => {
            tracing::warn!(file = %location, reason = %m.problem, "refused")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Resume;

    #[test]
    fn a_round_resumes_after_the_earliest_version_its_files_were_left_at() {
        assert_eq!(Resume::Fresh.and_after(Some(7)), Resume::After(Some(7)));
        let both = Resume::Fresh.and_after(Some(7)).and_after(Some(3));
        assert_eq!(both, Resume::After(Some(3)));
        let none = Resume::Fresh.and_after(Some(7)).and_after(None);
        assert_eq!(
            none,
            Resume::After(None),
            "a file left before the first version"
        );
    }
}
