//! Objects larger than the memory budget reads whole, through `serve`: they
//! are downloaded (and expanded, when gzip) into the spill directory, read in
//! pieces and loaded like any other; one the spill directory cannot hold is
//! refused unread, recorded in the ledger with the reason.

use crate::serve_once;
use deltaload_lake::TableName;
use deltaload_tests::localstack::Stack;
use deltaload_tests::{orders_csv, stderr, stdout, Order};

/// An orders file of `n` orders from `first`, about 70 bytes each.
fn orders(first: u32, n: u32) -> String {
    let orders: Vec<Order> = (first..first + n)
        .map(|id| Order::new(id).customer(format!("C{id}")))
        .collect();
    orders_csv(&orders)
}

#[tokio::test(flavor = "multi_thread")]
async fn objects_beyond_the_budget_load_from_disk_and_one_without_room_is_refused_recorded() {
    let stack = Stack::new(1, 2).await;
    stack.put("in/plain.csv", orders(1, 600)).await;
    stack
        .put(
            "in/packed.csv.gz",
            deltaload_tests::gzip(&orders(1_001, 600)),
        )
        .await;
    stack.wait_for_messages(2).await;
    let spill = tempfile::tempdir().expect("spill dir");
    let dir = spill.path().to_str().expect("utf-8 path");
    let lake = stack.lake();
    let budget = ["--memory-budget", "64KiB", "--spill-dir", dir];
    let out = serve_once(&stack, &lake, "1", &budget);
    assert!(
        stdout(&out).starts_with("2 messages, 2 files loaded, 0 skipped, 0 refused"),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    let root = stack.lake_root();
    let ids = deltaload_lake::table_rows(&root, &deltaload_tests::orders_table(), "order_id")
        .await
        .expect("orders");
    assert_eq!(ids.len(), 1_200);
    assert_eq!(
        std::fs::read_dir(spill.path()).expect("spill dir").count(),
        0,
        "the downloaded objects and the runs are removed"
    );

    stack.put("in/roomless.csv", orders(5_001, 600)).await;
    stack.wait_for_messages(1).await;
    let mut tight = budget.to_vec();
    tight.extend(["--spill-space", "1KiB"]);
    let out = serve_once(&stack, &lake, "1", &tight);
    assert!(
        stdout(&out).starts_with("1 messages, 0 files loaded, 0 skipped, 1 refused"),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    let ledger = deltaload_lake::table_rows(&root, &TableName::Ledger, "location, status, reason")
        .await
        .expect("ledger");
    let roomless = ledger
        .iter()
        .find(|r| r[0].ends_with("in/roomless.csv"))
        .expect("the refused object in the ledger");
    assert_eq!(roomless[1], "refused");
    assert!(
        roomless[2].contains("spill directory of 1024 bytes"),
        "{roomless:?}"
    );
    assert_eq!(stack.pending(&stack.queue_url).await, 0, "acknowledged");
}
