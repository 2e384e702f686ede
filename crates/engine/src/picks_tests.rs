//! Tests of [`Picks`](super::Picks): the row order of the key columns, and
//! the rows an upsert's output and a change data feed pick.

use super::*;
use arrow_array::{Int64Array, StringArray};
use std::sync::Arc;

/// Rows of `id` and `name`.
fn batch(ids: Vec<i64>, names: Vec<Option<&str>>) -> RecordBatch {
    RecordBatch::try_from_iter([
        ("id", Arc::new(Int64Array::from(ids)) as ArrayRef),
        ("name", Arc::new(StringArray::from(names)) as ArrayRef),
    ])
    .unwrap()
}

// Every pair of distinct keys of text (with nulls, empty, a NUL byte, a
// prefix, a multi-byte character) and integers (with nulls, negatives),
// in a scrambled order: the row format orders them as lexsort does.
#[test]
fn the_row_format_order_is_lexsorts() {
    use arrow_ord::sort::{lexsort_to_indices, SortColumn};
    let texts = [
        None,
        Some(""),
        Some("a"),
        Some("a\0"),
        Some("ab"),
        Some("b"),
        Some("\u{e9}"),
    ];
    let ints = [None, Some(-1i64), Some(0), Some(2)];
    let mut keys: Vec<(Option<&str>, Option<i64>)> = texts
        .iter()
        .flat_map(|&t| ints.iter().map(move |&i| (t, i)))
        .collect();
    let n = keys.len();
    for i in 0..n {
        keys.swap(i, (i * 7 + 3) % n);
    }
    let text: ArrayRef = Arc::new(keys.iter().map(|k| k.0).collect::<StringArray>());
    let int: ArrayRef = Arc::new(keys.iter().map(|k| k.1).collect::<Int64Array>());
    let columns = vec![text, int];
    let sort = |c: &ArrayRef| SortColumn {
        values: c.clone(),
        options: None,
    };
    let expected = lexsort_to_indices(&columns.iter().map(sort).collect::<Vec<_>>(), None).unwrap();
    assert_eq!(key_order(&columns).unwrap(), expected);
}

#[test]
fn the_output_keeps_unchanged_rows_drops_deletes_updates_only_the_set_columns_and_sorts() {
    let file = batch(vec![1, 2, 3], vec![Some("a"), Some("b"), Some("c")]);
    let changes = batch(vec![3, 1, 0], vec![Some("C"), Some("A"), Some("N")]);
    let output = |hits: &[(u32, u32, Action)], updated: &[Take]| {
        let mut picks = Picks::default();
        picks.file(0, 3, 1, hits);
        picks.inserts(1, &[2]);
        let out = picks
            .assemble(&[&file, &changes], 2, updated, &[0])
            .unwrap();
        let ids = out[0].as_any().downcast_ref::<Int64Array>().unwrap();
        let names = out[1].as_any().downcast_ref::<StringArray>().unwrap();
        (
            ids.values().to_vec(),
            names
                .iter()
                .flatten()
                .map(str::to_string)
                .collect::<Vec<_>>(),
        )
    };
    let hits = [(0, 1, Action::Delete), (2, 0, Action::Update)];
    assert_eq!(
        output(&hits, &[Take::Set, Take::Kept]),
        (vec![0, 2, 3], vec!["N".into(), "b".into(), "c".into()])
    );
    assert_eq!(
        output(&hits[1..], &[Take::Set, Take::Set]),
        (
            vec![0, 1, 2, 3],
            vec!["N".into(), "a".into(), "b".into(), "C".into()]
        )
    );
    let stale = [(2, 0, Action::Stale)];
    assert_eq!(
        output(&stale, &[Take::Set, Take::Set]).1,
        vec!["N", "a", "b", "c"]
    );
}

#[test]
fn a_null_that_keeps_the_tables_value_keeps_it_only_in_an_updated_row_not_reborn() {
    let file = batch(vec![1, 2], vec![Some("a"), Some("b")]);
    let changes = batch(vec![1, 2, 3], vec![None, Some("B"), None]);
    let names = |take: Take, reborn: Option<Vec<Option<bool>>>| {
        let mut picks = Picks::default();
        if let Some(flags) = reborn {
            picks.reborn_in(1, &arrow_array::BooleanArray::from(flags));
        }
        picks.file(0, 2, 1, &[(0, 0, Action::Update), (1, 1, Action::Update)]);
        picks.inserts(1, &[2]);
        let out = picks
            .assemble(&[&file, &changes], 2, &[Take::Set, take], &[0])
            .unwrap();
        let names = out[1].as_any().downcast_ref::<StringArray>().unwrap();
        names
            .iter()
            .map(|n| n.map(str::to_string))
            .collect::<Vec<_>>()
    };
    let owned = |v: &[Option<&str>]| v.iter().map(|n| n.map(str::to_string)).collect::<Vec<_>>();
    assert_eq!(names(Take::Set, None), owned(&[None, Some("B"), None]));
    let unless_null = owned(&[Some("a"), Some("B"), None]);
    assert_eq!(names(Take::SetUnlessNull, None), unless_null);
    let flags = vec![Some(false), Some(false), Some(false)];
    assert_eq!(names(Take::SetUnlessNull, Some(flags)), unless_null);
    // Change 0 inserts its key afresh: its null is set.
    let flags = vec![None, Some(false), Some(false)];
    let got = names(Take::SetUnlessNull, Some(flags));
    assert_eq!(got, owned(&[None, Some("B"), None]));
}

/// A change data feed's picks: rows as they are (a deleted row, an
/// updated row before), then an update's new version, in the order
/// picked, not sorted; a kept null of an update is the table's value.
#[test]
fn rows_in_order_come_as_picked_with_updates_assembled() {
    let file = batch(vec![1, 2, 3], vec![Some("a"), Some("b"), Some("c")]);
    let changes = batch(vec![3, 2, 0], vec![None, Some("B"), Some("N")]);
    let mut picks = Picks::default();
    picks.rows(0, &[2, 1]);
    picks.updates(
        0,
        1,
        &[
            (1, 1, Action::Update),
            (0, 0, Action::Delete),
            (2, 0, Action::Update),
        ],
    );
    picks.rows(1, &[2]);
    let updated = [Take::Kept, Take::SetUnlessNull];
    let out = picks.in_order(&[&file, &changes], 2, &updated).unwrap();
    let ids = out[0].as_any().downcast_ref::<Int64Array>().unwrap();
    let names = out[1].as_any().downcast_ref::<StringArray>().unwrap();
    assert_eq!(ids.values().to_vec(), vec![3, 2, 2, 3, 0]);
    let names: Vec<_> = names.iter().map(|n| n.map(str::to_string)).collect();
    let expected = ["c", "b", "B", "c", "N"].map(|n| Some(n.to_string()));
    assert_eq!(names, expected);
}

/// Picks in few long runs of one source are gathered run by run, picks in
/// many short runs from the sources' columns concatenated: each gives the
/// rows picked, updates with their set and kept columns.
#[test]
fn runs_and_pooled_gathers_give_the_rows_picked() {
    let source = |from: i64| {
        let ids: Vec<i64> = (from..from + 3000).collect();
        let texts: Vec<String> = ids.iter().map(|i| format!("n{i}")).collect();
        batch(
            ids,
            texts
                .iter()
                .map(|t| (t.len() % 3 != 0).then_some(t.as_str()))
                .collect(),
        )
    };
    let sources = [source(0), source(10_000), source(20_000)];
    let refs: Vec<&RecordBatch> = sources.iter().collect();
    let all: Vec<u32> = (0..3000).collect();
    let hits: Vec<(u32, u32, Action)> = (0..3000).map(|r| (r, 2999 - r, Action::Update)).collect();
    let mut long = Picks::default();
    long.rows(0, &all[..2000]);
    long.rows(1, &all[500..]);
    long.updates(1, 2, &hits);
    let mut short = Picks::default();
    for r in 0..3000u32 {
        short.rows(r as usize % 3, &[r]);
        short.updates(1, 2, &[(r, 2999 - r, Action::Update)]);
    }
    for (name, picks, runs) in [("long", long, true), ("short", short, false)] {
        let identity: Vec<u32> = (0..picks.kept.len() as u32).collect();
        assert_eq!(Runs::of(&picks.kept, &identity).is_some(), runs, "{name}");
        assert_eq!(Runs::of(&picks.set, &identity).is_some(), runs, "{name}");
        let expected = |picks: &[(usize, usize)], column: usize| -> Vec<String> {
            (picks.iter())
                .map(|&(s, r)| format!("{:?}", sources[s].column(column).slice(r, 1)))
                .collect()
        };
        let (ids, names) = (expected(&picks.kept, 0), expected(&picks.set, 1));
        let out = picks.in_order(&refs, 2, &[Take::Kept, Take::Set]).unwrap();
        let got = |column: &ArrayRef| -> Vec<String> {
            (0..column.len())
                .map(|r| format!("{:?}", column.slice(r, 1)))
                .collect()
        };
        assert_eq!(got(&out[0]), ids, "{name}");
        assert_eq!(got(&out[1]), names, "{name}");
    }
}

// The order given with the output says which pick each output row is: here
// the updates picked first are told from the insert picked last.
#[test]
fn the_order_given_says_which_pick_each_row_is() {
    let file = batch(vec![1, 5, 9], vec![Some("a"), Some("e"), Some("i")]);
    let changes = batch(vec![9, 1, 4], vec![Some("I"), Some("A"), Some("D")]);
    let mut picks = Picks::default();
    let hits = [(0, 1, Action::Update), (2, 0, Action::Update)];
    picks.updates(0, 1, &hits);
    let updates = picks.picked();
    picks.inserts(1, &[2]);
    assert_eq!((updates, picks.picked()), (2, 3));
    let (out, order) = picks
        .assemble_ordered(&[&file, &changes], 2, &[Take::Kept, Take::Set], &[0])
        .unwrap();
    let names = out[1].as_any().downcast_ref::<StringArray>().unwrap();
    let names: Vec<_> = names.iter().map(Option::unwrap).collect();
    assert_eq!(names, ["A", "D", "I"]);
    let updated: Vec<bool> = order
        .values()
        .iter()
        .map(|&o| (o as usize) < updates)
        .collect();
    assert_eq!(updated, [true, false, true]);
}
