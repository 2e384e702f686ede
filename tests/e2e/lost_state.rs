//! State lost or damaged: the ledger deleted and every file replayed changes
//! neither `orders` nor `rejected_orders` (no doubling, unlike a lost stream
//! checkpoint), and the ledger is rebuilt.

use crate::deltaload;
use deltaload_tests::{stderr, Sandbox};

#[tokio::test(flavor = "multi_thread")]
async fn a_deleted_ledger_and_a_full_replay_double_nothing() {
    let sb = Sandbox::with_seed_files();
    let load = |sb: &Sandbox| deltaload(sb, &["load", "raw/a.csv", "raw/b.csv"], None);
    let first = load(&sb);
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    let before = sb.state().await;

    std::fs::remove_dir_all(sb.lake_dir().join("ledger")).expect("delete the ledger");
    let replay = load(&sb);
    assert_eq!(replay.status.code(), Some(0), "{}", stderr(&replay));
    let after = sb.state().await;
    assert_eq!(after[0], before[0], "orders changed");
    assert_eq!(after[1], before[1], "rejected_orders changed");
    let ledger: Vec<(&str, &str)> = after[2]
        .iter()
        .map(|r| (r[0].as_str(), r[3].as_str()))
        .collect();
    assert_eq!(
        ledger,
        [
            ("<sandbox>/raw/a.csv", "loaded"),
            ("<sandbox>/raw/b.csv", "loaded")
        ],
        "the ledger is rebuilt"
    );
    // A third run is skipped entirely: the rebuilt ledger holds both files.
    let third = load(&sb);
    assert!(
        String::from_utf8_lossy(&third.stdout).contains("already loaded"),
        "{}",
        String::from_utf8_lossy(&third.stdout)
    );
}
