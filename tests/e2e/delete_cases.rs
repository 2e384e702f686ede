//! Deletes case by case: a delete loaded before its older upsert, a delete
//! without the columns that may not be null, and four writers loading upserts
//! and deletes at once in different orders.

use crate::deletes::{
    file_bytes, load_in_order, model, spec, table_and_tombstones, Change, INVENTORY,
};
use deltaload_core::Spec;
use deltaload_lake::TableName;
use deltaload_tests::Sandbox;

#[tokio::test]
async fn a_delete_loaded_before_its_older_upsert_keeps_the_row_away_and_a_newer_change_brings_it_back(
) {
    let c = |hour, qty, op| Change {
        warehouse: "a",
        sku: 1,
        hour,
        seq: 0,
        qty,
        op,
    };
    let files = vec![vec![c(1, None, Some("d"))], vec![c(0, Some(5), Some("u"))]];
    let (rows, dead) = load_in_order("jsonl", &files, &[0, 1]).await;
    assert!(rows.is_empty(), "{rows:?}");
    assert_eq!(dead, vec![vec!["a", "1", "2026-10-01T11:00:00Z", "0"]]);
    let mut later = files.clone();
    later.push(vec![c(2, Some(7), None)]);
    let (rows, dead) = load_in_order("jsonl", &later, &[0, 1, 2]).await;
    assert_eq!(rows, vec![vec!["a", "1", "2026-10-01T12:00:00Z", "0", "7"]]);
    assert!(
        dead.is_empty(),
        "the newer change clears the tombstone: {dead:?}"
    );
}

/// A delete names its key and sequence only: the other columns, even those
/// that may not be null, are absent from it and never reach the table.
#[tokio::test]
async fn a_delete_without_the_columns_that_may_not_be_null_removes_the_row() {
    let text = format!(
        "[[dataset]]\nname = \"inventory\"\nformat = \"jsonl\"\n{}",
        INVENTORY.replace(
            "name = \"qty\"\ntype = \"int\"\n",
            "name = \"qty\"\ntype = \"int\"\nnullable = false\n"
        )
    );
    let spec = Spec::parse(&text, "inventory.toml").unwrap();
    let sb = Sandbox::with_spec(spec.clone());
    let upsert = sb.file(
        "1.jsonl",
        r#"{"warehouse":"a","sku":1,"event_time":"2026-10-01T10:00:00","seq":0,"qty":3}"#,
    );
    let delete = sb.file(
        "2.jsonl",
        r#"{"warehouse":"a","sku":1,"event_time":"2026-10-01T11:00:00","seq":0,"op":"d"}"#,
    );
    for path in [&upsert, &delete] {
        let outcome = sb.load(path, false).await;
        assert!(
            matches!(outcome, deltaload_lake::LoadOutcome::Loaded(_)),
            "{outcome:?}"
        );
    }
    let d = spec.datasets[0].clone();
    let rows = sb.rows(TableName::Target(d), "warehouse, sku").await;
    assert!(rows.is_empty(), "{rows:?}");
}

/// Four writers load the same files of upserts and deletes at once, each in
/// its own order: every file loads once, and the table and the tombstones are
/// those of the model (a writer reading between another's tombstone and table
/// commits sees the tombstone first).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_writers_loading_upserts_and_deletes_in_different_orders_give_the_model() {
    let c = |sku, hour, seq, qty, op| Change {
        warehouse: "a",
        sku,
        hour,
        seq,
        qty,
        op,
    };
    let files: Vec<Vec<Change>> = vec![
        vec![c(1, 1, 0, None, Some("d")), c(2, 0, 0, Some(1), None)],
        vec![c(1, 0, 1, Some(2), None), c(2, 1, 0, None, Some("delete"))],
        vec![
            c(1, 1, 0, Some(3), Some("u")),
            c(2, 1, 1, Some(4), None),
            c(3, 0, 0, Some(5), None),
        ],
        vec![c(3, 1, 0, None, Some("d")), c(1, 1, 1, Some(6), None)],
    ];
    let spec = spec("jsonl");
    let sb = Sandbox::with_spec(spec.clone());
    let sources: Vec<deltaload_lake::SourceFile> = files
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let path = sb.file(&format!("f{i}.jsonl"), file_bytes("jsonl", f));
            deltaload_lake::SourceFile::in_memory(
                deltaload_lake::local_source(path.to_str().unwrap()).unwrap(),
                std::fs::read(&path).unwrap(),
            )
        })
        .collect();
    sb.lake().await; // the tables exist before the writers race
    let orders: [[usize; 4]; 4] = [[0, 1, 2, 3], [3, 2, 1, 0], [1, 3, 0, 2], [2, 0, 3, 1]];
    let writers = orders.iter().enumerate().map(|(w, order)| {
        let files: Vec<_> = order.iter().map(|&i| sources[i].clone()).collect();
        let (root, spec) = (sb.root.clone(), spec.clone());
        tokio::spawn(async move {
            let mut lake = deltaload_lake::Lake::open_spec(&root, &spec).await.unwrap();
            deltaload_tests::load_one_by_one(&mut lake, w as u64, files).await
        })
    });
    let loaded: usize = futures::future::join_all(writers)
        .await
        .into_iter()
        .map(|r| r.unwrap())
        .sum();
    assert_eq!(loaded, files.len(), "each file loads once");
    assert_eq!(table_and_tombstones(&sb).await, model(&files));
}
