//! The `deltaload` command line.
//!
//! ```text
//! deltaload load [--lake DIR_OR_URI] [--force] FILE...
//! deltaload show TABLE [--lake DIR_OR_URI]
//! deltaload serve --queue URL [--lake URI] [--source s3://BUCKET[/PREFIX]]... [--batch-size N] [--wait SECONDS] [--once]
//! deltaload backfill s3://BUCKET/PREFIX --queue URL [--since TIME] [--until TIME] [--match GLOB] [--dry-run] [--rate N] [--force]
//! deltaload reconcile s3://BUCKET/PREFIX [--lake URI] [--since TIME] [--enqueue URL] [--json]
//! deltaload status [--lake URI]
//! deltaload replay FILE_OR_DIR [--lake URI] [--source s3://BUCKET[/PREFIX]]...
//! deltaload redrive --dlq URL --queue URL [--max N]
//! ```
//!
//! Exit status: 0 when every file loaded or was skipped, 2 when a file was
//! refused (the others still load), 3 when `reconcile` finds the lake
//! inconsistent, 1 on any other failure.

mod args;
mod backfill;
mod load;
mod maintain;
mod reconcile;
mod serve;

pub use args::{Cli, Command};

use clap::Parser;
use std::process::ExitCode;

/// Parses the process arguments, runs the command and maps the result to an exit status.
pub fn main_entry() -> ExitCode {
    let cli = Cli::parse();
    init_logging(&cli.log);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("deltaload: cannot start the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    match runtime.block_on(run(cli)) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("deltaload: {}", render_error(&e));
            ExitCode::from(1)
        }
    }
}

/// The error and its causes, each cause left out when an earlier message already says it.
pub fn render_error(error: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in error.chain() {
        let message = cause.to_string();
        if text.contains(&message) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&message);
    }
    text
}

/// Directives added to the user's filter: the Delta kernel logs an ERROR for every
/// table that does not exist yet (normal on first use) and merge metrics at WARN;
/// their real failures reach us as errors anyway.
const QUIET_DEPENDENCIES: &str = "buoyant_kernel=off,deltalake_core=error";

fn init_logging(filter: &str) {
    use std::io::IsTerminal;
    let directives = format!("{QUIET_DEPENDENCIES},{filter}");
    let filter = tracing_subscriber::EnvFilter::try_new(&directives).unwrap_or_else(|_| {
        tracing_subscriber::EnvFilter::new(format!("{QUIET_DEPENDENCIES},warn"))
    });
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .try_init();
}

/// Runs one parsed command.
pub async fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Load(args) => load::run(args).await,
        Command::Serve(args) => serve::run(args).await,
        Command::Backfill(args) => backfill::run(args).await,
        Command::Reconcile(args) => reconcile::run(args).await,
        Command::Status(args) => reconcile::status(args).await,
        Command::Replay(args) => serve::replay(args).await,
        Command::Redrive(args) => serve::redrive(args).await,
        Command::Maintain(args) => maintain::run(args).await,
        Command::Show(args) => {
            let endpoint = deltaload_aws::settings::endpoint_from_env();
            let root = deltaload_aws::settings::lake_root(&args.lake, endpoint.as_deref())?;
            println!("{}", deltaload_lake::render_table(&root, args.table).await?);
            Ok(ExitCode::SUCCESS)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn causes_already_said_are_not_repeated() {
        let inner = std::io::Error::other("disk full");
        let outer = anyhow::Error::new(inner).context("writing orders: disk full");
        assert_eq!(render_error(&outer), "writing orders: disk full");
        let plain =
            anyhow::Error::new(std::io::Error::other("disk full")).context("writing orders");
        assert_eq!(render_error(&plain), "writing orders: disk full");
    }
}
