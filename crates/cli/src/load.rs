//! `deltaload load`: local files into the lake, `--batch-size` at a time, one line per file.

use crate::args::LoadArgs;
use crate::output::out;
use anyhow::Context;
use deltaload_core::Spec;
use deltaload_lake::{
    expand_gzip, local_source, Expanded, LoadOptions, LoadOutcome, MemoryBudget, OnDisk, SourceFile,
};
use std::path::Path;
use std::process::ExitCode;

fn options(force: bool) -> LoadOptions {
    #[allow(unused_mut)]
    let mut opts = LoadOptions {
        force,
        ..LoadOptions::default()
    };
    #[cfg(feature = "faults")]
    {
        opts.fault = fault_from_env();
    }
    opts
}

/// The crash point a test asked for in `DELTALOAD_FAULT`. The switch exists only
/// in test builds: never in an optimised binary.
#[cfg(feature = "faults")]
pub(crate) fn fault_from_env() -> Option<deltaload_lake::FaultPoint> {
    if cfg!(debug_assertions) {
        std::env::var("DELTALOAD_FAULT")
            .ok()
            .and_then(|name| deltaload_lake::FaultPoint::parse(&name))
    } else {
        None
    }
}

pub(crate) async fn run(args: LoadArgs, spec: &Spec) -> anyhow::Result<ExitCode> {
    let chosen = spec.select(None).map_err(anyhow::Error::msg)?;
    let deletes = match (&chosen.delete_when, &chosen.snapshot) {
        (Some(_), _) => Removed::Deleted,
        (None, Some(_)) => Removed::Retired,
        (None, None) => Removed::Never,
    };
    let deletes = (deletes, chosen.history.is_some());
    let dataset = chosen.name.clone();
    // Refused before the lake opens: a snapshot's load would fail after
    // claiming its file (serve and the Lambda fail such files one by one).
    if args.engine == deltaload_lake::Engine::Merge && chosen.snapshot.is_some() {
        return Err(deltaload_lake::LakeError::SnapshotEngine { dataset }.into());
    }
    let glue = deltaload_aws::settings::glue_database(args.glue_database.clone(), &args.lake)?;
    let mut lake = crate::opening::open_lake(&args.lake, spec).await?;
    lake.set_engine(args.engine);
    lake.set_auto_compact(deltaload_lake::AutoCompact::at(args.auto_compact_files));
    let budget = args.memory.budget()?;
    lake.set_memory_budget(budget.clone());
    let opts = options(args.force);
    let (mut refused, mut failed) = (false, false);
    for chunk in args.files.chunks(usize::from(args.batch_size)) {
        let mut shown = Vec::with_capacity(chunk.len());
        let mut files = Vec::with_capacity(chunk.len());
        // The chunk's files in memory together stay within what the budget reads whole.
        let mut room = budget.whole_limit();
        for path in chunk {
            match read(path, &budget, &mut room) {
                Ok(file) => {
                    shown.push(path.display().to_string());
                    files.push(file);
                }
                Err(e) => {
                    eprintln!("{}: {e}", path.display());
                    failed = true;
                }
            }
        }
        let outcomes = lake.load_into(&dataset, files, opts).await.with_context(|| {
            format!(
                "{}: load failed and is not recorded as loaded; fix the cause and run the same command again, which completes it",
                shown.join(", ")
            )
        })?;
        for (shown, outcome) in shown.iter().zip(outcomes) {
            let broken = expectation_lines(shown, &outcome, chosen);
            refused |= report(shown, outcome, deletes)?;
            for line in broken {
                out!("{line}");
            }
        }
    }
    if let Some(database) = glue {
        // The files are loaded: a catalog that cannot be reached is said, not a failure.
        if let Err(e) = crate::catalog::after_load(&database, &mut lake).await {
            tracing::warn!(error = %e, "catalog sync failed; the files loaded");
            eprintln!("the tables were not registered in Glue ({e:#}); the files loaded: run `deltaload catalog sync` to register them");
        }
    }
    Ok(if failed {
        ExitCode::from(1)
    } else if refused {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    })
}

/// Reads a file, expanding it when it is gzip-compressed: into memory when
/// it fits in `room` (what is left of the bytes the budget reads whole,
/// reduced by it), else left on disk (expanded into the spill directory).
pub(crate) fn read(
    path: &Path,
    budget: &MemoryBudget,
    room: &mut u64,
) -> Result<SourceFile, String> {
    let shown = path.display().to_string();
    let location = local_source(&shown).map_err(|e| e.to_string())?;
    let io = |source: std::io::Error| {
        deltaload_lake::DataError::ReadSource {
            path: shown.clone(),
            source,
        }
        .to_string()
    };
    let limit = deltaload_aws::settings::DEFAULT_MAX_OBJECT_BYTES;
    let mut magic = [0u8; 2];
    let gzip = std::fs::File::open(path)
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut magic))
        .is_ok()
        && deltaload_core::compression::is_gzip(&magic);
    let size = std::fs::metadata(path).map_err(io)?.len();
    let on_disk = |on_disk| SourceFile {
        on_disk: Some(on_disk),
        ..SourceFile::in_memory(location.clone(), Vec::new())
    };
    if !gzip && size > *room {
        return Ok(on_disk(OnDisk::at(path.to_path_buf())));
    }
    if !gzip {
        *room -= size;
        return Ok(SourceFile::in_memory(
            location,
            std::fs::read(path).map_err(io)?,
        ));
    }
    let open = || std::fs::File::open(path).map(std::io::BufReader::new);
    let had = *room;
    let keep = |n| {
        *room -= n;
        true
    };
    let expanded = expand_gzip(open, (had, limit), &budget.spill_dir, keep);
    match expanded.map_err(|e| format!("{shown}: {e}"))? {
        Ok(Expanded::Memory(bytes)) => Ok(SourceFile::in_memory(location, bytes)),
        Ok(Expanded::Disk(expanded)) => Ok(on_disk(expanded)),
        Err(why) => Err(why.to_string()),
    }
}

/// A line per expectation of `dataset` that a loaded file's records broke:
/// how many, and what it did to them.
fn expectation_lines(
    shown: &str,
    outcome: &LoadOutcome,
    dataset: &deltaload_core::Dataset,
) -> Vec<String> {
    let LoadOutcome::Loaded(done) = outcome else {
        return Vec::new();
    };
    (dataset.expectations.iter().zip(&done.expectations))
        .filter(|(_, count)| count.failed > 0)
        .map(|(rule, count)| {
            let did = match rule.on_fail() {
                Some(deltaload_core::spec::OnFail::Drop) => "dropped to the rejects",
                _ => "loaded",
            };
            format!(
                "{shown}: expectation {} failed on {} of {} records ({did}): {}",
                rule.name, count.failed, count.checked, rule.expression
            )
        })
        .collect()
}

/// How a dataset's loads remove rows, as a file's line shows them.
#[derive(Clone, Copy)]
enum Removed {
    /// Deletes in the feed (`delete_when`).
    Deleted,
    /// Keys a snapshot no longer holds (`mode = "snapshot"`); a snapshot's
    /// stale rows are those it left as they were.
    Retired,
    /// Not at all.
    Never,
}

/// Prints a file's line (with its removed rows when the dataset removes
/// any, and the versions of its history when it keeps one); true when it
/// was refused.
fn report(
    shown: &str,
    outcome: LoadOutcome,
    (deletes, history): (Removed, bool),
) -> std::io::Result<bool> {
    match outcome {
        LoadOutcome::Loaded(done) => {
            let f = done.figures;
            let deleted = match deletes {
                Removed::Deleted => format!(", {} deleted", f.deleted),
                Removed::Retired => format!(", {} unchanged, {} retired", f.stale, f.retired),
                Removed::Never => String::new(),
            };
            let deleted = match history {
                true => format!(
                    "{deleted}, {} versions opened, {} closed",
                    f.opened, f.closed
                ),
                false => deleted,
            };
            out!(
                "{shown}: {} rejected, {} updated, {} added{deleted}, table version {}",
                f.rejected,
                f.updated,
                f.inserted,
                version(done.orders_version)
            );
            Ok(false)
        }
        LoadOutcome::Skipped { orders_version } => {
            out!(
                "{shown}: already loaded (table version {}), skipped",
                version(orders_version)
            );
            Ok(false)
        }
        LoadOutcome::Refused(mismatch) => {
            eprintln!("{shown}: {mismatch}");
            Ok(true)
        }
    }
}

fn version(v: Option<u64>) -> String {
    v.map_or_else(|| "-".to_string(), |v| v.to_string())
}
