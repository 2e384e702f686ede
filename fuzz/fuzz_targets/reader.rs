//! Any object content (gzip or not) through the reader of the built-in
//! dataset and of datasets with the other header modes, delimiters and
//! encodings: no panic, every record a row or a reject with its line and
//! reason, every row with a non-null key, and the newest-wins step keeps at
//! most one change per key.
#![no_main]

use deltaload_core::{compression, newest_of, read_file, Dataset, Spec};
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

/// A composite key, a sequence, dates with a format, a zone, doubles and
/// booleans, read by name; the header mode, delimiter and encoding vary.
const OTHER: &str = r#"
[[dataset]]
name = "events"
keys = ["region", "id"]
sequence_by = ["seq"]
[dataset.csv]
header = "HEADER"
field_delimiter = "DELIMITER"
encoding = "ENCODING"
null_if = ["", "NULL"]
[[dataset.columns]]
name = "region"
type = "string"
[[dataset.columns]]
name = "id"
type = "int"
[[dataset.columns]]
name = "seq"
type = "timestamp"
timezone = "Europe/Berlin"
[[dataset.columns]]
name = "day"
type = "date"
format = "%d-%m-%y"
[[dataset.columns]]
name = "score"
type = "double"
[[dataset.columns]]
name = "ok"
type = "boolean"
[[dataset.columns]]
name = "price"
type = "decimal(38,6)"
"#;

fn datasets() -> &'static Vec<std::sync::Arc<Dataset>> {
    static ALL: OnceLock<Vec<std::sync::Arc<Dataset>>> = OnceLock::new();
    ALL.get_or_init(|| {
        let mut all = vec![Dataset::orders()];
        for (header, delimiter, encoding) in [
            ("by_name", ",", "utf-8"),
            ("none", ";", "windows-1252"),
            ("exact", "\\t", "utf-16"),
            ("by_name", "|", "iso-8859-1"),
        ] {
            let text = OTHER
                .replace("HEADER", header)
                .replace("DELIMITER", delimiter)
                .replace("ENCODING", encoding);
            let spec = Spec::parse(&text, "fuzz.toml").expect("the fuzz spec parses");
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
    let Ok(file) = read_file(dataset, &bytes) else {
        return;
    };
    let mut last = 0;
    for reject in &file.rejects {
        assert!(reject.line >= 1 && reject.line >= last, "line {} after {last}", reject.line);
        assert!(!reject.reason.to_string().is_empty());
        last = reject.line;
    }
    for row in file.changes.iter() {
        assert_eq!(row.len(), dataset.columns.len());
        assert!(dataset.keys.iter().all(|&k| !row[k].is_null()), "a null key");
    }
    let newest = newest_of(dataset, &file.changes);
    let mut keys: Vec<_> = newest.iter().map(|&i| dataset.key_of(file.changes.row(i))).collect();
    let before = keys.len();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), before, "one change per key");
    assert!(before <= file.changes.len());
});
