use super::*;
use crate::value::Value;

fn parse(text: &str) -> Result<Spec, SpecError> {
    Spec::parse(text, "my.toml")
}

const SUBSCRIBERS: &str = r#"[[dataset]]
name = "subscribers"
source = "s3://landing/netflix/"
keys = ["user_id"]
sequence_by = ["last_payment_date"]
update_columns = ["country", "monthly_revenue"]
partition_by = ["country"]

[dataset.csv]
field_delimiter = ","
header = "exact"
null_if = [""]
encoding = "utf-8"

[[dataset.columns]]
name = "user_id"
type = "bigint"
nullable = false

[[dataset.columns]]
name = "country"
type = "string"

[[dataset.columns]]
name = "monthly_revenue"
type = "decimal(10,2)"

[[dataset.columns]]
name = "last_payment_date"
type = "date"
format = "%d-%m-%y"

[[dataset.columns]]
name = "event_time"
type = "timestamp"
timezone = "Europe/Berlin"
"#;

#[test]
fn the_reference_example_parses() {
    let spec = parse(SUBSCRIBERS).unwrap();
    let d = &spec.datasets[0];
    assert_eq!(d.names(&d.keys), ["user_id"]);
    assert_eq!(
        d.names(&d.update),
        ["country", "monthly_revenue", "last_payment_date"],
        "sequence columns update with the row"
    );
    assert_eq!(d.names(&d.tie_break), ["country", "monthly_revenue"]);
    assert_eq!(d.columns[3].ty, ColumnType::Date);
    assert!(!d.columns[3].nullable, "a sequence column is never null");
    assert_eq!(
        d.columns[2].ty,
        ColumnType::Decimal {
            precision: 10,
            scale: 2
        }
    );
    assert_eq!(d.rejected_table(), "rejected_subscribers");
    assert_eq!(d.reject_key_column(), "user_id");
}

#[test]
fn the_builtin_orders_spec_parses_as_today() {
    let orders = Dataset::orders();
    assert_eq!(
        orders.column_names(),
        [
            "order_id",
            "customer_id",
            "status",
            "amount",
            "currency",
            "ordered_at",
            "updated_at"
        ]
    );
    assert_eq!(
        orders.names(&orders.tie_break),
        ["status", "customer_id", "currency", "amount", "ordered_at"]
    );
    assert_eq!(orders.update.len(), 6);
    assert!(
        !orders.columns[0].nullable && !orders.columns[6].nullable && orders.columns[1].nullable
    );
    assert_eq!(orders.reject_key_column(), "order_id");
}

#[test]
fn routing_takes_the_longest_prefix() {
    let two = SUBSCRIBERS.to_string()
        + &SUBSCRIBERS
            .replace("name = \"subscribers\"", "name = \"vip\"")
            .replace("s3://landing/netflix/", "s3://landing/netflix/vip/");
    let spec = parse(&two).unwrap();
    let route = |key: &str| spec.route("landing", key).map(|d| d.name.as_str());
    assert_eq!(route("netflix/a.csv"), Some("subscribers"));
    assert_eq!(route("netflix/vip/a.csv"), Some("vip"));
    assert_eq!(route("other/a.csv"), None);
    assert_eq!(
        Spec::builtin()
            .route("any", "thing")
            .map(|d| d.name.as_str()),
        Some("orders")
    );
    assert!(spec.select(None).unwrap_err().contains("--dataset"));
    // Narrowed to one dataset, objects stay routed as the whole spec routes them.
    let narrowed = spec.narrow("subscribers").unwrap();
    let narrow_route = |key: &str| narrowed.route("landing", key).map(|d| d.name.as_str());
    assert_eq!(narrow_route("netflix/a.csv"), Some("subscribers"));
    assert_eq!(
        narrow_route("netflix/vip/a.csv"),
        None,
        "vip's objects are not subscribers'"
    );
    assert_eq!(spec.select(Some("vip")).unwrap().name, "vip");
}

/// Each error names its line and what to change.
#[test]
fn every_spec_error_names_the_line_and_the_fix() {
    let cases: &[(&str, &str, usize, &str)] = &[
        (
            "keys = [\"user_id\"]",
            "keys = [\"user_id\"]\ncolour = 1",
            5,
            "unknown field `colour`",
        ),
        (
            "type = \"bigint\"",
            "type = \"integer\"",
            17,
            "unknown type \"integer\"",
        ),
        (
            "keys = [\"user_id\"]",
            "keys = [\"uid\"]",
            4,
            "key column \"uid\" is not a column",
        ),
        (
            "sequence_by = [\"last_payment_date\"]",
            "sequence_by = [\"paid\"]",
            5,
            "sequence_by column \"paid\"",
        ),
        (
            "update_columns = [\"country\", \"monthly_revenue\"]",
            "update_columns = [\"country\"]\nexcept_columns = [\"country\"]",
            7,
            "both update_columns and except_columns",
        ),
        (
            "partition_by = [\"country\"]",
            "partition_by = [\"land\"]",
            7,
            "partition_by column \"land\"",
        ),
        (
            "header = \"exact\"",
            "header = \"sometimes\"",
            11,
            "unknown variant `sometimes`",
        ),
        (
            "format = \"%d-%m-%y\"",
            "format = \"%Q\"",
            31,
            "not a valid strftime format",
        ),
        (
            "timezone = \"Europe/Berlin\"",
            "timezone = \"Mars/Olympus\"",
            36,
            "not an IANA zone name",
        ),
        (
            "name = \"subscribers\"",
            "name = \"Subscribers\"",
            2,
            "must be a lower-case letter",
        ),
        (
            "name = \"subscribers\"",
            "name = \"ledger\"",
            2,
            "taken by deltaload's own tables",
        ),
        (
            "update_columns = [\"country\", \"monthly_revenue\"]",
            "update_columns = [\"user_id\"]",
            6,
            "is a key",
        ),
        (
            "field_delimiter = \",\"",
            "field_delimiter = \";;\"",
            10,
            "one ASCII character",
        ),
    ];
    for (from, to, line, words) in cases {
        assert!(SUBSCRIBERS.contains(from), "{from}");
        let err = parse(&SUBSCRIBERS.replacen(from, to, 1)).unwrap_err();
        assert!(err.message.contains(words), "{to}: {err}");
        assert_eq!(err.line, Some(*line), "{to}: {err}");
        assert!(
            err.to_string()
                .starts_with(&format!("spec my.toml line {line}: ")),
            "{err}"
        );
    }
    let cased = SUBSCRIBERS.replacen("name = \"country\"", "name = \"USER_ID\"", 1);
    let err = parse(&cased).unwrap_err();
    assert!(err.message.contains("declared twice"), "{err}");
    assert_eq!(err.line, Some(21), "{err}");
    let lineage = SUBSCRIBERS.replacen("name = \"country\"", "name = \"Source_File\"", 1);
    assert!(parse(&lineage)
        .unwrap_err()
        .message
        .contains("lineage columns"));
    let tie = SUBSCRIBERS.replacen(
        "partition_by",
        "tie_break = [\"event_time\"]\npartition_by",
        1,
    );
    assert!(parse(&tie)
        .unwrap_err()
        .message
        .contains("a column an update does not set"));
    let folder = SUBSCRIBERS.replacen("s3://landing/netflix/", "s3://landing/netflix", 1);
    assert_eq!(
        parse(&folder).unwrap().datasets[0].source.as_deref(),
        Some("s3://landing/netflix/")
    );
    let twice = format!("{SUBSCRIBERS}{SUBSCRIBERS}");
    let err = parse(&twice).unwrap_err();
    assert!(
        err.message
            .contains("second dataset is named \"subscribers\""),
        "{err}"
    );
    let same_source = format!(
        "{SUBSCRIBERS}{}",
        SUBSCRIBERS.replace("name = \"subscribers\"", "name = \"other\"")
    );
    let err = parse(&same_source).unwrap_err();
    assert!(err.message.contains("same source"), "{err}");
    assert!(parse("").unwrap_err().message.contains("no dataset"));
}

#[test]
fn formats_deletes_and_extra_fields_are_checked_with_their_lines() {
    let base = "[[dataset]]\nname = \"inventory\"\nkeys = [\"sku\"]\nsequence_by = [\"seq\"]\nEXTRA\n\
                [[dataset.columns]]\nname = \"sku\"\ntype = \"int\"\n[[dataset.columns]]\nname = \"seq\"\ntype = \"bigint\"\n";
    let with = |extra: &str| parse(&base.replace("EXTRA", extra));
    let ok = with("format = \"jsonl\"\nextra_fields = \"ignore\"\ndelete_when = { column = \"op\", in = [\"d\", \"delete\"] }").unwrap();
    let d = &ok.datasets[0];
    assert_eq!(d.format, Format::Jsonl);
    assert_eq!(d.extra_fields, ExtraFields::Ignore);
    assert_eq!(d.width(), 3, "the delete flag after the columns");
    assert!(d.keeps_tombstones());
    assert_eq!(d.tombstones_table(), "tombstones_inventory");
    let defaults = with("").unwrap();
    assert_eq!(defaults.datasets[0].format, Format::Csv);
    assert_eq!(defaults.datasets[0].width(), 2);
    let cases: &[(&str, usize, &str)] = &[
        ("format = \"xml\"", 5, "unknown variant `xml`"),
        ("extra_fields = \"keep\"", 5, "unknown variant `keep`"),
        (
            "extra_fields = \"ignore\"",
            2,
            "applies to format = \"jsonl\"",
        ),
        (
            "delete_when = { column = \"seq\", in = [\"d\"] }",
            5,
            "is declared as column \"seq\"",
        ),
        (
            "delete_when = { column = \"op\", in = [] }",
            5,
            "lists no values",
        ),
        (
            "delete_when = { column = \"op\", values = [\"d\"] }",
            5,
            "unknown field `values`",
        ),
        (
            "delete_when = { column = \"loaded_at\", in = [\"d\"] }",
            5,
            "lineage column",
        ),
        (
            "format = \"parquet\"\n[dataset.csv]\nheader = \"exact\"",
            6,
            "do not apply",
        ),
        (
            "delete_when = { column = \"op\", in = [\"d\"] }\nupdate_columns = [\"seq\"]",
            6,
            "with deletes an update sets every column",
        ),
        (
            "delete_when = { column = \"op\", in = [\"d\"] }\n[dataset.csv]\nheader = \"none\"",
            5,
            "needs the files' header",
        ),
    ];
    for (extra, line, needle) in cases {
        let e = with(extra).unwrap_err();
        assert!(e.message.contains(needle), "{extra}: {e}");
        assert_eq!(e.line, Some(*line), "{extra}: {e}");
    }
}

#[test]
fn at_an_equal_sequence_a_delete_wins_over_an_upsert_and_two_deletes_tie() {
    let spec = parse("[[dataset]]\nname = \"t\"\nkeys = [\"k\"]\nsequence_by = [\"s\"]\ndelete_when = { column = \"op\", in = [\"d\"] }\n\
                      [[dataset.columns]]\nname = \"k\"\ntype = \"int\"\n[[dataset.columns]]\nname = \"s\"\ntype = \"int\"\n[[dataset.columns]]\nname = \"v\"\ntype = \"int\"\n").unwrap();
    let d = &spec.datasets[0];
    let row = |s: i64, v: i64, delete: bool| {
        vec![
            Value::Int(1),
            Value::Int(s),
            Value::Int(v),
            Value::Bool(delete),
        ]
    };
    assert!(d.replaces(&row(1, 0, true), &row(1, 9, false)));
    assert!(!d.replaces(&row(1, 9, false), &row(1, 0, true)));
    assert!(!d.replaces(&row(1, 0, true), &row(1, 5, true)));
    assert!(d.replaces(&row(2, 0, false), &row(1, 0, true)));
    assert!(d.replaces(&row(1, 2, false), &row(1, 1, false)));
    assert!(d
        .newest_wins_rule()
        .contains("a delete wins over an upsert"));
}

#[test]
fn ignore_null_updates_takes_the_update_columns_but_the_sequence_or_those_listed() {
    let with = |line: &str| {
        let text = SUBSCRIBERS.replacen(
            "partition_by = [\"country\"]\n",
            &format!("partition_by = [\"country\"]\n{line}\n"),
            1,
        );
        parse(&text).map(|s| {
            let d = &s.datasets[0];
            d.names(&d.keep_on_null).join(",")
        })
    };
    assert_eq!(with("").unwrap(), "");
    assert_eq!(with("ignore_null_updates = false").unwrap(), "");
    assert_eq!(
        with("ignore_null_updates = true").unwrap(),
        "country,monthly_revenue",
        "every update column but the sequence"
    );
    assert_eq!(
        with("ignore_null_updates = [\"monthly_revenue\"]").unwrap(),
        "monthly_revenue"
    );
    for (listed, words) in [
        (
            "[\"user_id\"]",
            "is a key, a sequence column or a column an update does not set",
        ),
        ("[\"last_payment_date\"]", "a sequence column"),
        ("[\"event_time\"]", "a column an update does not set"),
        ("[\"nope\"]", "is not a column of dataset"),
        ("[]", "lists no column"),
        ("\"yes\"", "expected true, false or a list of column names"),
    ] {
        let err = with(&format!("ignore_null_updates = {listed}")).unwrap_err();
        assert!(err.to_string().contains(words), "{listed}: {err}");
        assert_eq!(err.line, Some(8), "{listed}: {err}");
    }
}
