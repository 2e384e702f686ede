//! Deletes that stay deleted in any load order: random files of upserts and
//! deletes over a composite key, as JSON Lines, as Parquet and as CSV, loaded
//! in any order with repeats, give the table and the tombstones a simple
//! model says; the same files in the three formats give the same table.

use deltaload_core::Spec;
use deltaload_lake::TableName;
use deltaload_tests::Sandbox;
use proptest::prelude::*;
use std::collections::BTreeMap;

/// The inventory dataset's keys, sequence, deletes and columns.
pub(crate) const INVENTORY: &str = r#"keys = ["warehouse", "sku"]
sequence_by = ["event_time", "seq"]
delete_when = { column = "op", in = ["d", "delete"] }
[[dataset.columns]]
name = "warehouse"
type = "string"
[[dataset.columns]]
name = "sku"
type = "int"
[[dataset.columns]]
name = "event_time"
type = "timestamp"
[[dataset.columns]]
name = "seq"
type = "bigint"
[[dataset.columns]]
name = "qty"
type = "int"
"#;

/// The inventory dataset in `format` (CSV files carry a header with `op` last).
pub(crate) fn spec(format: &str) -> Spec {
    let csv = if format == "csv" {
        "[dataset.csv]\nheader = \"by_name\"\n"
    } else {
        ""
    };
    let text =
        format!("[[dataset]]\nname = \"inventory\"\nformat = \"{format}\"\n{INVENTORY}{csv}");
    Spec::parse(&text, "inventory.toml").unwrap()
}

/// One change; `op` is "u", "d", "delete" or absent.
#[derive(Debug, Clone)]
pub(crate) struct Change {
    pub warehouse: &'static str,
    pub sku: i32,
    pub hour: u32,
    pub seq: i64,
    pub qty: Option<i32>,
    pub op: Option<&'static str>,
}

impl Change {
    fn time(&self) -> String {
        format!("2026-10-01T1{}:00:00", self.hour)
    }

    fn is_delete(&self) -> bool {
        matches!(self.op, Some("d" | "delete"))
    }

    pub fn json(&self) -> String {
        let mut line = format!(
            r#"{{"warehouse":"{}","sku":{},"event_time":"{}","seq":{},"qty":{}"#,
            self.warehouse,
            self.sku,
            self.time(),
            self.seq,
            self.qty.map_or("null".to_string(), |q| q.to_string())
        );
        if let Some(op) = self.op {
            line += &format!(r#","op":"{op}""#);
        }
        line + "}\n"
    }

    fn csv(&self) -> String {
        format!(
            "{},{},{},{},{},{}\n",
            self.warehouse,
            self.sku,
            self.time(),
            self.seq,
            self.qty.map_or(String::new(), |q| q.to_string()),
            self.op.unwrap_or("")
        )
    }
}

/// A file of `changes` in `format`.
pub(crate) fn file_bytes(format: &str, changes: &[Change]) -> Vec<u8> {
    match format {
        "jsonl" => changes
            .iter()
            .map(Change::json)
            .collect::<String>()
            .into_bytes(),
        "csv" => std::iter::once("warehouse,sku,event_time,seq,qty,op\n".to_string())
            .chain(changes.iter().map(Change::csv))
            .collect::<String>()
            .into_bytes(),
        _ => parquet_bytes(changes),
    }
}

fn parquet_bytes(changes: &[Change]) -> Vec<u8> {
    use deltalake::arrow::array::{
        ArrayRef, Int32Array, Int64Array, StringArray, TimestampMicrosecondArray,
    };
    use deltalake::arrow::record_batch::RecordBatch;
    use std::sync::Arc;
    let micros = |c: &Change| {
        chrono::NaiveDateTime::parse_from_str(&c.time(), "%Y-%m-%dT%H:%M:%S")
            .unwrap()
            .and_utc()
            .timestamp_micros()
    };
    let columns: Vec<(&str, ArrayRef)> = vec![
        (
            "warehouse",
            Arc::new(StringArray::from_iter_values(
                changes.iter().map(|c| c.warehouse),
            )),
        ),
        (
            "sku",
            Arc::new(Int32Array::from_iter_values(changes.iter().map(|c| c.sku))),
        ),
        (
            "event_time",
            Arc::new(TimestampMicrosecondArray::from_iter_values(
                changes.iter().map(micros),
            )),
        ),
        (
            "seq",
            Arc::new(Int64Array::from_iter_values(changes.iter().map(|c| c.seq))),
        ),
        (
            "qty",
            Arc::new(Int32Array::from_iter(changes.iter().map(|c| c.qty))),
        ),
        (
            "op",
            Arc::new(StringArray::from_iter(changes.iter().map(|c| c.op))),
        ),
    ];
    let batch = RecordBatch::try_from_iter(columns).unwrap();
    let mut out = Vec::new();
    let mut writer =
        deltalake::parquet::arrow::ArrowWriter::try_new(&mut out, batch.schema(), None).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
    out
}

fn change() -> impl Strategy<Value = Change> {
    change_of(
        vec!["a", "b"],
        1..3,
        vec![None, Some("u"), Some("d"), Some("delete")],
    )
}

/// Changes of these warehouses, skus and ops, at two hours and two sequences.
pub(crate) fn change_of(
    warehouses: Vec<&'static str>,
    skus: std::ops::Range<i32>,
    ops: Vec<Option<&'static str>>,
) -> impl Strategy<Value = Change> {
    (
        prop::sample::select(warehouses),
        skus,
        0u32..2,
        0i64..2,
        prop::option::of(1i32..3),
        prop::sample::select(ops),
    )
        .prop_map(|(warehouse, sku, hour, seq, qty, op)| Change {
            warehouse,
            sku,
            hour,
            seq,
            qty,
            op,
        })
}

/// Files, then a load order over all of them with some loaded again.
fn scenario() -> impl Strategy<Value = (Vec<Vec<Change>>, Vec<usize>)> {
    prop::collection::vec(prop::collection::vec(change(), 0..6), 1..4).prop_flat_map(|files| {
        let n = files.len();
        let order = prop::collection::vec(0..n, 0..3)
            .prop_map(move |repeats| (0..n).chain(repeats).collect::<Vec<_>>())
            .prop_shuffle();
        (Just(files), order)
    })
}

/// How the model ranks a change of a key: (hour, seq), then a delete over an
/// upsert, then upserts by qty (null lowest).
type Rank = (u32, i64, bool, Option<i32>);

/// The rows each key's greatest change leaves, and the keys whose greatest
/// change is a delete (with its time and seq).
fn model(files: &[Vec<Change>]) -> (Vec<Vec<String>>, Vec<Vec<String>>) {
    let mut best: BTreeMap<(String, i32), (Rank, Change)> = BTreeMap::new();
    for c in files.iter().flatten() {
        let rank = (
            c.hour,
            c.seq,
            c.is_delete(),
            if c.is_delete() { None } else { c.qty },
        );
        let key = (c.warehouse.to_string(), c.sku);
        if best.get(&key).is_none_or(|(held, _)| rank > *held) {
            best.insert(key, (rank, c.clone()));
        }
    }
    let (mut rows, mut dead) = (Vec::new(), Vec::new());
    for (_, c) in best.into_values() {
        let shown = vec![
            c.warehouse.to_string(),
            c.sku.to_string(),
            format!("{}Z", c.time()),
            c.seq.to_string(),
        ];
        if c.is_delete() {
            dead.push(shown);
        } else {
            let mut row = shown;
            row.push(c.qty.map_or("NULL".into(), |q| q.to_string()));
            rows.push(row);
        }
    }
    (rows, dead)
}

/// Loads `files` in `order` as `format`; the table's rows and the tombstones.
pub(crate) async fn load_in_order(
    format: &str,
    files: &[Vec<Change>],
    order: &[usize],
) -> (Vec<Vec<String>>, Vec<Vec<String>>) {
    let spec = spec(format);
    let sb = Sandbox::with_spec(spec.clone());
    let paths: Vec<_> = files
        .iter()
        .enumerate()
        .map(|(i, f)| sb.file(&format!("f{i}.{format}"), file_bytes(format, f)))
        .collect();
    for &i in order {
        sb.load(&paths[i], false).await;
    }
    table_and_tombstones(&sb).await
}

/// The inventory table's rows and its tombstones, as text.
async fn table_and_tombstones(sb: &Sandbox) -> (Vec<Vec<String>>, Vec<Vec<String>>) {
    let d = sb.spec.datasets[0].clone();
    let rows = sb
        .rows(
            TableName::Target(d.clone()),
            "warehouse, sku, event_time, seq, qty",
        )
        .await;
    let dead = sb
        .rows(TableName::Tombstones(d), "warehouse, sku, event_time, seq")
        .await;
    (rows, dead)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 8, ..ProptestConfig::default() })]
    #[test]
    fn any_load_order_of_upserts_and_deletes_gives_the_model_in_every_format((files, order) in scenario()) {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let expected = model(&files);
        for format in ["jsonl", "parquet", "csv"] {
            let got = runtime.block_on(load_in_order(format, &files, &order));
            prop_assert_eq!(&got, &expected, "format {}", format);
        }
    }
}

#[tokio::test]
async fn a_delete_loaded_before_its_older_upsert_keeps_the_row_away_and_a_newer_change_brings_it_back(
) {
    let c = |hour, qty, op| Change {
        warehouse: "a",
        sku: 1,
        hour,
        seq: 0,
        qty,
        op,
    };
    let files = vec![vec![c(1, None, Some("d"))], vec![c(0, Some(5), Some("u"))]];
    let (rows, dead) = load_in_order("jsonl", &files, &[0, 1]).await;
    assert!(rows.is_empty(), "{rows:?}");
    assert_eq!(dead, vec![vec!["a", "1", "2026-10-01T11:00:00Z", "0"]]);
    let mut later = files.clone();
    later.push(vec![c(2, Some(7), None)]);
    let (rows, dead) = load_in_order("jsonl", &later, &[0, 1, 2]).await;
    assert_eq!(rows, vec![vec!["a", "1", "2026-10-01T12:00:00Z", "0", "7"]]);
    assert!(
        dead.is_empty(),
        "the newer change clears the tombstone: {dead:?}"
    );
}

/// A delete names its key and sequence only: the other columns, even those
/// that may not be null, are absent from it and never reach the table.
#[tokio::test]
async fn a_delete_without_the_columns_that_may_not_be_null_removes_the_row() {
    let text = format!(
        "[[dataset]]\nname = \"inventory\"\nformat = \"jsonl\"\n{}",
        INVENTORY.replace(
            "name = \"qty\"\ntype = \"int\"\n",
            "name = \"qty\"\ntype = \"int\"\nnullable = false\n"
        )
    );
    let spec = Spec::parse(&text, "inventory.toml").unwrap();
    let sb = Sandbox::with_spec(spec.clone());
    let upsert = sb.file(
        "1.jsonl",
        r#"{"warehouse":"a","sku":1,"event_time":"2026-10-01T10:00:00","seq":0,"qty":3}"#,
    );
    let delete = sb.file(
        "2.jsonl",
        r#"{"warehouse":"a","sku":1,"event_time":"2026-10-01T11:00:00","seq":0,"op":"d"}"#,
    );
    for path in [&upsert, &delete] {
        let outcome = sb.load(path, false).await;
        assert!(
            matches!(outcome, deltaload_lake::LoadOutcome::Loaded(_)),
            "{outcome:?}"
        );
    }
    let d = spec.datasets[0].clone();
    let rows = sb.rows(TableName::Target(d), "warehouse, sku").await;
    assert!(rows.is_empty(), "{rows:?}");
}

/// Four writers load the same files of upserts and deletes at once, each in
/// its own order: every file loads once, and the table and the tombstones are
/// those of the model (a writer reading between another's tombstone and table
/// commits sees the tombstone first).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_writers_loading_upserts_and_deletes_in_different_orders_give_the_model() {
    let c = |sku, hour, seq, qty, op| Change {
        warehouse: "a",
        sku,
        hour,
        seq,
        qty,
        op,
    };
    let files: Vec<Vec<Change>> = vec![
        vec![c(1, 1, 0, None, Some("d")), c(2, 0, 0, Some(1), None)],
        vec![c(1, 0, 1, Some(2), None), c(2, 1, 0, None, Some("delete"))],
        vec![
            c(1, 1, 0, Some(3), Some("u")),
            c(2, 1, 1, Some(4), None),
            c(3, 0, 0, Some(5), None),
        ],
        vec![c(3, 1, 0, None, Some("d")), c(1, 1, 1, Some(6), None)],
    ];
    let spec = spec("jsonl");
    let sb = Sandbox::with_spec(spec.clone());
    let sources: Vec<deltaload_lake::SourceFile> = files
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let path = sb.file(&format!("f{i}.jsonl"), file_bytes("jsonl", f));
            deltaload_lake::SourceFile {
                location: deltaload_lake::local_source(path.to_str().unwrap()).unwrap(),
                bytes: std::fs::read(&path).unwrap(),
                on_disk: None,
                refused: None,
                etag: None,
                version_id: None,
            }
        })
        .collect();
    sb.lake().await; // the tables exist before the writers race
    let orders: [[usize; 4]; 4] = [[0, 1, 2, 3], [3, 2, 1, 0], [1, 3, 0, 2], [2, 0, 3, 1]];
    let writers = orders.iter().enumerate().map(|(w, order)| {
        let files: Vec<_> = order.iter().map(|&i| sources[i].clone()).collect();
        let (root, spec) = (sb.root.clone(), spec.clone());
        tokio::spawn(async move {
            let mut lake = deltaload_lake::Lake::open_spec(&root, &spec).await.unwrap();
            deltaload_tests::load_one_by_one(&mut lake, w as u64, files).await
        })
    });
    let loaded: usize = futures::future::join_all(writers)
        .await
        .into_iter()
        .map(|r| r.unwrap())
        .sum();
    assert_eq!(loaded, files.len(), "each file loads once");
    assert_eq!(table_and_tombstones(&sb).await, model(&files));
}
