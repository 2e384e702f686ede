//! Any bytes through the Avro container framing and the Avro reader of two
//! datasets (orders' columns; Debezium's events): no panic, no allocation
//! larger than the input allows; every block read lies within the file and
//! together they never claim more bytes than it has; every change read has
//! its key, and every reject a record number within the file's records.
#![no_main]

use deltaload_core::avro_container::{blocks, header, records};
use deltaload_core::spec::{ExtraFields, Format};
use deltaload_core::{Dataset, Spec};
use libfuzzer_sys::fuzz_target;
use std::sync::{Arc, OnceLock};

const PEOPLE: &str = r#"
[[dataset]]
name = "people"
preset = "debezium"
format = "avro"
keys = ["id"]
extra_fields = "ignore"
columns = [
    { name = "id", type = "bigint" },
    { name = "name", type = "string" },
    { name = "balance", type = "decimal(12,2)" },
    { name = "born", type = "date" },
    { name = "seen", type = "timestamp" },
]
"#;

fn datasets() -> &'static [Arc<Dataset>] {
    static SETS: OnceLock<Vec<Arc<Dataset>>> = OnceLock::new();
    SETS.get_or_init(|| {
        // The built-in orders dataset, its files Avro.
        let orders = Dataset {
            format: Format::Avro,
            extra_fields: ExtraFields::Ignore,
            ..(*Dataset::orders()).clone()
        };
        let people = Spec::parse(PEOPLE, "fuzz.toml").expect("spec").datasets[0].clone();
        vec![Arc::new(orders), people]
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(h) = header(data) else {
        return;
    };
    assert!(h.end <= data.len(), "the header ends within the file");
    let mut claimed = h.end;
    for block in blocks(data, &h) {
        let Ok(block) = block else {
            break;
        };
        claimed += block.data.len() + 16;
        assert!(claimed <= data.len(), "blocks claim more than the file holds");
    }
    let stated = records(data);
    for dataset in datasets() {
        let Ok(read) = deltaload_ingest::read_changes(dataset, data) else {
            continue;
        };
        assert!(read.records() <= stated, "more records read than the blocks state");
        for batch in &read.batches {
            let key = batch.column(dataset.keys[0]);
            assert_eq!(key.null_count(), 0, "a change without its key");
        }
        for r in &read.rejects {
            assert!(r.line >= 1 && r.line <= stated, "reject at record {}", r.line);
        }
    }
});
