//! Snapshot feeds (`mode = "snapshot"`): daily snapshots loaded in any
//! order, repeated, leave the table as the newest snapshot of each scope
//! says; every load changes exactly what its figures count (new keys
//! inserted, changed rows updated, missing keys retired), and a snapshot
//! older than one loaded before it changes nothing.

use deltaload_core::Spec;
use deltaload_lake::{Lake, LakeRoot, LoadOptions, LoadOutcome, SourceFile, TableName};
use proptest::prelude::*;
use std::collections::BTreeMap;

/// Subscribers whose snapshots are ordered by the key's date, with `extra`.
pub(crate) fn spec(extra: &str) -> Spec {
    let text = format!(
        r#"
[[dataset]]
name = "subscribers"
keys = ["id"]
mode = "snapshot"
{extra}

[[dataset.columns]]
name = "id"
type = "bigint"

[[dataset.columns]]
name = "region"
type = "string"

[[dataset.columns]]
name = "plan"
type = "string"

[[dataset.columns]]
name = "exported_on"
type = "date"
"#
    );
    Spec::parse(&text, "subscribers.toml").expect("subscribers spec")
}

/// The ways a snapshot dataset is declared: whole-table snapshots ordered
/// by the key's date, on copy-on-write; per-region snapshots on
/// merge-on-read with the change data feed; whole-table snapshots ordered
/// by a column, with history, on merge-on-read (the history's failure test
/// in [`crate::snapshot_history`] is copy-on-write); per-region snapshots
/// ordered by a column, with history (a snapshot closes the versions of
/// its own scope only).
fn variants() -> [(&'static str, Spec, Shape); 4] {
    let by_key = "snapshot_key_date = \"dt=%Y-%m-%d\"";
    [
        ("whole, key date", spec(by_key), Shape::default()),
        (
            "per region, merge-on-read, feed",
            spec(&format!("{by_key}\nsnapshot_scope = [\"region\"]\nmerge_on_read = true\nchange_data_feed = true")),
            Shape { scoped: true, dated: false },
        ),
        (
            "whole, column, history, merge-on-read",
            spec("sequence_by = [\"exported_on\"]\nhistory = true\nmerge_on_read = true"),
            Shape { scoped: false, dated: true },
        ),
        (
            "per region, column, history",
            spec("sequence_by = [\"exported_on\"]\nsnapshot_scope = [\"region\"]\nhistory = true"),
            Shape { scoped: true, dated: true },
        ),
    ]
}

/// One day's rows: for each id, its plan when the snapshot holds it.
type Day = Vec<Option<&'static str>>;

/// An id's region: a key stays in its scope.
pub(crate) fn region(id: usize) -> &'static str {
    ["eu", "us"][id % 2]
}

/// How a dataset's snapshots are cut and written.
#[derive(Debug, Clone, Copy, Default)]
struct Shape {
    /// A file per region, not one for the whole table.
    scoped: bool,
    /// `exported_on` is the file's day in every row (else one date for all).
    dated: bool,
}

/// A snapshot file: its day, its region (`None`: the whole table) and its rows.
#[derive(Debug, Clone)]
pub(crate) struct Export {
    day: usize,
    region: Option<&'static str>,
    pub(crate) rows: Vec<(usize, &'static str)>,
    dated: bool,
}

impl Export {
    /// A whole-table export of `day` (from 0) holding `rows` (id, plan),
    /// one date in every row.
    pub(crate) fn whole(day: usize, rows: &[(usize, &'static str)]) -> Self {
        Self {
            day,
            region: None,
            rows: rows.to_vec(),
            dated: false,
        }
    }

    /// The same, with the day's date in every row.
    pub(crate) fn dated(day: usize, rows: &[(usize, &'static str)]) -> Self {
        Self {
            dated: true,
            ..Self::whole(day, rows)
        }
    }

    /// Whether the export holds the scope of `id` (every id's, whole).
    pub(crate) fn holds_scope_of(&self, id: usize) -> bool {
        self.region.is_none_or(|r| r == region(id))
    }

    pub(crate) fn location(&self) -> String {
        let part = self.region.unwrap_or("all");
        format!("/landing/dt=2026-12-{:02}/{part}.csv", self.day + 1)
    }

    /// The `exported_on` of its rows.
    pub(crate) fn exported_on(&self) -> String {
        format!("2026-12-{:02}", if self.dated { self.day + 1 } else { 1 })
    }

    pub(crate) fn csv(&self) -> Vec<u8> {
        let mut text = String::from("id,region,plan,exported_on\n");
        for (id, plan) in &self.rows {
            let on = self.exported_on();
            text.push_str(&format!("{id},{},{plan},{on}\n", region(*id)));
        }
        text.into_bytes()
    }
}

/// The files of `days`: one per day, or one per day and region holding rows.
fn exports(days: &[Day], shape: Shape) -> Vec<Export> {
    let mut out = Vec::new();
    for (day, plans) in days.iter().enumerate() {
        let rows = |r: Option<&str>| -> Vec<(usize, &'static str)> {
            (plans.iter().enumerate())
                .filter_map(|(id, p)| p.map(|p| (id, p)))
                .filter(|(id, _)| r.is_none_or(|r| region(*id) == r))
                .collect()
        };
        let dated = shape.dated;
        match shape.scoped {
            false => out.push(Export {
                day,
                region: None,
                rows: rows(None),
                dated,
            }),
            true => {
                for r in ["eu", "us"] {
                    let rows = rows(Some(r));
                    if !rows.is_empty() {
                        out.push(Export {
                            day,
                            region: Some(r),
                            rows,
                            dated,
                        });
                    }
                }
            }
        }
    }
    out
}

/// The table the newest snapshot of each scope among `loaded` makes.
fn model(loaded: &[&Export]) -> Vec<Vec<String>> {
    let mut newest: BTreeMap<Option<&str>, &Export> = BTreeMap::new();
    for e in loaded {
        if newest.get(&e.region).is_none_or(|n| n.day < e.day) {
            newest.insert(e.region, e);
        }
    }
    let mut rows: Vec<Vec<String>> = (newest.values())
        .flat_map(|e| {
            e.rows.iter().map(|(id, plan)| {
                vec![
                    id.to_string(),
                    region(*id).to_string(),
                    plan.to_string(),
                    e.exported_on(),
                ]
            })
        })
        .collect();
    rows.sort_by_key(|r| r[0].parse::<u64>().unwrap_or(0));
    rows
}

pub(crate) const COLUMNS: &str = "id, region, plan, exported_on";

/// What a load changed, from the table before and after: (inserted,
/// updated, removed) keys.
fn changed(before: &[Vec<String>], after: &[Vec<String>]) -> (u64, u64, u64) {
    let by_key = |rows: &[Vec<String>]| -> BTreeMap<String, Vec<String>> {
        rows.iter().map(|r| (r[0].clone(), r.clone())).collect()
    };
    let (old, new) = (by_key(before), by_key(after));
    let inserted = new.keys().filter(|k| !old.contains_key(*k)).count() as u64;
    let removed = old.keys().filter(|k| !new.contains_key(*k)).count() as u64;
    let updated = (new.iter())
        .filter(|(k, r)| old.get(*k).is_some_and(|o| o != *r))
        .count() as u64;
    (inserted, updated, removed)
}

/// A lake of `spec` in a new temporary directory, which lives as long as
/// the first of the three is held.
pub(crate) async fn fresh(spec: &Spec) -> (tempfile::TempDir, LakeRoot, Lake) {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = deltaload_lake::lake_url(dir.path().to_str().expect("utf-8")).expect("lake url");
    let lake = Lake::open_spec(&root, spec).await.expect("lake opens");
    (dir, root, lake)
}

/// Days of subscribers 0..8, each present or not, of plan a or b.
fn days() -> impl Strategy<Value = Vec<Day>> {
    let plan = prop::option::weighted(0.7, prop::sample::select(vec!["a", "b"]));
    prop::collection::vec(prop::collection::vec(plan, 8), 1..5)
}

/// What loading `order` (indexes into `files`) one at a time did: the
/// retired rows counted in all.
pub(crate) async fn follow(
    spec: &Spec,
    files: &[Export],
    order: &[usize],
) -> Result<u64, TestCaseError> {
    let (_dir, root, mut lake) = fresh(spec).await;
    let table = TableName::Target(spec.datasets[0].clone());
    let rows = || deltaload_lake::table_rows(&root, &table, COLUMNS);
    let mut loaded: Vec<&Export> = Vec::new();
    let mut applied: Vec<&Export> = Vec::new();
    let mut retired = 0;
    let mut before = rows().await.expect("rows");
    let mut versions = Vec::new();
    for &i in order {
        let e = &files[i];
        let file = SourceFile::in_memory(e.location(), e.csv());
        let outcome = lake.load(&file, LoadOptions::default()).await;
        let outcome =
            outcome.map_err(|err| TestCaseError::fail(format!("{}: {err}", e.location())))?;
        let after = rows().await.expect("rows");
        let superseded = loaded.iter().any(|l| l.region == e.region && l.day > e.day);
        loaded.push(e);
        match outcome {
            LoadOutcome::Loaded(l) => {
                let f = l.figures;
                let counted = (f.inserted, f.updated, f.retired);
                prop_assert_eq!(counted, changed(&before, &after), "{}", e.location());
                prop_assert_eq!(f.deleted, 0);
                if superseded {
                    prop_assert_eq!(&after, &before, "an older snapshot changed the table");
                    prop_assert_eq!(f.stale, f.loaded, "an older snapshot's rows are all stale");
                } else {
                    applied.push(e);
                }
                retired += f.retired;
                if spec.datasets[0].history.is_some() {
                    let now = crate::snapshot_history::versions(&root, spec).await;
                    let figures = crate::snapshot_history::changed(&versions, &now);
                    prop_assert_eq!((f.opened, f.closed), figures, "{}", e.location());
                    let model = crate::snapshot_history::model(&applied);
                    prop_assert_eq!(&now, &model, "the history of {}", e.location());
                    versions = now;
                }
            }
            LoadOutcome::Skipped { .. } => prop_assert_eq!(&after, &before),
            LoadOutcome::Refused(m) => prop_assert!(false, "refused: {}", m.problem),
        }
        before = after;
    }
    prop_assert_eq!(before, model(&loaded), "the table is the newest snapshots'");
    Ok(retired)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 10, ..ProptestConfig::default() })]
    #[test]
    fn any_order_of_snapshots_leaves_the_newest_of_each_scope(
        days in days(),
        shuffle in any::<prop::sample::Index>(),
        repeat in any::<prop::sample::Index>(),
    ) {
        let runtime = deltaload_tests::runtime();
        for (name, spec, shape) in variants() {
            let files = exports(&days, shape);
            if files.is_empty() {
                continue;
            }
            let mut order: Vec<usize> = (0..files.len()).collect();
            let n = order.len();
            // A shuffle by rotation and swap, and one file delivered twice.
            order.rotate_left(shuffle.index(n));
            order.swap(0, repeat.index(n));
            order.push(order[repeat.index(n)]);
            let got = runtime.block_on(follow(&spec, &files, &order));
            got.map_err(|e| TestCaseError::fail(format!("{name}: {e}")))?;
        }
    }
}
