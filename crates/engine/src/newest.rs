//! One change per key, on Arrow: the changes sorted by key (stably, so file
//! order stays within a key) and each run of one key folded into its winner,
//! the change of greatest rank (the earliest among equals); without a
//! sequence, the latest change. The rule of [`deltaload_core::newest_of`].

use crate::order::Order;
use arrow_array::{Array, RecordBatch, UInt32Array};
use arrow_schema::{ArrowError, DataType};

/// The winner of each key among `batch`'s rows, as row indexes sorted by key.
pub fn newest_indices(order: &Order, batch: &RecordBatch) -> Result<UInt32Array, ArrowError> {
    let ranked = Ranked::of(order, batch)?;
    Ok(UInt32Array::from(ranked.winners()))
}

/// The winners of a batch's keys, their nulls filled from older changes
/// ([`newest_filled`]).
pub struct Filled {
    /// The winner of each key, as [`newest_indices`] gives it.
    pub winners: UInt32Array,
    /// Per column filled, the row each winner takes that column's value from.
    pub sources: Vec<UInt32Array>,
    /// Per winner, whether it is an upsert after a delete of its key in the
    /// batch: it then inserts the key afresh, whole, whatever the table held.
    pub reborn: Vec<bool>,
}

/// The winner of each key, as [`newest_indices`] gives it, and for each
/// column of `fill` (batch positions) the row each winner takes that
/// column's value from: the winner's own, or where it is null the newest
/// older change of its key whose value is not, back to the key's last
/// delete (a delete winner takes nothing). Changes of one rank count once.
/// This is `ignore_null_updates` within a file: the winner then carries
/// what the changes before it set.
pub fn newest_filled(
    order: &Order,
    batch: &RecordBatch,
    fill: &[usize],
) -> Result<Filled, ArrowError> {
    let ranked = Ranked::of(order, batch)?;
    let winners = ranked.winners();
    let mut sources: Vec<Vec<u32>> = vec![winners.clone(); fill.len()];
    let mut reborn = vec![false; winners.len()];
    let deletes = order.deletes(batch)?;
    let columns: Vec<&dyn Array> = fill.iter().map(|&c| batch.column(c).as_ref()).collect();
    let mut from = 0usize;
    for (w, &(a, b)) in ranked.runs.iter().enumerate() {
        if b - a == 1 {
            continue;
        }
        let chain = ranked.chain(from, &ranked.sorted[a..b]);
        from += b - a;
        if deletes.value(chain[0] as usize) {
            continue;
        }
        for &row in &chain[1..] {
            if deletes.value(row as usize) {
                reborn[w] = true;
                break;
            }
            for (f, column) in columns.iter().enumerate() {
                if column.is_null(sources[f][w] as usize) && column.is_valid(row as usize) {
                    sources[f][w] = row;
                }
            }
        }
    }
    Ok(Filled {
        winners: UInt32Array::from(winners),
        sources: sources.into_iter().map(UInt32Array::from).collect(),
        reborn,
    })
}

/// A batch's rows sorted by key, the runs of one key, and the ranks of the
/// rows of the runs of more than one (in their runs' order).
struct Ranked {
    sorted: Vec<u32>,
    runs: Vec<(usize, usize)>,
    ranks: Option<arrow_row::Rows>,
}

impl Ranked {
    fn of(order: &Order, batch: &RecordBatch) -> Result<Self, ArrowError> {
        let n = batch.num_rows();
        if u32::try_from(n).is_err() {
            return Err(ArrowError::ComputeError(format!(
                "{n} changes in one batch: more than a load can hold"
            )));
        }
        let keys = match fast_key(order, batch) {
            Some(values) => Keys::Integers(values),
            None => Keys::Rows(order.keys(batch)?),
        };
        let sorted = keys.sorted(n as u32);
        let runs = runs(&keys, &sorted);
        // Most keys come once: only the rows of a key that comes more than
        // once are ranked, in their runs' order.
        let repeated: Vec<u32> = runs
            .iter()
            .filter(|(a, b)| b - a > 1)
            .flat_map(|&(a, b)| sorted[a..b].iter().copied())
            .collect();
        let ranks = match order.sequenced() && !repeated.is_empty() {
            true => {
                // The tie-break columns are ranked only when some key has
                // two changes of one sequence (a DMS file never has).
                let at = UInt32Array::from(repeated);
                match order.short_ranks_at(batch, &at)? {
                    Some(short) if !ties(&runs, &short) => Some(short),
                    _ => order.ranks_at(batch, &at)?,
                }
            }
            false => None,
        };
        Ok(Self {
            sorted,
            runs,
            ranks,
        })
    }

    /// The winner of each run, sorted by key.
    fn winners(&self) -> Vec<u32> {
        let mut out: Vec<u32> = Vec::with_capacity(self.runs.len());
        let mut ranked = 0usize;
        for &(a, b) in &self.runs {
            if b - a == 1 {
                out.push(self.sorted[a]);
                continue;
            }
            out.push(self.sorted[a + winner(self.ranks.as_ref(), ranked, b - a)]);
            ranked += b - a;
        }
        out
    }

    /// The rows of a run (ranked from `from`), newest first: by rank, the
    /// earliest of equals first and the others left out; without a
    /// sequence, the latest row first.
    fn chain(&self, from: usize, rows: &[u32]) -> Vec<u32> {
        let Some(r) = &self.ranks else {
            return rows.iter().rev().copied().collect();
        };
        let mut at: Vec<usize> = (0..rows.len()).collect();
        at.sort_by(|&x, &y| r.row(from + y).cmp(&r.row(from + x)).then(x.cmp(&y)));
        at.dedup_by(|x, y| r.row(from + *x) == r.row(from + *y));
        at.into_iter().map(|k| rows[k]).collect()
    }
}

/// Whether two changes of a key (ranked in `ranks` in their runs' order,
/// the runs of one change left out) have equal ranks.
fn ties(runs: &[(usize, usize)], ranks: &arrow_row::Rows) -> bool {
    let mut from = 0;
    for &(a, b) in runs.iter().filter(|(a, b)| b - a > 1) {
        let mut run: Vec<arrow_row::Row<'_>> = (from..from + b - a).map(|i| ranks.row(i)).collect();
        from += b - a;
        run.sort_unstable();
        if run.windows(2).any(|w| w[0] == w[1]) {
            return true;
        }
    }
    false
}

/// The runs of one key in `sorted`, as `(start, end)` positions.
fn runs(keys: &Keys, sorted: &[u32]) -> Vec<(usize, usize)> {
    let mut runs = Vec::new();
    let mut at = 0;
    while at < sorted.len() {
        let mut end = at + 1;
        while end < sorted.len() && keys.same(sorted[at], sorted[end]) {
            end += 1;
        }
        runs.push((at, end));
        at = end;
    }
    runs
}

/// Which of a run of `len` changes (ranked at `from..from + len` of
/// `ranks`) wins: the greatest rank, the earliest among equals; without a
/// sequence, the last.
fn winner(ranks: Option<&arrow_row::Rows>, from: usize, len: usize) -> usize {
    let Some(r) = ranks else {
        return len - 1;
    };
    let mut kept = 0;
    for k in 1..len {
        if r.row(from + k) > r.row(from + kept) {
            kept = k;
        }
    }
    kept
}

/// A batch's keys, compared.
enum Keys {
    /// One integer key column without nulls.
    Integers(Vec<i64>),
    /// Any key, in the row format.
    Rows(arrow_row::Rows),
}

impl Keys {
    fn same(&self, a: u32, b: u32) -> bool {
        match self {
            Keys::Integers(v) => v[a as usize] == v[b as usize],
            Keys::Rows(k) => k.row(a as usize) == k.row(b as usize),
        }
    }

    /// The rows `0..n` sorted by key, then by row (file order within a key).
    fn sorted(&self, n: u32) -> Vec<u32> {
        match self {
            Keys::Integers(values) => {
                // (value, row) pairs, the sign flipped so that unsigned
                // order is numeric order.
                let mut pairs: Vec<(u64, u32)> = (0..n)
                    .map(|i| ((values[i as usize] as u64) ^ (1 << 63), i))
                    .collect();
                pairs.sort_unstable();
                pairs.into_iter().map(|(_, i)| i).collect()
            }
            Keys::Rows(k) => {
                let mut keyed: Vec<(Prefix, u32)> = (0..n)
                    .map(|i| (Prefix::of(k.row(i as usize).as_ref()), i))
                    .collect();
                keyed.sort_unstable_by(|(p, a), (q, b)| {
                    (p.cmp(q))
                        .then_with(|| p.bytes_decide(k, *a, *b))
                        .then(a.cmp(b))
                });
                keyed.into_iter().map(|(_, i)| i).collect()
            }
        }
    }
}

/// A key's first 24 bytes (zeros after a shorter key) as numbers, then its
/// length (25 for any longer key), compared in that order: two keys whose
/// prefixes differ compare as their bytes do, and of equal prefixes only
/// two keys longer than 24 bytes need their bytes read. A key of a short
/// text and a bigint fits whole.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Prefix {
    high: u128,
    low: u64,
    len: u8,
}

impl Prefix {
    fn of(bytes: &[u8]) -> Self {
        let mut first = [0u8; 24];
        let n = bytes.len().min(24);
        first[..n].copy_from_slice(&bytes[..n]);
        let number = |b: &[u8]| b.iter().fold(0u128, |v, &x| (v << 8) | u128::from(x));
        Self {
            high: number(&first[..16]),
            low: number(&first[16..]) as u64,
            len: bytes.len().min(25) as u8,
        }
    }

    /// The order of rows `a` and `b` of `k`, whose prefixes are both
    /// `self`: by their bytes when they are longer than the prefix.
    fn bytes_decide(&self, k: &arrow_row::Rows, a: u32, b: u32) -> std::cmp::Ordering {
        match self.len > 24 {
            true => k.row(a as usize).cmp(&k.row(b as usize)),
            false => std::cmp::Ordering::Equal,
        }
    }
}

/// The values of the only key column, when it is an integer column without nulls.
fn fast_key(order: &Order, batch: &RecordBatch) -> Option<Vec<i64>> {
    let [k] = order.key_positions() else {
        return None;
    };
    let column = batch.column(*k);
    if column.null_count() > 0 {
        return None;
    }
    match column.data_type() {
        DataType::Int64 => column
            .as_any()
            .downcast_ref::<arrow_array::Int64Array>()
            .map(|a| a.values().to_vec()),
        DataType::Int32 => column
            .as_any()
            .downcast_ref::<arrow_array::Int32Array>()
            .map(|a| a.values().iter().map(|&v| i64::from(v)).collect()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::Prefix;
    use proptest::prelude::*;

    /// Keys longer than their prefixes, sharing it, are sorted by their
    /// bytes; equal keys keep file order.
    #[test]
    fn long_keys_sharing_their_prefix_sort_by_their_bytes() {
        use super::Keys;
        use arrow_array::{ArrayRef, StringArray};
        use arrow_row::{RowConverter, SortField};
        use arrow_schema::DataType;
        let long = "x".repeat(30);
        let texts: Vec<String> = ["b", "a", "", "c", "a", "ab"]
            .iter()
            .map(|end| format!("{long}{end}"))
            .collect();
        let column: ArrayRef = std::sync::Arc::new(StringArray::from(texts));
        let converter = RowConverter::new(vec![SortField::new(DataType::Utf8)]).unwrap();
        let rows = converter.convert_columns(&[column]).unwrap();
        assert!(rows.row(0).as_ref().len() > 24);
        assert_eq!(Keys::Rows(rows).sorted(6), vec![2, 1, 4, 5, 0, 3]);
    }

    proptest! {
        /// The prefixes, then the bytes of two keys longer than 24 bytes,
        /// order any two byte strings as their bytes do: short strings,
        /// trailing zeros, and strings sharing their first 24 bytes.
        #[test]
        fn the_prefix_orders_as_the_bytes(
            a in prop::collection::vec(0u8..3, 0..40),
            b in prop::collection::vec(0u8..3, 0..40),
            shared in prop::collection::vec(0u8..3, 0..30),
        ) {
            let (a, b) = ([shared.clone(), a].concat(), [shared, b].concat());
            let (p, q) = (Prefix::of(&a), Prefix::of(&b));
            let bytes = || match p == q && p.len > 24 {
                true => a.cmp(&b),
                false => std::cmp::Ordering::Equal,
            };
            prop_assert_eq!(p.cmp(&q).then_with(bytes), a.cmp(&b));
        }
    }
}
