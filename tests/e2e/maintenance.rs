//! `deltaload maintain`: fewer files, a checkpoint and a vacuum, and not one row
//! changed (merge-on-read tables and histories: [`crate::maintenance_mor`]);
//! safe beside loads that commit at the same time.

use crate::deltaload;
use deltaload_lake::{MaintainOptions, SourceFile, TableName};
use deltaload_tests::{load_one_by_one, orders_csv, stderr, stdout, Order, Sandbox};

/// A file changing orders `first..first + 20` at `hour`.
fn file(name: &str, first: u64, hour: u64) -> String {
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

/// How many files a writer loads at most while it waits for a compaction to
/// commit in the middle of a load.
const MOST_FILES: u64 = 100;

/// Writer `writer`'s file `n`: in its first four, orders 1..=20 changed at
/// hour `5 * writer + n` (writer 2's fourth file holds their newest change)
/// and 20 orders of its own added, so that every load commits; past them, 20
/// orders of its own only.
fn source(writer: u64, n: u64) -> SourceFile {
    let name = format!("w{writer}f{n}.csv");
    let own = 100 + 20 * (writer * MOST_FILES + n);
    if n >= 4 {
        return SourceFile::in_memory(format!("/landing/{name}"), file(&name, own, 1).into_bytes());
    }
    let hour = writer * 5 + n;
    let mut text = file(&name, 1, hour);
    let fresh = file(&name, own, hour);
    text.extend(
        fresh
            .lines()
            .skip(1)
            .filter(|l| !l.starts_with("bad-"))
            .map(|l| format!("{l}\n")),
    );
    SourceFile::in_memory(format!("/landing/{name}"), text.into_bytes())
}

/// The compactions that committed while a load ran (between its start and its
/// end, in milliseconds since the epoch).
fn overlapped(compactions: &[(u64, i64)], spans: &[(i64, i64)]) -> Vec<(u64, i64)> {
    (compactions.iter())
        .filter(|(_, at)| spans.iter().any(|(from, to)| from < at && at < to))
        .copied()
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn maintain_beside_concurrent_loads_loses_nothing() {
    let sb = Sandbox::new();
    drop(sb.lake().await);
    let orders_dir = sb.lake_dir().join("orders");
    let finished = std::sync::atomic::AtomicUsize::new(0);
    let finished = &finished;
    // When each load ran, in milliseconds since the epoch (as commits time themselves).
    let spans = std::sync::Mutex::new(Vec::new());
    let spans = &spans;
    let mut writers = Vec::new();
    for writer in 0..3 {
        let mut lake = sb.lake().await;
        let orders = orders_dir.clone();
        writers.push(async move {
            let mut loaded = 0;
            // Four files each, and more until a compaction has committed while
            // a load ran: the condition this test is about, waited for.
            for n in 0..MOST_FILES {
                let started = now_ms();
                loaded += load_one_by_one(&mut lake, writer, [source(writer, n)]).await;
                spans.lock().unwrap().push((started, now_ms()));
                let seen = overlapped(&compactions(&orders), &spans.lock().unwrap());
                if n >= 3 && !seen.is_empty() {
                    break;
                }
            }
            finished.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            (loaded, lake.commit_retries())
        });
    }
    let mut maintainer = sb.lake().await;
    let orders = orders_dir.clone();
    let maintenance = async move {
        let (mut runs, mut conflicts, mut skipped) = (0, 0, 0);
        let opts = MaintainOptions {
            cluster: true,
            ..MaintainOptions::default()
        };
        // Runs spread over the loads, as a schedule meets a few (back to back
        // they would starve the loads): the first once two loads have
        // committed (files to compact), each next after a load committed
        // since the last, while loads are still running.
        let created = last_version(&orders);
        while last_version(&orders) < created.map(|v| v + 2) {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        while finished.load(std::sync::atomic::Ordering::SeqCst) < 3 {
            let report = maintainer
                .maintain(opts)
                .await
                .unwrap_or_else(|e| panic!("maintain run {runs}: {e}"));
            conflicts += report.iter().map(|m| m.conflicts_retried).sum::<u32>();
            skipped += report.iter().filter(|m| m.compaction_skipped).count();
            runs += 1;
            let seen = last_version(&orders);
            while last_version(&orders) == seen
                && finished.load(std::sync::atomic::Ordering::SeqCst) < 3
            {
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            }
        }
        (runs, conflicts, skipped)
    };
    // Polled together: their commits interleave at every await.
    let (loads, (runs, conflicts, skipped)) =
        futures::future::join(futures::future::join_all(writers), maintenance).await;
    let mut retries = 0;
    let mut files = 0;
    for (loaded, r) in loads {
        assert!(loaded >= 4, "every file loads: {loaded}");
        files += loaded;
        retries += r;
    }
    let compactions = compactions(&orders_dir);
    let overlapped = overlapped(&compactions, &spans.lock().unwrap());
    eprintln!(
        "{files} files, {runs} maintain runs, compactions {compactions:?}, {} committed while \
         a load ran, {conflicts} compaction conflicts, {skipped} compactions skipped, \
         {retries} load retries",
        overlapped.len()
    );
    // They did run together: a compaction committed while a load was running.
    assert!(!overlapped.is_empty(), "no compaction overlapped a load");
    let ledger = sb.rows(TableName::Ledger, "status").await;
    assert_eq!(ledger.len(), files);
    assert!(ledger.iter().all(|r| r[0] == "loaded"));
    let orders = sb
        .rows(deltaload_tests::orders_table(), "order_id, updated_at")
        .await;
    assert_eq!(orders.len(), 20 + files * 20, "every order once");
    // Writer 2's fourth file (hour 13) is the newest change of orders 1..=20.
    let shared: Vec<_> = orders.iter().filter(|r| r[0].len() < 3).collect();
    assert_eq!(shared.len(), 20);
    assert!(
        shared.iter().all(|r| r[1] == "2026-10-01T13:00:00Z"),
        "{orders:?}"
    );
    let recon = sb.rows(TableName::Reconciliation, "balanced").await;
    assert_eq!(recon.len(), files);
    assert!(recon.iter().all(|r| r[0] == "true"));
}

/// Now, in milliseconds since the epoch.
fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

/// The compactions (OPTIMIZE commits) of `table`: their versions and when
/// they committed, in milliseconds since the epoch.
fn compactions(table: &std::path::Path) -> Vec<(u64, i64)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(table.join("_delta_log")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let Some(version) = name
            .strip_suffix(".json")
            .and_then(|v| v.parse::<u64>().ok())
        else {
            continue;
        };
        for line in std::fs::read_to_string(&path).unwrap().lines() {
            let action: serde_json::Value = serde_json::from_str(line).unwrap();
            let info = &action["commitInfo"];
            if info["operation"] == "OPTIMIZE" {
                found.push((version, info["timestamp"].as_i64().expect("commit time")));
            }
        }
    }
    found.sort();
    found
}

/// The newest version in `table`'s log.
fn last_version(table: &std::path::Path) -> Option<u64> {
    std::fs::read_dir(table.join("_delta_log"))
        .ok()?
        .filter_map(|e| {
            let name = e.ok()?.file_name().to_string_lossy().into_owned();
            name.strip_suffix(".json")?.parse().ok()
        })
        .max()
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
