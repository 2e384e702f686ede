//! `preset = "aws_dms"`: folders written the way AWS DMS's S3 target writes
//! them (its documentation, not deltaload's behaviour, is the model): a
//! source table's history of inserts, updates and deletes; full-load files
//! (`LOAD00000001.csv` ..., no header, no `Op`) each read at some moment
//! during the full load; change files (`20261201-101500123.csv` ..., `Op`
//! first) holding every change from the full load's start (so changes
//! cached during the full load repeat rows it already holds). Any load
//! order, with repeats, gives the source table's final state.

use deltaload_core::Spec;
use deltaload_lake::TableName;
use deltaload_tests::{stderr, stdout, Sandbox};
use proptest::prelude::*;
use std::collections::BTreeMap;
use std::sync::Arc;

const SPEC: &str = r#"
[[dataset]]
name = "people"
preset = "aws_dms"
format = "FORMAT"
keys = ["id"]
[[dataset.columns]]
name = "id"
type = "bigint"
[[dataset.columns]]
name = "name"
type = "string"
[[dataset.columns]]
name = "city"
type = "string"
[[dataset.columns]]
name = "changed_at"
type = "timestamp"
"#;

/// A row of the source table: name and city may be null.
#[derive(Debug, Clone, PartialEq)]
struct Row {
    id: i64,
    name: Option<&'static str>,
    city: Option<&'static str>,
    /// Seconds after 10:00; the column does not order the changes.
    changed_at: u32,
}

impl Row {
    /// The row as DMS writes it: RFC 4180, an empty field for null.
    fn fields(&self) -> String {
        let quoted = |v: Option<&str>| match v {
            None => String::new(),
            Some(v) if v.contains([',', '"', '\n', '\r']) => {
                format!("\"{}\"", v.replace('"', "\"\""))
            }
            Some(v) => v.to_string(),
        };
        format!(
            "{},{},{},2026-12-01 10:{:02}:{:02}.000000",
            self.id,
            quoted(self.name),
            quoted(self.city),
            self.changed_at / 60,
            self.changed_at % 60
        )
    }

    /// `changed_at` in microseconds since the epoch.
    fn micros(&self) -> i64 {
        (1_796_119_200i64 + i64::from(self.changed_at)) * 1_000_000
    }

    /// The row as the table shows it.
    fn shown(&self) -> Vec<String> {
        let text = |v: Option<&str>| v.map_or("NULL".to_string(), str::to_string);
        vec![
            self.id.to_string(),
            text(self.name),
            text(self.city),
            format!(
                "2026-12-01T10:{:02}:{:02}Z",
                self.changed_at / 60,
                self.changed_at % 60
            ),
        ]
    }
}

/// One change of the source table, in commit order.
#[derive(Debug, Clone)]
enum Change {
    Insert(Row),
    Update(Row),
    /// DMS writes a delete's before-image.
    Delete(Row),
}

impl Change {
    fn parts(&self) -> (&'static str, &Row) {
        match self {
            Self::Insert(r) => ("I", r),
            Self::Update(r) => ("U", r),
            Self::Delete(r) => ("D", r),
        }
    }
}

/// A source table's history, from a random walk over a few keys.
#[derive(Debug, Clone)]
struct Feed {
    changes: Vec<Change>,
    /// The table after each prefix of `changes`.
    states: Vec<BTreeMap<i64, Row>>,
}

fn feed(steps: Vec<(i64, bool, Row)>) -> Feed {
    let mut table: BTreeMap<i64, Row> = BTreeMap::new();
    let mut states = vec![table.clone()];
    let mut changes = Vec::new();
    for (id, delete, mut row) in steps {
        row.id = id;
        let change = match table.get(&id) {
            None => Change::Insert(row.clone()),
            Some(before) if delete => Change::Delete(before.clone()),
            Some(_) => Change::Update(row.clone()),
        };
        match &change {
            Change::Delete(_) => table.remove(&id),
            _ => table.insert(id, row),
        };
        changes.push(change);
        states.push(table.clone());
    }
    Feed { changes, states }
}

fn row() -> impl Strategy<Value = Row> {
    let names = vec!["Ann", "Bob, Jr.", "say \"hi\"", "two\nlines", "Zoë"];
    (
        prop::option::weighted(0.8, prop::sample::select(names)),
        prop::option::weighted(0.7, prop::sample::select(vec!["Boston", "New York"])),
        0u32..3600,
    )
        .prop_map(|(name, city, changed_at)| Row {
            id: 0,
            name,
            city,
            changed_at,
        })
}

/// A DMS folder: its files by name, and the source's final rows.
#[derive(Debug, Clone)]
struct Folder {
    files: Vec<(String, Vec<u8>)>,
    last: Vec<Vec<String>>,
}

/// Rows as DMS writes them to Parquet: `Op` first in a change file (one
/// with operations), none in a full-load file.
fn parquet(rows: &[(Option<&str>, &Row)]) -> Vec<u8> {
    use deltalake::arrow::array::{ArrayRef, Int64Array, StringArray, TimestampMicrosecondArray};
    let mut columns: Vec<(&str, ArrayRef)> = Vec::new();
    if rows.iter().any(|(op, _)| op.is_some()) {
        let ops = StringArray::from_iter(rows.iter().map(|(op, _)| *op));
        columns.push(("Op", Arc::new(ops)));
    }
    let ids = Int64Array::from_iter_values(rows.iter().map(|(_, r)| r.id));
    let names = StringArray::from_iter(rows.iter().map(|(_, r)| r.name));
    let cities = StringArray::from_iter(rows.iter().map(|(_, r)| r.city));
    let times = TimestampMicrosecondArray::from_iter_values(rows.iter().map(|(_, r)| r.micros()));
    // With the table's own type (UTC) a batch is taken whole; without a
    // zone each value is converted: files of both kinds.
    let times = match rows.len() % 2 {
        0 => times.with_timezone("UTC"),
        _ => times,
    };
    columns.extend([
        ("id", Arc::new(ids) as ArrayRef),
        ("name", Arc::new(names)),
        ("city", Arc::new(cities)),
        ("changed_at", Arc::new(times)),
    ]);
    let batch = deltalake::arrow::record_batch::RecordBatch::try_from_iter(columns).unwrap();
    deltaload_tests::parquet_bytes(&batch)
}

/// A file's rows in `format`.
fn file_bytes(parquet_files: bool, rows: &[(Option<&str>, &Row)]) -> Vec<u8> {
    if parquet_files {
        return parquet(rows);
    }
    let line = |(op, r): &(Option<&str>, &Row)| match op {
        Some(op) => format!("{op},{}\n", r.fields()),
        None => format!("{}\n", r.fields()),
    };
    rows.iter().map(line).collect::<String>().into_bytes()
}

/// The feed's folder: the full load starts after change `start`; its
/// files (one per key range) read the table each at a moment from `start`
/// on; the change files hold every change from `start`, cut at `cuts`.
fn folder(feed: &Feed, start: usize, reads: &[usize], cuts: &[usize], pq: bool) -> Folder {
    let n = feed.changes.len();
    let start = start.min(n);
    let ext = if pq { "parquet" } else { "csv" };
    let mut files = Vec::new();
    for (i, &read) in reads.iter().enumerate() {
        let at = start + read % (n - start + 1);
        let range = (i as i64 * 8 / reads.len() as i64)..((i as i64 + 1) * 8 / reads.len() as i64);
        let rows: Vec<(Option<&str>, &Row)> = feed.states[at]
            .range(range)
            .map(|(_, r)| (None, r))
            .collect();
        files.push((format!("LOAD{:08X}.{ext}", i + 1), file_bytes(pq, &rows)));
    }
    let mut bounds: Vec<usize> = cuts.iter().map(|c| start + c % (n - start + 1)).collect();
    bounds.extend([start, n]);
    bounds.sort();
    bounds.dedup();
    for (k, pair) in bounds.windows(2).enumerate() {
        let rows: Vec<(Option<&str>, &Row)> = feed.changes[pair[0]..pair[1]]
            .iter()
            .map(|c| (Some(c.parts().0), c.parts().1))
            .collect();
        files.push((
            format!("20261201-1015{k:02}123.{ext}"),
            file_bytes(pq, &rows),
        ));
    }
    let last = feed.states[n].values().map(Row::shown).collect();
    Folder { files, last }
}

/// A folder, then a load order over all of its files with some loaded again.
fn scenario() -> impl Strategy<Value = (bool, Folder, Vec<usize>)> {
    let steps = prop::collection::vec((0i64..8, prop::bool::weighted(0.3), row()), 1..24);
    let reads = prop::collection::vec(0usize..30, 1..4);
    let cuts = prop::collection::vec(0usize..30, 0..4);
    let pq = any::<bool>();
    (steps, 0usize..12, reads, cuts, pq).prop_flat_map(|(steps, start, reads, cuts, pq)| {
        let folder = folder(&feed(steps), start, &reads, &cuts, pq);
        let n = folder.files.len();
        let order = deltaload_tests::load_order(n);
        (Just(pq), Just(folder), order)
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]
    #[test]
    fn any_load_order_of_a_dms_folder_gives_the_sources_final_rows((pq, folder, order) in scenario()) {
        let format = if pq { "parquet" } else { "csv" };
        let spec = Spec::parse(&SPEC.replace("FORMAT", format), "people.toml").unwrap();
        let got = deltaload_tests::runtime().block_on(async {
            let sb = Sandbox::with_spec(spec.clone());
            let paths: Vec<_> = folder.files.iter().map(|(name, text)| sb.file(name, text)).collect();
            for &i in &order {
                sb.load(&paths[i], false).await;
            }
            sb.rows(TableName::Target(spec.datasets[0].clone()), "id, name, city, changed_at").await
        });
        prop_assert_eq!(got, folder.last);
    }
}

const EXAMPLE_SPEC: &str = include_str!("../../examples/aws_dms/spec.toml");
const EXAMPLE: [&str; 3] = [
    "LOAD00000001.csv",
    "20261201-101500123.csv",
    "20261201-101600456.csv",
];

fn example() -> Sandbox {
    crate::example_sandbox(EXAMPLE_SPEC, ("aws_dms", "employees"), &EXAMPLE)
}

fn ok(sb: &Sandbox, args: &[&str]) -> String {
    crate::with_spec_ok(sb, args)
}

#[test]
fn the_worked_dms_example_loads_newest_last_and_keeps_each_rows_place() {
    let sb = example();
    assert_eq!(
        ok(
            &sb,
            &[
                "load",
                "raw/employees/20261201-101600456.csv",
                "raw/employees/LOAD00000001.csv",
                "raw/employees/20261201-101500123.csv",
            ]
        ),
        "raw/employees/20261201-101600456.csv: 0 rejected, 0 updated, 2 added, 0 deleted, table version 1\n\
         raw/employees/LOAD00000001.csv: 0 rejected, 0 updated, 0 added, 0 deleted, table version 1\n\
         raw/employees/20261201-101500123.csv: 0 rejected, 0 updated, 1 added, 0 deleted, table version 2\n"
    );
    let shown = ok(&sb, &["show", "employees", "--format", "csv"]);
    assert_eq!(
        crate::shown_rows(&shown),
        [
            "id,last_name,first_name,hire_date,city,_feed_file,_feed_line",
            "102,Jones,Ann,2019-05-20,Denver,1 20261201-101600456000,3",
            "103,Lee,\"Kim, Jr.\",2016-03-09,Chicago,1 20261201-101600456000,1",
            "104,Diaz,\"Eva \"\"Evie\"\"\",2018-01-15,Austin,1 20261201-101500123000,5",
        ],
        "{shown}"
    );
    let check = ok(&sb, &["spec", "check", "spec.toml"]);
    assert!(
        check.contains("preset aws_dms: files as AWS DMS's S3 target writes them"),
        "{check}"
    );
}

#[test]
fn a_dms_file_of_another_name_is_refused_and_bad_rows_are_rejected_with_the_reason() {
    let sb = example();
    sb.file(
        "employees/employees.csv",
        "101,Smith,Bob,2014-06-04,Boston\n",
    );
    sb.file(
        "employees/20261201-101700000.csv",
        "X,105,Ng,Al,2020-01-01,Reno\n105,Ng,Al\nOp,id\nU,106,Ho,Jo,2020-02-02,Waco\n",
    );
    sb.file(
        "employees/LOAD00000002.csv",
        "Op,id,last_name,first_name,hire_date,town\nI,107,A,B,2020-01-01,C\n",
    );
    let out = crate::with_spec(
        &sb,
        &[
            "load",
            "raw/employees/employees.csv",
            "raw/employees/20261201-101700000.csv",
            "raw/employees/LOAD00000002.csv",
        ],
    );
    let text = format!("{}{}", stdout(&out), stderr(&out));
    assert!(
        text.contains(
            "raw/employees/employees.csv: file name \"employees.csv\" is not one AWS DMS writes"
        ),
        "{text}"
    );
    assert!(
        text.contains("raw/employees/20261201-101700000.csv: 3 rejected, 0 updated, 1 added"),
        "{text}"
    );
    assert!(
        text.contains("raw/employees/LOAD00000002.csv: header mismatch (missing city; unexpected town) in an AWS DMS header row"),
        "{text}"
    );
    let rejects = ok(&sb, &["show", "rejected_employees", "--format", "csv"]);
    for reason in [
        "\"Op \"\"X\"\" is not an operation: expected one of I, U, D\"",
        "has 3 fields, expected 5 (a full-load row) or 6 (AWS DMS's Op first)",
        "has 2 fields, expected 5 (a full-load row) or 6 (AWS DMS's Op first)",
    ] {
        assert!(rejects.contains(reason), "{reason}: {rejects}");
    }
}
