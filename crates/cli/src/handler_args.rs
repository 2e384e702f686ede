//! The arguments of the event-driven commands: `serve`, `replay`, `redrive`.

use clap::Args;
use std::path::PathBuf;

/// What the handler needs, for `serve` and `replay`.
#[derive(Debug, Args)]
pub struct HandlerArgs {
    /// Lake root: a directory or a URI such as s3://bucket/lake.
    #[arg(long, env = "DELTALOAD_LAKE", default_value = "./lake")]
    pub lake: String,
    /// Allowed s3://BUCKET[/PREFIX] (repeat, or comma-separated); any bucket when absent.
    #[arg(long = "source", env = "DELTALOAD_SOURCES", value_delimiter = ',')]
    pub sources: Vec<String>,
    /// Largest object read, in bytes; larger ones are refused.
    #[arg(long, env = "DELTALOAD_MAX_OBJECT_BYTES", default_value_t = deltaload_aws::settings::DEFAULT_MAX_OBJECT_BYTES)]
    pub max_object_bytes: u64,
    /// Also print each batch's figures on stdout as CloudWatch EMF, in this namespace.
    #[arg(long, env = "DELTALOAD_METRICS_NAMESPACE", value_name = "NAMESPACE")]
    pub metrics_namespace: Option<String>,
    /// The engine writing the datasets' tables: keyed (deltaload's keyed upsert)
    /// or merge (delta-rs's MERGE).
    #[arg(long, env = "DELTALOAD_ENGINE", default_value = "keyed", value_parser = engine)]
    pub engine: deltaload_lake::Engine,
    /// Compact a table the loads wrote once it holds this many small files
    /// (under 1 MiB); 0: never (leave it to `maintain`).
    #[arg(long, env = "DELTALOAD_AUTO_COMPACT_FILES", value_name = "FILES", default_value_t = deltaload_lake::AutoCompact::default().min_files)]
    pub auto_compact_files: usize,
    /// Register the lake's tables in this AWS Glue database after each batch that loaded
    /// (created when missing; an s3:// lake only). A Glue failure is logged
    /// and never fails a load.
    #[arg(long, env = "DELTALOAD_GLUE_DATABASE", value_name = "NAME")]
    pub glue_database: Option<String>,
    #[command(flatten)]
    pub memory: crate::memory::MemoryArgs,
}

impl HandlerArgs {
    /// The settings' variables these arguments give (each from its option,
    /// else from its environment variable, else clap's default).
    pub(crate) fn vars(&self) -> std::collections::HashMap<&'static str, String> {
        let memory = &self.memory;
        let given = [
            ("DELTALOAD_LAKE", Some(self.lake.clone())),
            ("DELTALOAD_SOURCES", Some(self.sources.join(","))),
            (
                "DELTALOAD_MAX_OBJECT_BYTES",
                Some(self.max_object_bytes.to_string()),
            ),
            (
                "DELTALOAD_METRICS_NAMESPACE",
                self.metrics_namespace.clone(),
            ),
            ("DELTALOAD_ENGINE", Some(self.engine.as_str().to_string())),
            (
                "DELTALOAD_AUTO_COMPACT_FILES",
                Some(self.auto_compact_files.to_string()),
            ),
            ("DELTALOAD_GLUE_DATABASE", self.glue_database.clone()),
            ("DELTALOAD_MEMORY_BUDGET", memory.memory_budget.clone()),
            (
                "DELTALOAD_SPILL_DIR",
                memory.spill_dir.as_ref().map(|d| d.display().to_string()),
            ),
            ("DELTALOAD_SPILL_SPACE", memory.spill_space.clone()),
        ];
        given
            .into_iter()
            .filter_map(|(name, value)| value.map(|v| (name, v)))
            .collect()
    }
}

/// An engine named on the command line.
pub(crate) fn engine(text: &str) -> Result<deltaload_lake::Engine, String> {
    deltaload_lake::Engine::parse(text)
        .ok_or_else(|| format!("{text:?} is not an engine: use keyed or merge"))
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The queue URL.
    #[arg(long, env = "DELTALOAD_QUEUE")]
    pub queue: String,
    #[command(flatten)]
    pub handler: HandlerArgs,
    /// Most messages loaded together (1 to 10,000), received 10 at a time; their
    /// files share one commit per table and are held in memory together.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u16).range(1..=10_000))]
    pub batch_size: u16,
    /// Longest wait, in seconds, to fill a batch once its first message is in
    /// (0 to 300); 0 takes what the queue holds at once.
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u16).range(0..=300))]
    pub batching_window: u16,
    /// Long-poll wait for a batch's first message, in seconds (0 to 20).
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(i32).range(0..=20))]
    pub wait: i32,
    /// Exit when a receive waits --wait seconds and gets nothing, after a summary line.
    #[arg(long)]
    pub once: bool,
}

#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// A JSON file (an SqsEvent, a ReceiveMessage response or one message), or a
    /// directory of them (*.json, in name order).
    pub path: PathBuf,
    #[command(flatten)]
    pub handler: HandlerArgs,
}

#[derive(Debug, Args)]
pub struct RedriveArgs {
    /// The dead-letter queue URL.
    #[arg(long)]
    pub dlq: String,
    /// The queue to send the messages back to.
    #[arg(long, env = "DELTALOAD_QUEUE")]
    pub queue: String,
    /// Move at most this many messages.
    #[arg(long)]
    pub max: Option<u64>,
}
