//! The Parquet reader against the rules of its issue: columns by name, types
//! checked before any row, lossless conversions only, rejects with their row.

mod common;

use arrow_array::builder::StringDictionaryBuilder;
use arrow_array::types::Int32Type;
use arrow_array::*;
use common::*;
use deltaload_core::Value;
use deltaload_ingest::parquet::read_parquet;
use std::sync::Arc;

#[test]
fn five_rows_in_three_row_groups_read_exactly() {
    let p = read(columns()).unwrap();
    assert!(p.rejects.is_empty(), "{:?}", p.rejects);
    assert_eq!(p.changes.len(), 5);
    let dec = |u: i128| Value::Decimal(u.into());
    assert_eq!(
        p.changes.row(0),
        [
            text("W1"),
            text("A"),
            Value::Timestamp(T0),
            Value::Int(1),
            Value::Int(5),
            dec(2550),
            Value::Bool(true),
            Value::Bool(false)
        ]
    );
    assert_eq!(
        p.changes.row(1),
        [
            text("W1"),
            text("B"),
            Value::Timestamp(T0 + 1),
            Value::Int(2),
            Value::Null,
            dec(-1),
            Value::Bool(false),
            Value::Bool(false)
        ]
    );
    assert_eq!(p.changes.row(2)[5..7], [Value::Null, Value::Null]);
    assert_eq!(p.changes.row(3)[5], dec(9_999_999_999));
    assert_eq!(
        p.changes.row(4)[3..5],
        [Value::Int(i64::MAX), Value::Int(i64::from(i32::MAX))]
    );
}

#[test]
fn narrower_integers_widen() {
    let p = read(with(
        "seq",
        Arc::new(Int32Array::from(vec![1, 2, 3, -4, i32::MIN])),
    ))
    .unwrap();
    assert_eq!(p.changes.row(4)[3], Value::Int(i64::from(i32::MIN)));
    let p = read(with(
        "qty",
        Arc::new(UInt16Array::from(vec![0, 1, 2, 3, u16::MAX])),
    ))
    .unwrap();
    assert_eq!(p.changes.row(4)[4], Value::Int(65_535));
}

#[test]
fn narrower_decimals_and_integers_fit_a_decimal() {
    let p = read(with(
        "price",
        Arc::new(
            Decimal128Array::from(vec![12_345, -1, 0, 99_999_999, 5])
                .with_precision_and_scale(8, 2)
                .unwrap(),
        ),
    ))
    .unwrap();
    assert_eq!(p.changes.row(0)[5], Value::Decimal(12_345.into()));
    let p = read(with(
        "price",
        Arc::new(
            Decimal128Array::from(vec![125, 0, 0, 0, 0])
                .with_precision_and_scale(3, 1)
                .unwrap(),
        ),
    ))
    .unwrap();
    assert_eq!(
        p.changes.row(0)[5],
        Value::Decimal(1250.into()),
        "12.5 is 12.50"
    );
    let p = read(with(
        "price",
        Arc::new(Int32Array::from(vec![7, 0, 0, 0, 0])),
    ))
    .unwrap_err();
    assert!(
        p.problem.contains("Int32"),
        "10 digits do not fit decimal(10,2)"
    );
    let p = read(with(
        "price",
        Arc::new(Int16Array::from(vec![7, 0, 0, 0, -32768])),
    ))
    .unwrap();
    assert_eq!(p.changes.row(0)[5], Value::Decimal(700.into()));
    assert_eq!(p.changes.row(4)[5], Value::Decimal((-3_276_800).into()));
}

#[test]
fn text_is_parsed_by_the_column_rules_and_a_bad_value_rejects_its_row() {
    let cols = with(
        "price",
        strings(&[Some("25.50"), Some("1"), Some("abc"), None, Some("0.001")]),
    );
    let cols = cols
        .into_iter()
        .map(|(n, a)| match n {
            "event_time" => (
                n,
                strings(&[
                    Some("2026-10-01T09:15:00"),
                    Some("2026-10-01 11:15:00+02:00"),
                    Some("2026-10-01T09:15:00Z"),
                    Some("yesterday"),
                    Some("2026-10-01T09:15:00"),
                ]),
            ),
            _ => (n, a),
        })
        .collect();
    let p = read(cols).unwrap();
    assert_eq!(p.changes.len(), 2);
    assert_eq!(
        p.changes.row(0)[2..6],
        [
            Value::Timestamp(T0),
            Value::Int(1),
            Value::Int(5),
            Value::Decimal(2550.into())
        ]
    );
    assert_eq!(p.changes.row(1)[2], Value::Timestamp(T0));
    assert_eq!(p.changes.row(1)[5], Value::Decimal(100.into()));
    let lines: Vec<u64> = p.rejects.iter().map(|r| r.line).collect();
    assert_eq!(lines, [3, 4, 5], "rows numbered across row groups");
    assert_eq!(
        p.rejects[0].reason,
        "price \"abc\" is not plain decimal notation"
    );
    assert_eq!(p.rejects[0].key.as_deref(), Some("W2,A"));
    assert_eq!(
        p.rejects[1].reason,
        "event_time \"yesterday\" is not an ISO-8601 timestamp"
    );
    assert_eq!(
        p.rejects[2].reason,
        "price \"0.001\" has more than 2 decimals (not rounded)"
    );
    assert_eq!(
        p.rejects[0].raw,
        r#"{"warehouse":"W2","sku":"A","event_time":"2026-10-01T09:15:00Z","seq":3,"qty":-7,"price":"abc","active":null,"op":"i"}"#
    );
}

#[test]
fn nanoseconds_that_are_not_whole_microseconds_reject_the_row() {
    let ns = T0 * 1_000;
    let cols = with(
        "event_time",
        Arc::new(TimestampNanosecondArray::from(vec![
            ns,
            ns + 1_000,
            ns + 1,
            ns,
            ns,
        ])),
    );
    let p = read(cols).unwrap();
    assert_eq!(p.changes.len(), 4);
    assert_eq!(p.changes.row(1)[2], Value::Timestamp(T0 + 1));
    assert_eq!(p.rejects[0].line, 3);
    assert_eq!(
        p.rejects[0].reason,
        "event_time \"2026-10-01T09:15:00.000000001\" has nanoseconds: a timestamp holds whole microseconds"
    );
    let millis = with(
        "event_time",
        Arc::new(TimestampMillisecondArray::from(vec![T0 / 1_000; 5]).with_timezone("+02:00")),
    );
    assert_eq!(
        read(millis).unwrap().changes.row(0)[2],
        Value::Timestamp(T0),
        "an instant whatever its zone"
    );
    let days = with("event_time", Arc::new(Date32Array::from(vec![1; 5])));
    assert_eq!(
        read(days).unwrap().changes.row(0)[2],
        Value::Timestamp(86_400_000_000),
        "midnight UTC"
    );
}

#[test]
fn dictionary_text_columns_read_like_text() {
    let mut dict = StringDictionaryBuilder::<Int32Type>::new();
    for sku in [Some("A"), Some("A"), None, Some("B"), Some("A")] {
        dict.append_option(sku);
    }
    let mut price = StringDictionaryBuilder::<Int32Type>::new();
    for p in ["1.5", "1.5", "x", "1.5", "2"] {
        price.append_value(p);
    }
    let cols = with("sku", Arc::new(dict.finish()));
    let cols: Vec<_> = cols
        .into_iter()
        .map(|(n, a)| {
            if n == "price" {
                (n, Arc::new(price.finish()) as ArrayRef)
            } else {
                (n, a)
            }
        })
        .collect();
    let p = read(cols).unwrap();
    assert_eq!(p.changes.len(), 4);
    assert_eq!(p.changes.row(2)[1..2], [text("B")]);
    assert_eq!(p.changes.row(3)[5], Value::Decimal(200.into()));
    let reasons: Vec<String> = p
        .rejects
        .iter()
        .map(|r| format!("{}: {}", r.line, r.reason))
        .collect();
    assert_eq!(
        reasons,
        ["3: sku is null"],
        "the first reason in declared order"
    );
}

#[test]
fn doubles_dates_and_local_times() {
    let at = |v: Vec<i64>| -> ArrayRef { Arc::new(TimestampMicrosecondArray::from(v)) };
    // 2026-10-01T11:15:00 on Berlin's clock is T0; 2026-03-29T02:30 does not exist there.
    let gap = 1_774_751_400_000_000;
    let cols = vec![
        (
            "id",
            Arc::new(UInt32Array::from(vec![1, 2, 3, 4, 5])) as ArrayRef,
        ),
        (
            "score",
            Arc::new(Float32Array::from(vec![
                1.5,
                -0.0,
                f32::NAN,
                2.0,
                f32::INFINITY,
            ])),
        ),
        ("day", Arc::new(Date32Array::from(vec![1, 0, 0, -1, 0]))),
        ("at", at(vec![T0 + 7_200_000_000, T0, T0, T0, gap])),
        (
            "amount",
            Arc::new(
                Decimal128Array::from(vec![Some(1), Some(99_999), Some(0), Some(0), None])
                    .with_precision_and_scale(5, 2)
                    .unwrap(),
            ),
        ),
    ];
    let p = read_parquet(&readings(), &parquet(cols, 3)).unwrap();
    assert_eq!(
        p.changes.row(0),
        [
            Value::Int(1),
            Value::Double(1.5),
            Value::Date(1),
            Value::Timestamp(T0),
            Value::Decimal(1.into())
        ]
    );
    assert!(
        matches!(p.changes.row(1)[1], Value::Double(z) if z.is_sign_positive()),
        "-0 is 0"
    );
    assert_eq!(p.changes.row(2)[2], Value::Date(-1));
    let reasons: Vec<String> = p
        .rejects
        .iter()
        .map(|r| format!("{}: {}", r.line, r.reason))
        .collect();
    assert_eq!(
        reasons,
        [
            "3: score NaN is not a finite number",
            "5: score inf is not a finite number",
        ]
    );
    let cols = vec![
        ("id", Arc::new(Int64Array::from(vec![1])) as ArrayRef),
        ("score", Arc::new(Float64Array::from(vec![1.0]))),
        ("day", Arc::new(Date32Array::from(vec![0]))),
        ("at", at(vec![gap])),
        (
            "amount",
            Arc::new(
                Decimal128Array::from(vec![Some(1)])
                    .with_precision_and_scale(5, 2)
                    .unwrap(),
            ),
        ),
    ];
    let p = read_parquet(&readings(), &parquet(cols.clone(), 3)).unwrap();
    assert_eq!(
        p.rejects[0].reason,
        "at \"2026-03-29T02:30:00\" does not exist in Europe/Berlin (skipped by a daylight-saving change)"
    );
    assert!(
        p.rejects[0].raw.contains(r#""at":"2026-03-29T02:30:00""#),
        "{}",
        p.rejects[0].raw
    );
    let mut zoned = cols;
    zoned[3].1 = Arc::new(TimestampMicrosecondArray::from(vec![gap]).with_timezone("UTC"));
    let p = read_parquet(&readings(), &parquet(zoned, 3)).unwrap();
    assert_eq!(
        p.changes.row(0)[3],
        Value::Timestamp(gap),
        "an instant is not a wall-clock time"
    );
}

#[test]
fn a_value_beyond_its_declared_precision_is_rejected() {
    // Arrow does not check a decimal's digits against its precision: the file may lie.
    let cols = vec![
        ("id", Arc::new(Int64Array::from(vec![1, 2])) as ArrayRef),
        ("score", Arc::new(Float64Array::from(vec![1.0, 1.0]))),
        ("day", Arc::new(Date32Array::from(vec![0, 0]))),
        ("at", Arc::new(TimestampMicrosecondArray::from(vec![0, 0]))),
        (
            "amount",
            Arc::new(
                Decimal128Array::from(vec![Some(100_000), None])
                    .with_precision_and_scale(5, 2)
                    .unwrap(),
            ),
        ),
    ];
    let p = read_parquet(&readings(), &parquet(cols, 3)).unwrap();
    let reasons: Vec<String> = p.rejects.iter().map(|r| r.reason.to_string()).collect();
    assert_eq!(
        reasons,
        [
            "amount \"1000.00\" does not fit DECIMAL(5,2)",
            "amount is null"
        ]
    );
    assert_eq!(p.rejects[0].key.as_deref(), Some("1"));
}
