//! Any bytes through the Parquet reader of a few datasets (the first byte
//! picks one): no panic, every row of the dataset's width with a non-null
//! key, every reject with its row number and a reason, and the newest-wins
//! step keeps at most one change per key.
#![no_main]

use deltaload_core::{newest_of, Dataset, Spec};
use deltaload_ingest::parquet::read_parquet;
use libfuzzer_sys::fuzz_target;
use std::sync::{Arc, OnceLock};

/// A composite key, a two-column sequence and deletes; extra columns refused
/// or ignored.
const INVENTORY: &str = r#"
[[dataset]]
name = "inventory"
format = "parquet"
keys = ["warehouse", "sku"]
sequence_by = ["event_time", "seq"]
delete_when = { column = "op", in = ["d", "delete", "1", "true"] }
EXTRA
[[dataset.columns]]
name = "warehouse"
type = "string"
[[dataset.columns]]
name = "sku"
type = "string"
[[dataset.columns]]
name = "event_time"
type = "timestamp"
[[dataset.columns]]
name = "seq"
type = "bigint"
[[dataset.columns]]
name = "qty"
type = "int"
[[dataset.columns]]
name = "price"
type = "decimal(10,2)"
[[dataset.columns]]
name = "active"
type = "boolean"
"#;

/// Doubles, dates, a zone for local times, a wide decimal, a non-null column.
const READINGS: &str = r#"
[[dataset]]
name = "readings"
format = "parquet"
keys = ["id"]
extra_fields = "ignore"
[[dataset.columns]]
name = "id"
type = "bigint"
[[dataset.columns]]
name = "score"
type = "double"
[[dataset.columns]]
name = "day"
type = "date"
[[dataset.columns]]
name = "at"
type = "timestamp"
timezone = "Europe/Berlin"
[[dataset.columns]]
name = "amount"
type = "decimal(38,6)"
nullable = false
"#;

fn datasets() -> &'static Vec<Arc<Dataset>> {
    static ALL: OnceLock<Vec<Arc<Dataset>>> = OnceLock::new();
    ALL.get_or_init(|| {
        [
            INVENTORY.replace("EXTRA", ""),
            INVENTORY.replace("EXTRA", "extra_fields = \"ignore\""),
            READINGS.to_string(),
        ]
        .iter()
        .flat_map(|text| {
            Spec::parse(text, "fuzz.toml")
                .expect("the fuzz spec parses")
                .datasets
        })
        .collect()
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&choice, data)) = data.split_first() else {
        return;
    };
    let dataset = &datasets()[usize::from(choice) % datasets().len()];
    let Ok(file) = read_parquet(dataset, data) else {
        return;
    };
    let mut last = 0;
    for reject in &file.rejects {
        assert!(
            reject.line >= 1 && reject.line > last,
            "line {} after {last}",
            reject.line
        );
        assert!(!reject.reason.to_string().is_empty());
        last = reject.line;
    }
    for row in file.changes.iter() {
        assert_eq!(row.len(), dataset.width());
        assert!(
            dataset.keys.iter().all(|&k| !row[k].is_null()),
            "a null key"
        );
    }
    let newest = newest_of(dataset, &file.changes);
    let mut keys: Vec<_> = newest
        .iter()
        .map(|&i| dataset.key_of(file.changes.row(i)))
        .collect();
    let before = keys.len();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), before, "one change per key");
});
