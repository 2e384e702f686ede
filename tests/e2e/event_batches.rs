//! The messages of one invocation loaded together: one commit per table, and a
//! file that breaks the batch fails only its own message.

use crate::other_engines::duplicate_order_1004;
use deltaload_aws::Handler;
use deltaload_lake::{table_version, Lake, TableName};
use deltaload_tests::localstack::Stack;
use deltaload_tests::{orders_csv, Order, Sandbox, DAY1, DAY2};
use serde_json::json;

/// Invokes the handler as Lambda does; returns the ids reported as failures.
async fn failures(handler: &Handler, messages: &[(&str, String)]) -> Vec<String> {
    let records: Vec<_> = messages
        .iter()
        .map(|(id, body)| json!({"messageId": id, "body": body}))
        .collect();
    let event = serde_json::from_value(json!({ "Records": records })).expect("SqsEvent");
    let mut ids: Vec<String> = handler
        .respond(event)
        .await
        .batch_item_failures
        .into_iter()
        .map(|f| f.item_identifier)
        .collect();
    ids.sort();
    ids
}

async fn versions(stack: &Stack) -> Vec<Option<u64>> {
    let mut out = Vec::new();
    for name in TableName::all(&deltaload_core::Spec::builtin().datasets) {
        out.push(
            table_version(&stack.lake_root(), &name)
                .await
                .expect("version"),
        );
    }
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn the_files_of_one_invocation_share_one_commit_per_table() {
    let stack = Stack::new(3, 30).await;
    stack.put("day1.csv", DAY1).await;
    stack.put("day2.csv", DAY2).await;
    stack
        .put(
            "day3.csv",
            orders_csv(&[Order::new(2001)
                .customer("C9")
                .amount("5.00")
                .updated_at("2026-10-05T08:00:00")]),
        )
        .await;
    let handler = stack
        .handler(Lake::open(&stack.lake_root()).await.expect("lake"))
        .await;
    let before = versions(&stack).await;
    let messages = [
        ("1", stack.created("day1.csv")),
        ("2", stack.created("day2.csv")),
        ("3", stack.created("day3.csv")),
        ("4", stack.created("day1.csv")),
    ];
    assert!(failures(&handler, &messages).await.is_empty());
    let after = versions(&stack).await;
    let commits: Vec<u64> = before
        .iter()
        .zip(&after)
        .map(|(b, a)| a.unwrap_or(0) - b.unwrap_or(0))
        .collect();
    // orders, rejected_orders, ledger (loading, then loaded), reconciliation
    assert_eq!(commits, [1, 1, 2, 1]);
    let recon = deltaload_lake::table_rows(
        &stack.lake_root(),
        &TableName::Reconciliation,
        "location, records, rejected, inserted, updated, stale",
    )
    .await
    .expect("reconciliation");
    let at = |key: &str| format!("s3://{}/{key}", stack.landing);
    assert_eq!(
        recon,
        [
            [
                at("day1.csv"),
                "8".into(),
                "1".into(),
                "4".into(),
                "0".into(),
                "0".into()
            ],
            [
                at("day2.csv"),
                "5".into(),
                "0".into(),
                "1".into(),
                "2".into(),
                "1".into()
            ],
            [
                at("day3.csv"),
                "1".into(),
                "0".into(),
                "1".into(),
                "0".into(),
                "0".into()
            ],
        ],
        "each file's figures as if loaded alone, in delivery order"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_file_that_breaks_the_batch_fails_only_its_own_message() {
    let stack = Stack::new(3, 30).await;
    // A local lake whose orders another writer broke: order 1004 twice.
    let sb = Sandbox::with_seed_files();
    let path = sb.dir.path().join("raw/a.csv");
    sb.load(&path, false).await;
    duplicate_order_1004(&sb);
    stack.put("touches-1004.csv", DAY2).await;
    stack
        .put(
            "elsewhere.csv",
            orders_csv(&[Order::new(5001)
                .customer("C9")
                .amount("5.00")
                .updated_at("2026-10-05T08:00:00")]),
        )
        .await;
    let handler = stack.handler(sb.lake().await).await;
    let messages = [
        ("broken", stack.created("touches-1004.csv")),
        ("fine", stack.created("elsewhere.csv")),
        ("test", json!({"Event": "s3:TestEvent"}).to_string()),
    ];
    assert_eq!(failures(&handler, &messages).await, ["broken"]);
    let ledger = sb.rows(TableName::Ledger, "location, status").await;
    let loaded: Vec<&str> = ledger
        .iter()
        .filter(|r| r[1] == "loaded")
        .map(|r| r[0].as_str())
        .collect();
    let elsewhere = format!("s3://{}/elsewhere.csv", stack.landing);
    assert!(loaded.contains(&elsewhere.as_str()), "{ledger:?}");
    assert!(
        !loaded.iter().any(|l| l.ends_with("touches-1004.csv")),
        "{ledger:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn serve_prints_each_batch_as_cloudwatch_emf_when_asked() {
    let stack = Stack::new(3, 30).await;
    stack.put("day1.csv", DAY1).await;
    stack.put("day2.csv", DAY2).await;
    let lake = stack.lake();
    let out = crate::serve_once(
        &stack,
        &lake,
        "2",
        &["--metrics-namespace", "deltaload-test"],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let docs: Vec<serde_json::Value> = text
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).expect("each EMF line is JSON"))
        .collect();
    assert!(!docs.is_empty(), "{text}");
    let sum = |name: &str| {
        docs.iter()
            .map(|d| d[name].as_u64().expect(name))
            .sum::<u64>()
    };
    assert_eq!(
        (
            sum("FilesLoaded"),
            sum("RecordsRead"),
            sum("RecordsRejected")
        ),
        (2, 13, 1)
    );
    // Which day comes first is up to the queue; the totals of inserts are not.
    assert_eq!(sum("RowsInserted"), 5);
    assert_eq!(sum("RowsUpdated") + sum("RowsStale"), 3);
    for d in &docs {
        let directive = &d["_aws"]["CloudWatchMetrics"][0];
        assert_eq!(directive["Namespace"], "deltaload-test");
        assert_eq!(directive["Dimensions"], json!([["table"], []]));
        assert_eq!(d["table"], "orders");
        assert!(d["_aws"]["Timestamp"].as_i64().is_some());
    }
    assert!(
        text.lines().last().is_some_and(|l| l.starts_with(
            "2 messages, 2 files loaded, 0 skipped, 0 refused, 0 missing, 0 failed; 13 records: 1 rejected"
        )),
        "{text}"
    );
}

/// The deadline margin: with the deadline reached, no message is read and no
/// load started, all come back; a margin larger than the invocation's time (30 s
/// for a 10 s invocation, as a 30 s function timeout with the 30 s default gave)
/// keeps only a quarter of it, so the invocation still loads.
#[tokio::test(flavor = "multi_thread")]
async fn near_the_invocation_deadline_nothing_is_started_and_all_comes_back() {
    let stack = Stack::new(3, 30).await;
    stack.put("day1.csv", DAY1).await;
    let sb = Sandbox::new();
    let handler = stack
        .handler(sb.lake().await)
        .await
        .with_deadline_margin(std::time::Duration::from_secs(30));
    let messages = [
        ("a", stack.created("day1.csv")),
        ("b", stack.created("day1.csv")),
    ];
    let records: Vec<_> = messages
        .iter()
        .map(|(id, body)| json!({"messageId": id, "body": body}))
        .collect();
    let event = || serde_json::from_value(json!({ "Records": records })).expect("SqsEvent");
    let now = std::time::Instant::now();
    let response = handler.respond_until(event(), Some(now)).await;
    let failed: Vec<String> = response
        .batch_item_failures
        .into_iter()
        .map(|f| f.item_identifier)
        .collect();
    assert_eq!(failed, ["a", "b"], "both left for redelivery");
    assert!(sb.rows(TableName::Ledger, "location").await.is_empty());
    // 10 s in hand: the 30 s margin keeps 2.5 s of them, and the event loads.
    let soon = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let response = handler.respond_until(event(), Some(soon)).await;
    assert!(response.batch_item_failures.is_empty());
    assert_eq!(sb.rows(TableName::Ledger, "status").await, [["loaded"]]);
}
