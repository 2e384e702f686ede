//! Tests of auto-compaction after loads.

use super::*;
use crate::{Lake, SourceFile};
use deltaload_core::Value;

const HEADER: &str = "order_id,customer_id,status,amount,currency,ordered_at,updated_at\n";

/// Loads `n` one-order files, one load each, into a new `orders` lake
/// compacting as `auto` says; the lake, and its folder.
async fn loaded(n: u32, auto: AutoCompact) -> (tempfile::TempDir, Lake) {
    let dir = tempfile::tempdir().unwrap();
    let root = crate::lake_url(dir.path().to_str().unwrap()).unwrap();
    let mut lake = Lake::open(&root).await.unwrap();
    lake.set_auto_compact(auto);
    for i in 1..=n {
        let text = format!(
            "{HEADER}{i},C1,placed,1.00,EUR,,2026-10-01T08:00:0{}\n",
            i % 10
        );
        let file = SourceFile::in_memory(format!("/landing/f{i}.csv"), text.into_bytes());
        lake.load(&file, Default::default()).await.unwrap();
    }
    (dir, lake)
}

fn files(lake: &mut Lake, name: &TableName) -> usize {
    file_count(lake.tables.table_mut(name).unwrap())
}

/// Every load adds a file to `orders`, the ledger and the reconciliation;
/// with auto-compaction at 3 files, none of them holds more than 3, no row
/// is lost, and the runs are counted. Off, each holds one file per load.
#[tokio::test]
async fn loads_compact_the_tables_they_wrote_once_they_hold_min_files() {
    let (_dir, mut lake) = loaded(7, AutoCompact::at(3)).await;
    let orders = TableName::Target(lake.tables.sets[0].dataset.clone());
    for name in [&orders, &TableName::Ledger, &TableName::Reconciliation] {
        let n = files(&mut lake, name);
        assert!(n < 3, "{}: {n} files", name.as_str());
    }
    let done = lake.auto_compactions();
    assert!(done.runs >= 6, "{done:?}");
    assert!(done.files_removed >= 3 * done.runs, "{done:?}");
    assert_eq!(done.skipped, 0, "{done:?}");
    let keys: Vec<Vec<Value>> = (1..=7).map(|i| vec![Value::Int(i)]).collect();
    let rows = lake.writer(0).current_rows(&keys).await.unwrap();
    assert_eq!(rows.len(), 7);

    let (_dir, mut lake) = loaded(4, AutoCompact::OFF).await;
    for name in [&orders, &TableName::Ledger, &TableName::Reconciliation] {
        assert!(files(&mut lake, name) >= 4, "{}", name.as_str());
    }
    assert_eq!(lake.auto_compactions(), AutoCompactions::default());
}

/// A table is due at `min_files` small files, never when off, and after a
/// failure only once `min_files` more have come.
#[test]
fn a_table_is_due_at_min_files_and_again_only_after_as_many_since_a_failure() {
    assert!(!due(2, None, 3));
    assert!(due(3, None, 3));
    assert!(!due(100, None, 0));
    assert!(!due(5, Some(3), 3));
    assert!(due(6, Some(3), 3));
    assert!(!due(3, Some(10), 3));
}
