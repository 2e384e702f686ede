//! What each change does to the table's row of its key: the rule of the
//! MERGE's clauses, on the two rows' sequences and ranks in the order of
//! [`crate::Order`], never turning a value of the table into a
//! [`deltaload_core::Value`].

use crate::aligned::Aligned;
use crate::order::Order;
use arrow_array::{ArrayRef, BooleanArray, RecordBatch, UInt32Array};
use arrow_row::Rows;
use arrow_schema::ArrowError;
use arrow_select::take::take;
use deltaload_core::Dataset;
use std::cmp::Ordering;

/// What a change does to the target row of its key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// The change is newer: the row takes its values.
    Update,
    /// The row is as new or newer: it stays.
    Stale,
    /// A delete at least as new as the row: the row goes.
    Delete,
}

impl Action {
    /// Whether the file holding the row must be rewritten.
    pub fn changes(self) -> bool {
        self != Action::Stale
    }
}

/// What a change does to the target row of its key, from how the two
/// compare: `by_sequence` on the sequence columns, `by_rank` on the rank
/// ([`Order`]). A delete removes a row it is not older than; an upsert
/// updates a row it is newer than; without a sequence (`sequenced` false)
/// the change always wins.
pub fn decide(delete: bool, sequenced: bool, by_sequence: Ordering, by_rank: Ordering) -> Action {
    match (delete, sequenced) {
        (true, false) => Action::Delete,
        (false, false) => Action::Update,
        (true, true) if by_sequence.is_lt() => Action::Stale,
        (true, true) => Action::Delete,
        (false, true) if by_rank.is_gt() => Action::Update,
        (false, true) => Action::Stale,
    }
}

/// The changes' sequences and ranks, and where a target file's probed
/// columns hold the sequence and tie-break columns.
pub struct Decider {
    order: Order,
    change_sequence: Option<Rows>,
    change_rank: Option<Rows>,
    /// Positions in the probed columns of the sequence, then the tie-break, columns.
    sequence_at: Vec<usize>,
    tie_at: Vec<usize>,
    /// Whether the probed columns hold the tie-break columns; without them an
    /// upsert whose sequence equals its row's is left undecided.
    complete: bool,
    sequenced: bool,
}

impl Decider {
    /// The decisions on `aligned`'s changes against files read as the
    /// dataset columns `probe` (in that order).
    pub fn new(dataset: &Dataset, aligned: &Aligned, probe: &[usize]) -> Result<Self, ArrowError> {
        let order = Order::new(
            dataset,
            &aligned.schema_with_flag(),
            &aligned.position,
            Some(aligned.delete_flag()),
        )?;
        let at = |cols: &[usize]| -> Vec<usize> {
            cols.iter()
                .map(|c| probe.iter().position(|p| p == c).unwrap_or(0))
                .collect()
        };
        let complete = dataset.tie_break.iter().all(|c| probe.contains(c));
        // The ranks (as large as the changes' sequence and tie-break
        // columns) serve only a decider that sees the tie-break columns.
        let change_rank = match complete {
            true => order.ranks(&aligned.changes)?,
            false => None,
        };
        Ok(Self {
            change_sequence: order.sequences(&aligned.changes)?,
            change_rank,
            sequence_at: at(&dataset.sequence_by),
            tie_at: at(&dataset.tie_break),
            complete,
            sequenced: order.sequenced(),
            order,
        })
    }

    /// What each matched (row, change) pair does to its row of `batch` (the
    /// probed columns); `None` for an upsert of an equal sequence when the
    /// tie-break columns were not probed.
    pub fn decide(
        &self,
        aligned: &Aligned,
        batch: &RecordBatch,
        pairs: &[(u32, u32)],
    ) -> Result<Vec<Option<Action>>, ArrowError> {
        let at = UInt32Array::from_iter_values(pairs.iter().map(|p| p.0));
        let taken = |cols: &[usize]| -> Result<Vec<ArrayRef>, ArrowError> {
            cols.iter()
                .map(|&i| take(batch.column(i).as_ref(), &at, None))
                .collect()
        };
        let (sequence, rank) = match self.sequenced {
            false => (None, None),
            true => {
                let sequence = taken(&self.sequence_at)?;
                let rank = match self.complete {
                    true => {
                        let never = BooleanArray::from(vec![false; pairs.len()]);
                        self.order
                            .rank_rows(&sequence, &never, &taken(&self.tie_at)?)?
                    }
                    false => None,
                };
                (self.order.sequence_rows(&sequence)?, rank)
            }
        };
        Ok(pairs
            .iter()
            .enumerate()
            .map(|(m, &(_, c))| {
                let c = c as usize;
                let cmp = |mine: &Option<Rows>, theirs: &Option<Rows>| match (mine, theirs) {
                    (Some(mine), Some(theirs)) => mine.row(c).cmp(&theirs.row(m)),
                    _ => Ordering::Equal,
                };
                let delete = aligned.is_delete(c);
                let by_sequence = cmp(&self.change_sequence, &sequence);
                if !self.complete && self.sequenced && !delete && by_sequence.is_eq() {
                    return None;
                }
                let by_rank = match self.complete {
                    true => cmp(&self.change_rank, &rank),
                    // Without the tie-break columns the rank is the sequence.
                    false => by_sequence,
                };
                Some(decide(delete, self.sequenced, by_sequence, by_rank))
            })
            .collect())
    }
}
