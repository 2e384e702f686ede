//! The tables open and read correctly with another Delta reader: Python `deltalake`.

use crate::deltaload;
use deltaload_tests::{stderr, Sandbox, DAY1, DAY2};
use std::path::PathBuf;
use std::process::Command;

/// The Python with `deltalake` installed: `DELTALOAD_TEST_PYTHON`, else the
/// virtual environment `./test` makes at the repository root.
fn python() -> PathBuf {
    std::env::var_os("DELTALOAD_TEST_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.venv/bin/python"))
}

const CHECK: &str = r#"
import sys
from deltalake import DeltaTable
lake = sys.argv[1]
t = DeltaTable(f"{lake}/orders")
types = {f.name: str(f.type.type) for f in t.schema().fields}
assert types == {
    "order_id": "long", "customer_id": "string", "status": "string",
    "amount": "decimal(10,2)", "currency": "string", "ordered_at": "timestamp",
    "updated_at": "timestamp", "source_file": "string", "loaded_at": "timestamp",
}, types
rows = sorted(t.to_pyarrow_table().to_pylist(), key=lambda r: r["order_id"])
print([(r["order_id"], r["status"], str(r["amount"]), r["updated_at"].isoformat()) for r in rows])
for name in ("rejected_orders", "ledger", "reconciliation"):
    print(name, DeltaTable(f"{lake}/{name}").to_pyarrow_table().num_rows)
# Skip interpreter teardown: deltalake/pyarrow threads sometimes abort there
# ("terminate called without an active exception") after all work succeeded.
sys.stdout.flush()
import os
os._exit(0)
"#;

#[tokio::test(flavor = "multi_thread")]
async fn python_deltalake_reads_every_table_with_the_contract_types() {
    let sb = Sandbox::new();
    sb.file("a.csv", DAY1);
    sb.file("b.csv", DAY2);
    assert_eq!(
        deltaload(&sb, &["load", "raw/a.csv", "raw/b.csv"], None)
            .status
            .code(),
        Some(0)
    );
    let py = python();
    let out = Command::new(&py)
        .args(["-c", CHECK, sb.lake_dir().to_str().unwrap()])
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "cannot run {}: {e}; run ./test, which installs it",
                py.display()
            )
        });
    assert!(
        out.status.success(),
        "python reader failed: {}",
        stderr(&out)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with("[(1001, 'shipped', '25.50', '2026-10-02T08:00:00+00:00'), (1002, 'cancelled', '12.00', '2026-10-03T09:00:00+00:00')"),
        "{text}"
    );
    assert!(
        text.contains("rejected_orders 1\nledger 2\nreconciliation 2"),
        "{text}"
    );
}
