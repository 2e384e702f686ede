//! The one definition of how changes and rows compare, on Arrow arrays:
//! keys, and ranks (the sequence, then the delete flag, then the tie-break
//! columns), each in Arrow's row format so that a comparison is a `memcmp`.
//!
//! The row format orders every column ascending with nulls first, text by
//! its UTF-8 bytes, doubles by IEEE total order, decimals and times as
//! numbers: the order of [`deltaload_core::Value`]. A rank compares as
//! [`deltaload_core::Dataset::compare`]: the sequence first; at an equal
//! sequence a delete above an upsert; two upserts by the tie-break columns.
//! The tie-break columns of a delete are ranked null, so two deletes of an
//! equal sequence are equal, as that rule says. `order_tests.rs` checks this
//! against `Dataset::compare` for random values of every type.

use arrow_array::{Array, ArrayRef, BooleanArray, RecordBatch};
use arrow_row::{RowConverter, Rows, SortField};
use arrow_schema::{ArrowError, DataType, SchemaRef};
use deltaload_core::Dataset;
use std::sync::Arc;

/// Where a batch holds the dataset's columns, and the order over them.
pub struct Order {
    keys: Vec<usize>,
    sequence: Vec<usize>,
    tie_break: Vec<usize>,
    delete: Option<usize>,
    key_rows: RowConverter,
    sequence_rows: Option<RowConverter>,
    rank_rows: Option<RowConverter>,
    /// Ranks without the tie-break columns: the sequence and the flag.
    short_rows: Option<RowConverter>,
}

impl Order {
    /// The order of `dataset` over batches of `schema`, which holds dataset
    /// column `i` at `position[i]` and, for changes, the delete flag at
    /// `delete` (a table's rows have none: never a delete).
    pub fn new(
        dataset: &Dataset,
        schema: &SchemaRef,
        position: &[usize],
        delete: Option<usize>,
    ) -> Result<Self, ArrowError> {
        let at = |cols: &[usize]| -> Result<Vec<usize>, ArrowError> {
            cols.iter()
                .map(|&c| {
                    position.get(c).copied().ok_or_else(|| {
                        ArrowError::SchemaError(format!(
                            "column {c} of the dataset has no position"
                        ))
                    })
                })
                .collect()
        };
        let (keys, sequence, tie_break) = (
            at(&dataset.keys)?,
            at(&dataset.sequence_by)?,
            at(&dataset.tie_break)?,
        );
        let converter = |cols: &[usize], flag: bool| -> Result<RowConverter, ArrowError> {
            let mut fields: Vec<SortField> = Vec::with_capacity(cols.len() + 1);
            for &c in cols {
                fields.push(SortField::new(schema.field(c).data_type().clone()));
            }
            if flag {
                fields.insert(sequence.len(), SortField::new(DataType::Boolean));
            }
            RowConverter::new(fields)
        };
        let sequenced = !sequence.is_empty();
        let ranked: Vec<usize> = sequence.iter().chain(&tie_break).copied().collect();
        Ok(Self {
            key_rows: converter(&keys, false)?,
            sequence_rows: sequenced.then(|| converter(&sequence, false)).transpose()?,
            rank_rows: sequenced.then(|| converter(&ranked, true)).transpose()?,
            short_rows: sequenced.then(|| converter(&sequence, true)).transpose()?,
            keys,
            sequence,
            tie_break,
            delete,
        })
    }

    /// Whether the dataset has a sequence: without one, a later change wins.
    pub fn sequenced(&self) -> bool {
        !self.sequence.is_empty()
    }

    /// The batch's keys.
    pub fn keys(&self, batch: &RecordBatch) -> Result<Rows, ArrowError> {
        self.key_rows.convert_columns(&columns(batch, &self.keys))
    }

    /// The sequences of these sequence columns (`None` without a sequence).
    pub fn sequence_rows(&self, sequence: &[ArrayRef]) -> Result<Option<Rows>, ArrowError> {
        self.sequence_rows
            .as_ref()
            .map(|c| c.convert_columns(sequence))
            .transpose()
    }

    /// The ranks of these sequence columns, delete flags and tie-break
    /// columns (`None` without a sequence), as [`Order::ranks`] gives them.
    pub fn rank_rows(
        &self,
        sequence: &[ArrayRef],
        flags: &BooleanArray,
        tie_break: &[ArrayRef],
    ) -> Result<Option<Rows>, ArrowError> {
        let Some(converter) = &self.rank_rows else {
            return Ok(None);
        };
        let mut cols = sequence.to_vec();
        cols.push(Arc::new(flags.clone()));
        for tie in tie_break {
            cols.push(match flags.true_count() {
                0 => tie.clone(),
                _ => arrow_select::nullif::nullif(tie.as_ref(), flags)?,
            });
        }
        converter.convert_columns(&cols).map(Some)
    }

    /// The batch's sequences (`None` without a sequence).
    pub fn sequences(&self, batch: &RecordBatch) -> Result<Option<Rows>, ArrowError> {
        self.sequence_rows(&columns(batch, &self.sequence))
    }

    /// The batch's ranks (`None` without a sequence): sequence, delete
    /// flag, tie-break columns (null for a delete).
    pub fn ranks(&self, batch: &RecordBatch) -> Result<Option<Rows>, ArrowError> {
        if self.rank_rows.is_none() {
            return Ok(None);
        }
        let flags = self.deletes(batch)?;
        self.rank_rows(
            &columns(batch, &self.sequence),
            &flags,
            &columns(batch, &self.tie_break),
        )
    }

    /// The ranks of `batch`'s rows `at` (`None` without a sequence): those
    /// [`Order::ranks`] gives for a batch of these rows, taking only the
    /// columns a rank reads.
    pub fn ranks_at(
        &self,
        batch: &RecordBatch,
        at: &arrow_array::UInt32Array,
    ) -> Result<Option<Rows>, ArrowError> {
        use arrow_array::cast::AsArray;
        if self.rank_rows.is_none() {
            return Ok(None);
        }
        let take = |cols: &[usize]| -> Result<Vec<ArrayRef>, ArrowError> {
            (cols.iter())
                .map(|&c| arrow_select::take::take(batch.column(c).as_ref(), at, None))
                .collect()
        };
        let flags = arrow_select::take::take(&self.deletes(batch)?, at, None)?;
        self.rank_rows(
            &take(&self.sequence)?,
            flags.as_boolean(),
            &take(&self.tie_break)?,
        )
    }

    /// The ranks of `batch`'s rows `at` without their tie-break columns
    /// (`None` without a sequence): where two of them differ, they compare
    /// as the whole ranks ([`Order::ranks_at`]) do, which only equal ones
    /// need.
    pub fn short_ranks_at(
        &self,
        batch: &RecordBatch,
        at: &arrow_array::UInt32Array,
    ) -> Result<Option<Rows>, ArrowError> {
        let Some(converter) = &self.short_rows else {
            return Ok(None);
        };
        let mut cols: Vec<ArrayRef> = (self.sequence.iter())
            .map(|&c| arrow_select::take::take(batch.column(c).as_ref(), at, None))
            .collect::<Result<_, _>>()?;
        cols.push(arrow_select::take::take(&self.deletes(batch)?, at, None)?);
        converter.convert_columns(&cols).map(Some)
    }

    /// Each row's delete flag (all false for rows of a table).
    pub fn deletes(&self, batch: &RecordBatch) -> Result<BooleanArray, ArrowError> {
        let n = batch.num_rows();
        match self.delete.map(|d| batch.column(d)) {
            None => Ok(BooleanArray::from(vec![false; n])),
            Some(flags) => {
                let flags = flags
                    .as_any()
                    .downcast_ref::<BooleanArray>()
                    .ok_or_else(|| {
                        ArrowError::SchemaError(format!(
                            "the delete flag is {}, not boolean",
                            flags.data_type()
                        ))
                    })?;
                // A null flag is not a delete.
                Ok(match flags.null_count() {
                    0 => flags.clone(),
                    _ => (0..n)
                        .map(|i| Some(flags.is_valid(i) && flags.value(i)))
                        .collect(),
                })
            }
        }
    }

    /// The positions of the key columns in the batch.
    pub fn key_positions(&self) -> &[usize] {
        &self.keys
    }
}

fn columns(batch: &RecordBatch, at: &[usize]) -> Vec<ArrayRef> {
    at.iter().map(|&i| batch.column(i).clone()).collect()
}
