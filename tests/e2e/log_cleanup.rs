//! A load's commits do not clean the log (delta-rs would list the whole
//! `_delta_log` at every commit, a cost that grows with the log); `maintain`
//! does. Shown on the ledger with a log retention of zero and a checkpoint:
//! the entries before the checkpoint stay through the next load, and go
//! with `maintain`.

use crate::deltaload;
use crate::other_engines::run_python;
use deltaload_tests::{orders_csv, stdout, Order, Sandbox};

const EXPIRE: &str = r#"
import sys, os
from deltalake import DeltaTable
t = DeltaTable(sys.argv[1])
t.alter.set_table_properties({"delta.logRetentionDuration": "interval 0 seconds"})
t = DeltaTable(sys.argv[1])
t.create_checkpoint()
sys.stdout.flush()
os._exit(0)
"#;

/// The ledger's log entries (`.json`).
fn entries(sb: &Sandbox) -> usize {
    let log = sb.lake_dir().join("ledger/_delta_log");
    (std::fs::read_dir(log).expect("the ledger's log"))
        .filter(|e| {
            let name = e.as_ref().expect("entry").file_name();
            name.to_string_lossy().ends_with(".json")
        })
        .count()
}

#[test]
fn a_load_leaves_expired_log_entries_to_maintain() {
    let sb = Sandbox::new();
    for id in 1..=3 {
        sb.file(&format!("{id}.csv"), orders_csv(&[Order::new(id)]));
        let out = deltaload(&sb, &["load", &format!("raw/{id}.csv")], None);
        assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    }
    let ledger = sb.lake_dir().join("ledger");
    run_python(EXPIRE, &[ledger.to_str().expect("utf-8")]);
    let before = entries(&sb);
    sb.file("4.csv", orders_csv(&[Order::new(4)]));
    let out = deltaload(&sb, &["load", "raw/4.csv"], None);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    let first = ledger.join("_delta_log/00000000000000000000.json");
    assert!(first.exists(), "the load removed no entry");
    assert!(entries(&sb) > before, "the load added its entries");
    let out = deltaload(&sb, &["maintain"], None);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(!first.exists(), "maintain cleaned the expired entries");
    // The ledger still reads: a file loaded before is skipped.
    let again = stdout(&deltaload(&sb, &["load", "raw/1.csv"], None));
    assert!(again.contains("already loaded"), "{again}");
}
