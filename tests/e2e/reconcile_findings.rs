//! `reconcile` names refused files, doubled orders and rejects without a ledger
//! row, with exit status 3, on a lake another writer damaged.

use crate::other_engines::{duplicate_order_1004, run_python};
use deltaload_tests::localstack::Stack;
use deltaload_tests::{stderr, stdout, Sandbox, DAY1};

const EXE: &str = env!("CARGO_BIN_EXE_deltaload-faulty");

/// Appends a copy of the existing rejected rows under another source file.
const ORPHAN: &str = r#"
import sys, os
import pyarrow as pa
from deltalake import DeltaTable, write_deltalake
lake, source = sys.argv[1], sys.argv[2]
t = DeltaTable(f"{lake}/rejected_orders").to_pyarrow_table()
i = t.schema.get_field_index("source_file")
t = t.set_column(i, t.schema.field(i), pa.array([source] * t.num_rows, pa.string()))
write_deltalake(f"{lake}/rejected_orders", t, mode="append")
sys.stdout.flush()
os._exit(0)
"#;

#[tokio::test(flavor = "multi_thread")]
async fn reconcile_reports_refusals_doubled_orders_and_orphan_rejects() {
    let stack = Stack::new(3, 30).await;
    let sb = Sandbox::new();
    let lake = sb.lake_dir().display().to_string();
    stack.put("day/1.csv", DAY1).await;
    stack.put("day/bad.csv", "order_id,coupon\n1,x\n").await;
    stack.wait_for_messages(2).await;
    let out = crate::serve_once(&stack, &lake, "1", &[]);
    assert!(
        stdout(&out).starts_with("2 messages, 1 files loaded, 0 skipped, 1 refused"),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    let at = format!("s3://{}/day", stack.landing);
    let reconcile = || stack.cli(EXE, &["reconcile", &at, "--lake", &lake]);
    let first = reconcile();
    assert_eq!(first.status.code(), Some(3), "{}", stdout(&first));
    assert!(
        stdout(&first).contains("day/bad.csv: refused: header mismatch"),
        "{}",
        stdout(&first)
    );

    duplicate_order_1004(&sb);
    let orphan = format!("s3://{}/day/gone.csv", stack.landing);
    run_python(ORPHAN, &[&lake, &orphan]);
    let second = reconcile();
    assert_eq!(second.status.code(), Some(3));
    let text = stdout(&second);
    assert!(
        text.contains("orders: order_id 1004 appears 2 times"),
        "{text}"
    );
    assert!(
        text.contains(&format!("rejected_orders: 1 row(s) of {orphan}")),
        "{text}"
    );
    assert!(
        text.contains("2 listed, 2 checked, 1 consistent, 0 never loaded, 0 changed, 1 refused, 0 unfinished, 0 unbalanced, 1 doubled orders, 1 orphan reject files"),
        "{text}"
    );
}
