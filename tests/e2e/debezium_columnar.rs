//! `preset = "debezium"` with `format = "avro"` and `"parquet"`: the
//! generated source histories of `debezium.rs` written as the Kafka Connect
//! S3 sink writes them with Confluent's AvroConverter
//! (`tests/connect_files.py`, fastavro and pyarrow): AvroFormat with the
//! Envelope or with `ExtractNewRecordState`'s flat rows, ParquetFormat with
//! the Envelope; Debezium's encodings as Connect annotates them (decimals as
//! bytes, dates as days, timestamps as milli- or microseconds). Each
//! partition's events are cut into files named by their start offset; any
//! load order, with repeats, gives the source table's final rows.

use crate::debezium::{history, partition_files, row};
use crate::debezium_events::{Change, Row, TOPIC};
use deltaload_core::Spec;
use deltaload_lake::{LoadOutcome, TableName};
use deltaload_tests::Sandbox;
use proptest::prelude::*;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::Path;

fn spec(format: &str) -> Spec {
    let text = format!(
        r#"
[[dataset]]
name = "people"
preset = "debezium"
format = "{format}"
keys = ["id"]
columns = [
    {{ name = "id", type = "bigint" }},
    {{ name = "name", type = "string" }},
    {{ name = "balance", type = "decimal(12,2)" }},
    {{ name = "born", type = "date" }},
    {{ name = "seen", type = "timestamp" }},
]
"#
    );
    Spec::parse(&text, "people.toml").unwrap()
}

/// How the sink writes: its format and the record's shape.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Sink {
    /// AvroFormat, the Envelope.
    Avro,
    /// AvroFormat, `ExtractNewRecordState`'s flat rows.
    AvroFlat,
    /// ParquetFormat, the Envelope.
    Parquet,
}

impl Sink {
    fn shape(self) -> &'static str {
        match self {
            Self::Avro => "avro",
            Self::AvroFlat => "avro_flat",
            Self::Parquet => "parquet",
        }
    }

    pub(crate) fn format(self) -> &'static str {
        match self {
            Self::Avro | Self::AvroFlat => "avro",
            Self::Parquet => "parquet",
        }
    }
}

fn row_json(row: &Row) -> Value {
    json!({"id": row.id, "name": row.name, "balance": row.balance, "born": row.born,
           "seen_ms": row.seen_ms})
}

/// The event of `change`: `before` the key alone for a delete (PostgreSQL's
/// default replica identity) unless `full_before`.
fn event(change: &Change, full_before: bool) -> Value {
    match change.op {
        "d" if full_before => json!({"op": "d", "before": row_json(&change.row), "after": null}),
        "d" => json!({"op": "d", "before": {"id": change.row.id}, "after": null}),
        op => json!({"op": op, "before": null, "after": row_json(&change.row)}),
    }
}

/// The sink's files of `sink` (`full_before`: a delete's `before` holds the
/// whole row), as `tests/connect_files.py` takes them.
fn folder(
    sink: Sink,
    history: (&[Change], &[BTreeMap<i64, Row>]),
    (start, partitions, full_before): (usize, i64, bool),
    cuts: &[usize],
) -> Vec<Value> {
    let files = partition_files(history, (start, partitions), cuts, |c, _| {
        event(c, full_before)
    });
    (files.into_iter())
        .map(|(p, first, records)| {
            let events: Vec<Value> = records.into_iter().flatten().collect();
            let ext = sink.format();
            let name = format!("topics/{TOPIC}/partition={p}/{TOPIC}+{p}+{first:010}.{ext}");
            json!({"name": name, "first": first, "events": events})
        })
        .collect()
}

/// Writes `files` under `dir` as `sink` would, with `codec` and times in
/// milliseconds (`millis`) or microseconds.
pub(crate) fn write(dir: &Path, sink: Sink, codec: &str, millis: bool, files: &[Value]) {
    let job = json!({"dir": dir, "shape": sink.shape(), "codec": codec, "millis": millis,
                     "files": files});
    crate::python_job("connect_files.py", &job);
}

type Scenario = (
    Sink,
    &'static str,
    bool,
    Vec<Value>,
    Vec<Vec<String>>,
    Vec<usize>,
);

fn scenario() -> impl Strategy<Value = Scenario> {
    let sink = prop::sample::select(vec![Sink::Avro, Sink::AvroFlat, Sink::Parquet]);
    let codec = prop::sample::select(vec![
        "null",
        "deflate",
        "snappy",
        "zstandard",
        "bzip2",
        "xz",
    ]);
    let steps = prop::collection::vec((0i64..8, prop::bool::weighted(0.3), row()), 1..24);
    let cuts = prop::collection::vec(0usize..40, 0..4);
    let layout = (0usize..12, 1i64..3, any::<bool>(), any::<bool>());
    (sink, codec, steps, layout, cuts).prop_flat_map(
        |(sink, codec, steps, (start, partitions, full_before, millis), cuts)| {
            let (changes, states) = history(steps);
            let layout = (start, partitions, full_before);
            let files = folder(sink, (&changes, &states), layout, &cuts);
            let last: Vec<Vec<String>> = states[changes.len()].values().map(Row::shown).collect();
            let n = files.len();
            let order = deltaload_tests::load_order(n);
            (
                Just(sink),
                Just(codec),
                Just(millis),
                Just(files),
                Just(last),
                order,
            )
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]
    #[test]
    fn any_load_order_of_avro_and_parquet_sink_files_gives_the_sources_final_rows(
        (sink, codec, millis, files, last, order) in scenario()
    ) {
        let spec = spec(sink.format());
        let got = deltaload_tests::runtime().block_on(async {
            let sb = Sandbox::with_spec(spec.clone());
            let raw = sb.dir.path().join("raw");
            write(&raw, sink, codec, millis, &files);
            let paths: Vec<_> = (files.iter())
                .map(|f| raw.join(f["name"].as_str().unwrap()))
                .collect();
            for &i in &order {
                match sb.load(&paths[i], false).await {
                    LoadOutcome::Loaded(done) => assert_eq!(done.figures.rejected, 0, "{done:?}"),
                    LoadOutcome::Skipped { .. } => {}
                    refused => panic!("{}: {refused:?}", paths[i].display()),
                }
            }
            sb.rows(TableName::Target(spec.datasets[0].clone()), "id, name, balance, born, seen").await
        });
        prop_assert_eq!(got, last);
    }
}

const EXAMPLE_SPEC: &str = include_str!("../../examples/debezium_avro/spec.toml");

#[test]
fn the_worked_avro_example_loads_as_the_docs_show_and_spec_check_tells_its_records() {
    let name = |offset: &str| format!("dbserver1.inventory.customers+0+{offset}.avro");
    let names = [name("0000000000"), name("0000000003")];
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let sb = crate::example_sandbox(EXAMPLE_SPEC, ("debezium_avro", "customers"), &names);
    let (snapshot, changes) = (
        format!("raw/customers/{}", names[0]),
        format!("raw/customers/{}", names[1]),
    );
    let out = crate::with_spec_ok(
        &sb,
        &["load", "--dataset", "customers", &changes, &snapshot],
    );
    assert_eq!(
        out,
        format!(
            "{changes}: 0 rejected, 0 updated, 3 added, 0 deleted, table version 1\n\
             {snapshot}: 0 rejected, 0 updated, 0 added, 0 deleted, table version 1\n"
        )
    );
    let shown = crate::with_spec_ok(&sb, &["show", "customers", "--format", "csv"]);
    assert_eq!(
        crate::shown_rows(&shown),
        [
            "id,first_name,last_name,email,balance,signed_up,updated_at,_feed_file,_feed_line",
            "1001,Sally,Thomas,sally@thomas.org,120.50,2024-03-01,2026-12-01T09:30:00.250Z,00000000000000000003,1",
            "1003,Edward,Walker,ed@walker.com,25.75,2025-01-20,2026-12-01T09:32:00Z,00000000000000000003,4",
            "1004,Anne,Kretchmar,annek@noanswer.org,999.99,2026-12-01,2026-12-01T09:31:00Z,00000000000000000003,3",
        ],
        "{shown}"
    );
    let check = crate::with_spec_ok(&sb, &["spec", "check", "spec.toml"]);
    assert!(
        check.contains("records: the Envelope (before, after, op)"),
        "{check}"
    );
    assert!(
        check.contains("format: avro, undeclared fields refused"),
        "{check}"
    );
}
