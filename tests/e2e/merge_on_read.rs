//! Merge-on-read: a load that changes a few rows of a file marks them deleted
//! (a deletion vector) and appends their new versions instead of rewriting
//! the file; deltaload, Python deltalake and polars read the same rows.

use crate::other_engines::run_python;
use deltaload_core::Spec;
use deltaload_lake::{LoadOptions, TableName};
use deltaload_tests::Sandbox;

const SPEC: &str = r#"[[dataset]]
name = "items"
format = "jsonl"
merge_on_read = true
keys = ["id"]
sequence_by = ["version"]
delete_when = { column = "op", in = ["d"] }
[[dataset.columns]]
name = "id"
type = "bigint"
[[dataset.columns]]
name = "version"
type = "int"
[[dataset.columns]]
name = "note"
type = "string"
"#;

/// Every way Python deltalake and polars read a table, each printing its
/// rows or the first line of its error.
const READ: &str = r#"
import sys
import polars as pl
import pyarrow as pa
from deltalake import DeltaTable, QueryBuilder
path = sys.argv[1]
def show(name, read):
    try:
        print(name, sorted(tuple(r) for r in read()))
    except Exception as e:
        print(name, "fails:", str(e).splitlines()[0])
t = DeltaTable(path)
show("deltalake.QueryBuilder", lambda: [tuple(r.values()) for r in pa.table(QueryBuilder().register("t", t).execute("select id, version, note from t").read_all()).to_pylist()])
show("deltalake.to_pyarrow_table", lambda: [tuple(r.values()) for r in t.to_pyarrow_table(columns=["id", "version", "note"]).to_pylist()])
show("polars.read_delta", lambda: pl.read_delta(path).select(["id", "version", "note"]).iter_rows())
show("polars.scan_delta", lambda: pl.scan_delta(path).select(["id", "version", "note"]).collect().iter_rows())
print("protocol", t.protocol().min_reader_version, sorted(t.protocol().reader_features or []))
"#;

/// What `tests/dv_check.py` finds of the table's deletion vectors, read
/// back as the protocol describes them with Python's standard library only:
/// `(vectors, rows marked deleted)`, after asserting it found no problem.
pub(crate) fn checked_vectors(table: &std::path::Path) -> (u64, u64) {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/dv_check.py");
    let run = "import runpy, sys; sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')";
    let out = run_python(run, &[script, table.to_str().unwrap()]);
    let found: serde_json::Value = serde_json::from_slice(&out.stdout).expect("dv_check's JSON");
    assert_eq!(found["problems"], serde_json::json!([]), "{found}");
    let figure = |name: &str| found[name].as_u64().expect(name);
    (figure("vectors"), figure("cardinality"))
}

fn lines(rows: &[(i64, i32, &str, &str)]) -> String {
    rows.iter()
        .map(|(id, v, note, op)| {
            format!("{{\"id\":{id},\"version\":{v},\"note\":\"{note}\",\"op\":\"{op}\"}}\n")
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_small_change_marks_rows_deleted_and_every_reader_agrees() {
    let sb = Sandbox::with_spec(Spec::parse(SPEC, "items.toml").unwrap());
    let first: Vec<(i64, i32, &str, &str)> = (1..=50).map(|id| (id, 1, "old", "u")).collect();
    sb.load(&sb.file("a.jsonl", lines(&first)), false).await;
    let table = sb.lake_dir().join("items");
    let data_files = || -> Vec<String> {
        let mut files: Vec<String> = std::fs::read_dir(&table)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".parquet"))
            .collect();
        files.sort();
        files
    };
    let before = data_files();
    assert_eq!(before.len(), 1, "{before:?}");
    let second = [
        (3, 2, "new", "u"),
        (4, 2, "", "d"),
        (5, 0, "stale", "u"),
        (60, 1, "added", "u"),
    ];
    let out = sb.load(&sb.file("b.jsonl", lines(&second)), false).await;
    let deltaload_lake::LoadOutcome::Loaded(loaded) = out else {
        panic!("{out:?}")
    };
    let f = loaded.figures;
    assert_eq!(
        (f.inserted, f.updated, f.deleted, f.stale),
        (1, 1, 1, 1),
        "{f:?}"
    );
    let after = data_files();
    assert!(
        after.contains(&before[0]),
        "the first file stays: {after:?}"
    );
    assert_eq!(after.len(), 2, "one file appended: {after:?}");
    let vectors = std::fs::read_dir(&table)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with("deletion_vector_")
        })
        .count();
    assert_eq!(vectors, 1);
    // Read back independently: its size, CRC-32 and cardinality are right;
    // rows 3 (its old version) and 4 (deleted) are marked.
    assert_eq!(checked_vectors(&table), (1, 2));
    let mut expected: Vec<String> = (1..=50)
        .filter(|&id| id != 4)
        .map(|id| match id {
            3 => format!("({id}, 2, 'new')"),
            _ => format!("({id}, 1, 'old')"),
        })
        .collect();
    expected.push("(60, 1, 'added')".into());
    let expected = format!("[{}]", expected.join(", "));
    let d = sb.spec.datasets[0].clone();
    let rows = sb.rows(TableName::Target(d), "id, version, note").await;
    assert_eq!(rows.len(), 50);
    assert!(
        rows.contains(&vec!["3".into(), "2".into(), "new".into()]),
        "{rows:?}"
    );
    let out = run_python(READ, &[table.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    eprintln!("{text}");
    for reader in [
        "deltalake.QueryBuilder",
        "polars.read_delta",
        "polars.scan_delta",
    ] {
        assert!(
            text.contains(&format!("{reader} {expected}")),
            "{reader}: {text}"
        );
    }
    // Python deltalake's pyarrow path refuses the deletionVectors feature
    // (docs/reference.md, "Merge-on-read"): it never reads deleted rows as live.
    assert!(
        text.contains("deltalake.to_pyarrow_table fails: The table has set these reader features: {'deletionVectors'}"),
        "{text}"
    );
    assert!(text.contains("protocol 3 ['deletionVectors']"), "{text}");
    // A later load reads the file through its deletion vector: the deleted
    // version of order 3 is not taken for a second row of its key.
    let third = [(3, 3, "newer", "u"), (4, 1, "", "u")];
    let mut lake = sb.lake().await;
    let file = deltaload_lake::SourceFile::in_memory(
        "/landing/c.jsonl".into(),
        lines(&third).into_bytes(),
    );
    let out = lake.load(&file, LoadOptions::default()).await.unwrap();
    let deltaload_lake::LoadOutcome::Loaded(loaded) = out else {
        panic!("{out:?}")
    };
    assert_eq!(
        (loaded.figures.updated, loaded.figures.stale),
        (1, 1),
        "{:?}",
        loaded.figures
    );
    // The appended file's version of order 3 is marked deleted in turn.
    assert_eq!(checked_vectors(&table), (2, 3));
}
