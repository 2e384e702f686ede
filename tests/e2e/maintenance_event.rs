//! The function invoked with the template's scheduled maintenance event,
//! against LocalStack: it maintains the lake as `deltaload maintain` does
//! (the small files of the shared tables compacted, the rows unchanged), and
//! SQS batches still load after it.

use deltaload_aws::maintenance::MAINTENANCE_EVENT;
use deltaload_lake::Lake;
use deltaload_tests::lake_state;
use deltaload_tests::localstack::Stack;
use deltaload_tests::{orders_csv, Order};
use serde_json::{json, Value};

/// Invokes `handler` with an SQS batch of one message announcing `key`.
async fn load_one(handler: &deltaload_aws::Handler, stack: &Stack, key: &str) {
    let event = json!({"Records": [{"messageId": key, "body": stack.created(key)}]});
    let response = handler.invoke(event, None).await.expect("a batch response");
    assert_eq!(
        response["batchItemFailures"],
        json!([]),
        "{key}: {response}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_scheduled_maintenance_event_compacts_the_lake_and_loads_go_on() {
    let stack = Stack::new(3, 30).await;
    let lake = Lake::open(&stack.lake_root()).await.expect("lake");
    let handler = stack.handler(lake).await;
    // One file per batch: each batch adds a small file to every table.
    for day in 1..=6u32 {
        let key = format!("in/day-{day}.csv");
        stack.put(&key, orders_csv(&[Order::new(day)])).await;
        load_one(&handler, &stack, &key).await;
    }
    let before = lake_state(&stack.lake_root(), &stack.landing, "<landing>").await;

    let event: Value = serde_json::from_str(MAINTENANCE_EVENT).expect("JSON");
    let done = handler.invoke(event, None).await.expect("maintained");
    let table = |name: &str| -> Value {
        let tables = done["maintained"].as_array().expect("tables");
        (tables.iter().find(|t| t["table"] == name).cloned())
            .unwrap_or_else(|| panic!("{name} not in {done}"))
    };
    for name in ["ledger", "reconciliation"] {
        let t = table(name);
        assert!(t["files_before"].as_u64() >= Some(6), "{t}");
        assert_eq!(t["files_after"], 1, "{name}'s small files compacted: {t}");
        assert_eq!(t["skipped"], false, "{t}");
    }
    assert_eq!(
        lake_state(&stack.lake_root(), &stack.landing, "<landing>").await,
        before,
        "maintenance changes no row"
    );

    // The next batch loads into the maintained lake.
    stack
        .put("in/day-7.csv", orders_csv(&[Order::new(7)]))
        .await;
    load_one(&handler, &stack, "in/day-7.csv").await;
    let after = lake_state(&stack.lake_root(), &stack.landing, "<landing>").await;
    assert_ne!(after, before);
}
