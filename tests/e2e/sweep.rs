//! `backfill`, `reconcile` and `status` against LocalStack: lost notifications
//! found and repaired, history re-announced without loading anything twice.

use deltaload_tests::localstack::Stack;
use deltaload_tests::{orders_csv, stderr, stdout, Order};

const EXE: &str = env!("CARGO_BIN_EXE_deltaload-faulty");

/// A change file with one new order.
fn one_order(id: usize) -> String {
    orders_csv(&[Order::new(id)])
}

/// `n` files spread over three prefixes under `root`, order ids from `first`.
fn files(root: &str, first: usize, n: usize) -> Vec<(String, String)> {
    (0..n)
        .map(|i| {
            let prefix = ["a", "b", "c/deep"][i % 3];
            (
                format!("{root}/{prefix}/f{:04}.csv", first + i),
                one_order(first + i),
            )
        })
        .collect()
}

fn run(stack: &Stack, args: &[&str]) -> std::process::Output {
    stack.cli(EXE, args)
}

fn serve_once(stack: &Stack) -> std::process::Output {
    crate::serve_once(stack, &stack.lake(), "1", &[])
}

#[tokio::test(flavor = "multi_thread")]
async fn reconcile_finds_exactly_the_lost_notifications_and_enqueue_repairs_them() {
    let stack = Stack::new(3, 30).await;
    stack.put_many(files("in", 0, 45)).await;
    stack.wait_for_messages(45).await;
    let out = serve_once(&stack);
    assert!(
        stdout(&out).contains("45 files loaded"),
        "{}\n{}",
        stdout(&out),
        stderr(&out)
    );
    // Five more objects whose notifications are lost.
    stack.put_many(files("in", 45, 5)).await;
    stack.drain(5).await;

    let at = format!("s3://{}/in", stack.landing);
    let lake = stack.lake();
    let out = run(&stack, &["reconcile", &at, "--lake", &lake]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let text = stdout(&out);
    let never: Vec<&str> = text
        .lines()
        .filter(|l| l.contains(": never loaded"))
        .collect();
    assert_eq!(never.len(), 5, "{text}");
    for i in 45..50 {
        assert!(
            text.contains(&format!("f{i:04}.csv: never loaded")),
            "{text}"
        );
    }
    assert!(
        text.contains("50 listed, 50 checked, 45 consistent, 5 never loaded"),
        "{text}"
    );

    let json = run(&stack, &["reconcile", &at, "--lake", &lake, "--json"]);
    let report: serde_json::Value = serde_json::from_slice(&json.stdout).expect("JSON report");
    assert_eq!(report["findings"].as_array().map(Vec::len), Some(5));
    assert_eq!(report["findings"][0]["state"], "never_loaded");

    let repair = run(
        &stack,
        &[
            "reconcile",
            &at,
            "--lake",
            &lake,
            "--enqueue",
            &stack.queue_url,
        ],
    );
    assert!(
        stdout(&repair).contains("5 enqueued for a reload"),
        "{}",
        stdout(&repair)
    );
    let out = serve_once(&stack);
    assert!(stdout(&out).contains("5 files loaded"), "{}", stderr(&out));
    let again = run(&stack, &["reconcile", &at, "--lake", &lake]);
    assert_eq!(again.status.code(), Some(0), "{}", stdout(&again));

    // A file corrected under the same key while its notification is lost.
    stack.put("in/a/f0000.csv", one_order(9000)).await;
    stack.drain(1).await;
    let changed = run(&stack, &["reconcile", &at, "--lake", &lake]);
    assert_eq!(changed.status.code(), Some(3));
    assert!(
        stdout(&changed).contains("f0000.csv: changed since it was loaded"),
        "{}",
        stdout(&changed)
    );

    let status = run(&stack, &["status", "--lake", &lake]);
    assert_eq!(status.status.code(), Some(0), "{}", stderr(&status));
    assert!(
        stdout(&status).contains("orders           50 row(s)"),
        "{}",
        stdout(&status)
    );
    assert!(
        stdout(&status).contains("unfinished loads: none"),
        "{}",
        stdout(&status)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn backfill_enqueues_what_the_ledger_lacks_once_and_selects_exactly() {
    let stack = Stack::new(3, 30).await;
    stack.put_many(files("old", 0, 6)).await;
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    let between = chrono::Utc::now().to_rfc3339();
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    stack.put_many(files("old", 6, 6)).await;
    stack.drain(12).await;
    let at = format!("s3://{}/old", stack.landing);
    let lake = stack.lake();
    let backfill = |extra: &[&str]| {
        let mut args = vec![
            "backfill",
            &at,
            "--queue",
            &stack.queue_url,
            "--lake",
            &lake,
        ];
        args.extend_from_slice(extra);
        run(&stack, &args)
    };

    let dry = backfill(&["--dry-run"]);
    assert_eq!(dry.status.code(), Some(0), "{}", stderr(&dry));
    assert_eq!(
        stdout(&dry),
        "12 listed, 12 selected, 0 already loaded, 12 would enqueue, 0 failed\n"
    );
    assert_eq!(
        stack.depth(&stack.queue_url).await,
        0,
        "a dry run sends nothing"
    );

    let selected = |extra: &[&str]| {
        let mut args = vec!["--dry-run"];
        args.extend_from_slice(extra);
        stdout(&backfill(&args))
    };
    assert!(selected(&["--until", &between]).starts_with("12 listed, 6 selected"));
    assert!(selected(&["--since", &between]).starts_with("12 listed, 6 selected"));
    assert!(selected(&["--match", "old/a/*.csv"]).starts_with("12 listed, 4 selected"));
    assert!(selected(&["--match", "old/c/*.csv"]).starts_with("12 listed, 0 selected"));
    assert!(selected(&["--match", "old/c/**/*.csv"]).starts_with("12 listed, 4 selected"));

    let first = backfill(&[]);
    assert_eq!(
        stdout(&first),
        "12 listed, 12 selected, 0 already loaded, 12 enqueued, 0 failed\n"
    );
    // Run again while the first run's messages wait: enqueued again, loaded once.
    let in_flight = backfill(&[]);
    assert!(
        stdout(&in_flight).contains(", 12 enqueued"),
        "{}",
        stdout(&in_flight)
    );
    let out = serve_once(&stack);
    assert!(
        stdout(&out).starts_with("24 messages, 12 files loaded, 12 skipped"),
        "{}\n{}",
        stdout(&out),
        stderr(&out)
    );
    let second = backfill(&[]);
    assert_eq!(
        stdout(&second),
        "12 listed, 12 selected, 12 already loaded, 0 enqueued, 0 failed\n"
    );
    assert_eq!(stack.depth(&stack.queue_url).await, 0);

    // --force reprocesses; nothing is newer, so orders stay as they are.
    let root = stack.lake_root();
    let before = deltaload_lake::table_rows(&root, &deltaload_tests::orders_table(), "*")
        .await
        .unwrap();
    let forced = backfill(&["--force", "--match", "old/a/*.csv"]);
    assert!(
        stdout(&forced).contains("4 enqueued"),
        "{}",
        stdout(&forced)
    );
    let out = serve_once(&stack);
    assert!(
        stdout(&out).contains("4 files loaded, 0 skipped"),
        "{}",
        stdout(&out)
    );
    let after = deltaload_lake::table_rows(&root, &deltaload_tests::orders_table(), "*")
        .await
        .unwrap();
    assert_eq!(after, before);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_backfill_of_2000_objects_streams_its_listing_and_shows_progress() {
    let stack = Stack::new(3, 30).await;
    let objects: Vec<(String, String)> = (0..2000)
        .map(|i| (format!("many/f{i:05}.csv"), one_order(i)))
        .collect();
    stack.put_many(objects).await;
    stack.drain(2000).await;
    let at = format!("s3://{}/many", stack.landing);
    let lake = stack.lake();
    let out = run(
        &stack,
        &[
            "backfill",
            &at,
            "--queue",
            &stack.queue_url,
            "--lake",
            &lake,
            "--rate",
            "0",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "2000 listed, 2000 selected, 0 already loaded, 2000 enqueued, 0 failed\n"
    );
    // One progress line per listed page of 1,000 (stderr is not a terminal here):
    // the first page is enqueued before the second is listed.
    let progress: Vec<String> = stderr(&out)
        .lines()
        .filter(|l| l.starts_with("backfill: "))
        .map(str::to_string)
        .collect();
    assert_eq!(
        progress,
        [
            "backfill: 1000 listed, 1000 selected, 0 already loaded, 1000 enqueued, 0 failed",
            "backfill: 2000 listed, 2000 selected, 0 already loaded, 2000 enqueued, 0 failed"
        ]
    );
    assert_eq!(stack.depth(&stack.queue_url).await, 2000);
}
