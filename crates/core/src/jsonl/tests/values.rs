//! Reading values: every type, nulls and missing fields, and deletes.

use super::*;

#[test]
fn a_valid_line_reads_every_type() {
    let d = inventory();
    let row = one(&d, &object(&[])).unwrap();
    assert_eq!(row.len(), d.width());
    let utc = chrono::DateTime::parse_from_rfc3339("2026-10-01T07:15:00Z").unwrap();
    assert_eq!(
        row,
        [
            text("W1"),
            text("A"),
            Value::Timestamp(utc.timestamp_micros()),
            Value::Int(1),
            Value::Int(5),
            Value::Decimal(1250.into()),
            Value::Bool(true),
            Value::Double(1.5),
            d.columns[8].parse("02.10.2026").unwrap(),
            Value::Bool(false),
        ]
    );
    assert!(!d.is_delete(&row));
}

#[test]
fn decimals_are_exact_never_through_a_float() {
    assert_eq!(field("price", "0.1"), Ok(Value::Decimal(10.into())));
    assert_eq!(field("price", "-0.01"), Ok(Value::Decimal((-1).into())));
    assert_eq!(
        field("price", "99999999.99"),
        Ok(Value::Decimal(9_999_999_999.into()))
    );
    assert_eq!(
        field("price", "12.345").unwrap_err(),
        "price \"12.345\" has more than 2 decimals (not rounded)"
    );
    assert_eq!(
        field("price", "1e400").unwrap_err(),
        "price \"1e400\" is not plain decimal notation"
    );
    assert_eq!(
        field("price", "123456789012345678901234567890").unwrap_err(),
        "price \"123456789012345678901234567890\" does not fit DECIMAL(10,2)"
    );
}

#[test]
fn integers_are_exact_and_within_their_width() {
    assert_eq!(field("qty", "-5"), Ok(Value::Int(-5)));
    assert_eq!(
        field("seq", "9223372036854775807"),
        Ok(Value::Int(i64::MAX))
    );
    assert_eq!(
        field("qty", "1.0").unwrap_err(),
        "qty \"1.0\" is not an integer (optional sign and digits only)"
    );
    assert!(field("qty", "1e3")
        .unwrap_err()
        .starts_with("qty \"1e3\" is not an integer"));
    assert_eq!(
        field("qty", "2147483648").unwrap_err(),
        "qty \"2147483648\" does not fit a 32-bit integer"
    );
    assert_eq!(
        field("seq", "99999999999999999999").unwrap_err(),
        "seq \"99999999999999999999\" does not fit a 64-bit integer"
    );
}

#[test]
fn doubles_are_finite() {
    assert_eq!(field("weight", "-2e3"), Ok(Value::Double(-2000.0)));
    assert_eq!(
        field("weight", "1e400").unwrap_err(),
        "weight \"1e400\" is not a finite number"
    );
}

#[test]
fn strings_are_read_like_csv_text_for_every_type() {
    let d = inventory();
    let line = object(&[
        ("seq", Some(r#""9""#)),
        ("qty", Some(r#""7""#)),
        ("price", Some(r#""12.5""#)),
        ("active", Some(r#""FALSE""#)),
        ("weight", Some(r#""1e3""#)),
        ("warehouse", Some(r#""W\"1\u00e9""#)),
    ]);
    let row = one(&d, &line).unwrap();
    assert_eq!(row[0], text("W\"1é"));
    assert_eq!(row[3], Value::Int(9));
    assert_eq!(row[4], Value::Int(7));
    assert_eq!(row[5], Value::Decimal(1250.into()));
    assert_eq!(row[6], Value::Bool(false));
    assert_eq!(row[7], Value::Double(1000.0));
    assert_eq!(field("active", r#""1""#), Ok(Value::Bool(true)));
    assert_eq!(
        field("price", r#""12.345""#).unwrap_err(),
        "price \"12.345\" has more than 2 decimals (not rounded)"
    );
    assert_eq!(field("qty", r#""""#).unwrap_err(), "qty is empty");
    assert!(field("shipped", r#""2026-10-02""#)
        .unwrap_err()
        .starts_with("shipped \"2026-10-02\" does not match the format \"%d.%m.%Y\""));
    assert!(field("event_time", r#""2026-02-30T00:00:00""#)
        .unwrap_err()
        .starts_with("event_time "));
}

#[test]
fn json_kinds_a_column_does_not_take_are_rejects() {
    for (name, raw, reason) in [
        (
            "warehouse",
            "7",
            "warehouse is a JSON number, expected a string (string column)",
        ),
        (
            "event_time",
            "1790000000",
            "event_time is a JSON number, expected a string (timestamp column)",
        ),
        (
            "shipped",
            "20261002",
            "shipped is a JSON number, expected a string (date column)",
        ),
        (
            "active",
            "1",
            "active is a JSON number, expected true, false or a string (boolean column)",
        ),
        (
            "qty",
            "true",
            "qty is a JSON boolean, expected a number or a string (int column)",
        ),
        (
            "sku",
            "false",
            "sku is a JSON boolean, expected a string (string column)",
        ),
        (
            "price",
            r#"{"v":1}"#,
            "price is a JSON object, expected a number or a string (decimal(10,2) column)",
        ),
        (
            "weight",
            "[1]",
            "weight is a JSON array, expected a number or a string (double column)",
        ),
    ] {
        assert_eq!(field(name, raw).unwrap_err(), reason);
    }
    assert_eq!(field("active", "false"), Ok(Value::Bool(false)));
}

#[test]
fn missing_and_null_fields_are_null_and_refused_where_not_nullable() {
    let d = inventory();
    let row = one(&d, &object(&[("qty", None), ("price", Some("null"))])).unwrap();
    assert_eq!((&row[4], &row[5]), (&Value::Null, &Value::Null));
    let p = read(&d, &object(&[("warehouse", Some("null"))]));
    assert_eq!(p.rejects[0].reason, "warehouse is null");
    assert_eq!(p.rejects[0].key.as_deref(), Some(",A"));
    let p = read(&d, &object(&[("sku", None)]));
    assert_eq!(p.rejects[0].reason, "sku is missing");
    assert_eq!(p.rejects[0].key.as_deref(), Some("W1,"));
    let p = read(&d, &object(&[("seq", None)]));
    assert_eq!(p.rejects[0].reason, "seq is missing");
    let p = read(&d, &object(&[("warehouse", Some("3"))]));
    assert_eq!(p.rejects[0].key.as_deref(), Some("3,A"), "a number's text");
    let p = read(
        &d,
        &object(&[
            ("warehouse", None),
            ("sku", Some("null")),
            ("qty", Some("x")),
        ]),
    );
    assert_eq!(p.rejects[0].key, None, "no key field present");
}

#[test]
fn deletes_read_only_their_key_and_sequence() {
    let d = inventory();
    let line = object(&[
        ("op", Some("\"d\"")),
        ("qty", Some("\"junk\"")),
        ("price", Some("{}")),
        ("active", Some("5")),
        ("shipped", None),
    ]);
    let row = one(&d, &line).unwrap();
    assert!(d.is_delete(&row));
    assert_eq!(row[0], text("W1"));
    assert_eq!(row[3], Value::Int(1));
    assert!(row[4..9].iter().all(Value::is_null), "{row:?}");
    assert_eq!(row[9], Value::Bool(true));
    let no_seq = object(&[("op", Some("\"delete\"")), ("seq", Some("null"))]);
    assert_eq!(one(&d, &no_seq).unwrap_err(), "seq is null");
    let bad_time = object(&[("op", Some("\"d\"")), ("event_time", Some("1"))]);
    assert!(one(&d, &bad_time)
        .unwrap_err()
        .starts_with("event_time is a JSON number"));
    for op in ["null", "\"D\"", "\"u\"", "1"] {
        let row = one(&d, &object(&[("op", Some(op))])).unwrap();
        assert_eq!(row[9], Value::Bool(false), "{op}");
    }
    let row = one(&d, &object(&[("op", Some(r#""\u0064""#))])).unwrap();
    assert_eq!(row[9], Value::Bool(true), "a string by its unescaped text");
    assert_eq!(
        one(&d, &object(&[("op", Some("[\"d\"]"))])).unwrap_err(),
        "op is a JSON array, expected a string, number or boolean"
    );
}

#[test]
fn delete_values_compare_numbers_and_booleans_as_written() {
    let d = dataset(&INVENTORY.replace(r#"in = ["d", "delete"]"#, r#"in = ["1.0", "true"]"#));
    let flag = |op: &str| one(&d, &object(&[("op", Some(op))])).unwrap()[9].clone();
    assert_eq!(flag("1.0"), Value::Bool(true));
    assert_eq!(flag("1"), Value::Bool(false));
    assert_eq!(flag("true"), Value::Bool(true));
    assert_eq!(flag("\"true\""), Value::Bool(true));
    assert_eq!(flag("false"), Value::Bool(false));
}
