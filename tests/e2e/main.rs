//! The end-to-end suite of deltaload, one test binary (run with `./test`).
// A load's future holds a query context (in the history's task), whose
// type is deep: proving a spawned load `Send` takes more than the default 128.
#![recursion_limit = "256"]

mod adoption;
mod avro_events;
mod avro_records;
mod batches;
mod cdc;
mod change_feed;
mod compressed;
mod concurrency;
mod crash;
mod crash_events;
mod dataset_events;
mod dataset_permutations;
mod dataset_specs;
mod datasets;
mod dead_letters;
mod debezium;
mod debezium_columnar;
mod debezium_events;
mod decimal_stats;
mod delete_cases;
mod deletes;
mod dms;
mod event_batches;
mod event_failures;
mod events;
mod expectation_events;
mod expectations;
mod feed_unknown_deletes;
mod format_events;
mod format_refusals;
mod glue_catalog;
mod history;
mod history_beside;
mod history_cases;
mod history_events;
mod history_races;
mod hostile_keys;
mod hostile_objects;
mod infra;
mod lake_location;
mod lake_opening;
mod lambda_emulator;
mod large_objects;
mod load_cli;
mod log_cleanup;
mod long_loads;
mod lost_state;
mod maintenance;
mod maintenance_event;
mod maintenance_mor;
mod maintenance_races;
mod memory_budget;
mod merge_on_read;
mod one_file_deletes;
mod other_engines;
mod own_version;
mod partial_updates;
mod permutations;
mod preset_events;
mod readers;
mod reconcile_findings;
mod refusals;
mod rejects;
mod show;
mod snapshot_cases;
mod snapshot_history;
mod snapshots;
mod spark_tables;
mod storage_faults;
mod sweep;
mod table_rules;
mod truncated_stats;
mod upsert_engines;

use deltaload_tests::Sandbox;
use std::process::Output;

/// Runs the `deltaload` command (built with the fault switch) in `sb`.
pub fn deltaload(sb: &Sandbox, args: &[&str], fault: Option<&str>) -> Output {
    sb.cli_at(env!("CARGO_BIN_EXE_deltaload-faulty"), args, fault)
}

/// `deltaload --spec spec.toml ARGS` in `sb`.
pub fn with_spec(sb: &Sandbox, args: &[&str]) -> Output {
    let mut all = vec!["--spec", "spec.toml"];
    all.extend_from_slice(args);
    deltaload(sb, &all, None)
}

/// [`with_spec`], which must succeed: its standard output.
pub fn with_spec_ok(sb: &Sandbox, args: &[&str]) -> String {
    let out = with_spec(sb, args);
    let text = deltaload_tests::stdout(&out);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{args:?}: {text}{}",
        deltaload_tests::stderr(&out)
    );
    text
}

/// A sandbox of an example: `spec` (a spec file's text, also written as
/// `spec.toml`) and the files `names` of the example's folder
/// `examples/<example>/<table>/`, under `raw/<table>/`.
pub fn example_sandbox(spec: &str, (example, table): (&str, &str), names: &[&str]) -> Sandbox {
    let parsed = deltaload_core::Spec::parse(spec, "spec.toml").expect("example spec");
    let sb = Sandbox::with_spec(parsed);
    std::fs::write(sb.dir.path().join("spec.toml"), spec).expect("write spec");
    for name in names {
        let text = std::fs::read(format!("../examples/{example}/{table}/{name}"));
        sb.file(&format!("{table}/{name}"), text.expect("example file"));
    }
    sb
}

/// The lines of `show --format csv`, without its last two columns
/// (`source_file`, `loaded_at`).
pub fn shown_rows(csv: &str) -> Vec<&str> {
    csv.lines()
        .map(|l| l.rsplitn(3, ',').nth(2).unwrap_or(l))
        .collect()
}

/// The lines of a history's `show --format csv`, without its lineage
/// columns (`source_file`, `loaded_at`, which sit before the two bounds).
pub fn shown_versions(csv: &str) -> Vec<String> {
    (csv.lines())
        .map(|l| {
            let cells: Vec<&str> = l.split(',').collect();
            let lineage = cells.len().saturating_sub(4);
            [&cells[..lineage], &cells[lineage + 2..]]
                .concat()
                .join(",")
        })
        .collect()
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

/// Runs the suite's Python script `tests/<script>` with `job` (JSON) on its
/// standard input; panics, with its stderr, when it fails.
pub fn python_job(script: &str, job: &serde_json::Value) {
    use std::io::Write;
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(script);
    let mut child = std::process::Command::new(other_engines::python())
        .arg(&script)
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{}: {e} (./test installs its Python)", script.display()));
    let mut stdin = child.stdin.take().expect("stdin");
    stdin.write_all(job.to_string().as_bytes()).expect("job");
    drop(stdin);
    let out = child.wait_with_output().expect("python");
    assert!(out.status.success(), "{}", deltaload_tests::stderr(&out));
}

/// Writes an Avro file with fastavro (`tests/avro_write.py`: `job` holds
/// its path, schema, records, codec and sync interval).
pub fn avro_write(job: &serde_json::Value) {
    python_job("avro_write.py", job);
}
