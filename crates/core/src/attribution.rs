//! Several files merged in one commit, with each file's figures as if the files
//! had been loaded one after the other, in the order given.
//!
//! The batch's MERGE writes only the [`Attribution::winners`]: the rows that end
//! up different from the table's. Each file's inserted / updated counts come from
//! replaying the files, in order, against the rows the table held before.

use crate::newest::compare_changes;
use crate::reconcile::MergeCounts;
use crate::record::OrderChange;
use std::cmp::Ordering;
use std::collections::HashMap;

/// The figures and rows of a batch merge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attribution {
    /// Per file, in the order given: what a load of that file alone, after the
    /// files before it, would have inserted and updated.
    pub per_file: Vec<MergeCounts>,
    /// The rows that change the table, sorted by `order_id`, each with the index
    /// of the file whose change it is.
    pub winners: Vec<(usize, OrderChange)>,
    /// What the MERGE of the winners must report: orders new to the table, and
    /// orders of the table replaced.
    pub expected: MergeCounts,
}

/// Replays `files` (each already reduced to its newest change per order) against
/// `current`, the table's rows for the orders they touch.
pub fn attribute(current: &HashMap<i64, OrderChange>, files: &[Vec<OrderChange>]) -> Attribution {
    let mut state: HashMap<i64, (usize, &OrderChange)> = HashMap::new();
    let mut per_file = Vec::with_capacity(files.len());
    for (index, changes) in files.iter().enumerate() {
        let mut counts = MergeCounts::default();
        for change in changes {
            let held = state
                .get(&change.order_id)
                .map(|(_, c)| *c)
                .or_else(|| current.get(&change.order_id));
            match held {
                None => counts.inserted += 1,
                Some(held) if compare_changes(change, held) == Ordering::Greater => {
                    counts.updated += 1
                }
                Some(_) => continue,
            }
            state.insert(change.order_id, (index, change));
        }
        per_file.push(counts);
    }
    let mut expected = MergeCounts::default();
    let mut winners: Vec<(usize, OrderChange)> = state
        .into_iter()
        .map(|(id, (index, change))| {
            if current.contains_key(&id) {
                expected.updated += 1;
            } else {
                expected.inserted += 1;
            }
            (index, change.clone())
        })
        .collect();
    winners.sort_unstable_by_key(|(_, c)| c.order_id);
    Attribution {
        per_file,
        winners,
        expected,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::newest::newest_per_order;
    use proptest::prelude::*;

    fn change(id: i64, updated: i64, status: &str) -> OrderChange {
        OrderChange {
            order_id: id,
            customer_id: None,
            status: Some(status.into()),
            amount_cents: None,
            currency: None,
            ordered_at: None,
            updated_at: updated,
        }
    }

    #[test]
    fn later_files_update_what_earlier_files_inserted() {
        let current = HashMap::from([(1, change(1, 5, "placed"))]);
        let files = vec![
            vec![change(1, 4, "old"), change(2, 1, "placed")],
            vec![change(1, 6, "shipped"), change(2, 2, "shipped")],
            vec![change(2, 2, "shipped")],
        ];
        let a = attribute(&current, &files);
        let counts: Vec<(u64, u64)> = a.per_file.iter().map(|c| (c.inserted, c.updated)).collect();
        assert_eq!(counts, vec![(1, 0), (0, 2), (0, 0)]);
        assert_eq!(
            a.winners,
            vec![(1, change(1, 6, "shipped")), (1, change(2, 2, "shipped"))]
        );
        assert_eq!(
            a.expected,
            MergeCounts {
                inserted: 1,
                updated: 1
            }
        );
    }

    fn arb_change() -> impl Strategy<Value = OrderChange> {
        (0i64..5, 0i64..4, "[ab]").prop_map(|(id, updated, s)| change(id, updated, &s))
    }

    proptest! {
        /// The winners applied to the table equal the files applied one by one, and
        /// each file's counts are those of a MERGE of that file alone at its turn.
        #[test]
        fn equals_loading_the_files_one_by_one(
            table in prop::collection::vec(arb_change(), 0..6),
            files in prop::collection::vec(prop::collection::vec(arb_change(), 0..6), 0..5),
        ) {
            let current: HashMap<i64, OrderChange> =
                newest_per_order(table).into_iter().map(|c| (c.order_id, c)).collect();
            let files: Vec<Vec<OrderChange>> = files.into_iter().map(newest_per_order).collect();
            let a = attribute(&current, &files);

            let mut sequential = current.clone();
            for (i, file) in files.iter().enumerate() {
                let mut counts = MergeCounts::default();
                for c in file {
                    match sequential.get(&c.order_id) {
                        None => counts.inserted += 1,
                        Some(t) if compare_changes(c, t) == Ordering::Greater => counts.updated += 1,
                        Some(_) => continue,
                    }
                    sequential.insert(c.order_id, c.clone());
                }
                prop_assert_eq!(counts, a.per_file[i]);
            }
            let mut batched = current.clone();
            for (_, c) in &a.winners {
                batched.insert(c.order_id, c.clone());
            }
            prop_assert_eq!(batched, sequential);
            prop_assert_eq!(a.expected.inserted + a.expected.updated, a.winners.len() as u64);
        }
    }
}
