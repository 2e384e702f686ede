//! `deltaload maintain` beside loads that commit at the same time: a
//! compaction committed in the middle of a load, and not a row, reject or
//! figure lost.

use crate::maintenance::file;
use deltaload_lake::{MaintainOptions, SourceFile, TableName};
use deltaload_tests::{load_one_by_one, Sandbox};

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

/// Writer `writer`'s loads: four files, and more until a compaction has
/// committed while a load ran (the condition the test is about, waited
/// for), each load's span in `spans`; `finished` counted up at the end.
/// The files loaded and the commit retries.
async fn write(
    mut lake: deltaload_lake::Lake,
    writer: u64,
    orders: &std::path::Path,
    spans: &std::sync::Mutex<Vec<(i64, i64)>>,
    finished: &std::sync::atomic::AtomicUsize,
) -> (usize, u64) {
    let mut loaded = 0;
    for n in 0..MOST_FILES {
        let started = now_ms();
        loaded += load_one_by_one(&mut lake, writer, [source(writer, n)]).await;
        spans.lock().unwrap().push((started, now_ms()));
        let seen = overlapped(&compactions(orders), &spans.lock().unwrap());
        if n >= 3 && !seen.is_empty() {
            break;
        }
    }
    finished.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    (loaded, lake.commit_retries())
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
        let lake = sb.lake().await;
        writers.push(write(lake, writer, &orders_dir, spans, finished));
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
