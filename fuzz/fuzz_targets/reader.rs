//! Any object content (gzip or not) through the reader: no panic, every record a
//! change or a reject with its line and reason, amounts within DECIMAL(10,2), and
//! the newest-wins step keeps at most one change per order.
#![no_main]

use deltaload_core::{compression, newest_per_order, read_changes};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(bytes) = compression::expand(data.to_vec(), 1 << 20) else {
        return;
    };
    let Ok(file) = read_changes(&bytes) else {
        return;
    };
    let mut last = 0;
    for reject in &file.rejects {
        assert!(
            reject.line >= 2 && reject.line >= last,
            "line {} after {last}",
            reject.line
        );
        assert!(!reject.reason.is_empty());
        last = reject.line;
    }
    for change in &file.changes {
        assert!(change
            .amount_cents
            .is_none_or(|a| a.abs() <= deltaload_core::record::MAX_AMOUNT_CENTS));
    }
    let newest = newest_per_order(file.changes.iter().cloned());
    let mut ids: Vec<i64> = newest.iter().map(|c| c.order_id).collect();
    let before = ids.len();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), before, "one change per order");
    assert!(before <= file.changes.len());
});
