//! The rows that replace a rewritten file, and the inserted ones: picked
//! from the file and the changes, an update taking only the columns it
//! sets, then sorted by key so that the files written hold disjoint ranges.

use crate::decide::Action;
use arrow_array::{Array, ArrayRef, RecordBatch, UInt32Array};
use arrow_row::{RowConverter, SortField};
use arrow_schema::ArrowError;
use arrow_select::concat::concat;
use arrow_select::take::take;

/// Where an output column's values come from for an updated row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Take {
    /// The table's row: a column an update leaves.
    Kept,
    /// The change: a column an update sets.
    Set,
    /// The change, unless it is null there: the table's row then
    /// (`ignore_null_updates`).
    SetUnlessNull,
}

/// Where each row of the upsert's output takes its values from: a (source
/// batch, row) pair for the columns an update leaves (`kept`) and for those it
/// sets (`set`); the two differ only for an updated row.
#[derive(Default)]
pub struct Picks {
    kept: Vec<(usize, usize)>,
    set: Vec<(usize, usize)>,
    /// The source of the changes and their delete flags, where a null flag
    /// marks a change that sets its row whole ([`Picks::reborn_in`]).
    reborn: Option<(usize, arrow_array::BooleanArray)>,
}

impl Picks {
    /// Changes of source `changes` whose delete flag in `flags` is null
    /// insert their key afresh (an upsert after a delete in their file):
    /// an update by one sets every column, a null too, even a
    /// [`Take::SetUnlessNull`] one.
    pub fn reborn_in(&mut self, changes: usize, flags: &arrow_array::BooleanArray) {
        if flags.null_count() > 0 {
            self.reborn = Some((changes, flags.clone()));
        }
    }

    /// The rows that replace rewritten file `source` (of `rows` rows): its
    /// rows less those deleted, those updated taking their values from row
    /// `c` of source `changes`. `hits` come in row order.
    pub fn file(
        &mut self,
        source: usize,
        rows: usize,
        changes: usize,
        hits: &[(u32, u32, Action)],
    ) {
        let mut hits = hits.iter().peekable();
        for r in 0..rows {
            let hit = hits.next_if(|h| h.0 as usize == r);
            match hit.map(|h| (h.1 as usize, h.2)) {
                Some((_, Action::Delete)) => {}
                Some((c, Action::Update)) => {
                    self.kept.push((source, r));
                    self.set.push((changes, c));
                }
                _ => {
                    self.kept.push((source, r));
                    self.set.push((source, r));
                }
            }
        }
    }

    /// The new versions of the rows of file `source` that changes update
    /// (merge-on-read: the file itself stays, those rows marked deleted).
    pub fn updates(&mut self, source: usize, changes: usize, hits: &[(u32, u32, Action)]) {
        for &(r, c, _) in hits.iter().filter(|h| h.2 == Action::Update) {
            self.kept.push((source, r as usize));
            self.set.push((changes, c as usize));
        }
    }

    /// Rows `indices` of source `changes`: the keys an upsert inserts.
    pub fn inserts(&mut self, changes: usize, indices: &[u32]) {
        self.rows(changes, indices);
    }

    /// Rows `indices` of source `source`, as they are there: an inserted
    /// key's change, or a table row before a change (a change data feed).
    pub fn rows(&mut self, source: usize, indices: &[u32]) {
        for &r in indices {
            self.kept.push((source, r as usize));
            self.set.push((source, r as usize));
        }
    }

    /// The output's first `width` columns, picked from `sources`, sorted by
    /// the key columns `keys` (so the files written from it hold disjoint key
    /// ranges and a later load touches few of them). `updated[i]`: where
    /// column `i` of an updated row comes from. Each column is the sources' column concatenated
    /// then gathered once (both vectorised; a row-by-row interleave of many
    /// sources is several times slower on text).
    pub fn assemble(
        self,
        sources: &[&RecordBatch],
        width: usize,
        updated: &[Take],
        keys: &[usize],
    ) -> Result<Vec<ArrayRef>, ArrowError> {
        let offsets = offsets(sources)?;
        let kept =
            UInt32Array::from_iter_values(self.kept.iter().map(|&(s, r)| (offsets[s] + r) as u32));
        let key_columns = keys
            .iter()
            .map(|&k| take(pool(sources, k)?.as_ref(), &kept, None))
            .collect::<Result<Vec<_>, _>>()?;
        let order = key_order(&key_columns)?;
        self.gather(sources, &offsets, width, updated, order.values())
    }

    /// The output's first `width` columns as [`Picks::assemble`] makes
    /// them, the rows in the order they were picked.
    pub fn in_order(
        self,
        sources: &[&RecordBatch],
        width: usize,
        updated: &[Take],
    ) -> Result<Vec<ArrayRef>, ArrowError> {
        let offsets = offsets(sources)?;
        let order: Vec<u32> = (0..self.kept.len() as u32).collect();
        self.gather(sources, &offsets, width, updated, &order)
    }

    /// The picked rows' columns, the `o`-th row of the output being the
    /// `order[o]`-th row picked.
    fn gather(
        self,
        sources: &[&RecordBatch],
        offsets: &[usize],
        width: usize,
        updated: &[Take],
        order: &[u32],
    ) -> Result<Vec<ArrayRef>, ArrowError> {
        let permuted = |picks: &[(usize, usize)]| -> UInt32Array {
            UInt32Array::from_iter_values(order.iter().map(|&o| {
                let (s, r) = picks[o as usize];
                (offsets[s] + r) as u32
            }))
        };
        let whole: Option<arrow_array::BooleanArray> = self.reborn.as_ref().map(|(c, flags)| {
            (order.iter())
                .map(|&o| {
                    let (source, row) = self.set[o as usize];
                    Some(source == *c && flags.is_null(row))
                })
                .collect()
        });
        let (kept, set) = (permuted(&self.kept), permuted(&self.set));
        (0..width)
            .map(|i| {
                let pooled = pool(sources, i)?;
                match updated[i] {
                    Take::Kept => take(pooled.as_ref(), &kept, None),
                    Take::Set => take(pooled.as_ref(), &set, None),
                    Take::SetUnlessNull => {
                        let set = take(pooled.as_ref(), &set, None)?;
                        let kept = take(pooled.as_ref(), &kept, None)?;
                        set_unless_null(&set, &kept, whole.as_ref())
                    }
                }
            })
            .collect()
    }
}

/// Where each source's rows start among all of them; an error past `u32` rows.
fn offsets(sources: &[&RecordBatch]) -> Result<Vec<usize>, ArrowError> {
    let mut offsets = Vec::with_capacity(sources.len());
    let mut total = 0usize;
    for b in sources {
        offsets.push(total);
        total += b.num_rows();
    }
    if u32::try_from(total).is_err() {
        return Err(ArrowError::ComputeError(format!(
            "{total} rows to rewrite in one load: more than a load can hold"
        )));
    }
    Ok(offsets)
}

/// Column `i` of every source, concatenated.
fn pool(sources: &[&RecordBatch], i: usize) -> Result<ArrayRef, ArrowError> {
    let arrays: Vec<&dyn Array> = sources.iter().map(|b| b.column(i).as_ref()).collect();
    concat(&arrays)
}

/// `set`'s values, `kept`'s where `set` is null but in a `whole` row.
fn set_unless_null(
    set: &ArrayRef,
    kept: &ArrayRef,
    whole: Option<&arrow_array::BooleanArray>,
) -> Result<ArrayRef, ArrowError> {
    let Some(nulls) = set.logical_nulls() else {
        return Ok(set.clone());
    };
    let mut valid = arrow_array::BooleanArray::new(nulls.into_inner(), None);
    if let Some(whole) = whole {
        valid = either(&valid, whole)?;
    }
    arrow_select::zip::zip(&valid, set, kept)
}

/// `a | b`, row by row (neither has nulls).
fn either(
    a: &arrow_array::BooleanArray,
    b: &arrow_array::BooleanArray,
) -> Result<arrow_array::BooleanArray, ArrowError> {
    if a.len() != b.len() {
        return Err(ArrowError::ComputeError(format!(
            "{} rows against {} whole-row flags",
            a.len(),
            b.len()
        )));
    }
    Ok(arrow_array::BooleanArray::new(
        a.values() | b.values(),
        None,
    ))
}

/// The rows' order by the key columns, as `lexsort_to_indices` gives it; on
/// Arrow's row format for several columns (a `memcmp` per comparison, not a
/// comparator per column: twice as fast on a text-and-integer key).
fn key_order(columns: &[ArrayRef]) -> Result<UInt32Array, ArrowError> {
    if let [one] = columns {
        return arrow_ord::sort::sort_to_indices(one, None, None);
    }
    let fields = columns
        .iter()
        .map(|c| SortField::new(c.data_type().clone()))
        .collect();
    let rows = RowConverter::new(fields)?.convert_columns(columns)?;
    let mut order: Vec<u32> = (0..rows.num_rows() as u32).collect();
    order.sort_by(|&a, &b| rows.row(a as usize).cmp(&rows.row(b as usize)));
    Ok(UInt32Array::from(order))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Int64Array, StringArray};
    use std::sync::Arc;

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
        let expected =
            lexsort_to_indices(&columns.iter().map(sort).collect::<Vec<_>>(), None).unwrap();
        assert_eq!(key_order(&columns).unwrap(), expected);
    }

    #[test]
    fn the_output_keeps_unchanged_rows_drops_deletes_updates_only_the_set_columns_and_sorts() {
        let batch = |ids: Vec<i64>, names: Vec<&str>| {
            RecordBatch::try_from_iter([
                ("id", Arc::new(Int64Array::from(ids)) as ArrayRef),
                ("name", Arc::new(StringArray::from(names)) as ArrayRef),
            ])
            .unwrap()
        };
        let file = batch(vec![1, 2, 3], vec!["a", "b", "c"]);
        let changes = batch(vec![3, 1, 0], vec!["C", "A", "N"]);
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
        let batch = |ids: Vec<i64>, names: Vec<Option<&str>>| {
            RecordBatch::try_from_iter([
                ("id", Arc::new(Int64Array::from(ids)) as ArrayRef),
                ("name", Arc::new(StringArray::from(names)) as ArrayRef),
            ])
            .unwrap()
        };
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
        let owned =
            |v: &[Option<&str>]| v.iter().map(|n| n.map(str::to_string)).collect::<Vec<_>>();
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
        let batch = |ids: Vec<i64>, names: Vec<Option<&str>>| {
            RecordBatch::try_from_iter([
                ("id", Arc::new(Int64Array::from(ids)) as ArrayRef),
                ("name", Arc::new(StringArray::from(names)) as ArrayRef),
            ])
            .unwrap()
        };
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
}
