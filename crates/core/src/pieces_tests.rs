//! Reading a file piece by piece gives what reading it whole gives.

use super::*;
use crate::reader::ParsedFile;
use crate::spec::Spec;
use crate::HeaderMismatch;
use proptest::prelude::*;
use std::sync::Arc;

const JSONL: &str = r#"
[[dataset]]
name = "events"
format = "jsonl"
keys = ["id"]
[[dataset.columns]]
name = "id"
type = "bigint"
[[dataset.columns]]
name = "note"
type = "string"
"#;

fn read(dataset: &Dataset, bytes: &[u8]) -> Result<ParsedFile, HeaderMismatch> {
    match dataset.format {
        Format::Jsonl => crate::read_jsonl(dataset, bytes),
        _ => crate::read_file(dataset, bytes),
    }
}

/// What the lake does with a file too large to read whole, on `window`-byte
/// windows: the header, then each piece after it, lines shifted.
fn read_by_pieces(
    dataset: &Dataset,
    bytes: &[u8],
    window: usize,
) -> Result<ParsedFile, HeaderMismatch> {
    let grow = |from: usize, cut: &dyn Fn(&[u8], bool) -> Option<usize>| {
        let mut w = window.max(1);
        loop {
            let stop = (from + w).min(bytes.len());
            if let Some(end) = cut(&bytes[from..stop], stop == bytes.len()) {
                return from + end;
            }
            w *= 2;
        }
    };
    let header = grow(0, &|w, eof| header_end(dataset, w, eof));
    let head = &bytes[..header];
    let head_lines = line_ends(dataset, head);
    let mut lines = head_lines;
    let mut whole = ParsedFile {
        changes: crate::Rows::new(dataset.width()),
        rejects: Vec::new(),
    };
    let mut at = header;
    loop {
        let end = grow(at, &|w, eof| piece_end(dataset, w, eof));
        let mut part = read(dataset, &with_header(head, &bytes[at..end]))
            .map_err(|refused| crate::pieces::shifted(refused, lines - head_lines))?;
        for r in &mut part.rejects {
            r.line = r.line - head_lines + lines;
        }
        lines += line_ends(dataset, &bytes[at..end]);
        whole.changes.append(part.changes);
        whole.rejects.append(&mut part.rejects);
        at = end;
        if at >= bytes.len() {
            return Ok(whole);
        }
    }
}

fn csv_line() -> impl Strategy<Value = String> {
    prop_oneof![
        (1u32..50).prop_map(|i| format!(
            "{i},C1,placed,1.50,EUR,2026-10-01T09:00:00,2026-10-01T09:00:00"
        )),
        (1u32..50).prop_map(|i| format!(
            "{i},\"C,\r\n1\",\"pla\"\"ced\",2.00,EUR,2026-10-01T09:00:00,2026-10-01T10:00:00"
        )),
        (1u32..50)
            .prop_map(|i| format!("{i},C2,placed,abc,EUR,2026-10-01T09:00:00,2026-10-01T09:00:00")),
        Just("7,C\"3,placed,1.00,EUR,2026-10-01T09:00:00,2026-10-01T09:00:00".to_string()),
        Just("8,\"open,quote".to_string()),
        Just(String::new()),
        Just("x,y".to_string()),
    ]
}

fn jsonl_line() -> impl Strategy<Value = String> {
    prop_oneof![
        (1u32..50).prop_map(|i| format!(r#"{{"id": {i}, "note": "a\nb"}}"#)),
        (1u32..50).prop_map(|i| format!(r#"{{"id": "{i}x"}}"#)),
        Just("not json".to_string()),
        Just(r#"{"id": 3, "undeclared": 1}"#.to_string()),
        Just("  ".to_string()),
    ]
}

fn ends() -> impl Strategy<Value = &'static str> {
    prop_oneof![Just("\n"), Just("\r\n"), Just("\r")]
}

fn file(
    lines: impl Strategy<Value = String>,
    header: &'static str,
) -> impl Strategy<Value = Vec<u8>> {
    (
        any::<bool>(),
        prop::collection::vec((lines, ends()), 0..30),
        any::<bool>(),
    )
        .prop_map(move |(bom, lines, last)| {
            let mut text = String::new();
            if bom {
                text.push('\u{feff}');
            }
            text.push_str(header);
            for (line, end) in &lines {
                text.push_str(line);
                text.push_str(end);
            }
            if last {
                text.push_str("99,C9,placed,1.00,EUR,2026-10-01T09:00:00,2026-10-01T09:00:00");
            }
            text.into_bytes()
        })
}

const HEADER: &str = "order_id,customer_id,status,amount,currency,ordered_at,updated_at\r\n";

proptest! {
    #[test]
    fn csv_read_in_pieces_is_csv_read_whole(bytes in file(csv_line(), HEADER), window in 1usize..200) {
        let orders = Dataset::orders();
        prop_assert_eq!(read_by_pieces(&orders, &bytes, window), read(&orders, &bytes));
    }

    #[test]
    fn jsonl_read_in_pieces_is_jsonl_read_whole(bytes in file(jsonl_line(), ""), window in 1usize..120) {
        let events: Arc<Dataset> = Spec::parse(JSONL, "t.toml").unwrap().datasets.remove(0);
        let bytes: Vec<u8> = bytes.into_iter().map(|b| if b == b'\r' { b'\n' } else { b }).collect();
        prop_assert_eq!(read_by_pieces(&events, &bytes, window), read(&events, &bytes));
    }
}

#[test]
fn a_cut_never_parts_a_crlf_nor_a_quoted_field() {
    let orders = Dataset::orders();
    let text = b"1,\"a\nb\",x\r\n2,c,y\r";
    assert_eq!(piece_end(&orders, &text[..5], false), None);
    assert_eq!(piece_end(&orders, &text[..14], false), Some(11));
    assert_eq!(piece_end(&orders, &text[..10], false), None);
    assert_eq!(piece_end(&orders, text, false), Some(11));
    assert_eq!(piece_end(&orders, text, true), Some(text.len()));
    assert_eq!(header_end(&orders, b"h1,h2\r\n\r\nrow", false), Some(9));
    assert_eq!(header_end(&orders, b"h1,h2", false), None);
}

#[test]
fn an_avro_header_ending_in_cr_is_taken_as_it_is() {
    // Its sync marker is random: one header in 256 ends in a CR, which a
    // text header would be given an LF after.
    let head = [&crate::avro_container::MAGIC[..], b"\0", &[b'x'; 15], b"\r"].concat();
    assert_eq!(with_header(&head, b"\x02"), [&head[..], b"\x02"].concat());
    assert_eq!(with_header(b"a,b\r", b"\n1,2\n"), b"a,b\r\n\n1,2\n");
}

#[test]
fn an_avro_pieces_bytes_are_named_as_in_the_whole_file() {
    let dataset = crate::spec::Dataset::orders();
    let refused = |problem: &str| HeaderMismatch::new(&dataset, Vec::new(), problem.to_string());
    let shifted = shifted_bytes(
        refused(
            "not a readable Avro file: the block at byte 130: it ends inside a block at byte 200",
        ),
        100,
        5_000,
    );
    assert_eq!(
        shifted.problem,
        "not a readable Avro file: the block at byte 5030: it ends inside a block at byte 5100"
    );
    // A byte of the header stays where it is.
    let kept = shifted_bytes(refused("it ends inside the header at byte 40"), 100, 5_000);
    assert_eq!(kept.problem, "it ends inside the header at byte 40");
}
