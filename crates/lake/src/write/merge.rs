//! The MERGE into a dataset's table: update a row only with a newer change (ties
//! by content, see [`deltaload_core::Dataset::compare`]), insert unknown keys;
//! a round of several files merged in one commit, each file's figures replayed.

use crate::table::arrow_rows;
use crate::table::error::LakeError;
use crate::table::predicates::{
    batch_ranges, integer_key, join_predicate, newer_predicate, sequence_predicate, side,
};
use crate::write::{Made, Writer};
use deltalake::datafusion::common::Column;
use deltalake::datafusion::prelude::Expr;
use deltalake::operations::merge::{MergeBuilder, MergeMetrics};
use deltalake::DeltaTableError;
use deltaload_core::{Dataset, MergeCounts};
use deltaload_engine::changes::Changes;
use serde_json::json;
use serde_json::Value as Json;

/// Every column of the dataset's table: the declared ones and the lineage columns.
fn all_columns(dataset: &Dataset) -> impl Iterator<Item = &str> {
    dataset
        .columns
        .iter()
        .map(|c| c.name.as_str())
        .chain(deltaload_core::spec::LINEAGE_COLUMNS)
}

/// The columns an update of a matched row sets: the update columns and the lineage columns.
fn updated_columns(dataset: &Dataset) -> impl Iterator<Item = &str> {
    dataset
        .update
        .iter()
        .map(|&i| dataset.columns[i].name.as_str())
        .chain(deltaload_core::spec::LINEAGE_COLUMNS)
}

/// What an update sets column `c` to: the change's value, or for a
/// [`Dataset::keep_on_null`] column the table's where the change is null
/// (and does not set its row whole: [`Dataset::sets_whole`]).
fn updated_value(dataset: &Dataset, c: &str) -> Expr {
    let keeps = (dataset.keep_on_null.iter()).any(|&i| dataset.columns[i].name == c);
    match keeps {
        false => side("s", c),
        true => {
            // A null delete flag: an upsert that sets its row whole.
            let flag = side("s", arrow_rows::DELETE_FLAG);
            let keep = match dataset.delete_when.is_some() {
                true => side("s", c).is_null().and(flag.is_not_null()),
                false => side("s", c).is_null(),
            };
            Expr::Case(deltalake::datafusion::logical_expr::Case::new(
                None,
                vec![(Box::new(keep), Box::new(side("t", c)))],
                Some(Box::new(side("s", c))),
            ))
        }
    }
}

/// The key under which a MERGE commit names the file versions it loaded.
pub(crate) const COMMIT_KEY: &str = "deltaload";

/// What a MERGE commit says of one file it loaded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct MergeCommit {
    pub version: u64,
    pub counts: MergeCounts,
}

/// A file version a MERGE loads, with its counts when the MERGE covers several
/// files (a MERGE of one file reports its counts in its operation metrics).
#[derive(Clone, Copy)]
pub(crate) struct MergedFile<'a> {
    pub location: &'a str,
    pub content_id: &'a str,
    pub counts: Option<MergeCounts>,
}

impl MergedFile<'_> {
    pub(crate) fn to_json(self) -> Json {
        let mut file = json!({ "location": self.location, "content_id": self.content_id });
        if let Some(c) = self.counts {
            file["inserted"] = json!(c.inserted);
            file["updated"] = json!(c.updated);
            file["deleted"] = json!(c.deleted);
            if c.retired > 0 {
                file["retired"] = json!(c.retired);
            }
        }
        file
    }
}

impl Writer<'_> {
    /// Merges changes into the dataset's table, each row with the file it
    /// comes from. Returns the counts and what it made: the new version when
    /// the commit names `files` in its metadata (no commit is made when
    /// nothing changed), and that its keys are not checked yet.
    pub(crate) async fn merge_target(
        &mut self,
        changes: &Changes<'_>,
        files: &[MergedFile<'_>],
        loaded_at: i64,
    ) -> Result<(MergeCounts, Made), LakeError> {
        if changes.is_empty() {
            return Ok((MergeCounts::default(), Made::default()));
        }
        let dataset = self.set.dataset.clone();
        let batch = changes.target_batch(&dataset, loaded_at)?;
        let mut batch = self.without_unknown_deletes(batch).await?;
        if batch.num_rows() == 0 {
            // Only deletes of keys the table does not hold: nothing to change.
            self.count_files(&dataset.name, crate::write::OrdersFiles::default(), "merge");
            return Ok((MergeCounts::default(), Made::default()));
        }
        if dataset.delete_when.is_none() {
            batch.remove_column(batch.num_columns() - 1);
        }
        let set = &*self.set;
        let label = dataset.name.clone();
        let url = set.target.table_url().clone();
        let ranges = match integer_key(&dataset) {
            Some(_) => batch_ranges(&deltaload_engine::keys::key_integers(
                &dataset,
                &[&changes.batch],
            )),
            None => Vec::new(),
        };
        let predicate = join_predicate(&dataset, &ranges);
        let source = self
            .ctx
            .read_batch(batch)
            .map_err(LakeError::query(&label))?;
        let before = set.target.version();
        let names_files = !files.is_empty();
        let files: Vec<Json> = files.iter().copied().map(MergedFile::to_json).collect();
        let props = crate::table::commit_properties()
            .with_metadata([(COMMIT_KEY.to_string(), json!({ "files": files }))]);
        let builder = set
            .target
            .clone()
            .merge(source, predicate)
            .with_source_alias("s")
            .with_target_alias("t")
            .with_commit_properties(props);
        let builder = with_clauses(builder, &dataset).map_err(LakeError::delta(&label, &url))?;
        let (table, metrics) = builder.await.map_err(LakeError::delta(&label, &url))?;
        self.set.target = table;
        self.tally.writes.merge += 1;
        let (counts, files) = merge_figures(&metrics);
        self.count_files(&label, files, "merge");
        let after = self.set.target.version();
        let made = (after != before).then_some(after).flatten();
        let made = Made {
            // A MERGE naming no file settles keys: not the round's commit.
            commit: made.filter(|_| names_files),
            unchecked: true,
        };
        Ok((counts, made))
    }
}

/// The MERGE's clauses: with deletes in the feed, a delete removes a matched
/// row it is not older than; an upsert updates a matched row only with a newer
/// change, and inserts an unknown key.
fn with_clauses(builder: MergeBuilder, dataset: &Dataset) -> Result<MergeBuilder, DeltaTableError> {
    let deletes = dataset.delete_when.is_some();
    let flag = side("s", arrow_rows::DELETE_FLAG);
    let when = |condition: Option<Expr>, delete: bool| {
        // A null flag is an upsert (one that sets its row whole).
        let flag = match delete {
            true => flag.clone().is_true(),
            false => flag.clone().is_not_true(),
        };
        match (deletes, condition) {
            (true, Some(c)) => Some(flag.and(c)),
            (true, None) => Some(flag),
            (false, c) => c,
        }
    };
    let mut builder = builder;
    if deletes {
        let condition = when(sequence_predicate(dataset, true), true);
        builder = builder.when_matched_delete(|d| match condition {
            Some(c) => d.predicate(c),
            None => d,
        })?;
    }
    builder
        .when_matched_update(|update| {
            let update = match when(newer_predicate(dataset), false) {
                Some(p) => update.predicate(p),
                None => update,
            };
            updated_columns(dataset).fold(update, |u, c| {
                u.update(Column::new_unqualified(c), updated_value(dataset, c))
            })
        })?
        .when_not_matched_insert(|insert| {
            let insert = match when(None, false) {
                Some(p) => insert.predicate(p),
                None => insert,
            };
            all_columns(dataset).fold(insert, |i, c| {
                i.set(Column::new_unqualified(c), side("s", c))
            })
        })
}

/// A MERGE's figures from its operation metrics: the rows and the files.
fn merge_figures(metrics: &MergeMetrics) -> (MergeCounts, crate::write::OrdersFiles) {
    let counts = MergeCounts {
        inserted: metrics.num_target_rows_inserted as u64,
        updated: metrics.num_target_rows_updated as u64,
        deleted: metrics.num_target_rows_deleted as u64,
        ..MergeCounts::default()
    };
    let files = crate::write::OrdersFiles {
        scanned: metrics.num_target_files_scanned as u64,
        skipped: metrics.num_target_files_skipped_during_scan as u64,
        rewritten: metrics.num_target_files_removed as u64,
        added: metrics.num_target_files_added as u64,
        reread: 0,
    };
    (counts, files)
}

#[cfg(test)]
mod tests {
    use crate::{lake_url, Lake, SourceFile};
    use deltaload_core::Value;

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
        let key = deltaload_flow::FileKey {
            location: f1.location.clone(),
            content_id: deltaload_core::ContentId::of(&f1.bytes).to_string(),
        };
        let found = (first.writer(0))
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
        SourceFile::in_memory(format!("/landing/{name}"), text.into_bytes())
    }

    fn active_files(lake: &Lake) -> Vec<String> {
        let mut files: Vec<String> = lake.tables.sets[0]
            .target
            .get_file_uris()
            .unwrap()
            .collect();
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
        let last = crate::write::OrdersFiles {
            scanned: files.scanned - earlier.scanned,
            skipped: files.skipped - earlier.skipped,
            rewritten: files.rewritten - earlier.rewritten,
            added: files.added - earlier.added,
            reread: files.reread - earlier.reread,
        };
        let expected = crate::write::OrdersFiles {
            scanned: 2,
            skipped: 1,
            rewritten: 2,
            added: 1,
            reread: 0,
        };
        assert_eq!(last, expected);
        let keys: Vec<Vec<Value>> = [5, 500_050, 1_000_050, 2_000_000]
            .iter()
            .map(|&id| vec![Value::Int(id)])
            .collect();
        let rows = lake.writer(0).current_rows(&keys).await.unwrap();
        let status = |id: i64| {
            rows.iter()
                .find(|r| r[0] == Value::Int(id))
                .and_then(|r| r[2].as_text())
        };
        assert_eq!(status(5).as_deref(), Some("paid"));
        assert_eq!(status(500_050).as_deref(), Some("placed"));
        assert_eq!(status(1_000_050).as_deref(), Some("paid"));
        assert_eq!(status(2_000_000).as_deref(), Some("paid"));
    }
}
