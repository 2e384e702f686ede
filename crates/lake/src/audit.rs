//! Read-only questions about the lake, for `backfill`, `reconcile` and `status`.

use crate::error::LakeError;
use crate::ledger::LedgerStatus;
use crate::schema::{timestamp, TableName};
use crate::table::{longs_of, query, refresh, sql_string, strings_of};
use crate::Lake;
use deltalake::arrow::datatypes::DataType;
use deltalake::arrow::record_batch::RecordBatch;
use std::collections::{HashMap, HashSet};

/// What the ledger holds of one file version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LedgerFile {
    pub content_id: String,
    pub etag: Option<String>,
    pub status: LedgerStatus,
    pub reason: Option<String>,
    /// Microseconds since the epoch, UTC.
    pub loaded_at: i64,
}

/// Rows of `rejected_orders` for a file version the ledger does not hold as loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrphanRejects {
    pub location: String,
    pub content_id: String,
    pub rows: u64,
}

/// The lake at a glance.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LakeStatus {
    /// (day as `YYYY-MM-DD`, status, files), by day then status.
    pub files_per_day: Vec<(String, String, u64)>,
    /// (table, rows, version), in [`TableName::ALL`] order.
    pub tables: Vec<(&'static str, u64, Option<u64>)>,
    /// Microseconds since the epoch of the newest `loaded` ledger row.
    pub last_load: Option<i64>,
    /// The oldest refused file: (location, reason, refused at).
    pub oldest_refused: Option<(String, Option<String>, i64)>,
    /// Files whose load started and did not finish.
    pub unfinished: Vec<String>,
}

/// The values of a text column across batches.
fn column_text(batches: &[RecordBatch], column: usize) -> Result<Vec<Option<String>>, LakeError> {
    let mut out = Vec::new();
    for batch in batches {
        out.extend(strings_of(batch.column(column))?);
    }
    Ok(out)
}

/// The values of a numeric column across batches, as i64.
fn column_long(
    batches: &[RecordBatch],
    column: usize,
    as_type: &DataType,
) -> Result<Vec<Option<i64>>, LakeError> {
    let mut out = Vec::new();
    for batch in batches {
        out.extend(longs_of(batch.column(column), as_type)?);
    }
    Ok(out)
}

impl Lake {
    async fn ask(&mut self, name: TableName, sql: &str) -> Result<Vec<RecordBatch>, LakeError> {
        let table = match name {
            TableName::Orders => &mut self.orders,
            TableName::RejectedOrders => &mut self.rejected,
            TableName::Ledger => &mut self.ledger,
            TableName::Reconciliation => &mut self.reconciliation,
        };
        refresh(table, name).await?;
        query(&self.ctx, table, name, sql).await
    }

    /// The ledger's rows for locations starting with `prefix`, by location.
    pub async fn ledger_files(
        &mut self,
        prefix: &str,
    ) -> Result<HashMap<String, Vec<LedgerFile>>, LakeError> {
        let sql = format!(
            "SELECT location, content_id, etag, status, reason, loaded_at FROM ledger \
             WHERE starts_with(location, {})",
            sql_string(prefix)
        );
        let found = self.ask(TableName::Ledger, &sql).await?;
        let locations = column_text(&found, 0)?;
        let contents = column_text(&found, 1)?;
        let etags = column_text(&found, 2)?;
        let statuses = column_text(&found, 3)?;
        let reasons = column_text(&found, 4)?;
        let times = column_long(&found, 5, &timestamp())?;
        let mut files: HashMap<String, Vec<LedgerFile>> = HashMap::new();
        let rows = locations.into_iter().zip(contents).zip(etags).zip(statuses);
        for ((((location, content), etag), status), (reason, at)) in
            rows.zip(reasons.into_iter().zip(times))
        {
            let Some(location) = location else { continue };
            let content_id = content.unwrap_or_default();
            let status = LedgerStatus::parse(status.as_deref(), &location, &content_id)?;
            files.entry(location).or_default().push(LedgerFile {
                content_id,
                etag,
                status,
                reason,
                loaded_at: at.unwrap_or_default(),
            });
        }
        Ok(files)
    }

    /// File versions under `prefix` whose reconciliation row does not balance
    /// (checked again from its figures, not from its `balanced` column).
    pub async fn unbalanced_files(&mut self, prefix: &str) -> Result<Vec<String>, LakeError> {
        let sql = format!(
            "SELECT location FROM reconciliation WHERE starts_with(location, {}) AND \
             (NOT balanced OR records <> loaded + rejected \
              OR loaded <> duplicates + inserted + updated + stale) ORDER BY location",
            sql_string(prefix)
        );
        let found = self.ask(TableName::Reconciliation, &sql).await?;
        Ok(column_text(&found, 0)?.into_iter().flatten().collect())
    }

    /// Orders found more than once in `orders`, with how often (at most `limit`).
    pub async fn duplicate_orders(&mut self, limit: usize) -> Result<Vec<(i64, u64)>, LakeError> {
        let sql = format!(
            "SELECT order_id, count(*) FROM orders GROUP BY order_id HAVING count(*) > 1 \
             ORDER BY order_id LIMIT {limit}"
        );
        let found = self.ask(TableName::Orders, &sql).await?;
        let ids = column_long(&found, 0, &DataType::Int64)?;
        let counts = column_long(&found, 1, &DataType::Int64)?;
        Ok(ids
            .into_iter()
            .zip(counts)
            .filter_map(|(id, n)| Some((id?, n? as u64)))
            .collect())
    }

    /// Rejected rows whose file version the ledger does not hold as loaded.
    pub async fn orphan_rejects(&mut self) -> Result<Vec<OrphanRejects>, LakeError> {
        let sql = "SELECT source_file, content_id, count(*) FROM rejected_orders \
                   GROUP BY source_file, content_id ORDER BY source_file";
        let found = self.ask(TableName::RejectedOrders, sql).await?;
        let loaded = self
            .ask(
                TableName::Ledger,
                "SELECT location, content_id FROM ledger WHERE status = 'loaded'",
            )
            .await?;
        let loaded: HashSet<(Option<String>, Option<String>)> = column_text(&loaded, 0)?
            .into_iter()
            .zip(column_text(&loaded, 1)?)
            .collect();
        let locations = column_text(&found, 0)?;
        let contents = column_text(&found, 1)?;
        let counts = column_long(&found, 2, &DataType::Int64)?;
        Ok(locations
            .into_iter()
            .zip(contents)
            .zip(counts)
            .filter(|((l, c), _)| !loaded.contains(&(l.clone(), c.clone())))
            .map(|((l, c), n)| OrphanRejects {
                location: l.unwrap_or_default(),
                content_id: c.unwrap_or_default(),
                rows: n.unwrap_or(0) as u64,
            })
            .collect())
    }

    /// Files per day and status, table sizes and versions, the last load, the
    /// oldest refused file and the loads that did not finish.
    pub async fn status(&mut self) -> Result<LakeStatus, LakeError> {
        let mut status = LakeStatus::default();
        let per_day = self
            .ask(
                TableName::Ledger,
                "SELECT to_char(loaded_at, '%Y-%m-%d') AS day, status, count(*) FROM ledger \
                 GROUP BY 1, 2 ORDER BY 1, 2",
            )
            .await?;
        let days = column_text(&per_day, 0)?;
        let statuses = column_text(&per_day, 1)?;
        let counts = column_long(&per_day, 2, &DataType::Int64)?;
        for ((day, s), n) in days.into_iter().zip(statuses).zip(counts) {
            status.files_per_day.push((
                day.unwrap_or_default(),
                s.unwrap_or_default(),
                n.unwrap_or(0) as u64,
            ));
        }
        for name in TableName::ALL {
            let found = self
                .ask(name, &format!("SELECT count(*) FROM {}", name.as_str()))
                .await?;
            let rows = column_long(&found, 0, &DataType::Int64)?;
            let version = self.version_of(name);
            let rows = rows.first().copied().flatten().unwrap_or(0) as u64;
            status.tables.push((name.as_str(), rows, version));
        }
        let last = self
            .ask(
                TableName::Ledger,
                "SELECT max(loaded_at) FROM ledger WHERE status = 'loaded'",
            )
            .await?;
        status.last_load = column_long(&last, 0, &timestamp())?
            .first()
            .copied()
            .flatten();
        let refused = self
            .ask(
                TableName::Ledger,
                "SELECT location, reason, loaded_at FROM ledger WHERE status = 'refused' \
                 ORDER BY loaded_at LIMIT 1",
            )
            .await?;
        let location = column_text(&refused, 0)?.into_iter().next().flatten();
        let reason = column_text(&refused, 1)?.into_iter().next().flatten();
        let at = column_long(&refused, 2, &timestamp())?
            .into_iter()
            .next()
            .flatten();
        if let (Some(location), Some(at)) = (location, at) {
            status.oldest_refused = Some((location, reason, at));
        }
        let unfinished = self
            .ask(
                TableName::Ledger,
                "SELECT location FROM ledger WHERE status = 'loading' ORDER BY location",
            )
            .await?;
        status.unfinished = column_text(&unfinished, 0)?.into_iter().flatten().collect();
        Ok(status)
    }

    fn version_of(&self, name: TableName) -> Option<u64> {
        match name {
            TableName::Orders => self.orders.version(),
            TableName::RejectedOrders => self.rejected.version(),
            TableName::Ledger => self.ledger.version(),
            TableName::Reconciliation => self.reconciliation.version(),
        }
    }
}
