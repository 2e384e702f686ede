//! Avro files written here by the specification's rules, whole and damaged:
//! read exactly, or refused with the reason, never a panic, a hang or an
//! allocation the file does not hold.

use super::*;
use crate::Columns;
use deltaload_core::avro_container::put_long as long;
use deltaload_core::Spec;
use std::sync::Arc;

fn dataset() -> Arc<Dataset> {
    let text = r#"
[[dataset]]
name = "people"
format = "avro"
keys = ["id"]
columns = [{ name = "id", type = "bigint" }, { name = "name", type = "string" }]
"#;
    Spec::parse(text, "t.toml").unwrap().datasets.remove(0)
}

const SCHEMA: &str = r#"{"type":"record","name":"p","fields":[{"name":"id","type":"long"},{"name":"name","type":["null","string"]}]}"#;
const SYNC: [u8; 16] = *b"0123456789abcdef";

fn bytes(out: &mut Vec<u8>, b: &[u8]) {
    long(out, b.len() as i64);
    out.extend_from_slice(b);
}

/// Records `(id, name)` encoded.
fn rows(rows: &[(i64, Option<&str>)]) -> Vec<u8> {
    let mut out = Vec::new();
    for (id, name) in rows {
        long(&mut out, *id);
        match name {
            None => long(&mut out, 0),
            Some(n) => {
                long(&mut out, 1);
                bytes(&mut out, n.as_bytes());
            }
        }
    }
    out
}

/// A container of `codec` whose blocks are `(stated count, bytes)`.
fn file(codec: &str, blocks: &[(i64, Vec<u8>)]) -> Vec<u8> {
    file_of(SCHEMA, codec, blocks)
}

/// [`file`] of another schema.
fn file_of(schema: &str, codec: &str, blocks: &[(i64, Vec<u8>)]) -> Vec<u8> {
    let mut out = b"Obj\x01".to_vec();
    long(&mut out, 2);
    bytes(&mut out, b"avro.schema");
    bytes(&mut out, schema.as_bytes());
    bytes(&mut out, b"avro.codec");
    bytes(&mut out, codec.as_bytes());
    long(&mut out, 0);
    out.extend(SYNC);
    for (count, data) in blocks {
        long(&mut out, *count);
        bytes(&mut out, data);
        out.extend(SYNC);
    }
    out
}

fn read(bytes: &[u8]) -> Result<ParsedFile<Columns>, HeaderMismatch> {
    read_avro_into::<Columns>(&dataset(), bytes)
}

fn refusal(bytes: &[u8]) -> String {
    match read(bytes) {
        Ok(_) => panic!("read"),
        Err(e) => e.problem,
    }
}

#[test]
fn blocks_read_in_order_and_a_snappy_block_is_checked() {
    let a = rows(&[(1, Some("Ann")), (2, None)]);
    let b = rows(&[(3, Some("Zoë"))]);
    let parsed = read(&file("null", &[(2, a.clone()), (0, vec![]), (1, b)])).unwrap();
    let (batches, _) = parsed.changes.finish_counted().unwrap();
    let n: usize = batches.iter().map(|b| b.num_rows()).sum();
    assert_eq!(n, 3);
    let mut snappy = snap::raw::Encoder::new().compress_vec(&a).unwrap();
    snappy.extend(crc32fast::hash(&a).to_be_bytes());
    assert!(read(&file("snappy", &[(2, snappy.clone())])).is_ok());
    let last = snappy.len() - 1;
    snappy[last] ^= 1;
    let e = refusal(&file("snappy", &[(2, snappy)]));
    assert!(e.contains("checksum does not match"), "{e}");
}

#[test]
fn a_damaged_container_is_refused_with_the_reason() {
    let a = rows(&[(1, Some("Ann")), (2, None)]);
    let good = file("null", &[(2, a.clone())]);
    let mut spliced = good.clone();
    let end = spliced.len() - 1;
    spliced[end] ^= 1;
    let mut huge = file("null", &[]);
    long(&mut huge, 1 << 40);
    long(&mut huge, 4);
    huge.extend([2, 0, 4, 0]);
    huge.extend(SYNC);
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (b"PAR1 not avro".to_vec(), "does not start with Obj"),
        (good[..good.len() - 5].to_vec(), "truncated Avro file"),
        (spliced, "without the header's sync marker"),
        (
            file("lz4", &[(2, a.clone())]),
            "codec (avro.codec) is \"lz4\"",
        ),
        // A count larger than the block: more records than its bytes hold.
        (file("null", &[(3, a.clone())]), "the block at byte"),
        (huge, "states 1099511627776 records, more than the 1048576"),
        (file("snappy", &[(1, vec![1, 2])]), "holds no checksum"),
        (file("deflate", &[(2, vec![0xff; 8])]), "does not expand"),
    ];
    for (bytes, expected) in cases {
        let e = refusal(&bytes);
        assert!(e.contains(expected), "{expected}: {e}");
        assert!(e.starts_with("not a readable Avro file: "), "{e}");
    }
}

#[test]
fn a_block_holding_more_than_it_states_ends_and_its_rest_is_ignored() {
    // arrow-avro 59 spins for ever on such a block when read as a stream;
    // a block at a time, its stated records are read and the rest ignored,
    // as Avro's Java and Rust readers do.
    let two = rows(&[(1, Some("Ann")), (2, None)]);
    let parsed = read(&file("null", &[(1, two)])).unwrap();
    let (batches, _) = parsed.changes.finish_counted().unwrap();
    assert_eq!(batches.iter().map(|b| b.num_rows()).sum::<usize>(), 1);
}

#[test]
fn a_schema_that_is_no_record_or_lacks_a_column_is_refused() {
    assert!(refusal(&file_of("\"long\"", "null", &[])).contains("is not a record"));
    let other = SCHEMA.replace("\"name\",\"type\"", "\"label\",\"type\"");
    let e = refusal(&file_of(&other, "null", &[]));
    assert!(e.contains("no column(s) \"name\""), "{e}");
}

#[test]
fn a_value_with_no_meaning_rejects_its_record_only_where_the_dataset_reads_it() {
    let text = r#"
[[dataset]]
name = "births"
format = "avro"
extra_fields = "ignore"        # "other" is not read
preset = "debezium"
keys = ["id"]
columns = [{ name = "id", type = "bigint" }, { name = "born", type = "date" }]
"#;
    let dataset = Spec::parse(text, "t.toml").unwrap().datasets.remove(0);
    let date = r#"{"type":"int","connect.name":"io.debezium.time.Date"}"#;
    let schema = format!(
        r#"{{"type":"record","name":"v","fields":[{{"name":"id","type":"long"}},
        {{"name":"born","type":{date}}},{{"name":"other","type":{date}}},
        {{"name":"__op","type":"string"}}]}}"#
    );
    // (id, born, other, op): a date of year 275,000 in born, in an
    // undeclared column, and in born of a delete (which reads its key only).
    let far = 100_000_000;
    let mut records = Vec::new();
    for (id, born, other, op) in [(1, far, 0, "c"), (2, 0, far, "c"), (3, far, 0, "d")] {
        long(&mut records, id);
        long(&mut records, born);
        long(&mut records, other);
        bytes(&mut records, op.as_bytes());
    }
    let parsed: ParsedFile<Columns> =
        read_avro_into(&dataset, &file_of(&schema, "null", &[(3, records)])).unwrap();
    let rejects: Vec<(u64, String)> = (parsed.rejects.iter())
        .map(|r| (r.line, r.reason.to_string()))
        .collect();
    assert_eq!(
        rejects,
        [(
            1,
            "born 100000000 days since 1970-01-01 is not a date of years 1 to 9999".to_string()
        )]
    );
    assert!(
        parsed.rejects[0].raw.contains("\"born\":100000000"),
        "{}",
        parsed.rejects[0].raw
    );
    let (batches, _) = parsed.changes.finish_counted().unwrap();
    assert_eq!(batches.iter().map(|b| b.num_rows()).sum::<usize>(), 2);
}
