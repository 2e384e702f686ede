//! Tests of the CSV reader.

use super::*;
use crate::value::Value;

fn read_changes(bytes: &[u8]) -> Result<ParsedFile, HeaderMismatch> {
    read_file(&Dataset::orders(), bytes)
}

fn text(s: &str) -> Value {
    Value::Text(s.to_string())
}

const HEADER: &str = "order_id,customer_id,status,amount,currency,ordered_at,updated_at\n";

fn read(body: &str) -> ParsedFile {
    read_changes(format!("{HEADER}{body}").as_bytes()).unwrap()
}

#[test]
fn seed_day_one_has_one_reject() {
    let p = read(
        "1001,C01,placed,25.50,EUR,2026-10-01T09:15:00,2026-10-01T09:15:00\n\
                  1003,C03,placed,abc,EUR,2026-10-02T11:30:00,2026-10-02T11:30:00\n",
    );
    assert_eq!(p.changes.len(), 1);
    assert_eq!(p.rejects.len(), 1);
    let r = &p.rejects[0];
    assert_eq!(r.line, 3);
    assert_eq!(
        r.raw,
        "1003,C03,placed,abc,EUR,2026-10-02T11:30:00,2026-10-02T11:30:00"
    );
    assert_eq!(r.key.as_deref(), Some("1003"));
    assert!(r.reason.to_string().contains("amount"), "{}", r.reason);
}

#[test]
fn bom_crlf_and_blank_lines() {
    let text = format!(
        "\u{feff}{}\r\n\r\n1,C,placed,1.00,EUR,,2026-10-01T00:00:00\r\n\r\n\r\nx,C,placed,1.00,EUR,,2026-10-01T00:00:00\r\n",
        HEADER.trim_end()
    );
    let p = read_changes(text.as_bytes()).unwrap();
    assert_eq!(p.records(), 2);
    assert_eq!(p.changes.len(), 1);
    assert_eq!(p.rejects[0].line, 6);
    assert_eq!(p.rejects[0].raw, "x,C,placed,1.00,EUR,,2026-10-01T00:00:00");
}

/// Found by the fuzzer: a lone CR ends a record for the CSV reader, but only
/// LFs were counted, so every reject of a CR-only file was on "line 1".
#[test]
fn lone_cr_line_ends_number_lines_like_lf() {
    let text = format!(
        "{}\r1,C,placed,1.00,EUR,,2026-10-01T00:00:00\r\rx,C,placed,1.00,EUR,,2026-10-01T00:00:00\r\ny,C\r",
        HEADER.trim_end()
    );
    let p = read_changes(text.as_bytes()).unwrap();
    assert_eq!(p.records(), 3);
    let lines: Vec<u64> = p.rejects.iter().map(|r| r.line).collect();
    assert_eq!(lines, [4, 5]);
    assert_eq!(p.rejects[0].raw, "x,C,placed,1.00,EUR,,2026-10-01T00:00:00");
    assert_eq!(p.rejects[1].raw, "y,C");
}

#[test]
fn quoted_fields_with_commas_quotes_and_newlines() {
    let p = read(
        "1,\"C,1\",\"said \"\"hi\"\"\nthen left\",1.00,EUR,,2026-10-01T00:00:00\n\
                  2,\"x\ny\",placed,bad,EUR,,2026-10-01T00:00:00\n",
    );
    assert_eq!(p.changes.len(), 1);
    assert_eq!(p.changes.row(0)[1], text("C,1"));
    assert_eq!(p.changes.row(0)[2], text("said \"hi\"\nthen left"));
    assert_eq!(p.rejects[0].line, 4);
    assert_eq!(
        p.rejects[0].raw,
        "2,\"x\ny\",placed,bad,EUR,,2026-10-01T00:00:00"
    );
}

#[test]
fn header_only_and_empty() {
    assert_eq!(read("").records(), 0);
    assert!(read_changes(b"").is_err());
    assert!(read_changes(b"\xEF\xBB\xBF\n\n").is_err());
    let e = read_changes(b"order_id,status\n1,x\n").unwrap_err();
    assert_eq!(e.found, vec!["order_id", "status"]);
}

#[test]
fn field_count_invalid_utf8_nul_and_unterminated_quote() {
    let mut bytes = HEADER.as_bytes().to_vec();
    bytes.extend_from_slice(b"1,C,placed,1.00,EUR,,2026-10-01T00:00:00,extra\n");
    bytes.extend_from_slice(b"2,C\xff,placed,1.00,EUR,,2026-10-01T00:00:00\n");
    bytes.extend_from_slice(b"3,C\0,placed,1.00,EUR,,2026-10-01T00:00:00\n");
    bytes.extend_from_slice(b"4,\"C,placed,1.00,EUR,,2026-10-01T00:00:00\n");
    let p = read_changes(&bytes).unwrap();
    assert_eq!(p.changes.len(), 1, "the NUL byte is data, not an error");
    assert_eq!(p.changes.row(0)[1], text("C\0"));
    let reasons: Vec<String> = p.rejects.iter().map(|r| r.reason.to_string()).collect();
    assert_eq!(reasons.len(), 3, "{reasons:?}");
    assert!(reasons[0].contains("8 fields"));
    assert!(reasons[1].contains("UTF-8"));
    assert!(p.rejects[1].raw.contains('\u{fffd}'));
    assert!(
        reasons[2].contains("a quoted field is not closed"),
        "unterminated quote swallows the rest: {reasons:?}"
    );
}

/// A quote left open in a record's last field took every later line into
/// that field and the record loaded: records 2 and 3 vanished with no
/// reject. The record is now a reject, whose text holds them.
#[test]
fn an_unclosed_quote_is_a_reject_holding_the_rest_of_the_file() {
    let text = "[[dataset]]\nname = \"t\"\nkeys = [\"id\"]\n\
        [[dataset.columns]]\nname = \"id\"\ntype = \"bigint\"\n\
        [[dataset.columns]]\nname = \"s\"\ntype = \"string\"\n";
    let spec = crate::Spec::parse(text, "t.toml").unwrap();
    let read = |body: &str| read_file(&spec.datasets[0], body.as_bytes()).unwrap();
    let p = read("id,s\n0,a\n1,\"unterminated\n2,b\n3,c\n");
    assert_eq!((p.changes.len(), p.rejects.len()), (1, 1));
    let r = &p.rejects[0];
    assert_eq!((r.line, r.raw.as_str()), (3, "1,\"unterminated\n2,b\n3,c"));
    assert!(
        r.reason
            .to_string()
            .contains("a quoted field is not closed"),
        "{}",
        r.reason
    );
    // A stray quote took the next line into its field, and text after the
    // closing quote was appended: row 2 loaded with record 3 inside it.
    let p = read("id,s\n1,a\n2,\"open\n3,\"closed\"\n4,d\n");
    assert_eq!((p.changes.len(), p.rejects.len()), (2, 1));
    assert_eq!(
        (p.rejects[0].line, p.rejects[0].raw.as_str()),
        (3, "2,\"open\n3,\"closed\"")
    );
    assert!(p.rejects[0]
        .reason
        .to_string()
        .contains("text after its closing quote"));
    // In the header, the file is refused, its text not repeated.
    let refused = read_file(&spec.datasets[0], b"id,\"s\n1,a\n2,b\n").unwrap_err();
    assert!(
        refused
            .to_string()
            .starts_with("the first record has a quoted field that is not closed"),
        "{refused}"
    );
    assert!(!refused.to_string().contains("2,b"), "{refused}");
    // Closed quotes, doubled quotes, a quote inside a field: all read as before.
    let p = read("id,s\n1,\"a \"\"b\"\"\n c\"\n2,x\"y\n3,\"\"\n");
    assert_eq!((p.changes.len(), p.rejects.len()), (3, 0));
}

/// Bytes that look like change files often enough to reach every branch:
/// the header, then lines built from fields, separators, quotes and junk.
fn hostile_file() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
    use proptest::prelude::*;
    let piece = prop_oneof![
        Just(b"1".to_vec()),
        Just(b"-9223372036854775808".to_vec()),
        Just(b"99999999999999999999".to_vec()),
        Just(b"12.345".to_vec()),
        Just(b"1e3".to_vec()),
        Just(b" 12.00 ".to_vec()),
        Just(b"2026-02-30T00:00:00".to_vec()),
        Just(b"2026-10-01T23:59:60".to_vec()),
        Just(b"2026-10-01T08:00:00+05:30".to_vec()),
        Just(b"9999-12-31T23:59:59".to_vec()),
        Just(b",".to_vec()),
        Just(b"\"".to_vec()),
        Just(b"\n".to_vec()),
        Just(b"\r\n".to_vec()),
        Just(b"\0".to_vec()),
        Just(b"\xff\xfe".to_vec()),
        Just("é".as_bytes().to_vec()),
        prop::collection::vec(any::<u8>(), 0..8),
    ];
    prop::collection::vec(piece, 0..60).prop_map(|pieces| {
        let mut bytes = HEADER.as_bytes().to_vec();
        for p in pieces {
            bytes.extend(p);
        }
        bytes
    })
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 2000, ..Default::default() })]
    /// Any bytes: no panic; every record is a change or a reject, each reject
    /// with its line and a reason; line numbers never go backwards.
    #[test]
    fn hostile_bytes_never_panic_and_every_record_is_accounted(bytes in hostile_file()) {
        let parsed = read_changes(&bytes).expect("the header is the contract's");
        let mut last = 0;
        for r in &parsed.rejects {
            proptest::prop_assert!(r.line >= 2 && r.line >= last, "line {} after {last}", r.line);
            proptest::prop_assert!(!r.reason.to_string().is_empty());
            last = r.line;
        }
        for c in parsed.changes.iter() {
            let fits = match &c[3] { Value::Decimal(a) => a.get().abs() < 10_000_000_000, other => other.is_null() };
            proptest::prop_assert!(fits, "amount {:?}", c[3]);
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..512)) {
        let _ = read_changes(&bytes);
    }
}
