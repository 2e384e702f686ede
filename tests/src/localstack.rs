//! A private set of LocalStack resources for one test, deployed from
//! `infra/template.yaml` through CloudFormation: landing bucket (versioned) with
//! its object-created notification, lake bucket, queue and dead-letter queue.
//!
//! The endpoint is `DELTALOAD_TEST_ENDPOINT` or `http://127.0.0.1:4566` (started
//! by `./test` through `localstack/up`); the test process's environment is read,
//! never changed, and child processes get the AWS settings explicitly.

use aws_sdk_s3::primitives::ByteStream;
use aws_sdk_sqs::types::QueueAttributeName;
use deltaload_lake::LakeRoot;
use std::process::{Command, Output};
use std::sync::atomic::{AtomicU32, Ordering};

/// Test credentials LocalStack accepts.
pub const REGION: &str = "us-east-1";

/// The LocalStack endpoint of the suite.
pub fn endpoint() -> String {
    std::env::var("DELTALOAD_TEST_ENDPOINT").unwrap_or_else(|_| "http://127.0.0.1:4566".to_string())
}

/// One test's resources.
pub struct Stack {
    pub endpoint: String,
    pub s3: aws_sdk_s3::Client,
    pub sqs: aws_sdk_sqs::Client,
    pub landing: String,
    pub lake_bucket: String,
    pub queue_url: String,
    pub dlq_url: String,
    /// The stack's outputs (`LandingUri`, `LakeUri`, ...).
    pub outputs: serde_json::Value,
}

fn unique(prefix: &str) -> String {
    static N: AtomicU32 = AtomicU32::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!(
        "{prefix}-{}-{}-{nanos}",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    )
}

/// The SDK configuration for LocalStack, without touching the environment.
pub async fn sdk_config(endpoint: &str) -> aws_config::SdkConfig {
    aws_config::defaults(aws_config::BehaviorVersion::latest())
        .endpoint_url(endpoint)
        .region(aws_config::Region::new(REGION))
        .credentials_provider(aws_sdk_s3::config::Credentials::new(
            "test", "test", None, None, "test",
        ))
        .load()
        .await
}

/// `localstack/deploy.py STACK PARAMS...`: the stack's outputs.
fn deploy(endpoint: &str, stack: &str, params: &[String]) -> serde_json::Value {
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let python = std::env::var("DELTALOAD_LOCALSTACK_PYTHON").map_or_else(
        |_| repo.join("localstack/.venv/bin/python"),
        std::path::PathBuf::from,
    );
    let out = Command::new(&python)
        .arg(repo.join("localstack/deploy.py"))
        .arg(stack)
        .args(params)
        .env("AWS_ENDPOINT_URL", endpoint)
        .env("AWS_REGION", REGION)
        .env("AWS_DEFAULT_REGION", REGION)
        .env("AWS_ACCESS_KEY_ID", "test")
        .env("AWS_SECRET_ACCESS_KEY", "test")
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "cannot run {}: {e}; localstack/up installs it (./test does)",
                python.display()
            )
        });
    assert!(
        out.status.success(),
        "deploying infra/template.yaml as {stack} on LocalStack at {endpoint} failed (start it with localstack/up; ./test does): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stack outputs as JSON")
}

/// One attribute of a queue.
pub async fn queue_attribute(
    sqs: &aws_sdk_sqs::Client,
    url: &str,
    name: QueueAttributeName,
) -> Option<String> {
    sqs.get_queue_attributes()
        .queue_url(url)
        .attribute_names(name.clone())
        .send()
        .await
        .expect("queue attributes")
        .attributes
        .and_then(|a| a.get(&name).cloned())
}

impl Stack {
    /// Deploys `infra/template.yaml` (without the function) as a stack of its own
    /// through LocalStack's CloudFormation: what the suite tests is what ships.
    /// `max_receive` is the queue's redrive maxReceiveCount, `visibility` its
    /// visibility timeout in seconds.
    pub async fn new(max_receive: u32, visibility: u32) -> Self {
        Self::with(max_receive, visibility, &[]).await
    }

    /// [`Stack::new`] with more template parameters (`Name=Value`).
    pub async fn with(max_receive: u32, visibility: u32, more: &[&str]) -> Self {
        let endpoint = endpoint();
        let config = sdk_config(&endpoint).await;
        let s3 = deltaload_aws::s3::s3_client(&config, Some(&endpoint));
        let sqs = aws_sdk_sqs::Client::new(&config);
        let stack = unique("t");
        let landing = unique("landing");
        let params = [
            format!("LandingBucketName={landing}"),
            format!("MaxReceiveCount={max_receive}"),
            format!("VisibilityTimeoutWithoutFunction={visibility}"),
        ]
        .into_iter()
        .chain(more.iter().map(|p| p.to_string()))
        .collect::<Vec<_>>();
        let outputs = {
            let endpoint = endpoint.clone();
            tokio::task::spawn_blocking(move || deploy(&endpoint, &stack, &params))
                .await
                .expect("deploy task")
        };
        let output = |key: &str| -> String {
            outputs[key]
                .as_str()
                .unwrap_or_else(|| panic!("stack output {key} missing: {outputs}"))
                .to_string()
        };
        let (lake_bucket, queue_url, dlq_url) = (
            output("LakeBucket"),
            output("QueueUrl"),
            output("DeadLetterQueueUrl"),
        );
        assert_eq!(output("LandingBucket"), landing);
        // S3 announces a new notification with an s3:TestEvent; take it off the
        // queue so tests count only their own messages.
        let received = sqs
            .receive_message()
            .queue_url(&queue_url)
            .wait_time_seconds(2)
            .max_number_of_messages(10)
            .send()
            .await
            .expect("receive the test event");
        for m in received.messages() {
            if m.body().is_some_and(|b| b.contains("s3:TestEvent")) {
                if let Some(handle) = m.receipt_handle() {
                    sqs.delete_message()
                        .queue_url(&queue_url)
                        .receipt_handle(handle)
                        .send()
                        .await
                        .expect("delete the test event");
                }
            }
        }
        Self {
            endpoint,
            s3,
            sqs,
            landing,
            lake_bucket,
            queue_url,
            dlq_url,
            outputs,
        }
    }

    /// Uploads `content` to the landing bucket under `key`.
    pub async fn put(&self, key: &str, content: impl Into<Vec<u8>>) {
        self.s3
            .put_object()
            .bucket(&self.landing)
            .key(key)
            .body(ByteStream::from(content.into()))
            .send()
            .await
            .expect("put object");
    }

    /// The body S3 sends for an object created under `key` in the landing bucket.
    pub fn created(&self, key: &str) -> String {
        serde_json::json!({"Records": [{
            "eventName": "ObjectCreated:Put",
            "s3": {"bucket": {"name": self.landing}, "object": {"key": key}},
        }]})
        .to_string()
    }

    /// A handler reading this stack's landing bucket and loading into `lake`.
    pub async fn handler(&self, lake: deltaload_lake::Lake) -> deltaload_aws::Handler {
        let config = sdk_config(&self.endpoint).await;
        let client = deltaload_aws::s3::s3_client(&config, Some(&self.endpoint));
        let sources =
            deltaload_aws::Sources::parse(&[format!("s3://{}", self.landing)]).expect("sources");
        deltaload_aws::Handler::new(
            lake,
            deltaload_aws::s3::S3Reader::new(client, 1 << 20),
            sources,
        )
    }

    /// Uploads many objects, 32 at a time.
    pub async fn put_many(&self, objects: Vec<(String, String)>) {
        for chunk in objects.chunks(32) {
            futures::future::join_all(chunk.iter().map(|(k, c)| self.put(k, c.clone()))).await;
        }
    }

    /// Waits until at least `n` messages are visible on the queue (S3 delivers
    /// notifications asynchronously, later under load).
    pub async fn wait_for_messages(&self, n: usize) {
        self.wait_visible(&self.queue_url, n).await
    }

    /// Waits until at least `n` messages are visible on `queue_url` (new ones,
    /// or ones whose visibility timeout ran out), for at most 60 s.
    pub async fn wait_visible(&self, queue_url: &str, n: usize) {
        self.wait_visible_on(&[queue_url], n).await
    }

    /// Waits until at least `n` messages are visible on the queues together,
    /// for at most 60 s: a message that failed comes back on the queue, or
    /// rests in the dead-letter queue.
    pub async fn wait_visible_on(&self, queue_urls: &[&str], n: usize) {
        for _ in 0..600 {
            let mut visible = 0;
            for url in queue_urls {
                visible += self.depth(url).await;
            }
            if visible >= n {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        panic!("fewer than {n} messages were visible on {queue_urls:?} within 60 s");
    }

    /// Takes the notifications of `expected` uploads off the queue (as if they
    /// were lost): waits for them, then receives until a receive gets nothing.
    pub async fn drain(&self, expected: usize) -> usize {
        self.wait_for_messages(expected).await;
        let mut drained = 0;
        loop {
            let received = self
                .sqs
                .receive_message()
                .queue_url(&self.queue_url)
                .max_number_of_messages(10)
                .wait_time_seconds(1)
                .send()
                .await
                .expect("receive");
            let messages = received.messages();
            if messages.is_empty() {
                return drained;
            }
            drained += messages.len();
            let entries = messages.iter().enumerate().filter_map(|(i, m)| {
                aws_sdk_sqs::types::DeleteMessageBatchRequestEntry::builder()
                    .id(i.to_string())
                    .receipt_handle(m.receipt_handle()?)
                    .build()
                    .ok()
            });
            self.sqs
                .delete_message_batch()
                .queue_url(&self.queue_url)
                .set_entries(Some(entries.collect()))
                .send()
                .await
                .expect("delete");
        }
    }

    /// Sends up to 10 message bodies to the queue in one batch.
    pub async fn send_many(&self, bodies: &[String]) {
        let entries = bodies.iter().enumerate().map(|(i, body)| {
            aws_sdk_sqs::types::SendMessageBatchRequestEntry::builder()
                .id(i.to_string())
                .message_body(body)
                .build()
                .expect("batch entry")
        });
        let sent = self
            .sqs
            .send_message_batch()
            .queue_url(&self.queue_url)
            .set_entries(Some(entries.collect()))
            .send()
            .await
            .expect("send message batch");
        assert!(sent.failed().is_empty(), "{:?}", sent.failed());
    }

    /// Sends a raw message body to the queue.
    pub async fn send(&self, body: &str) {
        self.sqs
            .send_message()
            .queue_url(&self.queue_url)
            .message_body(body)
            .send()
            .await
            .expect("send message");
    }

    /// Messages waiting in a queue (visible ones).
    pub async fn depth(&self, queue_url: &str) -> usize {
        queue_attribute(
            &self.sqs,
            queue_url,
            QueueAttributeName::ApproximateNumberOfMessages,
        )
        .await
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
    }

    /// Messages on a queue, visible or in flight.
    pub async fn pending(&self, queue_url: &str) -> usize {
        let mut total = 0;
        for name in [
            QueueAttributeName::ApproximateNumberOfMessages,
            QueueAttributeName::ApproximateNumberOfMessagesNotVisible,
        ] {
            total += queue_attribute(&self.sqs, queue_url, name)
                .await
                .and_then(|v| v.parse::<usize>().ok())
                .unwrap_or(0);
        }
        total
    }

    /// Runs `serve` (as `run` does it) whenever a message is visible, at most
    /// `rounds` times, until the queue holds no message: what a killed
    /// consumer left comes back after the visibility timeout. Every run must
    /// succeed (`what` names the case in the failure).
    pub async fn serve_until_drained(&self, rounds: usize, what: &str, run: impl Fn() -> Output) {
        for _ in 0..rounds {
            if self.pending(&self.queue_url).await == 0 {
                return;
            }
            self.wait_visible(&self.queue_url, 1).await;
            let out = run();
            assert_eq!(
                out.status.code(),
                Some(0),
                "{what}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }

    /// The lake URI.
    pub fn lake(&self) -> String {
        format!("s3://{}/lake", self.lake_bucket)
    }

    /// The lake root for reading tables from the test process.
    pub fn lake_root(&self) -> LakeRoot {
        deltaload_lake::lake_url(&self.lake())
            .expect("lake url")
            .with_storage_option("AWS_ENDPOINT_URL", &self.endpoint)
            .with_storage_option("AWS_ALLOW_HTTP", "true")
            .with_storage_option("AWS_REGION", REGION)
            .with_storage_option("AWS_ACCESS_KEY_ID", "test")
            .with_storage_option("AWS_SECRET_ACCESS_KEY", "test")
    }
}
