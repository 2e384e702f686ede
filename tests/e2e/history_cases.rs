//! History's worked example through the CLI, in two orders; a load that
//! dies after its history and table are written loads again to the same
//! history and figures; a column added to the spec later.

use deltaload_lake::{Lake, LoadOptions, LoadOutcome, SourceFile, TableName};

const EXAMPLE_SPEC: &str = include_str!("../../examples/history/spec.toml");
const EXAMPLE: [&str; 3] = ["day-1.csv", "day-2.csv", "late.csv"];

/// The example's history as `show --format csv` prints it (an empty end:
/// the current version), whatever order its files were loaded in.
pub(crate) const EXAMPLE_HISTORY: [&str; 8] = [
    "1,bronze,ana@example.com,2026-12-01T09:00:00Z,2026-12-01T09:00:00Z,2026-12-01T15:00:00Z",
    "1,silver,ana@example.com,2026-12-01T15:00:00Z,2026-12-01T15:00:00Z,2026-12-01T20:00:00Z",
    "1,gold,ana@example.com,2026-12-01T20:00:00Z,2026-12-01T20:00:00Z,2026-12-02T08:00:00Z",
    "1,silver,ana@work.example.com,2026-12-02T08:00:00Z,2026-12-02T08:00:00Z,",
    "2,silver,ben@example.com,2026-12-01T09:05:00Z,2026-12-01T09:05:00Z,2026-12-01T12:00:00Z",
    "2,bronze,ben@example.com,2026-12-01T12:00:00Z,2026-12-01T12:00:00Z,2026-12-02T10:00:00Z",
    "2,gold,ben@work.example.com,2026-12-02T18:00:00Z,2026-12-02T10:00:00Z,",
    "3,gold,cy@example.com,2026-12-01T16:00:00Z,2026-12-01T16:00:00Z,2026-12-02T11:00:00Z",
];

/// The figures part of a `load` line.
fn figures(out: &str) -> Vec<String> {
    out.lines()
        .filter_map(|l| l.trim().split_once(": ").map(|(_, f)| f.to_string()))
        .collect()
}

/// The history as `show --format csv` prints it, without the lineage
/// columns (`source_file`, `loaded_at`, which sit before the bounds).
fn history(sb: &deltaload_tests::Sandbox) -> Vec<String> {
    let csv = crate::with_spec_ok(sb, &["show", "history_customers", "--format", "csv"]);
    crate::shown_versions(&csv)
}

/// Every version names the file of the change whose values it holds
/// (found by its key and `updated_at` among the example's files), and
/// carries that file's load time: one per file, a different one each.
fn lineage_is_the_values_file(sb: &deltaload_tests::Sandbox) {
    let mut file_of = std::collections::HashMap::new();
    for name in EXAMPLE {
        let text = std::fs::read_to_string(format!("../examples/history/changes/{name}"));
        for line in text.expect("example file").lines().skip(1) {
            let cells: Vec<&str> = line.split(',').collect();
            file_of.insert((cells[1].to_string(), cells[4].to_string()), name);
        }
    }
    let csv = crate::with_spec_ok(sb, &["show", "history_customers", "--format", "csv"]);
    let mut loaded = std::collections::BTreeMap::new();
    for line in csv.lines().skip(1) {
        let cells: Vec<&str> = line.split(',').collect();
        let name = file_of[&(cells[0].to_string(), cells[3].to_string())];
        assert!(
            cells[4].ends_with(&format!("/{name}")),
            "{line}: from {name}"
        );
        let at = loaded.entry(cells[4]).or_insert(cells[5]);
        assert_eq!(*at, cells[5], "{line}: one load time per file");
    }
    let times: std::collections::BTreeSet<_> = loaded.values().collect();
    assert_eq!(
        times.len(),
        loaded.len(),
        "a load time per file: {loaded:?}"
    );
}

fn paths(order: &[usize]) -> Vec<String> {
    (order.iter())
        .map(|&i| format!("raw/changes/{}", EXAMPLE[i]))
        .collect()
}

/// The worked example of docs/datasets.md: the late file last and first,
/// the lines the docs describe, and the same history both ways; day 2
/// loaded again with `--force` changes no version.
#[test]
fn the_worked_example_gives_the_same_history_in_either_order() {
    let mut histories = Vec::new();
    for order in [[0, 1, 2], [2, 0, 1]] {
        let sb = crate::example_sandbox(EXAMPLE_SPEC, ("history", "changes"), &EXAMPLE);
        let files = paths(&order);
        let mut args = vec!["load"];
        args.extend(files.iter().map(String::as_str));
        let out = crate::with_spec_ok(&sb, &args);
        let expected: &[&str] = match order[0] {
            0 => &[
                "0 rejected, 0 updated, 3 added, 0 deleted, 4 versions opened, 1 closed, table version 1",
                "0 rejected, 2 updated, 0 added, 1 deleted, 1 versions opened, 2 closed, table version 2",
                "0 rejected, 0 updated, 0 added, 0 deleted, 3 versions opened, 4 closed, table version 2",
            ],
            _ => &[
                "0 rejected, 0 updated, 2 added, 0 deleted, 2 versions opened, 0 closed, table version 1",
                "0 rejected, 0 updated, 1 added, 0 deleted, 4 versions opened, 3 closed, table version 2",
                "0 rejected, 2 updated, 0 added, 1 deleted, 2 versions opened, 3 closed, table version 3",
            ],
        };
        assert_eq!(figures(&out), expected, "order {order:?}: {out}");
        lineage_is_the_values_file(&sb);
        histories.push(history(&sb));
        // A file loaded again on purpose changes no version, and says so.
        let again = crate::with_spec_ok(&sb, &["load", "--force", &files[1]]);
        let again = figures(&again);
        assert!(
            again[0].contains(" 0 versions opened, 0 closed,"),
            "{again:?}"
        );
        assert_eq!(history(&sb), histories[histories.len() - 1]);
    }
    let sb = crate::example_sandbox(EXAMPLE_SPEC, ("history", "changes"), &[]);
    let check = crate::with_spec_ok(&sb, &["spec", "check", "spec.toml"]);
    assert!(
        check.contains("history: a version per change of tier, from __start_at to __end_at"),
        "{check}"
    );
    // Tracking no column: said so (it printed "a version per change of ,").
    let untracked = EXAMPLE_SPEC.replace("history_columns = [\"tier\"]", "history_columns = []");
    assert_ne!(untracked, EXAMPLE_SPEC);
    std::fs::write(sb.dir.path().join("untracked.toml"), untracked).expect("spec");
    let check = crate::with_spec_ok(&sb, &["spec", "check", "untracked.toml"]);
    assert!(
        check.contains("history: a version from an upsert to the delete that closes it"),
        "{check}"
    );
    assert_eq!(histories[0], histories[1]);
    let header = "customer_id,tier,email,updated_at,__start_at,__end_at";
    let expected: Vec<&str> = [header].into_iter().chain(EXAMPLE_HISTORY).collect();
    assert_eq!(histories[0], expected);
}

/// A load that dies after the history and the table are written (before
/// the figures and the ledger) loads again to the same history, with the
/// figures of a load that did not die; and so does a load with `--force`
/// (whose figures count nothing the history holds).
#[test]
fn a_load_stopped_after_its_writes_loads_again_to_the_same_history() {
    let clean = crate::example_sandbox(EXAMPLE_SPEC, ("history", "changes"), &EXAMPLE);
    let sb = crate::example_sandbox(EXAMPLE_SPEC, ("history", "changes"), &EXAMPLE);
    for &i in &[0usize, 2] {
        crate::with_spec_ok(&clean, &["load", &paths(&[i])[0]]);
        crate::with_spec_ok(&sb, &["load", &paths(&[i])[0]]);
    }
    let day2 = &paths(&[1])[0];
    let expected = crate::with_spec_ok(&clean, &["load", day2]);
    let died = crate::deltaload(
        &sb,
        &["--spec", "spec.toml", "load", day2],
        Some("after-orders"),
    );
    assert_ne!(died.status.code(), Some(0), "the fault stops the load");
    assert_eq!(history(&sb), history(&clean), "written before the stop");
    let again = crate::with_spec_ok(&sb, &["load", day2]);
    assert_eq!(figures(&again), figures(&expected));
    assert_eq!(history(&sb), history(&clean));
    // A load with --force that dies, run again without it, counts what the
    // forced load would have: the history holds the file, nothing changes.
    let args = ["--spec", "spec.toml", "load", "--force", day2];
    let died = crate::deltaload(&sb, &args, Some("after-orders"));
    assert_ne!(
        died.status.code(),
        Some(0),
        "the fault stops the forced load"
    );
    let resumed = figures(&crate::with_spec_ok(&sb, &["load", day2]));
    assert!(
        resumed[0].contains(" 0 versions opened, 0 closed,"),
        "{resumed:?}"
    );
    assert_eq!(history(&sb), history(&clean));
}

/// A nullable column added to a history dataset's spec is added last to
/// its tables; the log is still read by name, and the new column's values
/// reach the versions.
#[tokio::test(flavor = "multi_thread")]
async fn a_column_added_to_the_spec_reaches_the_history() {
    let before = crate::history::spec("history_columns = [\"tier\"]");
    let (_dir, root, mut lake) = crate::snapshots::fresh(&before).await;
    let first = "op,id,tier,email,at\nU,1,gold,a@x,10\nU,2,gold,b@x,10\n";
    let file = SourceFile::in_memory("/landing/1.csv".into(), first.into());
    lake.load(&file, LoadOptions::default())
        .await
        .expect("load");
    let text = crate::history::spec_text("history_columns = [\"tier\"]");
    let text = format!("{text}\n[[dataset.columns]]\nname = \"region\"\ntype = \"string\"\n");
    let spec = deltaload_core::Spec::parse(&text, "customers.toml").expect("spec");
    let mut lake = Lake::open_spec(&root, &spec).await.expect("lake opens");
    let second = "op,id,tier,email,at,region\nU,1,silver,a@x,20,eu\nD,2,gold,b@x,20,\n";
    let file = SourceFile::in_memory("/landing/2.csv".into(), second.into());
    match lake
        .load(&file, LoadOptions::default())
        .await
        .expect("load")
    {
        LoadOutcome::Loaded(l) => assert_eq!((l.figures.opened, l.figures.closed), (1, 2)),
        other => panic!("{other:?}"),
    }
    let history = TableName::History(spec.datasets[0].clone());
    let rows =
        deltaload_lake::table_rows(&root, &history, "id, tier, region, __start_at, __end_at");
    assert_eq!(
        rows.await.expect("rows"),
        [
            ["1", "gold", "NULL", "10", "20"],
            ["1", "silver", "eu", "20", "NULL"],
            ["2", "gold", "NULL", "10", "20"],
        ]
    );
}
