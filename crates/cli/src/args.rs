//! Command-line arguments, each with its environment variable.

use clap::{Args, Parser, Subcommand};
use deltaload_lake::TableName;
use std::path::PathBuf;

/// Loads files of order changes into Delta Lake tables, once and only once.
///
/// Tables live under the lake root: orders, rejected_orders, ledger and
/// reconciliation, created on first use.
#[derive(Debug, Parser)]
#[command(name = "deltaload", version, about, long_about)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// Log filter for messages on stderr (error, warn, info, debug, or a tracing filter).
    #[arg(long, env = "DELTALOAD_LOG", default_value = "warn", global = true)]
    pub log: String,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Load change files, in the order given.
    ///
    /// Prints one line per file: its counts and the orders table version, or
    /// "already loaded" when the ledger holds the same content for that file.
    /// Exit status: 0 all loaded or skipped, 2 a file was refused, 1 any other failure.
    Load(LoadArgs),
    /// Print a table as text.
    Show(ShowArgs),
    /// Consume S3 object-created events from an SQS queue and load the files.
    ///
    /// Deletes the messages whose files loaded, were skipped or refused; leaves
    /// failures to come back (and, after the queue's maxReceiveCount, to rest in
    /// its dead-letter queue). AWS settings come from the standard environment
    /// (AWS_ENDPOINT_URL, AWS_REGION, credentials). Ctrl-C stops after the batch
    /// in flight.
    Serve(ServeArgs),
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The queue URL.
    #[arg(long, env = "DELTALOAD_QUEUE")]
    pub queue: String,
    /// Lake root: a directory or a URI such as s3://bucket/lake.
    #[arg(long, env = "DELTALOAD_LAKE", default_value = "./lake")]
    pub lake: String,
    /// Allowed s3://BUCKET[/PREFIX] (repeat, or comma-separated); any bucket when absent.
    #[arg(long = "source", env = "DELTALOAD_SOURCES", value_delimiter = ',')]
    pub sources: Vec<String>,
    /// Messages per receive (1 to 10).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(i32).range(1..=10))]
    pub batch_size: i32,
    /// Long-poll wait of each receive, in seconds (0 to 20).
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(i32).range(0..=20))]
    pub wait: i32,
    /// Exit when a receive waits --wait seconds and gets nothing, after a summary line.
    #[arg(long)]
    pub once: bool,
    /// Largest object read, in bytes; larger ones are refused.
    #[arg(long, env = "DELTALOAD_MAX_OBJECT_BYTES", default_value_t = deltaload_aws::settings::DEFAULT_MAX_OBJECT_BYTES)]
    pub max_object_bytes: u64,
}

#[derive(Debug, Args)]
pub struct LoadArgs {
    /// Lake root: a directory or a URI.
    #[arg(long, env = "DELTALOAD_LAKE", default_value = "./lake")]
    pub lake: String,
    /// Reprocess files the ledger has already seen (only newer changes alter orders).
    #[arg(long)]
    pub force: bool,
    /// Files loaded together, with one commit per table (their figures stay per
    /// file, as if loaded one by one in the order given).
    #[arg(long, env = "DELTALOAD_BATCH_SIZE", default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..))]
    pub batch_size: u16,
    /// CSV change files to load.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The table: orders, rejected_orders, ledger or reconciliation.
    #[arg(value_parser = parse_table)]
    pub table: TableName,
    /// Lake root: a directory or a URI.
    #[arg(long, env = "DELTALOAD_LAKE", default_value = "./lake")]
    pub lake: String,
}

fn parse_table(name: &str) -> Result<TableName, String> {
    TableName::parse(name).ok_or_else(|| {
        let names: Vec<&str> = TableName::ALL.iter().map(|t| t.as_str()).collect();
        format!("no table {name:?}; choose one of {}", names.join(", "))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn arguments_are_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn load_needs_a_file_and_show_a_known_table() {
        assert!(Cli::try_parse_from(["deltaload", "load"]).is_err());
        assert!(Cli::try_parse_from(["deltaload", "show", "nope"]).is_err());
        let cli =
            Cli::try_parse_from(["deltaload", "load", "--lake", "/tmp/l", "--force", "a.csv"])
                .unwrap();
        let Command::Load(args) = cli.command else {
            panic!("not load")
        };
        assert!(args.force);
        assert_eq!(args.lake, "/tmp/l");
    }
}
