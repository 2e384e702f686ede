//! The Lambda function as a developer runs it locally: its bootstrap under
//! cargo-lambda's emulator of the runtime API (`cargo lambda watch
//! --only-lambda-apis`), invoked with `cargo lambda invoke --data-file` and an
//! SQS event of S3 notifications, against LocalStack.

use deltaload_lake::TableName;
use deltaload_tests::localstack::{Stack, REGION};
use deltaload_tests::{stderr, stdout, DAY1, DAY2};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// `cargo-lambda`, from the suite's Python environment (scripts/requirements.txt).
fn cargo_lambda() -> PathBuf {
    let python = std::env::var_os("DELTALOAD_TEST_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.venv/bin/python"));
    python.with_file_name("cargo-lambda")
}

/// Children killed when the test ends, however it ends.
struct Killed(Vec<Child>);

impl Drop for Killed {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.local_addr().expect("address").port()
}

async fn wait_for_port(port: u16) {
    for _ in 0..300 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("cargo-lambda's emulator did not listen on port {port} within 30 s");
}

/// An SQS event as Lambda's event source mapping delivers it, one record per body.
fn sqs_event(stack: &Stack, bodies: &[String]) -> String {
    let records: Vec<serde_json::Value> = bodies
        .iter()
        .enumerate()
        .map(|(i, body)| {
            serde_json::json!({
                "messageId": format!("m{i}"),
                "receiptHandle": format!("r{i}"),
                "body": body,
                "attributes": {"ApproximateReceiveCount": "1"},
                "messageAttributes": {},
                "md5OfBody": "",
                "eventSource": "aws:sqs",
                "eventSourceARN": format!("arn:aws:sqs:{REGION}:000000000000:{}", stack.landing),
                "awsRegion": REGION,
            })
        })
        .collect();
    serde_json::json!({ "Records": records }).to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_bootstrap_under_cargo_lambdas_emulator_loads_an_sqs_event() {
    let stack = Stack::new(3, 30).await;
    stack.put("in/2026-10-03.csv", DAY1).await;
    stack.put("in/2026-10-04.csv", DAY2).await;
    let work = tempfile::tempdir().expect("temporary directory");
    // The emulator reads a Cargo manifest; a minimal one keeps it off the workspace.
    std::fs::write(
        work.path().join("Cargo.toml"),
        "[package]\nname = \"emulator\"\nversion = \"0.0.0\"\nedition = \"2021\"\n",
    )
    .expect("manifest");
    std::fs::create_dir_all(work.path().join("src")).expect("src");
    std::fs::write(work.path().join("src/main.rs"), "fn main() {}\n").expect("main.rs");
    let port = free_port().to_string();
    let emulator = Command::new(cargo_lambda())
        .args([
            "lambda",
            "watch",
            "--only-lambda-apis",
            "-A",
            "127.0.0.1",
            "-P",
            &port,
        ])
        .current_dir(work.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| {
            panic!(
                "cannot run {}: {e}; ./test installs it",
                cargo_lambda().display()
            )
        });
    let mut children = Killed(vec![emulator]);
    wait_for_port(port.parse().expect("port")).await;
    let log = work.path().join("bootstrap.log");
    let bootstrap = Command::new(env!("CARGO_BIN_EXE_deltaload-bootstrap"))
        .env_clear()
        .env(
            "AWS_LAMBDA_RUNTIME_API",
            format!("http://127.0.0.1:{port}/.rt"),
        )
        .env("AWS_LAMBDA_FUNCTION_NAME", "_")
        .env("AWS_LAMBDA_FUNCTION_VERSION", "1")
        .env("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "4096")
        .env("DELTALOAD_LAKE", stack.lake())
        .env("DELTALOAD_SOURCES", format!("s3://{}/in/", stack.landing))
        .env("AWS_ENDPOINT_URL", &stack.endpoint)
        .env("AWS_REGION", REGION)
        .env("AWS_ACCESS_KEY_ID", "test")
        .env("AWS_SECRET_ACCESS_KEY", "test")
        // Its logs (JSON) and EMF lines go to stdout, as in Lambda.
        .stdout(std::fs::File::create(&log).expect("log file"))
        .stderr(Stdio::inherit())
        .spawn()
        .expect("run the bootstrap");
    children.0.push(bootstrap);
    let event = work.path().join("event.json");
    let bodies = [
        stack.created("in/2026-10-03.csv"),
        stack.created("in/2026-10-04.csv"),
    ];
    std::fs::write(&event, sqs_event(&stack, &bodies)).expect("event file");
    for round in 0..2 {
        let invoke = Command::new(cargo_lambda())
            .args([
                "lambda",
                "invoke",
                "-A",
                "127.0.0.1",
                "-P",
                &port,
                "--data-file",
            ])
            .arg(&event)
            .current_dir(work.path())
            .output()
            .expect("cargo lambda invoke");
        let log_text = std::fs::read_to_string(&log).unwrap_or_default();
        assert!(invoke.status.success(), "{}\n{log_text}", stderr(&invoke));
        let response: serde_json::Value = serde_json::from_str(stdout(&invoke).trim())
            .unwrap_or_else(|e| panic!("{e}: {}\n{log_text}", stdout(&invoke)));
        assert_eq!(
            response["batchItemFailures"],
            serde_json::json!([]),
            "round {round}: {log_text}"
        );
    }
    let root = stack.lake_root();
    let orders = deltaload_lake::table_rows(&root, &deltaload_tests::orders_table(), "order_id")
        .await
        .expect("orders");
    assert_eq!(orders.len(), 5, "{orders:?}");
    let ledger = deltaload_lake::table_rows(&root, &TableName::Ledger, "status")
        .await
        .expect("ledger");
    assert_eq!(
        ledger.len(),
        2,
        "the second invocation skipped both: {ledger:?}"
    );
    // The emulator's deadline (its timeout, 1970 as a date) is reported once.
    let log_text = std::fs::read_to_string(&log).expect("bootstrap log");
    let reported = log_text.matches("deadline had passed").count();
    assert_eq!(reported, 1, "{log_text}");
}
