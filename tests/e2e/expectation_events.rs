//! Expectations end to end: a `fail` rule refusing a file whose corrected
//! upload then loads, a rule over an unknown column refused by `spec
//! check` and at start, expectations through S3 events with their metrics,
//! and a file read in pieces within a tiny memory budget with a `drop` rule.

use deltaload_core::Spec;
use deltaload_lake::{lake_url, Lake, LoadOptions, LoadOutcome, MemoryBudget, SourceFile};
use deltaload_tests::localstack::Stack;
use deltaload_tests::{lake_state_of, stderr, stdout, Sandbox, HEADER};

const EXE: &str = env!("CARGO_BIN_EXE_deltaload-faulty");

/// The built-in orders with `expect` (TOML of `[[dataset.expect]]` tables).
fn orders_expecting(expect: &str) -> String {
    format!("{}\n{expect}", deltaload_core::spec::ORDERS_SPEC.trim_end())
}

const RULES: &str = r#"[[dataset.expect]]
name = "amount_not_negative"
rule = "amount >= 0"
on_fail = "drop"
[[dataset.expect]]
name = "known_currency"
rule = "currency IN ('EUR', 'USD')"
[[dataset.expect]]
name = "no_zero_id"
rule = "order_id <> 0"
on_fail = "fail"
"#;

fn order(id: i64, amount: &str, currency: &str) -> String {
    format!("{id},C1,placed,{amount},{currency},,2026-10-05T00:00:00\n")
}

fn run(sb: &Sandbox, args: &[&str]) -> std::process::Output {
    let spec = sb.dir.path().join("spec.toml");
    let all = [&["--spec", spec.to_str().unwrap()][..], args].concat();
    sb.cli_at(EXE, &all, None)
}

#[test]
fn a_fail_rule_refuses_the_file_with_its_first_line_and_the_corrected_upload_loads() {
    let sb = Sandbox::new();
    std::fs::write(sb.dir.path().join("spec.toml"), orders_expecting(RULES)).unwrap();
    let bad = format!(
        "{HEADER}{}{}{}",
        order(1, "5.00", "EUR"),
        order(0, "5.00", "EUR"),
        order(0, "1.00", "EUR")
    );
    let path = sb.file("day.csv", &bad);
    let out = run(&sb, &["load", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("line 3 (the first to break it): expectation no_zero_id failed: order_id <> 0; file refused, nothing written"),
        "{}",
        stderr(&out)
    );
    let shown = run(&sb, &["show", "orders"]);
    assert!(
        stdout(&shown).contains("0 row(s)"),
        "nothing written: {}",
        stdout(&shown)
    );
    let ledger = run(&sb, &["show", "ledger", "--format", "csv"]);
    assert!(stdout(&ledger).contains(",refused,"), "{}", stdout(&ledger));

    let fixed = format!(
        "{HEADER}{}{}{}",
        order(1, "5.00", "EUR"),
        order(2, "-1.00", "GBP"),
        order(3, "", "EUR")
    );
    std::fs::write(&path, fixed).unwrap();
    let out = run(&sb, &["load", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let printed = stdout(&out);
    assert!(
        printed.contains(": 2 rejected, 0 updated, 1 added"),
        "{printed}"
    );
    assert!(printed.contains("expectation amount_not_negative failed on 2 of 3 records (dropped to the rejects): amount >= 0"), "{printed}");
    assert!(
        printed.contains("expectation known_currency failed on 1 of 3 records (loaded)"),
        "{printed}"
    );
    assert!(
        !printed.contains("no_zero_id"),
        "a rule no record broke prints nothing: {printed}"
    );
    let rejects = run(&sb, &["show", "rejected_orders", "--format", "csv"]);
    assert_eq!(
        stdout(&rejects)
            .matches("expectation amount_not_negative failed: amount >= 0")
            .count(),
        2,
        "{}",
        stdout(&rejects)
    );
    let figures = run(&sb, &["show", "expectations", "--format", "csv"]);
    assert!(
        stdout(&figures).contains(",orders,no_zero_id,order_id <> 0,fail,3,0,"),
        "{}",
        stdout(&figures)
    );
    let reconcile = run(&sb, &["status"]);
    assert_eq!(reconcile.status.code(), Some(0), "{}", stderr(&reconcile));
}

#[test]
fn a_rule_over_an_unknown_column_is_refused_by_spec_check_and_at_start() {
    let sb = Sandbox::new();
    let rule = "[[dataset.expect]]\nname = \"heavy\"\nrule = \"weight > 10\"\non_fail = \"drop\"\n";
    std::fs::write(sb.dir.path().join("spec.toml"), orders_expecting(rule)).unwrap();
    let spec = sb.dir.path().join("spec.toml");
    let check = run(&sb, &["spec", "check", spec.to_str().unwrap()]);
    assert_eq!(check.status.code(), Some(1), "{}", stdout(&check));
    let said = stdout(&check);
    assert!(
        said.contains("expectation heavy (weight > 10) cannot be checked")
            && said.contains("weight"),
        "{said}"
    );
    let path = sb.file("day.csv", format!("{HEADER}{}", order(1, "5.00", "EUR")));
    let load = run(&sb, &["load", path.to_str().unwrap()]);
    assert_eq!(load.status.code(), Some(1), "{}", stderr(&load));
    assert!(
        stderr(&load).contains("expectation heavy (weight > 10) cannot be checked"),
        "{}",
        stderr(&load)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn expectations_through_s3_events_reject_count_and_publish_their_metrics() {
    let stack = Stack::new(3, 30).await;
    let sb = Sandbox::new();
    let spec = sb.file("spec.toml", orders_expecting(RULES));
    let body = format!(
        "{HEADER}{}{}{}",
        order(1, "-2.00", "EUR"),
        order(2, "3.00", "JPY"),
        order(3, "-1.00", "EUR")
    );
    stack.put("in/2026-10-05.csv", body).await;
    stack.wait_for_messages(1).await;
    let lake = format!("s3://{}/expect", stack.lake_bucket);
    let mut args = vec!["--spec".to_string(), spec.to_str().unwrap().to_string()];
    args.extend(stack.serve_args(&lake, "2", &["--metrics-namespace", "dl"]));
    let out = stack.cli(EXE, &args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let printed = stdout(&out);
    assert!(
        printed.contains("1 files loaded") && printed.contains("2 rejected"),
        "{printed}"
    );
    let line = |name: &str| {
        (printed.lines())
            .find(|l| l.contains(&format!(r#""expectation":"{name}""#)))
            .unwrap_or_else(|| panic!("no EMF line of {name}: {printed}"))
            .to_string()
    };
    let dropped = line("amount_not_negative");
    assert!(
        dropped.contains(r#""ExpectationFailed":2"#)
            && dropped.contains(r#""ExpectationDropped":2"#),
        "{dropped}"
    );
    assert!(
        dropped.contains(r#""Dimensions":[["table","expectation"]]"#),
        "{dropped}"
    );
    let warned = line("known_currency");
    assert!(
        warned.contains(r#""ExpectationFailed":1"#) && warned.contains(r#""ExpectationDropped":0"#),
        "{warned}"
    );
    let shown = stack.cli(
        EXE,
        &[
            "--spec",
            spec.to_str().unwrap(),
            "show",
            "expectations",
            "--lake",
            &lake,
            "--format",
            "csv",
        ],
    );
    assert_eq!(
        stdout(&shown).lines().count(),
        4,
        "a header and a row per rule: {}",
        stdout(&shown)
    );
}

#[tokio::test]
async fn a_file_read_in_pieces_drops_and_counts_as_the_file_read_whole() {
    let rules = "[[dataset.expect]]\nname = \"not_tenth\"\nrule = \"order_id % 10 <> 3\"\non_fail = \"drop\"\n\
                 [[dataset.expect]]\nname = \"cheap\"\nrule = \"amount < 5\"\n";
    let spec = Spec::parse(&orders_expecting(rules), "orders.toml").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut csv = String::from(HEADER);
    for id in 0..2_000 {
        csv.push_str(&order(id, &format!("{}.00", id % 7), "EUR"));
    }
    let path = dir.path().join("big.csv");
    std::fs::write(&path, &csv).unwrap();
    let file = SourceFile {
        on_disk: Some(deltaload_lake::OnDisk::at(path.clone())),
        ..SourceFile::in_memory(
            deltaload_lake::local_source(path.to_str().unwrap()).unwrap(),
            Vec::new(),
        )
    };
    let root = |name: &str| lake_url(dir.path().join(name).to_str().unwrap()).unwrap();
    let mut outcomes = Vec::new();
    let mut spills = Vec::new();
    for (name, budget) in [
        ("free", MemoryBudget::unlimited()),
        ("tiny", MemoryBudget::of(16 << 10, dir.path().to_path_buf())),
    ] {
        let mut lake = Lake::open_spec(&root(name), &spec).await.unwrap();
        lake.set_memory_budget(budget);
        outcomes.push(lake.load(&file, LoadOptions::default()).await.unwrap());
        spills.push(lake.spills().files_in_pieces);
    }
    assert_eq!(spills, [0, 1], "the tiny budget read the file in pieces");
    for outcome in &outcomes {
        let LoadOutcome::Loaded(done) = outcome else {
            panic!("{outcome:?}")
        };
        let counts: Vec<(u64, u64)> = done
            .expectations
            .iter()
            .map(|c| (c.checked, c.failed))
            .collect();
        assert_eq!(counts, [(2_000, 200), (2_000, 570)]);
        assert_eq!((done.figures.rejected, done.figures.inserted), (200, 1_800));
    }
    assert_eq!(
        lake_state_of(&root("tiny"), &spec, "", "").await,
        lake_state_of(&root("free"), &spec, "", "").await
    );
}

#[test]
fn a_dms_record_is_checked_once_decoded_and_its_deletes_are_not() {
    let sb = Sandbox::new();
    let spec = "[[dataset]]\nname = \"people\"\npreset = \"aws_dms\"\nkeys = [\"id\"]\n\
                [[dataset.columns]]\nname = \"id\"\ntype = \"bigint\"\n\
                [[dataset.columns]]\nname = \"city\"\ntype = \"string\"\n\
                [[dataset.expect]]\nname = \"has_city\"\nrule = \"city IS NOT NULL\"\non_fail = \"drop\"\n";
    std::fs::write(sb.dir.path().join("spec.toml"), spec).unwrap();
    let full = sb.file("LOAD00000001.csv", "1,Paris\n2,Lyon\n3,\n");
    let changes = sb.file("20261201-101500123.csv", "D,2,\nU,1,\nI,4,Nice\n");
    let out = run(
        &sb,
        &["load", full.to_str().unwrap(), changes.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let printed = stdout(&out);
    assert!(
        printed
            .contains("LOAD00000001.csv: expectation has_city failed on 1 of 3 records (dropped"),
        "{printed}"
    );
    // The delete of 2 (its city empty) is not checked: 2 of 3 records.
    assert!(
        printed.contains(
            "20261201-101500123.csv: expectation has_city failed on 1 of 2 records (dropped"
        ),
        "{printed}"
    );
    let rows = run(&sb, &["show", "people", "--format", "csv"]);
    let rows = stdout(&rows);
    assert!(
        rows.contains("1,Paris,")
            && rows.contains("4,Nice,")
            && !rows.contains("\n2,")
            && !rows.contains("\n3,"),
        "{rows}"
    );
}

#[tokio::test]
async fn two_processes_taking_turns_keep_every_file_s_figures() {
    // Two lakes open on one root, as two warm Lambdas: each load must see
    // the other's `expectations` commits, and every file keep its rows.
    let sb = Sandbox::with_spec(Spec::parse(&orders_expecting(RULES), "orders.toml").unwrap());
    let spec = sb.spec.clone();
    let (mut a, mut b) = (
        sb.lake().await,
        Lake::open_spec(&sb.root, &spec).await.unwrap(),
    );
    // Compactions often: files whose locations span the others' files.
    a.set_auto_compact(deltaload_lake::AutoCompact::at(2));
    b.set_auto_compact(deltaload_lake::AutoCompact::at(2));
    for n in 0..8i64 {
        let body = format!(
            "{HEADER}{}{}",
            order(n * 10 + 1, "-1.00", "EUR"),
            order(n * 10 + 2, "1.00", "JPY")
        );
        let path = sb.file(&format!("f{n}.csv"), body);
        let file = SourceFile::in_memory(
            deltaload_lake::local_source(path.to_str().unwrap()).unwrap(),
            std::fs::read(&path).unwrap(),
        );
        let lake = if n % 2 == 0 { &mut a } else { &mut b };
        let outcome = lake.load(&file, LoadOptions::default()).await.unwrap();
        assert!(matches!(outcome, LoadOutcome::Loaded(_)), "{outcome:?}");
    }
    let figures = sb
        .rows(
            deltaload_lake::TableName::Expectations,
            "location, expectation, failed",
        )
        .await;
    assert_eq!(
        figures.len(),
        24,
        "eight files, three rules each: {figures:?}"
    );
}

#[test]
fn validate_checks_the_expectations_as_a_load_would() {
    let sb = Sandbox::new();
    std::fs::write(sb.dir.path().join("spec.toml"), orders_expecting(RULES)).unwrap();
    let dropped = sb.file(
        "a.csv",
        format!(
            "{HEADER}{}{}",
            order(1, "-1.00", "EUR"),
            order(2, "1.00", "EUR")
        ),
    );
    let out = run(&sb, &["validate", dropped.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let said = stdout(&out);
    assert!(said.contains("2 records, 1 valid, 1 rejected"), "{said}");
    assert!(
        said.contains("line 2: expectation amount_not_negative failed: amount >= 0"),
        "{said}"
    );
    let refused = sb.file("b.csv", format!("{HEADER}{}", order(0, "1.00", "EUR")));
    let out = run(&sb, &["validate", refused.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stdout(&out).contains(
            "would be refused: line 2 (the first to break it): expectation no_zero_id failed"
        ),
        "{}",
        stdout(&out)
    );
}

#[test]
fn a_debezium_event_is_checked_as_its_row_and_its_deletes_are_not() {
    let sb = Sandbox::new();
    let spec = "[[dataset]]\nname = \"people\"\npreset = \"debezium\"\nkeys = [\"id\"]\n\
                [[dataset.columns]]\nname = \"id\"\ntype = \"bigint\"\n\
                [[dataset.columns]]\nname = \"name\"\ntype = \"string\"\n\
                [[dataset.expect]]\nname = \"has_name\"\nrule = \"name IS NOT NULL\"\non_fail = \"drop\"\n";
    std::fs::write(sb.dir.path().join("spec.toml"), spec).unwrap();
    let events = [
        r#"{"before":null,"after":{"id":1,"name":"Ann"},"op":"c","source":{}}"#,
        r#"{"before":null,"after":{"id":2,"name":null},"op":"c","source":{}}"#,
        r#"{"before":{"id":1,"name":null},"after":null,"op":"d","source":{}}"#,
        r#"{"id":3,"name":"Cy","__op":"c","__deleted":"false"}"#,
    ];
    let file = sb.file("people+0+0000000000.json", events.join("\n") + "\n");
    let out = run(&sb, &["load", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // Three upserts checked (the delete of 1, its name null, is not): one dropped.
    let printed = stdout(&out);
    assert!(
        printed.contains("expectation has_name failed on 1 of 3 records (dropped to the rejects)"),
        "{printed}"
    );
    let rows = stdout(&run(&sb, &["show", "people", "--format", "csv"]));
    assert!(
        rows.contains("\n3,Cy,") && !rows.contains("\n1,") && !rows.contains("\n2,"),
        "{rows}"
    );
}
