//! `deltaload maintain`.

use crate::args::MaintainArgs;
use crate::output::out;
use anyhow::{bail, Context};
use deltaload_core::Spec;
use deltaload_lake::{MaintainOptions, Maintained};
use std::process::ExitCode;

fn line(m: &Maintained, dry_run: bool) -> String {
    if dry_run {
        return format!(
            "{}: {} files, vacuum would delete {}",
            m.table, m.files_before, m.vacuumed
        );
    }
    let mut retried = match m.conflicts_retried {
        0 => String::new(),
        1 => ", 1 conflict retried".to_string(),
        n => format!(", {n} conflicts retried"),
    };
    if m.compaction_skipped {
        retried.push_str(
            ", compaction skipped: concurrent commits won every attempt (run maintain again when loads are quieter)",
        );
    }
    if let Some(n) = m.tombstones_expired {
        retried.push_str(&format!(", {n} tombstones expired"));
    }
    if m.expiry_skipped {
        retried.push_str(
            ", tombstone expiry skipped: concurrent commits won every attempt (run maintain again when loads are quieter)",
        );
    }
    format!(
        "{}: {} files -> {} ({} compacted into {}), checkpoint at version {}, {} log files and {} data files removed{retried}",
        m.table,
        m.files_before,
        m.files_after,
        m.files_removed,
        m.files_added,
        m.checkpoint.map_or_else(|| "-".to_string(), |v| v.to_string()),
        m.logs_removed,
        m.vacuumed,
    )
}

pub(crate) async fn run(args: MaintainArgs, spec: &Spec) -> anyhow::Result<ExitCode> {
    if args.retain_hours < deltaload_lake::maintain::DEFAULT_RETENTION_HOURS
        && !args.allow_short_retention
    {
        bail!(
            "--retain-hours {} is below the tables' deleted-file retention of {} hours: a load or reader still on an older version could lose its files; add --allow-short-retention only when none can be",
            args.retain_hours,
            deltaload_lake::maintain::DEFAULT_RETENTION_HOURS
        );
    }
    let mut lake = crate::opening::open_lake(&args.lake, spec).await?;
    let opts = MaintainOptions {
        target_file_bytes: args.target_file_mb << 20,
        orders_file_bytes: args.orders_file_mb << 20,
        retention_hours: args.retain_hours,
        allow_short_retention: args.allow_short_retention,
        cluster: args.cluster,
        dry_run: args.dry_run,
        tombstone_retention_days: args.tombstone_retention_days,
    };
    let done = lake
        .maintain(opts)
        .await
        .with_context(|| format!("maintaining the lake at {}", args.lake))?;
    for m in &done {
        out!("{}", line(m, args.dry_run));
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_skipped_compaction_is_said_with_what_to_do() {
        let m = Maintained {
            table: "ledger".into(),
            files_before: 40,
            files_after: 40,
            conflicts_retried: 5,
            compaction_skipped: true,
            checkpoint: Some(90),
            ..Maintained::default()
        };
        let said = line(&m, false);
        assert!(
            said.starts_with("ledger: 40 files -> 40 (0 compacted into 0)"),
            "{said}"
        );
        assert!(
            said.contains("5 conflicts retried, compaction skipped"),
            "{said}"
        );
        assert!(said.contains("run maintain again"), "{said}");
        let done = line(
            &Maintained {
                compaction_skipped: false,
                ..m
            },
            false,
        );
        assert!(!done.contains("skipped"), "{done}");
    }
}
