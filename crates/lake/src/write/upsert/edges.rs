//! Inserts placed among a rewrite's groups by key, where the files'
//! statistics allow it: the groups come in the order of the changes that
//! meet their files, which places an insert whose key falls inside a later
//! group's first file, below that file's first changed key, one group early,
//! and the two groups' new files would then overlap.

use super::files::TargetFile;
use deltalake::arrow::array::{Array, ArrayRef, AsArray};
use deltalake::arrow::datatypes::{DataType, Int64Type};
use deltaload_engine::Group;
use serde_json::Value as Json;

/// Moves each insert to the last group whose files' smallest key (their
/// statistics' `minValues` of the first key column `key`; a lower bound even
/// when a writer cut it) is at or below the insert's key in `keys` (the
/// changes' first key column). Nothing moves unless every group has that
/// figure, the key is an integer or a text, and the groups' smallest keys
/// rise: then the change order's placement stands.
pub(super) fn place_by_key(
    groups: &mut [Group],
    candidates: &[TargetFile],
    keys: &ArrayRef,
    key: &str,
) {
    if groups.len() < 2 {
        return;
    }
    let lowest: Option<Vec<Vec<Json>>> = (groups.iter())
        .map(|g| {
            g.files
                .iter()
                .map(|&f| min_stat(&candidates[f], key))
                .collect()
        })
        .collect();
    let Some(lowest) = lowest else {
        return;
    };
    match keys.data_type() {
        DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64 => {
            let Ok(ints) = deltalake::arrow::compute::cast(keys, &DataType::Int64) else {
                return;
            };
            let ints = ints.as_primitive::<Int64Type>();
            let value = |c: u32| ints.is_valid(c as usize).then(|| ints.value(c as usize));
            place(groups, &lowest, Json::as_i64, value);
        }
        DataType::Utf8 => {
            let texts = keys.as_string::<i32>();
            let value = |c: u32| texts.is_valid(c as usize).then(|| texts.value(c as usize));
            place(groups, &lowest, Json::as_str, value);
        }
        _ => {}
    }
}

/// The inserts of `groups` placed by `value` against each group's smallest
/// key (`low` of its files' `lowest`; all known, rising); a null or unknown
/// value goes first.
fn place<'a, T: Ord>(
    groups: &mut [Group],
    lowest: &'a [Vec<Json>],
    low: fn(&'a Json) -> Option<T>,
    value: impl Fn(u32) -> Option<T>,
) {
    let lows: Option<Vec<T>> = (lowest.iter())
        .map(|g| {
            g.iter()
                .map(low)
                .collect::<Option<Vec<T>>>()?
                .into_iter()
                .min()
        })
        .collect();
    let Some(lows) = lows.filter(|l| l.len() == groups.len()) else {
        return;
    };
    if lows.windows(2).any(|w| w[0] > w[1]) {
        return;
    }
    let inserts: Vec<u32> = (groups.iter_mut())
        .flat_map(|g| std::mem::take(&mut g.inserts))
        .collect();
    for c in inserts {
        let at = match value(c) {
            Some(v) => lows.partition_point(|lo| *lo <= v).saturating_sub(1),
            None => 0,
        };
        groups[at].inserts.push(c);
    }
}

/// A file's smallest value of column `key`, from its statistics.
fn min_stat(file: &TargetFile, key: &str) -> Option<Json> {
    super::files::stats_of(&file.add)?
        .get("minValues")?
        .get(key)
        .cloned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use deltalake::arrow::array::Int64Array;
    use deltalake::kernel::Add;
    use std::sync::Arc;

    fn file(min: i64) -> TargetFile {
        TargetFile {
            path: deltalake::Path::from("f.parquet"),
            remove: Default::default(),
            add: Add {
                stats: Some(format!(r#"{{"minValues":{{"id":{min}}}}}"#)),
                ..Default::default()
            },
        }
    }

    // Files from 1 and from 200; changes 50, 210 (inserted), 250: placed
    // by change order, 210 would go with the first file; by key it goes with
    // the second. With a file of unknown statistics nothing moves.
    #[test]
    fn an_insert_goes_to_the_group_whose_smallest_key_precedes_it() {
        let keys: ArrayRef = Arc::new(Int64Array::from(vec![50, 210, 250]));
        let candidates = [file(1), file(200)];
        let groups = || {
            vec![
                Group {
                    files: vec![0],
                    inserts: vec![1],
                },
                Group {
                    files: vec![1],
                    inserts: vec![],
                },
            ]
        };
        let mut by_key = groups();
        place_by_key(&mut by_key, &candidates, &keys, "id");
        assert_eq!(
            (by_key[0].inserts.len(), by_key[1].inserts.clone()),
            (0, vec![1])
        );
        let unknown = [
            file(1),
            TargetFile {
                add: Add::default(),
                ..file(0)
            },
        ];
        let mut kept = groups();
        place_by_key(&mut kept, &unknown, &keys, "id");
        assert_eq!(kept, groups());
    }
}
