//! Snapshot feeds, case by case: worked loads, the example through the
//! CLI, the change data feed, and files a snapshot load refuses or keeps
//! from retiring ([`crate::snapshots`] holds the property test).

use crate::snapshots::{follow, fresh, spec, Export, COLUMNS};
use deltaload_lake::{Lake, LoadOptions, LoadOutcome, SourceFile, TableName};

/// A worked case: day 2 retires subscriber 3 and changes 2's plan, day 1
/// loaded after it changes nothing, and the figures and table say so.
#[tokio::test(flavor = "multi_thread")]
async fn a_newer_snapshot_retires_missing_keys_and_an_older_one_changes_nothing() {
    let day = Export::whole;
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

/// The example's table (its declared columns), whatever order its exports
/// were loaded in.
pub(crate) const EXAMPLE_TABLE: [&str; 5] = [
    "2,Canada,Premium,15.00",
    "5,Canada,Standard,12.00",
    "7,France,Basic,10.00",
    "8,France,Premium,15.00",
    "9,Canada,Basic,10.00",
];

/// The worked example of docs/datasets.md, newest first and in date order:
/// the lines the docs quote, and the same table both ways.
#[test]
fn the_worked_example_loads_to_the_same_table_in_either_order() {
    let mut tables = Vec::new();
    for order in [[2, 0, 1], [0, 1, 2]] {
        let sb = crate::example_sandbox(EXAMPLE_SPEC, ("snapshots", "exports"), &EXAMPLE);
        let outs: Vec<_> = (order.iter())
            .map(|&i| crate::with_spec(&sb, &["load", &format!("raw/exports/{}", EXAMPLE[i])]))
            .collect();
        assert!(outs.iter().all(|o| o.status.success()), "{outs:?}");
        let lines: Vec<String> = outs.iter().map(deltaload_tests::stdout).collect();
        // The older export's WARN names both sequences as dates.
        let warned = deltaload_tests::stderr(&outs[1]);
        assert_eq!(
            (order[0] == 2),
            warned.contains("sequence=2026-12-01 newest=2026-12-02"),
            "{warned}"
        );
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
    let header = "user_id,country,plan,monthly_revenue";
    let expected: Vec<&str> = [header].into_iter().chain(EXAMPLE_TABLE).collect();
    assert_eq!(tables[0], expected);
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
    let spec = spec("snapshot_key_date = \"dt=%Y-%m-%d\"");
    let (_dir, root, mut lake) = fresh(&spec).await;
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

/// A key's hour without minutes (`hr=%H`) orders snapshots by the hour:
/// the export of 09:00 loaded after the one of 10:00 changes nothing. A key
/// in which the format reads two different dates cannot be ordered: it is
/// refused, naming both.
#[tokio::test(flavor = "multi_thread")]
async fn snapshots_are_ordered_by_the_hour_and_a_key_of_two_dates_is_refused() {
    let file = |key: &str, rows: &str| {
        let text = format!("id,region,plan,exported_on\n{rows}");
        SourceFile::in_memory(key.into(), text.into())
    };
    let spec = spec("snapshot_key_date = \"dt=%Y-%m-%d/hr=%H\"");
    let (_dir, root, mut lake) = fresh(&spec).await;
    let ten = file("/in/dt=2026-12-01/hr=10/all.csv", "1,eu,ten,2026-12-01\n");
    let nine = "1,eu,nine,2026-12-01\n2,eu,b,2026-12-01\n";
    let nine = file("/in/dt=2026-12-01/hr=09/all.csv", nine);
    for f in [&ten, &nine] {
        let outcome = lake.load(f, LoadOptions::default()).await.expect("load");
        assert!(matches!(outcome, LoadOutcome::Loaded(_)), "{outcome:?}");
    }
    let table = TableName::Target(spec.datasets[0].clone());
    let held = deltaload_lake::table_rows(&root, &table, COLUMNS).await;
    let plans: Vec<String> = held
        .expect("rows")
        .into_iter()
        .map(|r| r[2].clone())
        .collect();
    assert_eq!(plans, ["ten"], "the older hour changed the table");

    let spec = crate::snapshots::spec("snapshot_key_date = \"_%Y%m%d\"");
    let (_dir, _root, mut lake) = fresh(&spec).await;
    let two = file("/in/run_20250101/subs_20261201.csv", "1,eu,a,2026-12-01\n");
    match lake.load(&two, LoadOptions::default()).await.expect("load") {
        LoadOutcome::Refused(m) => {
            let said = [
                "2 different dates",
                "2025-01-01T00:00:00Z",
                "2026-12-01T00:00:00Z",
            ];
            assert!(said.iter().all(|s| m.problem.contains(s)), "{}", m.problem);
        }
        other => panic!("not refused: {other:?}"),
    }
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
    let options =
        "snapshot_key_date = \"dt=%Y-%m-%d\"\nmerge_on_read = true\nchange_data_feed = true";
    let spec = spec(options);
    let (dir, _root, mut lake) = fresh(&spec).await;
    let day = Export::whole;
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
    let spec = spec("snapshot_key_date = \"dt=%Y-%m-%d\"");
    let (_dir, root, mut lake) = fresh(&spec).await;
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

/// delta-rs's MERGE cannot load snapshots: `--engine merge` is refused
/// before a file is claimed (it had failed the load, left the file
/// unfinished and advised running the same command again, which failed).
#[test]
fn the_merge_engine_is_refused_for_snapshots_before_a_file_is_claimed() {
    let sb = crate::example_sandbox(EXAMPLE_SPEC, ("snapshots", "exports"), &EXAMPLE);
    let file = format!("raw/exports/{}", EXAMPLE[0]);
    let out = crate::with_spec(&sb, &["load", "--engine", "merge", &file]);
    assert_eq!(out.status.code(), Some(1));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains(
            "dataset subscribers is a snapshot dataset, which only deltaload's keyed upsert loads"
        ),
        "{said}"
    );
    let status = crate::with_spec_ok(&sb, &["status"]);
    assert!(status.contains("unfinished loads: none"), "{status}");
    crate::with_spec_ok(&sb, &["load", &file]);
}

/// A spec whose snapshots are scoped, or ordered, otherwise than the
/// table's were is refused when the lake opens, before a file is claimed:
/// a region's snapshot of an earlier day would otherwise undo the whole
/// table's newer one. (The order's refusal by the marks is unit-tested in
/// `marks.rs`; here a changed order is refused first for its nullability.)
#[tokio::test(flavor = "multi_thread")]
async fn a_changed_scope_or_order_stops_before_a_file_is_claimed() {
    let by_day = "sequence_by = [\"exported_on\"]";
    let (_dir, root, mut lake) = fresh(&spec(by_day)).await;
    let header = "id,region,plan,exported_on\n";
    let whole = SourceFile::in_memory(
        "/landing/all-2.csv".into(),
        format!("{header}1,eu,a,2026-12-02\n2,us,a,2026-12-02\n").into(),
    );
    let loaded = lake.load(&whole, LoadOptions::default()).await;
    assert!(matches!(loaded, Ok(LoadOutcome::Loaded(_))), "{loaded:?}");
    drop(lake);
    let changed = [
        (
            format!("{by_day}\nsnapshot_scope = [\"region\"]"),
            "loaded with no snapshot_scope (each file the whole table) and the spec has snapshot_scope = [\"region\"]",
        ),
        (
            "snapshot_key_date = \"dt=%Y-%m-%d\"".to_string(),
            // Refused for the column it stops ordering by, no longer not null.
            "column \"exported_on\" is date, not null in the table and date, nullable in the spec (keys and sequence_by columns are stored not null",
        ),
    ];
    for (extra, says) in changed {
        let e = Lake::open_spec(&root, &spec(&extra)).await.err();
        let e = e.map(|e| e.to_string()).unwrap_or_default();
        assert!(e.contains(says), "{extra}: {e}");
    }
}
