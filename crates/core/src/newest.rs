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
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| dataset.key_cmp(row(a), row(b)));
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

    proptest! {
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
