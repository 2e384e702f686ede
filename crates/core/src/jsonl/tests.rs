use super::*;
use crate::spec::Spec;
use std::sync::Arc;

/// A composite key, a two-column sequence, deletes, and a column of every type.
const INVENTORY: &str = r#"
[[dataset]]
name = "inventory"
format = "jsonl"
keys = ["warehouse", "sku"]
sequence_by = ["event_time", "seq"]
delete_when = { column = "op", in = ["d", "delete"] }
[[dataset.columns]]
name = "warehouse"
type = "string"
[[dataset.columns]]
name = "sku"
type = "string"
[[dataset.columns]]
name = "event_time"
type = "timestamp"
timezone = "Europe/Berlin"
[[dataset.columns]]
name = "seq"
type = "bigint"
[[dataset.columns]]
name = "qty"
type = "int"
[[dataset.columns]]
name = "price"
type = "decimal(10,2)"
[[dataset.columns]]
name = "active"
type = "boolean"
[[dataset.columns]]
name = "weight"
type = "double"
[[dataset.columns]]
name = "shipped"
type = "date"
format = "%d.%m.%Y"
"#;

fn dataset(text: &str) -> Arc<Dataset> {
    Spec::parse(text, "t.toml").unwrap().datasets.remove(0)
}

fn inventory() -> Arc<Dataset> {
    dataset(INVENTORY)
}

fn without_deletes() -> Arc<Dataset> {
    dataset(&INVENTORY.replace(
        "delete_when = { column = \"op\", in = [\"d\", \"delete\"] }\n",
        "",
    ))
}

fn ignoring_extras() -> Arc<Dataset> {
    dataset(&INVENTORY.replace(
        "format = \"jsonl\"\n",
        "format = \"jsonl\"\nextra_fields = \"ignore\"\n",
    ))
}

/// A valid line's fields, as raw JSON.
const BASE: [(&str, &str); 9] = [
    ("warehouse", r#""W1""#),
    ("sku", r#""A""#),
    ("event_time", r#""2026-10-01T09:15:00""#),
    ("seq", "1"),
    ("qty", "5"),
    ("price", "12.50"),
    ("active", "true"),
    ("weight", "1.5"),
    ("shipped", r#""02.10.2026""#),
];

/// The base line with `changes`: a field set to a raw JSON text (appended
/// when new), or removed with `None`.
fn object(changes: &[(&str, Option<&str>)]) -> String {
    let mut fields: Vec<(String, String)> = BASE
        .iter()
        .map(|(n, v)| (n.to_string(), v.to_string()))
        .collect();
    for (name, raw) in changes {
        let at = fields.iter().position(|(n, _)| n == name);
        match (at, raw) {
            (Some(i), Some(raw)) => fields[i].1 = raw.to_string(),
            (Some(i), None) => {
                fields.remove(i);
            }
            (None, Some(raw)) => fields.push((name.to_string(), raw.to_string())),
            (None, None) => {}
        }
    }
    let inner: Vec<String> = fields.iter().map(|(n, v)| format!("{n:?}:{v}")).collect();
    format!("{{{}}}", inner.join(","))
}

fn read(d: &Dataset, text: &str) -> ParsedFile {
    read_jsonl(d, text.as_bytes()).unwrap()
}

/// One line read: its row, or its reject's reason.
fn one(d: &Dataset, line: &str) -> Result<Vec<Value>, String> {
    let parsed = read(d, line);
    assert_eq!(parsed.records(), 1, "{line}");
    match parsed.rejects.first() {
        Some(r) => Err(r.reason.clone()),
        None => Ok(parsed.changes.row(0).to_vec()),
    }
}

/// The value of column `name` in the base line with `name` set to `raw`.
fn field(name: &str, raw: &str) -> Result<Value, String> {
    let d = inventory();
    let i = d.column_index(name).unwrap();
    one(&d, &object(&[(name, Some(raw))])).map(|row| row[i].clone())
}

fn text(s: &str) -> Value {
    Value::Text(s.to_string())
}

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
fn a_field_written_twice_is_a_reject() {
    let d = inventory();
    let line = object(&[]).replace("}", r#","qty":6}"#);
    let p = read(&d, &line);
    assert_eq!(p.rejects[0].reason, "field \"qty\" appears twice");
    assert_eq!(p.rejects[0].key.as_deref(), Some("W1,A"));
    let line = object(&[("op", Some("\"u\""))]).replace("}", r#","op":"d"}"#);
    assert_eq!(one(&d, &line).unwrap_err(), "field \"op\" appears twice");
    let ignoring = ignoring_extras();
    let line = object(&[("note", Some("1"))]).replace("}", r#","note":2}"#);
    assert_eq!(
        one(&ignoring, &line).unwrap_err(),
        "field \"note\" appears twice",
        "even a dropped field"
    );
    let escaped = object(&[]).replace("}", r#","q\u0074y":6}"#);
    assert_eq!(
        one(&d, &escaped).unwrap_err(),
        "field \"qty\" appears twice"
    );
}

#[test]
fn lines_that_are_not_one_object_are_rejects() {
    let d = inventory();
    for (line, reason) in [
        (
            "[1,2]",
            "is not a JSON object: invalid type: sequence, expected an object of fields",
        ),
        (
            " 5",
            "is not a JSON object: invalid type: integer `5`, expected an object of fields",
        ),
        (
            "\"x\"",
            "is not a JSON object: invalid type: string \"x\", expected an object of fields",
        ),
        (
            "null",
            "is not a JSON object: invalid type: null, expected an object of fields",
        ),
        (
            r#"{"warehouse":"W1","sku":"#,
            "is not valid JSON: EOF while parsing a value at column 24",
        ),
        (
            r#"{"a":1"#,
            "is not valid JSON: EOF while parsing an object at column 6",
        ),
        (
            "{} {}",
            "is not valid JSON: trailing characters at column 4",
        ),
        (
            r#"{"a":1,}"#,
            "is not valid JSON: trailing comma at column 8",
        ),
        (
            "{'a':1}",
            "is not valid JSON: key must be a string at column 2",
        ),
        (
            r#"{"a":"\x"}"#,
            "is not valid JSON: invalid escape at column 8",
        ),
    ] {
        let p = read(&d, line);
        assert_eq!(p.rejects[0].reason, reason, "{line}");
        assert_eq!(p.rejects[0].raw, line);
        assert_eq!(p.rejects[0].key, None);
    }
}

#[test]
fn an_invalid_utf8_line_is_a_reject_with_its_key() {
    let d = inventory();
    let mut bytes = object(&[]).into_bytes();
    let at = bytes.len() - 3;
    bytes.splice(at..at, *b"\xff");
    let p = read_jsonl(&d, &bytes).unwrap();
    assert_eq!(p.rejects.len(), 1);
    assert_eq!(p.rejects[0].reason, "is not valid UTF-8");
    assert!(p.rejects[0].raw.contains('\u{fffd}'));
    assert_eq!(p.rejects[0].key.as_deref(), Some("W1,A"));
}

#[test]
fn deep_nesting_is_a_reject_not_a_stack_overflow() {
    let d = inventory();
    let deep = "[".repeat(100_000);
    assert!(one(&d, &deep).unwrap_err().contains("is not a JSON object"));
    let opened = format!(r#"{{"qty":{deep}"#);
    assert!(one(&d, &opened)
        .unwrap_err()
        .starts_with("is not valid JSON"));
    let closed = format!("{deep}{}", "]".repeat(100_000));
    let balanced = object(&[("qty", Some(&closed))]);
    assert_eq!(
        one(&d, &balanced).unwrap_err(),
        "qty is a JSON array, expected a number or a string (int column)"
    );
    let objects = format!(r#"{{"qty":{}"#, r#"{"a":"#.repeat(100_000));
    assert!(one(&d, &objects)
        .unwrap_err()
        .starts_with("is not valid JSON"));
}

#[test]
fn bom_crlf_and_blank_lines_count_as_lines_not_records() {
    let d = inventory();
    let good = object(&[]);
    let bad = object(&[("qty", Some("\"x\""))]);
    let text = format!("\u{feff}{good}\r\n\r\n  \t \r\n{bad}\r\n\n{good}\n");
    let p = read(&d, &text);
    assert_eq!(p.records(), 3);
    assert_eq!(p.changes.len(), 2);
    assert_eq!(p.rejects[0].line, 4);
    assert_eq!(p.rejects[0].raw, bad, "without its line end");
    assert_eq!(
        p.rejects[0].reason,
        "qty \"x\" is not an integer (optional sign and digits only)"
    );
    let last = format!("{good}\n{bad}");
    assert_eq!(read(&d, &last).rejects[0].line, 2, "no final line end");
    let second = format!("{good}\n\u{feff}{good}\n");
    let p = read(&d, &second);
    assert_eq!(p.rejects[0].line, 2, "a BOM opens the file only");
    assert!(
        p.rejects[0].reason.starts_with("is not valid JSON"),
        "{}",
        p.rejects[0].reason
    );
}

#[test]
fn an_empty_file_has_no_records() {
    let d = inventory();
    for empty in ["", "\u{feff}", "\n\n", "\u{feff}\r\n  \n\t\n"] {
        let p = read(&d, empty);
        assert_eq!(p.records(), 0, "{empty:?}");
    }
}

#[test]
fn a_reject_leaves_no_values_behind() {
    let d = inventory();
    let late = object(&[("shipped", Some("\"bad\""))]);
    let body = format!(
        "{}\n{late}\n{}\n",
        object(&[]),
        object(&[("sku", Some("\"B\""))])
    );
    let p = read(&d, &body);
    assert_eq!(p.changes.len(), 2);
    assert_eq!(p.changes.row(1)[1], text("B"));
    assert_eq!(p.changes.iter().count(), 2);
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

#[test]
fn an_undeclared_field_refuses_the_file() {
    let d = inventory();
    let text = format!(
        "{}\nnot json\n\n{}\n",
        object(&[]),
        object(&[("note", Some("1")), ("Qty", Some("2"))])
    );
    let e = read_jsonl(&d, text.as_bytes()).unwrap_err();
    assert_eq!(
        e.problem,
        "line 4 has field(s) \"note\", \"Qty\" that the spec does not declare: declare them, \
         or set extra_fields = \"ignore\" to drop them"
    );
    assert_eq!(e.found.len(), 11);
    assert_eq!(&e.found[9..], ["note", "Qty"]);
    assert_eq!(e.expected.last().map(String::as_str), Some("op"));
    assert_eq!(e.expected.len(), 10);
    let many: Vec<(String, Option<&str>)> = (0..8).map(|i| (format!("x{i}"), Some("0"))).collect();
    let many: Vec<(&str, Option<&str>)> = many.iter().map(|(n, v)| (n.as_str(), *v)).collect();
    let e = read_jsonl(&d, object(&many).as_bytes()).unwrap_err();
    assert!(
        e.problem.contains("\"x4\", and 3 more that"),
        "{}",
        e.problem
    );
    let e = read_jsonl(
        &without_deletes(),
        object(&[("op", Some("\"d\""))]).as_bytes(),
    )
    .unwrap_err();
    assert!(
        e.problem.starts_with("line 1 has field(s) \"op\" that"),
        "{}",
        e.problem
    );
}

#[test]
fn undeclared_fields_are_dropped_when_ignored() {
    let d = ignoring_extras();
    let line = object(&[("note", Some("{\"deep\":[1]}")), ("Qty", Some("2"))]);
    let row = one(&d, &line).unwrap();
    assert_eq!(row.len(), d.width());
    assert_eq!(row[4], Value::Int(5));
    let plain = without_deletes();
    let row = one(&plain, &object(&[])).unwrap();
    assert_eq!(row.len(), 9, "no delete flag without delete_when");
}

/// Lines often close enough to the spec to reach every branch.
fn hostile_file() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
    use proptest::prelude::*;
    let piece = prop_oneof![
        Just(b"{".to_vec()),
        Just(b"}".to_vec()),
        Just(b"[".to_vec()),
        Just(b",".to_vec()),
        Just(b":".to_vec()),
        Just(b"\"".to_vec()),
        Just(b"\"warehouse\":".to_vec()),
        Just(b"\"sku\":".to_vec()),
        Just(b"\"seq\":".to_vec()),
        Just(b"\"event_time\":".to_vec()),
        Just(b"\"price\":".to_vec()),
        Just(b"\"op\":\"d\"".to_vec()),
        Just(b"\"x\":".to_vec()),
        Just(b"\"2026-10-01T09:15:00\"".to_vec()),
        Just(b"1e400".to_vec()),
        Just(b"-0.10".to_vec()),
        Just(b"99999999999999999999".to_vec()),
        Just(b"null".to_vec()),
        Just(b"true".to_vec()),
        Just(b"\\u00".to_vec()),
        Just(b"\n".to_vec()),
        Just(b"\r\n".to_vec()),
        Just(b"\xEF\xBB\xBF".to_vec()),
        Just(b"\xff".to_vec()),
        prop::collection::vec(any::<u8>(), 0..8),
    ];
    prop::collection::vec(piece, 0..60).prop_map(|pieces| pieces.concat())
}

/// The invariants of any file read: rejects in line order with a reason;
/// every row of the dataset's width with its key and sequence non-null.
fn check(d: &Dataset, bytes: &[u8]) -> Result<(), proptest::test_runner::TestCaseError> {
    let Ok(parsed) = read_jsonl(d, bytes) else {
        return Ok(());
    };
    let mut last = 0;
    for r in &parsed.rejects {
        proptest::prop_assert!(
            r.line >= 1 && r.line >= last,
            "line {} after {last}",
            r.line
        );
        proptest::prop_assert!(!r.reason.is_empty());
        last = r.line;
    }
    for row in parsed.changes.iter() {
        proptest::prop_assert_eq!(row.len(), d.width());
        let required = d.keys.iter().chain(&d.sequence_by);
        proptest::prop_assert!(required.into_iter().all(|&k| !row[k].is_null()));
    }
    Ok(())
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 1000, ..Default::default() })]
    /// Any bytes: no panic; every reject has a line and a reason; line
    /// numbers never go backwards.
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..512)) {
        check(&inventory(), &bytes)?;
        check(&ignoring_extras(), &bytes)?;
    }

    #[test]
    fn hostile_lines_never_panic(bytes in hostile_file()) {
        check(&inventory(), &bytes)?;
        check(&ignoring_extras(), &bytes)?;
    }
}
