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
    deltaload_tests::parquet_bytes(&batch)
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
        let order = deltaload_tests::load_order(n);
        (Just(files), order)
    })
}

/// How the model ranks a change of a key: (hour, seq), then a delete over an
/// upsert, then upserts by qty (null lowest).
type Rank = (u32, i64, bool, Option<i32>);

/// The rows each key's greatest change leaves, and the keys whose greatest
/// change is a delete (with its time and seq).
pub(crate) fn model(files: &[Vec<Change>]) -> (Vec<Vec<String>>, Vec<Vec<String>>) {
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
pub(crate) async fn table_and_tombstones(sb: &Sandbox) -> (Vec<Vec<String>>, Vec<Vec<String>>) {
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
