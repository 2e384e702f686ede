//! The history is written beside the table's commit, not before it: a load
//! whose history waits for the table's commit completes, and a history
//! write failing after the table committed loads again to the history and
//! figures of a clean load.

use deltaload_core::{Reconciliation, Spec};
use deltaload_lake::{Lake, LakeRoot, LoadOptions, LoadOutcome, SourceFile, TableName};
use deltaload_tests::faulty_store;

/// Three files of customer changes, the second with a late change.
fn files() -> [SourceFile; 3] {
    let events: [&[crate::history::Event]; 3] = [
        &[(1, 10, false, "gold", "a@x"), (2, 10, false, "gold", "b@x")],
        &[
            (1, 30, false, "silver", "a@x"),
            (1, 20, false, "bronze", "a@x"),
        ],
        &[(2, 40, true, "gold", "b@x"), (3, 40, false, "gold", "c@x")],
    ];
    let mut n = 0;
    events.map(|e| {
        n += 1;
        SourceFile::in_memory(format!("/landing/{n}.csv"), crate::history::csv(e))
    })
}

async fn figures(lake: &mut Lake, file: &SourceFile) -> Reconciliation {
    match lake.load(file, LoadOptions::default()).await {
        Ok(LoadOutcome::Loaded(l)) => l.figures,
        other => panic!("{}: {other:?}", file.location),
    }
}

async fn history(root: &LakeRoot, spec: &Spec) -> Vec<Vec<String>> {
    let table = TableName::History(spec.datasets[0].clone());
    let columns = "id, tier, email, __start_at, __end_at";
    let mut rows = (deltaload_lake::table_rows(root, &table, columns).await).expect("history");
    rows.sort();
    rows
}

/// The first log write of the second file's history is held until the
/// table's commit: written one after the other, the load would wait for
/// ever (and fail when the hold gives up). The third file's log write is
/// held likewise and then fails: the table has committed, the load fails,
/// and the file loads again to the figures and history of a clean load.
#[tokio::test(flavor = "multi_thread")]
async fn the_history_is_written_while_the_table_commits() {
    let spec = crate::history::spec("history_columns = [\"tier\"]");
    let files = files();
    let (_clean_dir, clean_root, mut clean) = crate::snapshots::fresh(&spec).await;
    let mut expected = Vec::new();
    for f in &files {
        expected.push(figures(&mut clean, f).await);
    }
    faulty_store::register();
    let dir = tempfile::tempdir().expect("temp dir");
    let root = LakeRoot {
        url: faulty_store::url_of(dir.path()),
        storage_options: Default::default(),
    };
    let mut lake = Lake::open_spec(&root, &spec).await.expect("lake opens");
    assert_eq!(figures(&mut lake, &files[0]).await, expected[0]);
    // Object-store paths carry no leading slash.
    let at = |name: &str| format!("{}/{name}", dir.path().display()).split_off(1);
    let (log, commit) = (at("history_log_customers/"), at("customers/_delta_log/"));

    faulty_store::hold_writes(&log, &commit);
    assert_eq!(figures(&mut lake, &files[1]).await, expected[1]);
    assert!(
        faulty_store::hold_released(&log),
        "the history's write waited for the table's commit"
    );

    let table = TableName::Target(spec.datasets[0].clone());
    let version = || deltaload_lake::table_version(&root, &table);
    let before = version().await.expect("version");
    faulty_store::hold_writes(&log, &commit);
    faulty_store::fail_writes(&log, 1);
    let failed = lake.load(&files[2], LoadOptions::default()).await;
    let error = failed.expect_err("the history's failed write fails the load");
    assert!(
        error.to_string().contains("injected write failure"),
        "{error}"
    );
    assert!(
        version().await.expect("version") > before,
        "the table committed"
    );
    assert_eq!(figures(&mut lake, &files[2]).await, expected[2]);
    assert_eq!(
        history(&root, &spec).await,
        history(&clean_root, &spec).await
    );
    assert_eq!(history(&root, &spec).await.len(), 5, "versions of 3 keys");
}
