//! One change per key: the newest by the dataset's sequence, with a tie rule
//! that does not depend on which file or line came first, so any load order
//! gives the same table. Without a sequence the later record wins.

use crate::spec::Dataset;
use crate::value::{Row, Rows, Value};
use std::cmp::Ordering;

/// Keeps the winning change of each key, sorted by key.
pub fn newest_per_key(dataset: &Dataset, changes: impl IntoIterator<Item = Row>) -> Vec<Row> {
    let rows: Vec<Row> = changes.into_iter().collect();
    let winners = newest_indices(dataset, rows.len(), |i| &rows[i]);
    let mut rows: Vec<Option<Row>> = rows.into_iter().map(Some).collect();
    winners.into_iter().filter_map(|i| rows[i].take()).collect()
}

/// The winning change of each key among `rows`, as indexes sorted by key.
pub fn newest_of(dataset: &Dataset, rows: &Rows) -> Vec<usize> {
    newest_indices(dataset, rows.len(), |i| rows.row(i))
}

/// The indexes of the winners among `n` rows, sorted by key. The indexes are
/// sorted by key (stably: file order stays within a key) and each run of one
/// key folded into its winner: no key is copied and no hash table built.
fn newest_indices<'a>(
    dataset: &Dataset,
    n: usize,
    row: impl Fn(usize) -> &'a [Value],
) -> Vec<usize> {
    let order = sorted_by_key(dataset, n, &row);
    let mut out: Vec<usize> = Vec::with_capacity(n);
    for i in order {
        match out.last_mut() {
            Some(kept) if dataset.key_cmp(row(*kept), row(i)) == Ordering::Equal => {
                if dataset.replaces(row(i), row(*kept)) {
                    *kept = i;
                }
            }
            _ => out.push(i),
        }
    }
    out.shrink_to_fit();
    out
}

/// The indexes `0..n` sorted stably by key. When the first key column holds
/// one kind of value in every row, each index carries an order-preserving
/// 8-byte summary of that value ([`prefix`]): most comparisons end there,
/// without reaching into the rows (a text key's bytes live on the heap, one
/// cache miss per look); equal summaries compare the whole keys.
fn sorted_by_key<'a>(
    dataset: &Dataset,
    n: usize,
    row: &impl Fn(usize) -> &'a [Value],
) -> Vec<usize> {
    let kind = |i: usize| {
        dataset
            .keys
            .first()
            .map(|&k| std::mem::discriminant(&row(i)[k]))
    };
    let one_kind = n > 0 && kind(0).is_some() && (1..n).all(|i| kind(i) == kind(0));
    if !one_kind {
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|&a, &b| dataset.key_cmp(row(a), row(b)));
        return order;
    }
    let first = dataset.keys[0];
    let mut keyed: Vec<(u64, usize)> = (0..n).map(|i| (prefix(&row(i)[first]), i)).collect();
    keyed.sort_by(|a, b| {
        a.0.cmp(&b.0)
            .then_with(|| dataset.key_cmp(row(a.1), row(b.1)))
    });
    keyed.into_iter().map(|(_, i)| i).collect()
}

/// An order-preserving summary of a value, for values of one kind: when two
/// summaries differ, the values compare the same way; equal summaries say
/// nothing. Text: its first 8 bytes, zero-padded (a shorter text that is a
/// prefix of another sorts first, as bytes do); numbers with the sign bit
/// flipped; kinds without a summary give 0.
fn prefix(value: &Value) -> u64 {
    match value {
        Value::Int(x) | Value::Timestamp(x) => (*x as u64) ^ (1 << 63),
        Value::Date(x) => u64::from((*x as u32) ^ (1 << 31)),
        Value::Bool(b) => u64::from(*b),
        Value::Text(s) => {
            let mut bytes = [0u8; 8];
            let n = s.len().min(8);
            bytes[..n].copy_from_slice(&s.as_bytes()[..n]);
            u64::from_be_bytes(bytes)
        }
        Value::Null | Value::Double(_) | Value::Decimal(_) => 0,
    }
}

impl Dataset {
    /// Two rows' keys compared, column by column.
    pub fn key_cmp(&self, a: &[Value], b: &[Value]) -> Ordering {
        self.keys
            .iter()
            .map(|&k| a[k].cmp(&b[k]))
            .find(|o| o.is_ne())
            .unwrap_or(Ordering::Equal)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::Spec;
    use proptest::prelude::*;

    fn change(id: i64, updated: i64, status: Option<&str>) -> Row {
        vec![
            Value::Int(id),
            Value::Text("C".into()),
            status.map_or(Value::Null, |s| Value::Text(s.into())),
            Value::Decimal(100.into()),
            Value::Text("EUR".into()),
            Value::Timestamp(0),
            Value::Timestamp(updated),
        ]
    }

    #[test]
    fn newest_wins_and_ties_go_by_content() {
        let orders = Dataset::orders();
        let out = newest_per_key(
            &orders,
            vec![
                change(2, 5, Some("placed")),
                change(1, 1, Some("placed")),
                change(1, 3, Some("shipped")),
                change(2, 5, Some("cancelled")),
                change(2, 5, None),
                change(1, 2, Some("zzz")),
            ],
        );
        assert_eq!(out.len(), 2);
        assert_eq!(out[0][2], Value::Text("shipped".into()));
        assert_eq!(
            out[1][2],
            Value::Text("placed".into()),
            "placed > cancelled > null"
        );
        assert!(orders
            .newest_wins_rule()
            .contains("(status, customer_id, currency, amount, ordered_at)"));
    }

    #[test]
    fn without_a_sequence_the_later_record_wins() {
        let spec = Spec::parse(
            "[[dataset]]\nname = \"t\"\nkeys = [\"k\"]\n[[dataset.columns]]\nname = \"k\"\ntype = \"int\"\n[[dataset.columns]]\nname = \"v\"\ntype = \"string\"\n",
            "t.toml",
        )
        .unwrap();
        let row = |k, v: &str| vec![Value::Int(k), Value::Text(v.into())];
        let out = newest_per_key(
            &spec.datasets[0],
            vec![row(1, "b"), row(1, "a"), row(0, "z")],
        );
        assert_eq!(out, vec![row(0, "z"), row(1, "a")]);
    }

    fn arb_change() -> impl Strategy<Value = Row> {
        (
            0i64..4,
            0i64..3,
            prop::option::of("[ab]"),
            prop::option::of(0i64..2),
        )
            .prop_map(|(id, updated, status, amount)| {
                let mut row = change(id, updated, status.as_deref());
                row[3] = amount.map_or(Value::Null, |a| Value::Decimal(i128::from(a).into()));
                row
            })
    }

    fn arb_value() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            prop_oneof![any::<i64>(), -3i64..3].prop_map(Value::Int),
            prop_oneof![any::<i64>(), -3i64..3].prop_map(Value::Timestamp),
            any::<i32>().prop_map(Value::Date),
            (-3i128..3).prop_map(|d| Value::Decimal(d.into())),
            "[ab\\x00\\x7f-\\u{e9}]{0,10}".prop_map(Value::Text),
        ]
    }

    proptest! {
        // The summaries only shorten comparisons: the order is that of the
        // keys alone, stable, for keys of one kind or mixed.
        #[test]
        fn sorting_with_summaries_equals_sorting_the_keys(
            keys in prop::collection::vec((arb_value(), arb_value()), 0..40),
            one_kind in any::<bool>(),
        ) {
            let spec = Spec::parse(
                "[[dataset]]\nname = \"t\"\nkeys = [\"a\", \"b\"]\n[[dataset.columns]]\nname = \"a\"\ntype = \"string\"\n[[dataset.columns]]\nname = \"b\"\ntype = \"string\"\n",
                "t.toml",
            )
            .unwrap();
            let dataset = &spec.datasets[0];
            let rows: Vec<Row> = keys
                .into_iter()
                .map(|(a, b)| match (one_kind, a) {
                    (true, Value::Text(t)) => vec![Value::Text(t), b],
                    (true, other) => vec![Value::Text(format!("{other:?}")), b],
                    (false, a) => vec![a, b],
                })
                .collect();
            let mut expected: Vec<usize> = (0..rows.len()).collect();
            expected.sort_by(|&x, &y| dataset.key_cmp(&rows[x], &rows[y]));
            prop_assert_eq!(sorted_by_key(dataset, rows.len(), &|i| rows[i].as_slice()), expected);
        }

        #[test]
        fn summaries_keep_the_order_of_values_of_one_kind(a in arb_value(), b in arb_value()) {
            if std::mem::discriminant(&a) == std::mem::discriminant(&b) && prefix(&a) != prefix(&b) {
                prop_assert_eq!(prefix(&a).cmp(&prefix(&b)), a.cmp(&b));
            }
        }

        #[test]
        fn any_order_gives_the_same_winners(mut changes in prop::collection::vec(arb_change(), 0..20), seed in any::<u64>()) {
            let orders = Dataset::orders();
            let first = newest_per_key(&orders, changes.clone());
            // a deterministic shuffle driven by the seed
            let n = changes.len();
            let mut s = seed;
            for i in (1..n).rev() {
                s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                changes.swap(i, (s >> 33) as usize % (i + 1));
            }
            prop_assert_eq!(first, newest_per_key(&orders, changes));
        }
    }
}
