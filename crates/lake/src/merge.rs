//! The MERGE into `orders`: update an order only with a newer change (ties by
//! content, see [`deltaload_core::NEWEST_WINS_RULE`]), insert unknown orders.

use crate::batches;
use crate::error::LakeError;
use crate::ledger::FileKey;
use crate::predicates::{batch_ranges, join_predicate, newer_predicate, within_ranges};
use crate::schema::TableName;
use crate::table::{first_long, query};
use crate::Lake;
use deltalake::arrow::array::Int64Array;
use deltalake::arrow::datatypes::{DataType, Field, Schema};
use deltalake::arrow::record_batch::RecordBatch;
use deltalake::kernel::transaction::CommitProperties;
use deltaload_core::{MergeCounts, OrderChange};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::Arc;

/// The key under which a MERGE commit names the file versions it loaded.
const COMMIT_KEY: &str = "deltaload";

/// What a MERGE commit says of one file it loaded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct MergeCommit {
    pub version: u64,
    pub counts: MergeCounts,
}

/// A file version a MERGE loads, with its counts when the MERGE covers several
/// files (a MERGE of one file reports its counts in its operation metrics).
pub(crate) struct MergedFile<'a> {
    pub location: &'a str,
    pub content_id: &'a str,
    pub counts: Option<MergeCounts>,
}

impl MergedFile<'_> {
    fn to_json(&self) -> Value {
        let mut file = json!({ "location": self.location, "content_id": self.content_id });
        if let Some(c) = self.counts {
            file["inserted"] = json!(c.inserted);
            file["updated"] = json!(c.updated);
        }
        file
    }
}

impl Lake {
    /// Merges changes, each row with the file it comes from. Returns the counts
    /// and the new version, or `None` for the version when nothing changed (no
    /// commit is made then). The commit names the files in its metadata.
    pub(crate) async fn merge_orders(
        &mut self,
        rows: &[(&OrderChange, &str)],
        files: &[MergedFile<'_>],
        loaded_at: i64,
    ) -> Result<(MergeCounts, Option<u64>), LakeError> {
        if rows.is_empty() {
            return Ok((MergeCounts::default(), None));
        }
        let url = self.orders.table_url().clone();
        let err = LakeError::delta("orders", &url);
        let batch = batches::orders(rows, loaded_at)?;
        let ids: Vec<i64> = rows.iter().map(|(c, _)| c.order_id).collect();
        let predicate = join_predicate(&ids);
        let source = self
            .ctx
            .read_batch(batch)
            .map_err(LakeError::query("orders"))?;
        let before = self.orders.version();
        // Every column of the table, set from the source row.
        let schema = TableName::Orders.schema();
        let columns: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
        let files: Vec<Value> = files.iter().map(MergedFile::to_json).collect();
        let props = CommitProperties::default()
            .with_metadata([(COMMIT_KEY.to_string(), json!({ "files": files }))]);
        let (table, metrics) = self
            .orders
            .clone()
            .merge(source, predicate)
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
        let files = crate::OrdersFiles {
            scanned: metrics.num_target_files_scanned as u64,
            skipped: metrics.num_target_files_skipped_during_scan as u64,
            rewritten: metrics.num_target_files_removed as u64,
            added: metrics.num_target_files_added as u64,
        };
        let total = &mut self.orders_files;
        total.scanned += files.scanned;
        total.skipped += files.skipped;
        total.rewritten += files.rewritten;
        total.added += files.added;
        tracing::debug!(
            files_scanned = files.scanned,
            files_skipped = files.skipped,
            files_added = files.added,
            files_removed = files.rewritten,
            "merge into orders"
        );
        Ok((counts, (after != before).then_some(after).flatten()))
    }

    /// The table's rows for these orders, by `order_id`.
    pub(crate) async fn current_orders(
        &mut self,
        ids: &[i64],
    ) -> Result<HashMap<i64, OrderChange>, LakeError> {
        const IDS: &str = "deltaload_batch_ids";
        let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false)]));
        let ids = RecordBatch::try_new(schema, vec![Arc::new(Int64Array::from(ids.to_vec()))])
            .map_err(LakeError::arrow("orders"))?;
        let registered = self
            .ctx
            .deregister_table(IDS)
            .and_then(|_| self.ctx.register_batch(IDS, ids));
        registered.map_err(LakeError::query("orders"))?;
        let sql = format!(
            "SELECT o.order_id, o.customer_id, o.status, o.amount, o.currency, o.ordered_at, \
             o.updated_at FROM orders o JOIN {IDS} b ON o.order_id = b.id"
        );
        let found = query(&self.ctx, &self.orders, TableName::Orders, &sql).await?;
        let mut current = HashMap::new();
        for batch in &found {
            for change in batches::order_changes(batch)? {
                current.insert(change.order_id, change);
            }
        }
        Ok(current)
    }

    /// Fails when an order of this load (`ids`) appears twice in `orders`.
    pub(crate) async fn check_unique_orders(&mut self, ids: &[i64]) -> Result<(), LakeError> {
        let ranges = batch_ranges(ids);
        let (Some(first), Some(last)) = (ranges.first(), ranges.last()) else {
            return Ok(());
        };
        let (min, max) = (first.0, last.1);
        // The same ranges as the MERGE's: the files it skipped are not read here either.
        let sql = format!(
            "SELECT count(*) - count(DISTINCT order_id) FROM orders WHERE {}",
            within_ranges("order_id", &ranges)
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
                    "{doubled} order_id value(s) of this load (between {min} and {max}) appear more than once; \
                     stop loading and inspect the table history (deltaload show orders)"
                ),
            });
        }
        Ok(())
    }

    /// Finds the MERGE commits after version `from` that loaded these file
    /// versions: the trace of loads that committed to `orders` but died before
    /// their ledger rows were written.
    pub(crate) async fn find_merge_commits(
        &self,
        from: Option<u64>,
        keys: &[FileKey],
    ) -> Result<HashMap<FileKey, MergeCommit>, LakeError> {
        let mut found = HashMap::new();
        let Some(latest) = self.orders.version() else {
            return Ok(found);
        };
        let first = from.unwrap_or(0).saturating_add(1);
        if first > latest || keys.is_empty() {
            return Ok(found);
        }
        let url = self.orders.table_url().clone();
        let log_store = self.orders.log_store();
        // Newest first, each commit read by its version: the log may already hold
        // commits newer than this snapshot (other writers), which are not ours.
        for version in (first..=latest).rev() {
            let Some(bytes) = log_store
                .read_commit_entry(version)
                .await
                .map_err(LakeError::delta("orders", &url))?
            else {
                continue;
            };
            let Some(info) = commit_info(&bytes) else {
                continue;
            };
            let Some(meta) = info.get(COMMIT_KEY) else {
                continue;
            };
            let metrics = info.get("operationMetrics");
            let metric = |k: &str| metrics.and_then(|m| m.get(k)).and_then(Value::as_u64);
            // A commit of one file written before batches named it at the top level.
            let files = match meta.get("files").and_then(Value::as_array) {
                Some(files) => files.clone(),
                None => vec![meta.clone()],
            };
            for file in files {
                let text = |k: &str| file.get(k).and_then(Value::as_str).map(str::to_string);
                let (Some(location), Some(content_id)) = (text("location"), text("content_id"))
                else {
                    continue;
                };
                let key = (location, content_id);
                if found.contains_key(&key) || !keys.contains(&key) {
                    continue;
                }
                let count = |k: &str| file.get(k).and_then(Value::as_u64);
                let counts = MergeCounts {
                    inserted: count("inserted")
                        .or_else(|| metric("num_target_rows_inserted"))
                        .unwrap_or(0),
                    updated: count("updated")
                        .or_else(|| metric("num_target_rows_updated"))
                        .unwrap_or(0),
                };
                found.insert(key, MergeCommit { version, counts });
            }
        }
        Ok(found)
    }
}

/// The `commitInfo` action of a commit file (newline-delimited JSON actions).
fn commit_info(bytes: &[u8]) -> Option<serde_json::Map<String, Value>> {
    bytes
        .split(|b| *b == b'\n')
        .filter_map(|line| serde_json::from_slice::<Value>(line).ok())
        .find_map(|action| match action {
            Value::Object(mut o) => match o.remove("commitInfo") {
                Some(Value::Object(info)) => Some(info),
                _ => None,
            },
            _ => None,
        })
}

#[cfg(test)]
mod tests {
    use crate::{lake_url, Lake, SourceFile};

    /// A file with one new order.
    fn file(name: &str, id: i64) -> SourceFile {
        changes(name, &[id], "placed", 1)
    }

    /// Found by the maintenance concurrency test: the history lists every commit
    /// in storage, also those newer than this handle's snapshot, and the version
    /// was taken from the position in that list (an overflow, or the wrong version).
    #[tokio::test]
    async fn merge_commits_carry_their_own_version_when_others_committed_since() {
        let dir = tempfile::tempdir().unwrap();
        let root = lake_url(dir.path().to_str().unwrap()).unwrap();
        let mut first = Lake::open(&root).await.unwrap();
        let f1 = file("f1.csv", 1);
        first.load(&f1, Default::default()).await.unwrap();
        let mut other = Lake::open(&root).await.unwrap();
        for (i, name) in ["f2.csv", "f3.csv"].iter().enumerate() {
            other
                .load(&file(name, 2 + i as i64), Default::default())
                .await
                .unwrap();
        }
        let key = (
            f1.location.clone(),
            deltaload_core::ContentId::of(&f1.bytes).to_string(),
        );
        let found = first
            .find_merge_commits(Some(0), std::slice::from_ref(&key))
            .await
            .unwrap();
        assert_eq!(found.get(&key).map(|c| c.version), Some(1));
    }

    fn changes(name: &str, ids: &[i64], status: &str, day: u32) -> SourceFile {
        let mut text =
            String::from("order_id,customer_id,status,amount,currency,ordered_at,updated_at\n");
        for id in ids {
            text.push_str(&format!(
                "{id},C,{status},1.00,EUR,,2026-10-{day:02}T00:00:00\n"
            ));
        }
        SourceFile {
            location: format!("/landing/{name}"),
            bytes: text.into_bytes(),
            etag: None,
            version_id: None,
        }
    }

    fn active_files(lake: &Lake) -> Vec<String> {
        let mut files: Vec<String> = lake.orders.get_file_uris().unwrap().collect();
        files.sort();
        files
    }

    /// Three files of far-apart ids; changes to orders of the first and the
    /// last: the middle file lies between the batch's smallest and
    /// largest ids but in none of its ranges, so the MERGE leaves it alone.
    #[tokio::test]
    async fn a_merge_reads_and_rewrites_only_the_files_holding_its_orders() {
        let dir = tempfile::tempdir().unwrap();
        let root = lake_url(dir.path().to_str().unwrap()).unwrap();
        let mut lake = Lake::open(&root).await.unwrap();
        let blocks: [Vec<i64>; 3] = [
            (1..=100).collect(),
            (500_000..=500_100).collect(),
            (1_000_000..=1_000_100).collect(),
        ];
        for (i, ids) in blocks.iter().enumerate() {
            let name = format!("block{i}.csv");
            lake.load(&changes(&name, ids, "placed", 1), Default::default())
                .await
                .unwrap();
        }
        let before = active_files(&lake);
        assert_eq!(before.len(), 3, "one file per block: {before:?}");
        let earlier = lake.orders_files();
        // More ids than DataFusion pushes into the scan as a list of values
        // (150), so only the ranges can skip the middle file.
        let late: Vec<i64> = (1..=100)
            .chain(1_000_000..=1_000_100)
            .chain([2_000_000])
            .collect();
        let out = lake
            .load(&changes("late.csv", &late, "paid", 2), Default::default())
            .await
            .unwrap();
        let crate::LoadOutcome::Loaded(loaded) = out else {
            panic!("not loaded: {out:?}")
        };
        let f = loaded.figures;
        assert_eq!((f.inserted, f.updated), (1, 201), "{f:?}");
        let files = lake.orders_files();
        let after = active_files(&lake);
        let kept: Vec<&String> = after.iter().filter(|f| before.contains(f)).collect();
        assert_eq!(
            kept.len(),
            1,
            "only the middle block's file is kept: {after:?}"
        );
        // The last MERGE read the two files holding its orders and skipped the
        // middle one, which lies between its smallest and largest id.
        let last = crate::OrdersFiles {
            scanned: files.scanned - earlier.scanned,
            skipped: files.skipped - earlier.skipped,
            rewritten: files.rewritten - earlier.rewritten,
            added: files.added - earlier.added,
        };
        let expected = crate::OrdersFiles {
            scanned: 2,
            skipped: 1,
            rewritten: 2,
            added: 1,
        };
        assert_eq!(last, expected);
        let rows = lake
            .current_orders(&[5, 500_050, 1_000_050, 2_000_000])
            .await
            .unwrap();
        let status = |id: i64| rows.get(&id).and_then(|c| c.status.clone());
        assert_eq!(status(5).as_deref(), Some("paid"));
        assert_eq!(status(500_050).as_deref(), Some("placed"));
        assert_eq!(status(1_000_050).as_deref(), Some("paid"));
        assert_eq!(status(2_000_000).as_deref(), Some("paid"));
    }
}
