//! Deletes and tombstones against a simple model: whatever the order in which
//! the same files are loaded (with repeats, one by one or in batches), the
//! table holds each key whose newest change is an upsert, as that change, and
//! the tombstones hold each key whose newest change is a delete.

use deltaload_core::{attribute, newest_per_key, Dataset, Row, Spec, Tombstone, Value};
use proptest::prelude::*;
use std::collections::BTreeMap;

fn dataset(sequence: bool) -> Dataset {
    let sequence_by = if sequence {
        "sequence_by = [\"seq\"]\n"
    } else {
        ""
    };
    let text = format!(
        "[[dataset]]\nname = \"inventory\"\nformat = \"jsonl\"\nkeys = [\"w\", \"sku\"]\n{sequence_by}\
         delete_when = {{ column = \"op\", in = [\"d\"] }}\n\
         [[dataset.columns]]\nname = \"w\"\ntype = \"string\"\n\
         [[dataset.columns]]\nname = \"sku\"\ntype = \"int\"\n\
         [[dataset.columns]]\nname = \"seq\"\ntype = \"bigint\"\n\
         [[dataset.columns]]\nname = \"qty\"\ntype = \"int\"\n"
    );
    Spec::parse(&text, "t.toml").unwrap().datasets[0]
        .as_ref()
        .clone()
}

/// A change: key (w, sku), seq, qty, delete flag.
fn change(w: &str, sku: i64, seq: i64, qty: i64, delete: bool) -> Row {
    let qty = if delete { Value::Null } else { Value::Int(qty) };
    vec![
        Value::Text(w.into()),
        Value::Int(sku),
        Value::Int(seq),
        qty,
        Value::Bool(delete),
    ]
}

type Key = Vec<Value>;

/// The lake's state: the table's rows and the tombstones, by key.
#[derive(Debug, Default, Clone, PartialEq)]
struct Lake {
    table: BTreeMap<Key, Row>,
    tombstones: BTreeMap<Key, Row>,
    /// Σ inserted − Σ deleted over every load.
    net: i64,
}

impl Lake {
    /// Loads `files` together, as one batch, the way the lake does.
    fn load(&mut self, d: &Dataset, files: &[Vec<Row>]) {
        let reduced: Vec<Vec<Row>> = files.iter().map(|f| newest_per_key(d, f.clone())).collect();
        let current: Vec<Row> = self.table.values().cloned().collect();
        let dead: Vec<Row> = self.tombstones.values().cloned().collect();
        let lists: Vec<Vec<&[Value]>> = reduced
            .iter()
            .map(|f| f.iter().map(Vec::as_slice).collect())
            .collect();
        let plan = attribute(d, &current, &dead, &lists);
        for (i, counts) in plan.per_file.iter().enumerate() {
            let distinct = reduced[i].len() as u64;
            assert!(counts.inserted + counts.updated + counts.deleted <= distinct);
            self.net += counts.inserted as i64 - counts.deleted as i64;
        }
        assert_eq!(
            plan.expected.inserted as i64 - plan.expected.deleted as i64,
            plan.per_file
                .iter()
                .map(|c| c.inserted as i64 - c.deleted as i64)
                .sum::<i64>(),
        );
        for (_, row) in &plan.winners {
            let key = d.key_of(row);
            if d.is_delete(row) {
                assert!(
                    self.table.remove(&key).is_some(),
                    "a delete winner has a row"
                );
            } else {
                let next = match self.table.get(&key) {
                    Some(held) => d.updated(held, row)[..d.columns.len()].to_vec(),
                    None => row[..d.columns.len()].to_vec(),
                };
                self.table.insert(key, next);
            }
        }
        for t in &plan.tombstones {
            match t {
                Tombstone::Put(_, row) => {
                    let kept: Row = (0..d.width())
                        .map(|i| {
                            if d.keys.contains(&i)
                                || d.sequence_by.contains(&i)
                                || i == d.columns.len()
                            {
                                row[i].clone()
                            } else {
                                Value::Null
                            }
                        })
                        .collect();
                    self.tombstones.insert(d.key_of(row), kept);
                }
                Tombstone::Clear(row) => {
                    assert!(self.tombstones.remove(&d.key_of(row)).is_some());
                }
            }
        }
    }
}

/// The model: per key, the greatest change of every file ever loaded.
fn model(d: &Dataset, files: &[Vec<Row>]) -> (BTreeMap<Key, Row>, BTreeMap<Key, i64>) {
    let mut newest: BTreeMap<Key, Row> = BTreeMap::new();
    for c in files.iter().flatten() {
        let key = d.key_of(c);
        match newest.get(&key) {
            Some(held) if !d.replaces(c, held) => {}
            _ => {
                newest.insert(key, c.clone());
            }
        }
    }
    let mut table = BTreeMap::new();
    let mut dead = BTreeMap::new();
    for (k, c) in newest {
        if d.is_delete(&c) {
            dead.insert(
                k,
                match c[2] {
                    Value::Int(s) => s,
                    _ => -1,
                },
            );
        } else {
            table.insert(k, c[..d.columns.len()].to_vec());
        }
    }
    (table, dead)
}

fn arb_change() -> impl Strategy<Value = Row> {
    (
        "[xy]",
        0i64..3,
        0i64..4,
        0i64..3,
        prop::bool::weighted(0.35),
    )
        .prop_map(|(w, sku, seq, qty, del)| change(&w, sku, seq, qty, del))
}

fn files() -> impl Strategy<Value = Vec<Vec<Row>>> {
    prop::collection::vec(prop::collection::vec(arb_change(), 0..6), 1..5)
}

/// Loads `order` (indexes into `files`, repeats allowed), in batches of `batch`.
fn run(d: &Dataset, files: &[Vec<Row>], order: &[usize], batch: usize) -> Lake {
    let mut lake = Lake::default();
    for chunk in order.chunks(batch.max(1)) {
        let picked: Vec<Vec<Row>> = chunk.iter().map(|&i| files[i].clone()).collect();
        lake.load(d, &picked);
    }
    lake
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..Default::default() })]

    #[test]
    fn any_load_order_with_repeats_gives_the_model(
        (files, mut order) in files().prop_flat_map(|f| {
            let order: Vec<usize> = (0..f.len()).collect();
            (Just(f), Just(order).prop_shuffle())
        }),
        picks in prop::collection::vec(any::<prop::sample::Index>(), 0..6),
        batch in 1usize..4,
    ) {
        let d = dataset(true);
        // Every file at least once, in a shuffled order, plus repeats anywhere.
        let n = files.len();
        for p in &picks {
            let at = p.index(order.len() + 1);
            order.insert(at, p.index(n));
        }
        let lake = run(&d, &files, &order, batch);
        let (table, dead) = model(&d, &files);
        prop_assert_eq!(&lake.table, &table);
        let remembered: BTreeMap<Key, i64> = lake.tombstones.iter()
            .map(|(k, r)| (k.clone(), match r[2] { Value::Int(s) => s, _ => -1 }))
            .collect();
        prop_assert_eq!(remembered, dead);
        prop_assert_eq!(lake.net, table.len() as i64, "Σ inserted − Σ deleted = rows");
    }

    /// Without a sequence the later load wins, deletes included; no tombstones.
    #[test]
    fn without_a_sequence_the_later_load_wins(files in files(), batch in 1usize..4) {
        let d = dataset(false);
        let order: Vec<usize> = (0..files.len()).collect();
        let lake = run(&d, &files, &order, batch);
        let mut expected: BTreeMap<Key, Row> = BTreeMap::new();
        for f in &files {
            for c in newest_per_key(&d, f.clone()) {
                if d.is_delete(&c) {
                    expected.remove(&d.key_of(&c));
                } else {
                    expected.insert(d.key_of(&c), c[..d.columns.len()].to_vec());
                }
            }
        }
        prop_assert_eq!(lake.table, expected);
        prop_assert!(lake.tombstones.is_empty());
    }
}

#[test]
fn a_delete_before_the_upsert_it_overrides_keeps_the_row_away() {
    let d = dataset(true);
    let delete = vec![change("x", 1, 5, 0, true)];
    let upsert = vec![change("x", 1, 4, 7, false)];
    let newer = vec![change("x", 1, 6, 9, false)];
    let mut lake = Lake::default();
    lake.load(&d, std::slice::from_ref(&delete));
    lake.load(&d, std::slice::from_ref(&upsert));
    assert!(lake.table.is_empty(), "the older upsert stays deleted");
    assert_eq!(lake.tombstones.len(), 1);
    lake.load(&d, &[newer]);
    assert_eq!(lake.table.len(), 1, "a newer change inserts the row again");
    assert!(lake.tombstones.is_empty(), "and the tombstone is forgotten");
    // At an equal sequence the delete wins, whichever comes first.
    for files in [
        [delete.clone(), vec![change("x", 1, 5, 1, false)]],
        [vec![change("x", 1, 5, 1, false)], delete],
    ] {
        let mut lake = Lake::default();
        for f in files {
            lake.load(&d, &[f]);
        }
        assert!(lake.table.is_empty());
    }
}
