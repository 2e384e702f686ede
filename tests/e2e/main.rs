//! The end-to-end suite of deltaload, one test binary (run with `./test`).

mod batches;
mod cdc;
mod compressed;
mod concurrency;
mod crash;
mod crash_events;
mod dataset_events;
mod dataset_permutations;
mod dataset_specs;
mod datasets;
mod dead_letters;
mod delete_cases;
mod deletes;
mod event_batches;
mod event_failures;
mod events;
mod format_events;
mod format_refusals;
mod hostile_keys;
mod hostile_objects;
mod infra;
mod lake_location;
mod lake_opening;
mod lambda_emulator;
mod large_objects;
mod load_cli;
mod long_loads;
mod lost_state;
mod maintenance;
mod memory_budget;
mod merge_on_read;
mod other_engines;
mod permutations;
mod readers;
mod reconcile_findings;
mod refusals;
mod rejects;
mod show;
mod storage_faults;
mod sweep;
mod truncated_stats;
mod upsert_engines;

use deltaload_tests::Sandbox;
use std::process::Output;

/// Runs the `deltaload` command (built with the fault switch) in `sb`.
pub fn deltaload(sb: &Sandbox, args: &[&str], fault: Option<&str>) -> Output {
    sb.cli_at(env!("CARGO_BIN_EXE_deltaload-faulty"), args, fault)
}

/// `deltaload serve --once` on the stack's queue into `lake`, with `extra` arguments.
pub fn serve_once(
    stack: &deltaload_tests::localstack::Stack,
    lake: &str,
    wait: &str,
    extra: &[&str],
) -> Output {
    let args = stack.serve_args(lake, wait, extra);
    stack.cli(env!("CARGO_BIN_EXE_deltaload-faulty"), &args)
}
