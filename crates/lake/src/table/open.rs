//! One table opened: loaded as it is, refused before anything is written
//! when deltaload would break it ([`features::refuse`](super::features::refuse)),
//! then held against the spec ([`evolve::conform`](super::evolve::conform))
//! or created.

use crate::table::error::LakeError;
use crate::table::features;
use crate::table::location::LakeRoot;
use crate::table::query;
use deltalake::arrow::record_batch::RecordBatch;
use deltalake::{DeltaTable, DeltaTableBuilder, DeltaTableError};
use deltaload_engine::tables::TableName;
use url::Url;

/// The URL of a table under the lake root.
pub(crate) fn table_url(root: &LakeRoot, name: &TableName) -> Result<Url, LakeError> {
    root.url
        .join(&format!("{}/", name.as_str()))
        .map_err(|e| LakeError::Location {
            location: root.to_string(),
            reason: e.to_string(),
        })
}

/// Registers the S3 object stores with delta-rs, once per process.
fn register_object_stores() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| deltalake::aws::register_handlers(None));
}

/// Loads the table at `url`; a location with no table yet gives an unloaded table.
async fn load(root: &LakeRoot, name: &TableName, url: &Url) -> Result<DeltaTable, LakeError> {
    register_object_stores();
    let built = DeltaTableBuilder::from_url(url.clone())
        .and_then(|b| b.with_storage_options(root.storage_options.clone()).build());
    let mut table = built.map_err(LakeError::delta(name.as_str(), url))?;
    match table.load().await {
        Ok(()) | Err(DeltaTableError::NotATable(_)) => Ok(table),
        Err(e) => Err(LakeError::delta(name.as_str(), url)(e)),
    }
}

/// Opens the table, or `None` when nothing has been written there yet.
pub(crate) async fn open(
    root: &LakeRoot,
    name: &TableName,
) -> Result<Option<DeltaTable>, LakeError> {
    let url = table_url(root, name)?;
    if let Ok(path) = url.to_file_path() {
        if url.scheme() == "file" && !path.join("_delta_log").is_dir() {
            return Ok(None);
        }
    }
    let table = load(root, name, &url).await?;
    Ok(table.version().is_some().then_some(table))
}

/// Opens the table, creating it with its schema when it does not exist yet.
///
/// Two processes may race to create it: the loser of the race opens the winner's table.
pub(crate) async fn open_or_create(
    root: &LakeRoot,
    name: &TableName,
) -> Result<DeltaTable, LakeError> {
    let table = load_or_mkdir(root, name).await?;
    features::refuse(&table, name)?;
    settle(root, name, table).await
}

/// The table as it is, before anything is written: an unloaded table (and,
/// on local disk, its directory) when it does not exist yet. Then
/// [`features::refuse`] and [`settle`].
pub(crate) async fn load_or_mkdir(
    root: &LakeRoot,
    name: &TableName,
) -> Result<DeltaTable, LakeError> {
    let url = table_url(root, name)?;
    if url.scheme() == "file" {
        if let Ok(path) = url.to_file_path() {
            std::fs::create_dir_all(&path).map_err(|e| LakeError::Location {
                location: url.to_string(),
                reason: format!("cannot create the table directory: {e}"),
            })?;
        }
    }
    load(root, name, &url).await
}

/// A loaded table held against the spec (the columns it added, adopted
/// when another writer made it), or created when it does not exist.
pub(crate) async fn settle(
    root: &LakeRoot,
    name: &TableName,
    table: DeltaTable,
) -> Result<DeltaTable, LakeError> {
    let url = table_url(root, name)?;
    if table.version().is_some() {
        let mut table = crate::table::evolve::conform(table, name).await?;
        crate::table::stats::keep_exact(&mut table, &name.as_str()).await?;
        return Ok(table);
    }
    let schema = crate::table::evolve::kernel_schema(name)?;
    let created = table
        .create()
        .with_table_name(name.as_str())
        .with_columns(schema.fields().cloned())
        .with_partition_columns(crate::table::evolve::partition_columns(name))
        .with_configuration(crate::table::evolve::configuration(name))
        .with_raise_if_key_not_exists(false)
        .await;
    match created {
        Ok(table) => Ok(table),
        // Another process created it first (delta-rs reports that as a version
        // conflict or as "already exists"): use the winner's table.
        Err(e) => {
            let table = load(root, name, &url).await?;
            if table.version().is_some() {
                tracing::debug!(
                    table = name.as_str(),
                    "created concurrently by another writer"
                );
                // Another engine's table, perhaps: refused as any other.
                features::refuse(&table, name)?;
                crate::table::evolve::conform(table, name).await
            } else {
                Err(LakeError::delta(name.as_str(), &url)(e))
            }
        }
    }
}

/// Runs `SELECT columns FROM name ORDER BY key` on the table under `root`, or
/// `None` when the table does not exist.
pub(crate) async fn select_all(
    root: &LakeRoot,
    name: &TableName,
    columns: &str,
) -> Result<Option<(DeltaTable, Vec<RecordBatch>)>, LakeError> {
    let Some(table) = open(root, name).await? else {
        return Ok(None);
    };
    let ctx = deltalake::delta_datafusion::create_session().into_inner();
    let sql = format!(
        "SELECT {columns} FROM {} ORDER BY {}",
        name.sql(),
        name.sort_columns()
    );
    let batches = query(&ctx, &table, name, &sql).await?;
    Ok(Some((table, batches)))
}
