//! The end-to-end suite of deltaload, one test binary (run with `./test`).

mod batches;
mod crash;
mod event_batches;
mod events;
mod load_cli;
mod other_engines;
mod permutations;
mod refusals;
mod rejects;
mod sweep;

use deltaload_tests::Sandbox;
use std::process::Output;

/// Runs the `deltaload` command (built with the fault switch) in `sb`.
pub fn deltaload(sb: &Sandbox, args: &[&str], fault: Option<&str>) -> Output {
    sb.cli_at(env!("CARGO_BIN_EXE_deltaload-faulty"), args, fault)
}
