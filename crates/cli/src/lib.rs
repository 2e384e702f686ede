//! The `deltaload` command line.
//!
//! ```text
//! deltaload [--spec FILE_OR_S3_URI] [--dataset NAME] COMMAND ...
//! deltaload load [--lake DIR_OR_URI] [--force] FILE...
//! deltaload validate [--rejects N] FILE...
//! deltaload spec check FILE | deltaload spec example
//! deltaload show TABLE [--lake DIR_OR_URI] [--limit N] [--format table|csv|json] [--key VALUE]
//! deltaload serve --queue URL [--lake URI] [--source s3://BUCKET[/PREFIX]]... [--batch-size N] [--wait SECONDS] [--once]
//! deltaload backfill s3://BUCKET/PREFIX --queue URL [--since TIME] [--until TIME] [--match GLOB] [--dry-run] [--rate N] [--force]
//! deltaload reconcile s3://BUCKET/PREFIX [--lake URI] [--since TIME] [--enqueue URL] [--json]
//! deltaload status [--lake URI]
//! deltaload replay FILE_OR_DIR [--lake URI] [--source s3://BUCKET[/PREFIX]]...
//! deltaload redrive --dlq URL --queue URL [--max N]
//! deltaload catalog sync --lake s3://BUCKET/LAKE --glue-database NAME
//! ```
//!
//! Exit status: 0 when every file loaded or was skipped, 2 when a file was
//! refused (the others still load), 3 when `reconcile` finds the lake
//! inconsistent, 141 when the reader of standard output went away (`| head`,
//! quietly, as for a Unix tool killed by SIGPIPE), 1 on any other failure.

mod args;
mod backfill;
mod catalog;
mod handler_args;
mod load;
mod maintain;
mod memory;
mod opening;
pub mod output;
mod reconcile;
mod serve;
mod spec;
mod validate;

pub use args::{Cli, Command};

use clap::Parser;
use deltaload_core::Spec;
use std::process::ExitCode;

/// Parses the process arguments, runs the command and maps the result to an exit status.
pub fn main_entry() -> ExitCode {
    deltaload_lake::budget::cap_allocator_arenas();
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
        Err(e) if output::is_closed_pipe(&e) => ExitCode::from(output::CLOSED_PIPE),
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

fn init_logging(filter: &str) {
    use std::io::IsTerminal;
    let _ = tracing_subscriber::fmt()
        .with_env_filter(deltaload_aws::logging::filter(filter, "warn"))
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .try_init();
}

/// The spec of `--spec` (the built-in `orders` without one), narrowed to
/// `--dataset` when given.
async fn spec_of(cli: &Cli) -> anyhow::Result<Spec> {
    let spec = deltaload_aws::spec::read_spec(cli.spec.as_deref()).await?;
    Ok(match cli.dataset.as_deref() {
        Some(name) => spec.narrow(name).map_err(anyhow::Error::msg)?,
        None => spec,
    })
}

/// Runs one parsed command.
pub async fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    if let Command::Spec(command) = &cli.command {
        return spec::run(command, cli.dataset.as_deref()).await;
    }
    let spec = spec_of(&cli).await?;
    match cli.command {
        Command::Load(args) => load::run(args, &spec).await,
        Command::Validate(args) => validate::run(args, &spec),
        Command::Spec(_) => Ok(ExitCode::SUCCESS),
        Command::Serve(args) => serve::run(args, &spec).await,
        Command::Backfill(args) => backfill::run(args, &spec).await,
        Command::Reconcile(args) => reconcile::run(args, &spec).await,
        Command::Status(args) => reconcile::status(args, &spec).await,
        Command::Replay(args) => serve::replay(args, &spec).await,
        Command::Redrive(args) => serve::redrive(args).await,
        Command::Maintain(args) => maintain::run(args, &spec).await,
        Command::Show(args) => show(args, &spec).await,
        Command::Catalog(args::CatalogCommand::Sync(args)) => catalog::sync(args).await,
    }
}

async fn show(args: args::ShowArgs, spec: &Spec) -> anyhow::Result<ExitCode> {
    use std::io::Write;
    let root = opening::lake_root(&args.lake)?;
    let table = args::parse_table(&args.table, spec).map_err(anyhow::Error::msg)?;
    let mut opts = args.options();
    opts.key = opts.key.map(|key| located_key(&table, key));
    let mut out = std::io::BufWriter::new(std::io::stdout());
    let shown = deltaload_lake::show(&root, &table, &opts, &mut out).await?;
    // The line of counts follows a text table; it goes to stderr after CSV or
    // JSON, which stay data alone for the next program.
    if opts.format == deltaload_lake::ShowFormat::Table {
        writeln!(out, "{}", shown.summary())?;
        out.flush()?;
    } else {
        eprintln!("{}", shown.summary());
    }
    Ok(ExitCode::SUCCESS)
}

/// `show --key` of a table keyed by a file's location (rejected_, ledger,
/// reconciliation): a local file's path as `load` was given it (relative,
/// or through a symbolic link) is recorded canonical, so it is looked up so
/// (a relative path of a file since moved, made absolute).
/// Any other key is kept.
fn located_key(table: &deltaload_lake::TableName, key: String) -> String {
    use deltaload_lake::TableName::{Ledger, Reconciliation, Rejected};
    let by_location = matches!(table, Rejected(_) | Ledger | Reconciliation);
    let path = std::path::Path::new(&key);
    if !by_location || key.contains("://") {
        return key;
    }
    match path.exists() {
        true => deltaload_lake::local_source(&key).unwrap_or(key),
        // Moved or deleted since: its absolute path, as far as the text
        // gives it (a link on the way can no longer be followed).
        false if path.is_relative() => std::path::absolute(path)
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or(key),
        false => key,
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
