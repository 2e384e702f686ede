//! The SQL predicates of the MERGE into `orders`: which rows it joins (the
//! order ids, bounded by the batch's ranges) and when a change wins.

use deltaload_core::newest::TIE_COLUMNS;

/// How many order_id ranges the MERGE predicate names at most: enough to
/// keep a block of recent orders and a few stragglers apart, few enough for
/// the predicate to stay short.
pub(crate) const MERGE_RANGES: usize = 32;

/// The MERGE's join predicate: the order ids match, and the target row lies
/// in one of the ranges that cover the batch's ids. The ranges change no
/// match (every source id is inside one) but reach the scan as a filter on
/// the target alone, so files whose order_id statistics miss every range are
/// neither read nor rewritten, and a concurrent commit adding one of these
/// ids still conflicts with this one.
pub(crate) fn join_predicate(ids: &[i64]) -> String {
    let ranges = batch_ranges(ids);
    if ranges.is_empty() {
        return "t.order_id = s.order_id".to_string();
    }
    format!(
        "t.order_id = s.order_id AND ({})",
        within_ranges("t.order_id", &ranges)
    )
}

/// The ranges covering the batch's ids, or the one range from the smallest to
/// the largest when the gaps between them leave out less than half of it: the
/// file statistics then skip about as much, and the scan tests each row
/// against one range instead of 32 (measured on 1,000,000 changes spread over
/// 2,000,000 orders).
pub(crate) fn batch_ranges(ids: &[i64]) -> Vec<(i64, i64)> {
    let ranges = deltaload_core::ranges::cover(ids, MERGE_RANGES);
    let (Some(&(low, _)), Some(&(_, high))) = (ranges.first(), ranges.last()) else {
        return ranges;
    };
    let width = |(l, h): (i64, i64)| i128::from(h) - i128::from(l) + 1;
    let covered: i128 = ranges.iter().copied().map(width).sum();
    if covered * 2 > width((low, high)) {
        vec![(low, high)]
    } else {
        ranges
    }
}

/// `column` lies in one of `ranges`, in SQL.
pub(crate) fn within_ranges(column: &str, ranges: &[(i64, i64)]) -> String {
    let within: Vec<String> = ranges
        .iter()
        .map(|(low, high)| {
            if low == high {
                format!("{column} = {low}")
            } else {
                format!("{column} BETWEEN {low} AND {high}")
            }
        })
        .collect();
    within.join(" OR ")
}

/// `s` wins over `t`: strictly newer, or as new and greater by content.
/// Mirrors [`deltaload_core::newest::compare_changes`] in SQL (nulls lowest).
pub(crate) fn newer_predicate() -> String {
    let mut lex = "FALSE".to_string();
    for c in TIE_COLUMNS.iter().rev() {
        lex = format!(
            "((s.{c} IS NOT NULL AND t.{c} IS NULL) OR s.{c} > t.{c} \
             OR (((s.{c} IS NULL AND t.{c} IS NULL) OR s.{c} = t.{c}) AND {lex}))"
        );
    }
    format!("s.updated_at > t.updated_at OR (s.updated_at = t.updated_at AND {lex})")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_join_predicate_bounds_the_target_by_the_batch_ranges() {
        assert_eq!(join_predicate(&[]), "t.order_id = s.order_id");
        assert_eq!(
            join_predicate(&[90, 3, 4, 5]),
            "t.order_id = s.order_id AND (t.order_id BETWEEN 3 AND 5 OR t.order_id = 90)"
        );
        // Gaps that leave out less than half of the span: one range.
        assert_eq!(
            join_predicate(&[9, 3, 4, 5, 7]),
            "t.order_id = s.order_id AND (t.order_id BETWEEN 3 AND 9)"
        );
        assert_eq!(
            join_predicate(&[i64::MIN, i64::MAX]),
            format!(
                "t.order_id = s.order_id AND (t.order_id = {} OR t.order_id = {})",
                i64::MIN,
                i64::MAX
            )
        );
    }

    #[test]
    fn predicate_names_every_tie_column() {
        let p = newer_predicate();
        for c in TIE_COLUMNS {
            assert!(p.contains(&format!("s.{c} > t.{c}")), "{p}");
        }
        assert!(p.starts_with("s.updated_at > t.updated_at OR"));
    }
}
