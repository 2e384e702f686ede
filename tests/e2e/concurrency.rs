//! Writers racing on the same tables: commit conflicts are retried, not failed.

use deltaload_lake::{Engine, LoadOutcome, SourceFile, TableName};
use deltaload_tests::{load_one_by_one, orders_csv, Order, Sandbox};

/// A file changing orders 1..=20 at `hour`, so every writer's MERGE touches the
/// same rows and their commits conflict.
fn file(writer: usize, n: usize) -> SourceFile {
    let hour = (writer * 5 + n) % 24;
    let orders: Vec<Order> = (1..=20)
        .map(|id| {
            Order::new(id)
                .customer(format!("C{writer}"))
                .amount(format!("{n}.00"))
                .updated_at(format!("2026-10-01T{hour:02}:00:00"))
        })
        .collect();
    let text = orders_csv(&orders);
    SourceFile::in_memory(format!("/landing/w{writer}/f{n}.csv"), text.into_bytes())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn four_writers_on_the_same_orders_all_load_and_their_conflicts_are_retried() {
    four_writers(|_| Engine::Keyed).await;
}

/// The same with two writers on delta-rs's MERGE: the keyed upsert and the
/// MERGE conflict with each other as with themselves, and the table ends the same.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_keyed_upsert_racing_the_merge_loses_nothing() {
    four_writers(|w| {
        if w % 2 == 0 {
            Engine::Keyed
        } else {
            Engine::Merge
        }
    })
    .await;
}

/// Four writers, each with engine `engine(writer)`, loading 5 files each of
/// the same 20 orders, polled together.
async fn four_writers(engine: fn(usize) -> Engine) {
    let sb = Sandbox::new();
    drop(sb.lake().await); // the tables exist before the race
    let mut writers = Vec::new();
    for writer in 0..4 {
        let mut lake = sb.lake().await;
        lake.set_engine(engine(writer));
        writers.push(async move {
            let files = (0..5).map(|n| file(writer, n));
            let loaded = load_one_by_one(&mut lake, writer as u64, files).await;
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
    let orders = sb
        .rows(deltaload_tests::orders_table(), "order_id, updated_at")
        .await;
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

/// Four `deltaload load --log info` processes racing on the same orders: the
/// conflicts they retry are no errors. No ERROR line appears (delta-rs logs
/// each conflict at ERROR), and each retry is one INFO line with its attempt.
/// The processes run again (at most five times) until at least one conflicted.
#[tokio::test(flavor = "multi_thread")]
async fn retried_conflicts_are_logged_once_each_and_never_as_errors() {
    for _ in 0..5 {
        let sb = Sandbox::new();
        drop(sb.lake().await); // the tables exist before the race
        let writers: Vec<std::process::Child> = (0..4)
            .map(|writer| {
                let files: Vec<String> = (0..3)
                    .map(|n| {
                        let file = file(writer, n);
                        sb.file(&format!("w{writer}f{n}.csv"), file.bytes.as_slice());
                        format!("raw/w{writer}f{n}.csv")
                    })
                    .collect();
                std::process::Command::new(env!("CARGO_BIN_EXE_deltaload-faulty"))
                    .current_dir(sb.dir.path())
                    .env_remove("DELTALOAD_LAKE")
                    .args(["load", "--log", "info"])
                    .args(&files)
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .expect("run deltaload")
            })
            .collect();
        let mut log = String::new();
        for writer in writers {
            let out = writer.wait_with_output().expect("wait for deltaload");
            assert!(out.status.success(), "{}", deltaload_tests::stderr(&out));
            log.push_str(&deltaload_tests::stderr(&out));
        }
        let errors: Vec<&str> = log.lines().filter(|l| l.contains("ERROR")).collect();
        assert!(errors.is_empty(), "{errors:#?}");
        let retried: Vec<&str> = log
            .lines()
            .filter(|l| l.contains("commit conflict with another writer"))
            .collect();
        assert!(
            retried
                .iter()
                .all(|l| l.contains(" INFO ") && l.contains("attempt=")),
            "{retried:#?}"
        );
        if !retried.is_empty() {
            return;
        }
    }
    panic!("four processes never conflicted in five races; the test proves nothing");
}

/// Four writers open an empty lake at once and load: the tables are created
/// once, with one schema, and every file loads once.
async fn racing_creation(root: deltaload_lake::LakeRoot) {
    let writers = (0..4).map(|writer| {
        let root = root.clone();
        async move {
            let mut lake = deltaload_lake::Lake::open(&root)
                .await
                .unwrap_or_else(|e| panic!("writer {writer} cannot open the lake: {e}"));
            lake.load_batch(vec![file(writer, 0)], Default::default())
                .await
                .unwrap_or_else(|e| panic!("writer {writer}: {e}"))
        }
    });
    for outcomes in futures::future::join_all(writers).await {
        assert!(matches!(outcomes[..], [LoadOutcome::Loaded(_)]));
    }
    for name in TableName::all(&deltaload_core::Spec::builtin().datasets) {
        let version = deltaload_lake::table_version(&root, &name)
            .await
            .expect("version");
        assert!(version.is_some(), "{} was not created", name.as_str());
        // Readable with the one schema the rows of every writer share.
        deltaload_lake::table_rows(&root, &name, "*")
            .await
            .expect("rows");
    }
    let ledger = deltaload_lake::table_rows(&root, &TableName::Ledger, "location")
        .await
        .expect("ledger");
    assert_eq!(ledger.len(), 4, "{ledger:?}");
    let orders = deltaload_lake::table_rows(&root, &deltaload_tests::orders_table(), "order_id")
        .await
        .expect("orders");
    assert_eq!(orders.len(), 20, "every order once");
}

#[tokio::test(flavor = "multi_thread")]
async fn four_writers_racing_to_create_a_local_lake() {
    let sb = Sandbox::new();
    racing_creation(sb.root.clone()).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn four_writers_racing_to_create_a_lake_on_s3() {
    let stack = deltaload_tests::localstack::Stack::new(3, 30).await;
    racing_creation(stack.lake_root()).await;
}
