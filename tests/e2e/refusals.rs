//! Header refusals: nothing written but the ledger's refusal, both column lists named.

use crate::deltaload;
use deltaload_lake::{table_version, TableName};
use deltaload_tests::{stderr, stdout, Sandbox, DAY1, DAY2, HEADER};

async fn versions(sb: &Sandbox) -> Vec<Option<u64>> {
    let mut v = Vec::new();
    for t in [
        deltaload_tests::orders_table(),
        deltaload_tests::rejected_orders_table(),
        TableName::Reconciliation,
    ] {
        v.push(table_version(&sb.root, &t).await.unwrap());
    }
    v
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_headers_are_refused_and_leave_the_tables_unchanged() {
    let body: String = DAY2.lines().skip(1).map(|l| format!("{l}\n")).collect();
    let cases = [
        (
            "coupon.csv",
            format!("{},coupon\n{body}", HEADER.trim_end()),
            "unexpected coupon",
        ),
        (
            "swapped.csv",
            format!("order_id,status,customer_id,amount,currency,ordered_at,updated_at\n{body}"),
            "another order",
        ),
        (
            "missing.csv",
            format!("order_id,customer_id,status,amount,currency,ordered_at\n{body}"),
            "missing updated_at",
        ),
        ("empty.csv", String::new(), "empty file"),
        (
            "twice.csv",
            format!("{},status\n{body}", HEADER.trim_end()),
            "duplicated status",
        ),
        (
            "renamed.csv",
            format!("{}{body}", HEADER.replace("amount,", "amount_eur,")),
            "unexpected amount_eur",
        ),
        (
            "upper.csv",
            format!("{}{body}", HEADER.to_uppercase()),
            "missing order_id",
        ),
    ];
    let sb = Sandbox::new();
    sb.file("day1.csv", DAY1);
    assert_eq!(
        deltaload(&sb, &["load", "raw/day1.csv"], None)
            .status
            .code(),
        Some(0)
    );
    let state = sb.state().await;
    let before = versions(&sb).await;
    for (name, content, problem) in &cases {
        sb.file(name, content);
        let arg = format!("raw/{name}");
        let out = deltaload(&sb, &["load", &arg], None);
        assert_eq!(out.status.code(), Some(2), "{name}");
        let err = stderr(&out);
        assert!(err.contains(&arg), "{err}");
        assert!(err.contains(problem), "{name}: {err}");
        assert!(err.contains("expected [order_id, customer_id, status, amount, currency, ordered_at, updated_at]"), "{err}");
        assert!(stdout(&out).is_empty());
        let now = sb.state().await;
        assert_eq!(
            (&now[..2], &now[3]),
            (&state[..2], &state[3]),
            "{name} changed orders, rejected_orders or reconciliation"
        );
        assert_eq!(versions(&sb).await, before, "{name} made a commit");
    }
    let ledger = sb.rows(TableName::Ledger, "status, reason").await;
    assert_eq!(
        ledger.iter().filter(|r| r[0] == "refused").count(),
        cases.len()
    );
    assert!(ledger.iter().any(|r| r[1].contains("unexpected coupon")));

    // The same refused file again: refused again, no second ledger row.
    let out = deltaload(&sb, &["load", "raw/coupon.csv"], None);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        sb.rows(TableName::Ledger, "status").await.len(),
        cases.len() + 1
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_refused_file_does_not_stop_the_others_and_its_fix_loads() {
    let sb = Sandbox::new();
    sb.file("bad.csv", "order_id,status\n1,x\n");
    sb.file("day1.csv", DAY1);
    let out = deltaload(&sb, &["load", "raw/bad.csv", "raw/day1.csv"], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(stdout(&out).contains("raw/day1.csv: 1 rejected, 0 updated, 4 added"));
    sb.file("bad.csv", DAY2);
    let out = deltaload(&sb, &["load", "raw/bad.csv"], None);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "raw/bad.csv: 0 rejected, 2 updated, 1 added, table version 2\n"
    );
}
