//! Every rejection rule of the contract, and rejects replaced per file, never doubled.

use deltaload_lake::LoadOutcome;
use deltaload_tests::{Sandbox, HEADER};

const GOOD: &str = "1,C1,placed,10.00,EUR,2026-10-01T09:00:00,2026-10-01T09:00:00";

/// (record, a word the reason must contain); one per rule.
const BAD: &[(&str, &str)] = &[
    ("2,C1,placed,10.00,EUR,2026-10-01T09:00:00", "fields"),
    (
        "3,C1,placed,10.00,EUR,2026-10-01T09:00:00,2026-10-01T09:00:00,x",
        "fields",
    ),
    (
        ",C1,placed,10.00,EUR,2026-10-01T09:00:00,2026-10-01T09:00:00",
        "order_id",
    ),
    (
        "4.0,C1,placed,10.00,EUR,2026-10-01T09:00:00,2026-10-01T09:00:00",
        "order_id",
    ),
    (
        "9223372036854775808,C1,placed,10.00,EUR,,2026-10-01T09:00:00",
        "64-bit",
    ),
    ("5,C1,placed,1e3,EUR,,2026-10-01T09:00:00", "amount"),
    (
        "6,C1,placed,12.345,EUR,,2026-10-01T09:00:00",
        "more than 2 decimals",
    ),
    ("7,C1,placed, 12.00 ,EUR,,2026-10-01T09:00:00", "amount"),
    (
        "8,C1,placed,\"1,000.00\",EUR,,2026-10-01T09:00:00",
        "amount",
    ),
    ("9,C1,placed,$5,EUR,,2026-10-01T09:00:00", "amount"),
    (
        "10,C1,placed,100000000.00,EUR,,2026-10-01T09:00:00",
        "DECIMAL(10,2)",
    ),
    (
        "11,C1,placed,1.00,EUR,2026-02-30T00:00:00,2026-10-01T09:00:00",
        "ordered_at",
    ),
    ("12,C1,placed,1.00,EUR,,2026-10-01T09:00:60", "updated_at"),
    ("13,C1,placed,1.00,EUR,,", "updated_at is empty"),
    ("14,C1,placed,1.00,EUR,,yesterday", "updated_at"),
];

fn file_with_all_rules() -> String {
    let mut text = String::from(HEADER);
    text.push_str(GOOD);
    text.push('\n');
    for (record, _) in BAD {
        text.push_str(record);
        text.push('\n');
    }
    text
}

#[tokio::test(flavor = "multi_thread")]
async fn each_rule_rejects_its_record_with_line_raw_text_and_reason() {
    let sb = Sandbox::new();
    let path = sb.file("rules.csv", file_with_all_rules());
    let LoadOutcome::Loaded(done) = sb.load(&path, false).await else {
        panic!("not loaded")
    };
    assert_eq!(done.figures.records, 1 + BAD.len() as u64);
    assert_eq!(done.figures.rejected, BAD.len() as u64);
    assert_eq!(done.figures.inserted, 1);
    let rows = sb
        .rows(
            deltaload_tests::rejected_orders_table(),
            "line_number, raw_line, reason",
        )
        .await;
    assert_eq!(rows.len(), BAD.len());
    for (i, ((record, word), row)) in BAD.iter().zip(&rows).enumerate() {
        assert_eq!(row[0], (i + 3).to_string(), "line of {record}");
        assert_eq!(row[1], *record);
        assert!(
            row[2].contains(word),
            "{record}: reason {:?} lacks {word:?}",
            row[2]
        );
    }
    assert_eq!(sb.orders().await.len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn offsets_are_converted_to_utc_and_empty_text_is_null() {
    let sb = Sandbox::new();
    let path = sb.file(
        "zones.csv",
        format!("{HEADER}1,,,,,2026-10-01 11:00:00+02:00,2026-10-01T09:00:00.5Z\n"),
    );
    sb.load(&path, false).await;
    assert_eq!(
        sb.orders().await,
        vec![vec![
            "1",
            "NULL",
            "NULL",
            "NULL",
            "NULL",
            "2026-10-01T09:00:00Z",
            "2026-10-01T09:00:00.500Z"
        ]]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn reloading_replaces_a_files_rejects_and_keeps_other_files_rejects() {
    let sb = Sandbox::new();
    let a = sb.file("a.csv", file_with_all_rules());
    let b = sb.file(
        "b.csv",
        format!("{HEADER}x,C,placed,1.00,EUR,,2026-10-01T09:00:00\n"),
    );
    sb.load(&a, false).await;
    sb.load(&b, false).await;
    let before = sb
        .rows(
            deltaload_tests::rejected_orders_table(),
            "source_file, line_number, raw_line",
        )
        .await;
    assert_eq!(before.len(), BAD.len() + 1);
    sb.load(&a, true).await;
    sb.load(&a, true).await;
    let after = sb
        .rows(
            deltaload_tests::rejected_orders_table(),
            "source_file, line_number, raw_line",
        )
        .await;
    assert_eq!(before, after, "forced reloads replace, never append");
}
