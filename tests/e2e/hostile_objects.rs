//! Objects and messages a landing zone may hold by mistake or malice.

use crate::serve_once;
use deltaload_lake::TableName;
use deltaload_tests::localstack::Stack;
use deltaload_tests::{orders_csv, stderr, stdout, Order, DAY1, DAY2, HEADER};

#[tokio::test(flavor = "multi_thread")]
async fn odd_keys_zero_bytes_long_lines_and_huge_bodies() {
    let stack = Stack::new(1, 2).await;
    let odd = "in/a b+c é%2B.csv";
    stack.put(odd, DAY1).await;
    stack.put("in/zero.csv", Vec::new()).await;
    let long_line = format!(
        "{HEADER}1,{},placed,1.00,EUR,,2026-10-01T08:00:00\n2,C,placed,x{},EUR,,2026-10-01T08:00:00\n",
        "C".repeat(1 << 20),
        "9".repeat(10 << 20)
    );
    stack.put("in/long.csv", long_line).await;
    stack.wait_for_messages(3).await;
    // A 64 KB body that is not an event.
    stack.send(&"x".repeat(64 * 1024 - 1)).await;
    let lake = stack.lake();
    let out = serve_once(&stack, &lake, "1", &[]);
    assert!(
        stdout(&out)
            .starts_with("4 messages, 2 files loaded, 0 skipped, 1 refused, 0 missing, 1 failed"),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    let root = stack.lake_root();
    let ledger = deltaload_lake::table_rows(&root, &TableName::Ledger, "location, status, reason")
        .await
        .unwrap();
    let at = |key: &str| format!("s3://{}/{key}", stack.landing);
    let row = |key: &str| ledger.iter().find(|r| r[0] == at(key)).cloned();
    assert_eq!(
        row(odd).map(|r| r[1].clone()),
        Some("loaded".into()),
        "{ledger:?}"
    );
    let zero = row("in/zero.csv").expect("zero-byte object in the ledger");
    assert_eq!(zero[1], "refused");
    assert!(zero[2].contains("empty"), "{zero:?}");
    // The 1 MB customer id loads; the 10 MB amount is one reject with its reason.
    let rejects = deltaload_lake::table_rows(
        &root,
        &deltaload_tests::rejected_orders_table(),
        "source_file, line_number, length(raw_line), reason",
    )
    .await
    .unwrap();
    let long: Vec<_> = rejects
        .iter()
        .filter(|r| r[0] == at("in/long.csv"))
        .collect();
    assert_eq!(
        long.len(),
        1,
        "{:?}",
        long.iter().map(|r| &r[3]).collect::<Vec<_>>()
    );
    assert_eq!(long[0][1], "3");
    assert!(long[0][3].starts_with("amount"), "{}", &long[0][3][..80]);
    assert!(
        long[0][3].len() < 200,
        "the reason quotes a cut value, the raw line keeps it all"
    );
    assert!(long[0][2].parse::<usize>().unwrap() > 10 << 20);
    // The poison body goes to the dead-letter queue on its next receive.
    stack
        .wait_visible_on(&[&stack.queue_url, &stack.dlq_url], 1)
        .await;
    serve_once(&stack, &lake, "1", &[]);
    assert_eq!(stack.depth(&stack.dlq_url).await, 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_object_over_the_size_limit_is_refused_unread_recorded_and_acknowledged() {
    let stack = Stack::new(1, 2).await;
    stack.put("in/day1.csv", DAY1).await;
    stack.wait_for_messages(1).await;
    let lake = stack.lake();
    let out = serve_once(&stack, &lake, "1", &["--max-object-bytes", "100"]);
    assert!(
        stdout(&out)
            .starts_with("1 messages, 0 files loaded, 0 skipped, 1 refused, 0 missing, 0 failed"),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    assert!(
        stderr(&out).contains("larger than the configured limit"),
        "{}",
        stderr(&out)
    );
    // Recorded refused, with the reason, under the version's ETag.
    let ledger = deltaload_lake::table_rows(
        &stack.lake_root(),
        &TableName::Ledger,
        "status, reason, content_id, size",
    )
    .await
    .unwrap();
    assert_eq!(ledger.len(), 1, "{ledger:?}");
    assert_eq!(ledger[0][0], "refused");
    assert!(
        ledger[0][1].contains("larger than the configured limit of 100 bytes"),
        "{ledger:?}"
    );
    assert!(ledger[0][2].starts_with("unread:etag:"), "{ledger:?}");
    assert_eq!(ledger[0][3], DAY1.len().to_string());
    assert_eq!(
        stack.pending(&stack.queue_url).await,
        0,
        "acknowledged, not retried"
    );
    assert_eq!(stack.depth(&stack.dlq_url).await, 0);
}

/// S3 keys are plain strings: `in/../out/x.csv` is its own object under `in/`, not
/// `out/x.csv`. The handler reads it under its literal name (never a normalised
/// one, which could reach outside the allowed prefix), and a quote in a key does
/// not break the table predicates that name the file.
#[tokio::test(flavor = "multi_thread")]
async fn dot_segments_and_quotes_in_keys_are_read_literally() {
    let stack = Stack::new(1, 2).await;
    let outside = "out/day.csv";
    stack
        .put(outside, orders_csv(&[Order::new(9999).customer("C99")]))
        .await;
    let dotted = "in/../out/day.csv";
    stack.put(dotted, DAY2).await;
    let quoted = "in/./o'brien ../day.csv";
    stack.put(quoted, DAY1).await;
    stack.wait_for_messages(3).await;
    let lake = stack.lake();
    let only_in = format!("s3://{}/in/", stack.landing);
    let out = serve_once(&stack, &lake, "1", &["--source", &only_in]);
    assert!(
        stdout(&out)
            .starts_with("3 messages, 2 files loaded, 0 skipped, 1 refused, 0 missing, 0 failed"),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    let root = stack.lake_root();
    let at = |key: &str| format!("s3://{}/{key}", stack.landing);
    let mut ledger = deltaload_lake::table_rows(&root, &TableName::Ledger, "location, status")
        .await
        .unwrap();
    // The two messages may come in one receive or in two, so by load time the
    // rows come in either order.
    ledger.sort();
    let expected = vec![
        vec![at(dotted), "loaded".to_string()],
        vec![at(quoted), "loaded".to_string()],
    ];
    assert_eq!(ledger, expected);
    let orders =
        deltaload_lake::table_rows(&root, &deltaload_tests::orders_table(), "order_id, status")
            .await
            .unwrap();
    let ids: Vec<&str> = orders.iter().map(|r| r[0].as_str()).collect();
    assert_eq!(ids, ["1001", "1002", "1004", "1005", "1006"], "{orders:?}");
    let rejects = deltaload_lake::table_rows(
        &root,
        &deltaload_tests::rejected_orders_table(),
        "source_file, order_id",
    )
    .await
    .unwrap();
    assert_eq!(rejects, vec![vec![at(quoted), "1003".to_string()]]);
    // The listing names the same objects: nothing is reported missing or changed.
    let check = stack.cli(
        env!("CARGO_BIN_EXE_deltaload-faulty"),
        &["reconcile", &only_in, "--lake", &lake],
    );
    assert_eq!(check.status.code(), Some(0), "{}", stdout(&check));
}

/// AWS's own example event names `versionId: "version"`, which S3 cannot read
/// (NoSuchVersion on S3 and LocalStack): acknowledged like a deleted object,
/// in one short warning naming the object, the version and S3's words, never
/// the SDK's dump of the raw response.
#[tokio::test(flavor = "multi_thread")]
async fn a_version_s3_does_not_have_is_acknowledged_in_one_short_line() {
    let stack = Stack::new(1, 2).await;
    stack.put("in/day1.csv", DAY1).await;
    stack.drain(1).await;
    let body = serde_json::json!({"Records": [{
        "eventName": "ObjectCreated:Put",
        "s3": {"bucket": {"name": stack.landing},
               "object": {"key": "in/day1.csv", "versionId": "version"}},
    }]})
    .to_string();
    stack.send(&body).await;
    let lake = stack.lake();
    let out = serve_once(&stack, &lake, "1", &["--log", "info"]);
    let err = stderr(&out);
    assert!(
        stdout(&out)
            .starts_with("1 messages, 0 files loaded, 0 skipped, 0 refused, 1 missing, 0 failed"),
        "{}{err}",
        stdout(&out)
    );
    let warning = err
        .lines()
        .find(|l| l.contains("does not exist: acknowledged"))
        .unwrap_or_else(|| panic!("no warning in {err}"));
    assert!(warning.contains("version=version"), "{warning}");
    assert!(
        warning.contains("S3 GetObject: NoSuchVersion (HTTP 404)"),
        "{warning}"
    );
    assert!(
        warning.len() < 400,
        "{} characters: {warning}",
        warning.len()
    );
    assert!(
        !err.contains("SdkBody") && !err.contains("Unhandled"),
        "{err}"
    );
    assert_eq!(stack.depth(&stack.dlq_url).await, 0);
}
