//! One change per key, on Arrow: the changes sorted by key (stably, so file
//! order stays within a key) and each run of one key folded into its winner,
//! the change of greatest rank (the earliest among equals); without a
//! sequence, the latest change. The rule of [`deltaload_core::newest_of`].

use crate::order::Order;
use arrow_array::{Array, RecordBatch, UInt32Array};
use arrow_schema::{ArrowError, DataType};

/// The winner of each key among `batch`'s rows, as row indexes sorted by key.
pub fn newest_indices(order: &Order, batch: &RecordBatch) -> Result<UInt32Array, ArrowError> {
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
    // Most keys come once: only the rows of a key that comes more than once
    // are ranked, in their runs' order.
    let repeated: Vec<u32> = runs
        .iter()
        .filter(|(a, b)| b - a > 1)
        .flat_map(|&(a, b)| sorted[a..b].iter().copied())
        .collect();
    let ranks = match order.sequenced() && !repeated.is_empty() {
        true => order.ranks_at(batch, &UInt32Array::from(repeated))?,
        false => None,
    };
    let mut out: Vec<u32> = Vec::with_capacity(runs.len());
    let mut ranked = 0usize;
    for (a, b) in runs {
        if b - a == 1 {
            out.push(sorted[a]);
            continue;
        }
        out.push(sorted[a + winner(ranks.as_ref(), ranked, b - a)]);
        ranked += b - a;
    }
    Ok(UInt32Array::from(out))
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
                let mut rows: Vec<u32> = (0..n).collect();
                rows.sort_unstable_by(|&a, &b| {
                    k.row(a as usize).cmp(&k.row(b as usize)).then(a.cmp(&b))
                });
                rows
            }
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
