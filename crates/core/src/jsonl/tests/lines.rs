//! Line numbers, blank and empty files, and reading any bytes without a panic.

use super::*;

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
        p.rejects[0]
            .reason
            .to_string()
            .starts_with("is not valid JSON"),
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
        proptest::prop_assert!(!r.reason.to_string().is_empty());
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
