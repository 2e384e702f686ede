//! The version a loaded file records (`orders_version` in the ledger and
//! the reconciliation table, "table version" on the command line) is the
//! commit that holds its changes, even when other writers committed to the
//! table before the load ended.

use deltaload_core::Spec;
use deltaload_lake::{Lake, LakeRoot, LoadOptions, LoadOutcome, SourceFile};
use deltaload_tests::faulty_store;

fn file(name: &str, events: &[crate::history::Event]) -> SourceFile {
    SourceFile::in_memory(format!("/landing/{name}"), crate::history::csv(events))
}

async fn version_of(lake: &mut Lake, file: &SourceFile) -> (u64, bool) {
    match lake.load(file, LoadOptions::default()).await {
        Ok(LoadOutcome::Loaded(l)) => (l.orders_version.expect("a version"), l.recovered),
        other => panic!("{}: {other:?}", file.location),
    }
}

/// A load whose table commit landed and whose reconciliation write then
/// failed; another writer commits to the table; the load run again finds
/// its commit and completes. The version it records is that commit's (the
/// one naming its file), not the table's newest, which is the other
/// writer's.
#[tokio::test(flavor = "multi_thread")]
async fn a_completed_load_records_its_own_commit_not_another_writers() {
    let text = crate::history::spec_text("").replace("history = true\n", "");
    let spec = Spec::parse(&text, "customers.toml").expect("customers spec");
    faulty_store::register();
    let dir = tempfile::tempdir().expect("temp dir");
    let root = LakeRoot {
        url: faulty_store::url_of(dir.path()),
        storage_options: Default::default(),
    };
    let mut first = Lake::open_spec(&root, &spec).await.expect("lake opens");
    let mut second = Lake::open_spec(&root, &spec).await.expect("lake opens");
    // Object-store paths carry no leading slash.
    let at = |name: &str| format!("{}/{name}", dir.path().display()).split_off(1);
    faulty_store::fail_writes(&at("reconciliation/_delta_log/"), 1);
    let own_file = file("1.csv", &[(1, 10, false, "gold", "a@x")]);
    let failed = first.load(&own_file, LoadOptions::default()).await;
    assert!(failed.is_err(), "the reconciliation's write failed it");
    let (other, _) = version_of(
        &mut second,
        &file("2.csv", &[(5, 30, false, "gold", "e@x")]),
    )
    .await;
    let (own, recovered) = version_of(&mut first, &own_file).await;
    assert!(recovered, "the rerun found its commit");
    assert!(own < other, "{own} is not the other writer's {other}");
    let log = dir.path().join("customers/_delta_log");
    let commit = std::fs::read_to_string(log.join(format!("{own:020}.json"))).expect("commit");
    assert!(commit.contains("/landing/1.csv"), "{commit}");
}
