//! `deltaload serve`: the SQS consumer, with the very handler the Lambda runs.

use crate::args::ServeArgs;
use anyhow::Context;
use deltaload_aws::consumer::{serve, ServeOptions};
use deltaload_aws::settings::endpoint_from_env;
use deltaload_aws::{Handler, Settings, Sources};
use std::process::ExitCode;

pub(crate) async fn run(args: ServeArgs) -> anyhow::Result<ExitCode> {
    let settings = Settings {
        lake: args.lake.clone(),
        sources: Sources::parse(&args.sources)?,
        max_object_bytes: args.max_object_bytes,
        endpoint_url: endpoint_from_env(),
    };
    if settings.sources.is_empty() {
        eprintln!("deltaload serve: no --source given, objects of any bucket will be read");
    }
    let aws = aws_config::load_defaults(aws_config::BehaviorVersion::latest()).await;
    let handler = Handler::from_settings(&settings, &aws)
        .await
        .with_context(|| format!("opening the lake at {}", settings.lake))?;
    let sqs = aws_sdk_sqs::Client::new(&aws);
    let opts = ServeOptions {
        queue_url: args.queue.clone(),
        batch_size: args.batch_size,
        wait_seconds: args.wait,
        once: args.once,
    };
    let report = serve(&handler, &sqs, &opts).await?;
    println!(
        "{} messages, {} files loaded, {} skipped, {} refused, {} missing, {} failed",
        report.messages,
        report.loaded,
        report.skipped,
        report.refused,
        report.missing,
        report.failures.len()
    );
    Ok(ExitCode::SUCCESS)
}
