//! A load killed at each step, then run again, leaves every table as one clean load does.

use crate::deltaload;
use deltaload_tests::{stderr, Sandbox};

const POINTS: [&str; 5] = [
    "after-read",
    "after-rejected",
    "after-orders",
    "after-reconciliation",
    "after-ledger",
];

async fn clean_state(files: &[&str]) -> Vec<Vec<Vec<String>>> {
    let sb = Sandbox::with_seed_files();
    let mut args = vec!["load"];
    args.extend_from_slice(files);
    assert_eq!(deltaload(&sb, &args, None).status.code(), Some(0));
    sb.state().await
}

#[tokio::test(flavor = "multi_thread")]
async fn killed_at_any_step_then_rerun_equals_a_clean_load() {
    let clean = clean_state(&["raw/a.csv", "raw/b.csv"]).await;
    for point in POINTS {
        let sb = Sandbox::with_seed_files();
        assert_eq!(
            deltaload(&sb, &["load", "raw/a.csv"], None).status.code(),
            Some(0)
        );
        let killed = deltaload(&sb, &["load", "raw/b.csv"], Some(point));
        assert_ne!(
            killed.status.code(),
            Some(0),
            "{point}: the fault did not fire"
        );
        assert!(
            stderr(&killed).contains("fault injected"),
            "{point}: {}",
            stderr(&killed)
        );
        let rerun = deltaload(&sb, &["load", "raw/b.csv"], None);
        assert_eq!(rerun.status.code(), Some(0), "{point}: {}", stderr(&rerun));
        let line = String::from_utf8_lossy(&rerun.stdout).into_owned();
        if point == "after-ledger" {
            assert_eq!(
                line, "raw/b.csv: already loaded (table version 2), skipped\n",
                "{point}"
            );
        } else {
            assert_eq!(
                line, "raw/b.csv: 0 rejected, 2 updated, 1 added, table version 2\n",
                "{point}"
            );
        }
        assert_eq!(
            sb.state().await,
            clean,
            "{point}: tables differ from a clean load"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_multi_file_load_killed_midway_resumes_with_the_same_result() {
    let clean = clean_state(&["raw/a.csv", "raw/b.csv"]).await;
    for point in ["after-orders", "after-reconciliation"] {
        let sb = Sandbox::with_seed_files();
        let killed = deltaload(&sb, &["load", "raw/a.csv", "raw/b.csv"], Some(point));
        assert_ne!(killed.status.code(), Some(0));
        let rerun = deltaload(&sb, &["load", "raw/a.csv", "raw/b.csv"], None);
        assert_eq!(rerun.status.code(), Some(0), "{}", stderr(&rerun));
        assert_eq!(sb.state().await, clean, "{point}");
    }
}
