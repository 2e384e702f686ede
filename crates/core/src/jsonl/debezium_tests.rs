//! Debezium's three line shapes, its operations and its value encodings.

use super::super::read_jsonl;
use super::*;
use crate::spec::Spec;
use crate::value::Value;
use std::sync::Arc;

const SPEC: &str = r#"
[[dataset]]
name = "customers"
preset = "debezium"
keys = ["id"]
columns = [
    { name = "id", type = "int" },
    { name = "name", type = "string" },
    { name = "price", type = "decimal(10,2)" },
    { name = "born", type = "date" },
    { name = "seen", type = "timestamp" },
]
"#;

fn dataset() -> Arc<Dataset> {
    Spec::parse(SPEC, "t.toml").unwrap().datasets.remove(0)
}

/// The Kafka Connect schema of the row, and of the envelope around it.
const ROW_SCHEMA: &str = r#"{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"},{"type":"string","optional":true,"field":"name"},{"type":"bytes","optional":true,"name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"2","connect.decimal.precision":"10"},"field":"price"},{"type":"int32","optional":true,"name":"io.debezium.time.Date","version":1,"field":"born"},{"type":"int64","optional":true,"name":"io.debezium.time.MicroTimestamp","version":1,"field":"seen"}],"optional":true,"name":"dbserver1.public.customers.Value"}"#;

fn envelope_schema() -> String {
    format!(
        r#"{{"type":"struct","fields":[{},{},{{"type":"string","optional":false,"field":"op"}}],"optional":false,"name":"dbserver1.public.customers.Envelope"}}"#,
        ROW_SCHEMA.replacen(
            "\"optional\":true,\"name\":\"dbserver1",
            "\"field\":\"before\",\"optional\":true,\"name\":\"dbserver1",
            1
        ),
        ROW_SCHEMA.replacen(
            "\"optional\":true,\"name\":\"dbserver1",
            "\"field\":\"after\",\"optional\":true,\"name\":\"dbserver1",
            1
        ),
    )
}

/// Anne's row as Debezium encodes it: 12.34, 2026-12-01, 10:15:00.123456 UTC.
const AFTER: &str = r#"{"id":1,"name":"Anne","price":"BNI=","born":20788,"seen":1796120100123456}"#;
const SOURCE: &str = r#""source":{"connector":"postgresql","lsn":24023128,"txId":556}"#;

fn payload(op: &str, before: &str, after: &str) -> String {
    format!(r#"{{"before":{before},"after":{after},{SOURCE},"op":"{op}","ts_ms":1796120100200}}"#)
}

fn wrapped(op: &str, before: &str, after: &str) -> String {
    format!(
        r#"{{"schema":{},"payload":{}}}"#,
        envelope_schema(),
        payload(op, before, after)
    )
}

fn read(lines: &[String]) -> crate::reader::ParsedFile {
    read_jsonl(&dataset(), lines.join("\n").as_bytes()).unwrap()
}

/// The declared columns of each row, then its delete flag; rejects' reasons.
fn rows(lines: &[String]) -> (Vec<Vec<Value>>, Vec<String>) {
    let parsed = read(lines);
    let d = dataset();
    let rows = (0..parsed.changes.len())
        .map(|i| {
            let row = parsed.changes.row(i);
            let mut declared = row[..d.declared().len()].to_vec();
            declared.push(Value::Bool(d.is_delete(row)));
            declared
        })
        .collect();
    let reasons = parsed
        .rejects
        .iter()
        .map(|r| r.reason.to_string())
        .collect();
    (rows, reasons)
}

fn anne() -> Vec<Value> {
    vec![
        Value::Int(1),
        Value::Text("Anne".into()),
        Value::Decimal(1234.into()),
        Value::Date(20788),
        Value::Timestamp(1_796_120_100_123_456),
        Value::Bool(false),
    ]
}

fn deleted(id: i64) -> Vec<Value> {
    let mut row = vec![Value::Null; 6];
    row[0] = Value::Int(id);
    row[5] = Value::Bool(true);
    row
}

#[test]
fn the_three_shapes_read_the_same_row() {
    let flat = r#"{"id":1,"name":"Anne","price":"BNI=","born":20788,"seen":1796120100123456,"__op":"c","__lsn":24023128,"__source_ts_ms":1796120100100,"__deleted":"false"}"#;
    let schema_flat = format!(r#"{{"schema":{ROW_SCHEMA},"payload":{flat}}}"#);
    for op in ["r", "c", "u"] {
        let lines = [
            wrapped(op, "null", AFTER),
            payload(op, r#"{"id":1}"#, AFTER),
            flat.to_string(),
            schema_flat.clone(),
        ];
        let (rows, rejects) = rows(&lines);
        assert_eq!(rejects, Vec::<String>::new());
        assert_eq!(rows, vec![anne(); 4], "op {op}");
    }
}

#[test]
fn a_delete_reads_its_key_from_before_and_a_tombstone_is_no_change() {
    let lines = [
        wrapped("d", r#"{"id":7,"name":null}"#, "null"),
        payload("d", r#"{"id":8}"#, "null"),
        r#"{"id":9,"name":"Bo","__deleted":"true"}"#.to_string(),
        r#"{"id":10,"__op":"d"}"#.to_string(),
        "null".to_string(),
        r#"{"schema":null,"payload":null}"#.to_string(),
    ];
    let parsed = read(&lines);
    assert_eq!(parsed.records(), 4, "the tombstones are no records");
    let (rows, rejects) = rows(&lines);
    assert!(rejects.is_empty(), "{rejects:?}");
    assert_eq!(rows, vec![deleted(7), deleted(8), deleted(9), deleted(10)]);
}

#[test]
fn the_order_columns_are_the_line_and_a_file_rank_filled_later() {
    let d = dataset();
    let parsed = read(&["".to_string(), payload("c", "null", AFTER)]);
    let row = parsed.changes.row(0);
    assert_eq!(d.generated, 2);
    assert_eq!(&row[5..7], &[Value::Null, Value::Int(2)]);
}

#[test]
fn the_schema_says_millis_nanos_and_a_decimal_scale() {
    let schema = ROW_SCHEMA
        .replace(
            "io.debezium.time.MicroTimestamp",
            "io.debezium.time.Timestamp",
        )
        .replace(r#""scale":"2""#, r#""scale":"1""#);
    let line = |seen: &str, price: &str, schema: &str| {
        let after = format!(r#"{{"id":1,"price":"{price}","seen":{seen}}}"#);
        format!(r#"{{"schema":{schema},"payload":{after}}}"#)
    };
    let nanos = ROW_SCHEMA.replace("MicroTimestamp", "NanoTimestamp");
    let lines = [
        line("1796120100123", "BNI=", &schema),
        line("1796120100123456789", "BNI=", &nanos),
        line(
            "1796120100123",
            "MDk=",
            &schema.replace(r#""scale":"1""#, r#""scale":"3""#),
        ),
    ];
    let (rows, rejects) = rows(&lines);
    assert_eq!(rows[0][2], Value::Decimal(12340.into()), "123.4 at scale 2");
    assert_eq!(rows[0][4], Value::Timestamp(1_796_120_100_123_000));
    assert_eq!(rows[1][4], Value::Timestamp(1_796_120_100_123_456));
    assert_eq!(
        rejects,
        ["price \"12.345\" has more than 2 decimals (not rounded)"]
    );
}

#[test]
fn without_a_schema_the_declared_type_decides() {
    let after = |price: &str| format!(r#"{{"id":1,"price":{price}}}"#);
    let lines = [
        after(r#""12.34""#),
        after("12.34"),
        after(r#""BNI=""#),
        after(r#"{"scale":1,"value":"MDk="}"#),
        after(r#""-0.5""#),
        after(r#""z8c=""#),
        after(r#""1234""#),
    ];
    let (rows, rejects) = rows(&lines);
    assert!(rejects.is_empty(), "{rejects:?}");
    let prices: Vec<Value> = rows.iter().map(|r| r[2].clone()).collect();
    let cents = |c: i128| Value::Decimal(c.into());
    // "1234" is base64 (0xd76df8 at scale 2): a string mode decimal of
    // scale 0 needs the schema.
    let ambiguous = cents(0xd7_6d_f8 - (1 << 24));
    assert_eq!(
        prices,
        [
            cents(1234),
            cents(1234),
            cents(1234),
            cents(123_450),
            cents(-50),
            cents(-12345),
            ambiguous
        ]
    );
}

#[test]
fn lines_that_are_no_event_are_rejected_with_what_was_expected() {
    // A message event as Debezium writes it: no before nor after.
    let message =
        format!(r#"{{"op":"m","ts_ms":2,{SOURCE},"message":{{"prefix":"p","content":"Ymfy"}}}}"#);
    let lines = [
        payload("t", "null", "null"),
        message,
        payload("c", "null", "null"),
        payload("d", "null", "null"),
        r#"{"schema":{},"payload":[1]}"#.to_string(),
        r#"{"id":1,"__deleted":"yes"}"#.to_string(),
        r#"{"id":1,"price":"B@I="}"#.to_string(),
        r#"{"id":1,"born":99999999}"#.to_string(),
    ];
    let (_, rejects) = rows(&lines);
    let expected = [
        "op is \"t\", an operation deltaload does not apply",
        "op is \"m\", an operation deltaload does not apply",
        "is not a Debezium change event: an event of op \"c\", \"r\" or \"u\" without after",
        "is not a Debezium change event: a delete (op \"d\") without before",
        "is not a Debezium change event: payload is a JSON array, expected an object",
        "__deleted is \"\\\"yes\\\"\", expected \"true\" or \"false\"",
        "price \"B@I=\" is not plain decimal notation",
        "born 99999999 days since 1970-01-01 is not a date",
    ];
    assert_eq!(rejects.len(), expected.len(), "{rejects:?}");
    for (got, want) in rejects.iter().zip(expected) {
        assert!(got.starts_with(want), "{got}\nexpected {want}");
    }
}

#[test]
fn base64_and_scaled_text_round_trip() {
    assert_eq!(base64("BNI="), Some(vec![0x04, 0xD2]));
    assert_eq!(base64("BWvHXi1jEAAA").map(|b| b.len()), Some(9));
    for bad in ["", "BNI", "B@I=", "B==="] {
        assert_eq!(base64(bad), None, "{bad}");
    }
    assert_eq!(unscaled("BNI=", 2).as_deref(), Ok("12.34"));
    assert_eq!(unscaled("/w==", 3).as_deref(), Ok("-0.001"));
    assert_eq!(unscaled("AA==", 0).as_deref(), Ok("0"));
    assert_eq!(
        unscaled("BWvHXi1jEAAA", 0).as_deref(),
        Ok("100000000000000000000")
    );
    assert!(
        unscaled("AAAAAAAAAAAAAAAAAAAAAAAA", 0).is_err(),
        "17 bytes or more"
    );
    // A hostile schema's scale builds no text of its size.
    assert!(unscaled("BNI=", 4_000_000_000).is_err());
    assert!(variable(r#"{"scale":4000000000,"value":"BNI="}"#).is_err());
}
