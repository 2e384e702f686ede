//! Read-only questions about the lake, for `backfill`, `reconcile` and `status`.

use crate::ops::Ops;
use crate::table::error::LakeError;
use crate::table::{longs_of, query_with, refresh, strings_of};
use deltalake::arrow::datatypes::DataType;
use deltalake::arrow::record_batch::RecordBatch;
use deltalake::datafusion::common::ScalarValue;
use deltaload_engine::tables::{quoted, timestamp, TableName};
use deltaload_flow::LedgerStatus;
use std::collections::{HashMap, HashSet};

/// What the ledger holds of one version of a location (see
/// [`crate::Lake::ledger_files`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedVersion {
    /// Its content id.
    pub content_id: String,
    /// The object's ETag, when it had one.
    pub etag: Option<String>,
    /// What became of it.
    pub status: LedgerStatus,
    /// Why it was refused.
    pub reason: Option<String>,
    /// Microseconds since the epoch, UTC.
    pub loaded_at: i64,
}

/// Rows of a rejected table for a file version the ledger does not hold as loaded.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct OrphanRejects {
    /// The rejected table, e.g. `rejected_orders`.
    pub table: String,
    /// The file's location.
    pub location: String,
    /// Its content id.
    pub content_id: String,
    /// Rejected rows of that version.
    pub rows: u64,
}

/// The lake at a glance.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LakeStatus {
    /// (day as `YYYY-MM-DD`, status, files), by day then status.
    pub files_per_day: Vec<(String, String, u64)>,
    /// (table, rows, version), in [`TableName::all`] order.
    pub tables: Vec<(String, u64, Option<u64>)>,
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

/// A key found more than once in a dataset's table.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct DuplicateKey {
    /// The table.
    pub table: String,
    /// `column value`, for each key column, e.g. `order_id 1004`.
    pub key: String,
    /// Rows holding it.
    pub count: u64,
}

impl Ops<'_> {
    async fn ask(&mut self, name: &TableName, sql: &str) -> Result<Vec<RecordBatch>, LakeError> {
        self.ask_with(name, sql, Vec::new()).await
    }

    /// [`Ops::ask`] with `sql`'s placeholders bound to `params`.
    async fn ask_with(
        &mut self,
        name: &TableName,
        sql: &str,
        params: Vec<ScalarValue>,
    ) -> Result<Vec<RecordBatch>, LakeError> {
        let missing = LakeError::Invariant {
            table: name.as_str(),
            detail: "is not a table of this lake's spec".to_string(),
        };
        let ctx = self.ctx.clone();
        let table = self.tables.table_mut(name).ok_or(missing)?;
        refresh(table, name).await?;
        query_with(&ctx, table, name, sql, params).await
    }

    /// The ledger's rows for locations starting with `prefix`, by location.
    pub(crate) async fn ledger_files(
        &mut self,
        prefix: &str,
    ) -> Result<HashMap<String, Vec<RecordedVersion>>, LakeError> {
        let sql = "SELECT location, content_id, etag, status, reason, loaded_at FROM ledger \
                   WHERE starts_with(location, $1)";
        let found = self
            .ask_with(&TableName::Ledger, sql, vec![ScalarValue::from(prefix)])
            .await?;
        let locations = column_text(&found, 0)?;
        let contents = column_text(&found, 1)?;
        let etags = column_text(&found, 2)?;
        let statuses = column_text(&found, 3)?;
        let reasons = column_text(&found, 4)?;
        let times = column_long(&found, 5, &timestamp())?;
        let mut files: HashMap<String, Vec<RecordedVersion>> = HashMap::new();
        let rows = locations.into_iter().zip(contents).zip(etags).zip(statuses);
        for ((((location, content), etag), status), (reason, at)) in
            rows.zip(reasons.into_iter().zip(times))
        {
            let Some(location) = location else { continue };
            let content_id = content.unwrap_or_default();
            let status = LedgerStatus::parse(status.as_deref(), &location, &content_id)?;
            files.entry(location).or_default().push(RecordedVersion {
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
    pub(crate) async fn unbalanced_files(
        &mut self,
        prefix: &str,
    ) -> Result<Vec<String>, LakeError> {
        let sql = "SELECT location FROM reconciliation WHERE starts_with(location, $1) AND \
                   (NOT balanced OR records <> loaded + rejected \
                    OR loaded <> duplicates + inserted + updated + stale + coalesce(deleted, 0)) \
                   ORDER BY location";
        let found = self
            .ask_with(
                &TableName::Reconciliation,
                sql,
                vec![ScalarValue::from(prefix)],
            )
            .await?;
        Ok(column_text(&found, 0)?.into_iter().flatten().collect())
    }

    /// Keys found more than once in each dataset's table, with how often
    /// (at most `limit` per table).
    pub(crate) async fn duplicate_keys(
        &mut self,
        limit: usize,
    ) -> Result<Vec<DuplicateKey>, LakeError> {
        let mut out = Vec::new();
        for dataset in self.datasets() {
            let keys: Vec<String> = dataset
                .keys
                .iter()
                .map(|&k| quoted(&dataset.columns[k].name))
                .collect();
            let as_text: Vec<String> = keys
                .iter()
                .enumerate()
                .map(|(i, k)| format!("CAST({k} AS VARCHAR) AS deltaload_key_{i}"))
                .collect();
            let keys = keys.join(", ");
            let sql = format!(
                "SELECT {}, count(*) FROM {} GROUP BY {keys} HAVING count(*) > 1 \
                 ORDER BY {keys} LIMIT {limit}",
                as_text.join(", "),
                TableName::Target(dataset.clone()).sql()
            );
            let found = self.ask(&TableName::Target(dataset.clone()), &sql).await?;
            let n = dataset.keys.len();
            let columns = (0..n)
                .map(|i| column_text(&found, i))
                .collect::<Result<Vec<_>, _>>()?;
            let counts = column_long(&found, n, &DataType::Int64)?;
            for (row, count) in counts.into_iter().enumerate() {
                let key: Vec<String> = dataset
                    .keys
                    .iter()
                    .zip(&columns)
                    .map(|(&k, values)| {
                        let value = values
                            .get(row)
                            .cloned()
                            .flatten()
                            .unwrap_or_else(|| "NULL".into());
                        format!("{} {value}", dataset.columns[k].name)
                    })
                    .collect();
                out.push(DuplicateKey {
                    table: dataset.table_name().to_string(),
                    key: key.join(", "),
                    count: count.unwrap_or(0) as u64,
                });
            }
        }
        Ok(out)
    }

    /// Rejected rows whose file version the ledger does not hold as loaded.
    pub(crate) async fn orphan_rejects(&mut self) -> Result<Vec<OrphanRejects>, LakeError> {
        let loaded = self
            .ask(
                &TableName::Ledger,
                "SELECT location, content_id FROM ledger WHERE status = 'loaded'",
            )
            .await?;
        let loaded: HashSet<(Option<String>, Option<String>)> = column_text(&loaded, 0)?
            .into_iter()
            .zip(column_text(&loaded, 1)?)
            .collect();
        let mut out = Vec::new();
        for dataset in self.datasets() {
            let name = TableName::Rejected(dataset.clone());
            let sql = format!(
                "SELECT source_file, content_id, count(*) FROM {} \
                 GROUP BY source_file, content_id ORDER BY source_file",
                name.sql()
            );
            let found = self.ask(&name, &sql).await?;
            let locations = column_text(&found, 0)?;
            let contents = column_text(&found, 1)?;
            let counts = column_long(&found, 2, &DataType::Int64)?;
            out.extend(
                locations
                    .into_iter()
                    .zip(contents)
                    .zip(counts)
                    .filter(|((l, c), _)| !loaded.contains(&(l.clone(), c.clone())))
                    .map(|((l, c), n)| OrphanRejects {
                        table: name.as_str(),
                        location: l.unwrap_or_default(),
                        content_id: c.unwrap_or_default(),
                        rows: n.unwrap_or(0) as u64,
                    }),
            );
        }
        Ok(out)
    }

    /// [`Ops::ask`] of the ledger, `{mine}` in `sql` standing for the
    /// filter of the rows of this lake's datasets: every row, unless the spec
    /// was narrowed to some (`--dataset`; their names bound as parameters).
    async fn ask_ledger(&mut self, sql: &str) -> Result<Vec<RecordBatch>, LakeError> {
        let (mine, names) = match self.spec.others.is_empty() {
            true => ("TRUE".to_string(), Vec::new()),
            false => {
                let names = self
                    .spec
                    .datasets
                    .iter()
                    .map(|d| ScalarValue::from(d.name.as_str()));
                let names: Vec<ScalarValue> = names.collect();
                let places: Vec<String> = (1..=names.len()).map(|i| format!("${i}")).collect();
                (format!("dataset IN ({})", places.join(", ")), names)
            }
        };
        let sql = sql.replace("{mine}", &mine);
        self.ask_with(&TableName::Ledger, &sql, names).await
    }

    /// Files per day and status, table sizes and versions, the last load, the
    /// oldest refused file and the loads that did not finish (of the
    /// datasets of the lake's spec, when it was narrowed to some).
    pub(crate) async fn status(&mut self) -> Result<LakeStatus, LakeError> {
        let mut status = LakeStatus::default();
        let per_day = self
            .ask_ledger(
                "SELECT to_char(loaded_at, '%Y-%m-%d') AS day, status, count(*) FROM ledger \
                 WHERE {mine} GROUP BY 1, 2 ORDER BY 1, 2",
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
        for name in TableName::all(&self.datasets()) {
            let found = self
                .ask(&name, &format!("SELECT count(*) FROM {}", name.sql()))
                .await?;
            let rows = column_long(&found, 0, &DataType::Int64)?;
            let version = self.tables.table_mut(&name).and_then(|t| t.version());
            let rows = rows.first().copied().flatten().unwrap_or(0) as u64;
            status.tables.push((name.as_str(), rows, version));
        }
        let last = self
            .ask_ledger("SELECT max(loaded_at) FROM ledger WHERE status = 'loaded' AND {mine}")
            .await?;
        status.last_load = column_long(&last, 0, &timestamp())?
            .first()
            .copied()
            .flatten();
        let refused = self
            .ask_ledger(
                "SELECT location, reason, loaded_at FROM ledger WHERE status = 'refused' \
                 AND {mine} ORDER BY loaded_at LIMIT 1",
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
            .ask_ledger(
                "SELECT location FROM ledger WHERE status = 'loading' AND {mine} ORDER BY location",
            )
            .await?;
        status.unfinished = column_text(&unfinished, 0)?.into_iter().flatten().collect();
        Ok(status)
    }
}
