//! A load killed at each step, then run again, leaves every table as one clean load does.

use crate::deltaload;
use deltaload_tests::{orders_csv, stderr, stdout, Order, Sandbox};

pub(crate) const POINTS: [&str; 5] = [
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
    killed_then_rerun(&[]).await;
}

/// The same within a 1 KiB memory budget: `raw/b.csv` is read in pieces and
/// upserted by slices, and a rerun after a crash recovers its commit and its
/// figures as after a load read whole (the clean load has no budget).
#[tokio::test(flavor = "multi_thread")]
async fn killed_at_any_step_within_a_tiny_budget_then_rerun_equals_a_clean_load() {
    killed_then_rerun(&["--memory-budget", "1KiB"]).await;
}

async fn killed_then_rerun(budget: &[&str]) {
    let clean = clean_state(&["raw/a.csv", "raw/b.csv"]).await;
    let load_b: Vec<&str> = ["load"]
        .iter()
        .chain(budget)
        .chain(&["raw/b.csv"])
        .copied()
        .collect();
    for point in POINTS {
        let sb = Sandbox::with_seed_files();
        assert_eq!(
            deltaload(&sb, &["load", "raw/a.csv"], None).status.code(),
            Some(0)
        );
        let killed = deltaload(&sb, &load_b, Some(point));
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
        let rerun = deltaload(&sb, &load_b, None);
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
    for batch in ["1", "2"] {
        for point in ["after-orders", "after-reconciliation"] {
            let sb = Sandbox::with_seed_files();
            let args = ["load", "--batch-size", batch, "raw/a.csv", "raw/b.csv"];
            let killed = deltaload(&sb, &args, Some(point));
            assert_ne!(killed.status.code(), Some(0));
            let rerun = deltaload(&sb, &args, None);
            assert_eq!(rerun.status.code(), Some(0), "{}", stderr(&rerun));
            assert_eq!(sb.state().await, clean, "batch {batch}, {point}");
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_batch_killed_at_any_step_then_its_files_redelivered_one_by_one_equals_a_clean_load() {
    let clean = clean_state(&["raw/a.csv", "raw/b.csv"]).await;
    for point in POINTS {
        let sb = Sandbox::with_seed_files();
        let args = ["load", "--batch-size", "2", "raw/a.csv", "raw/b.csv"];
        let killed = deltaload(&sb, &args, Some(point));
        assert!(stderr(&killed).contains("fault injected"), "{point}");
        let mut printed = String::new();
        for file in ["raw/a.csv", "raw/b.csv"] {
            let rerun = deltaload(&sb, &["load", file], None);
            assert_eq!(rerun.status.code(), Some(0), "{point}: {}", stderr(&rerun));
            printed.push_str(&String::from_utf8_lossy(&rerun.stdout));
        }
        let expected = match point {
            "after-ledger" => {
                "raw/a.csv: already loaded (table version 1), skipped\n\
                               raw/b.csv: already loaded (table version 1), skipped\n"
            }
            "after-orders" | "after-reconciliation" => {
                "raw/a.csv: 1 rejected, 0 updated, 4 added, table version 1\n\
                 raw/b.csv: 0 rejected, 2 updated, 1 added, table version 1\n"
            }
            _ => {
                "raw/a.csv: 1 rejected, 0 updated, 4 added, table version 1\n\
                  raw/b.csv: 0 rejected, 2 updated, 1 added, table version 2\n"
            }
        };
        assert_eq!(printed, expected, "{point}");
        assert_eq!(
            sb.state().await,
            clean,
            "{point}: tables differ from a clean load"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rerun_after_other_loads_still_finds_the_interrupted_merge() {
    let sb = Sandbox::with_seed_files();
    sb.file(
        "c.csv",
        orders_csv(&[Order::new(2001)
            .customer("C9")
            .amount("5.00")
            .ordered_at("2026-10-05T08:00:00")
            .updated_at("2026-10-05T08:00:00")]),
    );
    assert_eq!(
        deltaload(&sb, &["load", "raw/a.csv"], None).status.code(),
        Some(0)
    );
    let killed = deltaload(&sb, &["load", "raw/b.csv"], Some("after-orders"));
    assert!(stderr(&killed).contains("fault injected"));
    // Another file loads, and the ledger moves past b's MERGE commit.
    let other = deltaload(&sb, &["load", "raw/c.csv"], None);
    assert_eq!(
        stdout(&other),
        "raw/c.csv: 0 rejected, 0 updated, 1 added, table version 3\n"
    );
    let rerun = deltaload(&sb, &["load", "raw/b.csv"], None);
    assert_eq!(
        stdout(&rerun),
        "raw/b.csv: 0 rejected, 2 updated, 1 added, table version 2\n",
        "the figures and the version of b's own MERGE, not those of a second one \
         nor the table's newest (c's)"
    );
}
