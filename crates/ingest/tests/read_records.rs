//! Which rows become records: a null key or sequence rejects its row with its
//! raw JSON, a delete reads only its key and sequence, an empty file has none.

mod common;

use arrow_array::builder::StringDictionaryBuilder;
use arrow_array::types::Int32Type;
use arrow_array::*;
use common::*;
use deltaload_core::Value;
use std::sync::Arc;

#[test]
fn a_null_key_or_sequence_rejects_the_row_with_its_raw_json() {
    let cols = with(
        "sku",
        strings(&[Some("A"), None, Some("A"), Some("B"), Some("C")]),
    );
    let cols = cols
        .into_iter()
        .map(|(n, a)| match n {
            "seq" => (
                n,
                Arc::new(Int64Array::from(vec![
                    Some(1),
                    Some(2),
                    Some(3),
                    None,
                    Some(5),
                ])) as ArrayRef,
            ),
            _ => (n, a),
        })
        .collect();
    let p = read(cols).unwrap();
    assert_eq!(p.changes.len(), 3);
    let r = &p.rejects[0];
    assert_eq!(
        (r.line, r.reason.to_string(), r.key.as_deref()),
        (2, "sku is null".to_string(), Some("W1,"))
    );
    assert_eq!(
        r.raw,
        r#"{"warehouse":"W1","sku":null,"event_time":"2026-10-01T09:15:00.000001Z","seq":2,"qty":null,"price":"-0.01","active":false,"op":"u"}"#
    );
    assert_eq!(
        (p.rejects[1].line, p.rejects[1].reason.to_string()),
        (4, "seq is null".to_string())
    );
    let both = with("warehouse", strings(&[None; 5]));
    let both: Vec<_> = both
        .into_iter()
        .map(|(n, a)| {
            if n == "sku" {
                (n, strings(&[None; 5]))
            } else {
                (n, a)
            }
        })
        .collect();
    let p = read(both).unwrap();
    assert_eq!(p.rejects[0].key, None, "no key text when every key is null");
    assert_eq!(p.rejects[0].reason, "warehouse is null");
}

#[test]
fn deletes_read_only_their_key_and_sequence() {
    let mut dict = StringDictionaryBuilder::<Int32Type>::new();
    for op in [Some("d"), Some("delete"), None, Some("D"), Some("d")] {
        dict.append_option(op);
    }
    let cols = with("op", Arc::new(dict.finish()));
    let cols: Vec<_> = cols
        .into_iter()
        .map(|(n, a)| match n {
            "price" => (
                n,
                strings(&[Some("junk"), None, Some("1.00"), Some("1.00"), Some("1.00")]),
            ),
            "sku" => (
                n,
                strings(&[Some("A"), Some("B"), Some("A"), Some("B"), None]),
            ),
            _ => (n, a),
        })
        .collect();
    let p = read(cols).unwrap();
    assert_eq!(p.changes.len(), 4);
    let n = Value::Null;
    assert_eq!(
        p.changes.row(0),
        [
            text("W1"),
            text("A"),
            Value::Timestamp(T0),
            Value::Int(1),
            n.clone(),
            n.clone(),
            n.clone(),
            Value::Bool(true)
        ],
        "the junk price of a delete is not read"
    );
    assert_eq!(p.changes.row(1)[7], Value::Bool(true));
    assert_eq!(
        p.changes.row(2)[7],
        Value::Bool(false),
        "a null is not a delete"
    );
    assert_eq!(
        p.changes.row(3)[7],
        Value::Bool(false),
        "values compare exactly"
    );
    assert_eq!(
        p.rejects[0].reason, "sku is null",
        "a delete still needs its key"
    );
    assert_eq!(p.rejects[0].line, 5);
    assert!(
        p.rejects[0].raw.ends_with(r#""op":"d"}"#),
        "{}",
        p.rejects[0].raw
    );
}

#[test]
fn an_empty_file_has_no_records() {
    let cols: Vec<_> = columns()
        .into_iter()
        .map(|(n, a)| (n, a.slice(0, 0)))
        .collect();
    let p = read(cols).unwrap();
    assert_eq!(p.records(), 0);
}
