//! `deltaload reconcile` and `deltaload status`.

use crate::args::{ReconcileArgs, StatusArgs};
use crate::backfill::aws_and_lake;
use crate::output::out;
use anyhow::Context;
use deltaload_aws::landing_sweep::{reconcile, Problem, ReconcileReport};
use deltaload_aws::listing::S3Prefix;
use deltaload_core::Spec;
use std::process::ExitCode;

/// Exit status of an inconsistent lake.
const INCONSISTENT: u8 = 3;

fn describe(problem: &Problem) -> String {
    match problem {
        Problem::NeverLoaded => "never loaded (missed event?)".to_string(),
        Problem::ChangedSince { loaded_etag } => format!(
            "changed since it was loaded (loaded ETag {})",
            loaded_etag.as_deref().unwrap_or("-")
        ),
        Problem::Refused { reason } => {
            format!(
                "refused: {}",
                reason.as_deref().unwrap_or("no reason recorded")
            )
        }
        Problem::Unfinished => "load started and did not finish".to_string(),
        Problem::Unbalanced => "reconciliation row does not balance".to_string(),
    }
}

fn print_text(at: &S3Prefix, r: &ReconcileReport, spec: &Spec) -> std::io::Result<()> {
    // What a doubled key is called: an order for the built-in dataset alone.
    let noun = if *spec == Spec::builtin() {
        "orders"
    } else {
        "keys"
    };
    for f in &r.findings {
        out!("{}: {}", at.location(&f.key), describe(&f.problem));
    }
    for d in &r.duplicate_keys {
        out!("{}: {} appears {} times", d.table, d.key, d.count);
    }
    for o in &r.orphan_rejects {
        out!(
            "{}: {} row(s) of {} ({}) whose load the ledger does not hold",
            o.table,
            o.rows,
            o.location,
            o.content_id
        );
    }
    let count = |pred: fn(&Problem) -> bool| r.findings.iter().filter(|f| pred(&f.problem)).count();
    out!(
        "{} listed, {} checked{}, {} consistent, {} never loaded, {} changed, {} refused, {} unfinished, {} unbalanced, {} doubled {}, {} orphan reject files{}",
        r.listed,
        r.checked,
        match r.unrouted {
            0 => String::new(),
            n => format!(" ({n} under no source of the spec's datasets left out)"),
        },
        r.consistent,
        count(|p| matches!(p, Problem::NeverLoaded)),
        count(|p| matches!(p, Problem::ChangedSince { .. })),
        count(|p| matches!(p, Problem::Refused { .. })),
        count(|p| matches!(p, Problem::Unfinished)),
        count(|p| matches!(p, Problem::Unbalanced)),
        r.duplicate_keys.len(),
        noun,
        r.orphan_rejects.len(),
        if r.enqueued > 0 {
            format!(", {} enqueued for a reload", r.enqueued)
        } else {
            String::new()
        }
    );
    Ok(())
}

pub(crate) async fn run(args: ReconcileArgs, spec: &Spec) -> anyhow::Result<ExitCode> {
    let at = S3Prefix::parse(&args.at)?;
    let (aws, s3, mut lake) = aws_and_lake(&args.lake, spec).await?;
    let sqs = aws_sdk_sqs::Client::new(&aws);
    let region = aws
        .region()
        .map_or("us-east-1".to_string(), |r| r.to_string());
    let enqueue = args
        .enqueue
        .as_deref()
        .map(|url| (&sqs, url, region.as_str()));
    let report = reconcile(&s3, &mut lake, &at, &args.selection.selection(), enqueue)
        .await
        .with_context(|| format!("reconciling {at}"))?;
    if args.json {
        out!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_text(&at, &report, spec)?;
    }
    Ok(if report.is_consistent() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(INCONSISTENT)
    })
}

fn time(micros: i64) -> String {
    chrono::DateTime::from_timestamp_micros(micros).map_or_else(
        || micros.to_string(),
        |t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
    )
}

pub(crate) async fn status(args: StatusArgs, spec: &Spec) -> anyhow::Result<ExitCode> {
    // The lake alone: no AWS configuration is read for a lake on local disk.
    let mut lake = crate::opening::open_lake(&args.lake, spec).await?;
    let s = lake.status().await.context("reading the lake's status")?;
    out!("files per day:");
    for (day, status, n) in &s.files_per_day {
        out!("  {day}  {status:<8} {n}");
    }
    out!("tables:");
    let width = s
        .tables
        .iter()
        .map(|t| t.0.len())
        .max()
        .unwrap_or(0)
        .max(16);
    for (name, rows, version) in &s.tables {
        let version = version.map_or("-".to_string(), |v| v.to_string());
        out!("  {name:<width$} {rows} row(s), version {version}");
    }
    out!(
        "last load: {}",
        s.last_load.map_or("never".to_string(), time)
    );
    match &s.oldest_refused {
        Some((location, reason, at)) => out!(
            "oldest refused file: {location} at {} ({})",
            time(*at),
            reason.as_deref().unwrap_or("no reason recorded")
        ),
        None => out!("oldest refused file: none"),
    }
    if s.unfinished.is_empty() {
        out!("unfinished loads: none");
    } else {
        out!(
            "unfinished loads (run them again to complete): {}",
            s.unfinished.join(", ")
        );
    }
    Ok(ExitCode::SUCCESS)
}
