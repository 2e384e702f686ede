//! Tests of committing an upsert's files: conflicts, marks, the writer's
//! settings and appends.

use super::*;
use crate::{lake_url, Lake};
use deltalake::DeltaTable;
use deltaload_core::Dataset;

/// Orders `ids` as rows of the orders table.
pub(crate) fn orders(ids: std::ops::RangeInclusive<i64>) -> RecordBatch {
    let mut csv =
        String::from("order_id,customer_id,status,amount,currency,ordered_at,updated_at\n");
    for id in ids {
        csv.push_str(&format!("{id},C,placed,1.00,EUR,,2026-10-01T00:00:00\n"));
    }
    let d = Dataset::orders();
    let parsed = crate::read_changes(
        &d,
        "/landing/x.csv",
        csv.as_bytes(),
        &deltaload_ingest::rules::NoRules,
    )
    .unwrap()
    .unwrap();
    let changes = deltaload_engine::changes::Changes::of_file(parsed.newest, "/landing/x.csv");
    let mut rows = changes.target_batch(&d, 0).unwrap();
    rows.remove_column(rows.num_columns() - 1);
    rows
}

/// A new lake's orders table, in a folder kept while it lives.
async fn orders_table() -> (tempfile::TempDir, DeltaTable) {
    let dir = tempfile::tempdir().unwrap();
    let root = lake_url(dir.path().to_str().unwrap()).unwrap();
    let lake = Lake::open(&root).await.unwrap();
    (dir, lake.tables.sets[0].target.clone())
}

async fn add(table: &DeltaTable, ids: std::ops::RangeInclusive<i64>) -> Result<u64, LakeError> {
    add_marked(table, ids, None).await
}

async fn add_marked(
    table: &DeltaTable,
    ids: std::ops::RangeInclusive<i64>,
    mark: Option<&str>,
) -> Result<u64, LakeError> {
    use deltalake::datafusion::prelude::lit;
    let predicate =
        crate::table::predicates::column("order_id").between(lit(*ids.start()), lit(*ids.end()));
    let replacement = Replacement {
        rows: Some(orders(ids)),
        written: Vec::new(),
        removes: Vec::new(),
        kept: Vec::new(),
        dv_file: None,
        cdc: Vec::new(),
        predicate: Some(predicate),
        metadata: serde_json::json!({}),
        app: None,
    };
    let mark = mark.map(str::to_string);
    let (table, _) = commit(table, replacement, (8 << 20, mark), "orders").await?;
    Ok(table.version().unwrap_or(0))
}

/// Two upserts that started from the same version: disjoint key ranges
/// both commit, with no retry of ours (delta-rs finds no conflict); a
/// range holding keys the winner added is a conflict, retried by the load.
#[tokio::test]
async fn disjoint_key_ranges_both_commit_and_overlapping_ones_conflict() {
    let (_dir, start) = orders_table().await;
    let first = add(&start, 1..=10).await.unwrap();
    let second = add(&start, 1_000..=1_010).await.unwrap();
    assert_eq!(second, first + 1);
    let overlapping = add(&start, 5..=6).await.unwrap_err();
    assert!(
        crate::table::retry::is_conflict(&overlapping),
        "{overlapping}"
    );
}

/// Commits that set a snapshot's marks conflict even over disjoint key
/// ranges: two snapshots never both commit against the same marks.
#[tokio::test]
async fn two_commits_setting_marks_conflict_over_disjoint_keys() {
    let (_dir, start) = orders_table().await;
    let first = add_marked(&start, 1..=10, Some("{}")).await.unwrap();
    let late = add_marked(&start, 1_000..=1_010, Some("{}")).await;
    let late = late.unwrap_err();
    assert!(crate::table::retry::is_conflict(&late), "{late}");
    let mut table = start.clone();
    table.update_state().await.unwrap();
    assert_eq!(table.version(), Some(first));
    let marks = crate::table::properties::property(
        &table,
        "orders",
        deltaload_engine::snapshot::marks::MARKS_PROPERTY,
    );
    assert_eq!(marks.unwrap().as_deref(), Some("{}"));
}

/// A column of distinct values (order_id here) gives its dictionary up
/// at 64 KiB, not at Parquet's 1 MiB; one of few values (status) keeps
/// its dictionary for all its rows.
#[tokio::test]
async fn a_column_of_distinct_values_gives_its_dictionary_up_early() {
    use deltalake::parquet::file::reader::{FileReader, SerializedFileReader};
    let (_dir, table) = orders_table().await;
    let rows = orders(1..=100_000);
    let adds = write_files(&table, &rows, u64::MAX, "orders")
        .await
        .unwrap();
    let path = deltalake::Path::from(adds[0].path.as_str());
    let bytes = table.object_store().get(&path).await.unwrap();
    let file = SerializedFileReader::new(bytes.bytes().await.unwrap()).unwrap();
    let group = file.metadata().row_group(0);
    let dictionary = |c: usize| {
        let chunk = group.column(c);
        let start = chunk.dictionary_page_offset().expect("a dictionary page");
        (chunk.data_page_offset() - start) as usize
    };
    // 100,000 distinct order ids: 800,000 bytes of dictionary by default.
    assert!(dictionary(0) < 80 * 1024, "{} bytes", dictionary(0));
    assert!(dictionary(2) < 1024, "the status's few values");
    let plain = |c: usize| {
        group
            .column(c)
            .encodings()
            .any(|e| e == deltalake::parquet::basic::Encoding::PLAIN)
    };
    assert!(plain(0), "the ids fall back to plain values");
}

/// An append of more rows than one core encodes writes a file per core in
/// one commit, and the table reads them all.
#[tokio::test]
async fn an_append_writes_a_file_per_core_in_one_commit() {
    let (_dir, table) = orders_table().await;
    let before = table.version();
    let rows = orders(1..=(super::PARALLEL_ROWS as i64 + 1));
    let table = append(&table, &rows, CommitProperties::default(), "orders")
        .await
        .unwrap();
    assert_eq!(table.version(), before.map(|v| v + 1));
    let files = table.get_file_uris().unwrap().count();
    assert_eq!(files, super::cores().max(1));
    let ctx = deltalake::datafusion::prelude::SessionContext::new();
    let name = deltaload_engine::tables::TableName::Target(Dataset::orders());
    let all = deltalake::datafusion::prelude::lit(true);
    let counted = crate::table::select_where(&ctx, &table, &name, &["order_id"], all).await;
    let counted: usize = counted.unwrap().iter().map(RecordBatch::num_rows).sum();
    assert_eq!(counted, rows.num_rows());
}
