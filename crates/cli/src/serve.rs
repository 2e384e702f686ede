//! `deltaload serve`: the SQS consumer, with the very handler the Lambda runs.

use crate::args::{HandlerArgs, RedriveArgs, ReplayArgs, ServeArgs};
use crate::output::out;
use anyhow::Context;
use deltaload_aws::consumer::{serve, ServeOptions};
use deltaload_aws::handler::batch_response;
use deltaload_aws::redrive::saved_messages;
use deltaload_aws::settings::{machine_memory, Runner};
use deltaload_aws::{Handler, Settings};
use deltaload_core::Spec;
use std::process::ExitCode;

/// The handler `serve` and `replay` run, built as the Lambda builds it.
pub(crate) async fn handler(
    args: &HandlerArgs,
    spec: &Spec,
    command: &str,
) -> anyhow::Result<(Handler, aws_config::SdkConfig)> {
    // The Lambda's settings, read the same way: the options (or their
    // variables) first, then the environment for the rest.
    let given = args.vars();
    let var = |name: &str| {
        given
            .get(name)
            .cloned()
            .or_else(|| std::env::var(name).ok())
    };
    let settings = Settings::from_vars(var, machine_memory(), Runner::Serve)?;
    settings.memory_budget.sweep_spills(false);
    if settings.sources.is_empty() {
        eprintln!("deltaload {command}: no --source given, objects of any bucket will be read");
    }
    let aws = deltaload_aws::settings::aws_config_from_env().await?;
    let handler = Handler::from_settings(&settings, spec, &aws)
        .await
        .with_context(|| format!("opening the lake at {}", settings.lake))?;
    #[cfg(feature = "faults")]
    let handler = handler.with_fault(crate::load::fault_from_env());
    Ok((handler, aws))
}

pub(crate) async fn run(args: ServeArgs, spec: &Spec) -> anyhow::Result<ExitCode> {
    let (handler, aws) = handler(&args.handler, spec, "serve").await?;
    let sqs = aws_sdk_sqs::Client::new(&aws);
    let opts = ServeOptions {
        queue_url: args.queue.clone(),
        batch_size: usize::from(args.batch_size),
        batching_window: std::time::Duration::from_secs(u64::from(args.batching_window)),
        wait_seconds: args.wait,
        once: args.once,
    };
    let report = serve(&handler, &sqs, &opts).await?;
    out!("{}", report.summary());
    Ok(ExitCode::SUCCESS)
}

/// `deltaload replay`: saved messages through the handler, the response printed.
pub(crate) async fn replay(args: ReplayArgs, spec: &Spec) -> anyhow::Result<ExitCode> {
    let mut paths = Vec::new();
    if args.path.is_dir() {
        let entries = std::fs::read_dir(&args.path)
            .with_context(|| format!("reading the directory {}", args.path.display()))?;
        for entry in entries {
            let path = entry?.path();
            if path.extension().is_some_and(|e| e == "json") {
                paths.push(path);
            }
        }
        paths.sort();
    } else {
        paths.push(args.path.clone());
    }
    let mut messages = Vec::new();
    for path in &paths {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        messages.extend(saved_messages(&text, &path.display().to_string())?);
    }
    let (handler, _) = handler(&args.handler, spec, "replay").await?;
    let report = handler.handle(&messages).await;
    let failed = !report.failures.is_empty();
    out!("{}", serde_json::to_string(&batch_response(report))?);
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// `deltaload redrive`: dead-letter messages back to their queue.
pub(crate) async fn redrive(args: RedriveArgs) -> anyhow::Result<ExitCode> {
    let aws = deltaload_aws::settings::aws_config_from_env().await?;
    let sqs = aws_sdk_sqs::Client::new(&aws);
    let moved = deltaload_aws::redrive::redrive(&sqs, &args.dlq, &args.queue, args.max).await?;
    out!(
        "moved {moved} message(s) from {} to {}",
        args.dlq,
        args.queue
    );
    Ok(ExitCode::SUCCESS)
}
