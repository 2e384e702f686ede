//! The event handler's failures, message by message: a mixed batch fails only its
//! malformed message, an unreachable S3 only the messages that needed it, and a
//! read error names the object and the retry.

use deltaload_aws::s3::S3Reader;
use deltaload_aws::{Handler, Sources};
use deltaload_lake::{table_rows, Lake, TableName};
use deltaload_tests::localstack::Stack;
use deltaload_tests::DAY1;

/// Invokes the handler the way Lambda does, with a JSON `SqsEvent`, and returns
/// the ids of the messages it reports as batch item failures.
async fn failed_ids(handler: &Handler, event: &str) -> Vec<String> {
    let event: aws_lambda_events::event::sqs::SqsEvent =
        serde_json::from_str(event).expect("SqsEvent fixture");
    let response = handler.respond(event).await;
    response
        .batch_item_failures
        .into_iter()
        .map(|f| f.item_identifier)
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_mixed_batch_fails_only_the_malformed_message() {
    let stack = Stack::new(3, 30).await;
    stack.put("good.csv", DAY1).await;
    stack.put("bad-header.csv", "order_id,coupon\n1,x\n").await;
    let record = |key: &str| {
        format!(
            r#"{{\"Records\":[{{\"eventName\":\"ObjectCreated:Put\",\"s3\":{{\"bucket\":{{\"name\":\"{}\"}},\"object\":{{\"key\":\"{key}\"}}}}}}]}}"#,
            stack.landing
        )
    };
    let event = format!(
        r#"{{"Records":[
          {{"messageId":"good","body":"{}"}},
          {{"messageId":"refused","body":"{}"}},
          {{"messageId":"test","body":"{{\"Service\":\"Amazon S3\",\"Event\":\"s3:TestEvent\"}}"}},
          {{"messageId":"malformed","body":"not json"}},
          {{"messageId":"missing","body":"{}"}},
          {{"messageId":"other-bucket","body":"{}"}}
        ]}}"#,
        record("good.csv"),
        record("bad-header.csv"),
        record("gone.csv"),
        record("good.csv").replace(&stack.landing, "someone-elses-bucket"),
    );
    let lake = Lake::open(&stack.lake_root()).await.expect("lake");
    let handler = stack.handler(lake).await;
    assert_eq!(failed_ids(&handler, &event).await, ["malformed"]);
    let orders = table_rows(
        &stack.lake_root(),
        &deltaload_tests::orders_table(),
        "order_id",
    )
    .await
    .unwrap();
    assert_eq!(orders.len(), 4);
    let ledger = table_rows(&stack.lake_root(), &TableName::Ledger, "location, status")
        .await
        .unwrap();
    assert_eq!(ledger.len(), 2, "{ledger:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unreachable_s3_fails_only_the_messages_that_needed_it() {
    // A lake on the local disk and an S3 endpoint nobody listens on: a read error
    // is transient, so that message is retried; the test event is still acknowledged.
    let sb = deltaload_tests::Sandbox::new();
    let config = deltaload_tests::localstack::sdk_config("http://127.0.0.1:9").await;
    let client = deltaload_aws::s3::s3_client(&config, Some("http://127.0.0.1:9"));
    let handler = Handler::new(
        sb.lake().await,
        S3Reader::new(client, 1 << 20),
        Sources::default(),
    );
    let event = r#"{"Records":[
        {"messageId":"read","body":"{\"Records\":[{\"eventName\":\"ObjectCreated:Put\",\"s3\":{\"bucket\":{\"name\":\"b\"},\"object\":{\"key\":\"a.csv\"}}}]}"},
        {"messageId":"test","body":"{\"Event\":\"s3:TestEvent\"}"}
    ]}"#;
    assert_eq!(failed_ids(&handler, event).await, ["read"]);
    assert!(sb.rows(TableName::Ledger, "location").await.is_empty());
}

/// A read that gets no answer says so in a line a person can act on: the
/// operation, the object and its version, why, and that it will be retried;
/// the SDK's error stays the source, for debug logs.
#[tokio::test(flavor = "multi_thread")]
async fn a_read_error_names_the_object_and_the_retry_in_one_line() {
    let config = deltaload_tests::localstack::sdk_config("http://127.0.0.1:9").await;
    let config = config
        .into_builder()
        .retry_config(aws_config::retry::RetryConfig::disabled())
        .build();
    let client = deltaload_aws::s3::s3_client(&config, Some("http://127.0.0.1:9"));
    let object = deltaload_aws::event::ObjectRef {
        bucket: "landing".to_string(),
        key: "in/a.csv".to_string(),
        version_id: Some("v7".to_string()),
        size: None,
        etag: None,
    };
    let err = S3Reader::new(client, 1 << 20)
        .fetch(&object)
        .await
        .expect_err("nobody listens on port 9");
    let text = err.to_string();
    assert!(
        text.starts_with(
            "reading s3://landing/in/a.csv (version v7): S3 GetObject: dispatch failure"
        ),
        "{text}"
    );
    assert!(text.contains("the message will be retried"), "{text}");
    assert!(text.len() < 400 && !text.contains('{'), "{text}");
    assert!(
        std::error::Error::source(&err).is_some(),
        "the SDK's error is kept"
    );
}
