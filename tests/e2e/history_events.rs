//! History, a change data feed and snapshots fed by S3's own notifications
//! through LocalStack, each routed by its prefix: the three worked examples
//! of docs/datasets.md, their files arriving in two batches out of order,
//! give the tables the examples give from local files, and Python deltalake
//! reads the feed from S3.

use crate::change_feed::{EXAMPLE_FEED, EXAMPLE_FEED_ROWS};
use crate::dataset_events::receive;
use crate::history_cases::EXAMPLE_HISTORY;
use crate::other_engines::run_python;
use crate::preset_events::example;
use crate::snapshot_cases::EXAMPLE_TABLE;
use deltaload_core::Spec;
use deltaload_lake::{table_rows, Lake, TableName};
use deltaload_tests::localstack::Stack;

/// The three examples' specs as one, their sources in `bucket`.
fn spec_text(bucket: &str) -> String {
    let text = |name: &str| String::from_utf8(example(&format!("{name}/spec.toml"))).unwrap();
    let all = ["history", "change_feed", "snapshots"].map(text).join("\n");
    all.replace("s3://landing/", &format!("s3://{bucket}/"))
}

/// Uploads each example file (dataset, path under examples/) under its
/// dataset's prefix, the path's first folder left out, then loads the
/// notifications they cause in one batch.
async fn batch(stack: &Stack, lake: Lake, files: &[(&str, &str)]) -> deltaload_aws::BatchReport {
    for (dataset, path) in files {
        let inside = path.split_once('/').map_or(*path, |(_, rest)| rest);
        stack
            .put(&format!("{dataset}/{inside}"), example(path))
            .await;
    }
    let messages = receive(stack, files.len()).await;
    let report = stack.handler(lake).await.handle(&messages).await;
    assert_eq!(report.failures, Vec::<String>::new(), "{report:?}");
    report
}

/// `columns` of table `name`'s rows, each as one line of `show --format
/// csv` (a null empty).
async fn rows(root: &deltaload_lake::LakeRoot, name: &TableName, columns: &str) -> Vec<String> {
    let rows = table_rows(root, name, columns).await.unwrap();
    let cell = |c: &String| {
        if c == "NULL" {
            String::new()
        } else {
            c.clone()
        }
    };
    (rows.iter())
        .map(|r| r.iter().map(cell).collect::<Vec<_>>().join(","))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn history_feed_and_snapshots_load_from_s3_notifications_as_from_files() {
    let stack = Stack::new(5, 30).await;
    let spec = Spec::parse(&spec_text(&stack.landing), "spec.toml").unwrap();
    let root = stack.lake_root();
    let open = || Lake::open_spec(&root, &spec);
    // The late history file and the newer export first; the older export
    // of Canada after (its date read from the key as the notification
    // spells it), changing nothing.
    let first = batch(
        &stack,
        open().await.unwrap(),
        &[
            ("customers", "history/changes/late.csv"),
            ("customers", "history/changes/day-2.csv"),
            ("subscribers", "snapshots/exports/dt=2026-12-02/canada.csv"),
            ("prices", "change_feed/prices/2026-12-01.csv"),
        ],
    )
    .await;
    let second = batch(
        &stack,
        open().await.unwrap(),
        &[
            ("customers", "history/changes/day-1.csv"),
            ("subscribers", "snapshots/exports/dt=2026-12-01/canada.csv"),
            ("subscribers", "snapshots/exports/dt=2026-12-01/france.csv"),
            ("prices", "change_feed/prices/2026-12-02.csv"),
        ],
    )
    .await;
    let figures = |name: &str| {
        let mut sum = deltaload_aws::report::DatasetFigures::default();
        for report in [&first, &second] {
            let figures = report.by_dataset.get(name);
            sum.absorb(figures.unwrap_or_else(|| panic!("no file of {name} loaded: {report:?}")));
        }
        let s = &sum;
        (
            s.loaded, s.refused, s.inserted, s.updated, s.stale, s.deleted, s.retired,
        )
    };
    assert_eq!(figures("customers").0, 3);
    assert_eq!(figures("subscribers"), (3, 0, 5, 0, 3, 0, 0));
    assert_eq!(figures("prices"), (2, 0, 4, 1, 1, 1, 0));
    let dataset = |name: &str| spec.dataset(name).unwrap().clone();
    let history = TableName::History(dataset("customers"));
    let history = rows(
        &root,
        &history,
        "customer_id, tier, email, updated_at, __start_at, __end_at",
    );
    assert_eq!(history.await, EXAMPLE_HISTORY);
    let subscribers = TableName::Target(dataset("subscribers"));
    let subscribers = rows(
        &root,
        &subscribers,
        "user_id, country, plan, monthly_revenue",
    );
    assert_eq!(subscribers.await, EXAMPLE_TABLE);
    let prices = format!("{}/prices", stack.lake());
    let out = run_python(EXAMPLE_FEED, &[&prices, &stack.endpoint]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), EXAMPLE_FEED_ROWS);
}
