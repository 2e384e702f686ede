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
pub(crate) fn register_object_stores() {
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
        return conformed(root, name, table).await.map(|(table, _)| table);
    }
    let schema = crate::table::evolve::kernel_schema(name)?;
    let created = table
        .create()
        .with_table_name(name.as_str())
        .with_columns(schema.fields().cloned())
        .with_partition_columns(name.partition_columns())
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

/// `table` (existing) held against the spec, with how many commits it lost
/// to another process doing the same (two loads taking over one table at
/// once, or adding the same new column): each lost race reads the table
/// again, refuses it again if the winner made it so, and conforms what the
/// winner left, up to [`ATTEMPTS`](crate::table::retry::ATTEMPTS) times.
pub(crate) async fn conformed(
    root: &LakeRoot,
    name: &TableName,
    table: DeltaTable,
) -> Result<(DeltaTable, u32), LakeError> {
    use crate::table::retry::{backoff, is_conflict, ATTEMPTS};
    let (mut table, mut lost) = (table, 0);
    loop {
        let settled = match crate::table::evolve::conform(table, name).await {
            Ok(mut table) => crate::table::stats::keep_exact(&mut table, &name.as_str())
                .await
                .map(|()| table),
            Err(e) => Err(e),
        };
        match settled {
            Ok(table) => return Ok((table, lost)),
            Err(e) if is_conflict(&e) && lost + 1 < ATTEMPTS => {
                lost += 1;
                tracing::debug!(
                    table = name.as_str(),
                    lost,
                    "another writer changed the table while it was settled: reading it again"
                );
                tokio::time::sleep(backoff(lost)).await;
                table = load(root, name, &table_url(root, name)?).await?;
                features::refuse(&table, name)?;
            }
            Err(e) => return Err(e),
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn copy_tree(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        for entry in std::fs::read_dir(from).unwrap() {
            let entry = entry.unwrap();
            let target = to.join(entry.file_name());
            match entry.file_type().unwrap().is_dir() {
                true => copy_tree(&entry.path(), &target),
                false => drop(std::fs::copy(entry.path(), &target).unwrap()),
            }
        }
    }

    /// Two loads taking over the seed's Spark-made `orders` at once: both
    /// read it before either commits; the second's commit loses to the
    /// first's, and it settles the table the first left, committing nothing.
    #[tokio::test]
    async fn two_takeovers_at_once_both_settle_the_table_and_it_is_taken_over_once() {
        let dir = tempfile::tempdir().unwrap();
        let seed = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/adopted/seed-day1");
        copy_tree(&seed.join("orders"), &dir.path().join("orders"));
        let root = crate::lake_url(dir.path().to_str().unwrap()).unwrap();
        let name = TableName::Target(deltaload_core::Dataset::orders());
        let url = table_url(&root, &name).unwrap();
        let first = load(&root, &name, &url).await.unwrap();
        let second = load(&root, &name, &url).await.unwrap();
        let before = first.version();
        let (first, lost) = conformed(&root, &name, first).await.unwrap();
        assert_eq!(lost, 0);
        assert!(first.version() > before, "the first took the table over");
        let (second, lost) = conformed(&root, &name, second).await.unwrap();
        assert_eq!(
            lost, 1,
            "the second lost its commit to the first's and read the table again"
        );
        assert_eq!(
            second.version(),
            first.version(),
            "it committed nothing more"
        );
        let config = second
            .snapshot()
            .unwrap()
            .metadata()
            .configuration()
            .clone();
        assert_eq!(
            config.get("io.deltaload.adopted").map(String::as_str),
            Some("true")
        );
    }
}
