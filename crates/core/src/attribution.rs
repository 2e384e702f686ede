//! Several files merged at once, with each file's own figures as if the files
//! had been loaded one after the other, in the order given.
//!
//! The batch's MERGE writes only the [`Attribution::winners`]: the rows that end
//! up different from the table's. Each file's inserted / updated counts come from
//! replaying the files, in order, against the rows the table held before.

use crate::reconcile::MergeCounts;
use crate::spec::Dataset;
use crate::value::{Row, Value};
use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};

/// The figures and rows of a batch merge.
#[derive(Debug, Clone, PartialEq)]
pub struct Attribution<'a> {
    /// Per file, in the order given: what a load of that file alone, after the
    /// files before it, would have inserted, updated and deleted.
    pub per_file: Vec<MergeCounts>,
    /// The rows that change the table, sorted by key, each with the index of
    /// the file whose change it is last. A row new to the table is whole: the
    /// inserting change with the update columns of later winners over it. A
    /// delete ([`Dataset::is_delete`]) removes the table's row of its key.
    pub winners: Vec<(usize, Cow<'a, [Value]>)>,
    /// What the MERGE of the winners must report: keys new to the table, rows
    /// of the table replaced, rows removed.
    pub expected: MergeCounts,
    /// How the tombstones of the keys touched change (datasets that keep them).
    pub tombstones: Vec<Tombstone<'a>>,
}

/// A change to the remembered deletes of one key.
#[derive(Debug, Clone, PartialEq)]
pub enum Tombstone<'a> {
    /// The key's newest change is this delete (from file `.0`): remember it.
    Put(usize, &'a [Value]),
    /// The key's newest change is an upsert: forget this tombstone.
    Clear(&'a [Value]),
}

impl Dataset {
    /// `held` after an update by `change`: its update columns (sequence
    /// columns among them) take the change's values, the others stay, and so
    /// does a [`Dataset::keep_on_null`] column where the change is null
    /// (unless the change [sets its row whole](Dataset::sets_whole)). The
    /// row ends as `change` does: with its delete flag when it has one.
    pub fn updated(&self, held: &[Value], change: &[Value]) -> Row {
        let width = self.columns.len();
        if self.sets_whole(change) {
            return change.to_vec();
        }
        let mut row = held[..width].to_vec();
        for &i in &self.update {
            if !change[i].is_null() || !self.keep_on_null.contains(&i) {
                row[i] = change[i].clone();
            }
        }
        row.extend_from_slice(&change[width..]);
        row
    }

    /// Whether `change` inserts its key afresh, whole, whatever it updates:
    /// an upsert after a delete of its key in its own file, of a dataset
    /// that ignores null updates (its delete flag is then null).
    pub fn sets_whole(&self, change: &[Value]) -> bool {
        !self.keep_on_null.is_empty()
            && self.delete_when.is_some()
            && change.get(self.columns.len()).is_some_and(Value::is_null)
    }

    /// Whether an update sets every column but the keys, nulls included:
    /// the updated row is then the change itself.
    pub fn updates_all(&self) -> bool {
        self.update.len() + self.keys.len() == self.columns.len() && self.keep_on_null.is_empty()
    }
}

/// A row's key, hashed and compared in place (no copy of the key).
#[derive(Debug, Clone, Copy)]
struct KeyOf<'a> {
    row: &'a [Value],
    keys: &'a [usize],
}

impl Hash for KeyOf<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        for &k in self.keys {
            self.row[k].hash(state);
        }
    }
}

impl PartialEq for KeyOf<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.keys.iter().all(|&k| self.row[k] == other.row[k])
    }
}

impl Eq for KeyOf<'_> {}

/// A key's state during the replay: the file of its last change and the row
/// (or delete) it holds.
type State<'a> = (usize, Cow<'a, [Value]>);

/// Replays `files` (each already reduced to its newest change per key) against
/// `current`, the table's rows for the keys they touch, and `tombstones`, the
/// remembered deletes of those keys (rows of [`Dataset::width`] values: the
/// key and sequence columns, and the delete flag).
pub fn attribute<'a>(
    dataset: &'a Dataset,
    current: &'a [Row],
    tombstones: &'a [Row],
    files: &[Vec<&'a [Value]>],
) -> Attribution<'a> {
    let key = |row: &'a [Value]| KeyOf {
        row,
        keys: &dataset.keys,
    };
    let table: HashMap<KeyOf<'a>, &'a [Value]> =
        current.iter().map(|r| (key(r), r.as_slice())).collect();
    let remembered: HashMap<KeyOf<'a>, &'a [Value]> =
        tombstones.iter().map(|r| (key(r), r.as_slice())).collect();
    // What a key holds before the batch: its row or its tombstone, the newer.
    let initial = |k: &KeyOf<'a>| -> Option<&'a [Value]> {
        match (table.get(k).copied(), remembered.get(k).copied()) {
            (Some(row), Some(dead)) if dataset.replaces(dead, row) => Some(dead),
            (Some(row), _) => Some(row),
            (None, dead) => dead,
        }
    };
    let mut state: HashMap<KeyOf<'a>, State<'a>> = HashMap::new();
    let mut per_file = Vec::with_capacity(files.len());
    for (index, changes) in files.iter().enumerate() {
        let mut counts = MergeCounts::default();
        for &change in changes {
            let k = key(change);
            let (held, first) = match state.get(&k) {
                Some((_, r)) => (Some(r.as_ref()), false),
                None => (initial(&k), true),
            };
            let row = match replay(dataset, held, change, &mut counts) {
                Some(row) => row,
                // This very delete, remembered by a load that stopped before
                // removing the row (tombstones are written first): remove it now.
                None if first
                    && table.contains_key(&k)
                    && held.is_some_and(|h| {
                        dataset.is_delete(h)
                            && dataset.is_delete(change)
                            && dataset.compare(change, h).is_eq()
                    }) =>
                {
                    counts.deleted += 1;
                    Cow::Borrowed(change)
                }
                None => continue,
            };
            state.insert(k, (index, row));
        }
        per_file.push(counts);
    }
    let tombstones = tombstone_changes(dataset, &state, &remembered, &initial);
    let (winners, expected) = winners(dataset, state, &table);
    Attribution {
        per_file,
        winners,
        expected,
        tombstones,
    }
}

/// The batch's newest change of each key, in key order, and what they do
/// to the table: a delete of a key it holds deletes, of a key it does not
/// hold changes nothing (left out); any other change updates or inserts.
fn winners<'a>(
    dataset: &Dataset,
    state: HashMap<KeyOf<'a>, State<'a>>,
    table: &HashMap<KeyOf<'a>, &'a [Value]>,
) -> (Vec<State<'a>>, MergeCounts) {
    let mut expected = MergeCounts::default();
    let mut winners: Vec<State<'a>> = state
        .into_iter()
        .filter_map(|(k, winner)| {
            let in_table = table.contains_key(&k);
            match (dataset.is_delete(&winner.1), in_table) {
                (true, true) => expected.deleted += 1,
                (true, false) => return None,
                (false, true) => expected.updated += 1,
                (false, false) => expected.inserted += 1,
            }
            Some(winner)
        })
        .collect();
    winners.sort_unstable_by(|a, b| dataset.key_cmp(&a.1, &b.1));
    (winners, expected)
}

/// What `change` makes of a key holding `held`, counted in `counts`; `None`
/// when it changes nothing (not newer, or a delete of a key with no row, which
/// is counted nowhere: it is stale for the table).
fn replay<'a>(
    dataset: &Dataset,
    held: Option<&[Value]>,
    change: &'a [Value],
    counts: &mut MergeCounts,
) -> Option<Cow<'a, [Value]>> {
    let delete = dataset.is_delete(change);
    match held {
        Some(held) if !dataset.replaces(change, held) => None,
        Some(held) if !dataset.is_delete(held) => {
            if delete {
                counts.deleted += 1;
                Some(Cow::Borrowed(change))
            } else {
                counts.updated += 1;
                Some(if dataset.updates_all() {
                    Cow::Borrowed(change)
                } else {
                    Cow::Owned(dataset.updated(held, change))
                })
            }
        }
        // No row (none, or a delete held): an upsert inserts the whole change.
        _ => {
            if !delete {
                counts.inserted += 1;
            }
            Some(Cow::Borrowed(change))
        }
    }
}

/// The tombstones to write: every key whose newest change is a delete (unless
/// remembered already), and every remembered key whose newest change is not.
fn tombstone_changes<'a>(
    dataset: &Dataset,
    state: &HashMap<KeyOf<'a>, State<'a>>,
    remembered: &HashMap<KeyOf<'a>, &'a [Value]>,
    initial: &dyn Fn(&KeyOf<'a>) -> Option<&'a [Value]>,
) -> Vec<Tombstone<'a>> {
    if !dataset.keeps_tombstones() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (k, (file, row)) in state {
        if let (true, Cow::Borrowed(change)) = (dataset.is_delete(row), row) {
            let same = remembered
                .get(k)
                .is_some_and(|dead| dataset.compare(dead, change).is_eq());
            if !same {
                out.push(Tombstone::Put(*file, change));
            }
        }
    }
    for (k, dead) in remembered {
        let newest = state.get(k).map(|(_, r)| r.as_ref()).or_else(|| initial(k));
        if newest.is_some_and(|r| !dataset.is_delete(r)) {
            out.push(Tombstone::Clear(dead));
        }
    }
    let row = |t: &Tombstone<'a>| match t {
        Tombstone::Put(_, r) | Tombstone::Clear(r) => *r,
    };
    out.sort_unstable_by(|a, b| dataset.key_cmp(row(a), row(b)));
    out
}

#[cfg(test)]
#[path = "attribution_tests.rs"]
mod tests;
