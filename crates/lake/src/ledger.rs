//! The ledger of processed files: one row per file version (location + content),
//! loaded or refused, written last so that it only ever records finished work.

use crate::batches;
use crate::error::LakeError;
use crate::schema::TableName;
use crate::table::{file_version, query, refresh, replace_where};
use crate::table::{first_long, first_string};
use crate::Lake;
use deltaload_core::Reconciliation;

/// What became of a file version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LedgerStatus {
    Loaded,
    Refused,
}

impl LedgerStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Loaded => "loaded",
            Self::Refused => "refused",
        }
    }
}

/// One row of the ledger.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LedgerEntry {
    pub location: String,
    pub content_id: String,
    pub size: u64,
    pub etag: Option<String>,
    pub version_id: Option<String>,
    pub status: LedgerStatus,
    pub reason: Option<String>,
    pub figures: Reconciliation,
    pub orders_version: Option<u64>,
    pub rejected_version: Option<u64>,
    pub loaded_at: i64,
}

/// What the ledger knows of one file version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Seen {
    pub status: LedgerStatus,
    pub reason: Option<String>,
    pub orders_version: Option<u64>,
}

impl Lake {
    /// The ledger's row for this file version, if it has one.
    pub(crate) async fn seen(
        &mut self,
        location: &str,
        content_id: &str,
    ) -> Result<Option<Seen>, LakeError> {
        refresh(&mut self.ledger, TableName::Ledger).await?;
        let sql = format!(
            "SELECT status, reason, orders_version FROM ledger WHERE {}",
            file_version(location, content_id)
        );
        let batches = query(&self.ctx, &self.ledger, TableName::Ledger, &sql).await?;
        let Some(batch) = batches.iter().find(|b| b.num_rows() > 0) else {
            return Ok(None);
        };
        let status = first_string(batch.column(0))?;
        Ok(Some(Seen {
            status: if status.as_deref() == Some("refused") {
                LedgerStatus::Refused
            } else {
                LedgerStatus::Loaded
            },
            reason: first_string(batch.column(1))?,
            orders_version: first_long(batch.column(2))?.map(|v| v as u64),
        }))
    }

    /// The newest `orders` version any ledger row records.
    pub(crate) async fn ledger_orders_floor(&mut self) -> Result<Option<u64>, LakeError> {
        let batches = query(
            &self.ctx,
            &self.ledger,
            TableName::Ledger,
            "SELECT max(orders_version) FROM ledger",
        )
        .await?;
        match batches.iter().find(|b| b.num_rows() > 0) {
            Some(batch) => Ok(first_long(batch.column(0))?.map(|v| v as u64)),
            None => Ok(None),
        }
    }

    /// Records a file version, replacing any earlier row for it (one row per version).
    pub(crate) async fn record(&mut self, entry: &LedgerEntry) -> Result<(), LakeError> {
        let batch = batches::ledger(entry)?;
        let predicate = file_version(&entry.location, &entry.content_id);
        self.ledger = replace_where(&self.ledger, TableName::Ledger, batch, predicate).await?;
        Ok(())
    }
}
