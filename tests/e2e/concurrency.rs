//! Writers racing on the same tables: commit conflicts are retried, not failed.

use deltaload_lake::{LoadOutcome, SourceFile, TableName};
use deltaload_tests::{Sandbox, HEADER};

/// A file changing orders 1..=20 at `hour`, so every writer's MERGE touches the
/// same rows and their commits conflict.
fn file(writer: usize, n: usize) -> SourceFile {
    let hour = (writer * 5 + n) % 24;
    let mut text = HEADER.to_string();
    for id in 1..=20 {
        text.push_str(&format!(
            "{id},C{writer},placed,{n}.00,EUR,,2026-10-01T{hour:02}:00:00\n"
        ));
    }
    SourceFile {
        location: format!("/landing/w{writer}/f{n}.csv"),
        bytes: text.into_bytes(),
        etag: None,
        version_id: None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn four_writers_on_the_same_orders_all_load_and_their_conflicts_are_retried() {
    let sb = Sandbox::new();
    drop(sb.lake().await); // the tables exist before the race
    let mut writers = Vec::new();
    for writer in 0..4 {
        let mut lake = sb.lake().await;
        writers.push(async move {
            let mut loaded = 0;
            for n in 0..5 {
                let outcomes = lake
                    .load_batch(&[file(writer, n)], Default::default())
                    .await
                    .unwrap_or_else(|e| panic!("writer {writer}, file {n}: {e}"));
                loaded += outcomes
                    .iter()
                    .filter(|o| matches!(o, LoadOutcome::Loaded(_)))
                    .count();
            }
            (loaded, lake.commit_retries())
        });
    }
    // Polled together: their commits interleave at every await.
    let mut retries = 0;
    for (loaded, r) in futures::future::join_all(writers).await {
        assert_eq!(loaded, 5);
        retries += r;
    }
    assert!(
        retries > 0,
        "the writers never conflicted; the test proves nothing"
    );
    let ledger = sb.rows(TableName::Ledger, "location, status").await;
    assert_eq!(ledger.len(), 20, "{ledger:?}");
    assert!(ledger.iter().all(|r| r[1] == "loaded"));
    let orders = sb.rows(TableName::Orders, "order_id, updated_at").await;
    assert_eq!(orders.len(), 20, "every order once");
    // Every order ends with the newest change any writer had for it.
    let newest = (0..4)
        .flat_map(|w| (0..5).map(move |n| (w * 5 + n) % 24))
        .max()
        .unwrap_or(0);
    assert!(orders
        .iter()
        .all(|r| r[1] == format!("2026-10-01T{newest:02}:00:00Z")));
    let recon = sb.rows(TableName::Reconciliation, "balanced").await;
    assert_eq!(recon.len(), 20);
    assert!(recon.iter().all(|r| r[0] == "true"));
}
