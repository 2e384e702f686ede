//! Partial updates (`ignore_null_updates`): an update's null keeps the
//! table's value. Random files of partial updates, inserts and deletes,
//! loaded in order one at a time or several in one round, give the table a
//! simple model gives: every change applied in sequence order, a null of
//! an update keeping the key's value, an insert (a key with no row, also
//! one deleted earlier in the same file) taking the change whole.

use deltaload_core::Spec;
use deltaload_lake::{LoadOptions, MemoryBudget, SourceFile, TableName};
use deltaload_tests::Sandbox;
use proptest::prelude::*;
use std::collections::BTreeMap;

/// Items whose updates send only what changed; deletes by `op` (the items
/// of `upsert_engines.rs`, every column an update column).
pub(crate) fn items_spec() -> String {
    let text = crate::upsert_engines::ITEMS.replace(
        "update_columns = [\"version\", \"price\"]",
        "ignore_null_updates = true\ndelete_when = { column = \"op\", in = [\"d\"] }",
    );
    assert!(text.contains("ignore_null_updates"));
    text
}

/// One change of an item (`upsert_engines::ITEMS`), a delete when `delete`
/// (deletes by `op`, as [`items_spec`] declares them).
#[derive(Debug, Clone)]
pub(crate) struct Item {
    pub id: i64,
    pub version: i32,
    pub price: Option<i32>,
    pub note: Option<&'static str>,
    pub delete: bool,
}

impl Item {
    pub fn json(&self) -> String {
        let or_null = |v: Option<String>| v.unwrap_or_else(|| "null".into());
        let op = if self.delete { r#","op":"d""# } else { "" };
        format!(
            "{{\"id\":{},\"version\":{},\"price\":{},\"note\":{}{op}}}\n",
            self.id,
            self.version,
            or_null(self.price.map(|p| p.to_string())),
            or_null(self.note.map(|n| format!("\"{n}\"")))
        )
    }
}

pub(crate) fn item() -> impl Strategy<Value = Item> {
    (
        0i64..4,
        prop::option::of(0i32..3),
        prop::option::of(prop::sample::select(vec!["x", "y"])),
        prop::bool::weighted(0.2),
    )
        .prop_map(|(id, price, note, delete)| Item {
            id,
            version: 0,
            price,
            note,
            delete,
        })
}

/// 1 to 4 files of up to 7 changes, in feed order: versions rise from
/// change to change, file to file.
pub(crate) fn versioned() -> impl Strategy<Value = Vec<Vec<Item>>> {
    prop::collection::vec(prop::collection::vec(item(), 0..8), 1..5).prop_map(|mut files| {
        let mut version = 0;
        for i in files.iter_mut().flatten() {
            version += 1;
            i.version = version;
        }
        files
    })
}

/// Files in feed order: versions rise from file to file, each file's lines
/// shuffled.
fn feed() -> impl Strategy<Value = Vec<Vec<Item>>> {
    versioned().prop_flat_map(|files| {
        let shuffled: Vec<_> = files.into_iter().map(|f| Just(f).prop_shuffle()).collect();
        shuffled
    })
}

/// The table the feed leaves: its changes applied in version order.
fn model(files: &[Vec<Item>]) -> Vec<Vec<String>> {
    let mut all: Vec<&Item> = files.iter().flatten().collect();
    all.sort_by_key(|i| i.version);
    let mut table: BTreeMap<i64, (i32, Option<i32>, Option<&str>)> = BTreeMap::new();
    for i in all {
        match (i.delete, table.get_mut(&i.id)) {
            (true, _) => {
                table.remove(&i.id);
            }
            (false, Some(row)) => {
                row.0 = i.version;
                row.1 = i.price.or(row.1);
                row.2 = i.note.or(row.2);
            }
            (false, None) => {
                table.insert(i.id, (i.version, i.price, i.note));
            }
        }
    }
    let text = |v: Option<String>| v.unwrap_or_else(|| "NULL".into());
    (table.into_iter())
        .map(|(id, (v, p, n))| {
            vec![
                id.to_string(),
                v.to_string(),
                text(p.map(|p| p.to_string())),
                text(n.map(str::to_string)),
            ]
        })
        .collect()
}

pub(crate) fn bytes(items: &[Item]) -> Vec<u8> {
    items
        .iter()
        .map(Item::json)
        .collect::<String>()
        .into_bytes()
}

/// Loads the feed in order, `together` files at a time in one round.
async fn load(files: &[Vec<Item>], together: usize) -> Vec<Vec<String>> {
    let spec = Spec::parse(&items_spec(), "items.toml").unwrap();
    let sb = Sandbox::with_spec(spec.clone());
    let sources: Vec<SourceFile> = (files.iter().enumerate())
        .map(|(i, f)| SourceFile::in_memory(format!("/landing/f{i}.jsonl"), bytes(f)))
        .collect();
    for round in sources.chunks(together) {
        sb.load_batch(round).await;
    }
    let table = TableName::Target(spec.datasets[0].clone());
    sb.rows(table, "id, version, price, note").await
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]
    #[test]
    fn partial_updates_loaded_in_order_give_the_models_table(files in feed(), together in 1usize..4) {
        let got = deltaload_tests::runtime().block_on(load(&files, together));
        prop_assert_eq!(got, model(&files));
    }
}

fn change(id: i64, version: i32, price: Option<i32>, note: Option<&'static str>) -> Item {
    Item {
        id,
        version,
        price,
        note,
        delete: false,
    }
}

/// A worked case of each rule: within a file, across files, in one round.
#[tokio::test]
async fn a_null_keeps_the_value_the_key_had_within_a_file_across_files_and_in_a_round() {
    let files = vec![
        vec![
            change(1, 1, Some(10), Some("x")),
            change(2, 2, Some(20), Some("y")),
        ],
        // Key 1: the newer change's null note takes the older change's;
        // its null price keeps the table's. Key 3 is new: inserted whole.
        vec![
            change(1, 4, None, None),
            change(1, 3, None, Some("z")),
            change(3, 5, None, Some("n")),
        ],
        // Loaded together: key 2 deleted, then inserted again whole (its
        // null price stays null); key 3 updated, its null note kept.
        vec![Item {
            delete: true,
            ..change(2, 6, None, None)
        }],
        vec![change(2, 7, None, Some("w")), change(3, 8, Some(30), None)],
        // Alone: key 1 deleted and inserted again within the file: whole,
        // its null price null, its note the one change after the delete set.
        vec![
            change(1, 12, None, None),
            change(1, 11, None, Some("v")),
            Item {
                delete: true,
                ..change(1, 10, None, None)
            },
            change(1, 9, Some(90), Some("u")),
        ],
    ];
    let spec = Spec::parse(&items_spec(), "items.toml").unwrap();
    let sb = Sandbox::with_spec(spec.clone());
    let sources: Vec<SourceFile> = (files.iter().enumerate())
        .map(|(i, f)| SourceFile::in_memory(format!("/landing/f{i}.jsonl"), bytes(f)))
        .collect();
    sb.load_batch(&sources[..1]).await;
    sb.load_batch(&sources[1..2]).await;
    sb.load_batch(&sources[2..4]).await;
    sb.load_batch(&sources[4..]).await;
    let table = TableName::Target(spec.datasets[0].clone());
    let rows = sb.rows(table, "id, version, price, note").await;
    let expected = [
        ["1", "12", "NULL", "v"],
        ["2", "7", "NULL", "w"],
        ["3", "8", "30", "n"],
    ];
    assert_eq!(rows, expected.map(|r| r.map(String::from).to_vec()));
    assert_eq!(rows, model(&files));
}

/// A dataset that keeps nulls' values cannot be read in pieces: a file
/// beyond the memory budget is refused with the reason.
#[tokio::test]
async fn a_file_too_large_to_read_whole_is_refused_with_the_reason() {
    let text = items_spec().replace("delete_when = { column = \"op\", in = [\"d\"] }", "");
    let sb = Sandbox::with_spec(Spec::parse(&text, "items.toml").unwrap());
    let spill = tempfile::tempdir().unwrap();
    let mut lake = sb.lake().await;
    lake.set_memory_budget(MemoryBudget::of(16 << 10, spill.path().to_path_buf()));
    let items: Vec<Item> = (0..2_000).map(|i| change(i, 1, Some(1), None)).collect();
    let file = SourceFile::in_memory("/landing/big.jsonl".to_string(), bytes(&items));
    let got = lake.load_batch(vec![file], LoadOptions::default()).await;
    let text = format!("{:?}", got.unwrap());
    assert!(text.contains("ignore_null_updates"), "{text}");
}

const EXAMPLE_SPEC: &str = include_str!("../../examples/partial_updates/spec.toml");
const EXAMPLE: [&str; 2] = ["LOAD00000001.csv", "20261202-090000000.csv"];

/// The worked example: DMS updates that leave a LOB column write it empty;
/// the documents keep their bodies, and `spec check` says which columns.
#[test]
fn the_worked_example_keeps_each_documents_body_where_an_update_leaves_it() {
    let sb = crate::example_sandbox(EXAMPLE_SPEC, ("partial_updates", "documents"), &EXAMPLE);
    let files = EXAMPLE.map(|name| format!("raw/documents/{name}"));
    let loaded = crate::with_spec_ok(&sb, &["load", &files[0], &files[1]]);
    assert!(
        loaded.ends_with("0 rejected, 2 updated, 1 added, 0 deleted, table version 2\n"),
        "{loaded}"
    );
    let shown = crate::with_spec_ok(&sb, &["show", "documents", "--format", "csv"]);
    let rows: Vec<&str> = crate::shown_rows(&shown)
        .iter()
        .map(|r| r.rsplitn(3, ',').nth(2).unwrap_or(r))
        .collect();
    assert_eq!(
        rows,
        [
            "id,title,revised,body",
            "1,Handbook v2,2026-12-01,Full text of the handbook",
            "2,Policy (signed),2026-12-03,\"Policy text, revised\"",
            "3,Memo (final),2026-12-03,",
        ],
        "{shown}"
    );
    let check = crate::with_spec_ok(&sb, &["spec", "check", "spec.toml"]);
    assert!(
        check.contains("an update's null keeps the table's value (ignore_null_updates): body"),
        "{check}"
    );
}
