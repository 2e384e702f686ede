//! Interop with another Delta engine, Python `deltalake`: it reads our tables, and a row it doubles is caught.

use crate::deltaload;
use deltaload_lake::TableName;
use deltaload_tests::{stderr, Sandbox};
use std::path::PathBuf;
use std::process::Command;

/// The Python with `deltalake` installed: `DELTALOAD_TEST_PYTHON`, else the
/// virtual environment `./test` makes at the repository root.
pub(crate) fn python() -> PathBuf {
    std::env::var_os("DELTALOAD_TEST_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.venv/bin/python"))
}

/// Runs a Python script with `deltalake` (`python -c SCRIPT ARGS...`); panics,
/// with its stderr, when it fails. Returns its output.
pub(crate) fn run_python(script: &str, args: &[&str]) -> std::process::Output {
    let py = python();
    let out = Command::new(&py)
        .arg("-c")
        .arg(script)
        .args(args)
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "cannot run {}: {e}; run ./test, which installs it",
                py.display()
            )
        });
    assert!(out.status.success(), "python failed: {}", stderr(&out));
    out
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
    let sb = Sandbox::with_seed_files();
    assert_eq!(
        deltaload(&sb, &["load", "raw/a.csv", "raw/b.csv"], None)
            .status
            .code(),
        Some(0)
    );
    let out = run_python(CHECK, &[sb.lake_dir().to_str().unwrap()]);
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

const DUPLICATE: &str = r#"
import sys, os
import pyarrow as pa
from deltalake import DeltaTable, write_deltalake
lake = sys.argv[1]
t = DeltaTable(f"{lake}/orders")
row = t.to_pyarrow_table().filter(pa.compute.equal(t.to_pyarrow_table()["order_id"], 1004))
write_deltalake(f"{lake}/orders", row, mode="append")
sys.stdout.flush()
os._exit(0)
"#;

/// Another writer breaks the sandbox's `orders`: order 1004, which day 2 changes, twice.
pub(crate) fn duplicate_order_1004(sb: &Sandbox) {
    run_python(DUPLICATE, &[sb.lake_dir().to_str().unwrap()]);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_order_found_twice_in_orders_fails_the_load_loudly() {
    let sb = Sandbox::with_seed_files();
    assert_eq!(
        deltaload(&sb, &["load", "raw/a.csv"], None).status.code(),
        Some(0)
    );
    duplicate_order_1004(&sb);
    let ledger_before = sb.rows(TableName::Ledger, "location, status").await;
    let load = deltaload(&sb, &["load", "raw/b.csv"], None);
    assert_eq!(load.status.code(), Some(1));
    assert!(
        stderr(&load).contains("appear more than once"),
        "{}",
        stderr(&load)
    );
    let mut expected = ledger_before;
    expected.push(vec![
        sb.dir
            .path()
            .canonicalize()
            .unwrap()
            .join("raw/b.csv")
            .display()
            .to_string(),
        "loading".to_string(),
    ]);
    assert_eq!(
        sb.rows(TableName::Ledger, "location, status").await,
        expected,
        "b is not recorded as loaded"
    );
}

const DEDUPE: &str = r#"
import sys, os
from deltalake import DeltaTable, write_deltalake
lake = sys.argv[1]
t = DeltaTable(f"{lake}/orders").to_pyarrow_table()
seen, keep = set(), []
for i, v in enumerate(t["order_id"].to_pylist()):
    if v not in seen:
        seen.add(v)
        keep.append(i)
write_deltalake(f"{lake}/orders", t.take(keep), mode="overwrite")
sys.stdout.flush()
os._exit(0)
"#;

/// The repair of [`duplicate_order_1004`]: each order kept once.
pub(crate) fn dedupe_orders(sb: &Sandbox) {
    run_python(DEDUPE, &[sb.lake_dir().to_str().unwrap()]);
}

const SET_STATUS: &str = r#"
import sys, os
from deltalake import DeltaTable
lake, status = sys.argv[1], sys.argv[2]
DeltaTable(f"{lake}/ledger").update(updates={"status": status})
sys.stdout.flush()
os._exit(0)
"#;

const DELETE_ROW: &str = r#"
import sys, os
from deltalake import DeltaTable
lake, predicate = sys.argv[1], sys.argv[2]
DeltaTable(f"{lake}/ledger").delete(predicate)
sys.stdout.flush()
os._exit(0)
"#;

/// A ledger row whose status another tool wrote (or damaged) is never read as
/// `loaded`: the load fails naming the row, and the repair the error gives works.
#[tokio::test(flavor = "multi_thread")]
async fn an_unknown_ledger_status_fails_the_load_and_names_its_repair() {
    let sb = Sandbox::with_seed_files();
    let lake = sb.lake_dir();
    let lake = lake.to_str().unwrap();
    assert_eq!(
        deltaload(&sb, &["load", "raw/a.csv"], None).status.code(),
        Some(0)
    );
    // (`status` is NOT NULL, so an empty text stands for a missing one.)
    for status in ["'done'", "''"] {
        run_python(SET_STATUS, &[lake, status]);
        let versions = sb.versions().await;
        let load = deltaload(&sb, &["load", "raw/a.csv"], None);
        let err = stderr(&load);
        assert_eq!(load.status.code(), Some(1), "{err}");
        let location = sb.dir.path().canonicalize().unwrap().join("raw/a.csv");
        assert!(err.contains(&location.display().to_string()), "{err}");
        let shown = if status == "''" { "\"\"" } else { "\"done\"" };
        assert!(err.contains(&format!("has status {shown}")), "{err}");
        assert!(err.contains("delete the row"), "{err}");
        assert_eq!(sb.versions().await, versions, "nothing written");
    }
    // The repair the message names: delete the row, load again.
    let err = stderr(&deltaload(&sb, &["load", "raw/a.csv"], None));
    let predicate = err
        .split("(predicate ")
        .nth(1)
        .and_then(|rest| rest.split(", e.g.").next())
        .unwrap_or_else(|| panic!("no predicate in {err}"));
    run_python(DELETE_ROW, &[lake, predicate]);
    let again = deltaload(&sb, &["load", "raw/a.csv"], None);
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    let ledger = sb.rows(TableName::Ledger, "status").await;
    assert_eq!(ledger, vec![vec!["loaded".to_string()]]);
}
