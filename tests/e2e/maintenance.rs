//! `deltaload maintain`: fewer files, a checkpoint and a vacuum, and not one row
//! changed (merge-on-read tables and histories: [`crate::maintenance_mor`];
//! beside loads that commit at the same time: [`crate::maintenance_races`]).

use crate::deltaload;
use deltaload_lake::TableName;
use deltaload_tests::{orders_csv, stderr, stdout, Order, Sandbox};

/// A file changing orders `first..first + 20` at `hour`.
pub(crate) fn file(name: &str, first: u64, hour: u64) -> String {
    let mut orders: Vec<Order> = (first..first + 20)
        .map(|id| {
            Order::new(id)
                .customer(format!("C{hour}"))
                .amount(format!("{hour}.00"))
                .updated_at(format!("2026-10-01T{hour:02}:00:00"))
        })
        .collect();
    orders.push(
        Order::new(format!("bad-{name}"))
            .customer("C")
            .updated_at("2026-10-01T00:00:00"),
    );
    orders_csv(&orders)
}

/// Loads `f{n}.csv` for each n, one process each: orders `10n..10n + 20` at hour n + 1.
fn load_each(sb: &Sandbox, files: std::ops::Range<u64>) {
    for n in files {
        let name = format!("f{n}.csv");
        sb.file(&name, file(&name, n * 10, n + 1));
        let arg = format!("raw/{name}");
        assert_eq!(deltaload(sb, &["load", &arg], None).status.code(), Some(0));
    }
}

fn parquet_files(dir: &std::path::Path) -> usize {
    std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(Result::ok)
                .filter(|e| e.path().extension().is_some_and(|x| x == "parquet"))
                .count()
        })
        .unwrap_or(0)
}

const ALL_ORDERS: &str =
    "order_id, customer_id, status, amount, currency, ordered_at, updated_at, source_file, loaded_at";

#[tokio::test(flavor = "multi_thread")]
async fn maintain_compacts_clusters_checkpoints_and_vacuums_without_changing_a_row() {
    let sb = Sandbox::new();
    // Overlapping order ranges: later files update what earlier ones inserted.
    load_each(&sb, 0..6);
    let orders_dir = sb.lake_dir().join("orders");
    let before_files = parquet_files(&orders_dir);
    assert!(before_files >= 6, "{before_files} files");
    let state = sb.state().await;
    let rows = sb.rows(deltaload_tests::orders_table(), ALL_ORDERS).await;

    let short = deltaload(&sb, &["maintain", "--retain-hours", "0"], None);
    assert_eq!(short.status.code(), Some(1));
    assert!(
        stderr(&short).contains("--allow-short-retention"),
        "{}",
        stderr(&short)
    );
    assert_eq!(
        parquet_files(&orders_dir),
        before_files,
        "refused before any change"
    );

    let out = deltaload(
        &sb,
        &[
            "maintain",
            "--cluster",
            "--retain-hours",
            "0",
            "--allow-short-retention",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert_eq!(text.lines().count(), 4, "{text}");
    for table in ["orders", "rejected_orders", "ledger", "reconciliation"] {
        assert!(
            text.lines()
                .any(|l| l.starts_with(&format!("{table}: ")) && l.contains(" files -> 1 (")),
            "{text}"
        );
    }
    assert!(
        text.contains("rejected_orders: 6 files -> 1 (6 compacted into 1)"),
        "{text}"
    );
    assert_eq!(
        parquet_files(&orders_dir),
        1,
        "vacuum deleted the replaced files"
    );
    assert!(std::fs::read_dir(orders_dir.join("_delta_log"))
        .expect("log")
        .filter_map(Result::ok)
        .any(|e| e
            .file_name()
            .to_string_lossy()
            .ends_with(".checkpoint.parquet")));
    assert_eq!(sb.state().await, state);
    assert_eq!(
        sb.rows(deltaload_tests::orders_table(), ALL_ORDERS).await,
        rows
    );

    // Loads go on as before: a loaded file is skipped, a new one loads.
    let again = deltaload(&sb, &["load", "raw/f0.csv"], None);
    assert!(
        stdout(&again).contains("already loaded"),
        "{}",
        stdout(&again)
    );
    sb.file("g.csv", file("g.csv", 100, 20));
    let new = deltaload(&sb, &["load", "raw/g.csv"], None);
    assert!(
        stdout(&new).contains("1 rejected, 0 updated, 20 added"),
        "{}",
        stdout(&new)
    );
}

/// Whether `table`'s log holds a checkpoint of `version`.
fn has_checkpoint(table: &std::path::Path, version: u64) -> bool {
    table
        .join("_delta_log")
        .join(format!("{version:020}.checkpoint.parquet"))
        .exists()
}

/// The `delta.checkpointInterval` property of the table in `dir`.
async fn checkpoint_interval(dir: &std::path::Path) -> Option<String> {
    let url = url::Url::from_directory_path(dir).expect("table path");
    let table = deltalake::open_table(url).await.expect("table opens");
    let snapshot = table.snapshot().expect("snapshot");
    snapshot
        .metadata()
        .configuration()
        .get("delta.checkpointInterval")
        .cloned()
}

// Opening a table reads every commit since its last checkpoint (one request
// each on S3): a Lambda's cold start must not read a hundred.
#[tokio::test(flavor = "multi_thread")]
async fn tables_checkpoint_every_ten_commits_and_maintain_sets_the_interval_on_older_ones() {
    use deltalake::kernel::engine::arrow_conversion::TryIntoKernel;
    let sb = Sandbox::new();
    // A ledger created as an older deltaload did: Delta's default interval (100).
    let ledger = sb.lake_dir().join("ledger");
    std::fs::create_dir_all(&ledger).expect("ledger dir");
    let schema: deltalake::kernel::StructType = TableName::Ledger
        .schema()
        .as_ref()
        .try_into_kernel()
        .expect("ledger schema");
    deltalake::DeltaTableBuilder::from_url(url::Url::from_directory_path(&ledger).expect("url"))
        .and_then(|b| b.build())
        .expect("table")
        .create()
        .with_columns(schema.fields().cloned())
        .await
        .expect("older ledger created");

    load_each(&sb, 0..10);
    let orders = sb.lake_dir().join("orders");
    assert_eq!(checkpoint_interval(&orders).await.as_deref(), Some("10"));
    assert!(
        has_checkpoint(&orders, 9),
        "orders' tenth commit wrote a checkpoint"
    );
    // The older ledger (20 commits by the loads) kept Delta's default.
    assert_eq!(checkpoint_interval(&ledger).await, None);
    assert!(!has_checkpoint(&ledger, 9) && !has_checkpoint(&ledger, 19));

    let out = deltaload(&sb, &["maintain"], None);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(checkpoint_interval(&ledger).await.as_deref(), Some("10"));
    // The property's commit is the ledger's version 21; four more loads
    // commit twice each, and the commit of version 29 writes a checkpoint.
    load_each(&sb, 10..14);
    assert!(
        has_checkpoint(&ledger, 29),
        "the ledger checkpoints every ten commits"
    );
}

/// A lake idle for longer than the log retention (30 days), with commits
/// after a table's newest checkpoint: maintain writes a new checkpoint and
/// removes the expired log entries, the old checkpoint among them, then
/// vacuums a table opened anew (it vacuumed the one read from that
/// checkpoint, and failed on it, table after table, run after run).
#[test]
fn maintain_after_the_log_retention_went_by() {
    let sb = Sandbox::new();
    let names: Vec<String> = (0..12).map(|n| format!("f{n}.csv")).collect();
    for (n, name) in names.iter().enumerate() {
        sb.file(name, file(name, n as u64 * 10, n as u64 + 1));
    }
    let mut args = vec!["load".to_string()];
    args.extend(names.iter().map(|n| format!("raw/{n}")));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    assert_eq!(deltaload(&sb, &args, None).status.code(), Some(0));
    let past = std::time::SystemTime::now() - std::time::Duration::from_secs(40 * 86_400);
    for table in std::fs::read_dir(sb.lake_dir()).unwrap() {
        for entry in std::fs::read_dir(table.unwrap().path().join("_delta_log")).unwrap() {
            let path = entry.unwrap().path();
            if path.is_file() {
                let file = std::fs::File::options().append(true).open(&path).unwrap();
                file.set_modified(past).unwrap();
            }
        }
    }
    let out = deltaload(&sb, &["maintain"], None);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let removed = stdout(&out);
    assert!(removed.contains("orders: "), "{removed}");
    let out = deltaload(
        &sb,
        &["show", "orders", "--limit", "0", "--format", "csv"],
        None,
    );
    assert_eq!(stdout(&out).lines().count(), 131, "{}", stderr(&out));
}
