//! Files loaded together: one commit per table, and every table as if the files
//! had been loaded one by one in the order given.

use crate::deltaload;
use deltaload_lake::SourceFile;
use deltaload_tests::{stderr, stdout, Sandbox, HEADER};
use proptest::prelude::*;

#[tokio::test(flavor = "multi_thread")]
async fn a_batch_commits_once_per_table_with_each_file_reported_as_if_loaded_alone() {
    let alone = Sandbox::with_seed_files();
    let out = deltaload(&alone, &["load", "raw/a.csv", "raw/b.csv"], None);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));

    let together = Sandbox::with_seed_files();
    let args = ["load", "--batch-size", "2", "raw/a.csv", "raw/b.csv"];
    let out = deltaload(&together, &args, None);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "raw/a.csv: 1 rejected, 0 updated, 4 added, table version 1\n\
         raw/b.csv: 0 rejected, 2 updated, 1 added, table version 1\n"
    );
    // Each table was created at version 0 and got one commit; the ledger two:
    // the files marked loading before the first write, then loaded after the last.
    let one_commit_each = vec![Some(1), Some(1), Some(2), Some(1)];
    assert_eq!(together.versions().await, one_commit_each);
    assert_eq!(together.state().await, alone.state().await);

    // The same batch again commits nothing.
    let again = deltaload(&together, &args, None);
    assert_eq!(
        stdout(&again),
        "raw/a.csv: already loaded (table version 1), skipped\n\
         raw/b.csv: already loaded (table version 1), skipped\n"
    );
    assert_eq!(together.versions().await, one_commit_each);
}

fn record() -> impl Strategy<Value = String> {
    (
        1i64..5,
        prop::sample::select(vec!["", "placed", "shipped"]),
        prop::sample::select(vec!["1.00", "2.50", "bad"]),
        0u32..3,
    )
        .prop_map(|(id, status, amount, hour)| {
            format!("{id},C1,{status},{amount},EUR,2026-10-01T08:00:00,2026-10-01T1{hour}:00:00\n")
        })
}

/// A file: one of three locations (so one location can get a corrected content)
/// and its records.
fn file() -> impl Strategy<Value = SourceFile> {
    (0..3usize, prop::collection::vec(record(), 0..5)).prop_map(|(slot, rows)| {
        SourceFile::in_memory(
            format!("/landing/f{slot}.csv"),
            format!("{HEADER}{}", rows.concat()).into_bytes(),
        )
    })
}

/// Files in a delivery order (with repeats), and where that order is cut into batches.
fn scenario() -> impl Strategy<Value = (Vec<SourceFile>, Vec<usize>)> {
    prop::collection::vec(file(), 1..6).prop_flat_map(|files| {
        let n = files.len();
        let repeats = prop::collection::vec(prop::sample::select(files.clone()), 0..3);
        let order = (Just(files), repeats)
            .prop_map(|(files, repeats)| files.into_iter().chain(repeats).collect::<Vec<_>>())
            .prop_shuffle();
        (order, prop::collection::vec(1..4usize, n + 3))
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 10, ..ProptestConfig::default() })]
    #[test]
    fn batches_of_any_size_leave_the_tables_of_one_by_one_loads((files, sizes) in scenario()) {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let (one_by_one, batched) = runtime.block_on(async {
            let alone = Sandbox::new();
            let mut lake = alone.lake().await;
            let mut first = Vec::new();
            for file in &files {
                first.push(lake.load(file, Default::default()).await.expect("load"));
            }
            let together = Sandbox::new();
            let mut second = Vec::new();
            let mut rest = files.as_slice();
            for size in sizes.iter().cycle() {
                if rest.is_empty() {
                    break;
                }
                let (batch, tail) = rest.split_at((*size).min(rest.len()));
                second.extend(together.load_batch(batch).await);
                rest = tail;
            }
            let figures = |outcomes: Vec<deltaload_lake::LoadOutcome>| -> Vec<String> {
                outcomes.into_iter().map(|o| match o {
                    deltaload_lake::LoadOutcome::Loaded(l) => format!("{:?}", l.figures),
                    deltaload_lake::LoadOutcome::Skipped { .. } => "skipped".into(),
                    deltaload_lake::LoadOutcome::Refused(_) => "refused".into(),
                }).collect()
            };
            (
                (figures(first), alone.state().await),
                (figures(second), together.state().await),
            )
        });
        prop_assert_eq!(batched, one_by_one);
    }
}
