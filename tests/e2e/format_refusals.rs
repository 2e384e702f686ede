//! Hostile JSON Lines and Parquet files end to end: a file the spec cannot
//! read is refused with the reason in the ledger and on stderr, nothing else
//! written; a record that cannot be read is a reject with its line and reason.

use crate::deletes::INVENTORY;
use crate::deltaload;
use deltaload_tests::{stderr, stdout, Sandbox};

fn sandbox(format: &str, extra: &str) -> Sandbox {
    let sb = Sandbox::new();
    let spec =
        format!("[[dataset]]\nname = \"inventory\"\nformat = \"{format}\"\n{extra}{INVENTORY}");
    std::fs::write(sb.dir.path().join("spec.toml"), spec).unwrap();
    sb
}

fn load(sb: &Sandbox, file: &str) -> std::process::Output {
    deltaload(sb, &["--spec", "spec.toml", "load", file], None)
}

fn ledger(sb: &Sandbox) -> String {
    let out = deltaload(
        sb,
        &["--spec", "spec.toml", "show", "ledger", "--format", "csv"],
        None,
    );
    stdout(&out)
}

/// A Parquet file whose `qty` is a 64-bit integer where the spec says int.
fn wide_qty() -> Vec<u8> {
    use deltalake::arrow::array::{ArrayRef, Int64Array, StringArray};
    use deltalake::arrow::record_batch::RecordBatch;
    use std::sync::Arc;
    let columns: Vec<(&str, ArrayRef)> = vec![
        ("warehouse", Arc::new(StringArray::from(vec!["a"]))),
        ("sku", Arc::new(Int64Array::from(vec![1]))),
        (
            "event_time",
            Arc::new(StringArray::from(vec!["2026-10-01T10:00:00"])),
        ),
        ("seq", Arc::new(Int64Array::from(vec![0]))),
        ("qty", Arc::new(Int64Array::from(vec![5]))),
        ("op", Arc::new(StringArray::from(vec![None::<&str>]))),
    ];
    let batch = RecordBatch::try_from_iter(columns).unwrap();
    let mut out = Vec::new();
    let mut w =
        deltalake::parquet::arrow::ArrowWriter::try_new(&mut out, batch.schema(), None).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    out
}

#[test]
fn parquet_files_of_the_wrong_types_or_truncated_are_refused_with_the_column_and_both_types() {
    let sb = sandbox("parquet", "");
    let bytes = wide_qty();
    sb.file("wide.parquet", &bytes);
    sb.file("cut.parquet", &bytes[..bytes.len() / 2]);
    let wide = load(&sb, "raw/wide.parquet");
    assert_eq!(wide.status.code(), Some(2), "{}", stderr(&wide));
    let reason = stderr(&wide);
    assert!(
        reason.contains("\"sku\"") || reason.contains("\"qty\""),
        "{reason}"
    );
    assert!(
        reason.contains("Int64") && reason.contains("int"),
        "{reason}"
    );
    let cut = load(&sb, "raw/cut.parquet");
    assert_eq!(cut.status.code(), Some(2), "{}", stderr(&cut));
    assert!(
        stderr(&cut).to_lowercase().contains("parquet"),
        "{}",
        stderr(&cut)
    );
    let ledger = ledger(&sb);
    assert_eq!(ledger.matches(",refused,").count(), 2, "{ledger}");
    assert!(
        ledger.contains("Int64"),
        "the ledger keeps the reason: {ledger}"
    );
}

#[test]
fn json_lines_with_undeclared_fields_are_refused_unless_ignored_and_bad_lines_are_rejects() {
    let lines = "{\"warehouse\":\"a\",\"sku\":1,\"event_time\":\"2026-10-01T10:00:00\",\"seq\":0,\"qty\":1,\"note\":\"x\"}\n\
                 {\"warehouse\":\"a\",\"sku\":2,\"event_time\":\"2026-10-01T10:00:00\",\"seq\":0,\"qty\":1e400}\n\
                 {\"warehouse\":\"a\",\"sku\":3,\"sku\":4,\"event_time\":\"2026-10-01T10:00:00\",\"seq\":0}\n\
                 [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\n\
                 {\"warehouse\":\"a\",\"sku\":5,\"event_time\":\"2026-10-01T1";
    let refusing = sandbox("jsonl", "");
    refusing.file("f.jsonl", lines);
    let out = load(&refusing, "raw/f.jsonl");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("\"note\"") && stderr(&out).contains("extra_fields"),
        "{}",
        stderr(&out)
    );
    let ignoring = sandbox("jsonl", "extra_fields = \"ignore\"\n");
    ignoring.file("f.jsonl", lines);
    let out = load(&ignoring, "raw/f.jsonl");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains(": 4 rejected, 0 updated, 1 added, 0 deleted"),
        "{}",
        stdout(&out)
    );
    let rejects = deltaload(
        &ignoring,
        &[
            "--spec",
            "spec.toml",
            "show",
            "rejected_inventory",
            "--format",
            "csv",
        ],
        None,
    );
    let rejects = stdout(&rejects);
    for needle in ["qty", "appears twice", "line_number", "EOF"] {
        assert!(rejects.contains(needle), "{needle}: {rejects}");
    }
}
