//! The AWS Lambda handler of deltaload (binary `bootstrap` for `provided.al2023`).
//!
//! Configuration comes from the environment, read once at cold start:
//! `DELTALOAD_LAKE` (the lake URI), `DELTALOAD_SOURCES` (comma-separated
//! `s3://BUCKET[/PREFIX]`, required), `DELTALOAD_MAX_OBJECT_BYTES`,
//! `DELTALOAD_METRICS_NAMESPACE` (default `deltaload`),
//! `DELTALOAD_DEADLINE_MARGIN_SECONDS` (default 30, at most a quarter of the
//! invocation's time: no message is read and no load started with less than
//! that left), `DELTALOAD_LOG` (log filter, default `info`) and the standard
//! AWS variables. The lake is opened in the background while the runtime
//! fetches the first event. Each invocation takes an SQS batch of S3 events, returns the
//! messages to retry as partial batch failures, and prints its figures as one
//! CloudWatch EMF line on stdout; or takes the template's scheduled maintenance
//! event (`{"deltaload": "maintain"}`) and maintains the lake's tables.

// The Delta futures are deep; the default limit is too low for their layout.
#![recursion_limit = "256"]

use deltaload_aws::deadline::Deadline;
use deltaload_aws::{Handler, Settings};
use lambda_runtime::{service_fn, LambdaEvent};
use std::time::{Instant, SystemTime};

/// Runs the function: settings once and the lake opening, then invocations until the runtime stops it.
pub async fn run() -> Result<(), lambda_runtime::Error> {
    let directives = std::env::var("DELTALOAD_LOG").unwrap_or_else(|_| "info".to_string());
    tracing_subscriber::fmt()
        .json()
        .with_env_filter(deltaload_aws::logging::filter(&directives, "info"))
        .without_time()
        .with_current_span(true)
        .init();
    let settings = Settings::from_env()?;
    // A load killed in this sandbox (timeout, memory) left its spills in /tmp.
    settings.memory_budget.sweep_spills(true);
    let aws = deltaload_aws::settings::aws_config_from_env().await?;
    let spec = deltaload_aws::spec::read_spec(settings.spec.as_deref()).await?;
    // The tables' logs are read while the runtime fetches the first event.
    let handler = Handler::opening_in_background(&settings, &spec, &aws)?;
    let handler = &handler;
    lambda_runtime::run(service_fn(
        move |event: LambdaEvent<deltaload_aws::maintenance::Event>| async move {
            let deadline = usable_deadline(event.context.deadline);
            // An SQS batch answers with the messages to retry; the scheduled
            // maintenance event with what it did, or fails the invocation.
            handler
                .invoke(event.payload, deadline)
                .await
                .map_err(lambda_runtime::Error::from)
        },
    ))
    .await
}

/// The invocation's deadline as an `Instant`; none when the runtime gave none,
/// or gave one already past on arrival (reported once per process).
fn usable_deadline(epoch_ms: u64) -> Option<Instant> {
    let deadline = Deadline::from_epoch_ms(epoch_ms, SystemTime::now());
    if let Deadline::AlreadyPast { epoch_ms } = deadline {
        static REPORTED: std::sync::Once = std::sync::Once::new();
        REPORTED.call_once(|| {
            tracing::warn!(
                lambda_runtime_deadline_ms = epoch_ms,
                "the runtime API's deadline had passed when the invocation arrived, so it is not a \
                 deadline (an emulator's timeout?): invocations run with no deadline margin; \
                 reported once"
            )
        });
    }
    deadline.instant(Instant::now())
}
