//! `deltaload backfill`: existing objects announced on the queue again.

use crate::args::BackfillArgs;
use crate::output::out;
use anyhow::Context;
use deltaload_aws::backfill::{backfill, BackfillOptions, BackfillReport};
use deltaload_aws::listing::S3Prefix;
use deltaload_core::Spec;
use std::io::IsTerminal;
use std::process::ExitCode;

/// The AWS configuration from the standard environment, an S3 client for it, and
/// the lake at `lake`.
pub(crate) async fn aws_and_lake(
    lake: &str,
    spec: &Spec,
) -> anyhow::Result<(
    aws_config::SdkConfig,
    aws_sdk_s3::Client,
    deltaload_lake::Lake,
)> {
    let aws = deltaload_aws::settings::aws_config_from_env().await?;
    let endpoint = deltaload_aws::settings::endpoint_from_env();
    let s3 = deltaload_aws::s3::s3_client(&aws, endpoint.as_deref());
    Ok((aws, s3, crate::opening::open_lake(lake, spec).await?))
}

fn line(r: &BackfillReport, dry_run: bool) -> String {
    let verb = if dry_run { "would enqueue" } else { "enqueued" };
    format!(
        "{} listed, {} selected, {} already loaded, {} {verb}, {} failed",
        r.listed, r.selected, r.already_loaded, r.enqueued, r.failed
    )
}

pub(crate) async fn run(args: BackfillArgs, spec: &Spec) -> anyhow::Result<ExitCode> {
    let at = S3Prefix::parse(&args.at)?;
    let (aws, s3, mut lake) = aws_and_lake(&args.lake, spec).await?;
    let sqs = aws_sdk_sqs::Client::new(&aws);
    let opts = BackfillOptions {
        at,
        selection: args.selection.selection(),
        queue_url: args.queue.clone(),
        dry_run: args.dry_run,
        rate: (args.rate > 0).then_some(args.rate),
        force: args.force,
        region: aws
            .region()
            .map_or("us-east-1".to_string(), |r| r.to_string()),
    };
    // A live spinner on a terminal; a line per listed page otherwise (logs, CI).
    let bar = std::io::stderr().is_terminal().then(|| {
        let bar = indicatif::ProgressBar::new_spinner();
        bar.enable_steady_tick(std::time::Duration::from_millis(200));
        bar
    });
    let mut progress = |r: &BackfillReport| match &bar {
        Some(bar) => bar.set_message(line(r, args.dry_run)),
        None => eprintln!("backfill: {}", line(r, args.dry_run)),
    };
    let report = backfill(&s3, &sqs, &mut lake, &opts, &mut progress)
        .await
        .with_context(|| format!("backfill of {}", opts.at))?;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    out!("{}", line(&report, args.dry_run));
    Ok(if report.failed > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
