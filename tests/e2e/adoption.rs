//! Tables another writer made, taken over: the seed's Spark job's `orders`
//! (every column nullable, no lineage columns) and its `rejected_orders` of
//! its own layout; a null key found at adoption; an `appendOnly` table
//! deltaload refuses, byte for byte untouched. (Tables with CHECK
//! constraints and invariants: `table_rules.rs`.)

use crate::deltaload;
use crate::other_engines::run_python;
use deltaload_tests::{stderr, stdout, Sandbox};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The seed's tables after its Spark job's day 1, as Python deltalake wrote
/// them (`tests/data/adopted/make_seed_tables.py`).
fn seed_day1() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/adopted/seed-day1")
}

/// Copies the directory tree `from` to `to`.
pub(crate) fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read dir") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("type").is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
}

/// Every file under `dir` with its bytes, by relative path.
pub(crate) fn files(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut all = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).expect("read dir") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let bytes = std::fs::read(&path).expect("read");
                all.insert(path.strip_prefix(dir).expect("under").to_path_buf(), bytes);
            }
        }
    }
    all
}

/// The built-in orders spec, with `extra` after the dataset's name.
fn orders_spec(sb: &Sandbox, extra: &str) {
    let example = stdout(&deltaload(sb, &["spec", "example"], None));
    let spec = example.replacen(
        "name = \"orders\"",
        &format!("name = \"orders\"\n{extra}"),
        1,
    );
    assert_ne!(spec, example, "the example names the orders dataset");
    std::fs::write(sb.dir.path().join("spec.toml"), spec).expect("write spec");
}

const ROWS: &str = r#"
import sys, os, json
from deltalake import DeltaTable, QueryBuilder
import pyarrow as pa
t = DeltaTable(sys.argv[1])
sql = "SELECT order_id, status, CAST(amount AS VARCHAR) AS amount, CAST(updated_at AS VARCHAR) AS updated_at, source_file IS NULL AS no_file FROM t ORDER BY order_id"
rows = pa.table(QueryBuilder().register("t", t).execute(sql).read_all()).to_pylist()
print(json.dumps({"rows": [list(r.values()) for r in rows], "config": t.metadata().configuration}))
sys.stdout.flush()
os._exit(0)
"#;

#[tokio::test(flavor = "multi_thread")]
async fn the_seed_jobs_tables_are_taken_over_and_end_with_its_five_orders() {
    let sb = Sandbox::with_seed_files();
    let lake = sb.lake_dir();
    copy_tree(&seed_day1(), &lake);
    let before = files(&lake);

    // The seed's rejected_orders has its own layout: refused, nothing written.
    let out = deltaload(&sb, &["load", "raw/b.csv"], None);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let said = stderr(&out);
    assert!(
        said.contains("table rejected_orders has the columns [order_id")
            && said.contains("_bad, source_file]")
            && said.contains("rejected_table = "),
        "{said}"
    );
    let seed_tables = |f: BTreeMap<PathBuf, Vec<u8>>| {
        f.into_iter()
            .filter(|(p, _)| p.starts_with("orders") || p.starts_with("rejected_orders"))
            .collect::<BTreeMap<_, _>>()
    };
    assert_eq!(
        seed_tables(files(&lake)),
        seed_tables(before.clone()),
        "a refused load writes nothing into either table"
    );

    // With a rejects table of its own: day 2, then day 1 again.
    orders_spec(&sb, "rejected_table = \"rejected_orders_deltaload\"");
    for day in ["raw/b.csv", "raw/a.csv"] {
        let out = deltaload(&sb, &["--spec", "spec.toml", "load", day], None);
        assert_eq!(out.status.code(), Some(0), "{day}: {}", stderr(&out));
    }
    let read = run_python(ROWS, &[lake.join("orders").to_str().expect("utf-8")]);
    let read: serde_json::Value = serde_json::from_slice(&read.stdout).expect("the reader's JSON");
    assert_eq!(
        read["rows"],
        serde_json::json!([
            [1001, "shipped", "25.50", "2026-10-02T08:00:00Z", true],
            [1002, "cancelled", "12.00", "2026-10-03T09:00:00Z", true],
            [1004, "shipped", "40.00", "2026-10-04T08:30:00Z", false],
            [1005, "cancelled", "8.75", "2026-10-04T10:00:00Z", false],
            [1006, "shipped", "19.90", "2026-10-04T16:45:00Z", false],
        ]),
        "the seed's 5 orders; the rows day 2 left read a null source_file"
    );
    // The one count of nulls ran, and is recorded so later opens skip it.
    assert_eq!(
        read["config"]["io.deltaload.nullsCounted"],
        "order_id,updated_at"
    );
    assert_eq!(read["config"]["io.deltaload.adopted"], "true");
    assert_eq!(read["config"]["io.deltaload.keys"], "order_id");
    // The seed's rejects stay as they were; deltaload's hold day 1's line.
    let theirs = |f: &BTreeMap<PathBuf, Vec<u8>>| {
        f.iter()
            .filter(|(p, _)| p.starts_with("rejected_orders"))
            .map(|(p, b)| (p.clone(), b.clone()))
            .collect::<BTreeMap<_, _>>()
    };
    assert_eq!(theirs(&files(&lake)), theirs(&before));
    let rejects = stdout(&deltaload(
        &sb,
        &["--spec", "spec.toml", "show", "rejected_orders_deltaload"],
        None,
    ));
    assert!(rejects.contains("1003"), "{rejects}");
}

const MAKE: &str = r#"
import sys, os
import pyarrow as pa
from deltalake import write_deltalake
path, kind = sys.argv[1], sys.argv[2]
ts = pa.timestamp("us", tz="UTC")
schema = pa.schema([("order_id", pa.int64()), ("customer_id", pa.string()), ("status", pa.string()),
    ("amount", pa.decimal128(10, 2)), ("currency", pa.string()), ("ordered_at", ts), ("updated_at", ts)])
ids = [1001, None, None] if kind == "null-key" else [1001, 1002, 1003]
n = len(ids)
table = pa.table({"order_id": ids, "customer_id": ["C01"] * n, "status": ["placed"] * n,
    "amount": pa.array([None] * n, pa.decimal128(10, 2)), "currency": ["EUR"] * n,
    "ordered_at": pa.array([0] * n, ts), "updated_at": pa.array([0] * n, ts)}, schema=schema)
if kind == "extra":
    table = table.append_column("note", pa.array([f"n{i}" for i in ids], pa.string()))
config = {"delta.appendOnly": "true"} if kind == "append-only" else None
write_deltalake(path, table, configuration=config)
sys.stdout.flush()
os._exit(0)
"#;

/// A table of `kind` another writer made as `orders`; day 2 loaded into it
/// must be refused with `expected` in the message and the table untouched.
fn refused_untouched(kind: &str, expected: &[&str]) {
    let sb = Sandbox::with_seed_files();
    let table = sb.lake_dir().join("orders");
    run_python(MAKE, &[table.to_str().expect("utf-8"), kind]);
    let before = files(&sb.lake_dir());
    let out = deltaload(&sb, &["load", "raw/b.csv"], None);
    assert_eq!(out.status.code(), Some(1), "{kind}: {}", stdout(&out));
    let said = stderr(&out);
    for e in expected {
        assert!(said.contains(e), "{kind}: {e:?} not in {said}");
    }
    let orders = |f: BTreeMap<PathBuf, Vec<u8>>| {
        f.into_iter()
            .filter(|(p, _)| p.starts_with("orders"))
            .collect::<BTreeMap<_, _>>()
    };
    assert_eq!(orders(files(&sb.lake_dir())), orders(before), "{kind}");
}

#[test]
fn a_null_key_found_at_adoption_refuses_the_table_naming_the_column_and_count() {
    refused_untouched(
        "null-key",
        &[
            "table orders holds 2 row(s) with a null \"order_id\"",
            "IS NULL",
        ],
    );
}

#[test]
fn an_append_only_table_is_refused() {
    refused_untouched("append-only", &["\"appendOnly\"", "delta.appendOnly"]);
}

const NOTES: &str = r#"
import sys, os, json
import pyarrow as pa
from deltalake import DeltaTable, QueryBuilder
t = DeltaTable(sys.argv[1])
sql = "SELECT order_id, status, CAST(amount AS VARCHAR) AS amount, note FROM t ORDER BY order_id"
print(json.dumps([list(r.values()) for r in pa.table(QueryBuilder().register("t", t).execute(sql).read_all()).to_pylist()]))
sys.stdout.flush()
os._exit(0)
"#;

/// A column the table has and the spec does not declare: `spec check`
/// names it, an update leaves it, an insert writes it null. The table's
/// folder is named with capitals (`table = "Orders"`).
#[test]
fn a_column_only_the_table_has_is_kept_by_updates_and_null_in_inserts() {
    let sb = Sandbox::with_seed_files();
    let table = sb.lake_dir().join("Orders");
    run_python(MAKE, &[table.to_str().expect("utf-8"), "extra"]);
    orders_spec(&sb, "table = \"Orders\"");
    let check = stdout(&deltaload(&sb, &["spec", "check", "spec.toml"], None));
    assert!(
        check.contains("columns of table Orders the spec does not declare, kept (inserts write them null, updates leave them): note"),
        "{check}"
    );
    // Day 2 updates 1002 (its amount; the table's change was at 0) and
    // inserts 1004 to 1006.
    let out = deltaload(&sb, &["--spec", "spec.toml", "load", "raw/b.csv"], None);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let read = run_python(NOTES, &[table.to_str().expect("utf-8")]);
    let rows: serde_json::Value = serde_json::from_slice(&read.stdout).expect("JSON");
    assert_eq!(
        rows,
        serde_json::json!([
            [1001, "placed", null, "n1001"],
            [1002, "placed", "12.00", "n1002"],
            [1003, "placed", null, "n1003"],
            [1004, "shipped", "40.00", null],
            [1005, "cancelled", "8.75", null],
            [1006, "shipped", "19.90", null],
        ])
    );
}
