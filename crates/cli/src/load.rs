//! `deltaload load`: local files into the lake, one line per file.

use crate::args::LoadArgs;
use anyhow::Context;
use deltaload_lake::{lake_url, local_source, Lake, LoadOptions, LoadOutcome, SourceFile};
use std::process::ExitCode;

fn options(force: bool) -> LoadOptions {
    #[allow(unused_mut)]
    let mut opts = LoadOptions {
        force,
        ..LoadOptions::default()
    };
    // The fault switch exists only in test builds: never in an optimised binary.
    #[cfg(all(feature = "faults", debug_assertions))]
    {
        opts.fault = std::env::var("DELTALOAD_FAULT")
            .ok()
            .and_then(|name| deltaload_lake::FaultPoint::parse(&name));
    }
    opts
}

pub(crate) async fn run(args: LoadArgs) -> anyhow::Result<ExitCode> {
    let root = lake_url(&args.lake)?;
    let mut lake = Lake::open(&root)
        .await
        .with_context(|| format!("opening the lake at {root}"))?;
    let opts = options(args.force);
    let (mut refused, mut failed) = (false, false);
    for path in &args.files {
        let shown = path.display().to_string();
        let read = local_source(&shown).and_then(|location| {
            std::fs::read(path)
                .map(|bytes| (location, bytes))
                .map_err(|source| deltaload_lake::LakeError::ReadSource {
                    path: shown.clone(),
                    source,
                })
        });
        let (location, bytes) = match read {
            Ok(found) => found,
            Err(e) => {
                eprintln!("{shown}: {e}");
                failed = true;
                continue;
            }
        };
        let file = SourceFile {
            location,
            bytes,
            etag: None,
            version_id: None,
        };
        let outcome = lake
            .load(&file, opts)
            .await
            .with_context(|| format!("{shown}: load failed, nothing recorded in the ledger; fix the cause and run the same command again"))?;
        match outcome {
            LoadOutcome::Loaded(done) => {
                let f = done.figures;
                println!(
                    "{shown}: {} rejected, {} updated, {} added, table version {}",
                    f.rejected,
                    f.updated,
                    f.inserted,
                    version(done.orders_version)
                );
            }
            LoadOutcome::Skipped { orders_version } => {
                println!(
                    "{shown}: already loaded (table version {}), skipped",
                    version(orders_version)
                );
            }
            LoadOutcome::Refused(mismatch) => {
                eprintln!("{shown}: {mismatch}");
                refused = true;
            }
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

fn version(v: Option<u64>) -> String {
    v.map_or_else(|| "-".to_string(), |v| v.to_string())
}
