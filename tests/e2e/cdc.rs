//! The worked CDC example of docs/reference.md (examples/cdc: AWS DMS-style CSV with
//! an `Op` column): deletes counted on the output line, a late older update
//! of a deleted row kept away, a crash at every step then a rerun equal to a
//! clean load, and `maintain` expiring tombstones.

use crate::deltaload;
use deltaload_core::Spec;
use deltaload_tests::{stderr, stdout, Sandbox};

const SPEC: &str = include_str!("../../examples/cdc/spec.toml");
const FILES: [(&str, &str); 3] = [
    (
        "1-LOAD00000001.csv",
        include_str!("../../examples/cdc/customers/1-LOAD00000001.csv"),
    ),
    (
        "2-20261001-093000.csv",
        include_str!("../../examples/cdc/customers/2-20261001-093000.csv"),
    ),
    (
        "3-20261001-090500-late.csv",
        include_str!("../../examples/cdc/customers/3-20261001-090500-late.csv"),
    ),
];

fn sandbox() -> Sandbox {
    let sb = Sandbox::with_spec(Spec::parse(SPEC, "spec.toml").unwrap());
    std::fs::write(sb.dir.path().join("spec.toml"), SPEC).unwrap();
    for (name, text) in FILES {
        sb.file(name, text);
    }
    sb
}

/// `deltaload --spec spec.toml ARGS` (with a fault, if any); its output.
fn run(sb: &Sandbox, args: &[&str], fault: Option<&str>) -> std::process::Output {
    let mut all = vec!["--spec", "spec.toml"];
    all.extend_from_slice(args);
    deltaload(sb, &all, fault)
}

fn ok(sb: &Sandbox, args: &[&str]) -> String {
    let out = run(sb, args, None);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{args:?}: {}{}",
        stdout(&out),
        stderr(&out)
    );
    stdout(&out)
}

const ALL: [&str; 4] = [
    "load",
    "raw/1-LOAD00000001.csv",
    "raw/2-20261001-093000.csv",
    "raw/3-20261001-090500-late.csv",
];

#[tokio::test(flavor = "multi_thread")]
async fn a_dms_feed_deletes_rows_and_a_late_older_update_stays_deleted() {
    let sb = sandbox();
    assert_eq!(
        ok(&sb, &["validate", "raw/2-20261001-093000.csv"]),
        "raw/2-20261001-093000.csv: 3 records, 3 valid (1 deletes), 0 rejected, 0 duplicate keys (dataset customers)\n"
    );
    assert_eq!(
        ok(&sb, &ALL),
        "raw/1-LOAD00000001.csv: 0 rejected, 0 updated, 3 added, 0 deleted, table version 1\n\
         raw/2-20261001-093000.csv: 0 rejected, 1 updated, 1 added, 1 deleted, table version 2\n\
         raw/3-20261001-090500-late.csv: 0 rejected, 0 updated, 0 added, 0 deleted, table version 2\n"
    );
    let shown = ok(&sb, &["show", "customers", "--format", "csv"]);
    let ids: Vec<&str> = shown
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(1).unwrap())
        .collect();
    assert_eq!(ids, ["1", "3", "4"], "{shown}");
    assert!(shown.contains("ada@new.example.com"), "{shown}");
    // The header: a temporary directory's random name may hold "Op".
    let header = shown.lines().next().unwrap_or_default();
    assert!(
        !header.split(',').any(|c| c == "Op"),
        "the delete column is never stored: {shown}"
    );
    let tombstones = ok(&sb, &["show", "tombstones_customers", "--format", "csv"]);
    assert!(tombstones.contains("2026-10-01T09:20:00"), "{tombstones}");
    let figures = ok(&sb, &["show", "reconciliation", "--format", "csv"]);
    assert!(
        figures
            .lines()
            .next()
            .unwrap()
            .ends_with(",deleted,retired,versions_opened,versions_closed"),
        "{figures}"
    );
    let mut lake = sb.lake().await;
    let unbalanced = lake.unbalanced_files("").await.unwrap();
    assert_eq!(unbalanced, Vec::<String>::new(), "deletes balance");
    // Forgetting the tombstones gives up that guarantee: the late file, loaded
    // again, now brings Bob back.
    let maintained = ok(&sb, &["maintain", "--tombstone-retention-days", "0"]);
    assert!(
        maintained.contains("tombstones_customers: ")
            && maintained.contains(", 1 tombstones expired"),
        "{maintained}"
    );
    assert_eq!(
        ok(&sb, &["load", "--force", "raw/3-20261001-090500-late.csv"]),
        "raw/3-20261001-090500-late.csv: 0 rejected, 0 updated, 1 added, 0 deleted, table version 3\n"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_load_with_deletes_killed_at_any_step_then_rerun_equals_a_clean_load() {
    let clean = {
        let sb = sandbox();
        ok(&sb, &ALL);
        sb.state().await
    };
    for point in [
        "after-read",
        "after-rejected",
        "after-tombstones",
        "after-orders",
        "after-reconciliation",
        "after-ledger",
    ] {
        for batch in ["1", "3"] {
            let sb = sandbox();
            ok(&sb, &["load", "raw/1-LOAD00000001.csv"]);
            let args = [
                "load",
                "--batch-size",
                batch,
                "raw/2-20261001-093000.csv",
                "raw/3-20261001-090500-late.csv",
            ];
            let killed = run(&sb, &args, Some(point));
            assert!(
                stderr(&killed).contains("fault injected"),
                "{point}: {}",
                stderr(&killed)
            );
            ok(&sb, &args);
            assert_eq!(
                sb.state().await,
                clean,
                "{point}, batch {batch}: tables differ from a clean load"
            );
        }
    }
}
