//! Any load order of the same files, with repeats, gives the same table for a
//! dataset with a composite key and two sequence columns: each key's greatest
//! change by (taken_at, seq), ties by (value, ok), as a simple model says.

use deltaload_core::Spec;
use deltaload_lake::TableName;
use deltaload_tests::Sandbox;
use proptest::prelude::*;
use std::collections::BTreeMap;

const SPEC: &str = r#"
[[dataset]]
name = "readings"
keys = ["site", "sensor"]
sequence_by = ["taken_at", "seq"]
[[dataset.columns]]
name = "site"
type = "string"
[[dataset.columns]]
name = "sensor"
type = "string"
[[dataset.columns]]
name = "taken_at"
type = "timestamp"
[[dataset.columns]]
name = "seq"
type = "bigint"
[[dataset.columns]]
name = "value"
type = "decimal(6,2)"
[[dataset.columns]]
name = "ok"
type = "boolean"
"#;

const HEADER: &str = "site,sensor,taken_at,seq,value,ok\n";

/// How the model ranks a change: (hour, seq, value, ok), null lowest.
type Rank = (u32, i64, Option<i64>, Option<bool>);

/// One record: few keys, times, sequences and values, so that repeats, stale
/// changes and exact ties are common; `bad` values are rejected.
#[derive(Debug, Clone)]
struct Record {
    site: &'static str,
    sensor: &'static str,
    hour: u32,
    seq: i64,
    value: &'static str,
    ok: &'static str,
}

impl Record {
    fn line(&self) -> String {
        format!(
            "{},{},2026-10-01T1{}:00:00,{},{},{}\n",
            self.site, self.sensor, self.hour, self.seq, self.value, self.ok
        )
    }

    /// The model: what the record means, `None` when it is rejected.
    fn meaning(&self) -> Option<(Rank, Vec<String>)> {
        let value = match self.value {
            "" => None,
            "bad" => return None,
            v => Some((v.parse::<f64>().ok()? * 100.0).round() as i64),
        };
        let ok = match self.ok {
            "" => None,
            o => Some(o == "true"),
        };
        let shown = vec![
            self.site.to_string(),
            self.sensor.to_string(),
            format!("2026-10-01T1{}:00:00Z", self.hour),
            self.seq.to_string(),
            value.map_or("NULL".into(), |v| format!("{}.{:02}", v / 100, v % 100)),
            ok.map_or("NULL".into(), |o| o.to_string()),
        ];
        Some(((self.hour, self.seq, value, ok), shown))
    }
}

fn record() -> impl Strategy<Value = Record> {
    (
        prop::sample::select(vec!["a", "b"]),
        prop::sample::select(vec!["x", "y"]),
        0u32..2,
        0i64..2,
        prop::sample::select(vec!["", "1.00", "2.50", "bad"]),
        prop::sample::select(vec!["", "true", "false"]),
    )
        .prop_map(|(site, sensor, hour, seq, value, ok)| Record {
            site,
            sensor,
            hour,
            seq,
            value,
            ok,
        })
}

/// Files, then a load order over all of them with some loaded again.
fn scenario() -> impl Strategy<Value = (Vec<Vec<Record>>, Vec<usize>)> {
    prop::collection::vec(prop::collection::vec(record(), 0..6), 1..4).prop_flat_map(|files| {
        let n = files.len();
        let order = deltaload_tests::load_order(n);
        (Just(files), order)
    })
}

/// Each key's greatest change over every file, by (hour, seq, value, ok), null lowest.
fn model(files: &[Vec<Record>]) -> Vec<Vec<String>> {
    let mut best: BTreeMap<(String, String), (Rank, Vec<String>)> = BTreeMap::new();
    for r in files.iter().flatten() {
        let Some((rank, shown)) = r.meaning() else {
            continue;
        };
        let key = (r.site.to_string(), r.sensor.to_string());
        if best.get(&key).is_none_or(|(held, _)| rank > *held) {
            best.insert(key, (rank, shown));
        }
    }
    best.into_values().map(|(_, shown)| shown).collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 10, ..ProptestConfig::default() })]
    #[test]
    fn every_load_order_gives_each_keys_greatest_change((files, order) in scenario()) {
        let spec = Spec::parse(SPEC, "readings.toml").unwrap();
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let got = runtime.block_on(async {
            let sb = Sandbox::with_spec(spec.clone());
            let paths: Vec<_> = files
                .iter()
                .enumerate()
                .map(|(i, f)| {
                    let text: String = std::iter::once(HEADER.to_string()).chain(f.iter().map(Record::line)).collect();
                    sb.file(&format!("f{i}.csv"), text)
                })
                .collect();
            for &i in &order {
                sb.load(&paths[i], false).await;
            }
            sb.rows(TableName::Target(spec.datasets[0].clone()), "site, sensor, taken_at, seq, value, ok").await
        });
        prop_assert_eq!(got, model(&files));
    }
}
