//! A storage error in the middle of a load: the load fails, readers see no part
//! of it, and the next attempt leaves the tables of a clean load.

use deltaload_lake::{Lake, LakeRoot, LoadOptions, SourceFile, TableName};
use deltaload_tests::{faulty_store, lake_state, Sandbox, DAY1, DAY2};

fn files(dir: &std::path::Path) -> Vec<SourceFile> {
    [("day1.csv", DAY1), ("day2.csv", DAY2)]
        .iter()
        .map(|(name, text)| {
            SourceFile::in_memory(
                format!("{}/landing/{name}", dir.display()),
                text.as_bytes().to_vec(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_write_failing_at_each_table_fails_the_load_and_the_retry_completes_it() {
    faulty_store::register();
    // The clean result, on a plain local lake.
    let clean_sb = Sandbox::new();
    let mut clean = clean_sb.lake().await;
    clean
        .load_batch(files(clean_sb.dir.path()), LoadOptions::default())
        .await
        .expect("clean load");
    let dir = clean_sb.dir.path().display().to_string();
    let expected = lake_state(&clean_sb.root, &dir, "<dir>").await;

    // Each fragment names a write the load makes: a table's data file or commit.
    for fragment in [
        "ledger/_delta_log/",
        "rejected_orders/part-",
        "orders/_delta_log/",
        "reconciliation/_delta_log/",
    ] {
        let sb = Sandbox::new();
        let root = LakeRoot {
            url: faulty_store::url_of(&sb.dir.path().join("lake")),
            storage_options: Default::default(),
        };
        let mut lake = Lake::open(&root).await.expect("open the faulty lake");
        let versions = |root: &LakeRoot| {
            let root = root.clone();
            async move {
                let mut v = Vec::new();
                for name in TableName::all(&deltaload_core::Spec::builtin().datasets) {
                    v.push(
                        deltaload_lake::table_version(&root, &name)
                            .await
                            .expect("version"),
                    );
                }
                v
            }
        };
        let before = versions(&root).await;
        // Object-store paths carry no leading slash.
        let lake_dir = sb.dir.path().join("lake").display().to_string();
        faulty_store::fail_writes(
            &format!("{}/{fragment}", lake_dir.trim_start_matches('/')),
            1,
        );
        let failed = lake
            .load_batch(files(sb.dir.path()), LoadOptions::default())
            .await;
        let error = failed.expect_err("the injected write failure fails the load");
        assert!(
            error.to_string().contains("injected write failure"),
            "{fragment}: {error}"
        );
        let after = versions(&root).await;
        if fragment == "ledger/_delta_log/" {
            assert_eq!(after, before, "{fragment}: a commit became visible");
        }
        if fragment == "orders/_delta_log/" {
            assert_eq!(after[0], before[0], "a part of the MERGE became visible");
        }
        let mut again = Lake::open(&root).await.expect("reopen");
        again
            .load_batch(files(sb.dir.path()), LoadOptions::default())
            .await
            .unwrap_or_else(|e| panic!("{fragment}: the retry failed: {e}"));
        let dir = sb.dir.path().display().to_string();
        assert_eq!(
            lake_state(&root, &dir, "<dir>").await,
            expected,
            "{fragment}: tables differ from a clean load"
        );
    }
}

/// A read that fails as S3 sometimes does (a response cut off in its body)
/// while the lake is opened: the opening tries again, as `serve` and the
/// Lambda need it to, and the lake opens.
#[tokio::test(flavor = "multi_thread")]
async fn a_read_failing_while_the_lake_opens_is_retried() {
    faulty_store::register();
    let sb = Sandbox::new();
    let root = LakeRoot {
        url: faulty_store::url_of(&sb.dir.path().join("lake")),
        storage_options: Default::default(),
    };
    drop(Lake::open(&root).await.expect("create the lake"));
    // The store's paths have no leading slash.
    let lake = sb.dir.path().join("lake").join("ledger").join("_delta_log");
    let fragment = lake
        .display()
        .to_string()
        .trim_start_matches('/')
        .to_string();
    faulty_store::fail_reads(&fragment, 2);
    let lake = Lake::open(&root).await;
    assert_eq!(
        faulty_store::reads_left_to_fail(&fragment),
        0,
        "the reads failed"
    );
    lake.expect("the opening retried the failed reads");
}
