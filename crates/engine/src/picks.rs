//! The rows that replace a rewritten file, and the inserted ones: picked
//! from the file and the changes, an update taking only the columns it
//! sets, then sorted by key so that the files written hold disjoint ranges.

use crate::decide::Action;
use arrow_array::{Array, ArrayRef, RecordBatch, UInt32Array};
use arrow_row::{RowConverter, SortField};
use arrow_schema::{ArrowError, SchemaRef};
use arrow_select::concat::concat;
use arrow_select::take::take;
use deltaload_core::Dataset;

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

/// Per table column, where an updated row takes it from: the change for the
/// update columns and the lineage columns (unless null, for the
/// [`Dataset::keep_on_null`] ones), the table's row for the others.
pub fn updated_mask(dataset: &Dataset, schema: &SchemaRef) -> Vec<Take> {
    let named = |cols: &[usize]| -> Vec<&str> {
        cols.iter()
            .map(|&i| dataset.columns[i].name.as_str())
            .collect()
    };
    let mut set = named(&dataset.update);
    set.extend(deltaload_core::spec::LINEAGE_COLUMNS);
    let unless_null = named(&dataset.keep_on_null);
    schema
        .fields()
        .iter()
        .map(|f| match f.name().as_str() {
            n if unless_null.contains(&n) => Take::SetUnlessNull,
            n if set.contains(&n) => Take::Set,
            _ => Take::Kept,
        })
        .collect()
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
    /// column `i` of an updated row comes from. Each column is the sources'
    /// column concatenated then gathered once (both vectorised; a row-by-row
    /// interleave of many sources is several times slower on text), or,
    /// when the picked rows come in few long runs of one source, each run
    /// gathered from its source and the runs concatenated.
    pub fn assemble(
        self,
        sources: &[&RecordBatch],
        width: usize,
        updated: &[Take],
        keys: &[usize],
    ) -> Result<Vec<ArrayRef>, ArrowError> {
        Ok(self.assemble_ordered(sources, width, updated, keys)?.0)
    }

    /// [`Picks::assemble`], and the order it gave the rows: the `o`-th row
    /// of the output is the `order[o]`-th row picked.
    pub fn assemble_ordered(
        self,
        sources: &[&RecordBatch],
        width: usize,
        updated: &[Take],
        keys: &[usize],
    ) -> Result<(Vec<ArrayRef>, UInt32Array), ArrowError> {
        let offsets = offsets(sources)?;
        let kept =
            UInt32Array::from_iter_values(self.kept.iter().map(|&(s, r)| (offsets[s] + r) as u32));
        let key_columns = keys
            .iter()
            .map(|&k| take(pool(sources, k)?.as_ref(), &kept, None))
            .collect::<Result<Vec<_>, _>>()?;
        let order = key_order(&key_columns)?;
        let columns = self.gather(sources, &offsets, width, updated, order.values())?;
        Ok((columns, order))
    }

    /// How many rows have been picked so far.
    pub fn picked(&self) -> usize {
        self.kept.len()
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
        let runs = (Runs::of(&self.kept, order), Runs::of(&self.set, order));
        (0..width)
            .map(|i| {
                // Column `i` of every source, concatenated once if a pick needs it.
                let mut pooled: Option<ArrayRef> = None;
                let mut pick = |runs: &Option<Runs>, indices: &UInt32Array| {
                    if let Some(runs) = runs {
                        return runs.take(sources, i);
                    }
                    let all = match &pooled {
                        Some(all) => all.clone(),
                        None => pooled.insert(pool(sources, i)?).clone(),
                    };
                    take(all.as_ref(), indices, None)
                };
                match updated[i] {
                    Take::Kept => pick(&runs.0, &kept),
                    Take::Set => pick(&runs.1, &set),
                    Take::SetUnlessNull => {
                        let set = pick(&runs.1, &set)?;
                        let kept = pick(&runs.0, &kept)?;
                        set_unless_null(&set, &kept, whole.as_ref())
                    }
                }
            })
            .collect()
    }
}

/// Picked rows in runs of one source each: (source, its rows), gathered
/// a run at a time and concatenated, when the runs are few and long (a
/// change data feed's rows, picked file by file); `None` otherwise, and
/// the sources' columns are concatenated whole and gathered at once.
struct Runs(Vec<(usize, UInt32Array)>);

impl Runs {
    /// Below this many runs, or this many rows a run on average, they are
    /// worth gathering one at a time.
    const FEW: usize = 64;
    const LONG: usize = 1024;

    /// The runs of `picks` in `order`.
    fn of(picks: &[(usize, usize)], order: &[u32]) -> Option<Self> {
        let mut runs: Vec<(usize, Vec<u32>)> = Vec::new();
        let most = Self::FEW.max(order.len() / Self::LONG);
        for &o in order {
            let (source, row) = *picks.get(o as usize)?;
            if let Some((_, rows)) = runs.last_mut().filter(|(last, _)| *last == source) {
                rows.push(row as u32);
                continue;
            }
            if runs.len() == most {
                return None;
            }
            runs.push((source, vec![row as u32]));
        }
        let runs = runs
            .into_iter()
            .map(|(s, rows)| (s, UInt32Array::from(rows)));
        Some(Self(runs.collect())).filter(|r| !r.0.is_empty())
    }

    /// Column `i` of the picked rows.
    fn take(&self, sources: &[&RecordBatch], i: usize) -> Result<ArrayRef, ArrowError> {
        let pieces = (self.0.iter())
            .map(|(s, rows)| match sources.get(*s) {
                Some(source) => take(source.column(i).as_ref(), rows, None),
                None => Err(ArrowError::ComputeError(format!(
                    "no source {s} to pick from"
                ))),
            })
            .collect::<Result<Vec<_>, _>>()?;
        match pieces.as_slice() {
            [one] => Ok(one.clone()),
            _ => concat(&pieces.iter().map(|p| p.as_ref()).collect::<Vec<_>>()),
        }
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
#[path = "picks_tests.rs"]
mod tests;
