//! A few closed ranges that cover a set of order ids.
//!
//! A MERGE may skip every `orders` file whose order_id statistics fall
//! outside the ids it changes. One range from the smallest to the largest id
//! skips nothing when a batch touches one old order besides many recent ones;
//! a handful of ranges, split at the widest gaps between the ids, keeps the
//! recent block and each straggler apart.

/// At most `max_ranges` closed ranges `(low, high)`, sorted and disjoint,
/// that together hold every id in `ids` (in any order, repeats allowed).
/// The ranges are split at the widest gaps between consecutive distinct ids,
/// so they hold as few ids outside `ids` as that many ranges can.
/// Empty when `ids` is; one range when `max_ranges` is 0 or 1.
pub fn cover(ids: &[i64], max_ranges: usize) -> Vec<(i64, i64)> {
    let mut sorted = ids.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let (Some(&first), Some(&last)) = (sorted.first(), sorted.last()) else {
        return Vec::new();
    };
    // Gaps between neighbours, widest first; keep the widest `max_ranges - 1`.
    let mut gaps: Vec<(u64, usize)> = sorted
        .windows(2)
        .enumerate()
        .map(|(i, w)| (w[1].abs_diff(w[0]), i))
        .filter(|(width, _)| *width > 1)
        .collect();
    let splits = max_ranges.saturating_sub(1).min(gaps.len());
    if splits > 0 && splits < gaps.len() {
        gaps.select_nth_unstable_by(splits - 1, |a, b| b.cmp(a));
    }
    let mut cuts: Vec<usize> = gaps[..splits].iter().map(|&(_, i)| i).collect();
    cuts.sort_unstable();
    let mut ranges = Vec::with_capacity(cuts.len() + 1);
    let mut low = first;
    for i in cuts {
        ranges.push((low, sorted[i]));
        low = sorted[i + 1];
    }
    ranges.push((low, last));
    ranges
}

#[cfg(test)]
mod tests {
    use super::cover;
    use proptest::prelude::*;

    #[test]
    fn splits_at_the_widest_gaps() {
        let ids = [5, 1_000_001, 7, 1_000_000, 6, 500, 1_000_002];
        assert_eq!(
            cover(&ids, 3),
            vec![(5, 7), (500, 500), (1_000_000, 1_000_002)]
        );
        assert_eq!(cover(&ids, 2), vec![(5, 500), (1_000_000, 1_000_002)]);
        assert_eq!(cover(&ids, 1), vec![(5, 1_000_002)]);
        assert_eq!(cover(&ids, 0), vec![(5, 1_000_002)]);
    }

    #[test]
    fn adjacent_ids_stay_in_one_range_and_extremes_do_not_overflow() {
        assert_eq!(cover(&[3, 1, 2, 2], 10), vec![(1, 3)]);
        assert_eq!(
            cover(&[i64::MIN, i64::MAX], 2),
            vec![(i64::MIN, i64::MIN), (i64::MAX, i64::MAX)]
        );
        assert!(cover(&[], 4).is_empty());
    }

    proptest! {
        #[test]
        fn every_id_is_covered_by_few_sorted_disjoint_ranges(
            ids in proptest::collection::vec(any::<i64>(), 0..200),
            max in 0usize..20,
        ) {
            let ranges = cover(&ids, max);
            prop_assert!(ranges.len() <= max.max(1));
            prop_assert_eq!(ranges.is_empty(), ids.is_empty());
            for w in ranges.windows(2) {
                prop_assert!(w[0].1 < w[1].0);
            }
            for r in &ranges {
                prop_assert!(r.0 <= r.1);
                // Every range starts and ends on an id of the set.
                prop_assert!(ids.contains(&r.0) && ids.contains(&r.1));
            }
            for id in &ids {
                prop_assert!(ranges.iter().any(|&(lo, hi)| lo <= *id && *id <= hi));
            }
        }
    }
}
