//! Tables another writer made with CHECK constraints or column invariants,
//! taken over: every record deltaload writes there holds them; one that
//! breaks a rule is rejected with the rule's name and expression, its line
//! and raw text, and an older change of its key stays newest.

use crate::deltaload;
use crate::other_engines::run_python;
use deltaload_tests::{stderr, stdout, Sandbox};

/// The seed's orders 1001 to 1003 (placed, 1.00 each), as another writer
/// made them, with a CHECK constraint (`check`) or an invariant on `amount`
/// (`invariant`, written into the table's schema as Spark writes it).
const MAKE: &str = r#"
import sys, os, json, glob
from decimal import Decimal
import pyarrow as pa
from deltalake import write_deltalake, DeltaTable
path, kind = sys.argv[1], sys.argv[2]
ts = pa.timestamp("us", tz="UTC")
schema = pa.schema([("order_id", pa.int64()), ("customer_id", pa.string()), ("status", pa.string()),
    ("amount", pa.decimal128(10, 2)), ("currency", pa.string()), ("ordered_at", ts), ("updated_at", ts)])
ids = [1001, 1002, 1003]
n = len(ids)
table = pa.table({"order_id": ids, "customer_id": ["C01"] * n, "status": ["placed"] * n,
    "amount": pa.array([Decimal("1.00")] * n, pa.decimal128(10, 2)), "currency": ["EUR"] * n,
    "ordered_at": pa.array([0] * n, ts), "updated_at": pa.array([0] * n, ts)}, schema=schema)
write_deltalake(path, table)
if kind == "check":
    DeltaTable(path).alter.add_constraint({"known_status": "status IN ('placed', 'cancelled')"})
else:
    log = os.path.join(path, "_delta_log", "00000000000000000000.json")
    actions = [json.loads(l) for l in open(log) if l.strip()]
    for a in actions:
        if "metaData" in a:
            s = json.loads(a["metaData"]["schemaString"])
            for f in s["fields"]:
                if f["name"] == "amount":
                    f["metadata"]["delta.invariants"] = json.dumps({"expression": {"expression": "amount < 30"}})
            a["metaData"]["schemaString"] = json.dumps(s)
        if "protocol" in a:
            a["protocol"] = {"minReaderVersion": 1, "minWriterVersion": 2}
    open(log, "w").write("".join(json.dumps(a) + "\n" for a in actions))
    for crc in glob.glob(os.path.join(path, "_delta_log", "*.crc")):
        os.remove(crc)
sys.stdout.flush()
os._exit(0)
"#;

/// The orders and the rejects of the lake at `argv[1]`, as Python
/// deltalake's SQL reads them, and the table's properties.
const READ: &str = r#"
import sys, os, json
import pyarrow as pa
from deltalake import DeltaTable, QueryBuilder
lake = sys.argv[1]
def rows(table, sql):
    t = DeltaTable(os.path.join(lake, table))
    return [list(r.values()) for r in pa.table(QueryBuilder().register("t", t).execute(sql).read_all()).to_pylist()]
orders = rows("orders", "SELECT order_id, status, CAST(amount AS VARCHAR) FROM t ORDER BY order_id")
rejects = rows("rejected_orders", "SELECT line_number, raw_line, reason FROM t ORDER BY line_number")
config = DeltaTable(os.path.join(lake, "orders")).metadata().configuration
print(json.dumps({"orders": orders, "rejects": rejects, "config": config}))
sys.stdout.flush()
os._exit(0)
"#;

/// Day 2 of the seed loaded into a table of `kind`: the sandbox, and what
/// the reader sees.
fn day2_into(kind: &str) -> (Sandbox, serde_json::Value) {
    let sb = Sandbox::with_seed_files();
    let lake = sb.lake_dir();
    run_python(MAKE, &[lake.join("orders").to_str().expect("utf-8"), kind]);
    let out = deltaload(&sb, &["load", "raw/b.csv"], None);
    assert_eq!(out.status.code(), Some(0), "{kind}: {}", stderr(&out));
    let read = run_python(READ, &[lake.to_str().expect("utf-8")]);
    let read: serde_json::Value = serde_json::from_slice(&read.stdout).expect("JSON");
    // Loading the file again changes nothing (the ledger), rules or not.
    let again = stdout(&deltaload(&sb, &["load", "raw/b.csv"], None));
    assert!(again.contains("already loaded"), "{again}");
    (sb, read)
}

/// The orders after day 2 without 1004 (rejected), 1006 of `status`.
fn orders_without_1004(status: &str) -> serde_json::Value {
    serde_json::json!([
        [1001, "placed", "1.00"],
        [1002, "placed", "12.00"],
        [1003, "placed", "1.00"],
        [1005, "cancelled", "8.75"],
        [1006, status, "19.90"],
    ])
}

#[test]
fn a_record_breaking_a_check_constraint_is_rejected_naming_it_and_its_key_keeps_the_older_change() {
    let (sb, read) = day2_into("check");
    // The expression as the table holds it (Python deltalake writes it
    // rewritten: `status = 'placed' OR status = 'cancelled'`).
    let expression = read["config"]["delta.constraints.known_status"]
        .as_str()
        .expect("the constraint stays")
        .to_string();
    assert!(expression.contains("'cancelled'"), "{expression}");
    let reason = format!("breaks CHECK constraint known_status: {expression}");
    assert_eq!(
        read["rejects"],
        serde_json::json!([
            [
                3,
                "1004,C01,shipped,40.00,EUR,2026-10-02T12:45:00,2026-10-04T08:30:00",
                reason
            ],
            [
                6,
                "1006,C02,shipped,19.90,EUR,2026-10-04T11:20:00,2026-10-04T16:45:00",
                reason
            ],
        ])
    );
    // 1004 never arrived; 1006's older change (placed) is its newest.
    assert_eq!(read["orders"], orders_without_1004("placed"));
    let example = stdout(&deltaload(&sb, &["spec", "example"], None));
    std::fs::write(sb.dir.path().join("spec.toml"), example).expect("write spec");
    let check = stdout(&deltaload(&sb, &["spec", "check", "spec.toml"], None));
    let rule = format!("rule of table orders every record must hold (one that breaks it is rejected): CHECK constraint known_status: {expression}");
    assert!(check.contains(&rule), "{check}");
}

#[test]
fn a_record_breaking_an_invariant_is_rejected_naming_its_column() {
    let (_sb, read) = day2_into("invariant");
    assert_eq!(
        read["rejects"],
        serde_json::json!([[
            3,
            "1004,C01,shipped,40.00,EUR,2026-10-02T12:45:00,2026-10-04T08:30:00",
            "breaks the invariant of column amount: amount < 30"
        ]])
    );
    assert_eq!(read["orders"], orders_without_1004("shipped"));
}

/// A rule over a column the spec does not declare cannot be checked: the
/// table is refused before anything is written, naming the rule.
#[test]
fn a_rule_over_an_undeclared_column_refuses_the_table() {
    let sb = Sandbox::with_seed_files();
    let table = sb.lake_dir().join("orders");
    run_python(MAKE, &[table.to_str().expect("utf-8"), "check"]);
    let spec = stdout(&deltaload(&sb, &["spec", "example"], None));
    let spec = spec.replacen(
        "[[dataset.columns]]\nname = \"status\"\ntype = \"string\"\n",
        "",
        1,
    );
    let spec = spec.replace("\"status\", ", "").replace(", \"status\"", "");
    std::fs::write(sb.dir.path().join("spec.toml"), &spec).expect("write spec");
    let before = crate::adoption::files(&table);
    let check = deltaload(&sb, &["spec", "check", "spec.toml"], None);
    assert_eq!(check.status.code(), Some(1), "{}", stdout(&check));
    assert!(
        stdout(&check).contains("cannot check CHECK constraint known_status"),
        "{}",
        stdout(&check)
    );
    let out = deltaload(&sb, &["--spec", "spec.toml", "load", "raw/b.csv"], None);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let said = stderr(&out);
    for e in [
        "\"checkConstraints\"",
        "CHECK constraint known_status",
        "status",
        "table is unchanged",
    ] {
        assert!(said.contains(e), "{e:?} not in {said}");
    }
    assert_eq!(crate::adoption::files(&table), before);
}
