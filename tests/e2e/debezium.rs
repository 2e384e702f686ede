//! `preset = "debezium"`: folders written the way Debezium and the Kafka
//! Connect S3 sink write them (their documentation, not deltaload's
//! behaviour, is the model): a source table's history; a snapshot (`op`
//! `r`) of the table at some moment, then every change after it (`c`, `u`,
//! `d`, a delete followed by a tombstone); events keyed to partitions by
//! their key, each partition's records cut into files named
//! `<topic>+<partition>+<start offset>.json`. Lines in one of the three
//! shapes (with a schema, without, or flattened by `ExtractNewRecordState`),
//! values in Debezium's encodings. Any load order, with repeats, gives the
//! source table's final state.

use deltaload_core::Spec;
use deltaload_lake::{LoadOutcome, TableName};
use deltaload_tests::Sandbox;
use proptest::prelude::*;
use serde_json::{json, Value};
use std::collections::BTreeMap;

const SPEC: &str = r#"
[[dataset]]
name = "people"
preset = "debezium"
keys = ["id"]
columns = [
    { name = "id", type = "bigint" },
    { name = "name", type = "string" },
    { name = "balance", type = "decimal(12,2)" },
    { name = "born", type = "date" },
    { name = "seen", type = "timestamp" },
]
"#;

const TOPIC: &str = "dbserver1.public.people";

/// A row of the source table.
#[derive(Debug, Clone, PartialEq)]
struct Row {
    id: i64,
    name: Option<&'static str>,
    /// Cents.
    balance: Option<i64>,
    /// Days since 1970-01-01.
    born: Option<i32>,
    /// Milliseconds since the epoch; does not order the changes.
    seen_ms: i64,
}

impl Row {
    /// The row as the table shows it.
    fn shown(&self) -> Vec<String> {
        let null = || "NULL".to_string();
        let balance = self.balance.map_or_else(null, |c| {
            let sign = if c < 0 { "-" } else { "" };
            format!("{sign}{}.{:02}", c.abs() / 100, c.abs() % 100)
        });
        // Day 719,163 of the common era is 1970-01-01.
        let born = self.born.map_or_else(null, |d| {
            chrono::NaiveDate::from_num_days_from_ce_opt(719_163 + d)
                .unwrap()
                .to_string()
        });
        let seen = chrono::DateTime::from_timestamp_millis(self.seen_ms)
            .unwrap()
            .to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true);
        vec![
            self.id.to_string(),
            self.name.map_or_else(null, str::to_string),
            balance,
            born,
            seen,
        ]
    }
}

/// How the connector and the sink are configured: the line's shape and the
/// encodings Debezium's options choose.
#[derive(Debug, Clone, Copy)]
struct Shape {
    /// The JsonConverter's `schemas.enable`.
    schema: bool,
    /// `ExtractNewRecordState` with `add.fields=op,lsn` and
    /// `delete.tombstone.handling.mode=rewrite`.
    flat: bool,
    /// `decimal.handling.mode`: 0 precise (base64), 1 string, 2 double.
    decimals: u8,
    /// `time.precision.mode` gives milliseconds (`Timestamp`) instead of
    /// microseconds (`MicroTimestamp`); only told by a schema.
    millis: bool,
    /// PostgreSQL's `REPLICA IDENTITY FULL`: `before` holds the whole row,
    /// else the key alone.
    full_before: bool,
    /// The sink writes tombstones (`behavior.on.null.values=write`).
    tombstones: bool,
}

impl Shape {
    fn value(&self, row: &Row) -> Value {
        let balance = row.balance.map(|c| match self.decimals {
            0 => json!(base64_of(c)),
            1 => json!(decimal_text(c)),
            _ => serde_json::from_str::<Value>(&decimal_text(c)).unwrap(),
        });
        let seen = match self.millis {
            true => row.seen_ms,
            false => row.seen_ms * 1000,
        };
        json!({"id": row.id, "name": row.name, "balance": balance, "born": row.born, "seen": seen})
    }

    fn key(&self, row: &Row) -> Value {
        match self.full_before {
            true => self.value(row),
            false => json!({"id": row.id}),
        }
    }

    fn row_schema(&self, field: Option<&str>) -> Value {
        let balance = match self.decimals {
            0 => {
                json!({"type": "bytes", "optional": true, "name": "org.apache.kafka.connect.data.Decimal", "version": 1, "parameters": {"scale": "2", "connect.decimal.precision": "12"}, "field": "balance"})
            }
            1 => json!({"type": "string", "optional": true, "field": "balance"}),
            _ => json!({"type": "double", "optional": true, "field": "balance"}),
        };
        let seen = match self.millis {
            true => "io.debezium.time.Timestamp",
            false => "io.debezium.time.MicroTimestamp",
        };
        let mut fields = vec![
            json!({"type": "int64", "optional": false, "field": "id"}),
            json!({"type": "string", "optional": true, "field": "name"}),
            balance,
            json!({"type": "int32", "optional": true, "name": "io.debezium.time.Date", "version": 1, "field": "born"}),
            json!({"type": "int64", "optional": false, "name": seen, "version": 1, "field": "seen"}),
        ];
        if self.flat {
            fields.push(json!({"type": "string", "optional": true, "field": "__op"}));
            fields.push(json!({"type": "int64", "optional": true, "field": "__lsn"}));
            fields.push(json!({"type": "string", "optional": true, "field": "__deleted"}));
        }
        let mut schema = json!({"type": "struct", "fields": fields, "optional": true, "name": format!("{TOPIC}.Value")});
        if let Some(f) = field {
            schema["field"] = json!(f);
        }
        schema
    }

    /// The line of a change at log position `lsn`.
    fn line(&self, change: &Change, lsn: i64) -> String {
        let (op, row) = (change.op, &change.row);
        let (payload, schema) = if self.flat {
            let mut value = match op {
                "d" => self.key(row),
                _ => self.value(row),
            };
            value["__op"] = json!(op);
            value["__lsn"] = json!(lsn);
            value["__deleted"] = json!(if op == "d" { "true" } else { "false" });
            (value, self.row_schema(None))
        } else {
            let before = match op {
                "d" | "u" => self.key(row),
                _ => Value::Null,
            };
            let after = match op {
                "d" => Value::Null,
                _ => self.value(row),
            };
            let source = json!({"version": "2.7.0.Final", "connector": "postgresql", "name": "dbserver1", "ts_ms": 1796120100000i64, "snapshot": if op == "r" { "true" } else { "false" }, "db": "postgres", "schema": "public", "table": "people", "txId": 556, "lsn": lsn, "xmin": null});
            let payload = json!({"before": before, "after": after, "source": source, "op": op, "ts_ms": 1796120100200i64, "transaction": null});
            let schema = json!({"type": "struct", "fields": [self.row_schema(Some("before")), self.row_schema(Some("after")), {"type": "struct", "fields": [], "optional": false, "name": "io.debezium.connector.postgresql.Source", "field": "source"}, {"type": "string", "optional": false, "field": "op"}, {"type": "int64", "optional": true, "field": "ts_ms"}], "optional": false, "name": format!("{TOPIC}.Envelope")});
            (payload, schema)
        };
        match self.schema {
            true => json!({"schema": schema, "payload": payload}).to_string(),
            false => payload.to_string(),
        }
    }
}

/// `c` cents as `-12.34`.
fn decimal_text(c: i64) -> String {
    let sign = if c < 0 { "-" } else { "" };
    format!("{sign}{}.{:02}", c.abs() / 100, c.abs() % 100)
}

/// The unscaled value as Kafka Connect's Decimal writes it: the shortest
/// big-endian two's complement bytes, base64 with padding.
fn base64_of(c: i64) -> String {
    let bytes = c.to_be_bytes();
    let mut start = 0;
    while start < 7 {
        let (b, next) = (bytes[start], bytes[start + 1]);
        let redundant = (b == 0 && next & 0x80 == 0) || (b == 0xFF && next & 0x80 != 0);
        if !redundant {
            break;
        }
        start += 1;
    }
    let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes[start..].chunks(3) {
        let n =
            chunk.iter().fold(0u32, |acc, &b| acc << 8 | u32::from(b)) << (8 * (3 - chunk.len()));
        for k in 0..4 {
            match k <= chunk.len() {
                true => out.push(alphabet[(n >> (18 - 6 * k) & 63) as usize] as char),
                false => out.push('='),
            }
        }
    }
    out
}

/// A change as Debezium reports it.
#[derive(Debug, Clone)]
struct Change {
    op: &'static str,
    /// The row after it; for a delete, the row before.
    row: Row,
}

/// A source history from a random walk over a few keys: its changes and
/// the table after each prefix of them.
fn history(steps: Vec<(i64, bool, Row)>) -> (Vec<Change>, Vec<BTreeMap<i64, Row>>) {
    let mut table: BTreeMap<i64, Row> = BTreeMap::new();
    let (mut changes, mut states) = (Vec::new(), vec![table.clone()]);
    for (id, delete, mut row) in steps {
        row.id = id;
        let change = match table.get(&id) {
            None => Change {
                op: "c",
                row: row.clone(),
            },
            Some(before) if delete => Change {
                op: "d",
                row: before.clone(),
            },
            Some(_) => Change {
                op: "u",
                row: row.clone(),
            },
        };
        match change.op {
            "d" => table.remove(&id),
            _ => table.insert(id, row),
        };
        changes.push(change);
        states.push(table.clone());
    }
    (changes, states)
}

fn row() -> impl Strategy<Value = Row> {
    let names = vec!["Ann", "Bob, Jr.", "say \"hi\"", "two\nlines", "Zoë"];
    (
        prop::option::weighted(0.8, prop::sample::select(names)),
        prop::option::weighted(0.8, -5_000_000i64..5_000_000),
        prop::option::weighted(0.8, -800i32..20_000),
        0i64..3_600_000,
    )
        .prop_map(|(name, balance, born, ms)| Row {
            id: 0,
            name,
            balance,
            born,
            seen_ms: 1_796_119_200_000 + ms,
        })
}

fn shape() -> impl Strategy<Value = Shape> {
    (any::<[bool; 5]>(), 0u8..3).prop_map(
        |([schema, flat, millis, full_before, tombstones], decimals)| Shape {
            schema,
            flat,
            // Without a schema a number in a timestamp column is microseconds.
            millis: millis && schema,
            decimals,
            full_before,
            tombstones,
        },
    )
}

/// The sink's files: the snapshot at `start`, then the changes after it,
/// each event in its key's partition, a partition's records cut at `cuts`.
fn folder(
    shape: Shape,
    changes: &[Change],
    states: &[BTreeMap<i64, Row>],
    start: usize,
    partitions: i64,
    cuts: &[usize],
) -> Vec<(String, String)> {
    let start = start.min(changes.len());
    let snapshot = states[start].values().map(|r| Change {
        op: "r",
        row: r.clone(),
    });
    let mut records: BTreeMap<i64, Vec<Option<String>>> = BTreeMap::new();
    for (lsn, change) in snapshot.chain(changes[start..].iter().cloned()).enumerate() {
        let partition = records.entry(change.row.id % partitions).or_default();
        partition.push(Some(shape.line(&change, 1000 + lsn as i64)));
        if change.op == "d" {
            // A tombstone takes an offset whether or not the sink writes it.
            partition.push(None);
        }
    }
    let mut files = Vec::new();
    for (p, records) in records {
        let mut bounds: Vec<usize> = cuts.iter().map(|c| c % (records.len() + 1)).collect();
        bounds.extend([0, records.len()]);
        bounds.sort();
        bounds.dedup();
        for pair in bounds.windows(2) {
            let lines: Vec<&str> = records[pair[0]..pair[1]]
                .iter()
                .filter_map(|r| match r {
                    Some(line) => Some(line.as_str()),
                    None => shape.tombstones.then_some("null"),
                })
                .collect();
            let name = format!(
                "topics/{TOPIC}/partition={p}/{TOPIC}+{p}+{:010}.json",
                pair[0]
            );
            files.push((name, lines.join("\n") + "\n"));
        }
    }
    files
}

type Scenario = (Vec<(String, String)>, Vec<Vec<String>>, Vec<usize>);

fn scenario() -> impl Strategy<Value = Scenario> {
    let steps = prop::collection::vec((0i64..8, prop::bool::weighted(0.3), row()), 1..24);
    let cuts = prop::collection::vec(0usize..40, 0..4);
    (shape(), steps, 0usize..12, 1i64..3, cuts).prop_flat_map(
        |(shape, steps, start, partitions, cuts)| {
            let (changes, states) = history(steps);
            let files = folder(shape, &changes, &states, start, partitions, &cuts);
            let last: Vec<Vec<String>> = states[changes.len()].values().map(Row::shown).collect();
            let n = files.len();
            let order = prop::collection::vec(0..n, 0..3)
                .prop_map(move |repeats| (0..n).chain(repeats).collect::<Vec<_>>())
                .prop_shuffle();
            (Just(files), Just(last), order)
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]
    #[test]
    fn any_load_order_of_a_debezium_folder_gives_the_sources_final_rows((files, last, order) in scenario()) {
        let spec = Spec::parse(SPEC, "people.toml").unwrap();
        let got = deltaload_tests::runtime().block_on(async {
            let sb = Sandbox::with_spec(spec.clone());
            let paths: Vec<_> = files.iter().map(|(name, text)| sb.file(name, text)).collect();
            for &i in &order {
                match sb.load(&paths[i], false).await {
                    LoadOutcome::Loaded(done) => assert_eq!(done.figures.rejected, 0, "{done:?}"),
                    LoadOutcome::Skipped { .. } => {}
                    refused => panic!("{}: {refused:?}", files[i].0),
                }
            }
            sb.rows(TableName::Target(spec.datasets[0].clone()), "id, name, balance, born, seen").await
        });
        prop_assert_eq!(got, last);
    }
}

const EXAMPLE_SPEC: &str = include_str!("../../examples/debezium/spec.toml");
const SNAPSHOT: &str = "dbserver1.inventory.customers+0+0000000000.json";
const CHANGES: &str = "dbserver1.inventory.customers+0+0000000003.json";

fn example() -> Sandbox {
    let files: Vec<(String, Vec<u8>)> = [SNAPSHOT, CHANGES]
        .iter()
        .map(|name| {
            let text = std::fs::read(format!("../examples/debezium/customers/{name}"));
            (format!("customers/{name}"), text.expect("example file"))
        })
        .collect();
    crate::example_sandbox(EXAMPLE_SPEC, &files)
}

fn ok(sb: &Sandbox, args: &[&str]) -> String {
    crate::with_spec_ok(sb, args)
}

#[test]
fn the_worked_debezium_example_loads_changes_before_the_snapshot_and_ends_the_same() {
    let sb = example();
    let changes = format!("raw/customers/{CHANGES}");
    let snapshot = format!("raw/customers/{SNAPSHOT}");
    assert_eq!(
        ok(&sb, &["load", &changes, &snapshot]),
        format!(
            "{changes}: 0 rejected, 0 updated, 3 added, 0 deleted, table version 1\n\
             {snapshot}: 0 rejected, 0 updated, 0 added, 0 deleted, table version 1\n"
        )
    );
    let shown = ok(&sb, &["show", "customers", "--format", "csv"]);
    assert_eq!(
        crate::shown_rows(&shown),
        [
            "id,first_name,last_name,email,balance,signed_up,updated_at,_feed_file,_feed_line",
            "1001,Sally,Thomas,sally@thomas.org,120.50,2024-03-01,2026-12-01T09:30:00.250Z,00000000000000000003,1",
            "1003,Edward,Walker,ed@walker.com,25.75,2025-01-20,2026-12-01T09:32:00Z,00000000000000000003,5",
            "1004,Anne,Kretchmar,annek@noanswer.org,999.99,2026-12-01,2026-12-01T09:31:00Z,00000000000000000003,4",
        ],
        "{shown}"
    );
    let check = ok(&sb, &["spec", "check", "spec.toml"]);
    assert!(
        check.contains("preset debezium: Debezium's change events"),
        "{check}"
    );
}

#[test]
fn a_file_the_sink_did_not_name_is_refused_and_lines_that_are_no_event_are_rejected() {
    let sb = example();
    sb.file("customers/customers.json", "{\"payload\":null}\n");
    sb.file(
        "customers/dbserver1.inventory.customers+0+0000000009.json",
        "{\"before\":null,\"after\":{\"id\":1005,\"first_name\":\"A\",\"last_name\":\"B\",\"email\":\"c\"},\"op\":\"c\"}\n\
         {\"before\":null,\"after\":null,\"op\":\"t\"}\n[1]\n{\"id\":1006,\"__deleted\":\"maybe\"}\n",
    );
    let out = crate::with_spec(
        &sb,
        &[
            "load",
            "raw/customers/customers.json",
            "raw/customers/dbserver1.inventory.customers+0+0000000009.json",
        ],
    );
    let text = format!(
        "{}{}",
        deltaload_tests::stdout(&out),
        deltaload_tests::stderr(&out)
    );
    assert!(
        text.contains("raw/customers/customers.json: file name \"customers.json\" is not one the Kafka Connect S3 sink writes"),
        "{text}"
    );
    assert!(
        text.contains("customers+0+0000000009.json: 3 rejected, 0 updated, 1 added"),
        "{text}"
    );
    let rejects = ok(&sb, &["show", "rejected_customers", "--format", "csv"]);
    for reason in [
        "op is \"\"t\"\", an operation deltaload does not apply",
        "is not a JSON object",
        "__deleted is ",
    ] {
        assert!(rejects.contains(reason), "{reason}: {rejects}");
    }
}
