//! Reads a whole change file of a dataset: the text decoded, the header
//! checked first, then every record into a typed row or a reject with its
//! line number, raw text and reason.

use crate::contract::{check_header, HeaderMismatch};
use crate::record::{parse_into, RejectReason};
use crate::spec::{Dataset, HeaderMode};
use crate::value::Rows;
use std::borrow::Cow;

/// A record that did not parse, kept with its raw text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reject {
    /// 1-based line where the record starts in the file.
    pub line: u64,
    /// The record as written, without its line end (invalid UTF-8 replaced by U+FFFD).
    pub raw: String,
    /// The key's field texts when there are any, to help find the row.
    pub key: Option<String>,
    /// Why it was rejected.
    pub reason: String,
}

/// Everything a file holds once its header has passed the contract.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ParsedFile {
    /// Records that parsed, in file order.
    pub changes: Rows,
    /// Records that did not.
    pub rejects: Vec<Reject>,
}

impl ParsedFile {
    /// Records read: every non-blank record after the header.
    pub fn records(&self) -> u64 {
        (self.changes.len() + self.rejects.len()) as u64
    }
}

/// Reads `bytes` as an RFC 4180 CSV file of `dataset`.
///
/// The text is decoded from the dataset's encoding; a UTF-8 BOM and CRLF or
/// lone CR line ends are accepted; blank lines are skipped and not counted as
/// records, but do count as lines. A header that is not the contract refuses
/// the whole file, with a hint when another encoding or delimiter would match.
pub fn read_file(dataset: &Dataset, bytes: &[u8]) -> Result<ParsedFile, HeaderMismatch> {
    let body = crate::encoding::decode(dataset, bytes)?;
    read_decoded(dataset, &body).map_err(|mut refused| {
        if let Some(hint) = crate::encoding::hint(dataset, bytes) {
            refused.problem = hint;
        }
        refused
    })
}

fn read_decoded(dataset: &Dataset, body: &[u8]) -> Result<ParsedFile, HeaderMismatch> {
    read_in_spans(
        dataset,
        body,
        crate::chunks::parallelism(),
        crate::chunks::MIN_SPAN,
    )
}

/// [`read_decoded`] on up to `parts` cores, spans of at least `min_span` bytes.
pub(crate) fn read_in_spans(
    dataset: &Dataset,
    body: &[u8],
    parts: usize,
    min_span: usize,
) -> Result<ParsedFile, HeaderMismatch> {
    let (at, start) = match dataset.csv.header {
        HeaderMode::None => (check_header(dataset, Some(&[]))?, 0),
        _ => match first_record(dataset, body) {
            Some((names, end)) => (check_header(dataset, Some(&names))?, end),
            None => {
                check_header(dataset, None)?;
                return Ok(ParsedFile {
                    changes: Rows::new(dataset.width()),
                    rejects: Vec::new(),
                });
            }
        },
    };
    // After the header's line end and any blank lines (so the lines before
    // a span never end in half a CRLF).
    let start = start + leading_line_ends(&body[start.min(body.len())..]);
    let spans = crate::chunks::spans(body, start, parts, min_span);
    // Each span starts after a line end: its first record's line is one past
    // the line ends before it.
    let mut lines = Vec::with_capacity(spans.len());
    let mut line = 1 + line_ends(&body[..spans[0].0]);
    for (i, &(from, _)) in spans.iter().enumerate() {
        if i > 0 {
            line += line_ends(&body[spans[i - 1].0..from]);
        }
        lines.push(line);
    }
    let parse = |k: usize| {
        let (from, to) = spans[k];
        read_records(dataset, &body[from..to], &at, lines[k])
    };
    let mut parts: Vec<ParsedFile> = crate::chunks::in_parallel(spans.len(), parse);
    let mut parsed = parts.remove(0);
    for part in parts {
        parsed.changes.append(part.changes);
        parsed.rejects.extend(part.rejects);
    }
    Ok(parsed)
}

/// The first record's fields (the header) and the byte where the next begins;
/// `None` for a file without records.
fn first_record(dataset: &Dataset, body: &[u8]) -> Option<(Vec<String>, usize)> {
    let mut reader = csv_reader(dataset, body);
    let mut record = csv::ByteRecord::new();
    match reader.read_byte_record(&mut record) {
        Ok(true) => {
            let names = record
                .iter()
                .map(|f| String::from_utf8_lossy(f).into_owned())
                .collect();
            Some((names, reader.position().byte() as usize))
        }
        _ => None,
    }
}

fn csv_reader<'a>(dataset: &Dataset, body: &'a [u8]) -> csv::Reader<&'a [u8]> {
    csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .delimiter(dataset.csv.field_delimiter)
        .from_reader(body)
}

/// The records of `body` (whole records, after the header), the first on
/// line `line` of the file, fields at positions `at`.
fn read_records(dataset: &Dataset, body: &[u8], at: &[usize], mut line: u64) -> ParsedFile {
    let mut reader = csv_reader(dataset, body);
    let mut record = csv::ByteRecord::new();
    let mut parsed = ParsedFile {
        changes: Rows::new(dataset.width()),
        rejects: Vec::new(),
    };
    // Line numbers counted here: csv's own do not count the blank lines it skips.
    let mut counted = 0usize;
    loop {
        let start = reader.position().byte() as usize;
        match reader.read_byte_record(&mut record) {
            Ok(false) => break,
            Ok(true) => {}
            Err(e) => {
                // csv reading from memory only fails on I/O, which cannot happen here;
                // keep the rest of the file as one reject rather than drop it.
                let raw = String::from_utf8_lossy(&body[start.min(body.len())..]);
                parsed.rejects.push(Reject {
                    line,
                    raw: raw.trim_end_matches(['\r', '\n']).to_string(),
                    key: None,
                    reason: format!("unreadable CSV: {e}"),
                });
                break;
            }
        }
        let end = reader.position().byte() as usize;
        let first = start + leading_line_ends(&body[start.min(body.len())..end.min(body.len())]);
        line += line_ends(&body[counted.min(first)..first.min(body.len())]);
        counted = first.max(counted);
        let values = parsed.changes.values_mut();
        let before = values.len();
        match decode(&record).and_then(|fields| parse_into(dataset, &fields, at, values)) {
            Ok(()) => {}
            Err(reason) => {
                values.truncate(before);
                parsed.rejects.push(Reject {
                    line,
                    raw: raw_text(body, first, end),
                    key: key_text(dataset, &record, at),
                    reason: reason.to_string(),
                })
            }
        }
    }
    parsed
}

/// The key's field texts of a rejected record, joined by commas; `None` when all are empty.
fn key_text(dataset: &Dataset, record: &csv::ByteRecord, at: &[usize]) -> Option<String> {
    let texts: Vec<Cow<'_, str>> = dataset
        .keys
        .iter()
        .map(|&k| {
            record
                .get(at[k])
                .map_or(Cow::Borrowed(""), String::from_utf8_lossy)
        })
        .collect();
    texts.iter().any(|t| !t.is_empty()).then(|| texts.join(","))
}

fn decode(record: &csv::ByteRecord) -> Result<Vec<&str>, RejectReason> {
    record
        .iter()
        .map(|f| std::str::from_utf8(f).map_err(|_| RejectReason::NotUtf8))
        .collect()
}

/// How many line ends `slice` holds: LF, CRLF and a lone CR each end one line, as
/// they end a record for the CSV reader.
fn line_ends(slice: &[u8]) -> u64 {
    let mut bytes = slice.iter().peekable();
    let mut ends = 0;
    while let Some(b) = bytes.next() {
        match b {
            b'\n' => ends += 1,
            b'\r' if bytes.peek() != Some(&&b'\n') => ends += 1,
            _ => {}
        }
    }
    ends
}

/// How many bytes of blank lines open `slice`.
fn leading_line_ends(slice: &[u8]) -> usize {
    slice
        .iter()
        .position(|b| !matches!(b, b'\r' | b'\n'))
        .unwrap_or(slice.len())
}

/// The record's bytes (from its first byte) without its line end.
fn raw_text(body: &[u8], first: usize, end: usize) -> String {
    let slice = &body[first.min(body.len())..end.min(body.len())];
    let last = slice
        .iter()
        .rposition(|b| !matches!(b, b'\r' | b'\n'))
        .map_or(0, |i| i + 1);
    String::from_utf8_lossy(&slice[..last]).into_owned()
}

#[cfg(test)]
mod tests {
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
        assert!(r.reason.contains("amount"), "{}", r.reason);
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
        let reasons: Vec<&str> = p.rejects.iter().map(|r| r.reason.as_str()).collect();
        assert_eq!(reasons.len(), 3, "{reasons:?}");
        assert!(reasons[0].contains("8 fields"));
        assert!(reasons[1].contains("UTF-8"));
        assert!(p.rejects[1].raw.contains('\u{fffd}'));
        assert!(
            reasons[2].contains("fields"),
            "unterminated quote swallows the rest: {reasons:?}"
        );
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
                proptest::prop_assert!(!r.reason.is_empty());
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
}
