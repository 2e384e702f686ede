//! The `deltaload` command line.
//!
//! ```text
//! deltaload load [--lake DIR_OR_URI] [--force] FILE...
//! deltaload show TABLE [--lake DIR_OR_URI]
//! ```
//!
//! Exit status: 0 when every file loaded or was skipped, 2 when a file was
//! refused (the others still load), 1 on any other failure.

mod args;
mod load;

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
            eprintln!("deltaload: {e:#}");
            ExitCode::from(1)
        }
    }
}

fn init_logging(filter: &str) {
    let filter = tracing_subscriber::EnvFilter::try_new(filter)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}

/// Runs one parsed command.
pub async fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Load(args) => load::run(args).await,
        Command::Show(args) => {
            let root = deltaload_lake::lake_url(&args.lake)?;
            println!("{}", deltaload_lake::render_table(&root, args.table).await?);
            Ok(ExitCode::SUCCESS)
        }
    }
}
