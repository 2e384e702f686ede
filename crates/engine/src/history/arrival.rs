//! The order of a snapshot dataset's changes in its history: of two
//! changes of a key at an equal sequence, the one loaded later ranks
//! higher, as in its table (the snapshot loaded last at a sequence wins).

use arrow_array::{ArrayRef, Int64Array, RecordBatch};
use arrow_row::{RowConverter, SortField};
use arrow_schema::ArrowError;
use arrow_schema::{DataType, Field, Schema};
use deltaload_core::Dataset;
use std::sync::Arc;

/// `changes` with its first sequence column replaced, for ordering only,
/// by the rank of each change's sequence and then its `arrival` (load
/// time): of two changes of a key at an equal sequence, the one loaded
/// later ranks higher, as a snapshot loaded again at its sequence wins in
/// the table. A key column that is also the sequence is left as it is.
pub fn by_arrival(
    dataset: &Dataset,
    changes: &RecordBatch,
    arrival: &[i64],
) -> Result<RecordBatch, ArrowError> {
    let Some(&first) = (dataset.sequence_by.first()).filter(|s| !dataset.keys.contains(s)) else {
        return Ok(changes.clone());
    };
    let mut columns: Vec<ArrayRef> = (dataset.sequence_by.iter())
        .map(|&c| changes.column(c).clone())
        .collect();
    columns.push(Arc::new(Int64Array::from(arrival.to_vec())));
    let fields = (columns.iter()).map(|c| SortField::new(c.data_type().clone()));
    let rows = RowConverter::new(fields.collect())?.convert_columns(&columns)?;
    let mut sorted: Vec<usize> = (0..rows.num_rows()).collect();
    sorted.sort_unstable_by(|&a, &b| rows.row(a).cmp(&rows.row(b)));
    let mut rank = vec![0i64; sorted.len()];
    for w in 1..sorted.len() {
        let step = rows.row(sorted[w - 1]) != rows.row(sorted[w]);
        rank[sorted[w]] = rank[sorted[w - 1]] + i64::from(step);
    }
    let mut all = changes.columns().to_vec();
    all[first] = Arc::new(Int64Array::from(rank));
    let schema = changes.schema();
    let mut fields: Vec<Field> = schema.fields().iter().map(|f| f.as_ref().clone()).collect();
    fields[first] = Field::new(fields[first].name(), DataType::Int64, false);
    RecordBatch::try_new(Arc::new(Schema::new(fields)), all)
}
