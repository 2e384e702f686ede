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

use crate::debezium_events::{Change, Row, Shape, TOPIC};
use deltaload_core::Spec;
use deltaload_lake::{LoadOutcome, TableName};
use deltaload_tests::Sandbox;
use proptest::prelude::*;
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

/// A source history from a random walk over a few keys: its changes and
/// the table after each prefix of them.
pub(crate) fn history(steps: Vec<(i64, bool, Row)>) -> (Vec<Change>, Vec<BTreeMap<i64, Row>>) {
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

pub(crate) fn row() -> impl Strategy<Value = Row> {
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

/// The sink's files' records: the snapshot at `start`, then the changes
/// after it (`record` of each, given its LSN), each in its key's partition,
/// a delete followed by its tombstone (`None`: it takes an offset whether
/// or not the sink writes it), a partition's records cut at `cuts`. Per
/// file: its partition, its start offset and its records.
pub(crate) fn partition_files<T>(
    (changes, states): (&[Change], &[BTreeMap<i64, Row>]),
    (start, partitions): (usize, i64),
    cuts: &[usize],
    record: impl Fn(&Change, i64) -> T,
) -> Vec<(i64, usize, Vec<Option<T>>)> {
    let start = start.min(changes.len());
    let snapshot = states[start].values().map(|r| Change {
        op: "r",
        row: r.clone(),
    });
    let mut records: BTreeMap<i64, Vec<Option<T>>> = BTreeMap::new();
    for (lsn, change) in snapshot.chain(changes[start..].iter().cloned()).enumerate() {
        let partition = records.entry(change.row.id % partitions).or_default();
        partition.push(Some(record(&change, 1000 + lsn as i64)));
        if change.op == "d" {
            partition.push(None);
        }
    }
    let mut files = Vec::new();
    for (p, mut records) in records {
        let mut bounds: Vec<usize> = cuts.iter().map(|c| c % (records.len() + 1)).collect();
        bounds.extend([0, records.len()]);
        bounds.sort();
        bounds.dedup();
        // The last file first, so that each is split off the end.
        for pair in bounds.windows(2).rev() {
            files.push((p, pair[0], records.split_off(pair[0])));
        }
    }
    files.sort_by_key(|(p, first, _)| (*p, *first));
    files
}

/// The sink's JSON Lines files, each event a line in `shape`.
fn folder(
    shape: Shape,
    history: (&[Change], &[BTreeMap<i64, Row>]),
    layout: (usize, i64),
    cuts: &[usize],
) -> Vec<(String, String)> {
    let files = partition_files(history, layout, cuts, |c, lsn| shape.line(c, lsn));
    (files.into_iter())
        .map(|(p, first, records)| {
            let lines: Vec<String> = (records.into_iter())
                .filter_map(|r| r.or_else(|| shape.tombstones.then(|| "null".to_string())))
                .collect();
            let name = format!("topics/{TOPIC}/partition={p}/{TOPIC}+{p}+{first:010}.json");
            (name, lines.join("\n") + "\n")
        })
        .collect()
}

type Scenario = (Vec<(String, String)>, Vec<Vec<String>>, Vec<usize>);

fn scenario() -> impl Strategy<Value = Scenario> {
    let steps = prop::collection::vec((0i64..8, prop::bool::weighted(0.3), row()), 1..24);
    let cuts = prop::collection::vec(0usize..40, 0..4);
    (shape(), steps, 0usize..12, 1i64..3, cuts).prop_flat_map(
        |(shape, steps, start, partitions, cuts)| {
            let (changes, states) = history(steps);
            let files = folder(shape, (&changes, &states), (start, partitions), &cuts);
            let last: Vec<Vec<String>> = states[changes.len()].values().map(Row::shown).collect();
            let n = files.len();
            let order = deltaload_tests::load_order(n);
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
    crate::example_sandbox(
        EXAMPLE_SPEC,
        ("debezium", "customers"),
        &[SNAPSHOT, CHANGES],
    )
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
