//! Which rows of a target file hold a change's key: the changes' keys
//! sorted once, each file's keys looked up by binary search, or walked
//! beside them when the file is sorted by key (as the files deltaload
//! writes are). One integer key column is compared as numbers; any other
//! key in Arrow's row format, the order of [`crate::Order`].

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{Array, ArrayRef};
use arrow_row::{RowConverter, Rows, SortField};
use arrow_schema::{ArrowError, DataType};

/// The changes' keys, sorted, for lookups.
pub struct ChangeKeys(Keys);

enum Keys {
    /// One integer key column: the values sorted, and each one's change.
    Integers { sorted: Vec<i64>, change: Vec<u32> },
    /// Any other key: the changes' keys in the row format, and the changes
    /// in key order.
    Rows {
        converter: RowConverter,
        rows: Rows,
        sorted: Vec<u32>,
    },
}

/// The values of an integer column as 64-bit integers, when it is one.
fn integers(column: &ArrayRef) -> Option<ArrayRef> {
    match column.data_type() {
        DataType::Int64 => Some(column.clone()),
        DataType::Int8 | DataType::Int16 | DataType::Int32 => {
            arrow_cast::cast(column, &DataType::Int64).ok()
        }
        _ => None,
    }
}

impl ChangeKeys {
    /// The keys of `columns` (the changes' key columns, in key order). A key
    /// given twice is the caller's mistake (changes come one per key): the
    /// first change holding it is returned as the inner `Err`.
    pub fn new(columns: &[ArrayRef]) -> Result<Result<Self, u32>, ArrowError> {
        if let [one] = columns {
            if let Some(ints) = integers(one).filter(|c| c.null_count() == 0) {
                let values = ints.as_primitive::<Int64Type>().values();
                let mut pairs: Vec<(i64, u32)> = values
                    .iter()
                    .enumerate()
                    .map(|(i, &v)| (v, i as u32))
                    .collect();
                pairs.sort_unstable();
                if let Some(w) = pairs.windows(2).find(|w| w[0].0 == w[1].0) {
                    return Ok(Err(w[0].1.min(w[1].1)));
                }
                let (sorted, change) = pairs.into_iter().unzip();
                return Ok(Ok(Self(Keys::Integers { sorted, change })));
            }
        }
        let fields = columns
            .iter()
            .map(|c| SortField::new(c.data_type().clone()))
            .collect();
        let converter = RowConverter::new(fields)?;
        let rows = converter.convert_columns(columns)?;
        let mut sorted: Vec<u32> = (0..rows.num_rows() as u32).collect();
        sorted.sort_unstable_by(|&a, &b| rows.row(a as usize).cmp(&rows.row(b as usize)));
        if let Some(w) = sorted
            .windows(2)
            .find(|w| rows.row(w[0] as usize) == rows.row(w[1] as usize))
        {
            return Ok(Err(w[0].min(w[1])));
        }
        Ok(Ok(Self(Keys::Rows {
            converter,
            rows,
            sorted,
        })))
    }

    /// The rows of a target file whose key is a change's: (row, change)
    /// pairs in row order. `columns` are the file's key columns, in key order.
    pub fn matches(&self, columns: &[ArrayRef]) -> Result<Vec<(u32, u32)>, ArrowError> {
        match &self.0 {
            Keys::Integers { sorted, change } => {
                let Some(ints) = columns.first().and_then(integers) else {
                    return Err(ArrowError::SchemaError(
                        "the table's key column is not an integer column".into(),
                    ));
                };
                let file = ints.as_primitive::<Int64Type>();
                Ok(integer_matches(sorted, change, file))
            }
            Keys::Rows {
                converter,
                rows,
                sorted,
            } => {
                let file = converter.convert_columns(columns)?;
                Ok((0..file.num_rows())
                    .filter_map(|r| {
                        let key = file.row(r);
                        sorted
                            .binary_search_by(|&c| rows.row(c as usize).cmp(&key))
                            .ok()
                            .map(|at| (r as u32, sorted[at]))
                    })
                    .collect())
            }
        }
    }
}

/// The matches of a file's integer keys: a walk beside the sorted changes
/// when the file is sorted, else a binary search per row.
fn integer_matches(
    sorted: &[i64],
    change: &[u32],
    file: &arrow_array::Int64Array,
) -> Vec<(u32, u32)> {
    let values = file.values();
    let ascending = file.null_count() == 0 && values.windows(2).all(|w| w[0] < w[1]);
    let mut out = Vec::new();
    if ascending {
        let mut c = sorted.partition_point(|&k| k < values.first().copied().unwrap_or(0));
        for (r, &v) in values.iter().enumerate() {
            while c < sorted.len() && sorted[c] < v {
                c += 1;
            }
            if c < sorted.len() && sorted[c] == v {
                out.push((r as u32, change[c]));
            }
        }
        return out;
    }
    for (r, v) in file.iter().enumerate() {
        if let Some(at) = v.and_then(|v| sorted.binary_search(&v).ok()) {
            out.push((r as u32, change[at]));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Int32Array, Int64Array, StringArray};
    use std::sync::Arc;

    fn pairs(keys: &ChangeKeys, file: ArrayRef) -> Vec<(u32, u32)> {
        keys.matches(&[file]).unwrap()
    }

    #[test]
    fn keys_given_twice_are_found_and_matches_come_in_row_order() {
        let keys: ArrayRef = Arc::new(Int64Array::from(vec![3, 1, 2]));
        let k = ChangeKeys::new(&[keys]).unwrap().unwrap();
        let unsorted: ArrayRef = Arc::new(Int64Array::from(vec![9, 2, 3, 8]));
        assert_eq!(pairs(&k, unsorted), vec![(1, 2), (2, 0)]);
        let sorted: ArrayRef = Arc::new(Int32Array::from(vec![0, 1, 2, 5]));
        assert_eq!(pairs(&k, sorted), vec![(1, 1), (2, 2)]);
        let nulls: ArrayRef = Arc::new(Int64Array::from(vec![None, Some(3)]));
        assert_eq!(pairs(&k, nulls), vec![(1, 0)]);
        let twice: ArrayRef = Arc::new(Int64Array::from(vec![3, 1, 3]));
        assert_eq!(ChangeKeys::new(&[twice]).unwrap().err(), Some(0));
    }

    #[test]
    fn composite_and_text_keys_match_by_their_bytes() {
        let names: ArrayRef = Arc::new(StringArray::from(vec!["a", "a", "b"]));
        let ns: ArrayRef = Arc::new(Int64Array::from(vec![2, 1, 1]));
        let k = ChangeKeys::new(&[names, ns]).unwrap().unwrap();
        let file_names: ArrayRef = Arc::new(StringArray::from(vec!["b", "a", "a", "c"]));
        let file_ns: ArrayRef = Arc::new(Int64Array::from(vec![1, 1, 3, 1]));
        assert_eq!(
            k.matches(&[file_names, file_ns]).unwrap(),
            vec![(0, 2), (1, 1)]
        );
        let twice: ArrayRef = Arc::new(StringArray::from(vec!["x", "y", "x"]));
        assert_eq!(ChangeKeys::new(&[twice]).unwrap().err(), Some(0));
    }
}
