//! Any object content (gzip or not) through the JSON Lines reader of a
//! dataset with a composite key, a two-column sequence and a column of every
//! type, with and without deletes and with undeclared fields dropped, and
//! as Debezium's events (`preset = "debezium"`): no
//! panic, every line a row, a reject with its line and reason, or the file
//! refused; every row of the dataset's width with a non-null key and
//! sequence; the newest-wins step keeps at most one change per key.
#![no_main]

use deltaload_core::{compression, newest_of, read_jsonl, Dataset, Spec};
use libfuzzer_sys::fuzz_target;
use std::sync::{Arc, OnceLock};

const INVENTORY: &str = r#"
[[dataset]]
name = "inventory"
format = "jsonl"
keys = ["warehouse", "sku"]
sequence_by = ["event_time", "seq"]
DELETE_WHEN
EXTRA_FIELDS
[[dataset.columns]]
name = "warehouse"
type = "string"
[[dataset.columns]]
name = "sku"
type = "string"
[[dataset.columns]]
name = "event_time"
type = "timestamp"
timezone = "Europe/Berlin"
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
[[dataset.columns]]
name = "weight"
type = "double"
[[dataset.columns]]
name = "shipped"
type = "date"
format = "%d.%m.%Y"
"#;

fn datasets() -> &'static Vec<Arc<Dataset>> {
    static ALL: OnceLock<Vec<Arc<Dataset>>> = OnceLock::new();
    ALL.get_or_init(|| {
        let deletes =
            "delete_when = { column = \"op\", in = [\"d\", \"delete\", \"1\", \"true\"] }";
        let ignore = "extra_fields = \"ignore\"";
        let mut all = Vec::new();
        for (delete_when, extra_fields) in
            [(deletes, ""), ("", ""), (deletes, ignore), ("", ignore)]
        {
            let text = INVENTORY
                .replace("DELETE_WHEN", delete_when)
                .replace("EXTRA_FIELDS", extra_fields);
            let spec = Spec::parse(&text, "fuzz.toml").expect("the fuzz spec parses");
            all.extend(spec.datasets);
        }
        // Debezium's events: the preset orders by file and line (generated
        // columns, the file's rank filled after reading).
        for extra_fields in ["", ignore] {
            let text = INVENTORY
                .replace("sequence_by = [\"event_time\", \"seq\"]\n", "")
                .replace("DELETE_WHEN", "preset = \"debezium\"")
                .replace("EXTRA_FIELDS", extra_fields);
            let spec = Spec::parse(&text, "fuzz.toml").expect("the Debezium fuzz spec parses");
            all.extend(spec.datasets);
        }
        all
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&choice, data)) = data.split_first() else {
        return;
    };
    let dataset = &datasets()[usize::from(choice) % datasets().len()];
    let Ok(bytes) = compression::expand(data.to_vec(), 1 << 20) else {
        return;
    };
    let lines = bytes.split(|&b| b == b'\n').count() as u64;
    let file = match read_jsonl(dataset, &bytes) {
        Ok(file) => file,
        Err(refused) => {
            assert!(refused.problem.starts_with("line "), "{}", refused.problem);
            assert!(!refused.found.is_empty());
            return;
        }
    };
    assert!(
        file.records() <= lines,
        "{} records in {lines} lines",
        file.records()
    );
    let mut last = 0;
    for reject in &file.rejects {
        assert!(
            reject.line >= 1 && reject.line >= last,
            "line {} after {last}",
            reject.line
        );
        assert!(reject.line <= lines, "line {} of {lines}", reject.line);
        assert!(!reject.reason.to_string().is_empty());
        last = reject.line;
    }
    for row in file.changes.iter() {
        assert_eq!(row.len(), dataset.width());
        assert!(
            dataset.keys.iter().all(|&k| !row[k].is_null()),
            "a null key"
        );
        // A preset's file rank (generated, after the declared columns) is
        // filled once the file's name is known.
        let declared = dataset.declared().len();
        assert!(
            (dataset.sequence_by.iter())
                .filter(|&&k| k < declared || dataset.columns[k].name != "_feed_file")
                .all(|&k| !row[k].is_null()),
            "a null sequence"
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
    assert!(before <= file.changes.len());
});
