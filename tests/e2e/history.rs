//! History (`history = true`): random change streams with late events and
//! deletes, cut into files loaded in any order (one delivered twice), give
//! the history a sequential model gives; after every load, the versions
//! opened and closed are what changed in the history table, and the
//! dataset's table holds each key's current version.

use deltaload_core::Spec;
use deltaload_lake::{LoadOptions, LoadOutcome, SourceFile, TableName};
use proptest::prelude::*;
use std::collections::BTreeMap;

/// Customers whose tier is tracked, with `extra`.
pub(crate) fn spec(extra: &str) -> Spec {
    Spec::parse(&spec_text(extra), "customers.toml").expect("customers spec")
}

/// The text of [`spec`].
pub(crate) fn spec_text(extra: &str) -> String {
    format!(
        r#"
[[dataset]]
name = "customers"
keys = ["id"]
sequence_by = ["at"]
delete_when = {{ column = "op", in = ["D"] }}
history = true
{extra}

[[dataset.columns]]
name = "id"
type = "bigint"

[[dataset.columns]]
name = "tier"
type = "string"

[[dataset.columns]]
name = "email"
type = "string"

[[dataset.columns]]
name = "at"
type = "bigint"
"#
    )
}

/// One change: id, sequence, delete, tier, email.
pub(crate) type Event = (u8, i64, bool, &'static str, &'static str);

/// The declarations: the tier tracked, copy-on-write; every column
/// tracked, merge-on-read with the change data feed; and keyed by a text
/// id (keys found in the row format, not as numbers), merge-on-read.
fn variants() -> [(&'static str, Spec, bool); 3] {
    let text_key = spec_text("merge_on_read = true").replacen("\"bigint\"", "\"string\"", 1);
    let text_key = Spec::parse(&text_key, "customers.toml").expect("customers spec");
    [
        ("tier tracked", spec("history_columns = [\"tier\"]"), true),
        (
            "all tracked, merge-on-read, feed",
            spec("merge_on_read = true\nchange_data_feed = true"),
            false,
        ),
        ("a text key, merge-on-read", text_key, false),
    ]
}

pub(crate) fn csv(events: &[Event]) -> Vec<u8> {
    let mut text = String::from("op,id,tier,email,at\n");
    for (id, at, delete, tier, email) in events {
        let op = if *delete { "D" } else { "U" };
        text.push_str(&format!("{op},{id},{tier},{email},{at}\n"));
    }
    text.into_bytes()
}

/// The history of `events` folded key by key in sequence order: a row per
/// version (id, tier, email, start, end or NULL).
pub(crate) fn model(events: &[&Event], tier_only: bool) -> Vec<Vec<String>> {
    let mut by_key: BTreeMap<u8, Vec<&Event>> = BTreeMap::new();
    for e in events {
        by_key.entry(e.0).or_default().push(e);
    }
    let mut rows = Vec::new();
    for (id, mut changes) in by_key {
        changes.sort_by_key(|e| e.1);
        changes.dedup_by_key(|e| e.1);
        // (start, end, tier, email); the last is open when `open`.
        let mut versions: Vec<(i64, Option<i64>, &str, &str)> = Vec::new();
        let mut open = false;
        for &&(_, at, delete, tier, email) in &changes {
            let same =
                |v: &(i64, Option<i64>, &str, &str)| v.2 == tier && (tier_only || v.3 == email);
            match versions.last_mut() {
                Some(v) if open && delete => {
                    v.1 = Some(at);
                    open = false;
                }
                _ if delete => {}
                Some(v) if open && same(v) => (v.2, v.3) = (tier, email),
                last => {
                    if let (Some(v), true) = (last, open) {
                        v.1 = Some(at);
                    }
                    versions.push((at, None, tier, email));
                    open = true;
                }
            }
        }
        for (start, end, tier, email) in versions {
            let end = end.map_or("NULL".to_string(), |e| e.to_string());
            rows.push(vec![
                id.to_string(),
                tier.into(),
                email.into(),
                start.to_string(),
                end,
            ]);
        }
    }
    rows
}

pub(crate) const VERSIONS: &str = "id, tier, email, __start_at, __end_at";

/// Versions in `after` whose start `before` lacks, and versions of `after`
/// with an end that `before` lacks (start and end).
fn changed(before: &[Vec<String>], after: &[Vec<String>]) -> (u64, u64) {
    let starts = |rows: &[Vec<String>]| -> Vec<(String, String)> {
        rows.iter().map(|r| (r[0].clone(), r[3].clone())).collect()
    };
    let (old, new) = (starts(before), starts(after));
    let opened = new.iter().filter(|s| !old.contains(s)).count() as u64;
    let ended = |r: &Vec<String>| (r[0].clone(), r[3].clone(), r[4].clone());
    let closed = (after.iter())
        .filter(|r| r[4] != "NULL" && !before.iter().any(|b| ended(b) == ended(r)))
        .count() as u64;
    (opened, closed)
}

/// Loads `files` in `order` one at a time, checking each load's figures
/// against the history's change and, at the end, the history against the
/// model and the table against the history's current versions.
async fn follow(
    spec: &Spec,
    files: &[Vec<Event>],
    order: &[usize],
    tier_only: bool,
) -> Result<Vec<Vec<String>>, TestCaseError> {
    let (_dir, root, mut lake) = crate::snapshots::fresh(spec).await;
    let history = TableName::History(spec.datasets[0].clone());
    let rows = || deltaload_lake::table_rows(&root, &history, VERSIONS);
    let mut before = rows().await.expect("rows");
    let mut loaded: Vec<&Event> = Vec::new();
    for &i in order {
        let file = SourceFile::in_memory(format!("/landing/part-{i}.csv"), csv(&files[i]));
        let outcome = lake.load(&file, LoadOptions::default()).await;
        let outcome = outcome.map_err(|e| TestCaseError::fail(format!("file {i}: {e}")))?;
        let after = rows().await.expect("rows");
        match outcome {
            LoadOutcome::Loaded(l) => {
                let f = l.figures;
                prop_assert_eq!((f.opened, f.closed), changed(&before, &after), "file {}", i);
                loaded.extend(&files[i]);
            }
            LoadOutcome::Skipped { .. } => prop_assert_eq!(&after, &before),
            LoadOutcome::Refused(m) => prop_assert!(false, "refused: {}", m.problem),
        }
        before = after;
    }
    prop_assert_eq!(
        &before,
        &model(&loaded, tier_only),
        "the history is the model's"
    );
    let target = TableName::Target(spec.datasets[0].clone());
    let current = deltaload_lake::table_rows(&root, &target, "id, tier, email, at").await;
    let open: Vec<Vec<String>> = (before.iter())
        .filter(|r| r[4] == "NULL")
        .map(|r| r[..3].iter().cloned().chain([r[3].clone()]).collect())
        .collect();
    let current = current.expect("rows");
    // The table's row is the newest change, its sequence maybe later than
    // the version's start (a change absorbed): compare all but `at`.
    let values = |rows: &[Vec<String>]| -> Vec<Vec<String>> {
        rows.iter().map(|r| r[..3].to_vec()).collect()
    };
    prop_assert_eq!(
        values(&current),
        values(&open),
        "the table holds the current versions"
    );
    Ok(before)
}

/// Up to 14 changes of ids 0..4, with distinct sequences in random order
/// (so files hold late events), a fifth of them deletes.
fn events() -> impl Strategy<Value = Vec<Event>> {
    let event = (0u8..4, prop::bool::weighted(0.2), 0usize..2, 0usize..2);
    (
        prop::collection::vec(event, 1..14),
        any::<prop::sample::Index>(),
    )
        .prop_map(|(raw, seed)| {
            let n = raw.len();
            let mut at: Vec<i64> = (1..=n as i64).map(|s| s * 10).collect();
            at.rotate_left(seed.index(n));
            at.swap(0, n / 2);
            (raw.into_iter().zip(at))
                .map(|((id, delete, t, e), at)| {
                    (id, at, delete, ["gold", "silver"][t], ["a@x", "b@x"][e])
                })
                .collect()
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]
    #[test]
    fn any_load_order_of_the_same_changes_gives_the_same_history(
        events in events(),
        cuts in 1usize..4,
        shuffle in any::<prop::sample::Index>(),
        repeat in any::<prop::sample::Index>(),
    ) {
        let runtime = deltaload_tests::runtime();
        let size = events.len().div_ceil(cuts);
        let files: Vec<Vec<Event>> = events.chunks(size).map(<[Event]>::to_vec).collect();
        let n = files.len();
        for (name, spec, tier_only) in variants() {
            let in_order: Vec<usize> = (0..n).collect();
            let mut order = in_order.clone();
            order.rotate_left(shuffle.index(n));
            order.swap(0, repeat.index(n));
            order.push(order[repeat.index(n)]);
            let first = runtime.block_on(follow(&spec, &files, &in_order, tier_only));
            let first = first.map_err(|e| TestCaseError::fail(format!("{name}: {e}")))?;
            let shuffled = runtime.block_on(follow(&spec, &files, &order, tier_only));
            let shuffled = shuffled.map_err(|e| TestCaseError::fail(format!("{name}, {order:?}: {e}")))?;
            prop_assert_eq!(first, shuffled, "{}", name);
        }
    }
}
