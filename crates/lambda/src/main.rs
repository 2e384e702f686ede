//! The AWS Lambda handler of deltaload (binary `bootstrap` for `provided.al2023`).
//!
//! Configuration comes from the environment, read once at cold start:
//! `DELTALOAD_LAKE` (the lake URI), `DELTALOAD_SOURCES` (comma-separated
//! `s3://BUCKET[/PREFIX]`, required), `DELTALOAD_MAX_OBJECT_BYTES`,
//! `DELTALOAD_METRICS_NAMESPACE` (default `deltaload`),
//! `DELTALOAD_DEADLINE_MARGIN_SECONDS` (default 30: no message is read and no
//! load started with less than that left of the invocation) and the standard AWS
//! variables. Each invocation takes an SQS batch of S3 events, returns the
//! messages to retry as partial batch failures, and prints its figures as one
//! CloudWatch EMF line on stdout.

// The Delta futures are deep; the default limit is too low for their layout.
#![recursion_limit = "256"]

use aws_lambda_events::event::sqs::SqsEvent;
use deltaload_aws::{Handler, Settings};
use lambda_runtime::{service_fn, LambdaEvent};

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    tracing_subscriber::fmt()
        .json()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("DELTALOAD_LOG").unwrap_or_else(|_| {
                tracing_subscriber::EnvFilter::new("info,buoyant_kernel=off,deltalake_core=error")
            }),
        )
        .without_time()
        .with_current_span(true)
        .init();
    let settings = Settings::from_env()?;
    if settings.sources.is_empty() {
        return Err("DELTALOAD_SOURCES is not set: the handler reads only the buckets and prefixes it names".into());
    }
    let aws = aws_config::load_defaults(aws_config::BehaviorVersion::latest()).await;
    let handler = Handler::from_settings(&settings, &aws).await?;
    let handler = &handler;
    lambda_runtime::run(service_fn(move |event: LambdaEvent<SqsEvent>| async move {
        let deadline = deadline(event.context.deadline);
        Ok::<_, lambda_runtime::Error>(handler.respond_until(event.payload, deadline).await)
    }))
    .await
}

/// The invocation's deadline (milliseconds since the epoch; 0 when the runtime
/// gave none) as an `Instant`; a deadline already past is now.
fn deadline(epoch_ms: u64) -> Option<std::time::Instant> {
    if epoch_ms == 0 {
        return None;
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let left = std::time::Duration::from_millis(epoch_ms).saturating_sub(now);
    Some(std::time::Instant::now() + left)
}
