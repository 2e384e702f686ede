//! The Lambda's lake, opened in the background from its start: the first batch
//! reads its objects meanwhile and waits for the lake only to load them; a lake
//! that cannot be opened fails the batch's messages, and the next batch opens
//! it again.

use deltaload_aws::handler::DEFAULT_DEADLINE_MARGIN;
use deltaload_aws::{Handler, Settings, Sources};
use deltaload_lake::{lake_url, table_rows, Engine, TableName};
use deltaload_tests::localstack::{sdk_config, Stack};

/// An SQS event announcing `key` in `bucket`, as message `id`.
fn event(id: &str, bucket: &str, key: &str) -> aws_lambda_events::event::sqs::SqsEvent {
    let body = serde_json::json!({"Records": [{
        "eventName": "ObjectCreated:Put",
        "s3": {"bucket": {"name": bucket}, "object": {"key": key}},
    }]});
    let event = serde_json::json!({"Records": [{"messageId": id, "body": body.to_string()}]});
    serde_json::from_value(event).expect("SqsEvent")
}

async fn failures(handler: &Handler, event: aws_lambda_events::event::sqs::SqsEvent) -> usize {
    handler.respond(event).await.batch_item_failures.len()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_lake_opened_in_the_background_loads_and_a_failed_opening_is_tried_again() {
    let stack = Stack::new(3, 30).await;
    stack
        .put(
            "in/a.csv",
            deltaload_tests::orders_csv(&[deltaload_tests::Order::new(1)]),
        )
        .await;
    // The lake's directory cannot be made while a file stands in its way.
    let dir = tempfile::tempdir().expect("temp dir");
    let blocker = dir.path().join("lakes");
    std::fs::write(&blocker, "not a directory").expect("blocker");
    let lake = blocker.join("lake");
    let settings = Settings {
        lake: lake.to_string_lossy().into_owned(),
        sources: Sources::parse(&[format!("s3://{}", stack.landing)]).expect("sources"),
        max_object_bytes: 1 << 20,
        endpoint_url: Some(stack.endpoint.clone()),
        metrics_namespace: None,
        deadline_margin: DEFAULT_DEADLINE_MARGIN,
        spec: None,
        engine: Engine::default(),
        memory_budget: deltaload_lake::MemoryBudget::unlimited(),
        glue_database: None,
        auto_compact: deltaload_lake::AutoCompact::default(),
    };
    let config = sdk_config(&stack.endpoint).await;
    let spec = deltaload_core::Spec::builtin();
    let handler = Handler::opening_in_background(&settings, &spec, &config).expect("handler");

    let announced = || event("m1", &stack.landing, "in/a.csv");
    assert_eq!(failures(&handler, announced()).await, 1, "no lake: retried");
    std::fs::remove_file(&blocker).expect("blocker removed");
    assert_eq!(
        failures(&handler, announced()).await,
        0,
        "opened by the next batch"
    );
    let root = lake_url(&settings.lake).expect("lake root");
    let ledger = table_rows(&root, &TableName::Ledger, "status")
        .await
        .expect("ledger");
    assert_eq!(ledger, [["loaded"]]);
    let orders = table_rows(&root, &deltaload_tests::orders_table(), "order_id")
        .await
        .expect("orders");
    assert_eq!(orders, [["1"]]);
}
