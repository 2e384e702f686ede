//! `deltaload show`: the first rows by key, every row streamed, one key, three
//! formats; and every command ends quietly when its reader goes away.

use crate::deltaload;
use deltaload_tests::{orders_csv, stderr, stdout, Order, Sandbox};
use std::process::{Command, Stdio};

/// A sandbox whose lake holds orders 1..=30 (loaded from `raw/many.csv`).
fn thirty_orders() -> Sandbox {
    let sb = Sandbox::new();
    let orders: Vec<Order> = (1..=30)
        .rev()
        .map(|id| {
            Order::new(id)
                .customer(format!("C{id}"))
                .amount(format!("{id}.50"))
                .updated_at("2026-10-01T10:00:00")
        })
        .collect();
    sb.file("many.csv", orders_csv(&orders));
    let load = deltaload(&sb, &["load", "raw/many.csv"], None);
    assert_eq!(load.status.code(), Some(0), "{}", stderr(&load));
    sb
}

fn show(sb: &Sandbox, extra: &[&str]) -> (String, String) {
    let mut args = vec!["show", "orders"];
    args.extend_from_slice(extra);
    let out = deltaload(sb, &args, None);
    assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
    (stdout(&out), stderr(&out))
}

/// The order ids of a text table's rows, in the order printed.
fn ids_in_table(text: &str) -> Vec<u32> {
    text.lines()
        .filter_map(|l| l.strip_prefix("| "))
        .filter_map(|l| l.split_whitespace().next())
        .filter_map(|id| id.parse().ok())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn by_default_the_first_twenty_by_key_and_the_total() {
    let sb = thirty_orders();
    let (text, _) = show(&sb, &[]);
    assert_eq!(ids_in_table(&text), (1..=20).collect::<Vec<_>>(), "{text}");
    assert!(
        text.ends_with("20 of 30 row(s), the first by order_id; --limit N shows more, --limit 0 all; table orders version 1\n"),
        "{text}"
    );
    let (text, _) = show(&sb, &["--limit", "40"]);
    assert_eq!(ids_in_table(&text).len(), 30);
    assert!(
        text.ends_with("\n30 row(s), table orders version 1\n"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn every_row_as_csv_and_json_lines_for_pipes() {
    let sb = thirty_orders();
    let (csv, counts) = show(&sb, &["--limit", "0", "--format", "csv"]);
    let mut lines = csv.lines();
    assert!(
        lines
            .next()
            .unwrap_or_default()
            .starts_with("order_id,customer_id,status,amount"),
        "{csv}"
    );
    let mut ids: Vec<u32> = lines
        .map(|l| l.split(',').next().unwrap_or_default().parse().expect("id"))
        .collect();
    ids.sort_unstable();
    assert_eq!(ids, (1..=30).collect::<Vec<_>>());
    assert_eq!(
        counts, "30 row(s), table orders version 1\n",
        "counts on stderr"
    );
    let (json, _) = show(&sb, &["--limit", "3", "--format", "json"]);
    let rows: Vec<serde_json::Value> = json
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect();
    let ids: Vec<i64> = rows.iter().filter_map(|r| r["order_id"].as_i64()).collect();
    assert_eq!(ids, [1, 2, 3], "{json}");
    assert_eq!(rows[0]["status"], "placed");
    // A null column is in the object, as null (ordered_at is empty here).
    let first = rows[0].as_object().expect("an object");
    assert_eq!(
        first.get("ordered_at"),
        Some(&serde_json::Value::Null),
        "{json}"
    );
    assert_eq!(first.len(), 9, "{json}");
}

#[tokio::test(flavor = "multi_thread")]
async fn one_key_is_looked_up_and_a_bad_key_is_explained() {
    let sb = thirty_orders();
    let (text, _) = show(&sb, &["--key", "17"]);
    assert_eq!(ids_in_table(&text), [17], "{text}");
    assert!(
        text.ends_with("\n1 row(s), table orders version 1\n"),
        "{text}"
    );
    let (none, _) = show(&sb, &["--key", "99"]);
    assert!(
        none.ends_with("0 row(s), table orders version 1\n"),
        "{none}"
    );
    let bad = deltaload(&sb, &["show", "orders", "--key", "x17"], None);
    assert_eq!(bad.status.code(), Some(1));
    assert!(
        stderr(&bad).contains("order_id holds whole numbers"),
        "{}",
        stderr(&bad)
    );
    let location = sb.dir.path().canonicalize().unwrap().join("raw/many.csv");
    let location = location.to_str().unwrap();
    let out = deltaload(
        &sb,
        &["show", "ledger", "--key", location, "--format", "csv"],
        None,
    );
    assert_eq!(stdout(&out).lines().count(), 2, "{}", stdout(&out));
    // The path as given to load finds the same row.
    let relative_args = ["show", "ledger", "--key", "raw/many.csv", "--format", "csv"];
    let relative = deltaload(&sb, &relative_args, None);
    assert_eq!(stdout(&relative), stdout(&out));
    // So does an absolute path through a symbolic link.
    std::os::unix::fs::symlink(sb.dir.path().join("raw"), sb.dir.path().join("link")).unwrap();
    let linked = sb.dir.path().join("link/many.csv");
    let linked = deltaload(
        &sb,
        &[
            "show",
            "ledger",
            "--key",
            linked.to_str().unwrap(),
            "--format",
            "csv",
        ],
        None,
    );
    assert_eq!(stdout(&linked), stdout(&out));
    // And the relative path of a file moved away since.
    std::fs::rename(
        sb.dir.path().join("raw/many.csv"),
        sb.dir.path().join("moved.csv"),
    )
    .unwrap();
    assert_eq!(stdout(&deltaload(&sb, &relative_args, None)), stdout(&out));
}

/// Runs `deltaload ARGS` in `sb` with its standard output a pipe whose reader
/// is gone before the command writes anything (`| head -0`).
fn with_closed_stdout(sb: &Sandbox, args: &[&str]) -> std::process::Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_deltaload-faulty"))
        .current_dir(sb.dir.path())
        .args(args)
        .env_remove("DELTALOAD_LAKE")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run deltaload");
    drop(child.stdout.take());
    child.wait_with_output().expect("wait for deltaload")
}

#[tokio::test(flavor = "multi_thread")]
async fn a_closed_output_pipe_ends_every_command_quietly() {
    let sb = thirty_orders();
    // More than the CSV writer's buffer: its own writes meet the closed pipe.
    let wide: Vec<Order> = (100..1100)
        .map(|id| Order::new(id).updated_at("2026-10-01T10:00:00"))
        .collect();
    sb.file("wide.csv", orders_csv(&wide));
    let load = deltaload(&sb, &["load", "raw/wide.csv"], None);
    assert_eq!(load.status.code(), Some(0), "{}", stderr(&load));
    sb.file(
        "more.csv",
        orders_csv(&[Order::new(31)
            .customer("C31")
            .updated_at("2026-10-01T10:00:00")]),
    );
    for args in [
        &["show", "orders"][..],
        &["show", "orders", "--limit", "0", "--format", "csv"],
        &["status"],
        &["load", "raw/more.csv"],
    ] {
        let out = with_closed_stdout(&sb, args);
        assert_eq!(out.status.code(), Some(141), "{args:?}: {}", stderr(&out));
        assert_eq!(stderr(&out), "", "{args:?}: nothing on stderr");
    }
    // The load's commit came before its line: the file is loaded.
    let (text, _) = show(&sb, &["--key", "31"]);
    assert_eq!(ids_in_table(&text), [31]);
}
