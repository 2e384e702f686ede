//! The keyed upsert against delta-rs's MERGE: random table layouts
//! (overlapping files written by the MERGE, range-disjoint files written by the
//! keyed upsert, files without statistics) and random batches of changes
//! (repeats, stale changes, ties, nulls, inserts in gaps, deletes) loaded by
//! each engine into its own copy of one lake give the same rows, tombstones,
//! rejects, ledger and figures, also where an update's null keeps the
//! table's value (`ignore_null_updates`).

use crate::deletes::{file_bytes, Change};
use crate::partial_updates::{bytes, Item};
use deltaload_core::Spec;
use deltaload_lake::{lake_url, Engine, Lake, LakeRoot, LoadOptions, SourceFile, TableName};
use deltaload_tests::lake_state_of;
use proptest::prelude::*;
use std::collections::HashMap;
use std::path::Path;

/// A dataset with an integer key, a sequence, update columns and no deletes.
pub(crate) const ITEMS: &str = r#"[[dataset]]
name = "items"
format = "jsonl"
keys = ["id"]
sequence_by = ["version"]
update_columns = ["version", "price"]
[[dataset.columns]]
name = "id"
type = "bigint"
[[dataset.columns]]
name = "version"
type = "int"
[[dataset.columns]]
name = "price"
type = "int"
[[dataset.columns]]
name = "note"
type = "string"
"#;

/// One change of an item: ids fall in clusters far apart, so files of
/// different clusters have disjoint key ranges and some lie between others.
fn item() -> impl Strategy<Value = Item> {
    (
        0i64..4,
        0i64..6,
        0i32..3,
        prop::option::of(0i32..3),
        prop::option::of(prop::sample::select(vec!["x", "y"])),
    )
        .prop_map(|(cluster, id, version, price, note)| Item {
            id: cluster * 1_000 + id,
            version,
            price,
            note,
            delete: false,
        })
}

fn inventory_change() -> impl Strategy<Value = Change> {
    crate::deletes::change_of(vec!["a", "b", "c"], 1..6, vec![None, Some("u"), Some("d")])
}

/// How the table is laid out before the batch under test.
#[derive(Debug, Clone, Copy)]
struct Layout {
    /// The setup files are written by the keyed upsert (else by the MERGE).
    keyed: bool,
    /// The table keeps no column statistics.
    no_stats: bool,
    /// The dataset is merge-on-read (deletion vectors instead of rewrites).
    mor: bool,
}

fn layout() -> impl Strategy<Value = Layout> {
    (any::<bool>(), any::<bool>(), any::<bool>()).prop_map(|(keyed, no_stats, mor)| Layout {
        keyed,
        no_stats,
        mor,
    })
}

fn source(dir: &Path, name: &str, bytes: Vec<u8>) -> SourceFile {
    let path = dir.join(name);
    std::fs::write(&path, &bytes).unwrap();
    SourceFile {
        location: deltaload_lake::local_source(path.to_str().unwrap()).unwrap(),
        bytes: bytes.into(),
        on_disk: None,
        refused: None,
        etag: None,
        version_id: None,
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// Sets up a lake from `setup` (loaded one file per load) in `layout`, copies
/// it, loads `batch` (one batch) with each engine into its own copy, and
/// checks both copies hold the same and report the same.
async fn differential(text: &str, layout: Layout, setup: Vec<Vec<u8>>, batch: Vec<Vec<u8>>) {
    let text = match layout.mor {
        true => text.replacen(
            "format = \"jsonl\"\n",
            "format = \"jsonl\"\nmerge_on_read = true\n",
            1,
        ),
        false => text.to_string(),
    };
    let spec = &Spec::parse(&text, "spec.toml").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let landing = dir.path().join("landing");
    std::fs::create_dir_all(&landing).unwrap();
    let root =
        |name: &str| -> LakeRoot { lake_url(dir.path().join(name).to_str().unwrap()).unwrap() };
    let mut lake = Lake::open_spec(&root("keyed"), spec).await.unwrap();
    if layout.no_stats {
        let table = deltalake::open_table(
            url::Url::from_directory_path(dir.path().join("keyed").join(&spec.datasets[0].name))
                .unwrap(),
        )
        .await
        .unwrap();
        let properties = HashMap::from([(
            "delta.dataSkippingNumIndexedCols".to_string(),
            "0".to_string(),
        )]);
        table
            .set_tbl_properties()
            .with_properties(properties)
            .await
            .unwrap();
        lake = Lake::open_spec(&root("keyed"), spec).await.unwrap();
    }
    lake.set_engine(if layout.keyed {
        Engine::Keyed
    } else {
        Engine::Merge
    });
    for (i, bytes) in setup.into_iter().enumerate() {
        let file = source(&landing, &format!("setup{i}.jsonl"), bytes);
        lake.load(&file, LoadOptions::default()).await.unwrap();
    }
    drop(lake);
    copy_dir(&dir.path().join("keyed"), &dir.path().join("merge"));
    let files: Vec<SourceFile> = batch
        .into_iter()
        .enumerate()
        .map(|(i, bytes)| source(&landing, &format!("batch{i}.jsonl"), bytes))
        .collect();
    let mut outcomes = Vec::new();
    let mut writes = Vec::new();
    for (name, engine) in [("keyed", Engine::Keyed), ("merge", Engine::Merge)] {
        let mut lake = Lake::open_spec(&root(name), spec).await.unwrap();
        lake.set_engine(engine);
        let got = lake
            .load_batch(files.clone(), LoadOptions::default())
            .await
            .unwrap();
        outcomes.push(format!("{got:?}"));
        writes.push(lake.writes_by_engine());
    }
    assert_eq!(
        writes[0].merge, 0,
        "the keyed upsert fell back to the MERGE"
    );
    assert_eq!(
        writes[0].keyed, writes[1].merge,
        "both engines wrote as often"
    );
    assert_eq!(
        strip_versions(&outcomes[0]),
        strip_versions(&outcomes[1]),
        "figures"
    );
    let keyed = lake_state_of(&root("keyed"), spec, "", "").await;
    let merge = lake_state_of(&root("merge"), spec, "", "").await;
    assert_eq!(keyed, merge, "tables");
    let d = spec.datasets[0].clone();
    let rows = deltaload_lake::table_rows(&root("keyed"), &TableName::Target(d.clone()), "*")
        .await
        .unwrap();
    let keys: std::collections::HashSet<Vec<String>> = rows
        .iter()
        .map(|r| d.keys.iter().map(|&k| r[k].clone()).collect())
        .collect();
    assert_eq!(keys.len(), rows.len(), "one row per key");
}

/// The outcomes' text without table versions (the engines may commit at
/// different versions: no commit when nothing changes).
fn strip_versions(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find("_version: ") {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        let end = rest.find([',', '}']).unwrap_or(rest.len());
        rest = &rest[end..];
    }
    out + rest
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    #[test]
    fn the_keyed_upsert_equals_the_merge_on_an_integer_key(
        layout in layout(),
        setup in prop::collection::vec(prop::collection::vec(item(), 1..8), 0..4),
        batch in prop::collection::vec(prop::collection::vec(item(), 0..10), 1..3),
    ) {
        let setup = setup.iter().map(|f| bytes(f)).collect();
        let batch = batch.iter().map(|f| bytes(f)).collect();
        deltaload_tests::runtime().block_on(differential(ITEMS, layout, setup, batch));
    }

    #[test]
    fn the_keyed_upsert_equals_the_merge_with_deletes_on_a_composite_key(
        layout in layout(),
        setup in prop::collection::vec(prop::collection::vec(inventory_change(), 1..8), 0..4),
        batch in prop::collection::vec(prop::collection::vec(inventory_change(), 0..10), 1..3),
    ) {
        let text = format!(
            "[[dataset]]\nname = \"inventory\"\nformat = \"jsonl\"\n{}",
            crate::deletes::INVENTORY
        );
        let setup = setup.iter().map(|f| file_bytes("jsonl", f)).collect();
        let batch = batch.iter().map(|f| file_bytes("jsonl", f)).collect();
        deltaload_tests::runtime().block_on(differential(&text, layout, setup, batch));
    }

    // ignore_null_updates: an update's null keeps the table's value, in the
    // keyed upsert's gather as in the MERGE's CASE.
    #[test]
    fn the_keyed_upsert_equals_the_merge_with_partial_updates(
        layout in layout(),
        setup in prop::collection::vec(prop::collection::vec(item(), 1..8), 0..4),
        batch in prop::collection::vec(prop::collection::vec(item(), 0..10), 1..3),
    ) {
        let text = ITEMS.replace(
            "update_columns = [\"version\", \"price\"]",
            "ignore_null_updates = true",
        );
        prop_assert!(text.contains("ignore_null_updates"));
        let setup = setup.iter().map(|f| bytes(f)).collect();
        let batch = batch.iter().map(|f| bytes(f)).collect();
        deltaload_tests::runtime().block_on(differential(&text, layout, setup, batch));
    }

    // With deletes too: an upsert after a delete of its key in its file
    // (null delete flag) sets its row whole in both engines.
    #[test]
    fn the_keyed_upsert_equals_the_merge_with_partial_updates_and_deletes(
        layout in layout(),
        setup in prop::collection::vec(prop::collection::vec(inventory_change(), 1..8), 0..4),
        batch in prop::collection::vec(prop::collection::vec(inventory_change(), 0..10), 1..3),
    ) {
        let text = format!(
            "[[dataset]]\nname = \"inventory\"\nformat = \"jsonl\"\nignore_null_updates = true\n{}",
            crate::deletes::INVENTORY
        );
        let setup = setup.iter().map(|f| file_bytes("jsonl", f)).collect();
        let batch = batch.iter().map(|f| file_bytes("jsonl", f)).collect();
        deltaload_tests::runtime().block_on(differential(&text, layout, setup, batch));
    }
}
