//! A spec's errors and changes: a broken spec stops every command before anything
//! is read; `spec check`, `spec example` and `validate` write nothing; a nullable
//! column added to the spec joins the table, and any other change is refused.

use crate::datasets::{run, sandbox, spec_text, with_spec};
use crate::deltaload;
use crate::other_engines::run_python;
use deltaload_tests::{stderr, stdout};

#[tokio::test(flavor = "multi_thread")]
async fn spec_errors_stop_every_command_before_anything_is_read() {
    let sb = sandbox();
    let broken = spec_text("landing").replacen("type = \"double\"", "type = \"float\"", 1);
    std::fs::write(sb.dir.path().join("broken.toml"), broken).unwrap();
    for args in [
        vec![
            "--spec",
            "broken.toml",
            "--dataset",
            "employees",
            "load",
            "raw/employees-1.csv",
        ],
        vec!["--spec", "broken.toml", "status"],
        vec!["--spec", "broken.toml", "show", "employees"],
        vec!["spec", "check", "broken.toml"],
    ] {
        let out = deltaload(&sb, &args, None);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert_eq!(
            stderr(&out),
            "deltaload: spec broken.toml line 95: column \"salary\" has unknown type \"float\": use string, \
             boolean, int, bigint, double, decimal(P,S) (P from 1 to 38, S at most P), date or timestamp\n",
            "{args:?}"
        );
    }
    assert!(!sb.lake_dir().exists(), "nothing was created");
    // A spec of several datasets needs --dataset to load, and a known one.
    let out = deltaload(
        &sb,
        &["--spec", "spec.toml", "load", "raw/employees-1.csv"],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("choose one with --dataset"),
        "{}",
        stderr(&out)
    );
    let out = deltaload(
        &sb,
        &["--spec", "spec.toml", "--dataset", "staff", "status"],
        None,
    );
    assert!(
        stderr(&out).contains(
            "no dataset \"staff\" in the spec (it has: subscribers, readings, employees)"
        ),
        "{}",
        stderr(&out)
    );
    assert!(!sb.lake_dir().exists(), "nothing was created");
}

#[tokio::test(flavor = "multi_thread")]
async fn spec_check_example_and_validate_describe_without_writing() {
    let sb = sandbox();
    let checked = run(&sb, &["spec", "check", "spec.toml"]);
    assert!(
        checked.contains(
            "dataset readings: tables readings, rejected_readings; source s3://landing/iot/"
        ),
        "{checked}"
    );
    assert!(checked.contains("  keys: site, sensor"), "{checked}");
    assert!(
        checked.contains(
            "    taken_at                 timestamp        not null, timezone Europe/Berlin"
        ),
        "{checked}"
    );
    assert!(
        checked.ends_with("spec.toml: 3 dataset(s), valid\n"),
        "{checked}"
    );
    // --dataset narrows it to one, and an unknown name is an error.
    let one = run(
        &sb,
        &["--dataset", "readings", "spec", "check", "spec.toml"],
    );
    assert_eq!(one.matches("dataset ").count(), 1, "{one}");
    let unknown = deltaload(
        &sb,
        &["--dataset", "nope", "spec", "check", "spec.toml"],
        None,
    );
    assert_eq!(unknown.status.code(), Some(1), "{}", stdout(&unknown));
    // The example is the built-in dataset, and a spec that loads as the built-in does.
    let example = run(&sb, &["spec", "example"]);
    std::fs::write(sb.dir.path().join("orders.toml"), &example).unwrap();
    assert_eq!(
        deltaload_core::Spec::parse(&example, "example").unwrap(),
        deltaload_core::Spec::builtin()
    );
    let alone = run(&sb, &["spec", "check", "orders.toml"]);
    assert!(
        alone.contains("source none (the spec's only dataset: it takes every object)"),
        "{alone}"
    );
    let validated = with_spec(
        &sb,
        "spec.toml",
        &[
            "--dataset",
            "readings",
            "validate",
            "raw/readings-1.csv",
            "raw/readings-2.csv",
        ],
    );
    assert_eq!(validated.status.code(), Some(2), "a file has rejects");
    assert_eq!(
        stdout(&validated),
        "raw/readings-1.csv: 5 records, 4 valid, 1 rejected, 1 duplicate keys (dataset readings)\n  \
         line 6: value \"1234.567\" has more than 2 decimals (not rounded)\n\
         raw/readings-2.csv: 2 records, 2 valid, 0 rejected, 0 duplicate keys (dataset readings)\n"
    );
    let refused = with_spec(
        &sb,
        "spec.toml",
        &["--dataset", "subscribers", "validate", "raw/readings-1.csv"],
    );
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        stdout(&refused).contains("would be refused: header mismatch"),
        "{}",
        stdout(&refused)
    );
    assert!(!sb.lake_dir().exists(), "validate writes nothing");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_nullable_column_added_to_the_spec_joins_the_table_and_any_other_change_refuses() {
    let sb = sandbox();
    run(
        &sb,
        &["--dataset", "employees", "load", "raw/employees-1.csv"],
    );
    // A nullable column at the end: added to the table, older rows null.
    let grown = spec_text("landing") + "[[dataset.columns]]\nname = \"email\"\ntype = \"string\"\n";
    std::fs::write(sb.dir.path().join("grown.toml"), grown).unwrap();
    sb.file("employees-3.csv", "4,Dana,50000.0,ops,dana@example.com\n");
    let out = with_spec(
        &sb,
        "grown.toml",
        &["--dataset", "employees", "load", "raw/employees-3.csv"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let read = run_python(
        "import sys, os\nfrom deltalake import DeltaTable\n\
         t = DeltaTable(sys.argv[1] + '/employees')\n\
         print(sorted((r['id'], r['email']) for r in t.to_pyarrow_table().to_pylist()))\n\
         sys.stdout.flush(); os._exit(0)\n",
        &[sb.lake_dir().to_str().unwrap()],
    );
    assert_eq!(
        stdout(&read),
        "[(1, None), (2, None), (4, 'dana@example.com')]\n"
    );
    // A type changed: refused before anything is read, naming both definitions.
    let changed = spec_text("landing").replacen("type = \"double\"", "type = \"decimal(10,2)\"", 1);
    std::fs::write(sb.dir.path().join("changed.toml"), changed).unwrap();
    let out = with_spec(
        &sb,
        "changed.toml",
        &["--dataset", "employees", "load", "raw/employees-2.csv"],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("table employees does not match the spec: column \"salary\" is double, nullable in the table and decimal(10,2), nullable in the spec"),
        "{}",
        stderr(&out)
    );
    // The refusal is the command's only output: the other tables' openings,
    // still running when it came, end before the process does (they panicked
    // in the Delta kernel's executor at exit in about half the runs).
    for _ in 0..8 {
        let out = with_spec(
            &sb,
            "changed.toml",
            &["--dataset", "employees", "load", "raw/employees-2.csv"],
        );
        assert!(!stderr(&out).contains("panicked"), "{}", stderr(&out));
        assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));
    }
    // Keys changed: refused too.
    let rekeyed = spec_text("landing").replacen("keys = [\"id\"]", "keys = [\"name\"]", 1);
    std::fs::write(sb.dir.path().join("rekeyed.toml"), rekeyed).unwrap();
    let out = deltaload(
        &sb,
        &["--spec", "rekeyed.toml", "--dataset", "employees", "status"],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("the table's keys are [id] and the spec's are [name]"),
        "{}",
        stderr(&out)
    );
}
