//! `--memory-budget` and `--spill-dir`, shared by `load`, `serve` and `replay`.

use clap::Args;
use std::path::PathBuf;

/// The memory a load may use and where it spills.
#[derive(Debug, Clone, Args)]
pub struct MemoryArgs {
    /// Memory a load may use, e.g. 512MiB or 4GiB (none: no limit). A file
    /// too large to read whole within it is read in pieces, sorted runs
    /// spilled to --spill-dir, and the table rewritten by slices of keys.
    /// Default: half this machine's memory (on Lambda, three quarters of the
    /// function's).
    #[arg(long, env = "DELTALOAD_MEMORY_BUDGET", value_name = "SIZE")]
    pub memory_budget: Option<String>,
    /// Directory of the sorted runs of files read in pieces (default: the
    /// system's temporary directory).
    #[arg(long, env = "DELTALOAD_SPILL_DIR", value_name = "DIR")]
    pub spill_dir: Option<PathBuf>,
    /// Space the spill directory holds, e.g. 4GiB: an object needing more
    /// (about three times its size) is refused unread (serve, replay).
    #[arg(long, env = "DELTALOAD_SPILL_SPACE", value_name = "SIZE")]
    pub spill_space: Option<String>,
}

impl MemoryArgs {
    /// The budget these arguments give, as the Lambda's settings give it.
    /// Spill directories of processes that are gone are removed first.
    pub fn budget(&self) -> anyhow::Result<deltaload_lake::MemoryBudget> {
        let lambda_mb = std::env::var("AWS_LAMBDA_FUNCTION_MEMORY_SIZE").ok();
        let budget = deltaload_aws::settings::memory_budget(
            self.memory_budget.as_deref(),
            (self.spill_dir.clone(), self.spill_space.as_deref()),
            lambda_mb.as_deref(),
            deltaload_aws::settings::machine_memory(),
        )?;
        budget.sweep_spills(false);
        Ok(budget)
    }
}
