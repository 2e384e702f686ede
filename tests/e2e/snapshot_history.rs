//! The history of a snapshot dataset (`history = true`), modelled: each
//! snapshot that applies (newer than every one loaded before it in its
//! scope) opens a version for a key it brings or whose plan it changes,
//! closes the version of a key of its scope it no longer holds at its own
//! date, and updates the open version's other columns in place.
//! [`crate::snapshots`] checks every load against it.

use crate::snapshots::{region, Export};
use deltaload_core::Spec;
use deltaload_lake::{LakeRoot, TableName};
use std::collections::BTreeMap;

const VERSIONS: &str = "id, region, plan, exported_on, __start_at, __end_at";

/// The history's versions, sorted by id then start.
pub(crate) async fn versions(root: &LakeRoot, spec: &Spec) -> Vec<Vec<String>> {
    let history = TableName::History(spec.datasets[0].clone());
    let mut rows = (deltaload_lake::table_rows(root, &history, VERSIONS).await).expect("history");
    rows.sort_by_key(|r| (r[0].parse::<u64>().unwrap_or(0), r[4].clone()));
    rows
}

/// A version: plan, exported_on, start, end (`NULL`: open).
type Version = [String; 4];

/// The versions `applied` (in the order they were loaded) make.
pub(crate) fn model(applied: &[&Export]) -> Vec<Vec<String>> {
    let mut keys: BTreeMap<usize, Vec<Version>> = BTreeMap::new();
    let open = |v: &&mut Version| v[3] == "NULL";
    for e in applied {
        let at = e.exported_on();
        for (id, plan) in &e.rows {
            let versions = keys.entry(*id).or_default();
            match versions.last_mut().filter(open) {
                Some(v) if v[0] == *plan => v[1] = at.clone(),
                current => {
                    if let Some(v) = current {
                        v[3] = at.clone();
                    }
                    versions.push([plan.to_string(), at.clone(), at.clone(), "NULL".into()]);
                }
            }
        }
        for (id, versions) in keys.iter_mut().filter(|(id, _)| e.holds_scope_of(**id)) {
            let held = e.rows.iter().any(|(i, _)| i == id);
            if let Some(v) = versions.last_mut().filter(open).filter(|_| !held) {
                v[3] = at.clone();
            }
        }
    }
    let mut rows = Vec::new();
    for (id, versions) in keys {
        for [plan, on, start, end] in versions {
            let id_text = id.to_string();
            rows.push(vec![id_text, region(id).into(), plan, on, start, end]);
        }
    }
    rows
}

/// Versions of `after` whose (id, start) `before` lacks, and versions of
/// `after` whose end `before` lacks.
pub(crate) fn changed(before: &[Vec<String>], after: &[Vec<String>]) -> (u64, u64) {
    let start = |r: &Vec<String>| (r[0].clone(), r[4].clone());
    let opened = (after.iter())
        .filter(|r| !before.iter().any(|b| start(b) == start(r)))
        .count() as u64;
    let ended = |r: &Vec<String>| (r[0].clone(), r[4].clone(), r[5].clone());
    let closed = (after.iter())
        .filter(|r| r[5] != "NULL" && !before.iter().any(|b| ended(b) == ended(r)))
        .count() as u64;
    (opened, closed)
}

/// A snapshot's history is written after its table's commit: a load that
/// fails between the two (the history's log cannot be written) loads again
/// to the history and figures of a load that did not fail, the snapshot
/// held against the table as it was before its commit.
#[tokio::test(flavor = "multi_thread")]
async fn a_snapshot_whose_history_failed_after_its_commit_loads_again_to_the_same_history() {
    use deltaload_lake::{Lake, LoadOptions, LoadOutcome, SourceFile};
    let spec = crate::snapshots::spec("sequence_by = [\"exported_on\"]\nhistory = true");
    let days = [
        Export::dated(0, &[(1, "a"), (2, "a"), (3, "a")]),
        Export::dated(1, &[(1, "b"), (2, "a"), (4, "a")]),
    ];
    let file = |e: &Export| SourceFile::in_memory(e.location(), e.csv());
    let figures = |outcome: LoadOutcome| match outcome {
        LoadOutcome::Loaded(l) => l.figures,
        other => panic!("{other:?}"),
    };
    let (_clean_dir, clean_root, mut clean) = crate::snapshots::fresh(&spec).await;
    let mut expected = Vec::new();
    for e in &days {
        let loaded = clean.load(&file(e), LoadOptions::default()).await;
        expected.push(figures(loaded.expect("clean load")));
    }
    deltaload_tests::faulty_store::register();
    let dir = tempfile::tempdir().expect("temp dir");
    let root = LakeRoot {
        url: deltaload_tests::faulty_store::url_of(dir.path()),
        storage_options: Default::default(),
    };
    let mut lake = Lake::open_spec(&root, &spec).await.expect("lake opens");
    lake.load(&file(&days[0]), LoadOptions::default())
        .await
        .expect("day 1");
    let table = TableName::Target(spec.datasets[0].clone());
    let before = deltaload_lake::table_version(&root, &table)
        .await
        .expect("version");
    let log = format!("{}/history_log_subscribers/", dir.path().display());
    deltaload_tests::faulty_store::fail_writes(log.trim_start_matches('/'), 1);
    let failed = lake.load(&file(&days[1]), LoadOptions::default()).await;
    assert!(failed.is_err(), "the log's write fails the load");
    let committed = deltaload_lake::table_version(&root, &table)
        .await
        .expect("version");
    assert!(
        committed > before,
        "the table's commit came before the history's"
    );
    let again = lake.load(&file(&days[1]), LoadOptions::default()).await;
    let again = figures(again.expect("loads again"));
    assert_eq!(again, expected[1]);
    assert_eq!((again.retired, again.opened, again.closed), (1, 2, 2));
    assert_eq!(
        versions(&root, &spec).await,
        versions(&clean_root, &spec).await
    );
    assert_eq!(versions(&root, &spec).await, model(&[&days[0], &days[1]]));
}

/// A snapshot corrected and loaded again at its date wins in the history
/// as in the table, whichever its values' tie-break: the open version is
/// the table's row. (The history ranked the two by their tie-break and
/// kept the first upload's plan open, a `b` above the correction's `a`.)
#[tokio::test(flavor = "multi_thread")]
async fn a_snapshot_corrected_at_its_date_wins_in_the_history_as_in_the_table() {
    use deltaload_lake::{LoadOptions, SourceFile};
    let spec = crate::snapshots::spec("sequence_by = [\"exported_on\"]\nhistory = true");
    let first = Export::dated(0, &[(1, "b"), (2, "a")]);
    let corrected = Export::dated(0, &[(1, "a"), (2, "b")]);
    let (_dir, root, mut lake) = crate::snapshots::fresh(&spec).await;
    for e in [&first, &corrected] {
        let file = SourceFile::in_memory(e.location(), e.csv());
        lake.load(&file, LoadOptions::default())
            .await
            .expect("load");
    }
    let versions = open_versions_are(&root, &spec, &[["1", "a"], ["2", "b"]]).await;
    assert_eq!(versions, model(&[&first, &corrected]));
}

/// A snapshot loaded again on purpose (`--force`) after a correction at
/// its date wins again, in the history as in the table. (Its changes were
/// in the log already, from its first load, so the history kept the
/// correction's rank: subscriber 2, retired by the correction, stayed
/// closed while the table held it again.)
#[tokio::test(flavor = "multi_thread")]
async fn a_snapshot_loaded_again_with_force_wins_in_the_history_as_in_the_table() {
    use deltaload_lake::{LoadOptions, SourceFile};
    let spec = crate::snapshots::spec("sequence_by = [\"exported_on\"]\nhistory = true");
    let first = Export::dated(0, &[(1, "a"), (2, "b")]);
    let corrected = Export::dated(0, &[(1, "a")]);
    let (_dir, root, mut lake) = crate::snapshots::fresh(&spec).await;
    for (e, force) in [(&first, false), (&corrected, false), (&first, true)] {
        let file = SourceFile::in_memory(e.location(), e.csv());
        let options = LoadOptions {
            force,
            ..LoadOptions::default()
        };
        lake.load(&file, options).await.expect("load");
    }
    let versions = open_versions_are(&root, &spec, &[["1", "a"], ["2", "b"]]).await;
    assert_eq!(versions, model(&[&first, &corrected, &first]));
}

/// Asserts that the table holds `rows` (id, plan) and that they are the
/// history's open versions; gives the history's versions.
async fn open_versions_are(root: &LakeRoot, spec: &Spec, rows: &[[&str; 2]]) -> Vec<Vec<String>> {
    let table = TableName::Target(spec.datasets[0].clone());
    let held = deltaload_lake::table_rows(root, &table, "id, plan").await;
    assert_eq!(held.expect("table"), rows);
    let versions = versions(root, spec).await;
    let open: Vec<[&str; 2]> = (versions.iter())
        .filter(|v| v[5] == "NULL")
        .map(|v| [v[0].as_str(), v[2].as_str()])
        .collect();
    assert_eq!(open, rows, "{versions:?}");
    versions
}
