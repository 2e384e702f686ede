//! A file spilled in pieces and merged gives the newest change per key of
//! the whole file, in key order.

use super::*;
use crate::upsert::align;
use crate::{lake_url, Lake};
use deltalake::arrow::array::{AsArray, RecordBatch};
use deltalake::arrow::datatypes::Int64Type;

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

#[tokio::test]
async fn a_file_read_in_pieces_and_merged_is_its_newest_change_per_key() {
    let dir = tempfile::tempdir().unwrap();
    let lake = Lake::open(&lake_url(dir.path().join("lake").to_str().unwrap()).unwrap())
        .await
        .unwrap();
    let dataset = lake.sets[0].dataset.clone();
    let text = orders_file();
    let path = dir.path().join("changes.csv");
    std::fs::write(&path, &text).unwrap();
    // Pieces of 1 KiB: about 100 runs, merged 64 at a time first.
    let budget = MemoryBudget::of(16 << 10, dir.path().to_path_buf());
    let (spilled, rejects) = spill(&dataset, &lake.sets[0].target, &path, "/x.csv", &budget)
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

    let whole = crate::read_changes(&dataset, text.as_bytes())
        .unwrap()
        .unwrap();
    let changes = crate::changes::Changes::of_file(whole.newest, "/x.csv");
    let expected = align(&lake.sets[0].target, &dataset, &changes, 7, "orders")
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
    let got = deltalake::arrow::compute::concat_batches(&expected.schema(), &slices).unwrap();
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
