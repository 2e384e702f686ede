//! The MERGE into `orders`: update an order only with a newer change (ties by
//! content, see [`deltaload_core::NEWEST_WINS_RULE`]), insert unknown orders.

use crate::batches;
use crate::error::LakeError;
use crate::schema::TableName;
use crate::table::{first_long, query};
use crate::Lake;
use deltalake::kernel::transaction::CommitProperties;
use deltaload_core::newest::TIE_COLUMNS;
use deltaload_core::{MergeCounts, OrderChange};
use futures::TryStreamExt;
use serde_json::{json, Value};

/// The key under which a MERGE commit names the file version it loaded.
const COMMIT_KEY: &str = "deltaload";

/// `s` wins over `t`: strictly newer, or as new and greater by content.
/// Mirrors [`deltaload_core::newest::compare_changes`] in SQL (nulls lowest).
pub(crate) fn newer_predicate() -> String {
    let mut lex = "FALSE".to_string();
    for c in TIE_COLUMNS.iter().rev() {
        lex = format!(
            "((s.{c} IS NOT NULL AND t.{c} IS NULL) OR s.{c} > t.{c} \
             OR (((s.{c} IS NULL AND t.{c} IS NULL) OR s.{c} = t.{c}) AND {lex}))"
        );
    }
    format!("s.updated_at > t.updated_at OR (s.updated_at = t.updated_at AND {lex})")
}

/// What a MERGE commit says of the file it loaded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct MergeCommit {
    pub version: u64,
    pub counts: MergeCounts,
}

impl Lake {
    /// Merges a file's newest changes. Returns the counts and the new version, or
    /// `None` for the version when nothing changed (no commit is made then).
    pub(crate) async fn merge_orders(
        &mut self,
        changes: &[OrderChange],
        location: &str,
        content_id: &str,
        loaded_at: i64,
    ) -> Result<(MergeCounts, Option<u64>), LakeError> {
        if changes.is_empty() {
            return Ok((MergeCounts::default(), None));
        }
        let url = self.orders.table_url().clone();
        let err = LakeError::delta("orders", &url);
        let batch = batches::orders(changes, location, loaded_at)?;
        let source = self
            .ctx
            .read_batch(batch)
            .map_err(LakeError::query("orders"))?;
        let before = self.orders.version();
        // Every column of the table, set from the source row.
        let schema = TableName::Orders.schema();
        let columns: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
        let props = CommitProperties::default().with_metadata([(
            COMMIT_KEY.to_string(),
            json!({ "location": location, "content_id": content_id }),
        )]);
        let (table, metrics) = self
            .orders
            .clone()
            .merge(source, "t.order_id = s.order_id")
            .with_source_alias("s")
            .with_target_alias("t")
            .with_commit_properties(props)
            .when_matched_update(|update| {
                columns
                    .iter()
                    .fold(update.predicate(newer_predicate()), |u, c| {
                        u.update(*c, format!("s.{c}"))
                    })
            })
            .and_then(|m| {
                m.when_not_matched_insert(|insert| {
                    columns
                        .iter()
                        .fold(insert, |i, c| i.set(*c, format!("s.{c}")))
                })
            })
            .map_err(LakeError::delta("orders", &url))?
            .await
            .map_err(err)?;
        self.orders = table;
        let counts = MergeCounts {
            inserted: metrics.num_target_rows_inserted as u64,
            updated: metrics.num_target_rows_updated as u64,
        };
        let after = self.orders.version();
        tracing::debug!(
            files_scanned = metrics.num_target_files_scanned,
            files_skipped = metrics.num_target_files_skipped_during_scan,
            files_added = metrics.num_target_files_added,
            files_removed = metrics.num_target_files_removed,
            "merge into orders"
        );
        Ok((counts, (after != before).then_some(after).flatten()))
    }

    /// Fails when an order of `[min, max]` appears twice in `orders`.
    pub(crate) async fn check_unique_orders(
        &mut self,
        min: i64,
        max: i64,
    ) -> Result<(), LakeError> {
        let sql = format!(
            "SELECT count(*) - count(DISTINCT order_id) FROM orders WHERE order_id BETWEEN {min} AND {max}"
        );
        let batches = query(&self.ctx, &self.orders, TableName::Orders, &sql).await?;
        let doubled = match batches.iter().find(|b| b.num_rows() > 0) {
            Some(batch) => first_long(batch.column(0))?.unwrap_or(0),
            None => 0,
        };
        if doubled != 0 {
            return Err(LakeError::Invariant {
                table: "orders",
                detail: format!(
                    "{doubled} order_id value(s) between {min} and {max} appear more than once; \
                     stop loading and inspect the table history (deltaload show orders)"
                ),
            });
        }
        Ok(())
    }

    /// Finds a MERGE commit of this file version newer than `floor`: the trace of a
    /// load that committed to `orders` but died before its ledger row was written.
    pub(crate) async fn find_merge_commit(
        &self,
        floor: Option<u64>,
        location: &str,
        content_id: &str,
    ) -> Result<Option<MergeCommit>, LakeError> {
        let Some(latest) = self.orders.version() else {
            return Ok(None);
        };
        let unrecorded = latest.saturating_sub(floor.unwrap_or(0)) as usize;
        if unrecorded == 0 {
            return Ok(None);
        }
        let url = self.orders.table_url().clone();
        let infos: Vec<_> = self
            .orders
            .history(Some(unrecorded))
            .try_collect()
            .await
            .map_err(LakeError::delta("orders", &url))?;
        for (i, info) in infos.iter().enumerate() {
            let Some(meta) = info.info.get(COMMIT_KEY) else {
                continue;
            };
            if meta["location"] != location || meta["content_id"] != content_id {
                continue;
            }
            let metrics = info
                .info
                .get("operationMetrics")
                .cloned()
                .unwrap_or(Value::Null);
            let count = |k: &str| metrics.get(k).and_then(Value::as_u64).unwrap_or(0);
            return Ok(Some(MergeCommit {
                version: latest - i as u64,
                counts: MergeCounts {
                    inserted: count("num_target_rows_inserted"),
                    updated: count("num_target_rows_updated"),
                },
            }));
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn predicate_names_every_tie_column() {
        let p = newer_predicate();
        for c in TIE_COLUMNS {
            assert!(p.contains(&format!("s.{c} > t.{c}")), "{p}");
        }
        assert!(p.starts_with("s.updated_at > t.updated_at OR"));
    }
}
