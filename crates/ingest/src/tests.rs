//! The Arrow reader holds exactly what the value readers hold: the same
//! records, values and rejects, for any file.

use super::*;
use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::Array;
use deltaload_core::{Spec, Value};
use proptest::prelude::*;

/// Row `i` of `batch` as values (the delete flag last when the dataset has deletes).
fn row_values(dataset: &Dataset, batch: &RecordBatch, i: usize) -> Vec<Value> {
    let mut row: Vec<Value> = dataset
        .columns
        .iter()
        .enumerate()
        .map(|(c, column)| {
            let a = batch.column(c);
            if a.is_null(i) {
                return Value::Null;
            }
            match column.ty {
                ColumnType::String => Value::Text(a.as_string::<i32>().value(i).to_string()),
                ColumnType::Boolean => Value::Bool(a.as_boolean().value(i)),
                ColumnType::Int => Value::Int(a.as_primitive::<Int32Type>().value(i).into()),
                ColumnType::Bigint => Value::Int(a.as_primitive::<Int64Type>().value(i)),
                ColumnType::Double => Value::Double(a.as_primitive::<Float64Type>().value(i)),
                ColumnType::Decimal { .. } => {
                    Value::Decimal(a.as_primitive::<Decimal128Type>().value(i).into())
                }
                ColumnType::Date => Value::Date(a.as_primitive::<Date32Type>().value(i)),
                ColumnType::Timestamp => {
                    Value::Timestamp(a.as_primitive::<TimestampMicrosecondType>().value(i))
                }
            }
        })
        .collect();
    if dataset.delete_when.is_some() {
        let flags = batch.column(dataset.columns.len()).as_boolean();
        row.push(Value::Bool(flags.value(i)));
    }
    row
}

/// What the Arrow reader read, as the value readers give it.
pub(crate) fn as_values(dataset: &Dataset, ingested: &Ingested) -> Vec<Vec<Value>> {
    ingested
        .batches
        .iter()
        .flat_map(|b| (0..b.num_rows()).map(move |i| row_values(dataset, b, i)))
        .collect()
}

fn same_as_the_value_reader(dataset: &Dataset, bytes: &[u8]) -> Result<(), TestCaseError> {
    let values = match dataset.format {
        Format::Jsonl => deltaload_core::read_jsonl(dataset, bytes),
        _ => deltaload_core::read_file(dataset, bytes),
    };
    let arrow = read_changes(dataset, bytes);
    match (values, arrow) {
        (Ok(v), Ok(a)) => {
            let rows: Vec<Vec<Value>> = v.changes.iter().map(<[Value]>::to_vec).collect();
            prop_assert_eq!(as_values(dataset, &a), rows);
            prop_assert_eq!(a.rejects, v.rejects);
            for b in &a.batches {
                prop_assert_eq!(b.schema(), changes_schema(dataset));
                prop_assert!(b.num_rows() <= CHANGE_BATCH_ROWS);
            }
        }
        (Err(v), Err(IngestError::Refused(a))) => prop_assert_eq!(a, v),
        (v, a) => prop_assert!(
            false,
            "values {:?}, arrow {:?}",
            v.is_ok(),
            a.map(|a| a.records())
        ),
    }
    Ok(())
}

/// Lines of an orders file: rows, rejects of each kind, blank lines, quotes,
/// CRLF and CR ends, text beyond ASCII.
fn csv_line() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "1001,C01,placed,25.50,EUR,2026-10-01T09:15:00,2026-10-01T09:15:00\n",
        "1002,C02,paid,x,EUR,2026-10-01T09:15:00,2026-10-01T09:15:00\n",
        "1003,\"C,\"\"3\"\"\",paid,1.00,EUR,,2026-10-02T09:15:00\r\n",
        "\n",
        "\r\n",
        "1004,C04,paid,1.00\n",
        "1005,Zoë,shipped,2.00,USD,,2026-10-03T00:00:00\r",
        ",C06,paid,1.00,EUR,,2026-10-03T00:00:00\n",
        "99999999999999999999,C07,paid,1.00,EUR,,2026-10-03T00:00:00\n",
        "1008,\"multi\nline\",paid,-0.5,EUR,2026-10-01T00:00:00Z,2026-10-03T00:00:00+02:00\n",
    ])
    .prop_map(str::to_string)
}

/// A dataset of every type, with deletes, as JSON Lines.
const EVERY_TYPE: &str = r#"
[[dataset]]
name = "things"
format = "jsonl"
keys = ["id"]
sequence_by = ["version"]
delete_when = { column = "op", in = ["d"] }
[[dataset.columns]]
name = "id"
type = "bigint"
[[dataset.columns]]
name = "version"
type = "int"
[[dataset.columns]]
name = "amount"
type = "decimal(12,3)"
[[dataset.columns]]
name = "ratio"
type = "double"
[[dataset.columns]]
name = "day"
type = "date"
[[dataset.columns]]
name = "at"
type = "timestamp"
[[dataset.columns]]
name = "ok"
type = "boolean"
[[dataset.columns]]
name = "note"
type = "string"
"#;

fn json_line() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        r#"{"id":1,"version":1,"amount":"1.5","ratio":0.25,"day":"2026-10-01","at":"2026-10-01T00:00:00Z","ok":true,"note":"a\"b"}"#,
        r#"{"id":2,"version":2,"amount":12.125,"ratio":"1e3","day":null,"at":"2026-10-01T01:00:00","ok":"false","note":"\u00e9"}"#,
        r#"{"id":3,"version":1,"op":"d"}"#,
        r#"{"id":"x","version":1}"#,
        r#"{"id":4,"version":99999999999}"#,
        r#"{"id":5,"version":1,"amount":1.0001}"#,
        r#"{"id":6,"version":1,"note":["not","text"]}"#,
        r#"not json"#,
        r#"[1,2]"#,
        r#"{"id":7,"id":8,"version":1}"#,
        "",
        "  ",
    ])
    .prop_map(|l| format!("{l}\n"))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn csv_files_read_into_arrow_as_into_values(lines in prop::collection::vec(csv_line(), 0..60)) {
        let d = Dataset::orders();
        let body = format!(
            "order_id,customer_id,status,amount,currency,ordered_at,updated_at\n{}",
            lines.concat()
        );
        same_as_the_value_reader(&d, body.as_bytes())?;
    }

    #[test]
    fn json_lines_read_into_arrow_as_into_values(lines in prop::collection::vec(json_line(), 0..60)) {
        let spec = Spec::parse(EVERY_TYPE, "things.toml").unwrap();
        same_as_the_value_reader(&spec.datasets[0], lines.concat().as_bytes())?;
    }
}

#[test]
fn a_refused_header_is_refused_by_both() {
    let d = Dataset::orders();
    let refused = read_changes(&d, b"order_id,customer\n1,a\n");
    assert!(matches!(refused, Err(IngestError::Refused(_))));
}

#[test]
fn large_files_come_in_bounded_batches_in_record_order() {
    let d = Dataset::orders();
    let mut body =
        String::from("order_id,customer_id,status,amount,currency,ordered_at,updated_at\n");
    let n = CHANGE_BATCH_ROWS * 2 + 10;
    for i in 0..n {
        body.push_str(&format!("{i},C,placed,1.00,EUR,,2026-10-01T00:00:00\n"));
        if i % 1000 == 0 {
            body.push_str("bad,C,placed,1.00,EUR,,2026-10-01T00:00:00\n");
        }
    }
    let read = read_changes(&d, body.as_bytes()).unwrap();
    assert!(read.batches.len() >= 3, "{}", read.batches.len());
    assert_eq!(read.changes(), n as u64);
    let ids: Vec<i64> = read
        .batches
        .iter()
        .flat_map(|b| b.column(0).as_primitive::<Int64Type>().values().to_vec())
        .collect();
    assert!(ids.iter().copied().eq(0..n as i64));
}
