//! Which rows of a target file hold a change's key. One integer key column
//! is compared as numbers: the changes' keys sorted once, each file's keys
//! looked up by binary search, or walked beside them when the file is
//! sorted by key (as the files deltaload writes are). Any other key is
//! compared in Arrow's row format (the bytes of [`crate::Order`]'s keys)
//! through a hash table of the changes' keys: one hash and, most often,
//! one comparison per row of a file, where a binary search took some
//! twenty comparisons of the rows' bytes. [`among`] answers the same
//! question of a set of keys that may come twice.

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{Array, ArrayRef, BooleanArray, RecordBatch};
use arrow_row::{RowConverter, Rows, SortField};
use arrow_schema::{ArrowError, DataType};
use std::collections::hash_map::{Entry, HashMap, RandomState};
use std::hash::{BuildHasher, BuildHasherDefault, Hasher};

/// The changes' keys, for lookups.
pub struct ChangeKeys(Keys);

enum Keys {
    /// One integer key column: the values sorted, and each one's change.
    Integers { sorted: Vec<i64>, change: Vec<u32> },
    /// Any other key: the changes' keys in the row format, found by hash.
    Rows {
        converter: RowConverter,
        rows: Rows,
        table: KeyTable,
    },
}

/// The end of a chain of [`KeyTable::next`].
const END: u32 = u32::MAX;

/// The changes' keys by the hash of their bytes: the last change of each
/// hash, and from each change the one before it of the same hash.
struct KeyTable {
    hashing: Hashing,
    heads: HashMap<u64, u32, BuildHasherDefault<Spent>>,
    next: Vec<u32>,
}

/// How a key's bytes are hashed: by the standard hasher, or (tests of the
/// chains) all into one hash.
enum Hashing {
    Random(RandomState),
    #[cfg(test)]
    Collide,
}

impl Hashing {
    fn of(&self, bytes: &[u8]) -> u64 {
        match self {
            Hashing::Random(state) => state.hash_one(bytes),
            #[cfg(test)]
            Hashing::Collide => 7,
        }
    }
}

/// The hasher of a hash already made: it passes the value on.
#[derive(Default)]
struct Spent(u64);

impl Hasher for Spent {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }

    fn write_u64(&mut self, value: u64) {
        self.0 = value;
    }
}

impl KeyTable {
    /// The table of `rows`; the first row whose key an earlier one holds is
    /// the `Err`, as that earlier row (with `skip_twice`, left out instead).
    fn new(rows: &Rows, hashing: Hashing, skip_twice: bool) -> Result<Self, u32> {
        let n = rows.num_rows();
        let mut heads = HashMap::with_capacity_and_hasher(n, BuildHasherDefault::default());
        let mut next = vec![END; n];
        for i in 0..n as u32 {
            let row = rows.row(i as usize);
            match heads.entry(hashing.of(row.as_ref())) {
                Entry::Vacant(v) => {
                    v.insert(i);
                }
                Entry::Occupied(mut o) => {
                    let mut at = *o.get();
                    while at != END {
                        if rows.row(at as usize) == row {
                            break;
                        }
                        at = next[at as usize];
                    }
                    match at {
                        END => {}
                        _ if skip_twice => continue,
                        _ => return Err(at),
                    }
                    next[i as usize] = *o.get();
                    *o.get_mut() = i;
                }
            }
        }
        Ok(Self {
            hashing,
            heads,
            next,
        })
    }

    /// The change (of `rows`, the table's) whose key is `key`'s bytes.
    fn find(&self, rows: &Rows, key: &[u8]) -> Option<u32> {
        let mut at = *self.heads.get(&self.hashing.of(key))?;
        while at != END {
            if rows.row(at as usize).as_ref() == key {
                return Some(at);
            }
            at = self.next[at as usize];
        }
        None
    }
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
        Self::hashed(columns, Hashing::Random(RandomState::new()))
    }

    fn hashed(columns: &[ArrayRef], hashing: Hashing) -> Result<Result<Self, u32>, ArrowError> {
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
        Ok(match KeyTable::new(&rows, hashing, false) {
            Ok(table) => Ok(Self(Keys::Rows {
                converter,
                rows,
                table,
            })),
            Err(first) => Err(first),
        })
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
                table,
            } => {
                let file = converter.convert_columns(columns)?;
                Ok((0..file.num_rows())
                    .filter_map(|r| Some((r as u32, table.find(rows, file.row(r).as_ref())?)))
                    .collect())
            }
        }
    }
}

/// Which rows of `columns` hold, all together, the values of a row of one
/// of the batches `of` (its columns `at`, one per column, cast to their
/// types): the keys of `of` taken as a set (a key may come twice, a null
/// is a value), found as [`ChangeKeys`] finds them, in the row format.
pub fn among(
    columns: &[ArrayRef],
    of: &[RecordBatch],
    at: &[usize],
) -> Result<BooleanArray, ArrowError> {
    let fields = (columns.iter())
        .map(|c| SortField::new(c.data_type().clone()))
        .collect();
    let converter = RowConverter::new(fields)?;
    let mut rows = converter.empty_rows(0, 0);
    for b in of {
        let cast = (at.iter().zip(columns))
            .map(|(&i, c)| arrow_cast::cast(b.column(i), c.data_type()))
            .collect::<Result<Vec<_>, _>>()?;
        converter.append(&mut rows, &cast)?;
    }
    let hashing = Hashing::Random(RandomState::new());
    let table = KeyTable::new(&rows, hashing, true)
        .map_err(|_| ArrowError::ComputeError("a key refused where keys may come twice".into()))?;
    // Each row looked up by its bytes, nothing copied.
    let looked = converter.convert_columns(columns)?;
    Ok((0..looked.num_rows())
        .map(|r| Some(table.find(&rows, looked.row(r).as_ref()).is_some()))
        .collect())
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

    /// Every key in one hash: the chains alone tell the keys apart.
    #[test]
    fn keys_of_one_hash_are_told_apart_by_their_bytes() {
        let changes: Vec<String> = (0..500).map(|i| format!("k{i}")).collect();
        let changes: ArrayRef = Arc::new(StringArray::from(changes));
        let file: Vec<String> = (250..750).rev().map(|i| format!("k{i}")).collect();
        let file: ArrayRef = Arc::new(StringArray::from(file));
        let random = ChangeKeys::new(std::slice::from_ref(&changes))
            .unwrap()
            .unwrap();
        let collide = ChangeKeys::hashed(&[changes], Hashing::Collide);
        let collide = collide.unwrap().unwrap();
        let Keys::Rows { table, .. } = &collide.0 else {
            panic!("text keys are kept in the row format");
        };
        assert_eq!(table.heads.len(), 1, "all 500 keys share one hash");
        let expected: Vec<(u32, u32)> = (250..500).map(|r| (r, 749 - r)).collect();
        assert_eq!(pairs(&collide, file.clone()), expected);
        assert_eq!(pairs(&random, file), expected);
        let twice: ArrayRef = Arc::new(StringArray::from(vec!["x", "y", "z", "y"]));
        let found = ChangeKeys::hashed(&[twice], Hashing::Collide).unwrap();
        assert_eq!(found.err(), Some(1));
    }
}
