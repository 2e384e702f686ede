//! The ledger's rows: one per file version (location + content). A load
//! marks its files `loading` before its first write and `loaded` after its
//! last, so `loaded` only ever records finished work and an interrupted load
//! leaves the place where its rerun looks for what was already committed.

use deltaload_core::Reconciliation;

/// A file version's key in the ledger: where it lies and what it holds (its
/// content id: the SHA-256 of its bytes, or `unread:...` for one refused unread).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FileKey {
    /// The file's location: an absolute path or `s3://bucket/key`.
    pub location: String,
    /// Its content id.
    pub content_id: String,
}

/// What became of a file version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LedgerStatus {
    /// Started and not finished (yet, or the process died): the row's
    /// `orders_version` is the dataset table's version before the load began,
    /// where a rerun looks for the load's commit.
    Loading,
    /// Every table holds the file's effect.
    Loaded,
    /// Refused, with the reason; nothing else written.
    Refused,
}

/// A ledger row whose status is none deltaload writes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "ledger row of {location} (content {content_id}) has status {}, which is none of \
     loading, loaded or refused: the row is damaged or was written by another tool, and \
     the file's state is unknown; delete the row from the ledger table (predicate \
     location = '{location}' AND content_id = '{content_id}', e.g. with deltalake's \
     DeltaTable.delete) and load the file again, which changes orders only where its \
     changes are newer",
    status.as_deref().map_or("missing".to_string(), |s| format!("{s:?}"))
)]
pub struct UnknownStatus {
    /// The row's location.
    pub location: String,
    /// Its content id.
    pub content_id: String,
    /// The status found (`None`: missing).
    pub status: Option<String>,
}

impl LedgerStatus {
    /// The status as the ledger writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Loading => "loading",
            Self::Loaded => "loaded",
            Self::Refused => "refused",
        }
    }

    /// Reads the `status` of the ledger row of `location` and `content_id`. A
    /// missing or unknown status is an error, never a default: read as `loaded`,
    /// a damaged row or one written by another tool would skip its file forever.
    pub fn parse(
        text: Option<&str>,
        location: &str,
        content_id: &str,
    ) -> Result<Self, UnknownStatus> {
        match text {
            Some("loading") => Ok(Self::Loading),
            Some("loaded") => Ok(Self::Loaded),
            Some("refused") => Ok(Self::Refused),
            other => Err(UnknownStatus {
                location: location.to_string(),
                content_id: content_id.to_string(),
                status: other.map(str::to_string),
            }),
        }
    }
}

/// A row of the ledger, as a load writes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LedgerRow {
    /// The dataset the file loads into.
    pub dataset: String,
    /// The file's location: an absolute path or `s3://bucket/key`.
    pub location: String,
    /// Its content id (see [`FileKey`]).
    pub content_id: String,
    /// Its size in bytes.
    pub size: u64,
    /// The object's ETag, when it has one.
    pub etag: Option<String>,
    /// The object's version id, when it has one.
    pub version_id: Option<String>,
    /// What became of it.
    pub status: LedgerStatus,
    /// Why it was refused.
    pub reason: Option<String>,
    /// Its reconciliation figures.
    pub figures: Reconciliation,
    /// The dataset table's version after the load (before it, for `loading`).
    pub orders_version: Option<u64>,
    /// The rejected table's version after the load.
    pub rejected_version: Option<u64>,
    /// When the row was written, in microseconds since the epoch (UTC).
    pub loaded_at: i64,
}

impl LedgerRow {
    /// The row's key.
    pub fn key(&self) -> FileKey {
        FileKey {
            location: self.location.clone(),
            content_id: self.content_id.clone(),
        }
    }
}

/// The `reason` of a `loading` row written by a load with `--force`: a
/// load that resumes it counts what a forced load counts.
pub const FORCED: &str = "loading again on purpose (--force)";

impl Recorded {
    /// Whether the row is a `loading` one a load with `--force` left.
    pub fn forced(&self) -> bool {
        self.status == LedgerStatus::Loading && self.reason.as_deref() == Some(FORCED)
    }
}

/// What a load reads back of a file version's ledger row: enough to skip it,
/// or to resume it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    /// What became of it.
    pub status: LedgerStatus,
    /// Why it was refused.
    pub reason: Option<String>,
    /// The dataset table's version the row names.
    pub orders_version: Option<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_status_written_reads_back() {
        for status in [
            LedgerStatus::Loading,
            LedgerStatus::Loaded,
            LedgerStatus::Refused,
        ] {
            let read = LedgerStatus::parse(Some(status.as_str()), "/in/a.csv", "sha256:1");
            assert_eq!(read.ok(), Some(status));
        }
    }

    #[test]
    fn a_missing_or_unknown_status_is_an_error_naming_the_row() {
        for text in [None, Some(""), Some("LOADED"), Some("done")] {
            let err = LedgerStatus::parse(text, "/in/a.csv", "sha256:1")
                .expect_err("an unknown status must not read as a known one");
            let message = err.to_string();
            assert!(message.contains("/in/a.csv"), "{message}");
            assert!(message.contains("sha256:1"), "{message}");
            assert!(message.contains("delete the row"), "{message}");
        }
    }
}
