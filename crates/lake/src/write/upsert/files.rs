//! The target files a keyed upsert may touch: the table's files whose key
//! statistics can hold one of the changed keys (files without statistics count),
//! and whether the table uses a feature the keyed upsert leaves to the MERGE.

use crate::table::error::LakeError;
use crate::table::predicates;
use deltalake::datafusion::prelude::{lit, Expr};
use deltalake::kernel::{Add, Remove};
use deltalake::{DeltaTable, Path};

use futures::TryStreamExt;
use serde_json::Value as Json;

/// A data file of the table.
#[derive(Clone)]
pub(crate) struct TargetFile {
    pub path: Path,
    pub remove: Remove,
    /// The file's add action, with its deletion vector if it has one.
    pub add: Add,
}

/// A data file's statistics (`numRecords`, `minValues`, ...) as JSON;
/// `None` when it has none or they do not parse.
pub(crate) fn stats_of(add: &Add) -> Option<Json> {
    serde_json::from_str(add.stats.as_deref()?).ok()
}

/// Why the keyed upsert hands a table to delta-rs's MERGE, or `None` when it
/// handles the table: features it does not write (partitions, column mapping,
/// constraints, generated columns, row tracking). It writes a change data
/// feed itself ([`super::feed`]).
pub(crate) fn unsupported(
    table: &DeltaTable,
) -> Result<Option<String>, deltalake::DeltaTableError> {
    let snapshot = table.snapshot()?;
    let metadata = snapshot.metadata();
    if !metadata.partition_columns().is_empty() {
        return Ok(Some("the table is partitioned".into()));
    }
    let config = metadata.configuration();
    let set = |k: &str, v: &str| config.get(k).is_some_and(|x| x.eq_ignore_ascii_case(v));
    if config
        .get("delta.columnMapping.mode")
        .is_some_and(|m| !m.eq_ignore_ascii_case("none"))
    {
        return Ok(Some("the table uses column mapping".into()));
    }
    if set("delta.enableRowTracking", "true") {
        return Ok(Some("the table tracks row ids".into()));
    }
    if config.keys().any(|k| k.starts_with("delta.constraints.")) {
        return Ok(Some("the table has check constraints".into()));
    }
    let generated = snapshot.schema().fields().any(|f| {
        f.metadata().keys().any(|k| {
            k == "delta.generationExpression"
                || k == "delta.invariants"
                || k.starts_with("delta.identity")
        })
    });
    if generated {
        return Ok(Some(
            "the table has generated, identity or invariant columns".into(),
        ));
    }
    Ok(None)
}

/// The sorted values of the first key column, when its statistics can prune files.
pub(crate) enum KeyBounds {
    Ints(Vec<i64>),
    Texts(Vec<String>),
    None,
}

impl KeyBounds {
    /// The values of `column`, the first key column of changes in Arrow.
    pub fn of_column(column: &deltalake::arrow::array::ArrayRef) -> Self {
        use deltalake::arrow::array::{Array, AsArray};
        use deltalake::arrow::datatypes::{DataType, Int64Type};
        match column.data_type() {
            DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64 => {
                let Ok(ints) = deltalake::arrow::compute::cast(column, &DataType::Int64) else {
                    return KeyBounds::None;
                };
                let ints = ints.as_primitive::<Int64Type>();
                let mut v: Vec<i64> = ints.iter().flatten().collect();
                v.sort_unstable();
                v.dedup();
                KeyBounds::Ints(v)
            }
            DataType::Utf8 => {
                let texts = column.as_string::<i32>();
                let mut v: Vec<String> = (0..texts.len())
                    .filter(|&i| texts.is_valid(i))
                    .map(|i| texts.value(i).to_string())
                    .collect();
                v.sort_unstable();
                v.dedup();
                KeyBounds::Texts(v)
            }
            _ => KeyBounds::None,
        }
    }

    /// The least and greatest values of `self` and `other` (the first and
    /// last slices of a load by slices): for [`KeyBounds::span_predicate`]
    /// only, not to prune files.
    pub fn spanning(&self, other: &Self) -> Self {
        match (self, other) {
            (KeyBounds::Ints(a), KeyBounds::Ints(b)) => {
                let v: Vec<i64> = a.iter().chain(b).copied().collect();
                match (v.iter().min(), v.iter().max()) {
                    (Some(&lo), Some(&hi)) => KeyBounds::Ints(vec![lo, hi]),
                    _ => KeyBounds::Ints(Vec::new()),
                }
            }
            (KeyBounds::Texts(a), KeyBounds::Texts(b)) => {
                let v: Vec<&String> = a.iter().chain(b).collect();
                match (v.iter().min(), v.iter().max()) {
                    (Some(lo), Some(hi)) => KeyBounds::Texts(vec![lo.to_string(), hi.to_string()]),
                    _ => KeyBounds::Texts(Vec::new()),
                }
            }
            _ => KeyBounds::None,
        }
    }

    /// The read predicate covering every key from the least to the greatest
    /// (a load by slices does not keep every key to list their ranges).
    pub fn span_predicate(&self, column: &str) -> Option<Expr> {
        match self {
            KeyBounds::Ints(v) => match (v.iter().min(), v.iter().max()) {
                (Some(&lo), Some(&hi)) => {
                    Some(predicates::column(column).between(lit(lo), lit(hi)))
                }
                _ => None,
            },
            _ => self.predicate(column),
        }
    }

    /// Whether a file of these statistics (an add's JSON) may hold one of
    /// the values of the first key column `key`; a text bound of `prefix`
    /// characters or more may be cut (see [`KeyBounds::may_hold`]).
    pub fn may_hold_stats(&self, stats: Option<&str>, key: &str, prefix: usize) -> bool {
        let stats: Option<Json> = stats.and_then(|s| serde_json::from_str(s).ok());
        let bound = |side: &str| {
            stats
                .as_ref()
                .and_then(|s| s.get(side))
                .and_then(|m| m.get(key))
        };
        self.may_hold(bound("minValues"), bound("maxValues"), prefix)
    }

    /// Whether a file whose first key column lies in `[min, max]` (JSON
    /// statistics; `None` when unknown) may hold one of the values.
    ///
    /// Writers may cut text statistics to a prefix (Spark and Databricks
    /// keep 32 characters, or the table's
    /// `delta.dataSkippingStringPrefixLength`): a cut minimum is still a lower
    /// bound, but a cut maximum is below the file's real greatest key. A
    /// text maximum of `prefix` characters or more is therefore taken as no
    /// upper bound at all; skipping such a file for a key above the prefix
    /// would insert that key a second time.
    fn may_hold(&self, min: Option<&Json>, max: Option<&Json>, prefix: usize) -> bool {
        match self {
            KeyBounds::Ints(v) => match (min.and_then(Json::as_i64), max.and_then(Json::as_i64)) {
                (Some(lo), Some(hi)) => {
                    let i = v.partition_point(|x| *x < lo);
                    v.get(i).is_some_and(|x| *x <= hi)
                }
                _ => true,
            },
            KeyBounds::Texts(v) => {
                let hi = max
                    .and_then(Json::as_str)
                    .filter(|hi| hi.chars().count() < prefix);
                match (min.and_then(Json::as_str), hi) {
                    (Some(lo), Some(hi)) => {
                        let i = v.partition_point(|x| x.as_str() < lo);
                        v.get(i).is_some_and(|x| x.as_str() <= hi)
                    }
                    (Some(lo), None) => v.last().is_some_and(|x| x.as_str() >= lo),
                    _ => true,
                }
            }
            KeyBounds::None => true,
        }
    }

    /// The read predicate of the upsert's commit, over the first key column:
    /// a concurrent commit adding a row in these bounds conflicts. `None`
    /// (the whole table) when the column's statistics cannot tell.
    pub fn predicate(&self, column: &str) -> Option<Expr> {
        match self {
            KeyBounds::Ints(v) if !v.is_empty() => Some(predicates::within_ranges(
                predicates::column(column),
                &predicates::batch_ranges(v),
            )),
            KeyBounds::Texts(v) => match (v.first(), v.last()) {
                (Some(lo), Some(hi)) => {
                    Some(predicates::column(column).between(lit(lo.as_str()), lit(hi.as_str())))
                }
                _ => None,
            },
            _ => None,
        }
    }
}

/// The table's files, split into those whose key statistics may hold one of
/// the changes (`candidates`) and the number skipped; a text maximum of
/// `prefix` characters or more may be cut ([`stats_prefix`]).
pub(crate) async fn candidates(
    table: &DeltaTable,
    key: &str,
    bounds: &KeyBounds,
    prefix: usize,
) -> Result<(Vec<TargetFile>, u64), deltalake::DeltaTableError> {
    let snapshot = table.snapshot()?;
    let log_store = table.log_store();
    let views: Vec<_> = snapshot
        .snapshot()
        .file_views(log_store.as_ref(), None)
        .try_collect()
        .await?;
    let mut kept = Vec::new();
    let mut skipped = 0;
    for view in views {
        if !bounds.may_hold_stats(view.stats().as_deref(), key, prefix) {
            skipped += 1;
            continue;
        }
        kept.push(TargetFile {
            path: view.object_store_path(),
            remove: view.remove_action(true),
            // Deprecated for Arrow arrays, but the commit needs the action
            // itself to add the file back with a deletion vector.
            #[allow(deprecated)]
            add: view.add_action(),
        });
    }
    Ok((kept, skipped))
}

/// The shortest text statistic that may have been cut to a prefix: the
/// table's `delta.dataSkippingStringPrefixLength`, else Spark's 32.
pub(crate) fn stats_prefix(table: &DeltaTable) -> usize {
    const SPARK: usize = 32;
    table
        .snapshot()
        .ok()
        .and_then(|s| {
            s.metadata()
                .configuration()
                .get("delta.dataSkippingStringPrefixLength")
                .and_then(|v| v.parse::<usize>().ok())
        })
        .unwrap_or(SPARK)
        .min(SPARK)
}

/// Errors of this module carry the table's name and location.
pub(crate) fn delta_error(
    table: &DeltaTable,
    label: &str,
) -> impl FnOnce(deltalake::DeltaTableError) -> LakeError {
    let url = table.table_url().clone();
    let label = label.to_string();
    move |e| LakeError::delta(&label, &url)(e)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn integer_bounds_prune_files_between_the_changes() {
        let b = KeyBounds::Ints(vec![1, 5, 100]);
        assert!(b.may_hold(Some(&json!(0)), Some(&json!(1)), 32));
        assert!(b.may_hold(Some(&json!(2)), Some(&json!(7)), 32));
        assert!(!b.may_hold(Some(&json!(6)), Some(&json!(99)), 32));
        assert!(!b.may_hold(Some(&json!(101)), Some(&json!(200)), 32));
        assert!(
            b.may_hold(None, Some(&json!(3)), 32),
            "no statistics: the file counts"
        );
        assert!(
            b.may_hold(Some(&json!("x")), Some(&json!(3)), 32),
            "unreadable: the file counts"
        );
    }

    #[test]
    fn text_bounds_prune_by_bytes_and_quote_the_predicate() {
        let b = KeyBounds::Texts(vec!["b".into(), "d'x".into()]);
        assert!(b.may_hold(Some(&json!("a")), Some(&json!("b")), 32));
        assert!(!b.may_hold(Some(&json!("e")), Some(&json!("z")), 32));
        assert!(!b.may_hold(Some(&json!("ba")), Some(&json!("c")), 32));
        let sql = predicates::sql_of(&b.predicate("k").unwrap()).unwrap();
        assert_eq!(sql, "(k BETWEEN 'b' AND 'd''x')");
    }

    /// A maximum cut to a prefix (as Spark writes statistics) bounds
    /// nothing: a key above the prefix may still be in the file.
    #[test]
    fn a_text_maximum_that_may_be_cut_is_no_upper_bound() {
        let shared = "p".repeat(40);
        let above = KeyBounds::Texts(vec![format!("{shared}z")]);
        let (min, cut) = (json!(format!("{shared}a")), json!("p".repeat(32)));
        assert!(above.may_hold(Some(&min), Some(&cut), 32));
        assert!(
            !above.may_hold(Some(&min), Some(&cut), 33),
            "a bound shorter than the prefix is whole"
        );
        let below = KeyBounds::Texts(vec!["a".into()]);
        assert!(
            !below.may_hold(Some(&min), Some(&cut), 32),
            "the minimum still bounds"
        );
    }

    #[test]
    fn the_span_of_slices_covers_every_key_between_the_first_and_the_last() {
        let (first, last) = (KeyBounds::Ints(vec![3, 9]), KeyBounds::Ints(vec![40, 70]));
        let span = first.spanning(&last);
        let sql = predicates::sql_of(&span.span_predicate("k").unwrap()).unwrap();
        assert_eq!(sql, "(k BETWEEN 3 AND 70)");
        assert!(!last.may_hold_stats(
            Some(r#"{"minValues":{"k":20},"maxValues":{"k":30}}"#),
            "k",
            32
        ));
        let column: deltalake::arrow::array::ArrayRef =
            std::sync::Arc::new(deltalake::arrow::array::Int32Array::from(vec![5, 1, 5]));
        assert!(matches!(KeyBounds::of_column(&column), KeyBounds::Ints(v) if v == vec![1, 5]));
    }
}
