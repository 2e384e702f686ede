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
    /// columns among them) take the change's values, the others stay.
    pub fn updated(&self, held: &[Value], change: &[Value]) -> Row {
        let mut row = held[..self.columns.len()].to_vec();
        for &i in &self.update {
            row[i] = change[i].clone();
        }
        row
    }

    /// Whether an update sets every column but the keys: the updated row is
    /// then the change itself.
    pub fn updates_all(&self) -> bool {
        self.update.len() + self.keys.len() == self.columns.len()
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
    Attribution {
        per_file,
        winners,
        expected,
        tombstones,
    }
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
mod tests {
    use super::*;
    use crate::newest::newest_per_key;
    use crate::spec::Spec;
    use proptest::prelude::*;
    use std::collections::HashMap;

    /// A dataset with a composite key, a sequence, and one column an update leaves alone.
    fn dataset() -> Dataset {
        Spec::parse(
            r#"[[dataset]]
name = "t"
keys = ["a", "b"]
sequence_by = ["seq"]
update_columns = ["v"]
[[dataset.columns]]
name = "a"
type = "int"
[[dataset.columns]]
name = "b"
type = "string"
[[dataset.columns]]
name = "seq"
type = "bigint"
[[dataset.columns]]
name = "v"
type = "string"
[[dataset.columns]]
name = "kept"
type = "string"
"#,
            "t.toml",
        )
        .unwrap()
        .datasets
        .remove(0)
        .as_ref()
        .clone()
    }

    fn row(a: i64, b: &str, seq: i64, v: &str, kept: &str) -> Row {
        let text = |s: &str| Value::Text(s.into());
        vec![Value::Int(a), text(b), Value::Int(seq), text(v), text(kept)]
    }

    #[test]
    fn later_files_update_what_earlier_files_inserted_and_keep_the_other_columns() {
        let d = dataset();
        let current = vec![row(1, "x", 5, "p", "t0")];
        let files = [
            vec![row(1, "x", 4, "old", "f0"), row(2, "x", 1, "p", "f0")],
            vec![row(1, "x", 6, "s", "f1"), row(2, "x", 2, "s", "f1")],
            vec![row(2, "x", 2, "s", "f2")],
        ];
        let borrowed: Vec<Vec<&[Value]>> = files
            .iter()
            .map(|f| f.iter().map(Vec::as_slice).collect())
            .collect();
        let a = attribute(&d, &current, &[], &borrowed);
        let winners: Vec<(usize, Row)> = a.winners.iter().map(|(i, r)| (*i, r.to_vec())).collect();
        let counts: Vec<(u64, u64)> = a.per_file.iter().map(|c| (c.inserted, c.updated)).collect();
        assert_eq!(counts, vec![(1, 0), (0, 2), (0, 0)]);
        assert_eq!(
            winners,
            vec![
                (1, row(1, "x", 6, "s", "t0")),
                (1, row(2, "x", 2, "s", "f0"))
            ],
            "kept comes from the row held or the change that inserted it"
        );
        assert_eq!(
            a.expected,
            MergeCounts {
                inserted: 1,
                updated: 1,
                deleted: 0
            }
        );
    }

    /// The dataset with deletes: `row` plus the delete flag.
    fn with_deletes() -> Dataset {
        let mut d = dataset();
        d.delete_when = Some(crate::spec::DeleteWhen {
            column: "op".into(),
            values: vec!["d".into()],
        });
        d
    }

    fn change(a: i64, seq: i64, delete: bool) -> Row {
        let mut r = row(a, "x", seq, "v", "k");
        r.push(Value::Bool(delete));
        r
    }

    /// Tombstones are written before the table's MERGE: a load stopped between
    /// the two leaves the row beside its newer tombstone. Its rerun removes the
    /// row and counts it; another load's older upsert meanwhile stays stale.
    #[test]
    fn a_remembered_delete_not_yet_applied_is_applied_by_its_own_rerun_only() {
        let d = with_deletes();
        let current = vec![row(1, "x", 5, "p", "t0")];
        let dead = vec![change(1, 7, true)];
        let rerun = [change(1, 7, true)];
        let a = attribute(
            &d,
            &current,
            &dead,
            &[rerun.iter().map(Vec::as_slice).collect()],
        );
        assert_eq!(a.per_file[0].deleted, 1);
        assert_eq!(a.expected.deleted, 1);
        assert!(a.tombstones.is_empty(), "remembered already");
        let older = [change(1, 6, false)];
        let b = attribute(
            &d,
            &current,
            &dead,
            &[older.iter().map(Vec::as_slice).collect()],
        );
        assert_eq!(b.per_file[0], MergeCounts::default(), "stale");
        assert!(b.winners.is_empty());
    }

    fn arb_change() -> impl Strategy<Value = Row> {
        (0i64..3, "[xy]", 0i64..4, "[ab]", "[cd]").prop_map(|(a, b, s, v, k)| row(a, &b, s, &v, &k))
    }

    proptest! {
        /// The winners applied to the table equal the files applied one by one, and
        /// each file's counts are those of a MERGE of that file alone at its turn.
        #[test]
        fn equals_loading_the_files_one_by_one(
            table in prop::collection::vec(arb_change(), 0..6),
            files in prop::collection::vec(prop::collection::vec(arb_change(), 0..6), 0..5),
        ) {
            let d = dataset();
            let table = newest_per_key(&d, table);
            let current: HashMap<Vec<Value>, Row> =
                table.iter().map(|r| (d.key_of(r), r.clone())).collect();
            let files: Vec<Vec<Row>> = files.into_iter().map(|f| newest_per_key(&d, f)).collect();
            let borrowed: Vec<Vec<&[Value]>> = files.iter().map(|f| f.iter().map(Vec::as_slice).collect()).collect();
            let a = attribute(&d, &table, &[], &borrowed);

            let mut sequential = current.clone();
            for (i, file) in files.iter().enumerate() {
                let mut counts = MergeCounts::default();
                for c in file {
                    let key = d.key_of(c);
                    let next = match sequential.get(&key) {
                        None => { counts.inserted += 1; c.clone() }
                        Some(t) if d.replaces(c, t) => { counts.updated += 1; d.updated(t, c) }
                        Some(_) => continue,
                    };
                    sequential.insert(key, next);
                }
                prop_assert_eq!(counts, a.per_file[i]);
            }
            let mut batched = current.clone();
            for (_, r) in &a.winners {
                let key = d.key_of(r);
                // The MERGE: a matched row takes the update columns, a new key the whole row.
                let next = match batched.get(&key) { Some(t) => d.updated(t, r), None => r.to_vec() };
                batched.insert(key, next);
            }
            prop_assert_eq!(batched, sequential);
            prop_assert_eq!(a.expected.inserted + a.expected.updated, a.winners.len() as u64);
        }
    }
}
