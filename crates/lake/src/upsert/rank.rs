//! What each change does to the row of its key, decided on the rows' ranks
//! (the sequence and tie-break columns in Arrow's row format) without
//! turning a value of the table into a [`Value`].

use super::apply::{self, Action};
use super::Aligned;
use crate::error::LakeError;
use deltalake::arrow::array::{ArrayRef, UInt32Array};
use deltalake::arrow::compute::take;
use deltalake::arrow::record_batch::RecordBatch;
use deltalake::arrow::row::Rows;
use deltaload_core::Dataset;

/// The changes' ranks, and where the probed columns of a target file hold
/// the sequence and tie-break columns.
pub(super) struct Rank {
    by_sequence: apply::Ranks,
    by_rank: apply::Ranks,
    change_sequence: Rows,
    change_rank: Rows,
    /// Positions in the probed columns of the sequence, then the tie-break, columns.
    sequence_at: Vec<usize>,
    rank_at: Vec<usize>,
    /// Whether the probed columns hold the tie-break columns; without them an
    /// upsert whose sequence equals its row's is left undecided.
    complete: bool,
}

impl Rank {
    pub(super) fn new(
        dataset: &Dataset,
        aligned: &Aligned,
        probe: &[usize],
        label: &str,
    ) -> Result<Self, LakeError> {
        let ranked: Vec<usize> = dataset
            .sequence_by
            .iter()
            .chain(&dataset.tie_break)
            .copied()
            .collect();
        let at = |cols: &[usize]| -> Vec<usize> {
            cols.iter()
                .map(|c| probe.iter().position(|p| p == c).unwrap_or(0))
                .collect()
        };
        let columns = |cols: &[usize]| -> Vec<ArrayRef> {
            cols.iter()
                .map(|&c| aligned.changes.column(aligned.position[c]).clone())
                .collect()
        };
        let types = |cols: &[usize]| -> Vec<_> {
            cols.iter()
                .map(|&c| {
                    aligned
                        .changes
                        .column(aligned.position[c])
                        .data_type()
                        .clone()
                })
                .collect()
        };
        let by_sequence =
            apply::Ranks::new(types(&dataset.sequence_by)).map_err(LakeError::arrow(label))?;
        let by_rank = apply::Ranks::new(types(&ranked)).map_err(LakeError::arrow(label))?;
        Ok(Self {
            change_sequence: by_sequence
                .of(&columns(&dataset.sequence_by))
                .map_err(LakeError::arrow(label))?,
            change_rank: by_rank
                .of(&columns(&ranked))
                .map_err(LakeError::arrow(label))?,
            by_sequence,
            by_rank,
            sequence_at: at(&dataset.sequence_by),
            rank_at: at(&ranked),
            complete: ranked.iter().all(|c| probe.contains(c)),
        })
    }

    /// What each matched change (row, change) does to its row of `batch` (the
    /// probed columns); `None` for an upsert of an equal sequence when the
    /// tie-break columns were not probed.
    pub(super) fn decide(
        &self,
        dataset: &Dataset,
        changes: &Aligned,
        batch: &RecordBatch,
        pairs: &[(u32, u32)],
    ) -> Result<Vec<Option<Action>>, LakeError> {
        let sequenced = !dataset.sequence_by.is_empty();
        let label = dataset.name.as_str();
        let at = UInt32Array::from_iter_values(pairs.iter().map(|p| p.0));
        let taken = |cols: &[usize]| -> Result<Vec<ArrayRef>, LakeError> {
            cols.iter()
                .map(|&i| {
                    take(batch.column(i).as_ref(), &at, None).map_err(LakeError::arrow(label))
                })
                .collect()
        };
        let (sequence, rank) = match sequenced {
            true => (
                Some(
                    self.by_sequence
                        .of(&taken(&self.sequence_at)?)
                        .map_err(LakeError::arrow(label))?,
                ),
                match self.complete {
                    true => Some(
                        self.by_rank
                            .of(&taken(&self.rank_at)?)
                            .map_err(LakeError::arrow(label))?,
                    ),
                    false => None,
                },
            ),
            false => (None, None),
        };
        Ok(pairs
            .iter()
            .enumerate()
            .map(|(m, &(_, c))| {
                let c = c as usize;
                let cmp = |mine: &Rows, theirs: &Option<Rows>| {
                    theirs
                        .as_ref()
                        .map_or(std::cmp::Ordering::Equal, |t| mine.row(c).cmp(&t.row(m)))
                };
                let delete = changes.is_delete(c);
                let by_sequence = cmp(&self.change_sequence, &sequence);
                if !self.complete && sequenced && !delete && by_sequence.is_eq() {
                    return None;
                }
                let by_rank = match self.complete {
                    true => cmp(&self.change_rank, &rank),
                    // Without the tie-break columns the rank is the sequence.
                    false => by_sequence,
                };
                Some(apply::decide(delete, sequenced, by_sequence, by_rank))
            })
            .collect())
    }
}
