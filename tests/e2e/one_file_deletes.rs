//! One file of a feed with deletes is written in Arrow as it was read, with
//! only the changes a tombstone bears on (its deletes, and the changes of
//! keys with a remembered delete) replayed row by row; files loaded together
//! in one round are replayed whole. Both ways give each file the same
//! figures and leave the same tables and tombstones.

use crate::deletes::{file_bytes, spec, table_and_tombstones, Change};
use deltaload_core::Reconciliation;
use deltaload_lake::{LoadOptions, LoadOutcome, SourceFile};
use deltaload_tests::Sandbox;
use proptest::prelude::*;

fn change() -> impl Strategy<Value = Change> {
    crate::deletes::change_of(vec!["a", "b"], 1..4, vec![None, Some("u"), Some("d")])
}

/// Files of upserts and deletes in a load order (each file once).
fn files() -> impl Strategy<Value = Vec<Vec<Change>>> {
    prop::collection::vec(prop::collection::vec(change(), 0..7), 2..5)
}

/// Each outcome's figures (`None`: not loaded).
fn figures(outcomes: &[LoadOutcome]) -> Vec<Option<Reconciliation>> {
    (outcomes.iter())
        .map(|o| match o {
            LoadOutcome::Loaded(l) => Some(l.figures),
            _ => None,
        })
        .collect()
}

/// What loading `files` gave: the figures, the sandbox's state, its table
/// and tombstones, and the changes replayed row by row.
type Loaded = (
    Vec<Option<Reconciliation>>,
    Vec<Vec<Vec<String>>>,
    Vec<Vec<Vec<String>>>,
    u64,
);

/// Loads the first file alone, then the others one at a time (`together`
/// false) or as one batch.
async fn load(files: &[Vec<Change>], together: bool) -> Loaded {
    let sb = Sandbox::with_spec(spec("jsonl"));
    let sources: Vec<SourceFile> = (files.iter().enumerate())
        .map(|(i, f)| {
            let bytes = file_bytes("jsonl", f);
            SourceFile::in_memory(format!("/landing/f{i}.jsonl"), bytes)
        })
        .collect();
    let mut lake = sb.lake().await;
    let mut outcomes = Vec::new();
    let (first, rest) = sources.split_at(1);
    let batches: Vec<Vec<SourceFile>> = match together {
        true => vec![first.to_vec(), rest.to_vec()],
        false => sources.iter().map(|s| vec![s.clone()]).collect(),
    };
    for batch in batches {
        let got = lake.load_batch(batch, LoadOptions::default()).await;
        outcomes.extend(got.expect("load"));
    }
    let replayed = lake.writes_by_engine().replayed;
    drop(lake);
    let (rows, dead) = table_and_tombstones(&sb).await;
    (
        figures(&outcomes),
        sb.state().await,
        vec![rows, dead],
        replayed,
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]
    #[test]
    fn a_file_alone_gives_what_its_replay_in_a_round_gives(files in files()) {
        let runtime = deltaload_tests::runtime();
        let alone = runtime.block_on(load(&files, false));
        let together = runtime.block_on(load(&files, true));
        prop_assert_eq!(&alone.0, &together.0, "figures");
        prop_assert_eq!(&alone.1, &together.1, "state");
        prop_assert_eq!(&alone.2, &together.2, "table and tombstones");
        prop_assert!(alone.3 <= together.3, "replayed {} alone, {} together", alone.3, together.3);
    }
}

fn upsert(sku: i32, hour: u32, qty: i32) -> Change {
    Change {
        warehouse: "a",
        sku,
        hour,
        seq: 0,
        qty: Some(qty),
        op: None,
    }
}

fn delete(sku: i32, hour: u32) -> Change {
    Change {
        op: Some("d"),
        qty: None,
        ..upsert(sku, hour, 0)
    }
}

/// Of one file, only the deletes and the keys with a tombstone are replayed:
/// the upserts of other keys go to the table as they were read.
#[tokio::test]
async fn of_one_file_only_the_deletes_and_the_keys_of_tombstones_are_replayed() {
    let files = vec![
        // Three upserts and a delete of a key the table does not hold.
        vec![
            upsert(1, 0, 1),
            upsert(2, 0, 1),
            upsert(3, 0, 1),
            delete(4, 1),
        ],
        // Key 4 has a tombstone (hour 1): the older upsert of it loses, and
        // the delete of key 1 removes its row.
        vec![upsert(2, 1, 2), upsert(4, 0, 2), delete(1, 1)],
        // Key 4 again, newer than its tombstone, which it clears.
        vec![upsert(4, 2, 3), upsert(5, 2, 3)],
    ];
    let (figures, _, tables, replayed) = load(&files, false).await;
    assert_eq!(replayed, 1 + 2 + 1, "{figures:?}");
    let counts: Vec<[u64; 3]> = (figures.iter().flatten())
        .map(|f| [f.inserted, f.updated, f.deleted])
        .collect();
    assert_eq!(counts, [[3, 0, 0], [0, 1, 1], [2, 0, 0]], "{figures:?}");
    let shown =
        |rows: &[Vec<String>]| -> Vec<String> { rows.iter().map(|r| r[1].clone()).collect() };
    assert_eq!(shown(&tables[0]), ["2", "3", "4", "5"], "rows");
    assert_eq!(shown(&tables[1]), ["1"], "tombstones");
}
