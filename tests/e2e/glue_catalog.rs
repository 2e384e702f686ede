//! The lake's tables registered in the Glue Data Catalog (`--glue-database`):
//! moto's server as Glue, the lake on LocalStack's S3. Every table kind and
//! column type, a partitioned dataset, a schema change, Glue out of reach,
//! `catalog sync` repairing, and names Glue must be given with care.

use deltaload_tests::glue::{
    described, glue_client, glue_table, glue_tables, glue_versions, unique_database,
};
use deltaload_tests::localstack::Stack;
use deltaload_tests::{stderr, stdout, Sandbox};

const EXE: &str = env!("CARGO_BIN_EXE_deltaload-faulty");

/// Every column type; history and tombstones; `NOTE` becomes more columns.
const THINGS: &str = r#"[[dataset]]
name = "things"
keys = ["id"]
sequence_by = ["version"]
delete_when = { column = "op", in = ["d"] }
history = true
[[dataset.columns]]
name = "id"
type = "bigint"
[[dataset.columns]]
name = "version"
type = "int"
[[dataset.columns]]
name = "amount"
type = "decimal(12,3)"
[[dataset.columns]]
name = "ratio"
type = "double"
[[dataset.columns]]
name = "flag"
type = "boolean"
[[dataset.columns]]
name = "day"
type = "date"
[[dataset.columns]]
name = "at"
type = "timestamp"
NOTE
[[dataset]]
name = "visits"
table = "Site-Visits"
keys = ["id"]
partition_by = ["region", "day"]
[[dataset.columns]]
name = "id"
type = "bigint"
[[dataset.columns]]
name = "day"
type = "date"
[[dataset.columns]]
name = "Prix (€) \"TTC\"; drop"
type = "double"
[[dataset.columns]]
name = "region"
type = "string"
"#;

const NOTE: &str = "[[dataset.columns]]\nname = \"Note\"\ntype = \"string\"\n";

const THINGS_CSV: &str = "id,version,op,amount,ratio,flag,day,at\n\
    1,1,u,12.500,0.25,true,2026-10-03,2026-10-03T10:00:00Z\n";
const THINGS_NOTE_CSV: &str = "id,version,op,amount,ratio,flag,day,at,Note\n\
    2,1,u,1.000,1.5,false,2026-10-04,2026-10-04T10:00:00Z,hello\n";
const VISITS_CSV: &str = "id,day,\"Prix (€) \"\"TTC\"\"; drop\",region\n7,2026-10-03,9.5,eu\n";

/// A lake on the stack's S3, a Glue database of its own, and the spec.
struct Setup {
    stack: Stack,
    sb: Sandbox,
    lake: String,
    database: String,
}

async fn setup(note: bool) -> Setup {
    let stack = Stack::new(3, 30).await;
    let sb = Sandbox::new();
    write_spec(&sb, note);
    let lake = format!("s3://{}/glue", stack.lake_bucket);
    Setup {
        stack,
        sb,
        lake,
        database: unique_database("lake"),
    }
}

fn write_spec(sb: &Sandbox, note: bool) {
    let text = THINGS.replace("NOTE", if note { NOTE } else { "" });
    std::fs::write(sb.dir.path().join("spec.toml"), text).unwrap();
}

impl Setup {
    /// `load --dataset DATASET --glue-database` of `csv`, with `vars`.
    fn load(&self, dataset: &str, csv: &str, vars: &[(&str, &str)]) -> std::process::Output {
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let file = self.sb.file(&format!("{dataset}-{n}.csv"), csv);
        let spec = self.sb.dir.path().join("spec.toml");
        let args = [
            "--spec",
            spec.to_str().unwrap(),
            "--dataset",
            dataset,
            "load",
            "--lake",
            &self.lake,
            "--glue-database",
            &self.database,
            file.to_str().unwrap(),
        ];
        self.stack.cli_env(EXE, &args, vars)
    }

    fn loaded(&self, dataset: &str, csv: &str) {
        let out = self.load(dataset, csv, &[]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert!(stdout(&out).contains("0 rejected"), "{}", stdout(&out));
        assert!(
            !stderr(&out).contains("catalog sync failed"),
            "{}",
            stderr(&out)
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn every_table_kind_and_column_type_is_registered_as_athena_reads_it() {
    let s = setup(false).await;
    s.loaded("things", THINGS_CSV);
    s.loaded("visits", VISITS_CSV);
    let glue = glue_client().await;
    let expected = [
        "history_log_things",
        "history_things",
        "ledger",
        "reconciliation",
        "rejected_things",
        "rejected_visits",
        "site-visits",
        "things",
        "tombstones_things",
    ];
    assert_eq!(glue_tables(&glue, &s.database).await, expected);

    let things = glue_table(&glue, &s.database, "things").await;
    assert_eq!(
        described(&things),
        "id bigint, version int, amount decimal(12,3), ratio double, flag boolean, \
         day date, at timestamp, source_file string, loaded_at timestamp | "
    );
    assert_eq!(things.table_type(), Some("EXTERNAL_TABLE"));
    let params = things.parameters().unwrap();
    assert_eq!(params["table_type"], "DELTA");
    assert_eq!(params["spark.sql.sources.provider"], "delta");
    let sd = things.storage_descriptor().unwrap();
    let location = format!("{}/things/", s.lake);
    assert_eq!(sd.location(), Some(location.as_str()));
    let serde = sd.serde_info().unwrap();
    assert_eq!(serde.parameters().unwrap()["path"], location);
    assert_eq!(
        serde.serialization_library(),
        Some("org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe")
    );
    assert_eq!(
        sd.input_format(),
        Some("org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat")
    );

    // Partition keys apart, in the partitioning's order; names lower-cased.
    let visits = glue_table(&glue, &s.database, "site-visits").await;
    assert_eq!(
        described(&visits),
        "id bigint, prix (€) \"ttc\"; drop double, source_file string, loaded_at timestamp \
         | region string, day date"
    );
    let location = format!("{}/Site-Visits/", s.lake);
    assert_eq!(
        visits.storage_descriptor().unwrap().location(),
        Some(location.as_str())
    );
    let history = glue_table(&glue, &s.database, "history_things").await;
    assert!(
        described(&history).ends_with("__start_at int, __end_at int | "),
        "{}",
        described(&history)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_added_column_is_one_glue_version_and_a_load_that_changes_no_schema_none() {
    let s = setup(false).await;
    s.loaded("things", THINGS_CSV);
    let glue = glue_client().await;
    assert_eq!(glue_versions(&glue, &s.database, "things").await, 1);
    // Another load, another process: Glue read, nothing written.
    s.loaded("things", &THINGS_CSV.replace("1,1,u", "3,1,u"));
    assert_eq!(glue_versions(&glue, &s.database, "things").await, 1);

    write_spec(&s.sb, true);
    s.loaded("things", THINGS_NOTE_CSV);
    assert_eq!(
        glue_versions(&glue, &s.database, "things").await,
        2,
        "one version more"
    );
    let things = glue_table(&glue, &s.database, "things").await;
    assert!(
        described(&things).ends_with("loaded_at timestamp, note string | "),
        "{}",
        described(&things)
    );
    for unchanged in ["rejected_things", "ledger", "reconciliation"] {
        assert_eq!(
            glue_versions(&glue, &s.database, unchanged).await,
            1,
            "{unchanged}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn glue_out_of_reach_never_fails_a_load_and_is_counted() {
    let s = setup(false).await;
    let key = "in/2026-10-03.csv";
    s.stack.put(key, deltaload_tests::DAY1).await;
    s.stack.wait_for_messages(1).await;
    let mut args = s
        .stack
        .serve_args(&s.lake, "2", &["--glue-database", &s.database]);
    args.extend(["--metrics-namespace".to_string(), "deltaload".to_string()]);
    let out = s.stack.cli_env(
        EXE,
        &args,
        &[("AWS_ENDPOINT_URL_GLUE", "http://127.0.0.1:9")],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("1 files loaded"), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("4 tables not registered in Glue"),
        "{}",
        stdout(&out)
    );
    assert!(
        stdout(&out).contains(r#""CatalogSyncFailed":4"#),
        "{}",
        stdout(&out)
    );
    let warned = stderr(&out);
    assert_eq!(
        warned.matches("catalog sync failed").count(),
        4,
        "once per table: {warned}"
    );
    assert!(warned.contains("AWS_ENDPOINT_URL_GLUE"), "{warned}");
    let shown = s.stack.cli(EXE, &["show", "orders", "--lake", &s.lake]);
    assert!(stdout(&shown).contains("4 row(s)"), "{}", stdout(&shown));
}

#[tokio::test(flavor = "multi_thread")]
async fn catalog_sync_recreates_a_deleted_table_and_fails_on_another_lake_s() {
    let s = setup(false).await;
    s.loaded("things", THINGS_CSV);
    let glue = glue_client().await;
    glue.delete_table()
        .database_name(&s.database)
        .name("things")
        .send()
        .await
        .unwrap();
    let sync = [
        "catalog",
        "sync",
        "--lake",
        &s.lake,
        "--glue-database",
        &s.database,
    ];
    let out = s.stack.cli(EXE, &sync);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let printed = stdout(&out);
    assert!(printed.contains("] things: created ("), "{printed}");
    assert!(printed.contains("] ledger: already in step ("), "{printed}");
    assert!(
        printed.contains("7 tables, 7 registered, 0 failed"),
        "{printed}"
    );
    glue_table(&glue, &s.database, "things").await;

    // A Glue table of that name elsewhere: left alone, and the exit status says so.
    glue.delete_table()
        .database_name(&s.database)
        .name("ledger")
        .send()
        .await
        .unwrap();
    let elsewhere = aws_sdk_glue::types::TableInput::builder()
        .name("ledger")
        .storage_descriptor(
            aws_sdk_glue::types::StorageDescriptor::builder()
                .location("s3://other/ledger/")
                .build(),
        )
        .build()
        .unwrap();
    glue.create_table()
        .database_name(&s.database)
        .table_input(elsewhere)
        .send()
        .await
        .unwrap();
    let out = s.stack.cli(EXE, &sync);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(
        stderr(&out).contains("is at s3://other/ledger/, not at this lake's"),
        "{}",
        stderr(&out)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_name_glue_cannot_hold_is_refused_at_spec_check_and_a_local_lake_at_once() {
    let sb = Sandbox::new();
    let text = THINGS.replace(
        "NOTE",
        "[[dataset.columns]]\nname = \"two\\nlines\"\ntype = \"string\"\n",
    );
    std::fs::write(sb.dir.path().join("spec.toml"), text).unwrap();
    let spec = sb.dir.path().join("spec.toml");
    let check = |glue: &[&str]| {
        let mut args = vec![
            "spec",
            "check",
            spec.to_str().unwrap(),
            "--lake",
            "/nonexistent",
        ];
        args.extend(glue);
        std::process::Command::new(EXE)
            .args(&args)
            .env_remove("DELTALOAD_GLUE_DATABASE")
            .output()
            .unwrap()
    };
    let refused = check(&["--glue-database", "shop"]);
    assert_eq!(refused.status.code(), Some(1), "{}", stdout(&refused));
    let printed = stdout(&refused);
    assert!(
        printed.contains("Glue database shop refuses table things: column \"two\\nlines\""),
        "{printed}"
    );
    assert!(
        printed.contains("history_things"),
        "its history too: {printed}"
    );
    let noted = check(&[]);
    assert_eq!(noted.status.code(), Some(0), "{}", stdout(&noted));
    assert!(
        stdout(&noted).contains("note: Glue could not hold it"),
        "{}",
        stdout(&noted)
    );

    let local = std::process::Command::new(EXE)
        .args([
            "load",
            "--lake",
            "./lake",
            "--glue-database",
            "shop",
            "x.csv",
        ])
        .current_dir(sb.dir.path())
        .output()
        .unwrap();
    assert_eq!(local.status.code(), Some(1));
    assert!(
        stderr(&local).contains("is not on S3"),
        "{}",
        stderr(&local)
    );
}
