//! Command-line arguments, each with its environment variable.

use crate::handler_args::engine;
pub use crate::handler_args::{HandlerArgs, RedriveArgs, ReplayArgs, ServeArgs};
use clap::{Args, Parser, Subcommand};
use deltaload_lake::TableName;
use std::path::PathBuf;

/// Loads files of changes into Delta Lake tables, once and only once.
///
/// Tables live under the lake root: per dataset its table and its rejects
/// (orders and rejected_orders for the built-in dataset), and the shared
/// ledger and reconciliation, created on first use. Datasets of your own are
/// declared in a spec file (--spec; `deltaload spec example` prints one).
#[derive(Debug, Parser)]
#[command(name = "deltaload", version, about, long_about)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// Log filter for messages on stderr (error, warn, info, debug, or a tracing filter).
    #[arg(long, env = "DELTALOAD_LOG", default_value = "warn", global = true)]
    pub log: String,
    /// The datasets: a spec file or s3:// URI, read once at start; the
    /// built-in orders dataset when absent.
    #[arg(
        long,
        env = "DELTALOAD_SPEC",
        global = true,
        value_name = "FILE_OR_S3_URI"
    )]
    pub spec: Option<String>,
    /// Only this dataset of the spec (needed by load and validate when the spec has several).
    #[arg(long, env = "DELTALOAD_DATASET", global = true, value_name = "NAME")]
    pub dataset: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Load change files, in the order given.
    ///
    /// Prints one line per file: its counts and the dataset table's version, or
    /// "already loaded" when the ledger holds the same content for that file.
    /// Exit status: 0 all loaded or skipped, 2 a file was refused, 1 any other failure.
    Load(LoadArgs),
    /// Read and parse files without writing anything: per file the records,
    /// rejects and duplicate keys, and the first rejects with line and reason.
    ///
    /// Exit status: 0 when every file would load without a reject, 2 when a
    /// file would be refused or has rejects, 1 on any other failure.
    Validate(ValidateArgs),
    /// Check a spec, or print the built-in dataset as one to start from.
    #[command(subcommand)]
    Spec(SpecCommand),
    /// Print a table: its first rows by key (20 unless --limit), every row
    /// (--limit 0, streamed), or the rows of one key (--key); as a text table,
    /// CSV or JSON Lines.
    ///
    /// After a text table, a line of counts: rows printed, rows in all, the
    /// table's version.
    Show(ShowArgs),
    /// Consume S3 object-created events from an SQS queue and load the files.
    ///
    /// Deletes the messages whose files loaded, were skipped or refused; leaves
    /// failures to come back (and, after the queue's maxReceiveCount, to rest in
    /// its dead-letter queue). AWS settings come from the standard environment
    /// (AWS_ENDPOINT_URL, AWS_REGION, credentials). Ctrl-C stops after the batch
    /// in flight.
    Serve(ServeArgs),
    /// Announce existing objects on the queue, as S3 notifications, to load them.
    ///
    /// Lists the prefix page by page, skips the objects the ledger holds with the
    /// same ETag (loaded or refused) unless --force, and sends one notification
    /// per object, 10 per SendMessageBatch. Prints a summary line: listed,
    /// selected, already loaded, enqueued, failed. Exit status 1 when any message
    /// could not be sent.
    Backfill(BackfillArgs),
    /// Compare a landing prefix with the lake, file by file.
    ///
    /// Reports objects never loaded (a missed event), loaded but changed since (a
    /// new ETag), refused (with the reason), unfinished loads and unbalanced
    /// reconciliation rows; also orders found twice and rejected rows whose file
    /// is not in the ledger. Exit status 0 when all is consistent, 3 when not.
    Reconcile(ReconcileArgs),
    /// The lake at a glance: files per day, table sizes and versions, the last
    /// load, the oldest refused file and unfinished loads.
    Status(StatusArgs),
    /// Feed saved SQS messages (for example from the dead-letter queue) straight
    /// through the handler, without a queue; prints the batch response as JSON.
    /// Exit status 1 when any message failed.
    Replay(ReplayArgs),
    /// Move dead-letter messages back to their queue after a fix; prints how many moved.
    Redrive(RedriveArgs),
    /// Compact the tables' small files, write a checkpoint and vacuum.
    ///
    /// Small files are compacted into files of about --orders-file-mb (each
    /// dataset's table) or --target-file-mb (the other tables); with --cluster
    /// each dataset's table is rewritten sorted by its first key column
    /// (order_id for orders). Then a
    /// checkpoint is written, log entries past the tables' log retention (30
    /// days) removed, and data files no version of the last --retain-hours
    /// refers to deleted. Safe beside running loads: a compaction that loses to a
    /// load's commit is planned again. Run it on a schedule (daily, or every few
    /// thousand loads); prints one line per table.
    Maintain(MaintainArgs),
    /// Register the lake's tables in the AWS Glue Data Catalog.
    #[command(subcommand)]
    Catalog(CatalogCommand),
}

/// `deltaload catalog ...`.
#[derive(Debug, Subcommand)]
pub enum CatalogCommand {
    /// Register, or repair, every Delta table under the lake root (found by
    /// listing, with or without a spec) in a Glue database, created when
    /// missing: a table Glue lacks is created, one that lacks columns gets
    /// them (none is dropped or retyped). One line per table.
    ///
    /// Exit status 1 when any table could not be registered.
    Sync(CatalogSyncArgs),
}

#[derive(Debug, Args)]
pub struct CatalogSyncArgs {
    /// Lake root: an s3:// URI.
    #[arg(long, env = "DELTALOAD_LAKE")]
    pub lake: String,
    /// The Glue database.
    #[arg(long, env = "DELTALOAD_GLUE_DATABASE", value_name = "NAME")]
    pub glue_database: String,
}

/// `--since`, `--until` and `--match`.
#[derive(Debug, Args)]
pub struct SelectionArgs {
    /// Only objects modified at or after this time (2026-10-01 or RFC 3339).
    #[arg(long, value_parser = deltaload_aws::listing::parse_time)]
    pub since: Option<chrono::DateTime<chrono::Utc>>,
    /// Only objects modified before this time (2026-10-01 or RFC 3339).
    #[arg(long, value_parser = deltaload_aws::listing::parse_time)]
    pub until: Option<chrono::DateTime<chrono::Utc>>,
    /// Only keys matching this glob (the whole key; `*` within one level, `**` across).
    #[arg(long = "match", value_parser = deltaload_aws::listing::parse_glob)]
    pub pattern: Option<glob::Pattern>,
}

impl SelectionArgs {
    pub fn selection(&self) -> deltaload_aws::listing::Selection {
        deltaload_aws::listing::Selection {
            since: self.since,
            until: self.until,
            pattern: self.pattern.clone(),
        }
    }
}

#[derive(Debug, Args)]
pub struct BackfillArgs {
    /// The objects: s3://BUCKET[/PREFIX].
    pub at: String,
    /// The queue URL the notifications go to.
    #[arg(long, env = "DELTALOAD_QUEUE")]
    pub queue: String,
    /// Lake root, whose ledger says what is already loaded.
    #[arg(long, env = "DELTALOAD_LAKE", default_value = "./lake")]
    pub lake: String,
    #[command(flatten)]
    pub selection: SelectionArgs,
    /// Count what would be enqueued; send nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Messages per second at most (0: no limit).
    #[arg(long, default_value_t = 100)]
    pub rate: u32,
    /// Enqueue files the ledger holds too, marked to be reprocessed (rows only
    /// change where a change is newer).
    #[arg(long)]
    pub force: bool,
}

#[derive(Debug, Args)]
pub struct ReconcileArgs {
    /// The landing prefix: s3://BUCKET[/PREFIX].
    pub at: String,
    /// Lake root.
    #[arg(long, env = "DELTALOAD_LAKE", default_value = "./lake")]
    pub lake: String,
    #[command(flatten)]
    pub selection: SelectionArgs,
    /// Send every file a reload repairs (never loaded, changed, unfinished) to this queue.
    #[arg(long, value_name = "QUEUE_URL")]
    pub enqueue: Option<String>,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct MaintainArgs {
    /// Lake root.
    #[arg(long, env = "DELTALOAD_LAKE", default_value = "./lake")]
    pub lake: String,
    /// Target size of compacted files of the tables beside the datasets'
    /// (rejected_, tombstones_, history_ and history_log_ tables, ledger and
    /// reconciliation), in MiB.
    #[arg(long, default_value_t = deltaload_lake::maintain::DEFAULT_TARGET_FILE_BYTES >> 20, value_parser = clap::value_parser!(u64).range(1..))]
    pub target_file_mb: u64,
    /// Target size of compacted or clustered files of each dataset's table
    /// (`orders` without a spec), in MiB: a MERGE rewrites every file holding
    /// a key it changes, so smaller files make a change cheaper and a read of
    /// the table slower.
    #[arg(long, default_value_t = deltaload_lake::ORDERS_FILE_BYTES >> 20, value_parser = clap::value_parser!(u64).range(1..))]
    pub orders_file_mb: u64,
    /// Keep data files that versions of the last this many hours refer to.
    #[arg(long, default_value_t = deltaload_lake::maintain::DEFAULT_RETENTION_HOURS)]
    pub retain_hours: u64,
    /// Allow --retain-hours below the tables' 7-day deleted-file retention; only
    /// when no load or reader can still be on an older version.
    #[arg(long)]
    pub allow_short_retention: bool,
    /// Rewrite each dataset's table whole, sorted by its first key column
    /// (order_id for orders), so each file covers a narrow range of keys and a
    /// MERGE's file pruning skips more (a full rewrite: weekly rather than
    /// daily).
    #[arg(long)]
    pub cluster: bool,
    /// Print what vacuum would delete; change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Forget deletes loaded more than this many days ago (datasets with
    /// delete_when and sequence_by): a change older than a forgotten delete
    /// can then bring its row back.
    #[arg(long, default_value_t = deltaload_lake::maintain::DEFAULT_TOMBSTONE_RETENTION_DAYS)]
    pub tombstone_retention_days: u64,
}

#[derive(Debug, Args)]
pub struct StatusArgs {
    /// Lake root.
    #[arg(long, env = "DELTALOAD_LAKE", default_value = "./lake")]
    pub lake: String,
}

#[derive(Debug, Args)]
pub struct LoadArgs {
    /// Lake root: a directory or a URI.
    #[arg(long, env = "DELTALOAD_LAKE", default_value = "./lake")]
    pub lake: String,
    /// Reprocess files the ledger has already seen (only newer changes alter
    /// rows; without sequence_by every change does).
    #[arg(long)]
    pub force: bool,
    /// Files loaded together, with one commit per table (their figures stay per
    /// file, as if loaded one by one in the order given). Under a memory budget,
    /// files that do not fit a tenth of it together, and a file read in pieces,
    /// are loaded in commits of their own.
    #[arg(long, env = "DELTALOAD_BATCH_SIZE", default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..))]
    pub batch_size: u16,
    /// The engine writing the dataset's table: keyed (deltaload's keyed upsert)
    /// or merge (delta-rs's MERGE).
    #[arg(long, env = "DELTALOAD_ENGINE", default_value = "keyed", value_parser = engine)]
    pub engine: deltaload_lake::Engine,
    /// Compact a table the loads wrote once it holds this many small files
    /// (under 1 MiB); 0: never (leave it to `maintain`).
    #[arg(long, env = "DELTALOAD_AUTO_COMPACT_FILES", value_name = "FILES", default_value_t = deltaload_lake::AutoCompact::default().min_files)]
    pub auto_compact_files: usize,
    /// Register the lake's tables in this AWS Glue database after the loads
    /// (created when missing; an s3:// lake only). A Glue failure is logged
    /// and never fails a load.
    #[arg(long, env = "DELTALOAD_GLUE_DATABASE", value_name = "NAME")]
    pub glue_database: Option<String>,
    #[command(flatten)]
    pub memory: crate::memory::MemoryArgs,
    /// Change files to load, in the dataset's format (CSV, JSON Lines or
    /// Parquet; gzip-compressed too).
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
}

/// `deltaload spec ...`.
#[derive(Debug, Subcommand)]
pub enum SpecCommand {
    /// Validate a spec and print each dataset's columns, types, keys and tables.
    Check {
        /// The spec: a TOML file or an s3:// URI.
        file: String,
        /// Lake root: a dataset's table already there (one another writer
        /// made) is read, to name the columns it has that the spec does not
        /// declare (kept: inserts write them null, updates leave them).
        #[arg(long, env = "DELTALOAD_LAKE", default_value = "./lake")]
        lake: String,
        /// The tables will be registered in this Glue database: a table
        /// Glue cannot hold (a column name of two lines, or over 255
        /// characters) fails the check.
        #[arg(long, env = "DELTALOAD_GLUE_DATABASE", value_name = "NAME")]
        glue_database: Option<String>,
    },
    /// Print the built-in orders dataset as a spec.
    Example,
}

#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// Rejects printed per file, the first by line.
    #[arg(long, default_value_t = 10)]
    pub rejects: usize,
    /// Files to check.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The table: a dataset's name (orders without a spec), rejected_<dataset>,
    /// tombstones_<dataset>, history_<dataset>, history_log_<dataset>, ledger
    /// or reconciliation.
    pub table: String,
    /// Lake root: a directory or a URI.
    #[arg(long, env = "DELTALOAD_LAKE", default_value = "./lake")]
    pub lake: String,
    /// Rows printed, the first by the table's key; 0 prints every row, streamed
    /// in storage order (not sorted) without holding them in memory.
    #[arg(long, default_value_t = deltaload_lake::DEFAULT_SHOW_LIMIT)]
    pub limit: usize,
    /// table (for people, with a line of counts), csv (with a header) or json
    /// (one object per line); the line of counts goes to stderr for csv and json.
    #[arg(long, value_enum, default_value_t = ShowFormatArg::Table)]
    pub format: ShowFormatArg,
    /// Only the rows of this key: the first key column's value for a dataset's
    /// table (an order_id for orders), a source file for rejected_<dataset>, a
    /// location for ledger and reconciliation (a local file's path as given to
    /// load, or its absolute path).
    #[arg(long, value_name = "VALUE")]
    pub key: Option<String>,
}

/// `--format` of `show`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ShowFormatArg {
    Table,
    Csv,
    Json,
}

impl ShowArgs {
    /// What to print, as the lake's `show` takes it.
    pub fn options(&self) -> deltaload_lake::ShowOptions {
        deltaload_lake::ShowOptions {
            limit: (self.limit > 0).then_some(self.limit),
            format: match self.format {
                ShowFormatArg::Table => deltaload_lake::ShowFormat::Table,
                ShowFormatArg::Csv => deltaload_lake::ShowFormat::Csv,
                ShowFormatArg::Json => deltaload_lake::ShowFormat::Json,
            },
            key: self.key.clone(),
        }
    }
}

/// The table `name` among the tables of `spec`'s datasets.
pub fn parse_table(name: &str, spec: &deltaload_core::Spec) -> Result<TableName, String> {
    TableName::parse(name, &spec.datasets).ok_or_else(|| {
        let names: Vec<String> = TableName::all(&spec.datasets)
            .iter()
            .map(|t| t.as_str())
            .collect();
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
        assert!(parse_table("nope", &deltaload_core::Spec::builtin()).is_err());
        assert!(parse_table("rejected_orders", &deltaload_core::Spec::builtin()).is_ok());
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
