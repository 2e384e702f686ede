//! `infra/template.yaml` as deployed to LocalStack: the landing bucket, the queues
//! and the notification hold what the template promises, and a load runs on them.

use crate::serve_once;
use aws_sdk_sqs::types::QueueAttributeName;
use deltaload_tests::localstack::{queue_attribute, Stack};
use deltaload_tests::{stderr, stdout, DAY1, DAY2};

async fn attribute(stack: &Stack, url: &str, name: QueueAttributeName) -> String {
    queue_attribute(&stack.sqs, url, name)
        .await
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_deployed_template_guards_the_landing_bucket_and_announces_only_its_prefix() {
    let stack = Stack::with(4, 30, &["LandingPrefix=in/", "LandingSuffix=.csv"]).await;
    let s3 = &stack.s3;
    let bucket = stack.landing.as_str();
    let versioning = s3
        .get_bucket_versioning()
        .bucket(bucket)
        .send()
        .await
        .unwrap();
    assert_eq!(versioning.status().map(|s| s.as_str()), Some("Enabled"));
    let block = s3
        .get_public_access_block()
        .bucket(bucket)
        .send()
        .await
        .unwrap()
        .public_access_block_configuration
        .expect("public access block");
    assert_eq!(
        (
            block.block_public_acls,
            block.block_public_policy,
            block.ignore_public_acls,
            block.restrict_public_buckets
        ),
        (Some(true), Some(true), Some(true), Some(true))
    );
    let encryption = s3
        .get_bucket_encryption()
        .bucket(bucket)
        .send()
        .await
        .unwrap();
    let rules = encryption
        .server_side_encryption_configuration
        .map(|c| c.rules)
        .unwrap_or_default();
    assert!(
        !rules.is_empty(),
        "default encryption on the landing bucket"
    );

    let redrive = attribute(&stack, &stack.queue_url, QueueAttributeName::RedrivePolicy).await;
    let redrive: serde_json::Value = serde_json::from_str(&redrive).expect("redrive policy");
    assert_eq!(
        redrive["maxReceiveCount"].to_string().trim_matches('"'),
        "4"
    );
    let visibility = attribute(
        &stack,
        &stack.queue_url,
        QueueAttributeName::VisibilityTimeout,
    )
    .await;
    assert_eq!(visibility, "30");
    let retention = attribute(
        &stack,
        &stack.dlq_url,
        QueueAttributeName::MessageRetentionPeriod,
    )
    .await;
    assert_eq!(retention, "1209600", "14 days in the dead-letter queue");
    let policy = attribute(&stack, &stack.queue_url, QueueAttributeName::Policy).await;
    let policy: serde_json::Value = serde_json::from_str(&policy).expect("queue policy");
    let statements = policy["Statement"].as_array().expect("statements");
    assert_eq!(statements.len(), 1, "{policy}");
    assert_eq!(
        statements[0]["Condition"]["ArnEquals"]["aws:SourceArn"],
        format!("arn:aws:s3:::{bucket}"),
        "only the landing bucket may send"
    );

    // Only keys under the prefix with the suffix are announced: the two
    // objects outside the filter go first, and once the notifications of
    // the two put after them have arrived, theirs would have too.
    stack.put("out/day1.csv", DAY1).await;
    stack.put("in/day1.txt", DAY1).await;
    stack.put("in/day1.csv", DAY1).await;
    stack.put("in/day2.csv", DAY2).await;
    stack.wait_for_messages(2).await;
    assert_eq!(stack.pending(&stack.queue_url).await, 2);

    let lake = stack.outputs["LakeUri"]
        .as_str()
        .expect("LakeUri")
        .to_string();
    let sources = stack.outputs["LandingUri"].as_str().expect("LandingUri");
    assert_eq!(sources, format!("s3://{bucket}/in/"));
    let out = serve_once(&stack, &lake, "1", &["--source", sources]);
    assert!(
        stdout(&out)
            .starts_with("2 messages, 2 files loaded, 0 skipped, 0 refused, 0 missing, 0 failed"),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
}

/// Every function timeout the template offers leaves at least three quarters of
/// it for loading: the deadline margin it sets is a quarter at most (a 30 s
/// margin would leave a 30 s function nothing), and the queue's visibility
/// timeout is six times the function's.
#[test]
fn every_offered_timeout_leaves_time_to_load() {
    let template = include_str!("../../infra/template.yaml");
    let rows: Vec<(u64, u64, u64)> = template
        .lines()
        .filter_map(|line| {
            let line = line.trim();
            let (timeout, rest) = line
                .strip_prefix('"')?
                .split_once("\": { VisibilitySeconds: ")?;
            let (visibility, rest) = rest.split_once(", DeadlineMarginSeconds: \"")?;
            let margin = rest.strip_suffix("\" }")?;
            Some((
                timeout.parse().ok()?,
                visibility.parse().ok()?,
                margin.parse().ok()?,
            ))
        })
        .collect();
    let offered = template
        .split("FunctionTimeout:\n")
        .nth(1)
        .and_then(|p| p.split("AllowedValues: [").nth(1))
        .and_then(|p| p.split(']').next())
        .expect("FunctionTimeout's AllowedValues");
    let offered: Vec<u64> = offered
        .split(',')
        .map(|v| v.trim().trim_matches('"').parse().expect("a timeout"))
        .collect();
    assert_eq!(rows.iter().map(|r| r.0).collect::<Vec<_>>(), offered);
    for (timeout, visibility, margin) in rows {
        assert!(margin * 4 <= timeout, "timeout {timeout}: margin {margin}");
        assert_eq!(visibility, 6 * timeout, "timeout {timeout}");
    }
}
