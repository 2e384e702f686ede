//! Other readers read what deltaload writes, value for value. DuckDB's
//! `delta` extension, polars' `read_delta`, the polars-deltalake plugin and
//! Python deltalake's SQL (`QueryBuilder`) return exactly deltaload's own rows
//! of every kind of table it writes: `orders` copy-on-write and merge-on-read
//! (deletion vectors proven present), a dataset of every column type with
//! nulls, written by the keyed upsert, by delta-rs's MERGE (partitioned) and
//! merge-on-read, and the rejects, tombstones, ledger and reconciliation
//! tables. Python deltalake's `to_pyarrow_table` reads the tables without
//! deletion vectors the same and refuses those with them (a delta-rs limit:
//! it never reads deleted rows as live). `tests/readers.py` does the reading
//! and renders each reader's values as exact canonical texts;
//! docs/operating.md lists the readers and their versions.

mod history;

use crate::deltaload;
use deltalake::arrow::datatypes::DataType;
use deltaload_core::spec::ORDERS_SPEC;
use deltaload_core::{Dataset, Spec};
use deltaload_lake::{quoted, TableName};
use deltaload_tests::{stderr, Sandbox};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The script that reads a table with every reader (`tests/readers.py`).
pub(crate) const READERS_PY: &str = include_str!("../readers.py");

/// The readers that read every table deltaload writes, deletion vectors included.
const FULL_READERS: [&str; 4] = [
    "duckdb.delta_scan",
    "polars.read_delta",
    "polars_deltalake.read_delta",
    "deltalake.QueryBuilder",
];

/// Python deltalake's pyarrow path, which refuses deletion vectors.
const PYARROW: &str = "deltalake.to_pyarrow_table";

/// A dataset of every column type deltaload writes; `LAYOUT` becomes
/// `partition_by` or `merge_on_read`.
const THINGS: &str = r#"[[dataset]]
name = "things"
format = "jsonl"
keys = ["id"]
sequence_by = ["version"]
delete_when = { column = "op", in = ["d"] }
LAYOUT
[[dataset.columns]]
name = "id"
type = "bigint"
[[dataset.columns]]
name = "version"
type = "int"
[[dataset.columns]]
name = "n"
type = "int"
[[dataset.columns]]
name = "amount"
type = "decimal(12,3)"
[[dataset.columns]]
name = "ratio"
type = "double"
[[dataset.columns]]
name = "flag"
type = "boolean"
[[dataset.columns]]
name = "day"
type = "date"
[[dataset.columns]]
name = "at"
type = "timestamp"
[[dataset.columns]]
name = "Note text"
type = "string"
"#;

/// The first day of `things`: typical values, a row of nulls, and the edges
/// (extreme ints and decimals, -0.0 (stored as 0), 1e20, instants before
/// 1970, offsets, milli- and microseconds, text a writer must escape).
const THINGS_A: &str = r#"{"id":1,"version":1,"n":7,"amount":25.5,"ratio":0.1,"flag":true,"day":"2026-10-01","at":"2026-10-01T09:15:00.123456+02:00","Note text":"plain"}
{"id":2,"version":1,"n":null,"amount":null,"ratio":null,"flag":null,"day":null,"at":null,"Note text":null}
{"id":3,"version":1,"n":-2147483648,"amount":"-0.005","ratio":-0.0,"flag":false,"day":"1969-12-31","at":"1969-12-31T23:59:59.999Z","Note text":"é, \"quoted\"\nnext line"}
{"id":4,"version":1,"n":2147483647,"amount":999999999.999,"ratio":1e20,"flag":"TRUE","day":"2999-12-31","at":"2026-03-29T02:30:00.5Z","Note text":""}
{"id":5,"version":1,"n":0,"amount":0,"ratio":-1.5e-7,"flag":"0","day":"2026-10-01","at":"2026-10-01 08:00:00","Note text":"NULL?"}
"#;

/// The second day: an update, a delete, a row set to nulls, an insert.
const THINGS_B: &str = r#"{"id":1,"version":2,"n":8,"amount":"-999999999.999","ratio":70000.0,"flag":false,"day":"2026-10-02","at":"2026-10-02T00:00:00.000001Z","Note text":"changed"}
{"id":2,"version":2,"op":"d"}
{"id":4,"version":2,"n":null,"amount":null,"ratio":null,"flag":null,"day":null,"at":null,"Note text":null}
{"id":6,"version":1,"n":6,"amount":6.06,"ratio":1.7976931348623157e308,"flag":true,"day":"2026-10-02","at":"2026-10-02T12:00:00Z","Note text":"new"}
"#;

/// A lake deltaload wrote in a sandbox, and its dataset.
struct Written {
    sb: Sandbox,
    dataset: Arc<Dataset>,
}

impl Written {
    /// The dataset's table.
    fn target(&self) -> TableName {
        TableName::Target(self.dataset.clone())
    }

    fn path(&self, table: &TableName) -> PathBuf {
        self.sb.lake_dir().join(table.as_str())
    }

    /// deltaload's own rows of `table` (every column, sorted by key), as
    /// `tests/readers.py` writes them: null for NULL, a double as the shortest
    /// text that reads back as it, in plain notation (Rust's `f64` Display of
    /// Arrow's display, `1e20`, parsed exactly). A string column holding the
    /// text `NULL` would read as null here: the tables hold none.
    async fn deltaload_rows(&self, table: &TableName) -> Value {
        let schema = table.schema();
        let columns: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
        let select: Vec<String> = columns.iter().map(|c| quoted(c)).collect();
        let double: Vec<bool> = schema
            .fields()
            .iter()
            .map(|f| matches!(f.data_type(), DataType::Float64))
            .collect();
        let rows = self.sb.rows(table.clone(), &select.join(", ")).await;
        let rows: Vec<Vec<Option<String>>> = rows
            .into_iter()
            .map(|row| {
                row.into_iter()
                    .zip(&double)
                    .map(|(cell, &double)| match cell.as_str() {
                        "NULL" => None,
                        _ if double => Some(cell.parse::<f64>().expect("a double").to_string()),
                        _ => Some(cell),
                    })
                    .collect()
            })
            .collect();
        json!({ "columns": columns, "rows": rows })
    }

    /// What every reader returned of `table` (`tests/readers.py`), by reader.
    fn read_with_every_reader(&self, table: &TableName) -> Value {
        let path = self.path(table);
        let keys = sort_keys(table);
        let mut args = vec![path.to_str().expect("utf-8 path")];
        args.extend(keys.iter().map(String::as_str));
        let out = crate::other_engines::run_python(READERS_PY, &args);
        let text = String::from_utf8_lossy(&out.stdout);
        let read: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
        for (reader, result) in read.as_object().expect("an object") {
            eprintln!("{}: {reader} {}", table.as_str(), result["version"]);
        }
        read
    }
}

/// The columns deltaload sorts `table`'s rows by ([`TableName::sort_columns`]).
fn sort_keys(table: &TableName) -> Vec<String> {
    match table {
        TableName::Target(d) | TableName::Tombstones(d) => {
            d.names(&d.keys).into_iter().map(String::from).collect()
        }
        TableName::History(d) => (d.names(&d.keys).into_iter().map(String::from))
            .chain([deltaload_core::spec::START_AT.to_string()])
            .collect(),
        TableName::HistoryLog(d) => (d.names(&d.keys).into_iter())
            .chain(d.names(&d.sequence_by))
            .map(String::from)
            .collect(),
        TableName::Rejected(_) => vec!["source_file".into(), "line_number".into()],
        TableName::Ledger | TableName::Reconciliation => {
            vec!["loaded_at".into(), "location".into()]
        }
        TableName::Expectations => ["loaded_at", "location", "dataset", "expectation"]
            .map(String::from)
            .to_vec(),
    }
}

/// Runs `deltaload ARGS` in the sandbox; it must succeed. Returns its output.
fn load(sb: &Sandbox, args: &[&str]) -> String {
    let out = deltaload(sb, args, None);
    assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
    deltaload_tests::stdout(&out)
}

/// `orders` from the seed's two days, loaded one at a time (day 2 updates
/// orders of day 1), built in or as merge-on-read.
fn orders(merge_on_read: bool) -> Written {
    let sb = Sandbox::with_seed_files();
    let mut spec = Vec::new();
    if merge_on_read {
        let text = ORDERS_SPEC.replacen(
            "keys = [\"order_id\"]",
            "keys = [\"order_id\"]\nmerge_on_read = true",
            1,
        );
        assert_ne!(text, ORDERS_SPEC);
        std::fs::write(sb.dir.path().join("orders.toml"), text).unwrap();
        spec = vec!["--spec", "orders.toml"];
    }
    for file in ["raw/a.csv", "raw/b.csv"] {
        load(&sb, &[spec.as_slice(), &["load", file]].concat());
    }
    Written {
        sb,
        dataset: Dataset::orders(),
    }
}

/// `things` with `layout` (a `partition_by` or `merge_on_read` line, or
/// nothing), its two days loaded one at a time.
fn things(layout: &str) -> Written {
    let text = THINGS.replace("LAYOUT", layout);
    let spec = Spec::parse(&text, "things.toml").unwrap();
    let dataset = spec.datasets[0].clone();
    let sb = Sandbox::with_spec(spec);
    std::fs::write(sb.dir.path().join("things.toml"), text).unwrap();
    sb.file("a.jsonl", THINGS_A);
    sb.file("b.jsonl", THINGS_B);
    for file in ["raw/a.jsonl", "raw/b.jsonl"] {
        let out = load(&sb, &["--spec", "things.toml", "load", file]);
        assert!(out.contains(": 0 rejected"), "every record loads: {out}");
    }
    Written { sb, dataset }
}

/// Every commit of the table at `table`, one after another.
fn log(table: &Path) -> String {
    let mut commits: Vec<PathBuf> = std::fs::read_dir(table.join("_delta_log"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    commits.sort();
    commits
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect()
}

/// The deletion vector files of the table at `table`.
fn deletion_vector_files(table: &Path) -> usize {
    std::fs::read_dir(table)
        .unwrap()
        .filter(|e| {
            let name = e.as_ref().unwrap().file_name();
            name.to_string_lossy().starts_with("deletion_vector_")
        })
        .count()
}

/// Whether the table's rows are marked deleted in deletion vectors: files of
/// them, commits adding data files with them, and the protocol's feature;
/// all three or none.
fn has_deletion_vectors(table: &Path) -> bool {
    let log = log(table);
    let files = deletion_vector_files(table) > 0;
    let marked = log.contains("\"deletionVector\":{");
    let feature = log.contains("\"readerFeatures\":[\"deletionVectors\"]");
    assert_eq!((marked, feature), (files, files), "{log}");
    files
}

/// Reads `table` with every reader and asserts each returned deltaload's
/// rows exactly, `to_pyarrow_table` too unless the table has deletion
/// vectors, which it must then refuse. Returns deltaload's rows.
async fn assert_every_reader_reads_as_deltaload(
    w: &Written,
    table: &TableName,
    deletion_vectors: bool,
) -> Value {
    let path = w.path(table);
    assert_eq!(has_deletion_vectors(&path), deletion_vectors);
    let expected = w.deltaload_rows(table).await;
    let read = w.read_with_every_reader(table);
    let mut readers = FULL_READERS.to_vec();
    if !deletion_vectors {
        readers.push(PYARROW);
    }
    for reader in readers {
        let got = &read[reader];
        assert!(got.get("error").is_none(), "{reader}: {got}");
        let got = json!({ "columns": got["columns"], "rows": got["rows"] });
        assert_eq!(got, expected, "{reader} reads {} otherwise", path.display());
    }
    if deletion_vectors {
        let error = read[PYARROW]["error"].as_str().unwrap_or_default();
        assert!(
            error.contains("The table has set these reader features: {'deletionVectors'}")
                && error.contains("not yet supported"),
            "{PYARROW} must refuse deletion vectors: {}",
            read[PYARROW]
        );
    }
    expected
}

/// The row of `rows` (deltaload's) whose first cell is `key`.
fn row<'a>(rows: &'a Value, key: &str) -> &'a Value {
    rows["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r[0] == key)
        .unwrap_or_else(|| panic!("no row {key} in {rows}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn every_reader_reads_a_copy_on_write_orders_as_deltaload() {
    let w = orders(false);
    let rows = assert_every_reader_reads_as_deltaload(&w, &w.target(), false).await;
    assert_eq!(rows["rows"].as_array().unwrap().len(), 5, "{rows}");
    assert_eq!(row(&rows, "1004")[2], "shipped", "day 2 updated it");
}

#[tokio::test(flavor = "multi_thread")]
async fn sql_readers_read_a_merge_on_read_orders_and_pyarrow_refuses_it() {
    let w = orders(true);
    let rows = assert_every_reader_reads_as_deltaload(&w, &w.target(), true).await;
    assert_eq!(rows["rows"].as_array().unwrap().len(), 5, "{rows}");
    assert_eq!(row(&rows, "1004")[2], "shipped", "day 2 updated it");
}

/// What every `things` table holds after its two days, whatever its layout.
fn assert_things(rows: &Value) {
    let keys: Vec<&Value> = rows["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r[0])
        .collect();
    assert_eq!(keys, ["1", "3", "4", "5", "6"], "2 deleted: {rows}");
    let nulls = json!([null, null, null, null, null, null, null]);
    assert_eq!(
        row(rows, "4").as_array().unwrap()[2..9],
        nulls.as_array().unwrap()[..]
    );
    // deltaload stores -0.0 as 0 (crates/core/src/fields.rs, parse_double).
    assert_eq!(row(rows, "3")[4], "0", "{rows}");
}

#[tokio::test(flavor = "multi_thread")]
async fn every_reader_reads_every_column_type_as_deltaload() {
    let w = things("");
    assert_things(&assert_every_reader_reads_as_deltaload(&w, &w.target(), false).await);
}

#[tokio::test(flavor = "multi_thread")]
async fn every_reader_reads_every_column_type_partitioned_as_deltaload() {
    let w = things("partition_by = [\"day\"]");
    assert!(
        w.path(&w.target()).join("day=2026-10-02").is_dir(),
        "partitioned by day"
    );
    assert_things(&assert_every_reader_reads_as_deltaload(&w, &w.target(), false).await);
}

#[tokio::test(flavor = "multi_thread")]
async fn sql_readers_read_every_column_type_through_deletion_vectors() {
    let w = things("merge_on_read = true");
    assert_things(&assert_every_reader_reads_as_deltaload(&w, &w.target(), true).await);
}

/// The tables beside a dataset's are read alike: its rejects and tombstones,
/// the ledger and the reconciliation.
#[tokio::test(flavor = "multi_thread")]
async fn every_reader_reads_rejects_tombstones_ledger_and_reconciliation_as_deltaload() {
    let orders = orders(false);
    let things = things("");
    let rejected = TableName::Rejected(orders.dataset.clone());
    let rows = assert_every_reader_reads_as_deltaload(&orders, &rejected, false).await;
    assert_eq!(
        rows["rows"].as_array().unwrap().len(),
        1,
        "the seed's one reject"
    );
    let tombstones = TableName::Tombstones(things.dataset.clone());
    let rows = assert_every_reader_reads_as_deltaload(&things, &tombstones, false).await;
    assert_eq!(rows["rows"][0][0], "2", "the delete of 2: {rows}");
    for shared in [TableName::Ledger, TableName::Reconciliation] {
        let rows = assert_every_reader_reads_as_deltaload(&things, &shared, false).await;
        assert_eq!(
            rows["rows"].as_array().unwrap().len(),
            2,
            "two files: {rows}"
        );
    }
}
