//! The order on Arrow is the documented rule: for random changes of every
//! column type, nulls included, keys compare as `Dataset::key_cmp`, ranks as
//! `Dataset::compare`, and the newest change of each key is the one
//! `deltaload_core::newest_of` picks, its nulls filled as
//! `ignore_null_updates` says.

use crate::{newest_filled, newest_indices, Order};
use arrow_array::RecordBatch;
use deltaload_core::{Dataset, Rows, Spec, Value};
use proptest::prelude::*;
use std::cmp::Ordering;

/// A composite key of text and integer, a two-column sequence, deletes, and
/// a tie-break column of every type.
const SPEC: &str = r#"
[[dataset]]
name = "t"
keys = ["name", "n"]
sequence_by = ["at", "v"]
tie_break = ["ratio", "amount", "day", "ok", "note", "small"]
delete_when = { column = "op", in = ["D"] }
[[dataset.columns]]
name = "name"
type = "string"
[[dataset.columns]]
name = "n"
type = "bigint"
[[dataset.columns]]
name = "at"
type = "timestamp"
[[dataset.columns]]
name = "v"
type = "int"
[[dataset.columns]]
name = "ratio"
type = "double"
[[dataset.columns]]
name = "amount"
type = "decimal(20,2)"
[[dataset.columns]]
name = "day"
type = "date"
[[dataset.columns]]
name = "ok"
type = "boolean"
[[dataset.columns]]
name = "note"
type = "string"
[[dataset.columns]]
name = "small"
type = "int"
"#;

fn dataset() -> std::sync::Arc<Dataset> {
    Spec::parse(SPEC, "t.toml").unwrap().datasets.remove(0)
}

/// Few distinct values per column, so that keys, sequences and tie-break
/// values collide; nulls in every column a change may leave null.
fn row() -> impl Strategy<Value = Vec<Value>> {
    let text = |values: &'static [&'static str]| {
        prop::sample::select(values.to_vec()).prop_map(|s| Value::Text(s.to_string()))
    };
    let or_null = |v: BoxedStrategy<Value>| prop_oneof![1 => Just(Value::Null), 4 => v].boxed();
    (
        text(&["", "a", "a\0", "ab", "é", "Z"]),
        prop::sample::select(vec![i64::MIN, -1, 0, 7]).prop_map(Value::Int),
        prop::sample::select(vec![-5i64, 0, 1_790_000_000_000_000]).prop_map(Value::Timestamp),
        (-1i64..2).prop_map(Value::Int),
        (
            or_null(
                prop::sample::select(vec![-0.0f64, 0.0, 1.5, -2.25, f64::MAX])
                    .prop_map(Value::Double)
                    .boxed(),
            ),
            or_null((-3i128..3).prop_map(|d| Value::Decimal(d.into())).boxed()),
            or_null((-1i32..2).prop_map(Value::Date).boxed()),
            or_null(any::<bool>().prop_map(Value::Bool).boxed()),
            or_null(text(&["", "x", "xy", "\u{1F600}"]).boxed()),
            or_null((-2i64..2).prop_map(Value::Int).boxed()),
        ),
        any::<bool>(),
    )
        .prop_map(
            |(name, n, at, v, (ratio, amount, day, ok, note, small), delete)| {
                vec![
                    name,
                    n,
                    at,
                    v,
                    ratio,
                    amount,
                    day,
                    ok,
                    note,
                    small,
                    Value::Bool(delete),
                ]
            },
        )
}

fn batch(d: &Dataset, rows: &[Vec<Value>]) -> RecordBatch {
    let mut values = Rows::new(d.width());
    for r in rows {
        values.values_mut().extend(r.iter().cloned());
    }
    let batches = deltaload_ingest::from_rows(d, &values).finish().unwrap();
    arrow_select::concat::concat_batches(&deltaload_ingest::changes_schema(d), &batches).unwrap()
}

fn order(d: &Dataset) -> Order {
    let schema = deltaload_ingest::changes_schema(d);
    let position: Vec<usize> = (0..d.columns.len()).collect();
    Order::new(d, &schema, &position, Some(d.columns.len())).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn keys_and_ranks_compare_as_the_documented_rule(rows in prop::collection::vec(row(), 1..40)) {
        let d = dataset();
        let b = batch(&d, &rows);
        let o = order(&d);
        let keys = o.keys(&b).unwrap();
        let ranks = o.ranks(&b).unwrap().unwrap();
        for (i, a) in rows.iter().enumerate() {
            for (j, c) in rows.iter().enumerate() {
                prop_assert_eq!(keys.row(i).cmp(&keys.row(j)), d.key_cmp(a, c), "keys {:?} {:?}", a, c);
                prop_assert_eq!(ranks.row(i).cmp(&ranks.row(j)), d.compare(a, c), "ranks {:?} {:?}", a, c);
            }
        }
        // The ranks of some rows, taken, are those of the same rows.
        let at: Vec<u32> = (0..rows.len() as u32).rev().step_by(2).collect();
        let taken = o.ranks_at(&b, &arrow_array::UInt32Array::from(at.clone())).unwrap().unwrap();
        for (k, &i) in at.iter().enumerate() {
            prop_assert_eq!(taken.row(k), ranks.row(i as usize), "rank of row {}", i);
        }
    }

    #[test]
    fn the_newest_change_of_each_key_is_the_rules(rows in prop::collection::vec(row(), 0..60)) {
        let d = dataset();
        let b = batch(&d, &rows);
        let mut values = Rows::new(d.width());
        for r in &rows {
            values.values_mut().extend(r.iter().cloned());
        }
        let expected: Vec<u32> = deltaload_core::newest_of(&d, &values)
            .into_iter()
            .map(|i| i as u32)
            .collect();
        let got = newest_indices(&order(&d), &b).unwrap();
        prop_assert_eq!(got.values().to_vec(), expected);
    }

    // ignore_null_updates within a file: each winner's null takes the value
    // of the newest older change of its key (one per rank) back to a delete.
    #[test]
    fn a_winners_nulls_are_filled_from_the_older_changes_of_its_key(rows in prop::collection::vec(row(), 0..60)) {
        // One tie-break column: changes of one rank may differ elsewhere.
        let one_tie = SPEC.replace(r#""amount", "day", "ok", "note", "small""#, "");
        let d = Spec::parse(&one_tie, "t.toml").unwrap().datasets.remove(0);
        prop_assert_eq!(d.tie_break.len(), 1);
        let b = batch(&d, &rows);
        let fill: Vec<usize> = (4..10).collect();
        let filled = newest_filled(&order(&d), &b, &fill).unwrap();
        let (winners, sources) = (filled.winners, filled.sources);
        let mut values = Rows::new(d.width());
        for r in &rows {
            values.values_mut().extend(r.iter().cloned());
        }
        let expected_winners = deltaload_core::newest_of(&d, &values);
        prop_assert_eq!(winners.len(), expected_winners.len());
        for (w, &winner) in expected_winners.iter().enumerate() {
            prop_assert_eq!(winners.value(w) as usize, winner);
            let mut chain: Vec<usize> = (0..rows.len())
                .filter(|&i| d.key_cmp(&rows[i], &rows[winner]).is_eq())
                .collect();
            chain.sort_by(|&x, &y| d.compare(&rows[y], &rows[x]).then(x.cmp(&y)));
            chain.dedup_by(|x, y| d.compare(&rows[*x], &rows[*y]).is_eq());
            prop_assert_eq!(chain[0], winner);
            let upserts: Vec<usize> = match d.is_delete(&rows[winner]) {
                true => vec![winner],
                false => chain.iter().copied().take_while(|&i| !d.is_delete(&rows[i])).collect(),
            };
            let reborn = upserts.len() < chain.len() && !d.is_delete(&rows[winner]);
            prop_assert_eq!(filled.reborn[w], reborn, "reborn {:?}", &rows[winner]);
            for (f, &c) in fill.iter().enumerate() {
                let from = upserts.iter().copied().find(|&i| !rows[i][c].is_null()).unwrap_or(winner);
                prop_assert_eq!(sources[f].value(w) as usize, from, "column {} of key {:?}", c, &rows[winner]);
            }
        }
    }

    #[test]
    fn without_a_sequence_the_later_change_wins_on_an_integer_key(
        keys in prop::collection::vec(-3i64..3, 0..50),
    ) {
        let spec = Spec::parse(
            "[[dataset]]\nname = \"u\"\nkeys = [\"k\"]\n[[dataset.columns]]\nname = \"k\"\ntype = \"bigint\"\n",
            "u.toml",
        )
        .unwrap();
        let d = &spec.datasets[0];
        let rows: Vec<Vec<Value>> = keys.iter().map(|&k| vec![Value::Int(k)]).collect();
        let b = batch(d, &rows);
        let mut values = Rows::new(d.width());
        for r in &rows {
            values.values_mut().extend(r.iter().cloned());
        }
        let expected: Vec<u32> = deltaload_core::newest_of(d, &values).into_iter().map(|i| i as u32).collect();
        prop_assert_eq!(newest_indices(&order(d), &b).unwrap().values().to_vec(), expected);
    }
}

#[test]
fn a_delete_outranks_an_upsert_of_its_sequence_and_two_such_deletes_tie() {
    let d = dataset();
    let mk = |note: &str, delete: bool| {
        vec![
            Value::Text("a".into()),
            Value::Int(1),
            Value::Timestamp(1),
            Value::Int(1),
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Text(note.into()),
            Value::Null,
            Value::Bool(delete),
        ]
    };
    let rows = [mk("z", false), mk("a", true), mk("b", true)];
    let ranks = order(&d).ranks(&batch(&d, &rows)).unwrap().unwrap();
    assert_eq!(ranks.row(1).cmp(&ranks.row(0)), Ordering::Greater);
    assert_eq!(ranks.row(1).cmp(&ranks.row(2)), Ordering::Equal);
}
