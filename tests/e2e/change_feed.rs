//! The change data feed (`change_data_feed = true`): after every load, the
//! feed that Python `deltalake` (`load_cdf`) and polars-deltalake
//! (`read_cdf`) read holds exactly what the load changed (the table before
//! and after it: inserts, deletes, updates as pre- and post-images), and as
//! many rows of each kind as the load's figures count, on copy-on-write and
//! merge-on-read tables and with partial updates; the keyed upsert's feed
//! equals the one delta-rs's MERGE writes.

use crate::other_engines::run_python;
use crate::partial_updates::{bytes, versioned, Item};
use deltaload_core::Spec;
use deltaload_lake::{Engine, Lake, LoadOptions, LoadOutcome, MemoryBudget, SourceFile, TableName};
use proptest::prelude::*;
use std::collections::BTreeMap;

/// Items with deletes; `extra` goes into the dataset's table.
fn spec(extra: &str) -> Spec {
    let text = crate::upsert_engines::ITEMS.replace(
        "update_columns = [\"version\", \"price\"]",
        &format!(
            "change_data_feed = true\ndelete_when = {{ column = \"op\", in = [\"d\"] }}\n{extra}"
        ),
    );
    Spec::parse(&text, "items.toml").expect("items spec")
}

/// The three ways a table is written: copy-on-write, merge-on-read, and
/// merge-on-read with partial updates (an update's row read whole).
fn variants() -> [(&'static str, Spec); 3] {
    [
        ("copy-on-write", spec("")),
        ("merge-on-read", spec("merge_on_read = true")),
        (
            "partial updates",
            spec("merge_on_read = true\nignore_null_updates = true"),
        ),
    ]
}

const COLUMNS: &str = "id, version, price, note, source_file";

/// A change of the feed: its type and the row's columns ([`COLUMNS`]) as text.
type Change = (String, Vec<String>);

/// What a load changed: the rows of `before` and `after` that differ, as
/// a change data feed holds them, sorted.
fn diff(before: &[Vec<String>], after: &[Vec<String>]) -> Vec<Change> {
    let by_key = |rows: &[Vec<String>]| -> BTreeMap<String, Vec<String>> {
        rows.iter().map(|r| (r[0].clone(), r.clone())).collect()
    };
    let (old, new) = (by_key(before), by_key(after));
    let mut changes = Vec::new();
    for (key, row) in &old {
        match new.get(key) {
            None => changes.push(("delete".to_string(), row.clone())),
            Some(now) if now != row => {
                changes.push(("update_preimage".to_string(), row.clone()));
                changes.push(("update_postimage".to_string(), now.clone()));
            }
            Some(_) => {}
        }
    }
    for (key, row) in &new {
        if !old.contains_key(key) {
            changes.push(("insert".to_string(), row.clone()));
        }
    }
    changes.sort();
    changes
}

/// Reads the table's whole feed with Python deltalake and polars-deltalake,
/// each row as [commit version, change type, columns as text].
const READ_FEED: &str = r#"
import json, os, sys
import pyarrow as pa
import polars_deltalake
from deltalake import DeltaTable
path = sys.argv[1]
columns = ["id", "version", "price", "note", "source_file"]
def text(v):
    return "NULL" if v is None else str(v)
def rows(records):
    return sorted([r["_commit_version"], r["_change_type"]] + [text(r[c]) for c in columns] for r in records)
by_deltalake = rows(pa.table(DeltaTable(path).load_cdf(starting_version=0).read_all()).to_pylist())
by_polars = rows(polars_deltalake.read_cdf(path, start_version=0).to_dicts())
print(json.dumps({"deltalake": by_deltalake, "polars": by_polars}))
sys.stdout.flush()
os._exit(0)
"#;

/// The table's feed per commit that holds changes, as both readers read it
/// (asserted equal).
fn feed(table: &std::path::Path) -> Vec<Vec<Change>> {
    let out = run_python(READ_FEED, &[table.to_str().expect("utf-8 path")]);
    let read: serde_json::Value = serde_json::from_slice(&out.stdout).expect("the feed as JSON");
    assert_eq!(read["deltalake"], read["polars"], "the two readers differ");
    let mut commits: BTreeMap<u64, Vec<Change>> = BTreeMap::new();
    for row in read["deltalake"].as_array().expect("rows") {
        let row = row.as_array().expect("a row");
        let text = |v: &serde_json::Value| v.as_str().expect("text").to_string();
        let version = row[0].as_u64().expect("a commit version");
        let change = (text(&row[1]), row[2..].iter().map(text).collect());
        commits.entry(version).or_default().push(change);
    }
    (commits.into_values())
        .map(|mut c| {
            c.sort();
            c
        })
        .collect()
}

/// What loading `files`, `together` at a time, with `engine` did: per
/// round that changed the table, its changes (from the table before and
/// after) and the figures' (inserted, updated, deleted); then the feed.
pub(crate) struct Followed {
    changes: Vec<Vec<Change>>,
    pub(crate) figures: Vec<(u64, u64, u64)>,
    pub(crate) feed: Vec<Vec<Change>>,
    pub(crate) merges: u64,
    /// Deletes of unknown keys left out of a MERGE.
    pub(crate) left_out: u64,
    /// Files under `_change_data/`.
    cdc_files: usize,
    /// Slices of keys upserted one at a time.
    slices: u64,
}

pub(crate) async fn follow(
    spec: &Spec,
    engine: Engine,
    files: &[Vec<Item>],
    together: usize,
) -> Followed {
    follow_within(spec, engine, files, together, MemoryBudget::unlimited()).await
}

/// [`follow`], the lake's memory budget `budget`.
async fn follow_within(
    spec: &Spec,
    engine: Engine,
    files: &[Vec<Item>],
    together: usize,
    budget: MemoryBudget,
) -> Followed {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = deltaload_lake::lake_url(dir.path().to_str().expect("utf-8")).expect("lake url");
    let mut lake = Lake::open_spec(&root, spec).await.expect("lake opens");
    lake.set_engine(engine);
    lake.set_memory_budget(budget);
    let table = TableName::Target(spec.datasets[0].clone());
    let rows = || deltaload_lake::table_rows(&root, &table, COLUMNS);
    let sources: Vec<SourceFile> = (files.iter().enumerate())
        .map(|(i, f)| SourceFile::in_memory(format!("/landing/f{i}.jsonl"), bytes(f)))
        .collect();
    let (mut changes, mut figures) = (Vec::new(), Vec::new());
    let mut before = rows().await.expect("rows");
    for round in sources.chunks(together) {
        let outcomes = (lake.load_batch(round.to_vec(), LoadOptions::default()))
            .await
            .expect("load");
        let after = rows().await.expect("rows");
        let changed = diff(&before, &after);
        if !changed.is_empty() {
            changes.push(changed);
            figures.push(summed(&outcomes));
        }
        before = after;
    }
    let (merges, slices) = (lake.writes_by_engine().merge, lake.spills().slices);
    let left_out = lake.writes_by_engine().unknown_deletes_left_out;
    let table = dir.path().join("items");
    let cdc_files = std::fs::read_dir(table.join("_change_data")).map_or(0, |d| d.count());
    Followed {
        changes,
        figures,
        feed: feed(&table),
        merges,
        left_out,
        cdc_files,
        slices,
    }
}

/// The round's (inserted, updated, deleted), summed over its files.
fn summed(outcomes: &[LoadOutcome]) -> (u64, u64, u64) {
    let mut sum = (0, 0, 0);
    for outcome in outcomes {
        if let LoadOutcome::Loaded(l) = outcome {
            sum.0 += l.figures.inserted;
            sum.1 += l.figures.updated;
            sum.2 += l.figures.deleted;
        }
    }
    sum
}

/// The (inserted, updated, deleted) a commit's feed holds.
fn counted(feed: &[Change]) -> (u64, u64, u64) {
    let n = |t: &str| feed.iter().filter(|c| c.0 == t).count() as u64;
    (n("insert"), n("update_postimage"), n("delete"))
}

/// Files of changes to ids 0..4, versions unique, in any load order.
fn files() -> impl Strategy<Value = Vec<Vec<Item>>> {
    versioned().prop_shuffle()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 8, ..ProptestConfig::default() })]
    #[test]
    fn every_commits_feed_holds_what_its_load_changed(files in files(), together in 1usize..3) {
        let runtime = deltaload_tests::runtime();
        for (name, spec) in variants() {
            let got = runtime.block_on(follow(&spec, Engine::Keyed, &files, together));
            prop_assert_eq!(got.merges, 0, "{}: the keyed upsert fell back to the MERGE", name);
            prop_assert_eq!(&got.feed, &got.changes, "{}", name);
            // A file's figures are those of loading it alone: a round of
            // several files commits their net change (a key one inserts
            // and the next updates is one insert in the feed).
            if together == 1 {
                let counts: Vec<_> = got.feed.iter().map(|c| counted(c)).collect();
                prop_assert_eq!(counts, got.figures, "{}: the feed against the figures", name);
            }
        }
    }
}

pub(crate) fn change(id: i64, version: i32, price: Option<i32>, delete: bool) -> Item {
    Item {
        id,
        version,
        price,
        note: Some("n"),
        delete,
    }
}

/// A worked load: key 2 updated, 3 deleted, 4's older change stale, 6
/// inserted; each engine's feed is the same, and the keyed upsert's is
/// one `_change_data` file.
#[tokio::test(flavor = "multi_thread")]
async fn a_loads_feed_is_its_changes_and_the_merge_writes_the_same() {
    let first: Vec<Item> = (1..=5).map(|id| change(id, 10, Some(1), false)).collect();
    let second = vec![
        change(2, 20, Some(2), false),
        change(3, 21, None, true),
        change(4, 5, Some(0), false),
        change(6, 22, Some(6), false),
    ];
    let files = [first, second];
    let plain = spec("");
    let keyed = follow(&plain, Engine::Keyed, &files, 1).await;
    let row = |id: &str, v: &str, p: &str, f: &str| -> Vec<String> {
        [id, v, p, "n", &format!("/landing/{f}.jsonl")]
            .map(str::to_string)
            .to_vec()
    };
    let expected = vec![
        ("delete".to_string(), row("3", "10", "1", "f0")),
        ("insert".to_string(), row("6", "22", "6", "f1")),
        ("update_postimage".to_string(), row("2", "20", "2", "f1")),
        ("update_preimage".to_string(), row("2", "10", "1", "f0")),
    ];
    assert_eq!(keyed.feed.len(), 2, "{:?}", keyed.feed);
    assert_eq!(keyed.feed[1], expected);
    assert_eq!(keyed.figures[1], (1, 1, 1));
    assert_eq!(keyed.merges, 0);
    assert_eq!(keyed.cdc_files, 2, "a feed file per load");
    let merged = follow(&plain, Engine::Merge, &files, 1).await;
    assert!(merged.merges > 0);
    assert_eq!(
        merged.feed, keyed.feed,
        "delta-rs's MERGE writes another feed"
    );
    for (name, spec) in variants() {
        let got = follow(&spec, Engine::Keyed, &files, 1).await;
        assert_eq!(got.feed, keyed.feed, "{name}");
    }
}

const EXAMPLE_SPEC: &str = include_str!("../../examples/change_feed/spec.toml");
const EXAMPLE: [&str; 2] = ["2026-12-01.csv", "2026-12-02.csv"];

/// The example's feed as Python deltalake reads it: a line per row, in
/// commit order. A second argument is an S3 endpoint (LocalStack's, with
/// its test credentials) to read the table through.
pub(crate) const EXAMPLE_FEED: &str = r#"
import os, sys
import pyarrow as pa
from deltalake import DeltaTable
options = None
if len(sys.argv) > 2:
    options = {"AWS_ENDPOINT_URL": sys.argv[2], "AWS_ALLOW_HTTP": "true", "AWS_REGION": "us-east-1",
               "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test"}
table = DeltaTable(sys.argv[1], storage_options=options)
rows = pa.table(table.load_cdf(starting_version=0).read_all()).to_pylist()
for r in sorted(rows, key=lambda r: (r["_commit_version"], r["_change_type"], r["sku"])):
    print(r["_change_type"], r["sku"], r["price"])
sys.stdout.flush()
os._exit(0)
"#;

/// What [`EXAMPLE_FEED`] prints once both example files are loaded in order.
pub(crate) const EXAMPLE_FEED_ROWS: &str =
    "insert A-100 19.90\ninsert B-200 5.00\ninsert C-300 42.00\n\
     delete C-300 42.00\ninsert D-400 8.50\n\
     update_postimage A-100 17.90\nupdate_preimage A-100 19.90\n";

/// The worked example of docs/datasets.md: the second file updates A-100,
/// deletes C-300, inserts D-400 and brings a stale price of B-200; the
/// feed holds the first file's inserts, then those three changes.
#[test]
fn the_worked_example_feeds_what_each_load_changed() {
    let sb = crate::example_sandbox(EXAMPLE_SPEC, ("change_feed", "prices"), &EXAMPLE);
    for name in EXAMPLE {
        crate::with_spec_ok(&sb, &["load", &format!("raw/prices/{name}")]);
    }
    let table = sb.lake_dir().join("prices");
    let out = run_python(EXAMPLE_FEED, &[table.to_str().unwrap()]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), EXAMPLE_FEED_ROWS);
    let check = crate::with_spec_ok(&sb, &["spec", "check", "spec.toml"]);
    assert!(check.contains("change data feed: every commit"), "{check}");
}

/// A file beyond the memory budget, read in pieces and upserted a slice of
/// keys at a time, writes the feed a load in one piece writes (a feed file
/// per slice). Its dataset has no deletes: a file with deletes is read whole.
#[tokio::test(flavor = "multi_thread")]
async fn a_load_by_slices_feeds_what_a_load_in_one_piece_feeds() {
    let first: Vec<Item> = (0..300).map(|id| change(id, 1, Some(1), false)).collect();
    let second: Vec<Item> = (0..600)
        .step_by(2)
        .map(|id| change(id, 2, Some(2), false))
        .collect();
    let files = [first, second];
    let without_deletes = |extra: &str| {
        let text = crate::upsert_engines::ITEMS.replace(
            "update_columns = [\"version\", \"price\"]",
            &format!("change_data_feed = true\n{extra}"),
        );
        Spec::parse(&text, "items.toml").expect("items spec")
    };
    let specs = [
        ("copy-on-write", without_deletes("")),
        ("merge-on-read", without_deletes("merge_on_read = true")),
    ];
    for (name, spec) in specs {
        let whole = follow(&spec, Engine::Keyed, &files, 1).await;
        assert_eq!(whole.slices, 0);
        let spill = tempfile::tempdir().expect("spill dir");
        let tiny = MemoryBudget::of(16 << 10, spill.path().to_path_buf());
        let sliced = follow_within(&spec, Engine::Keyed, &files, 1, tiny).await;
        assert!(sliced.slices > 1, "{name}: {} slices", sliced.slices);
        assert_eq!(sliced.feed, whole.feed, "{name}");
        assert_eq!(sliced.feed, sliced.changes, "{name}");
        let counts: Vec<_> = sliced.feed.iter().map(|c| counted(c)).collect();
        assert_eq!(counts, sliced.figures, "{name}");
    }
}
