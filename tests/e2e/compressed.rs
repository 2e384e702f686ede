//! Gzip-compressed change files, from S3 and from disk.

use crate::{deltaload, serve_once};
use deltaload_tests::localstack::Stack;
use deltaload_tests::{stderr, stdout, Sandbox, DAY1};

#[tokio::test(flavor = "multi_thread")]
async fn gzip_objects_load_like_plain_ones_and_damaged_ones_are_refused() {
    let stack = Stack::new(3, 30).await;
    stack
        .put("in/day1.csv.gz", deltaload_tests::gzip(DAY1))
        .await;
    let mut damaged = deltaload_tests::gzip(DAY1);
    damaged.truncate(40);
    stack.put("in/damaged.csv.gz", damaged).await;
    stack.wait_for_messages(2).await;
    let lake = stack.lake();
    let out = serve_once(&stack, &lake, "1", &[]);
    assert!(
        stdout(&out).starts_with(
            "2 messages, 1 files loaded, 0 skipped, 1 refused, 0 missing, 0 failed; \
             8 records: 1 rejected, 3 duplicates, 4 inserted"
        ),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    assert!(
        stderr(&out).contains("gzip content is damaged"),
        "{}",
        stderr(&out)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn load_expands_a_local_csv_gz() {
    let sb = Sandbox::new();
    let path = sb.file("day1.csv.gz", deltaload_tests::gzip(DAY1));
    assert!(path.exists());
    let out = deltaload(&sb, &["load", "raw/day1.csv.gz"], None);
    assert_eq!(
        stdout(&out),
        "raw/day1.csv.gz: 1 rejected, 0 updated, 4 added, table version 1\n",
        "{}",
        stderr(&out)
    );
    assert_eq!(sb.orders().await.len(), 4);
    let rejects = sb
        .rows(deltaload_tests::rejected_orders_table(), "order_id")
        .await;
    assert_eq!(rejects, [["1003"]]);
}

#[tokio::test(flavor = "multi_thread")]
async fn info_logs_never_print_row_contents() {
    let stack = Stack::new(3, 30).await;
    let marker = "SECRET-ROW-7781";
    stack
        .put(
            "in/rows.csv",
            format!(
                "{}1,{marker},placed,1.00,EUR,,2026-10-01T08:00:00\n2,{marker},placed,bad,EUR,,2026-10-01T08:00:00\n",
                deltaload_tests::HEADER
            ),
        )
        .await;
    stack.wait_for_messages(1).await;
    let lake = stack.lake();
    let out = serve_once(&stack, &lake, "1", &["--log", "info"]);
    assert!(
        stdout(&out).starts_with("1 messages, 1 files loaded"),
        "{}",
        stdout(&out)
    );
    assert!(stderr(&out).contains("loaded"), "info logs were written");
    assert!(!stderr(&out).contains(marker), "{}", stderr(&out));
    assert!(!stdout(&out).contains(marker));
}
