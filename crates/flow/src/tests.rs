//! The protocol against the in-memory ports: exactly once whatever repeats,
//! dies or loses a race.

use crate::fake::{Fake, FakeError, FakeFile};
use crate::{load, LoadError, LoadOutcome, Step};
use proptest::prelude::*;
use std::collections::BTreeMap;

fn run<T>(future: impl std::future::Future<Output = T>) -> T {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime")
        .block_on(future)
}

fn loaded(outcome: &LoadOutcome) -> (u64, u64, u64, bool) {
    match outcome {
        LoadOutcome::Loaded(done) => (
            done.figures.records,
            done.figures.inserted,
            done.figures.updated,
            done.recovered,
        ),
        other => panic!("not loaded: {other:?}"),
    }
}

#[tokio::test]
async fn a_file_loads_then_its_redelivery_is_skipped_and_changes_nothing() {
    let mut fake = Fake::default();
    let file = FakeFile::new("/in/a", &[(1, 1), (2, 1), (1, 2)]);
    let first = load(&mut fake, "t", vec![file.clone()], false)
        .await
        .unwrap();
    assert_eq!(loaded(&first[0]), (3, 2, 0, false));
    assert_eq!(fake.held.rows, BTreeMap::from([(1, 2), (2, 1)]));
    let before = fake.held.clone();
    let again = load(&mut fake, "t", vec![file], false).await.unwrap();
    assert_eq!(
        again[0],
        LoadOutcome::Skipped {
            orders_version: Some(0)
        }
    );
    assert_eq!(fake.held, before);
}

#[tokio::test]
async fn the_steps_come_in_the_write_order() {
    let mut fake = Fake::default();
    load(
        &mut fake,
        "t",
        vec![FakeFile::new("/in/a", &[(1, 1)])],
        false,
    )
    .await
    .unwrap();
    use Step::*;
    let order = [
        AfterRead,
        AfterRejected,
        AfterOrders,
        AfterReconciliation,
        AfterLedger,
    ];
    assert_eq!(fake.steps, order);
}

#[tokio::test]
async fn a_copy_in_the_batch_is_skipped_and_a_refused_file_is_recorded_once() {
    let mut fake = Fake::default();
    let a = FakeFile::new("/in/a", &[(1, 1)]);
    let mut bad = FakeFile::new("/in/bad", &[]);
    bad.refused = true;
    let out = load(&mut fake, "t", vec![a.clone(), bad.clone(), a], false)
        .await
        .unwrap();
    assert!(matches!(out[0], LoadOutcome::Loaded(_)));
    assert!(matches!(out[1], LoadOutcome::Refused(_)));
    assert!(matches!(out[2], LoadOutcome::Skipped { .. }));
    let refused: Vec<_> = fake
        .held
        .ledger
        .values()
        .filter(|r| r.0 == "refused")
        .collect();
    assert_eq!(refused.len(), 1);
    assert!(refused[0].2.as_deref().unwrap_or("").contains("no header"));
    // Redelivered, the refusal is reported again and nothing is written.
    fake.writes_left = Some(0);
    let out = load(&mut fake, "t", vec![bad], false).await.unwrap();
    assert!(matches!(out[0], LoadOutcome::Refused(_)));
}

#[tokio::test]
async fn a_round_that_loses_commit_races_runs_again_until_it_wins_or_gives_up() {
    let mut fake = Fake {
        conflicts: 2,
        ..Fake::default()
    };
    let a = FakeFile::new("/in/a", &[(1, 1)]);
    let out = load(&mut fake, "t", vec![a.clone()], false).await.unwrap();
    assert_eq!(loaded(&out[0]), (1, 1, 0, false));
    assert_eq!(fake.pauses, 2);

    let mut fake = Fake {
        conflicts: crate::retry::ATTEMPTS,
        ..Fake::default()
    };
    let err = load(&mut fake, "t", vec![a], false).await.unwrap_err();
    assert!(matches!(
        err,
        LoadError::Conflicts {
            attempts: crate::retry::ATTEMPTS,
            source: FakeError::Conflict
        }
    ));
    assert!(fake.held.ledger.values().all(|r| r.0 != "loaded"));
}

#[tokio::test]
async fn a_file_is_let_go_once_read_and_a_round_run_again_reads_it_no_more() {
    let mut fake = Fake {
        conflicts: 2,
        ..Fake::default()
    };
    let files = vec![
        FakeFile::new("/in/a", &[(1, 1)]),
        FakeFile::new("/in/b", &[(2, 1)]),
    ];
    let out = load(&mut fake, "t", files, false).await.unwrap();
    assert_eq!(loaded(&out[0]), (1, 1, 0, false));
    assert_eq!(loaded(&out[1]), (1, 1, 0, false));
    assert_eq!(fake.pauses, 2);
    assert_eq!(
        fake.contents.len(),
        2,
        "each file read once over three attempts"
    );
    assert_eq!(
        fake.held_at_upsert, [false; 3],
        "no content held by an upsert"
    );
}

#[tokio::test]
async fn a_load_that_died_after_its_commit_is_recovered_with_the_same_figures() {
    let file = FakeFile::new("/in/a", &[(1, 1), (2, 1)]);
    // Writes: loading, rejects, the table: dies before the figures.
    let mut fake = Fake {
        writes_left: Some(3),
        ..Fake::default()
    };
    let died = load(&mut fake, "t", vec![file.clone()], false).await;
    assert!(matches!(died, Err(LoadError::Port(FakeError::Died))));
    fake.writes_left = None;
    let out = load(&mut fake, "t", vec![file], false).await.unwrap();
    assert_eq!(loaded(&out[0]), (2, 2, 0, true));
}

/// A batch of files: locations 0..3, keys 0..4, sequences 0..5; some refused.
fn batches() -> impl Strategy<Value = Vec<Vec<FakeFile>>> {
    let file = (
        0u8..3,
        prop::collection::vec((0u8..4, 0u8..5), 0..5),
        0u64..2,
        0u8..8,
    )
        .prop_map(|(l, changes, rejects, r)| FakeFile {
            location: format!("/in/{l}"),
            changes,
            rejects,
            refused: r == 0,
            content: std::sync::Arc::new(()),
        });
    prop::collection::vec(prop::collection::vec(file, 1..4), 1..4)
}

/// Loads the batches one after another; returns each batch's outcomes.
async fn load_all(fake: &mut Fake, batches: &[Vec<FakeFile>]) -> Vec<Vec<LoadOutcome>> {
    let mut outs = Vec::new();
    for batch in batches {
        outs.push(
            load(fake, "t", batch.clone(), false)
                .await
                .expect("a clean load"),
        );
    }
    outs
}

/// The outcomes without `recovered`, which says how, not what.
fn what(outs: &[Vec<LoadOutcome>]) -> Vec<Vec<LoadOutcome>> {
    let mut outs = outs.to_vec();
    for o in outs.iter_mut().flatten() {
        if let LoadOutcome::Loaded(done) = o {
            done.recovered = false;
        }
    }
    outs
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// For any batches, any budget, rounds that lose commit races (run
    /// again from what their first attempt read), and a process that dies
    /// before any one of its writes: running the batch again leaves every
    /// table and every outcome as a load that never died.
    #[test]
    fn killed_before_any_write_then_rerun_equals_a_clean_load(
        batches in batches(),
        dies_in in 0usize..4,
        dies_at in 0usize..8,
        budget in prop::option::of(0u64..6),
        conflicts in 0u32..4,
    ) {
        let (clean, clean_outs) = run(async {
            let mut fake = Fake { budget, ..Fake::default() };
            let outs = load_all(&mut fake, &batches).await;
            (fake.held, outs)
        });
        let (crashed, outs) = run(async {
            let mut fake = Fake { budget, conflicts, ..Fake::default() };
            let mut outs = Vec::new();
            for (i, batch) in batches.iter().enumerate() {
                if i == dies_in {
                    fake.writes_left = Some(dies_at);
                    let _ = load(&mut fake, "t", batch.clone(), false).await;
                    fake.writes_left = None;
                }
                outs.push(load(&mut fake, "t", batch.clone(), false).await.expect("a rerun"));
            }
            (fake.held, outs)
        });
        prop_assert_eq!(&crashed, &clean);
        // A batch that finished before it died reports its files skipped on
        // the rerun; any other reports what the clean load did.
        if dies_in >= batches.len() {
            prop_assert_eq!(what(&outs), what(&clean_outs));
        }
    }

    /// For any batches: the table holds each key's newest sequence among the
    /// files not refused, every such file is `loaded` with figures that
    /// balance, and loading everything again changes nothing.
    #[test]
    fn the_table_holds_the_newest_change_of_every_file_once(batches in batches()) {
        run(async {
            let mut fake = Fake::default();
            load_all(&mut fake, &batches).await;
            let mut model: BTreeMap<u8, u8> = BTreeMap::new();
            for f in batches.iter().flatten().filter(|f| !f.refused) {
                for &(k, s) in &f.changes {
                    let seq = model.entry(k).or_insert(s);
                    *seq = (*seq).max(s);
                }
            }
            assert_eq!(fake.held.rows, model);
            for (status, figures, _) in fake.held.ledger.values() {
                assert!(status == "loaded" || status == "refused", "{status}");
                assert!(figures.balances());
            }
            let before = fake.held.clone();
            let again = load_all(&mut fake, &batches).await;
            assert_eq!(fake.held, before);
            for o in again.iter().flatten() {
                assert!(!matches!(o, LoadOutcome::Loaded(_)), "{o:?}");
            }
        });
    }
}
