//! The seed example of seed 000 through the `deltaload load` command.

use crate::deltaload;
use deltaload_lake::TableName;
use deltaload_tests::{stderr, stdout, Sandbox, DAY1, DAY2, HEADER};

#[tokio::test(flavor = "multi_thread")]
async fn seed_sequence_1_2_2_1_prints_the_seed_counts_and_ends_with_five_orders() {
    let sb = Sandbox::new();
    sb.file("changes/2026-10-03.csv", DAY1);
    sb.file("changes/2026-10-04.csv", DAY2);
    let out = deltaload(
        &sb,
        &[
            "load",
            "raw/changes/2026-10-03.csv",
            "raw/changes/2026-10-04.csv",
            "raw/changes/2026-10-04.csv",
            "raw/changes/2026-10-03.csv",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "raw/changes/2026-10-03.csv: 1 rejected, 0 updated, 4 added, table version 1\n\
         raw/changes/2026-10-04.csv: 0 rejected, 2 updated, 1 added, table version 2\n\
         raw/changes/2026-10-04.csv: already loaded (table version 2), skipped\n\
         raw/changes/2026-10-03.csv: already loaded (table version 1), skipped\n"
    );
    let orders = sb
        .rows(
            deltaload_tests::orders_table(),
            "order_id, status, amount, updated_at",
        )
        .await;
    let expected = [
        ["1001", "shipped", "25.50", "2026-10-02T08:00:00Z"],
        ["1002", "cancelled", "12.00", "2026-10-03T09:00:00Z"],
        ["1004", "shipped", "40.00", "2026-10-04T08:30:00Z"],
        ["1005", "cancelled", "8.75", "2026-10-04T10:00:00Z"],
        ["1006", "shipped", "19.90", "2026-10-04T16:45:00Z"],
    ];
    assert_eq!(
        orders,
        expected.map(|r| r.map(String::from).to_vec()).to_vec()
    );
    let rejected = sb
        .rows(
            deltaload_tests::rejected_orders_table(),
            "order_id, raw_line, line_number",
        )
        .await;
    assert_eq!(
        rejected,
        vec![vec![
            "1003".to_string(),
            "1003,C03,placed,abc,EUR,2026-10-02T11:30:00,2026-10-02T11:30:00".to_string(),
            "5".to_string()
        ]]
    );
    let recon = sb
        .rows(
            TableName::Reconciliation,
            "records, loaded, rejected, duplicates, inserted, updated, stale, balanced",
        )
        .await;
    let mut recon: Vec<String> = recon.into_iter().map(|r| r.join(" ")).collect();
    recon.sort();
    assert_eq!(recon, ["5 5 0 1 1 2 1 true", "8 7 1 3 4 0 0 true"]);

    let shown = deltaload(&sb, &["show", "orders"], None);
    assert_eq!(shown.status.code(), Some(0), "{}", stderr(&shown));
    assert!(
        stdout(&shown).contains("5 row(s), table orders version 2"),
        "{}",
        stdout(&shown)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn force_reprocesses_without_changing_orders_or_committing() {
    let sb = Sandbox::new();
    sb.file("a.csv", DAY1);
    sb.file("b.csv", DAY2);
    let first = deltaload(&sb, &["load", "raw/a.csv", "raw/b.csv"], None);
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    let before = sb.state().await;
    let again = deltaload(&sb, &["load", "--force", "raw/b.csv", "raw/a.csv"], None);
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    assert_eq!(
        stdout(&again),
        "raw/b.csv: 0 rejected, 0 updated, 0 added, table version 2\n\
         raw/a.csv: 1 rejected, 0 updated, 0 added, table version 2\n"
    );
    let after = sb.state().await;
    assert_eq!(
        before[..2],
        after[..2],
        "orders and rejected_orders unchanged"
    );
    assert_eq!(after[3].len(), 2, "the ledger still has one row per file");
}

#[tokio::test(flavor = "multi_thread")]
async fn changed_content_under_the_same_name_is_loaded() {
    let sb = Sandbox::new();
    let path = sb.file("day.csv", DAY1);
    assert_eq!(
        deltaload(&sb, &["load", "raw/day.csv"], None).status.code(),
        Some(0)
    );
    let fixed = DAY1.replace(",abc,", ",30.00,");
    std::fs::write(&path, fixed).unwrap();
    let out = deltaload(&sb, &["load", "raw/day.csv"], None);
    assert_eq!(
        stdout(&out),
        "raw/day.csv: 0 rejected, 0 updated, 1 added, table version 2\n"
    );
    assert!(
        sb.rows(deltaload_tests::rejected_orders_table(), "raw_line")
            .await
            .is_empty(),
        "the corrected file's rejects replace the old ones"
    );
    assert_eq!(sb.rows(TableName::Ledger, "status").await.len(), 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn missing_file_exits_1_and_the_others_still_load() {
    let sb = Sandbox::new();
    sb.file("a.csv", DAY1);
    let out = deltaload(&sb, &["load", "raw/nope.csv", "raw/a.csv"], None);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("raw/nope.csv"), "{}", stderr(&out));
    assert!(stdout(&out).contains("raw/a.csv: 1 rejected, 0 updated, 4 added"));
}

#[tokio::test(flavor = "multi_thread")]
async fn header_only_bom_and_crlf_files_load() {
    let sb = Sandbox::new();
    sb.file("empty.csv", HEADER);
    let crlf = format!("\u{feff}{}", DAY1.replace('\n', "\r\n"));
    sb.file("crlf.csv", crlf);
    let out = deltaload(&sb, &["load", "raw/empty.csv", "raw/crlf.csv"], None);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "raw/empty.csv: 0 rejected, 0 updated, 0 added, table version 0\n\
         raw/crlf.csv: 1 rejected, 0 updated, 4 added, table version 1\n"
    );
    let raw = sb
        .rows(deltaload_tests::rejected_orders_table(), "raw_line")
        .await;
    assert_eq!(
        raw,
        vec![vec![
            "1003,C03,placed,abc,EUR,2026-10-02T11:30:00,2026-10-02T11:30:00".to_string()
        ]]
    );
}
