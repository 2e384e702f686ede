//! Keys and file names holding SQL's quote, backslash, double quote, `%`,
//! line ends and text beyond ASCII load, update, delete and are found again
//! exactly: no value reaches a predicate as SQL text (the MERGE's, the
//! file-skipping scan's, the commit's, the ledger's and `show --key`'s are
//! expressions or bound parameters). Every engine and layout: the keyed
//! upsert, merge-on-read, delta-rs's MERGE (a partitioned table), one file
//! at a time and in a batch.

use crate::deltaload;
use deltaload_core::Spec;
use deltaload_lake::{local_source, SourceFile, TableName};
use deltaload_tests::{stdout, Sandbox};
use std::collections::BTreeMap;

/// Keys a predicate built from text would break on.
const KEYS: [&str; 10] = [
    "a'b",
    "a''b",
    "'; DROP TABLE things; --",
    "back\\slash",
    "dq\"x",
    "50%",
    "under_score",
    "line\nbreak\r\nend",
    "é漢字🙂",
    "",
];

/// A dataset keyed by text, with deletes, `LAYOUT` a line of its own.
const SPEC: &str = r#"[[dataset]]
name = "things"
format = "jsonl"
keys = ["k"]
sequence_by = ["v"]
delete_when = { column = "op", in = ["d"] }
LAYOUT
[[dataset.columns]]
name = "k"
type = "string"
[[dataset.columns]]
name = "v"
type = "int"
[[dataset.columns]]
name = "part"
type = "string"
[[dataset.columns]]
name = "note"
type = "string"
"#;

fn line(key: &str, v: i32, note: &str, op: &str) -> String {
    serde_json::json!({"k": key, "v": v, "part": "p", "note": note, "op": op}).to_string() + "\n"
}

fn source(sb: &Sandbox, name: &str, text: String) -> SourceFile {
    let path = sb.file(name, &text);
    SourceFile::in_memory(
        local_source(path.to_str().unwrap()).unwrap(),
        text.into_bytes(),
    )
}

/// Loads three files into a lake of `layout`, the last two as one batch,
/// and returns the table's rows by key, and the ledger's locations.
async fn load(layout: &str) -> (BTreeMap<String, (String, String)>, Vec<String>, Sandbox) {
    let spec = Spec::parse(&SPEC.replace("LAYOUT", layout), "things.toml").unwrap();
    let sb = Sandbox::with_spec(spec);
    let first: String = KEYS.iter().map(|k| line(k, 1, "first", "u")).collect();
    let second: String = KEYS
        .iter()
        .enumerate()
        .map(|(i, k)| match i % 3 {
            0 => line(k, 2, &format!("second {k}"), "u"),
            1 => line(k, 2, "", "d"),
            _ => line(k, 0, "stale", "u"),
        })
        .collect();
    let third: String = KEYS
        .iter()
        .map(|k| line(&format!("{k}+"), 1, k, "u"))
        .collect();
    let mut lake = sb.lake().await;
    let files = [
        source(&sb, "it's \"first\" 100%.jsonl", first),
        source(&sb, "back\\slash 'second'.jsonl", second),
        source(&sb, "é'third'.jsonl", third),
    ];
    lake.load(&files[0], Default::default()).await.unwrap();
    lake.load_batch(files[1..].to_vec(), Default::default())
        .await
        .unwrap();
    let d = sb.spec.datasets[0].clone();
    let rows = sb.rows(TableName::Target(d), "k, v, note").await;
    let table = rows
        .into_iter()
        .map(|r| (r[0].clone(), (r[1].clone(), r[2].clone())))
        .collect();
    let ledger = sb.rows(TableName::Ledger, "location, status").await;
    assert!(ledger.iter().all(|r| r[1] == "loaded"), "{ledger:?}");
    let locations = ledger.into_iter().map(|r| r[0].clone()).collect();
    (table, locations, sb)
}

/// What the three files leave: every third key updated, every third deleted,
/// the rest kept from the first file; and a `+` key for each from the third.
fn expected() -> BTreeMap<String, (String, String)> {
    let mut rows = BTreeMap::new();
    for (i, k) in KEYS.iter().enumerate() {
        match i % 3 {
            0 => rows.insert(k.to_string(), ("2".into(), format!("second {k}"))),
            1 => None,
            _ => rows.insert(k.to_string(), ("1".into(), "first".into())),
        };
        rows.insert(format!("{k}+"), ("1".into(), k.to_string()));
    }
    rows
}

#[tokio::test(flavor = "multi_thread")]
async fn hostile_keys_and_file_names_load_exactly_in_every_engine_and_layout() {
    for layout in ["", "merge_on_read = true", "partition_by = [\"part\"]"] {
        let (table, locations, sb) = load(layout).await;
        assert_eq!(table, expected(), "{layout}");
        assert_eq!(locations.len(), 3, "{layout}: {locations:?}");
        assert!(locations
            .iter()
            .any(|l| l.ends_with("it's \"first\" 100%.jsonl")));
        // A reload of the same files changes nothing: the ledger finds them.
        let versions = sb.versions().await;
        let again = sb
            .load(&sb.dir.path().join("raw/it's \"first\" 100%.jsonl"), false)
            .await;
        assert!(
            matches!(again, deltaload_lake::LoadOutcome::Skipped { .. }),
            "{layout}: {again:?}"
        );
        assert_eq!(sb.versions().await, versions, "{layout}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn show_finds_a_hostile_key_as_given() {
    let (_, _, sb) = load("").await;
    let spec = sb.dir.path().join("things.toml");
    std::fs::write(&spec, SPEC.replace("LAYOUT", "")).unwrap();
    let lake = sb.lake_dir();
    for key in ["a'b", "'; DROP TABLE things; --", "50%", "é漢字🙂"] {
        let out = deltaload(
            &sb,
            &[
                "--spec",
                spec.to_str().unwrap(),
                "show",
                "things",
                "--lake",
                lake.to_str().unwrap(),
                "--key",
                key,
                "--format",
                "csv",
            ],
            None,
        );
        let text = stdout(&out);
        assert_eq!(text.lines().count(), 2, "{key}: {text}");
        let (v, note) = &expected()[key];
        let row = text.lines().nth(1).unwrap();
        assert!(row.contains(&format!(",{v},p,{note},")), "{key}: {text}");
    }
}
