//! One change per order: the newest, with a tie rule that does not depend on
//! which file or line came first, so any load order gives the same table.

use crate::record::OrderChange;
use std::cmp::Ordering;
use std::collections::HashMap;

/// The rule, as documented for users and mirrored by the MERGE condition.
pub const NEWEST_WINS_RULE: &str = "a change replaces an order's row only when its updated_at is \
strictly newer; for two different changes with the same updated_at, the one whose \
(status, customer_id, currency, amount, ordered_at) is greater wins, compared column by column \
in that order, text by its UTF-8 bytes, an empty (null) value lowest";

/// The columns compared, in order, when two changes share `updated_at`.
pub const TIE_COLUMNS: [&str; 5] = ["status", "customer_id", "currency", "amount", "ordered_at"];

/// Total order on changes of one order: `Greater` means `a` wins over `b`.
pub fn compare_changes(a: &OrderChange, b: &OrderChange) -> Ordering {
    a.updated_at
        .cmp(&b.updated_at)
        .then_with(|| a.status.cmp(&b.status))
        .then_with(|| a.customer_id.cmp(&b.customer_id))
        .then_with(|| a.currency.cmp(&b.currency))
        .then_with(|| a.amount_cents.cmp(&b.amount_cents))
        .then_with(|| a.ordered_at.cmp(&b.ordered_at))
}

/// Keeps the winning change of each order, sorted by `order_id`.
pub fn newest_per_order(changes: impl IntoIterator<Item = OrderChange>) -> Vec<OrderChange> {
    let mut best: HashMap<i64, OrderChange> = HashMap::new();
    for change in changes {
        match best.get_mut(&change.order_id) {
            Some(kept) => {
                if compare_changes(&change, kept) == Ordering::Greater {
                    *kept = change;
                }
            }
            None => {
                best.insert(change.order_id, change);
            }
        }
    }
    let mut out: Vec<OrderChange> = best.into_values().collect();
    out.sort_unstable_by_key(|c| c.order_id);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn change(id: i64, updated: i64, status: Option<&str>) -> OrderChange {
        OrderChange {
            order_id: id,
            customer_id: Some("C".into()),
            status: status.map(str::to_string),
            amount_cents: Some(100),
            currency: Some("EUR".into()),
            ordered_at: Some(0),
            updated_at: updated,
        }
    }

    #[test]
    fn newest_wins_and_ties_go_by_content() {
        let out = newest_per_order(vec![
            change(2, 5, Some("placed")),
            change(1, 1, Some("placed")),
            change(1, 3, Some("shipped")),
            change(2, 5, Some("cancelled")),
            change(2, 5, None),
            change(1, 2, Some("zzz")),
        ]);
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].status.as_deref(), Some("shipped"));
        assert_eq!(
            out[1].status.as_deref(),
            Some("placed"),
            "placed > cancelled > null"
        );
    }

    fn arb_change() -> impl Strategy<Value = OrderChange> {
        (
            0i64..4,
            0i64..3,
            prop::option::of("[ab]"),
            prop::option::of(0i64..2),
        )
            .prop_map(|(id, updated, status, amount)| OrderChange {
                order_id: id,
                customer_id: None,
                status,
                amount_cents: amount,
                currency: None,
                ordered_at: None,
                updated_at: updated,
            })
    }

    proptest! {
        #[test]
        fn any_order_gives_the_same_winners(mut changes in prop::collection::vec(arb_change(), 0..20), seed in any::<u64>()) {
            let first = newest_per_order(changes.clone());
            // a deterministic shuffle driven by the seed
            let n = changes.len();
            let mut s = seed;
            for i in (1..n).rev() {
                s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                changes.swap(i, (s >> 33) as usize % (i + 1));
            }
            prop_assert_eq!(first, newest_per_order(changes));
        }
    }
}
