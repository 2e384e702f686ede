//! The ledger of processed files: one row per file version (location + content).
//! A load marks its files `loading` before its first write and `loaded` after its
//! last, so `loaded` only ever records finished work and an interrupted load
//! leaves the place where its rerun looks for what was already committed.

use crate::arrow_rows;
use crate::error::LakeError;
use crate::schema::TableName;
use crate::table::{file_versions, query, refresh, replace_where, sql_in};
use crate::table::{longs_of, strings_of};
use crate::Lake;
use deltalake::arrow::datatypes::DataType;
use deltaload_core::Reconciliation;
use std::collections::HashMap;

/// What became of a file version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LedgerStatus {
    /// Started and not finished (yet, or the process died): the row's
    /// `orders_version` is the `orders` version before the load began, where a
    /// rerun looks for the load's MERGE commit.
    Loading,
    /// Every table holds the file's effect.
    Loaded,
    /// Refused, with the reason; nothing else written.
    Refused,
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
    pub(crate) fn parse(
        text: Option<&str>,
        location: &str,
        content_id: &str,
    ) -> Result<Self, LakeError> {
        match text {
            Some("loading") => Ok(Self::Loading),
            Some("loaded") => Ok(Self::Loaded),
            Some("refused") => Ok(Self::Refused),
            other => Err(LakeError::LedgerStatus {
                location: location.to_string(),
                content_id: content_id.to_string(),
                status: other.map(str::to_string),
            }),
        }
    }
}

/// One row of the ledger.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LedgerEntry {
    /// The dataset the file loads into.
    pub dataset: String,
    /// The file's location: an absolute path or `s3://bucket/key`.
    pub location: String,
    /// Its content id ([`crate::SourceFile::content_key`]).
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

/// What the ledger knows of one file version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Seen {
    pub status: LedgerStatus,
    pub reason: Option<String>,
    pub orders_version: Option<u64>,
}

/// A file version: its location and content id.
/// A file version's key in the ledger: where it lies and what it holds (its
/// content id: the SHA-256 of its bytes, or `unread:...` for one refused unread).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct FileKey {
    pub location: String,
    pub content_id: String,
}

impl Lake {
    /// The ledger's rows for these file versions, by location and content id.
    pub(crate) async fn seen(
        &mut self,
        keys: &[FileKey],
    ) -> Result<HashMap<FileKey, Seen>, LakeError> {
        refresh(&mut self.ledger, &TableName::Ledger).await?;
        let sql = format!(
            "SELECT location, content_id, status, reason, orders_version FROM ledger WHERE {}",
            sql_in("location", keys.iter().map(|k| k.location.as_str()))
        );
        let batches = query(&self.ctx, &self.ledger, &TableName::Ledger, &sql).await?;
        let mut seen = HashMap::new();
        for batch in &batches {
            let locations = strings_of(batch.column(0))?;
            let contents = strings_of(batch.column(1))?;
            let statuses = strings_of(batch.column(2))?;
            let reasons = strings_of(batch.column(3))?;
            let versions = longs_of(batch.column(4), &DataType::Int64)?;
            let rows = locations.into_iter().zip(contents).zip(statuses);
            for (((location, content), status), (reason, version)) in
                rows.zip(reasons.into_iter().zip(versions))
            {
                let (Some(location), Some(content)) = (location, content) else {
                    continue;
                };
                let key = FileKey {
                    location,
                    content_id: content,
                };
                if !keys.contains(&key) {
                    continue;
                }
                let status =
                    LedgerStatus::parse(status.as_deref(), &key.location, &key.content_id)?;
                seen.insert(
                    key,
                    Seen {
                        status,
                        reason,
                        orders_version: version.map(|v| v as u64),
                    },
                );
            }
        }
        Ok(seen)
    }

    /// Records file versions in one commit, replacing any earlier row for each
    /// (one row per version). Nothing is written for no entries.
    pub(crate) async fn record(&mut self, entries: &[LedgerEntry]) -> Result<(), LakeError> {
        if entries.is_empty() {
            return Ok(());
        }
        let batch = arrow_rows::ledger(entries)?;
        let predicate = file_versions(
            entries
                .iter()
                .map(|e| (e.location.as_str(), e.content_id.as_str())),
        );
        self.ledger =
            replace_where(&self.ledger, &TableName::Ledger, vec![batch], predicate).await?;
        Ok(())
    }
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
