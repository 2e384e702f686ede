use super::*;
use arrow_array::{BooleanArray, Int32Array, Int64Array, StringArray};
use deltaload_core::Spec;
use std::sync::Arc;

fn dataset(tracked: &str) -> Arc<Dataset> {
    typed(tracked, "bigint")
}

/// The dataset with an `id` of type `key` (`int`: compared in the row
/// format, not as numbers).
fn typed(tracked: &str, key: &str) -> Arc<Dataset> {
    let text = format!(
        "[[dataset]]\nname = \"p\"\nkeys = [\"id\"]\nsequence_by = [\"at\"]\n\
         history = true\n{tracked}\n\
         delete_when = {{ column = \"op\", in = [\"D\"] }}\n\
         [[dataset.columns]]\nname = \"id\"\ntype = \"{key}\"\n\
         [[dataset.columns]]\nname = \"tier\"\ntype = \"string\"\n\
         [[dataset.columns]]\nname = \"email\"\ntype = \"string\"\n\
         [[dataset.columns]]\nname = \"at\"\ntype = \"bigint\"\n"
    );
    Spec::parse(&text, "p.toml").unwrap().datasets.remove(0)
}

/// A change: key, sequence, delete, tier, email.
type Change = (i64, i64, bool, &'static str, &'static str);

fn batch(changes: &[Change]) -> RecordBatch {
    batch_of(&dataset(""), changes)
}

fn batch_of(d: &Dataset, changes: &[Change]) -> RecordBatch {
    let schema = deltaload_ingest::changes_schema(d);
    let ids: arrow_array::ArrayRef = match schema.field(0).data_type() {
        arrow_schema::DataType::Int32 => Arc::new(Int32Array::from_iter_values(
            changes.iter().map(|c| c.0 as i32),
        )),
        _ => Arc::new(Int64Array::from_iter_values(changes.iter().map(|c| c.0))),
    };
    let columns: Vec<arrow_array::ArrayRef> = vec![
        ids,
        Arc::new(StringArray::from_iter_values(changes.iter().map(|c| c.3))),
        Arc::new(StringArray::from_iter_values(changes.iter().map(|c| c.4))),
        Arc::new(Int64Array::from_iter_values(changes.iter().map(|c| c.1))),
        Arc::new(BooleanArray::from_iter(changes.iter().map(|c| Some(c.2)))),
    ];
    RecordBatch::try_new(schema, columns).unwrap()
}

/// Each version as (key, start, end, tier, email) of the changes it names.
fn shown(
    changes: &[Change],
    folded: &Folded,
) -> Vec<(i64, i64, Option<i64>, &'static str, &'static str)> {
    let mut out: Vec<_> = folded
        .versions
        .iter()
        .map(|v| {
            let (s, e, x) = (
                changes[v.start as usize],
                v.end.map(|e| changes[e as usize].1),
                changes[v.values as usize],
            );
            (s.0, s.1, e, x.3, x.4)
        })
        .collect();
    out.sort();
    out
}

fn folded(tracked: &str, changes: &[Change], from: usize) -> Folded {
    let d = dataset(tracked);
    let tracked = d.history.clone().unwrap().tracked;
    let mine: Vec<bool> = (0..changes.len()).map(|i| i >= from).collect();
    fold(&d, &tracked, &batch(changes), (from, &mine), None).unwrap()
}

#[test]
fn a_key_opens_updates_closes_and_reopens_its_versions() {
    let changes = [
        (1, 30, false, "silver", "a@x"),
        (1, 10, false, "gold", "a@x"),
        (1, 40, false, "silver", "b@x"),
        (1, 50, true, "", ""),
        (1, 60, false, "gold", "b@x"),
        (2, 10, false, "gold", "c@x"),
    ];
    let all = folded("history_columns = [\"tier\"]", &changes, 0);
    assert_eq!(
        shown(&changes, &all),
        vec![
            (1, 10, Some(30), "gold", "a@x"),
            (1, 30, Some(50), "silver", "b@x"),
            (1, 60, None, "gold", "b@x"),
            (2, 10, None, "gold", "c@x"),
        ]
    );
    assert_eq!((all.opened, all.closed), (4, 2));
    // Every column tracked: the email change opens a version.
    let every = folded("", &changes, 0);
    assert_eq!(every.versions.len(), 5);
    // The late change of sequence 10 (the last row here) splits nothing
    // off the front: it opens [10, 30) and closes it; the version that
    // started at 30 keeps its start and end.
    let mut late = changes;
    late.swap(1, 5);
    let split = folded("history_columns = [\"tier\"]", &late, 5);
    assert_eq!(shown(&late, &split), shown(&changes, &all));
    assert_eq!((split.opened, split.closed), (1, 1));
    assert_eq!(split.kept, vec![5]);
}

/// A tracked column's null equals a null only: a change from null to null
/// updates the open version, from a value to null or back opens one.
#[test]
fn a_null_in_a_tracked_column_equals_a_null_only() {
    let changes = [
        (1, 10, false, "", "a@x"),
        (1, 20, false, "", "b@x"),
        (1, 30, false, "", "c@x"),
        (1, 40, false, "", "d@x"),
    ];
    let tiers = [None, None, Some(""), None];
    let d = dataset("history_columns = [\"tier\"]");
    let plain = batch(&changes);
    let mut columns = plain.columns().to_vec();
    columns[1] = Arc::new(StringArray::from(tiers.to_vec()));
    let nulls = RecordBatch::try_new(plain.schema(), columns).unwrap();
    let tracked = d.history.clone().unwrap().tracked;
    let f = fold(&d, &tracked, &nulls, (0, &[true; 4]), None).unwrap();
    let shown: Vec<_> = (f.versions.iter())
        .map(|v| (changes[v.start as usize].1, changes[v.values as usize].4))
        .collect();
    assert_eq!(shown, [(10, "b@x"), (30, "c@x"), (40, "d@x")]);
}

// With no column tracked, every upsert updates the open version.
#[test]
fn with_nothing_tracked_a_key_has_one_version_between_deletes() {
    let changes = [
        (1, 10, false, "gold", "a@x"),
        (1, 20, false, "silver", "b@x"),
        (1, 30, true, "", ""),
        (1, 40, false, "gold", "a@x"),
    ];
    let d = dataset("");
    let mine = [true; 4];
    let f = fold(&d, &[], &batch(&changes), (0, &mine), None).unwrap();
    assert_eq!(
        shown(&changes, &f),
        vec![
            (1, 10, Some(30), "silver", "b@x"),
            (1, 40, None, "gold", "a@x")
        ]
    );
}

#[test]
fn a_change_equal_in_rank_to_one_before_it_is_left_out() {
    // The same change twice (a file loaded again after a crash, or two
    // files holding it): one version.
    let changes = [(1, 10, false, "gold", "a@x"), (1, 10, false, "gold", "a@x")];
    let f = folded("", &changes, 1);
    assert_eq!(shown(&changes, &f), vec![(1, 10, None, "gold", "a@x")]);
    assert!(f.kept.is_empty(), "the log already holds that change");
    assert_eq!((f.opened, f.closed), (0, 0));
}

use crate::test_random as next;

// Any order of the same changes folds to the same versions: 200 random
// sets of up to 12 changes of 3 keys, each folded in 4 shuffled orders.
#[test]
fn any_order_of_the_changes_folds_to_the_same_versions() {
    let tiers = ["gold", "silver"];
    let mut state = 11u64;
    for case in 0..200 {
        let n = 1 + next(&mut state, 12) as usize;
        let mut changes: Vec<Change> = (0..n)
            .map(|i| {
                let key = next(&mut state, 3) as i64;
                let delete = next(&mut state, 5) == 0;
                let tier = tiers[next(&mut state, 2) as usize];
                let email = ["a@x", "b@x"][next(&mut state, 2) as usize];
                (key, i as i64 * 10, delete, tier, email)
            })
            .collect();
        let first = shown(
            &changes,
            &folded("history_columns = [\"tier\"]", &changes, n),
        );
        // An int key is sorted in the row format, a bigint as numbers.
        let int = typed("history_columns = [\"tier\"]", "int");
        let mine = vec![true; n];
        let by_rows = fold(&int, &[1], &batch_of(&int, &changes), (0, &mine), None).unwrap();
        assert_eq!(shown(&changes, &by_rows), first, "case {case}, int key");
        for _ in 0..4 {
            for i in (1..n).rev() {
                changes.swap(i, next(&mut state, i as u64 + 1) as usize);
            }
            let again = folded("history_columns = [\"tier\"]", &changes, n);
            assert_eq!(shown(&changes, &again), first, "case {case}");
        }
    }
}

/// `n` random changes of 3 keys, sequences 0 to 4 (ties frequent), a
/// quarter of them deletes.
fn tied_changes(state: &mut u64, n: usize) -> Vec<Change> {
    (0..n)
        .map(|_| {
            let key = next(state, 3) as i64;
            let delete = next(state, 4) == 0;
            let tier = ["gold", "silver"][next(state, 2) as usize];
            let email = ["a@x", "b@x"][next(state, 2) as usize];
            (key, next(state, 5) as i64, delete, tier, email)
        })
        .collect()
}

// Changes ordered by numbers (a bigint key, one integer sequence) are
// ordered as in the row format, ties of sequence and flag (ranked by the
// tie-break columns, tier and email) and deletes at an equal sequence
// included: 300 random sets of up to 16 changes of 3 keys, sequences 0
// to 4.
#[test]
fn changes_ordered_by_numbers_are_ordered_as_in_the_row_format() {
    let d = dataset("history_columns = [\"tier\"]");
    let width = d.columns.len();
    let position: Vec<usize> = (0..width).collect();
    let (mut state, mut tied) = (5u64, 0);
    for case in 0..300 {
        let n = 1 + next(&mut state, 16) as usize;
        let changes = tied_changes(&mut state, n);
        let b = batch(&changes);
        let order = Order::new(&d, &b.schema(), &position, Some(width)).unwrap();
        let ints = super::super::bigint_key(&d, &b).unwrap();
        let keys = Keys::Ints(ints.values().as_ref());
        let seq = int_sequence(&d, &b)
            .unwrap()
            .expect("the numbers' path is taken");
        let flags = order.deletes(&b).unwrap();
        let by_numbers = by_numbers(ints.values(), (seq.values(), &flags), &order, &b).unwrap();
        let ranks = order.ranks(&b).unwrap().unwrap();
        assert_eq!(
            by_numbers,
            by_rows(&keys, &ranks, n),
            "case {case}: {changes:?}"
        );
        assert_eq!(ordered(&keys, &order, &d, &b).unwrap(), by_numbers);
        let short = |i: u32| {
            (
                changes[i as usize].0,
                changes[i as usize].1,
                changes[i as usize].2,
            )
        };
        tied += usize::from(by_numbers.windows(2).any(|w| short(w[0]) == short(w[1])));
    }
    assert!(
        tied > 50,
        "ties kept apart by their tie-break: {tied} cases"
    );
}

/// The history's difference as the table shows it: versions of `now` whose
/// key and start `before` lacks, and versions of `now` with an end whose
/// key, start and end `before` lacks.
fn difference(before: &[Shown], now: &[Shown]) -> (u64, u64) {
    let opened = (now.iter())
        .filter(|v| !before.iter().any(|b| (b.0, b.1) == (v.0, v.1)))
        .count();
    let closed = (now.iter())
        .filter(|v| v.2.is_some() && !before.iter().any(|b| (b.0, b.1, b.2) == (v.0, v.1, v.2)))
        .count();
    (opened as u64, closed as u64)
}

type Shown = (i64, i64, Option<i64>, &'static str, &'static str);

// A file's figures are the history's difference with and without it, as
// its start and end columns show it: 400 random sets of up to 14 changes
// of 3 keys, sequences 0 to 4 (ties of sequence frequent, a version may
// then open on another change of the same sequence), the file's changes
// the last ones, with one, all or no column tracked.
#[test]
fn a_files_figures_are_the_historys_difference() {
    let (mut state, mut moved) = (23u64, 0);
    let tracking = ["history_columns = [\"tier\"]", "", "history_columns = []"];
    for case in 0..400 {
        let n = 1 + next(&mut state, 14) as usize;
        let changes = tied_changes(&mut state, n);
        let from = next(&mut state, n as u64 + 1) as usize;
        let tracked = tracking[case % 3];
        let old = folded(tracked, &changes[..from], from);
        let now = folded(tracked, &changes, from);
        let expected = difference(&shown(&changes, &old), &shown(&changes, &now));
        assert_eq!(
            (now.opened, now.closed),
            expected,
            "case {case}: {changes:?}, file from {from}"
        );
        // A version opened by another change than before, at the same start.
        let start = |v: &Version| (changes[v.start as usize].0, changes[v.start as usize].1);
        moved += usize::from(now.versions.iter().any(|v| {
            old.versions
                .iter()
                .any(|o| start(o) == start(v) && o.start != v.start)
        }));
    }
    assert!(
        moved > 20,
        "versions opened by another change of their start: {moved} cases"
    );
}

// With the changes' load times (a snapshot dataset's), of two changes of a
// key at an equal sequence the later loaded holds the open version,
// whichever its tie-break and place; without them the tie-break decides.
#[test]
fn at_an_equal_sequence_the_later_loaded_change_wins_given_load_times() {
    let changes = [
        (1, 10, false, "silver", "a@x"),
        (1, 10, false, "gold", "a@x"),
        (2, 10, false, "gold", "a@x"),
        (2, 20, false, "silver", "a@x"),
    ];
    let d = dataset("history_columns = [\"tier\"]");
    let tracked = d.history.clone().unwrap().tracked;
    let b = batch(&changes);
    let open = |arrival: Option<&[i64]>| {
        let f = fold(&d, &tracked, &b, (0, &[true; 4]), arrival).unwrap();
        let open = f.versions.iter().filter(|v| v.end.is_none());
        open.map(|v| changes[v.values as usize].3)
            .collect::<Vec<_>>()
    };
    // "silver" ranks above "gold" by the tie-break (the update columns).
    assert_eq!(open(None), ["silver", "silver"]);
    assert_eq!(open(Some(&[100, 200, 100, 100])), ["gold", "silver"]);
    assert_eq!(open(Some(&[200, 100, 300, 100])), ["silver", "silver"]);
}
