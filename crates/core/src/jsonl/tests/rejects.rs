//! Rejected lines, and the files refused or read for undeclared fields.

use super::*;

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
