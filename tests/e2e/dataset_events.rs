//! One queue, many datasets: S3 events of three feeds (and a stray object)
//! handled in one batch, each object routed by its prefix to its dataset.

use crate::datasets::{data, spec_text};
use deltaload_aws::Message;
use deltaload_core::{Dataset, Spec};
use deltaload_lake::{table_rows, Lake, TableName};
use deltaload_tests::localstack::Stack;

/// Receives `n` messages from the stack's queue (S3's own notifications).
pub(crate) async fn receive(stack: &Stack, n: usize) -> Vec<Message> {
    let mut messages = Vec::new();
    for _ in 0..60 {
        let got = stack
            .sqs
            .receive_message()
            .queue_url(&stack.queue_url)
            .max_number_of_messages(10)
            .wait_time_seconds(1)
            .send()
            .await
            .expect("receive");
        for m in got.messages() {
            messages.push(Message {
                id: m.message_id().unwrap_or_default().to_string(),
                body: m.body().unwrap_or_default().to_string(),
            });
        }
        if messages.len() >= n {
            return messages;
        }
    }
    panic!("only {} of {n} notifications arrived", messages.len());
}

fn table(spec: &Spec, name: &str) -> TableName {
    TableName::Target(spec.dataset(name).expect("dataset").clone())
}

#[tokio::test(flavor = "multi_thread")]
async fn one_batch_of_events_routes_each_object_to_its_dataset() {
    let stack = Stack::new(5, 30).await;
    let spec = Spec::parse(&spec_text(&stack.landing), "spec.toml").unwrap();
    stack
        .put("netflix/2026/subscribers-1.csv", data("subscribers-1.csv"))
        .await;
    stack
        .put("iot/readings-1.csv", data("readings-1.csv"))
        .await;
    stack
        .put("hr/employees-1.csv", data("employees-1.csv"))
        .await;
    stack.put("elsewhere/stray.csv", "anything\n").await;
    let messages = receive(&stack, 4).await;
    let lake = Lake::open_spec(&stack.lake_root(), &spec).await.unwrap();
    let handler = stack.handler(lake).await;
    let report = handler.handle(&messages).await;
    assert_eq!(report.failures, Vec::<String>::new());
    assert_eq!(
        (
            report.totals.loaded,
            report.totals.refused,
            report.totals.records,
            report.totals.rejected,
            report.totals.inserted
        ),
        (3, 1, 11, 2, 8),
        "{report:?}"
    );
    let per: Vec<(&str, usize, usize)> = report
        .by_dataset
        .iter()
        .map(|(name, f)| (name.as_str(), f.loaded, f.refused))
        .collect();
    assert_eq!(
        per,
        [
            ("employees", 1, 0),
            ("readings", 1, 0),
            ("subscribers", 1, 0),
            ("unrouted", 0, 1)
        ]
    );
    let root = stack.lake_root();
    let rows = |t: TableName, columns: &'static str| {
        let root = root.clone();
        async move { table_rows(&root, &t, columns).await.unwrap() }
    };
    assert_eq!(
        rows(
            table(&spec, "subscribers"),
            "\"User_ID\", \"Country\", \"Join_Date\""
        )
        .await,
        [
            ["1", "United States", "2022-01-15"],
            ["2", "Canada", "2021-09-05"],
            ["3", "United Kingdom", "2023-02-28"]
        ]
    );
    assert_eq!(
        rows(
            table(&spec, "readings"),
            "site, sensor, taken_at, seq, value"
        )
        .await,
        [
            ["berlin", "t1", "2026-10-01T08:00:00Z", "2", "21.00"],
            ["berlin", "t2", "2026-10-01T07:00:00Z", "1", "19.00"],
            ["hamburg", "t1", "2026-10-01T09:00:00Z", "1", "NULL"]
        ]
    );
    assert_eq!(
        rows(table(&spec, "employees"), "id, name, salary, dept").await,
        [
            ["1", "Alice", "70000.0", "eng"],
            ["2", "Bob", "60000.0", "ops"]
        ]
    );
    let ledger = rows(TableName::Ledger, "dataset, location, status").await;
    let mut ledger: Vec<(String, String)> = ledger
        .into_iter()
        .map(|r| (r[0].clone(), r[2].clone()))
        .collect();
    ledger.sort();
    assert_eq!(
        ledger,
        [
            ("employees".to_string(), "loaded".to_string()),
            ("readings".to_string(), "loaded".to_string()),
            ("subscribers".to_string(), "loaded".to_string())
        ],
        "the stray object is not read, so not in the ledger"
    );
    // The same events again (a redelivery): nothing changes.
    let again = handler.handle(&messages).await;
    assert_eq!(
        (
            again.totals.loaded,
            again.totals.skipped,
            again.totals.refused
        ),
        (0, 3, 1),
        "{again:?}"
    );
    let orders = Dataset::orders();
    assert!(
        table_rows(&root, &TableName::Target(orders), "*")
            .await
            .unwrap()
            .is_empty(),
        "a spec without orders makes no orders table"
    );
    narrowed_to_a_dataset(&stack, &spec).await;
}

/// `reconcile` checks only the objects a dataset of the spec loads (the
/// stray one was reported never loaded, and `--enqueue` sent it again at
/// every run), and with `--dataset` only that dataset's; `status` counts
/// only its files.
async fn narrowed_to_a_dataset(stack: &Stack, spec: &Spec) {
    use deltaload_aws::landing_sweep::reconcile;
    use deltaload_aws::listing::{S3Prefix, Selection};
    let at = S3Prefix::parse(&format!("s3://{}/", stack.landing)).unwrap();
    let all = Selection::default();
    let readings = spec.narrow("readings").unwrap();
    // (listed, unrouted, checked, consistent) of the whole spec, then of readings.
    let mut lake = None;
    for (spec, figures) in [(spec, (4, 1, 3, 3)), (&readings, (4, 3, 1, 1))] {
        let mut opened = Lake::open_spec(&stack.lake_root(), spec).await.unwrap();
        let r = reconcile(&stack.s3, &mut opened, &at, &all, None)
            .await
            .unwrap();
        assert_eq!((r.listed, r.unrouted, r.checked, r.consistent), figures);
        assert!(r.is_consistent(), "{r:?}");
        lake = Some(opened);
    }
    let status = lake.expect("opened").status().await.unwrap();
    let files: u64 = status.files_per_day.iter().map(|(_, _, n)| n).sum();
    assert_eq!(files, 1, "{:?}", status.files_per_day);
}

/// `serve --spec` killed at every step of a batch that loads two datasets, then
/// the messages delivered again: the tables end as one clean run leaves them.
#[tokio::test(flavor = "multi_thread")]
async fn serve_with_a_spec_killed_at_any_step_then_redelivered_equals_a_clean_run() {
    const EXE: &str = env!("CARGO_BIN_EXE_deltaload-faulty");
    let dir = tempfile::tempdir().unwrap();
    async fn stack_with_two_feeds(dir: &std::path::Path) -> (Stack, Spec, String) {
        let stack = Stack::new(5, 2).await;
        let text = spec_text(&stack.landing);
        let path = dir.join(format!("{}.toml", stack.landing));
        std::fs::write(&path, &text).unwrap();
        stack
            .put("iot/readings-1.csv", data("readings-1.csv"))
            .await;
        stack
            .put("hr/employees-1.csv", data("employees-1.csv"))
            .await;
        stack.wait_for_messages(2).await;
        let spec = Spec::parse(&text, "spec.toml").unwrap();
        (stack, spec, path.to_str().unwrap().to_string())
    }
    let serve = |stack: &Stack, spec: &str, fault: Option<&str>| {
        let args = stack.serve_args(&stack.lake(), "1", &["--spec", spec]);
        match fault {
            Some(point) => stack.cli_fault(EXE, &args, point),
            None => stack.cli(EXE, &args),
        }
    };
    let state = |stack: &Stack, spec: &Spec| {
        let (root, spec, landing) = (stack.lake_root(), spec.clone(), stack.landing.clone());
        async move { deltaload_tests::lake_state_of(&root, &spec, &landing, "<landing>").await }
    };
    let (clean, spec, path) = stack_with_two_feeds(dir.path()).await;
    let out = serve(&clean, &path, None);
    assert!(
        deltaload_tests::stdout(&out).starts_with("2 messages, 2 files loaded"),
        "{}{}",
        deltaload_tests::stdout(&out),
        deltaload_tests::stderr(&out)
    );
    let expected = state(&clean, &spec).await;
    for point in crate::crash::POINTS.iter().chain(&["before-delete"]) {
        let (stack, spec, path) = stack_with_two_feeds(dir.path()).await;
        let killed = serve(&stack, &path, Some(point));
        assert!(
            deltaload_tests::stderr(&killed).contains("fault injected"),
            "{point}: {}",
            deltaload_tests::stderr(&killed)
        );
        // The messages come back after the 2 s visibility timeout; a loaded
        // machine may take a few rounds.
        stack
            .serve_until_drained(30, point, || serve(&stack, &path, None))
            .await;
        assert_eq!(
            state(&stack, &spec).await,
            expected,
            "{point}: tables differ from a clean run"
        );
        assert_eq!(stack.depth(&stack.dlq_url).await, 0, "{point}");
    }
}

/// `backfill` announces only what some dataset of the spec loads, and with
/// `--dataset` only that dataset's objects.
#[tokio::test(flavor = "multi_thread")]
async fn backfill_selects_the_objects_of_the_spec_and_of_one_dataset() {
    const EXE: &str = env!("CARGO_BIN_EXE_deltaload-faulty");
    let stack = Stack::new(5, 30).await;
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("spec.toml");
    std::fs::write(&spec, spec_text(&stack.landing)).unwrap();
    stack
        .put("netflix/subscribers-1.csv", data("subscribers-1.csv"))
        .await;
    stack
        .put("iot/readings-1.csv", data("readings-1.csv"))
        .await;
    stack.put("elsewhere/stray.csv", "anything\n").await;
    stack.drain(3).await;
    let (spec, lake, at) = (
        spec.to_str().unwrap(),
        stack.lake(),
        format!("s3://{}", stack.landing),
    );
    let backfill = |narrow: &[&str]| {
        let mut args = vec!["--spec", spec];
        args.extend_from_slice(narrow);
        args.extend([
            "backfill",
            &at,
            "--queue",
            &stack.queue_url,
            "--lake",
            &lake,
            "--dry-run",
        ]);
        deltaload_tests::stdout(&stack.cli(EXE, &args))
    };
    assert_eq!(
        backfill(&[]),
        "3 listed, 2 selected, 0 already loaded, 2 would enqueue, 0 failed\n"
    );
    assert_eq!(
        backfill(&["--dataset", "readings"]),
        "3 listed, 1 selected, 0 already loaded, 1 would enqueue, 0 failed\n"
    );
    // The spec read from S3, as the Lambda reads SpecUri.
    stack
        .s3
        .put_object()
        .bucket(&stack.lake_bucket)
        .key("config/spec.toml")
        .body(spec_text(&stack.landing).into_bytes().into())
        .send()
        .await
        .unwrap();
    let uri = format!("s3://{}/config/spec.toml", stack.lake_bucket);
    let checked = stack.cli(EXE, &["spec", "check", &uri]);
    assert!(
        deltaload_tests::stdout(&checked).ends_with(&format!("{uri}: 3 dataset(s), valid\n")),
        "{}{}",
        deltaload_tests::stdout(&checked),
        deltaload_tests::stderr(&checked)
    );
    let missing = stack.cli(
        EXE,
        &["--spec", &format!("{uri}.old"), "status", "--lake", &lake],
    );
    assert_eq!(missing.status.code(), Some(1));
    assert!(
        deltaload_tests::stderr(&missing).contains("cannot read the spec s3://"),
        "{}",
        deltaload_tests::stderr(&missing)
    );
}
