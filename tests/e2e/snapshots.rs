//! Snapshot feeds (`mode = "snapshot"`): daily snapshots loaded in any
//! order, repeated, leave the table as the newest snapshot of each scope
//! says; every load changes exactly what its figures count (new keys
//! inserted, changed rows updated, missing keys retired), and a snapshot
//! older than one loaded before it changes nothing.

use deltaload_core::Spec;
use deltaload_lake::{Lake, LoadOptions, LoadOutcome, SourceFile, TableName};
use proptest::prelude::*;
use std::collections::BTreeMap;

/// Subscribers whose snapshots are ordered by the key's date, with `extra`.
fn spec(extra: &str) -> Spec {
    let text = format!(
        r#"
[[dataset]]
name = "subscribers"
keys = ["id"]
mode = "snapshot"
{extra}

[[dataset.columns]]
name = "id"
type = "bigint"

[[dataset.columns]]
name = "region"
type = "string"

[[dataset.columns]]
name = "plan"
type = "string"

[[dataset.columns]]
name = "exported_on"
type = "date"
"#
    );
    Spec::parse(&text, "subscribers.toml").expect("subscribers spec")
}

/// The ways a snapshot dataset is declared: whole-table snapshots ordered
/// by the key's date, on copy-on-write; per-region snapshots on
/// merge-on-read with the change data feed; whole-table snapshots ordered
/// by a column.
fn variants() -> [(&'static str, Spec, Shape); 3] {
    let by_key = "snapshot_key_date = \"dt=%Y-%m-%d\"";
    [
        ("whole, key date", spec(by_key), Shape::default()),
        (
            "per region, merge-on-read, feed",
            spec(&format!("{by_key}\nsnapshot_scope = [\"region\"]\nmerge_on_read = true\nchange_data_feed = true")),
            Shape { scoped: true, dated: false },
        ),
        (
            "whole, column",
            spec("sequence_by = [\"exported_on\"]"),
            Shape { scoped: false, dated: true },
        ),
    ]
}

/// One day's rows: for each id, its plan when the snapshot holds it.
type Day = Vec<Option<&'static str>>;

/// An id's region: a key stays in its scope.
fn region(id: usize) -> &'static str {
    ["eu", "us"][id % 2]
}

/// How a dataset's snapshots are cut and written.
#[derive(Debug, Clone, Copy, Default)]
struct Shape {
    /// A file per region, not one for the whole table.
    scoped: bool,
    /// `exported_on` is the file's day in every row (else one date for all).
    dated: bool,
}

/// A snapshot file: its day, its region (`None`: the whole table) and its rows.
#[derive(Debug, Clone)]
struct Export {
    day: usize,
    region: Option<&'static str>,
    rows: Vec<(usize, &'static str)>,
    dated: bool,
}

impl Export {
    fn location(&self) -> String {
        let part = self.region.unwrap_or("all");
        format!("/landing/dt=2026-12-{:02}/{part}.csv", self.day + 1)
    }

    /// The `exported_on` of its rows.
    fn exported_on(&self) -> String {
        format!("2026-12-{:02}", if self.dated { self.day + 1 } else { 1 })
    }

    fn csv(&self) -> Vec<u8> {
        let mut text = String::from("id,region,plan,exported_on\n");
        for (id, plan) in &self.rows {
            let on = self.exported_on();
            text.push_str(&format!("{id},{},{plan},{on}\n", region(*id)));
        }
        text.into_bytes()
    }
}

/// The files of `days`: one per day, or one per day and region holding rows.
fn exports(days: &[Day], shape: Shape) -> Vec<Export> {
    let mut out = Vec::new();
    for (day, plans) in days.iter().enumerate() {
        let rows = |r: Option<&str>| -> Vec<(usize, &'static str)> {
            (plans.iter().enumerate())
                .filter_map(|(id, p)| p.map(|p| (id, p)))
                .filter(|(id, _)| r.is_none_or(|r| region(*id) == r))
                .collect()
        };
        let dated = shape.dated;
        match shape.scoped {
            false => out.push(Export {
                day,
                region: None,
                rows: rows(None),
                dated,
            }),
            true => {
                for r in ["eu", "us"] {
                    let rows = rows(Some(r));
                    if !rows.is_empty() {
                        out.push(Export {
                            day,
                            region: Some(r),
                            rows,
                            dated,
                        });
                    }
                }
            }
        }
    }
    out
}

/// The table the newest snapshot of each scope among `loaded` makes.
fn model(loaded: &[&Export]) -> Vec<Vec<String>> {
    let mut newest: BTreeMap<Option<&str>, &Export> = BTreeMap::new();
    for e in loaded {
        if newest.get(&e.region).is_none_or(|n| n.day < e.day) {
            newest.insert(e.region, e);
        }
    }
    let mut rows: Vec<Vec<String>> = (newest.values())
        .flat_map(|e| {
            e.rows.iter().map(|(id, plan)| {
                vec![
                    id.to_string(),
                    region(*id).to_string(),
                    plan.to_string(),
                    e.exported_on(),
                ]
            })
        })
        .collect();
    rows.sort_by_key(|r| r[0].parse::<u64>().unwrap_or(0));
    rows
}

const COLUMNS: &str = "id, region, plan, exported_on";

/// What a load changed, from the table before and after: (inserted,
/// updated, removed) keys.
fn changed(before: &[Vec<String>], after: &[Vec<String>]) -> (u64, u64, u64) {
    let by_key = |rows: &[Vec<String>]| -> BTreeMap<String, Vec<String>> {
        rows.iter().map(|r| (r[0].clone(), r.clone())).collect()
    };
    let (old, new) = (by_key(before), by_key(after));
    let inserted = new.keys().filter(|k| !old.contains_key(*k)).count() as u64;
    let removed = old.keys().filter(|k| !new.contains_key(*k)).count() as u64;
    let updated = (new.iter())
        .filter(|(k, r)| old.get(*k).is_some_and(|o| o != *r))
        .count() as u64;
    (inserted, updated, removed)
}

/// Days of subscribers 0..8, each present or not, of plan a or b.
fn days() -> impl Strategy<Value = Vec<Day>> {
    let plan = prop::option::weighted(0.7, prop::sample::select(vec!["a", "b"]));
    prop::collection::vec(prop::collection::vec(plan, 8), 1..5)
}

/// What loading `order` (indexes into `files`) one at a time did: the
/// retired rows counted in all.
async fn follow(spec: &Spec, files: &[Export], order: &[usize]) -> Result<u64, TestCaseError> {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = deltaload_lake::lake_url(dir.path().to_str().expect("utf-8")).expect("lake url");
    let mut lake = Lake::open_spec(&root, spec).await.expect("lake opens");
    let table = TableName::Target(spec.datasets[0].clone());
    let rows = || deltaload_lake::table_rows(&root, &table, COLUMNS);
    let mut loaded: Vec<&Export> = Vec::new();
    let mut retired = 0;
    let mut before = rows().await.expect("rows");
    for &i in order {
        let e = &files[i];
        let file = SourceFile::in_memory(e.location(), e.csv());
        let outcome = lake.load(&file, LoadOptions::default()).await;
        let outcome =
            outcome.map_err(|err| TestCaseError::fail(format!("{}: {err}", e.location())))?;
        let after = rows().await.expect("rows");
        let superseded = loaded.iter().any(|l| l.region == e.region && l.day > e.day);
        loaded.push(e);
        match outcome {
            LoadOutcome::Loaded(l) => {
                let f = l.figures;
                let counted = (f.inserted, f.updated, f.retired);
                prop_assert_eq!(counted, changed(&before, &after), "{}", e.location());
                prop_assert_eq!(f.deleted, 0);
                if superseded {
                    prop_assert_eq!(&after, &before, "an older snapshot changed the table");
                    prop_assert_eq!(f.stale, f.loaded, "an older snapshot's rows are all stale");
                }
                retired += f.retired;
            }
            LoadOutcome::Skipped { .. } => prop_assert_eq!(&after, &before),
            LoadOutcome::Refused(m) => prop_assert!(false, "refused: {}", m.problem),
        }
        before = after;
    }
    prop_assert_eq!(before, model(&loaded), "the table is the newest snapshots'");
    Ok(retired)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 10, ..ProptestConfig::default() })]
    #[test]
    fn any_order_of_snapshots_leaves_the_newest_of_each_scope(
        days in days(),
        shuffle in any::<prop::sample::Index>(),
        repeat in any::<prop::sample::Index>(),
    ) {
        let runtime = deltaload_tests::runtime();
        for (name, spec, shape) in variants() {
            let files = exports(&days, shape);
            if files.is_empty() {
                continue;
            }
            let mut order: Vec<usize> = (0..files.len()).collect();
            let n = order.len();
            // A shuffle by rotation and swap, and one file delivered twice.
            order.rotate_left(shuffle.index(n));
            order.swap(0, repeat.index(n));
            order.push(order[repeat.index(n)]);
            let got = runtime.block_on(follow(&spec, &files, &order));
            got.map_err(|e| TestCaseError::fail(format!("{name}: {e}")))?;
        }
    }
}

/// A worked case: day 2 retires subscriber 3 and changes 2's plan, day 1
/// loaded after it changes nothing, and the figures and table say so.
#[tokio::test(flavor = "multi_thread")]
async fn a_newer_snapshot_retires_missing_keys_and_an_older_one_changes_nothing() {
    let day = |d: usize, rows: &[(usize, &'static str)]| Export {
        day: d,
        region: None,
        rows: rows.to_vec(),
        dated: false,
    };
    let files = [
        day(0, &[(1, "a"), (2, "a"), (3, "a")]),
        day(1, &[(1, "a"), (2, "b"), (4, "a")]),
    ];
    let spec = spec("snapshot_key_date = \"dt=%Y-%m-%d\"\nmerge_on_read = true");
    let retired = follow(&spec, &files, &[1, 0]).await.expect("loads");
    assert_eq!(retired, 0, "day 1 after day 2 retires nothing");
    let retired = follow(&spec, &files, &[0, 1]).await.expect("loads");
    assert_eq!(retired, 1, "day 2 retires subscriber 3");
    // Day 2 changes no row, yet its mark is committed: day 1 corrected
    // (a new version of its object) then changes nothing.
    let files = [
        day(0, &[(1, "a"), (2, "a")]),
        day(1, &[(1, "a"), (2, "a")]),
        day(0, &[(1, "b")]),
    ];
    let retired = follow(&spec, &files, &[0, 1, 2]).await.expect("loads");
    assert_eq!(retired, 0, "the corrected day 1 is older than day 2");
}

const EXAMPLE_SPEC: &str = include_str!("../../examples/snapshots/spec.toml");
const EXAMPLE: [&str; 3] = [
    "dt=2026-12-01/canada.csv",
    "dt=2026-12-01/france.csv",
    "dt=2026-12-02/canada.csv",
];

/// The worked example of docs/datasets.md, newest first and in date order:
/// the lines the docs quote, and the same table both ways.
#[test]
fn the_worked_example_loads_to_the_same_table_in_either_order() {
    let mut tables = Vec::new();
    for order in [[2, 0, 1], [0, 1, 2]] {
        let sb = crate::example_sandbox(EXAMPLE_SPEC, ("snapshots", "exports"), &EXAMPLE);
        let lines: Vec<String> = (order.iter())
            .map(|&i| crate::with_spec_ok(&sb, &["load", &format!("raw/exports/{}", EXAMPLE[i])]))
            .collect();
        let fig = |line: &str| {
            line.split_once(": ")
                .map(|(_, f)| f.to_string())
                .unwrap_or_default()
        };
        let figures: Vec<String> = lines.iter().map(|l| fig(l.trim())).collect();
        let expected = match order[0] {
            2 => [
                "0 rejected, 0 updated, 3 added, 0 unchanged, 0 retired, table version 2",
                "0 rejected, 0 updated, 0 added, 3 unchanged, 0 retired, table version 2",
                "0 rejected, 0 updated, 2 added, 0 unchanged, 0 retired, table version 3",
            ],
            _ => [
                "0 rejected, 0 updated, 3 added, 0 unchanged, 0 retired, table version 2",
                "0 rejected, 0 updated, 2 added, 0 unchanged, 0 retired, table version 3",
                "0 rejected, 1 updated, 1 added, 1 unchanged, 1 retired, table version 4",
            ],
        };
        assert_eq!(figures, expected, "order {order:?}");
        let show = crate::with_spec_ok(&sb, &["show", "subscribers", "--format", "csv"]);
        let declared = |line: &str| line.split(',').take(4).collect::<Vec<_>>().join(",");
        tables.push(show.lines().map(declared).collect::<Vec<_>>());
    }
    assert_eq!(tables[0], tables[1]);
    assert_eq!(
        tables[0],
        [
            "user_id,country,plan,monthly_revenue",
            "2,Canada,Premium,15.00",
            "5,Canada,Standard,12.00",
            "7,France,Basic,10.00",
            "8,France,Premium,15.00",
            "9,Canada,Basic,10.00",
        ]
    );
    let sb = crate::example_sandbox(EXAMPLE_SPEC, ("snapshots", "exports"), &[]);
    let check = crate::with_spec_ok(&sb, &["spec", "check", "spec.toml"]);
    assert!(
        check.contains("each file is a snapshot of its (country) values"),
        "{check}"
    );
}

/// A snapshot whose key holds no date cannot be ordered: it is refused,
/// with the reason, and changes nothing.
#[tokio::test(flavor = "multi_thread")]
async fn a_snapshot_without_a_date_in_its_key_is_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = deltaload_lake::lake_url(dir.path().to_str().expect("utf-8")).expect("lake url");
    let spec = spec("snapshot_key_date = \"dt=%Y-%m-%d\"");
    let mut lake = Lake::open_spec(&root, &spec).await.expect("lake opens");
    let rows = "id,region,plan,exported_on\n1,eu,a,2026-12-01\n";
    let file = SourceFile::in_memory("/landing/latest/all.csv".into(), rows.into());
    match lake
        .load(&file, LoadOptions::default())
        .await
        .expect("load")
    {
        LoadOutcome::Refused(m) => assert!(m.problem.contains("holds no date"), "{}", m.problem),
        other => panic!("not refused: {other:?}"),
    }
    let table = TableName::Target(spec.datasets[0].clone());
    let held = deltaload_lake::table_rows(&root, &table, COLUMNS).await;
    assert_eq!(held.expect("rows"), Vec::<Vec<String>>::new());
}

/// Reads the last commit's change data feed with Python deltalake:
/// (change type, id, plan), sorted.
const LAST_FEED: &str = r#"
import json, os, sys
import pyarrow as pa
from deltalake import DeltaTable
rows = pa.table(DeltaTable(sys.argv[1]).load_cdf(starting_version=0).read_all()).to_pylist()
last = max(r["_commit_version"] for r in rows)
print(json.dumps(sorted([r["_change_type"], r["id"], r["plan"]] for r in rows if r["_commit_version"] == last)))
sys.stdout.flush()
os._exit(0)
"#;

/// A merge-on-read table's change data feed holds a snapshot's changes:
/// a retired row is a `delete`, an equal row nothing.
#[tokio::test(flavor = "multi_thread")]
async fn a_snapshots_feed_holds_its_retired_rows_as_deletes() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = deltaload_lake::lake_url(dir.path().to_str().expect("utf-8")).expect("lake url");
    let options =
        "snapshot_key_date = \"dt=%Y-%m-%d\"\nmerge_on_read = true\nchange_data_feed = true";
    let spec = spec(options);
    let mut lake = Lake::open_spec(&root, &spec).await.expect("lake opens");
    let day = |d: usize, rows: &[(usize, &'static str)]| Export {
        day: d,
        region: None,
        rows: rows.to_vec(),
        dated: false,
    };
    for e in [
        day(0, &[(1, "a"), (2, "a"), (3, "a")]),
        day(1, &[(1, "a"), (2, "b"), (4, "a")]),
    ] {
        let file = SourceFile::in_memory(e.location(), e.csv());
        lake.load(&file, LoadOptions::default())
            .await
            .expect("load");
    }
    let table = dir.path().join("subscribers");
    let out = crate::other_engines::run_python(LAST_FEED, &[table.to_str().expect("utf-8")]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        r#"[["delete", 3, "a"], ["insert", 4, "a"], ["update_postimage", 2, "b"], ["update_preimage", 2, "a"]]"#
    );
}

/// A snapshot with a rejected record retires nothing: the rejected key
/// cannot be told from a key the snapshot no longer holds.
#[tokio::test(flavor = "multi_thread")]
async fn a_snapshot_with_rejects_retires_nothing() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = deltaload_lake::lake_url(dir.path().to_str().expect("utf-8")).expect("lake url");
    let spec = spec("snapshot_key_date = \"dt=%Y-%m-%d\"");
    let mut lake = Lake::open_spec(&root, &spec).await.expect("lake opens");
    let header = "id,region,plan,exported_on\n";
    let days = [
        (
            "/landing/dt=2026-12-01/all.csv",
            "1,eu,a,2026-12-01\n2,us,a,2026-12-01\n3,eu,a,2026-12-01\n",
        ),
        (
            "/landing/dt=2026-12-02/all.csv",
            "1,eu,b,2026-12-01\n3,eu,a,not a date\n",
        ),
    ];
    let mut figures = Vec::new();
    for (location, rows) in days {
        let file = SourceFile::in_memory(location.into(), format!("{header}{rows}").into());
        match lake
            .load(&file, LoadOptions::default())
            .await
            .expect("load")
        {
            LoadOutcome::Loaded(l) => figures.push(l.figures),
            other => panic!("{location}: {other:?}"),
        }
    }
    let f = figures[1];
    assert_eq!((f.rejected, f.updated, f.retired), (1, 1, 0), "{f:?}");
    let table = TableName::Target(spec.datasets[0].clone());
    let held = deltaload_lake::table_rows(&root, &table, "id, plan")
        .await
        .expect("rows");
    assert_eq!(
        held,
        [["1", "b"], ["2", "a"], ["3", "a"]].map(|r| r.map(String::from).to_vec())
    );
}
