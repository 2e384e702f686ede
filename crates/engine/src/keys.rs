//! The keys of a batch of changes: each key once, or the values of an
//! integer key column (for the ranges a look-up of the table reads).

use arrow_array::{ArrayRef, RecordBatch};
use deltaload_core::Dataset;
use deltaload_ingest::DataError;

/// The values of the first key column (an integer one) of `changes`.
pub fn key_integers(dataset: &Dataset, changes: &[&RecordBatch]) -> Vec<i64> {
    let k = dataset.keys[0];
    changes.iter().flat_map(|b| integers(b.column(k))).collect()
}

/// The values of an integer column (none of another type), nulls left out.
pub fn integers(column: &ArrayRef) -> Vec<i64> {
    use arrow_array::cast::AsArray;
    use arrow_array::types::Int64Type;
    use arrow_schema::DataType;
    arrow_cast::cast(column, &DataType::Int64)
        .map(|a| a.as_primitive::<Int64Type>().iter().flatten().collect())
        .unwrap_or_default()
}

/// The key columns of `changes`, each key once.
pub fn distinct_keys(
    dataset: &Dataset,
    changes: &[&RecordBatch],
) -> Result<Vec<ArrayRef>, DataError> {
    use arrow_array::{Array, UInt32Array};
    let label = dataset.name.as_str();
    let column = |k: usize| -> Result<ArrayRef, DataError> {
        let parts: Vec<&dyn Array> = changes.iter().map(|b| b.column(k).as_ref()).collect();
        arrow_select::concat::concat(&parts).map_err(DataError::arrow(label))
    };
    let columns = dataset
        .keys
        .iter()
        .map(|&k| column(k))
        .collect::<Result<Vec<_>, _>>()?;
    let fields = columns
        .iter()
        .map(|c| arrow_row::SortField::new(c.data_type().clone()))
        .collect();
    let rows = arrow_row::RowConverter::new(fields)
        .and_then(|c| c.convert_columns(&columns))
        .map_err(DataError::arrow(label))?;
    let mut seen = std::collections::HashSet::with_capacity(rows.num_rows());
    let firsts: UInt32Array = (0..rows.num_rows() as u32)
        .filter(|&i| seen.insert(rows.row(i as usize)))
        .collect();
    columns
        .iter()
        .map(|c| arrow_select::take::take(c.as_ref(), &firsts, None))
        .collect::<Result<Vec<_>, _>>()
        .map_err(DataError::arrow(label))
}
