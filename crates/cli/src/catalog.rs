//! `deltaload catalog sync`, and the Glue sync after `load --glue-database`.

use crate::args::CatalogSyncArgs;
use crate::output::out;
use deltaload_aws::catalog::{wanted, Catalog, Change};
use deltaload_lake::Lake;
use std::process::ExitCode;

/// Registers `lake`'s tables in Glue database `database` after a load: a
/// table that could not be is logged, and the load's exit status stays.
pub(crate) async fn after_load(database: &str, lake: &mut Lake) -> anyhow::Result<()> {
    let aws = deltaload_aws::settings::aws_config_from_env().await?;
    let catalog = Catalog::new(&aws, database);
    let synced = catalog.sync(lake.catalog_tables()).await;
    if synced.failed > 0 {
        eprintln!(
            "{} tables not registered in Glue database {} (above); the files loaded: run \
             `deltaload catalog sync` or the next load to register them",
            synced.failed,
            catalog.database()
        );
    }
    Ok(())
}

/// Registers or repairs every Delta table under the lake root, one line each.
pub(crate) async fn sync(args: CatalogSyncArgs) -> anyhow::Result<ExitCode> {
    let database = deltaload_aws::settings::glue_database(Some(args.glue_database), &args.lake)?;
    let database = database.unwrap_or_default();
    let root = crate::opening::lake_root(&args.lake)?;
    let aws = deltaload_aws::settings::aws_config_from_env().await?;
    let catalog = Catalog::new(&aws, &database);
    let tables = deltaload_lake::tables_under(&root).await?;
    if tables.is_empty() {
        eprintln!("no Delta table under {root}: nothing to register");
    }
    let mut failed = 0;
    let total = tables.len();
    for (i, (folder, described)) in tables.into_iter().enumerate() {
        let done = match wanted(described) {
            Ok(table) => catalog.register(&table).await.map(|c| (table.name, c)),
            Err(e) => Err(e),
        };
        let at = format!("[{}/{total}] {folder}", i + 1);
        match done {
            Ok((name, change)) => {
                let did = match change {
                    Change::Created => "created",
                    Change::Updated => "updated",
                    Change::Unchanged => "already in step",
                };
                out!("{at}: {did} ({}.{name})", catalog.database());
            }
            Err(e) => {
                failed += 1;
                eprintln!("{at}: not registered: {e}");
            }
        }
    }
    out!(
        "{total} tables, {} registered, {failed} failed (Glue database {})",
        total - failed,
        catalog.database()
    );
    Ok(match failed {
        0 => ExitCode::SUCCESS,
        _ => ExitCode::FAILURE,
    })
}
