//! The runs of a spilled file read back in key order, a slice of changes at a
//! time, with the newest change of each key across runs: the one of greatest
//! rank (sequence, then tie-break columns), the earliest run among equals;
//! without a sequence, the latest run. That is the rule of
//! [`deltaload_core::newest_of`] over the whole file, pieces being in file order.

use crate::order::Order;
use arrow_array::Int64Array;
use arrow_array::RecordBatch;
use arrow_cast::cast;
use arrow_ipc::reader::FileReader;
use arrow_row::Rows;
use arrow_schema::ArrowError;
use arrow_schema::SchemaRef;
use arrow_select::interleave::interleave_record_batch;
use deltaload_core::Dataset;
use deltaload_ingest::DataError;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::BufReader;

type Reader = FileReader<BufReader<std::fs::File>>;

/// A run being read: its current batch (held at `held`), its keys and ranks.
struct Cursor {
    reader: Reader,
    held: usize,
    keys: Rows,
    ranks: Option<Rows>,
    row: usize,
}

/// The runs of a spilled file, merged.
pub struct Merge {
    cursors: Vec<Option<Cursor>>,
    held: Vec<RecordBatch>,
    heap: BinaryHeap<Reverse<(Vec<u8>, usize)>>,
    /// Keys and ranks, as every other step of the load compares them.
    order: Order,
    schema: SchemaRef,
    /// The `loaded_at` column's position and this load's value for it.
    loaded_at: Option<(usize, i64)>,
    slice_rows: usize,
    /// Changes given so far: the distinct keys, once the merge is done.
    pub given: u64,
}

fn arrow(label: &str) -> impl Fn(ArrowError) -> DataError + '_ {
    move |e| DataError::arrow(label)(e)
}

impl Merge {
    /// A merge of `spilled`'s runs giving slices of `slice_rows` changes,
    /// their `loaded_at` set to `loaded_at`.
    pub fn new(
        dataset: &Dataset,
        (schema, runs): (&SchemaRef, &[std::path::PathBuf]),
        position: &[usize],
        loaded_at: i64,
        slice_rows: usize,
    ) -> Result<Self, DataError> {
        let label = dataset.name.as_str();
        let schema = schema.clone();
        // The runs are the changes aligned on the table, the delete flag last.
        let flag = schema.fields().len().checked_sub(1);
        let order = Order::new(dataset, &schema, position, flag).map_err(arrow(label))?;
        let mut merge = Self {
            cursors: Vec::with_capacity(runs.len()),
            held: Vec::new(),
            heap: BinaryHeap::with_capacity(runs.len()),
            order,
            loaded_at: schema.index_of("loaded_at").ok().map(|i| (i, loaded_at)),
            schema,
            slice_rows: slice_rows.max(1),
            given: 0,
        };
        for (r, path) in runs.iter().enumerate() {
            let file = std::fs::File::open(path).map_err(DataError::io(path))?;
            let reader = FileReader::try_new(BufReader::new(file), None).map_err(arrow(label))?;
            let cursor = merge.start(reader, label)?;
            if let Some(c) = &cursor {
                merge.heap.push(Reverse((c.keys.row(0).data().to_vec(), r)));
            }
            merge.cursors.push(cursor);
        }
        Ok(merge)
    }

    /// A cursor on the next non-empty batch of `reader`, if any.
    fn start(&mut self, mut reader: Reader, label: &str) -> Result<Option<Cursor>, DataError> {
        for batch in reader.by_ref() {
            let batch = batch.map_err(arrow(label))?;
            if batch.num_rows() == 0 {
                continue;
            }
            let keys = self.order.keys(&batch).map_err(arrow(label))?;
            let ranks = self.order.ranks(&batch).map_err(arrow(label))?;
            self.held.push(batch);
            return Ok(Some(Cursor {
                reader,
                held: self.held.len() - 1,
                keys,
                ranks,
                row: 0,
            }));
        }
        Ok(None)
    }

    /// Moves run `r` past its current row, queueing its next key.
    fn advance(&mut self, r: usize, label: &str) -> Result<(), DataError> {
        let Some(mut cursor) = self.cursors[r].take() else {
            return Ok(());
        };
        cursor.row += 1;
        let cursor = match cursor.row < cursor.keys.num_rows() {
            true => Some(cursor),
            false => self.start(cursor.reader, label)?,
        };
        if let Some(c) = &cursor {
            self.heap
                .push(Reverse((c.keys.row(c.row).data().to_vec(), r)));
        }
        self.cursors[r] = cursor;
        Ok(())
    }

    /// Whether run `r`'s current change replaces `best`'s (runs come in order).
    fn replaces(&self, r: usize, best: usize) -> bool {
        let (Some(a), Some(b)) = (&self.cursors[r], &self.cursors[best]) else {
            return false;
        };
        match (&a.ranks, &b.ranks) {
            (Some(x), Some(y)) => x.row(a.row) > y.row(b.row),
            _ => true,
        }
    }

    /// The next slice of changes in key order, one per key; `None` when done.
    pub fn next_slice(&mut self, label: &str) -> Result<Option<RecordBatch>, DataError> {
        let mut picks: Vec<(usize, usize)> = Vec::with_capacity(self.slice_rows);
        while picks.len() < self.slice_rows {
            let Some(Reverse((key, r))) = self.heap.pop() else {
                break;
            };
            let mut same = vec![r];
            while self.heap.peek().is_some_and(|Reverse((k, _))| *k == key) {
                if let Some(Reverse((_, other))) = self.heap.pop() {
                    same.push(other);
                }
            }
            same.sort_unstable();
            let mut best = same[0];
            for &other in &same[1..] {
                if self.replaces(other, best) {
                    best = other;
                }
            }
            if let Some(c) = &self.cursors[best] {
                picks.push((c.held, c.row));
            }
            for other in same {
                self.advance(other, label)?;
            }
        }
        if picks.is_empty() {
            return Ok(None);
        }
        self.given += picks.len() as u64;
        let held: Vec<&RecordBatch> = self.held.iter().collect();
        let slice = interleave_record_batch(&held, &picks).map_err(arrow(label))?;
        self.release();
        self.with_loaded_at(slice, label).map(Some)
    }

    /// Drops the batches no run is on any more.
    fn release(&mut self) {
        let mut kept = Vec::with_capacity(self.cursors.len());
        for c in self.cursors.iter_mut().flatten() {
            kept.push(self.held[c.held].clone());
            c.held = kept.len() - 1;
        }
        self.held = kept;
    }

    /// `slice` with this load's `loaded_at`.
    fn with_loaded_at(&self, slice: RecordBatch, label: &str) -> Result<RecordBatch, DataError> {
        let Some((i, at)) = self.loaded_at else {
            return Ok(slice);
        };
        let value = Int64Array::from_value(at, slice.num_rows());
        let column = cast(&value, self.schema.field(i).data_type()).map_err(arrow(label))?;
        let mut columns = slice.columns().to_vec();
        columns[i] = column;
        RecordBatch::try_new(self.schema.clone(), columns).map_err(arrow(label))
    }
}
