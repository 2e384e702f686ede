//! Datasets declared in a spec: three CSV feeds of other shapes loaded into
//! their own tables, read back by another engine with the declared types; a
//! crash at every step of a non-orders load; batches and names SQL reserves.

use crate::deltaload;
use crate::other_engines::run_python;
use deltaload_tests::{stderr, stdout, Sandbox};

/// The suite's spec, with `bucket` as the landing bucket.
pub(crate) fn spec_text(bucket: &str) -> String {
    include_str!("../data/datasets/spec.toml").replace("LANDING", bucket)
}

/// A test file of `tests/data/datasets`.
pub(crate) fn data(name: &str) -> &'static str {
    match name {
        "subscribers-1.csv" => include_str!("../data/datasets/subscribers-1.csv"),
        "subscribers-2.csv" => include_str!("../data/datasets/subscribers-2.csv"),
        "readings-1.csv" => include_str!("../data/datasets/readings-1.csv"),
        "readings-2.csv" => include_str!("../data/datasets/readings-2.csv"),
        "employees-1.csv" => include_str!("../data/datasets/employees-1.csv"),
        "employees-2.csv" => include_str!("../data/datasets/employees-2.csv"),
        other => panic!("no test file {other}"),
    }
}

/// A sandbox holding the spec (as `spec.toml`) and every data file under `raw/`.
pub(crate) fn sandbox() -> Sandbox {
    let sb = Sandbox::new();
    std::fs::write(sb.dir.path().join("spec.toml"), spec_text("landing")).unwrap();
    for name in [
        "subscribers-1.csv",
        "subscribers-2.csv",
        "readings-1.csv",
        "readings-2.csv",
        "employees-1.csv",
        "employees-2.csv",
    ] {
        sb.file(name, data(name));
    }
    sb
}

/// `deltaload --spec SPEC ARGS` in `sb`.
pub(crate) fn with_spec(sb: &Sandbox, spec: &str, args: &[&str]) -> std::process::Output {
    let mut all = vec!["--spec", spec];
    all.extend_from_slice(args);
    deltaload(sb, &all, None)
}

/// `deltaload --spec spec.toml ARGS`, which must succeed; its stdout.
pub(crate) fn run(sb: &Sandbox, args: &[&str]) -> String {
    let mut all = vec!["--spec", "spec.toml"];
    all.extend_from_slice(args);
    let out = deltaload(sb, &all, None);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{args:?}: {}{}",
        stdout(&out),
        stderr(&out)
    );
    stdout(&out)
}

/// Loads every file of the three datasets, two loads each.
fn load_all(sb: &Sandbox) -> String {
    let mut printed = String::new();
    for dataset in ["subscribers", "readings", "employees"] {
        let first = format!("raw/{dataset}-1.csv");
        let second = format!("raw/{dataset}-2.csv");
        printed += &run(sb, &["--dataset", dataset, "load", &first, &second]);
    }
    printed
}

const READ_BACK: &str = r#"
import sys, os
from deltalake import DeltaTable
lake = sys.argv[1]
def table(name):
    t = DeltaTable(f"{lake}/{name}")
    types = {f.name: str(f.type.type) if hasattr(f.type, "type") else str(f.type) for f in t.schema().fields}
    return t, types
t, types = table("subscribers")
assert types["User_ID"] == "integer" and types["Join_Date"] == "date" and types["Monthly_Revenue"] == "integer", types
assert types["source_file"] == "string" and types["loaded_at"] == "timestamp", types
for r in sorted(t.to_pyarrow_table().to_pylist(), key=lambda r: r["User_ID"]):
    print("subscribers", r["User_ID"], r["Country"], r["Monthly_Revenue"], r["Join_Date"].isoformat(), r["Last_Payment_Date"].isoformat())
t, types = table("readings")
assert types["taken_at"] == "timestamp" and types["value"] == "decimal(6,2)" and types["ok"] == "boolean" and types["seq"] == "long", types
for r in sorted(t.to_pyarrow_table().to_pylist(), key=lambda r: (r["site"], r["sensor"])):
    print("readings", r["site"], r["sensor"], r["taken_at"].isoformat(), r["seq"], r["value"], r["ok"])
t, types = table("employees")
assert types["salary"] == "double" and types["id"] == "long", types
assert t.metadata().partition_columns == ["dept"], t.metadata().partition_columns
for r in sorted(t.to_pyarrow_table().to_pylist(), key=lambda r: r["id"]):
    print("employees", r["id"], r["name"], r["salary"], r["dept"])
for name in ("rejected_subscribers", "rejected_readings", "rejected_employees"):
    rows = DeltaTable(f"{lake}/{name}").to_pyarrow_table().to_pylist()
    for r in rows:
        print(name, r["line_number"], r["reason"])
ledger = DeltaTable(f"{lake}/ledger").to_pyarrow_table().to_pylist()
print("ledger", sorted((r["dataset"], os.path.basename(r["location"]), r["status"]) for r in ledger))
sys.stdout.flush()
os._exit(0)
"#;

/// What Python deltalake reads back after [`load_all`].
const READ_BACK_EXPECTED: &str = "\
subscribers 1 UNITED STATES 10 2022-01-15 2023-06-10
subscribers 2 CANADA 15 2021-09-05 2023-06-22
subscribers 3 United Kingdom 12 2023-02-28 2023-06-27
subscribers 5 Spain 10 2023-03-01 2023-07-01
readings berlin t1 2026-10-01T08:00:00+00:00 2 21.00 True
readings berlin t2 2026-10-01T08:00:00+00:00 1 30.00 True
readings hamburg t1 2026-10-01T09:00:00+00:00 1 None True
employees 1 Alice 75000.0 eng
employees 2 Bob 60000.0 ops
employees 3 Charlie 80000.0 eng
rejected_subscribers 5 Join_Date \"30-02-23\" does not match the format \"%d-%m-%y\": input is out of range
rejected_readings 6 value \"1234.567\" has more than 2 decimals (not rounded)
ledger [('employees', 'employees-1.csv', 'loaded'), ('employees', 'employees-2.csv', 'loaded'), ('readings', 'readings-1.csv', 'loaded'), ('readings', 'readings-2.csv', 'loaded'), ('subscribers', 'subscribers-1.csv', 'loaded'), ('subscribers', 'subscribers-2.csv', 'loaded')]
";

#[tokio::test(flavor = "multi_thread")]
async fn three_feeds_load_into_their_tables_and_read_back_with_the_declared_types() {
    let sb = sandbox();
    assert_eq!(
        load_all(&sb),
        "raw/subscribers-1.csv: 1 rejected, 0 updated, 3 added, table version 1\n\
         raw/subscribers-2.csv: 0 rejected, 2 updated, 1 added, table version 2\n\
         raw/readings-1.csv: 1 rejected, 0 updated, 3 added, table version 1\n\
         raw/readings-2.csv: 0 rejected, 1 updated, 0 added, table version 2\n\
         raw/employees-1.csv: 0 rejected, 0 updated, 2 added, table version 1\n\
         raw/employees-2.csv: 0 rejected, 1 updated, 1 added, table version 2\n"
    );
    let lake = sb.lake_dir();
    let read = run_python(READ_BACK, &[lake.to_str().unwrap()]);
    assert_eq!(stdout(&read), READ_BACK_EXPECTED);
    // Loading everything again changes nothing: each file version is in the ledger.
    let again = load_all(&sb);
    assert_eq!(again.matches("already loaded").count(), 6, "{again}");
    let status = run(&sb, &["status"]);
    let tables: Vec<String> = status
        .lines()
        .skip_while(|l| *l != "tables:")
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect();
    assert_eq!(
        tables,
        [
            "subscribers 4 row(s), version 2",
            "rejected_subscribers 1 row(s), version 1",
            "readings 3 row(s), version 2",
            "rejected_readings 1 row(s), version 1",
            "employees 3 row(s), version 2",
            "rejected_employees 0 row(s), version 0",
            "ledger 6 row(s), version 12",
            "reconciliation 6 row(s), version 6",
        ],
        "{status}"
    );
    let shown = run(&sb, &["show", "readings", "--format", "csv"]);
    assert!(
        shown.starts_with("site,sensor,taken_at,seq,value,ok,source_file,loaded_at\nberlin,t1,2026-10-01T08:00:00Z,2,21.00,true,"),
        "{shown}"
    );
}

/// Every fault point of a load into a composite-key dataset with a sequence:
/// killed there, then run again, the tables equal one clean load.
#[tokio::test(flavor = "multi_thread")]
async fn a_readings_load_killed_at_any_step_then_rerun_equals_a_clean_load() {
    let spec = deltaload_core::Spec::parse(&spec_text("landing"), "spec.toml").unwrap();
    let clean = {
        let sb = Sandbox::with_spec(spec.clone());
        std::fs::write(sb.dir.path().join("spec.toml"), spec_text("landing")).unwrap();
        sb.file("readings-1.csv", data("readings-1.csv"));
        sb.file("readings-2.csv", data("readings-2.csv"));
        run(
            &sb,
            &[
                "--dataset",
                "readings",
                "load",
                "raw/readings-1.csv",
                "raw/readings-2.csv",
            ],
        );
        sb.state().await
    };
    for point in crate::crash::POINTS {
        let sb = Sandbox::with_spec(spec.clone());
        std::fs::write(sb.dir.path().join("spec.toml"), spec_text("landing")).unwrap();
        sb.file("readings-1.csv", data("readings-1.csv"));
        sb.file("readings-2.csv", data("readings-2.csv"));
        run(
            &sb,
            &["--dataset", "readings", "load", "raw/readings-1.csv"],
        );
        let args = [
            "--spec",
            "spec.toml",
            "--dataset",
            "readings",
            "load",
            "raw/readings-2.csv",
        ];
        let killed = deltaload(&sb, &args, Some(point));
        assert!(
            stderr(&killed).contains("fault injected"),
            "{point}: {}",
            stderr(&killed)
        );
        let rerun = deltaload(&sb, &args, None);
        assert_eq!(rerun.status.code(), Some(0), "{point}: {}", stderr(&rerun));
        assert_eq!(
            sb.state().await,
            clean,
            "{point}: tables differ from a clean load"
        );
    }
}

/// Found by review: two files of one batch changing the same composite key
/// made the unique-key check count that key twice, after the MERGE had
/// committed, so the batch could never finish.
#[tokio::test(flavor = "multi_thread")]
async fn a_batch_whose_files_change_one_composite_key_loads_as_one_by_one() {
    let spec = deltaload_core::Spec::parse(&spec_text("landing"), "spec.toml").unwrap();
    let load = |batch: &str| {
        let sb = Sandbox::with_spec(spec.clone());
        std::fs::write(sb.dir.path().join("spec.toml"), spec_text("landing")).unwrap();
        sb.file("readings-1.csv", data("readings-1.csv"));
        sb.file("readings-2.csv", data("readings-2.csv"));
        let args = [
            "--dataset",
            "readings",
            "load",
            "--batch-size",
            batch,
            "raw/readings-1.csv",
            "raw/readings-2.csv",
        ];
        let printed = run(&sb, &args);
        (sb, printed)
    };
    let (one_by_one, printed_alone) = load("1");
    let (batched, printed_together) = load("2");
    assert_eq!(
        printed_together,
        "raw/readings-1.csv: 1 rejected, 0 updated, 3 added, table version 1\n\
         raw/readings-2.csv: 0 rejected, 1 updated, 0 added, table version 1\n"
    );
    assert_eq!(printed_alone.lines().count(), 2);
    assert_eq!(batched.state().await, one_by_one.state().await);
}

/// Found by review: names SQL reserves (a dataset `order`, a key `group`, a
/// sequence `date`) went into the queries unquoted.
#[tokio::test(flavor = "multi_thread")]
async fn datasets_and_columns_named_like_sql_words_load_and_show() {
    let sb = Sandbox::new();
    let spec = "[[dataset]]\nname = \"order\"\nkeys = [\"group\"]\nsequence_by = [\"date\"]\n\
                [[dataset.columns]]\nname = \"group\"\ntype = \"string\"\n\
                [[dataset.columns]]\nname = \"date\"\ntype = \"date\"\n\
                [[dataset.columns]]\nname = \"select\"\ntype = \"int\"\n";
    std::fs::write(sb.dir.path().join("words.toml"), spec).unwrap();
    sb.file(
        "w1.csv",
        "group,date,select\na,2026-10-01,1\nb,2026-10-01,2\n",
    );
    sb.file(
        "w2.csv",
        "group,date,select\na,2026-10-02,3\nb,2026-09-30,4\n",
    );
    let out = with_spec(
        &sb,
        "words.toml",
        &["load", "--batch-size", "2", "raw/w1.csv", "raw/w2.csv"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "raw/w1.csv: 0 rejected, 0 updated, 2 added, table version 1\n\
         raw/w2.csv: 0 rejected, 1 updated, 0 added, table version 1\n"
    );
    let shown = with_spec(
        &sb,
        "words.toml",
        &["show", "order", "--format", "csv", "--key", "a"],
    );
    assert!(
        stdout(&shown).starts_with("group,date,select,source_file,loaded_at\na,2026-10-02,3,"),
        "{}{}",
        stdout(&shown),
        stderr(&shown)
    );
    let status = with_spec(&sb, "words.toml", &["status"]);
    assert!(stdout(&status).contains("order"), "{}", stderr(&status));
}
