//! Every command resolves `--lake` the same way: an S3 lake behind LocalStack's
//! `http://` endpoint, and a local lake that needs no AWS at all.

use crate::deltaload;
use deltaload_tests::localstack::Stack;
use deltaload_tests::{stderr, stdout, Sandbox, DAY1};
use std::process::{Command, Output};

const EXE: &str = env!("CARGO_BIN_EXE_deltaload-faulty");

#[tokio::test(flavor = "multi_thread")]
async fn every_command_reaches_an_s3_lake_behind_an_http_endpoint() {
    let stack = Stack::new(3, 30).await;
    let sb = Sandbox::new();
    let file = sb.file("2026-10-03.csv", DAY1);
    let lake = format!("s3://{}/try", stack.lake_bucket);
    let load = stack.cli(EXE, &["load", "--lake", &lake, file.to_str().unwrap()]);
    assert_eq!(load.status.code(), Some(0), "{}", stderr(&load));
    assert!(
        stdout(&load).ends_with(": 1 rejected, 0 updated, 4 added, table version 1\n"),
        "{}",
        stdout(&load)
    );
    for args in [
        &["show", "orders", "--lake", &lake][..],
        &["status", "--lake", &lake],
        &["maintain", "--lake", &lake],
    ] {
        let out = stack.cli(EXE, args);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
    }
    let shown = stack.cli(EXE, &["show", "orders", "--lake", &lake]);
    assert!(
        stdout(&shown).contains("4 row(s), table orders version 1"),
        "{}",
        stdout(&shown)
    );
}

/// `deltaload ARGS` in `sb` with no AWS configuration at all: no AWS variable,
/// a home without `~/.aws`, and EC2's metadata service somewhere that refuses.
fn without_aws(sb: &Sandbox, args: &[&str]) -> Output {
    Command::new(EXE)
        .current_dir(sb.dir.path())
        .args(args)
        .env_clear()
        .env("HOME", sb.dir.path())
        .env("AWS_EC2_METADATA_SERVICE_ENDPOINT", "http://127.0.0.1:9")
        .output()
        .expect("run deltaload")
}

#[tokio::test(flavor = "multi_thread")]
async fn a_local_lake_needs_no_aws_and_a_missing_region_is_one_line() {
    let sb = Sandbox::with_seed_files();
    assert_eq!(
        deltaload(&sb, &["load", "raw/a.csv"], None).status.code(),
        Some(0)
    );
    for args in [&["status"][..], &["show", "orders"], &["load", "raw/b.csv"]] {
        let out = without_aws(&sb, args);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        assert_eq!(stderr(&out), "", "{args:?}: nothing about AWS");
    }
    // A command that calls AWS says in one line which variable to set.
    let out = without_aws(&sb, &["reconcile", "s3://landing/in/"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("set AWS_REGION"), "{err}");
}
