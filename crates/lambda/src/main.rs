//! The AWS Lambda handler of deltaload (binary `bootstrap` for `provided.al2023`).
//!
//! Configuration comes from the environment, read once at cold start:
//! `DELTALOAD_LAKE` (the lake URI), `DELTALOAD_SOURCES` (comma-separated
//! `s3://BUCKET[/PREFIX]`, required), `DELTALOAD_MAX_OBJECT_BYTES`,
//! `DELTALOAD_METRICS_NAMESPACE` (default `deltaload`) and the standard AWS
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
        Ok::<_, lambda_runtime::Error>(handler.respond(event.payload).await)
    }))
    .await
}
