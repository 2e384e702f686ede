//! The event-driven path against LocalStack: S3 notifications on SQS, tables on S3.

use deltaload_lake::{table_rows, TableName};
use deltaload_tests::localstack::Stack;
use deltaload_tests::{stderr, stdout, DAY1, DAY2};

const EXE: &str = env!("CARGO_BIN_EXE_deltaload-faulty");

/// `deltaload serve --once` over the stack's queue, lake and landing bucket.
fn serve_args(stack: &Stack, wait: &str, extra: &[&str]) -> Vec<String> {
    let source = format!("s3://{}", stack.landing);
    let extra: Vec<&str> = ["--source", &source]
        .into_iter()
        .chain(extra.iter().copied())
        .collect();
    stack.serve_args(&stack.lake(), wait, &extra)
}

fn serve_once(stack: &Stack) -> std::process::Output {
    let args = serve_args(stack, "2", &[]);
    stack.cli(EXE, &args.iter().map(String::as_str).collect::<Vec<_>>())
}

#[tokio::test(flavor = "multi_thread")]
async fn seed_uploads_through_s3_events_end_with_five_orders_and_skip_identical_reuploads() {
    let stack = Stack::new(3, 30).await;
    stack.put("raw/changes/2026-10-03.csv", DAY1).await;
    stack.put("raw/changes/2026-10-04.csv", DAY2).await;
    stack.put("raw/changes/2026-10-04.csv", DAY2).await;
    stack.put("raw/changes/2026-10-03.csv", DAY1).await;
    let out = serve_once(&stack);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // Which day is merged first is up to the queue; the inserts are not.
    assert!(
        stdout(&out).starts_with(
            "4 messages, 2 files loaded, 2 skipped, 0 refused, 0 missing, 0 failed; \
             13 records: 1 rejected, 4 duplicates, 5 inserted, "
        ),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    let root = stack.lake_root();
    let orders = table_rows(&root, &deltaload_tests::orders_table(), "order_id, status")
        .await
        .unwrap();
    let statuses: Vec<String> = orders.iter().map(|r| r.join(" ")).collect();
    assert_eq!(
        statuses,
        [
            "1001 shipped",
            "1002 cancelled",
            "1004 shipped",
            "1005 cancelled",
            "1006 shipped"
        ]
    );
    let rejects = table_rows(
        &root,
        &deltaload_tests::rejected_orders_table(),
        "source_file, order_id",
    )
    .await
    .unwrap();
    assert_eq!(
        rejects,
        vec![vec![
            format!("s3://{}/raw/changes/2026-10-03.csv", stack.landing),
            "1003".to_string()
        ]]
    );
    let ledger = table_rows(&root, &TableName::Ledger, "status, etag, version_id")
        .await
        .unwrap();
    assert_eq!(ledger.len(), 2, "one row per file version: {ledger:?}");
    assert!(
        ledger
            .iter()
            .all(|r| r[0] == "loaded" && r[1] != "NULL" && r[2] != "NULL"),
        "{ledger:?}"
    );
    assert_eq!(
        stack.depth(&stack.queue_url).await,
        0,
        "every message deleted"
    );

    let shown = stack.cli(EXE, &["show", "orders", "--lake", &stack.lake()]);
    assert!(stdout(&shown).contains("5 row(s)"), "{}", stderr(&shown));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_redelivered_event_changes_nothing_and_a_fixed_file_under_a_refused_key_loads() {
    let stack = Stack::new(3, 30).await;
    stack.put("day.csv", "order_id,status\n1,x\n").await;
    let out = serve_once(&stack);
    assert_eq!(
        stdout(&out),
        "1 messages, 0 files loaded, 0 skipped, 1 refused, 0 missing, 0 failed; \
         0 records: 0 rejected, 0 duplicates, 0 inserted, 0 updated, 0 stale\n",
        "{}",
        stderr(&out)
    );
    stack.put("day.csv", DAY1).await;
    let out = serve_once(&stack);
    assert_eq!(
        stdout(&out),
        "1 messages, 1 files loaded, 0 skipped, 0 refused, 0 missing, 0 failed; \
         8 records: 1 rejected, 3 duplicates, 4 inserted, 0 updated, 0 stale\n",
        "{}",
        stderr(&out)
    );
    // The same notification again, as an at-least-once queue may deliver it.
    let body = format!(
        r#"{{"Records":[{{"eventName":"ObjectCreated:Put","s3":{{"bucket":{{"name":"{}"}},"object":{{"key":"day.csv"}}}}}}]}}"#,
        stack.landing
    );
    stack.send(&body).await;
    let before = table_rows(&stack.lake_root(), &deltaload_tests::orders_table(), "*")
        .await
        .unwrap();
    let out = serve_once(&stack);
    assert_eq!(
        stdout(&out),
        "1 messages, 0 files loaded, 1 skipped, 0 refused, 0 missing, 0 failed; \
         0 records: 0 rejected, 0 duplicates, 0 inserted, 0 updated, 0 stale\n",
        "{}",
        stderr(&out)
    );
    assert_eq!(
        table_rows(&stack.lake_root(), &deltaload_tests::orders_table(), "*")
            .await
            .unwrap(),
        before
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_poison_message_rests_in_the_dead_letter_queue_after_max_receives() {
    let stack = Stack::new(2, 1).await;
    stack.send("this is not an S3 event").await;
    for _ in 0..3 {
        let out = serve_once(&stack);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        if stack.depth(&stack.dlq_url).await == 1 {
            break;
        }
        // Received and failed: it comes back after its 1 s timeout.
        stack
            .wait_visible_on(&[&stack.queue_url, &stack.dlq_url], 1)
            .await;
    }
    assert_eq!(
        stack.depth(&stack.dlq_url).await,
        1,
        "the poison message is in the dead-letter queue"
    );
    assert_eq!(stack.depth(&stack.queue_url).await, 0);
}

/// A change file of `n` orders from `first`, all changed at minute `minute` of 2026-10-01.
fn generated_at(first: i64, n: i64, minute: i64) -> String {
    let mut text = deltaload_tests::HEADER.to_string();
    for id in first..first + n {
        text.push_str(&format!(
            "{id},C{},placed,{}.00,EUR,2026-10-01T00:00:00,2026-10-01T{:02}:{:02}:00\n",
            id % 7,
            id % 100,
            minute / 60,
            minute % 60
        ));
    }
    text
}

/// `serve` gathers receives (10 messages each) into one batch of up to
/// `--batch-size`: 45 files make one commit on the orders table, and every
/// message is deleted (10 per delete request).
#[tokio::test(flavor = "multi_thread")]
async fn serve_loads_many_receives_as_one_batch_and_deletes_them_all() {
    let stack = Stack::new(10, 60).await;
    let files: Vec<(String, String)> = (0..45i64)
        .map(|i| (format!("many/f{i:03}.csv"), generated_at(i * 10, 10, i)))
        .collect();
    stack.put_many(files).await;
    stack.wait_for_messages(45).await;
    let args = serve_args(&stack, "2", &["--batching-window", "5"]);
    let out = stack.cli(EXE, &args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let root = stack.lake_root();
    let recon = table_rows(&root, &TableName::Reconciliation, "orders_version")
        .await
        .unwrap();
    assert_eq!(recon.len(), 45, "every file loaded");
    let versions: std::collections::BTreeSet<&String> = recon.iter().map(|r| &r[0]).collect();
    assert_eq!(
        versions.len(),
        1,
        "one batch, one orders commit: {versions:?}"
    );
    assert_eq!(
        stack.pending(&stack.queue_url).await,
        0,
        "every message deleted"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn four_consumers_with_every_event_delivered_twice_load_every_file_once() {
    let stack = Stack::new(10, 5).await;
    // 200 files over overlapping order ranges: later minutes win where they overlap.
    let files: Vec<(String, String)> = (0..200i64)
        .map(|i| (format!("burst/f{i:03}.csv"), generated_at(i * 5, 10, i)))
        .collect();
    stack.put_many(files.clone()).await;
    stack.wait_for_messages(200).await;
    // Every notification delivered a second time.
    for chunk in files.chunks(10) {
        let bodies: Vec<String> = chunk.iter().map(|(key, _)| stack.created(key)).collect();
        stack.send_many(&bodies).await;
    }
    let args = serve_args(&stack, "2", &["--batch-size", "10"]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    for _round in 0..20 {
        let outs = std::thread::scope(|s| {
            let consumers: Vec<_> = (0..4).map(|_| s.spawn(|| stack.cli(EXE, &args))).collect();
            consumers
                .into_iter()
                .map(|c| c.join().expect("consumer"))
                .collect::<Vec<_>>()
        });
        for out in &outs {
            assert_eq!(out.status.code(), Some(0), "{}", stderr(out));
        }
        if stack.pending(&stack.queue_url).await == 0 {
            break;
        }
        // What a consumer left in flight comes back after the 5 s timeout.
        stack.wait_for_messages(1).await;
    }
    let root = stack.lake_root();
    let ledger = table_rows(&root, &TableName::Ledger, "location, status")
        .await
        .unwrap();
    assert_eq!(ledger.len(), 200, "every file in the ledger once");
    assert!(ledger.iter().all(|r| r[1] == "loaded"), "{ledger:?}");
    let orders = table_rows(
        &root,
        &deltaload_tests::orders_table(),
        "order_id, updated_at",
    )
    .await
    .unwrap();
    assert_eq!(orders.len(), 1005, "orders 0..1005 once each");
    for row in &orders {
        let id: i64 = row[0].parse().unwrap();
        let newest = (id / 5).min(199);
        assert_eq!(
            row[1],
            format!("2026-10-01T{:02}:{:02}:00Z", newest / 60, newest % 60),
            "order {id} holds its newest change"
        );
    }
    let recon = table_rows(&root, &TableName::Reconciliation, "balanced, records")
        .await
        .unwrap();
    assert_eq!(recon.len(), 200);
    assert!(
        recon.iter().all(|r| r[0] == "true" && r[1] == "10"),
        "{recon:?}"
    );
    assert_eq!(stack.depth(&stack.dlq_url).await, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_batch_in_flight_stays_invisible_past_the_visibility_timeout() {
    let stack = Stack::new(5, 2).await;
    stack.send("held").await;
    let receive = |wait: i32| {
        stack
            .sqs
            .receive_message()
            .queue_url(&stack.queue_url)
            .wait_time_seconds(wait)
            .send()
    };
    let first = receive(2)
        .await
        .expect("receive")
        .messages
        .unwrap_or_default();
    assert_eq!(first.len(), 1);
    // While the extension runs, 2.5 timeouts pass and nobody else sees the
    // message, however often they ask.
    let receipts = first
        .iter()
        .filter_map(|m| m.receipt_handle.clone())
        .collect();
    let extender =
        deltaload_aws::consumer::Extender::start(&stack.sqs, &stack.queue_url, receipts, 2);
    let until = std::time::Instant::now() + std::time::Duration::from_millis(5000);
    let mut held = 0;
    while std::time::Instant::now() < until {
        held += receive(1).await.expect("receive").messages().len();
    }
    let extensions = extender.stop();
    assert_eq!(held, 0, "the message reappeared while its load was running");
    assert!(extensions >= 3, "{extensions} extensions in 5 s");
    // Once the extension stops, the message comes back after the timeout.
    let back = receive(5)
        .await
        .expect("receive")
        .messages
        .unwrap_or_default();
    assert_eq!(
        back.len(),
        1,
        "the message did not come back after the extension stopped"
    );
}
