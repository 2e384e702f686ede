//! The files of a load round: each with its identity ([`Candidate`]), and
//! once read, with its changes and rejects ([`Parsed`]).

use crate::ledger::{FileKey, LedgerEntry, LedgerStatus};
use crate::outcome::{LoadOutcome, SourceFile};
use deltaload_core::{ContentId, ParsedFile, Reconciliation, Value};

/// Now, in microseconds since the epoch (the tables' `loaded_at`).
pub(crate) fn now_micros() -> i64 {
    chrono::Utc::now().timestamp_micros()
}

/// A file of a round, with its identity.
pub(crate) struct Candidate<'a> {
    pub dataset: &'a str,
    pub file: &'a SourceFile,
    pub content: ContentId,
    pub key: FileKey,
}

impl Candidate<'_> {
    pub fn entry(&self, status: LedgerStatus, reason: Option<String>) -> LedgerEntry {
        LedgerEntry {
            dataset: self.dataset.to_string(),
            location: self.key.location.clone(),
            content_id: self.key.content_id.clone(),
            size: self.content.size,
            etag: self.file.etag.clone(),
            version_id: self.file.version_id.clone(),
            status,
            reason,
            figures: Reconciliation::default(),
            orders_version: None,
            rejected_version: None,
            loaded_at: now_micros(),
        }
    }
}

/// A file of a round that parsed: its rejects and its newest change per key.
pub(crate) struct Parsed<'a> {
    pub slot: usize,
    pub candidate: &'a Candidate<'a>,
    pub file: ParsedFile,
    pub loaded: u64,
    /// The newest change of each key: indexes into `file.changes`, by key.
    pub newest: Vec<usize>,
    /// The changes, when the file was read in pieces (`file.changes` is then empty).
    pub spilled: Option<crate::spill::Spilled>,
}

impl Parsed<'_> {
    /// Distinct keys among the changes (of a spilled file: once merged).
    pub fn distinct(&self) -> u64 {
        match &self.spilled {
            None => self.newest.len() as u64,
            Some(s) => s.distinct.get().copied().unwrap_or(0),
        }
    }

    /// The newest change of each key, by key.
    pub fn rows(&self) -> impl Iterator<Item = &[Value]> {
        self.newest.iter().map(|&i| self.file.changes.row(i))
    }
}

pub(crate) fn log_outcome(location: &str, outcome: &LoadOutcome) {
    match outcome {
        LoadOutcome::Loaded(done) => tracing::info!(
            file = %location,
            records = done.figures.records,
            rejected = done.figures.rejected,
            inserted = done.figures.inserted,
            updated = done.figures.updated,
            stale = done.figures.stale,
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

/// Where a round looks for a commit it made before a crash.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Resume {
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
