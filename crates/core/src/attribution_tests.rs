//! Tests of attribution.

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
columns = [
    { name = "a", type = "int" },
    { name = "b", type = "string" },
    { name = "seq", type = "bigint" },
    { name = "v", type = "string" },
    { name = "kept", type = "string" },
]
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
            ..MergeCounts::default()
        }
    );
}

/// The dataset with deletes: `row` plus the delete flag.
fn with_deletes() -> Dataset {
    let mut d = dataset();
    d.delete_when = Some(crate::spec::DeleteWhen {
        column: "op".into(),
        values: vec!["d".into()],
        upserts: Vec::new(),
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
