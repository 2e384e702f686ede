//! S3 events of a CSV, a JSON Lines and a Parquet dataset handled in one
//! batch through LocalStack, deletes among them, one delete arriving before
//! the (older) upsert it overrides, which then stays deleted.

use crate::dataset_events::receive;
use crate::deletes::{file_bytes, Change, INVENTORY};
use deltaload_core::Spec;
use deltaload_lake::{table_rows, Lake, TableName};
use deltaload_tests::localstack::Stack;

/// Three datasets: the DMS example's customers (CSV), inventory as JSON
/// Lines, and the same columns as Parquet (`stock`).
fn spec_text(bucket: &str) -> String {
    let customers = include_str!("../../examples/cdc/spec.toml")
        .replace("s3://landing/", &format!("s3://{bucket}/"));
    let columns = INVENTORY;
    format!(
        "{customers}\n[[dataset]]\nname = \"inventory\"\nformat = \"jsonl\"\nsource = \"s3://{bucket}/inventory/\"\n{columns}\n\
         [[dataset]]\nname = \"stock\"\nformat = \"parquet\"\nsource = \"s3://{bucket}/stock/\"\n{columns}"
    )
}

fn change(sku: i32, hour: u32, qty: Option<i32>, op: Option<&'static str>) -> Change {
    Change {
        warehouse: "w1",
        sku,
        hour,
        seq: 0,
        qty,
        op,
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_batch_of_csv_jsonl_and_parquet_objects_loads_deletes_that_stay_deleted() {
    let stack = Stack::new(5, 30).await;
    let spec = Spec::parse(&spec_text(&stack.landing), "spec.toml").unwrap();
    let cdc = |name: &str| {
        std::fs::read(format!(
            "{}/../examples/cdc/customers/{name}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap()
    };
    // The first batch: a delete of sku 1 at 11:00, before its 10:00 upsert lands.
    let first = [
        change(1, 1, None, Some("d")),
        change(2, 0, Some(5), Some("u")),
    ];
    stack
        .put(
            "dms/public/customers/LOAD00000001.csv",
            cdc("1-LOAD00000001.csv"),
        )
        .await;
    stack
        .put(
            "dms/public/customers/20261001-093000.csv",
            cdc("2-20261001-093000.csv"),
        )
        .await;
    stack
        .put("inventory/1.jsonl", file_bytes("jsonl", &first))
        .await;
    stack
        .put("stock/1.parquet", file_bytes("parquet", &first))
        .await;
    let messages = receive(&stack, 4).await;
    let lake = Lake::open_spec(&stack.lake_root(), &spec).await.unwrap();
    let handler = stack.handler(lake).await;
    let report = handler.handle(&messages).await;
    assert_eq!(report.failures, Vec::<String>::new());
    // The two customers files load in the order their events arrive, so only
    // their net figure is fixed: 3 rows.
    let per: Vec<(&str, usize, i64)> = report
        .by_dataset
        .iter()
        .map(|(n, f)| (n.as_str(), f.loaded, f.inserted as i64 - f.deleted as i64))
        .collect();
    assert_eq!(
        per,
        [("customers", 2, 3), ("inventory", 1, 1), ("stock", 1, 1)],
        "{report:?}"
    );
    for name in ["inventory", "stock"] {
        let f = &report.by_dataset[name];
        assert_eq!(
            (f.inserted, f.deleted, f.stale),
            (1, 0, 1),
            "{name}: the delete of a key with no row is stale"
        );
    }
    // The second batch: the older upsert of sku 1, and a delete of sku 2.
    let second = [
        change(1, 0, Some(9), None),
        change(2, 1, None, Some("delete")),
    ];
    stack
        .put("inventory/2.jsonl", file_bytes("jsonl", &second))
        .await;
    stack
        .put("stock/2.parquet", file_bytes("parquet", &second))
        .await;
    let messages = receive(&stack, 2).await;
    let report = handler.handle(&messages).await;
    assert_eq!(report.failures, Vec::<String>::new());
    assert_eq!(
        (
            report.totals.loaded,
            report.totals.inserted,
            report.totals.deleted,
            report.totals.stale
        ),
        (2, 0, 2, 2),
        "{report:?}"
    );
    let root = stack.lake_root();
    for name in ["inventory", "stock"] {
        let d = spec.dataset(name).unwrap().clone();
        let rows = table_rows(&root, &TableName::Target(d.clone()), "warehouse, sku")
            .await
            .unwrap();
        assert!(rows.is_empty(), "{name}: {rows:?}");
        let dead = table_rows(&root, &TableName::Tombstones(d), "sku, event_time")
            .await
            .unwrap();
        assert_eq!(
            dead,
            [["1", "2026-10-01T11:00:00Z"], ["2", "2026-10-01T11:00:00Z"]],
            "{name}"
        );
    }
    let customers = spec.dataset("customers").unwrap().clone();
    let ids = table_rows(&root, &TableName::Target(customers), "id")
        .await
        .unwrap();
    assert_eq!(ids, [["1"], ["3"], ["4"]]);
    let ledger = table_rows(&root, &TableName::Ledger, "dataset, deleted")
        .await
        .unwrap();
    let deleted: u64 = ledger
        .iter()
        .filter(|r| r[0] != "customers")
        .map(|r| r[1].parse::<u64>().unwrap_or(0))
        .sum();
    assert_eq!(deleted, 2, "{ledger:?}");
}
