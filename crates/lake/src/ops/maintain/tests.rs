//! Tests of a compaction beside concurrent commits.

use super::*;
use crate::Lake;
use deltalake::protocol::SaveMode;

/// A new lake's orders table holding orders 1..=10 and 11..=20 in two files,
/// read by two handles at the same version.
async fn two_files() -> (tempfile::TempDir, DeltaTable, DeltaTable, TableName) {
    let dir = tempfile::tempdir().unwrap();
    let root = crate::lake_url(dir.path().to_str().unwrap()).unwrap();
    let lake = Lake::open(&root).await.unwrap();
    let mut table = lake.tables.sets[0].target.clone();
    for ids in [1..=10, 11..=20] {
        let rows = crate::write::upsert::commit::tests::orders(ids);
        let written = table.write(vec![rows]).with_save_mode(SaveMode::Append);
        table = written.await.unwrap();
    }
    assert_eq!(file_count(&table), 2);
    let name = TableName::Target(lake.tables.sets[0].dataset.clone());
    (dir, table.clone(), table, name)
}

/// A load's commit removing a file the compaction planned from: order 1 deleted.
async fn remove_a_file(table: &DeltaTable) {
    let deleted = table.clone().delete().with_predicate("order_id = 1");
    deleted.await.unwrap();
}

/// A compaction that loses at its last attempt is left for the next run,
/// reported, and the maintenance goes on; one attempt more, planned from the
/// new version, compacts.
#[tokio::test]
async fn a_compaction_losing_every_attempt_is_skipped_not_failed() {
    for (attempts, skipped, retried) in [(1, true, 0), (2, false, 1)] {
        let (_dir, mut stale, other, name) = two_files().await;
        remove_a_file(&other).await;
        let mut done = Maintained::default();
        let opts = MaintainOptions::default();
        let result = compact(&mut stale, &name, opts, &mut done, attempts).await;
        result.unwrap_or_else(|e| panic!("{attempts} attempts: {e}"));
        assert_eq!(done.compaction_skipped, skipped, "{attempts} attempts");
        assert_eq!(done.conflicts_retried, retried, "{attempts} attempts");
        assert_eq!(done.files_removed, if skipped { 0 } else { 2 });
        let mut now = other.clone();
        now.update_state().await.unwrap();
        assert_eq!(file_count(&now), if skipped { 2 } else { 1 });
        if skipped {
            // Read anew, for the checkpoint that follows.
            assert_eq!(stale.version(), now.version());
        }
    }
}
