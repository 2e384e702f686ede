//! A file spilled in pieces and merged gives the newest change per key of
//! the whole file, in key order.

use super::*;
use crate::aligned::align;
use crate::tables::TableName;
use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::RecordBatch;
use deltaload_core::Spec;
use deltaload_ingest::rules::NoRules;

/// Orders with keys repeated across pieces, equal sequences (the tie-break
/// decides) and a reject.
fn orders_file() -> String {
    let mut csv =
        String::from("order_id,customer_id,status,amount,currency,ordered_at,updated_at\n");
    for i in 0..1_500u32 {
        let id = (i * 7919) % 97;
        let day = 1 + (i % 5);
        let status = ["placed", "shipped", "paid"][(i % 3) as usize];
        csv.push_str(&format!(
            "{id},C{i},{status},1.00,EUR,2026-10-01T00:00:00,2026-10-0{day}T00:00:00\n"
        ));
        if i == 200 {
            csv.push_str("5,C,placed,abc,EUR,,2026-10-01T00:00:00\n");
        }
    }
    csv
}

/// The built-in `orders` dataset and its table's schema.
fn orders() -> (Arc<Dataset>, SchemaRef) {
    let dataset = Spec::builtin().datasets[0].clone();
    let table = TableName::Target(dataset.clone()).schema();
    (dataset, table)
}

#[test]
fn a_file_read_in_pieces_and_merged_is_its_newest_change_per_key() {
    let dir = tempfile::tempdir().unwrap();
    let (dataset, table) = orders();
    let text = orders_file();
    let path = dir.path().join("changes.csv");
    std::fs::write(&path, &text).unwrap();
    // Pieces of 1 KiB: about 100 runs, merged 64 at a time first.
    let budget = MemoryBudget::of(16 << 10, dir.path().to_path_buf());
    let (spilled, rejects) = spill(&dataset, table.clone(), &path, "/x.csv", &budget, &NoRules)
        .unwrap()
        .unwrap();
    assert!(
        (2..=64).contains(&spilled.runs.len()),
        "{} runs",
        spilled.runs.len()
    );
    assert_eq!(rejects.len(), 1);
    assert_eq!(rejects[0].line, 203);
    assert_eq!(spilled.loaded, 1_500);

    let whole = crate::read::read_changes(&dataset, "/landing/x.csv", text.as_bytes(), &NoRules)
        .unwrap()
        .unwrap();
    let changes = crate::changes::Changes::of_file(whole.newest, "/x.csv");
    let expected = align(table, &dataset, &changes, 7, "orders")
        .unwrap()
        .changes;
    let position: Vec<usize> = dataset
        .columns
        .iter()
        .map(|c| expected.schema().index_of(&c.name).unwrap())
        .collect();
    let mut merge =
        Merge::new(&dataset, (&spilled.schema, &spilled.runs), &position, 7, 10).unwrap();
    let mut slices: Vec<RecordBatch> = Vec::new();
    while let Some(slice) = merge.next_slice("orders").unwrap() {
        assert!(slice.num_rows() <= 10);
        slices.push(slice);
    }
    let got = arrow_select::concat::concat_batches(&expected.schema(), &slices).unwrap();
    assert_eq!(merge.given, 97);
    assert_eq!(got, expected);
    let keys = got.column(0).as_primitive::<Int64Type>();
    assert!(
        keys.values().windows(2).all(|w| w[0] < w[1]),
        "in key order"
    );
    let runs = spilled.runs.clone();
    drop(spilled);
    assert!(
        runs.iter().all(|r| !r.exists()),
        "the runs go with the load"
    );
}

/// An AWS DMS change file without a header, `Op` first, keys changed many
/// times across pieces: its order columns (the file's rank, each change's
/// line) are those of the whole file read at once.
#[test]
fn a_preset_file_read_in_pieces_keeps_its_feed_order() {
    let spec = deltaload_core::Spec::parse(
        "[[dataset]]\nname = \"people\"\npreset = \"aws_dms\"\nkeys = [\"id\"]\n\
         columns = [{ name = \"id\", type = \"bigint\" }, { name = \"city\", type = \"string\" }]\n",
        "people.toml",
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let dataset = spec.datasets[0].clone();
    let target = TableName::Target(dataset.clone()).schema();
    let mut text = String::new();
    for i in 0..1_500u32 {
        let op = ["I", "U", "U", "D"][(i % 4) as usize];
        text.push_str(&format!("{op},{},\"c, {i}\"\n", (i * 7919) % 97));
    }
    let path = dir.path().join("20261201-101500123.csv");
    std::fs::write(&path, &text).unwrap();
    let budget = MemoryBudget::of(16 << 10, dir.path().to_path_buf());
    let location = "/landing/20261201-101500123.csv";
    let (spilled, rejects) = spill(&dataset, target.clone(), &path, location, &budget, &NoRules)
        .unwrap()
        .unwrap();
    assert!(spilled.runs.len() >= 2, "{} runs", spilled.runs.len());
    assert_eq!((rejects.len(), spilled.loaded), (0, 1_500));

    let whole = crate::read::read_changes(&dataset, location, text.as_bytes(), &NoRules)
        .unwrap()
        .unwrap();
    let changes = crate::changes::Changes::of_file(whole.newest, location);
    let expected = align(target, &dataset, &changes, 7, "people")
        .unwrap()
        .changes;
    let position: Vec<usize> = (dataset.columns.iter())
        .map(|c| expected.schema().index_of(&c.name).unwrap())
        .collect();
    let mut merge =
        Merge::new(&dataset, (&spilled.schema, &spilled.runs), &position, 7, 10).unwrap();
    let mut slices: Vec<RecordBatch> = Vec::new();
    while let Some(slice) = merge.next_slice("people").unwrap() {
        slices.push(slice);
    }
    let got = arrow_select::concat::concat_batches(&expected.schema(), &slices).unwrap();
    assert_eq!(got, expected);
    let lines = got.column(position[3]).as_primitive::<Int64Type>();
    assert!(
        lines.values().iter().any(|&l| l > 1_400),
        "lines from the file's start"
    );
    let ranks = got.column(position[2]).as_string::<i32>();
    assert!(ranks.iter().all(|r| r == Some("1 20261201-101500123000")));
}

/// Runs of wide rows are written in batches that the merge, holding one of
/// each of up to 64 runs, keeps within the runs' share of the budget
/// (batches of 8,192 rows held whole runs: 16 times a 32 MiB budget).
#[test]
fn runs_of_wide_rows_are_written_in_batches_the_merge_holds_within_the_budget() {
    let dir = tempfile::tempdir().unwrap();
    let (dataset, table) = orders();
    let wide = "x".repeat(1_000);
    let mut text =
        String::from("order_id,customer_id,status,amount,currency,ordered_at,updated_at\n");
    for id in 0..600 {
        text.push_str(&format!(
            "{id},{wide},placed,1.00,EUR,2026-10-01T00:00:00,2026-10-01T00:00:00\n"
        ));
    }
    let path = dir.path().join("wide.csv");
    std::fs::write(&path, &text).unwrap();
    let budget = MemoryBudget::of(1 << 20, dir.path().to_path_buf());
    let (spilled, _) = spill(&dataset, table, &path, "/w.csv", &budget, &NoRules)
        .unwrap()
        .unwrap();
    assert!(spilled.runs.len() >= 2, "{} runs", spilled.runs.len());
    let bound = budget.run_bytes() / FAN_IN as u64;
    let (mut rows, mut biggest) = (0, 0);
    for run in &spilled.runs {
        let file = std::fs::File::open(run).unwrap();
        for batch in arrow_ipc::reader::FileReader::try_new(file, None).unwrap() {
            let batch = batch.unwrap();
            rows += batch.num_rows();
            biggest = biggest.max(batch.num_rows() as u64 * spilled.row_bytes());
        }
    }
    assert_eq!(rows, 600);
    assert!(biggest <= bound, "a batch of {biggest} bytes, over {bound}");
}

/// Breaks the changes of order 13: a rule of the table, as the adapter
/// would evaluate it.
struct Not13;

impl deltaload_ingest::rules::Check for Not13 {
    fn holds(&self, batch: &RecordBatch) -> Result<Vec<arrow_array::BooleanArray>, String> {
        let ids = batch.column(0).as_primitive::<Int64Type>();
        Ok(vec![ids.iter().map(|id| id.map(|i| i != 13)).collect()])
    }
}

/// A file read in pieces rejects the records that break a rule on the same
/// lines, with the same text, as the file read whole: each piece's lines
/// are counted from the file's start.
#[test]
fn records_breaking_a_rule_are_rejected_alike_in_pieces_and_whole() {
    let dir = tempfile::tempdir().unwrap();
    let (dataset, table) = orders();
    let mut with_rule = dataset.as_ref().clone();
    with_rule.rules = vec![deltaload_core::spec::Rule {
        kind: deltaload_core::spec::RuleKind::Constraint,
        name: "not_13".into(),
        expression: "order_id <> 13".into(),
    }];
    let dataset = Arc::new(with_rule);
    let text = orders_file();
    let path = dir.path().join("changes.csv");
    std::fs::write(&path, &text).unwrap();
    let budget = MemoryBudget::of(16 << 10, dir.path().to_path_buf());
    let (spilled, pieces) = spill(&dataset, table, &path, "/x.csv", &budget, &Not13)
        .unwrap()
        .unwrap();
    assert!(spilled.runs_written > 1, "read in pieces");
    let whole = crate::read::read_changes(&dataset, "/x.csv", text.as_bytes(), &Not13)
        .unwrap()
        .unwrap();
    let thirteens = text.lines().filter(|l| l.starts_with("13,")).count();
    assert!(thirteens > 5, "{thirteens}");
    assert_eq!(pieces.len(), thirteens + 1, "every 13 and the parse reject");
    assert_eq!(pieces, whole.rejects);
    let lines: Vec<&str> = text.lines().collect();
    for r in pieces.iter().filter(|r| r.raw.starts_with("13,")) {
        assert_eq!(lines[r.line as usize - 1], r.raw, "line {}", r.line);
    }
    assert_eq!(spilled.loaded, 1_500 - thirteens as u64);
}
